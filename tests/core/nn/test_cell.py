"""nn.Cell: registration, naming, walking, modes, apply, recompute, gradients through cells."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import Parameter, nn


class Affine(nn.Cell):
    """``x * scale + shift`` with one frozen parameter."""

    def __init__(self, n):
        super().__init__()
        self.scale = Parameter(np.ones(n, np.float64))
        self.shift = Parameter(np.zeros(n, np.float64))
        self.frozen = Parameter(np.zeros(n, np.float64), requires_grad=False)

    def construct(self, x):
        return x * self.scale + self.shift + self.frozen


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.encoder = Affine(3)
        self.head = nn.Dense(3, 2, dtype=core.float64)
        self.gain = Parameter(np.array(2.0))

    def construct(self, x):
        return self.head(self.encoder(x)) * self.gain


def test_parameters_and_names_in_assignment_order():
    net = Net()
    names = [n for n, _ in net.parameters_and_names()]
    assert names == [
        "gain",
        "encoder.scale",
        "encoder.shift",
        "encoder.frozen",
        "head.weight",
        "head.bias",
    ]
    # auto_prefix: the Parameters carry their dotted path as their name
    assert [p.name for _, p in net.parameters_and_names()] == names
    assert list(net.parameters_dict()) == names
    assert len(list(net.get_parameters())) == 6


def test_trainable_and_untrainable_params():
    net = Net()
    trainable = net.trainable_params()
    assert [p.name for p in trainable] == [
        "gain",
        "encoder.scale",
        "encoder.shift",
        "head.weight",
        "head.bias",
    ]
    assert [p.name for p in net.untrainable_params()] == ["encoder.frozen"]
    assert [p.name for p in net.trainable_params(recurse=False)] == ["gain"]


def test_shared_parameter_and_cell_listed_once():
    shared = nn.Dense(2, 2)

    class Twice(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a = shared
            self.b = shared

        def construct(self, x):
            return self.b(self.a(x))

    net = Twice()
    assert len(net.trainable_params()) == 2
    assert [n for n, _ in net.cells_and_names()] == ["", "a"]


def test_reassign_and_delete_update_registration():
    net = Net()
    net.gain = None
    assert "gain" not in dict(net.parameters_and_names())
    net.gain = Parameter(np.array(3.0))
    assert dict(net.parameters_and_names())["gain"].item() == 3.0
    del net.head
    assert [n for n, _ in net.cells_and_names()] == ["", "encoder"]
    assert not any(n.startswith("head") for n, _ in net.parameters_and_names())
    net.encoder = 5  # a plain value replaces the sub-cell
    assert [n for n, _ in net.cells_and_names()] == [""]


def test_auto_prefix_false_keeps_names():
    class Keep(nn.Cell):
        def __init__(self):
            super().__init__(auto_prefix=False)
            self.inner = nn.Dense(2, 2)

    assert [p.name for p in Keep().trainable_params()] == ["weight", "bias"]


def test_assign_before_init_raises():
    class Bad(nn.Cell):
        def __init__(self):
            self.w = Parameter(np.zeros(2))

    with pytest.raises(AttributeError, match="super"):
        Bad()


def test_construct_missing_raises():
    with pytest.raises(NotImplementedError, match="construct"):
        nn.Cell()(core.tensor([1.0]))


def test_cells_and_names_and_name_cells():
    net = nn.SequentialCell(nn.Dense(2, 3), nn.SequentialCell(nn.ReLU(), nn.Dense(3, 1)))
    names = [n for n, _ in net.cells_and_names()]
    assert names == ["", "0", "1", "1.0", "1.1"]
    assert list(net.name_cells()) == ["0", "1"]
    assert len(net.cells()) == 2
    assert [n for n, _ in net.parameters_and_names()] == [
        "0.weight",
        "0.bias",
        "1.1.weight",
        "1.1.bias",
    ]


def test_set_train_propagates_and_switches_dropout():
    net = nn.SequentialCell(nn.Dense(4, 4), nn.SequentialCell(nn.Dropout(p=0.5)))
    assert all(c.training for _, c in net.cells_and_names())
    assert net.set_train(False) is net
    assert not any(c.training for _, c in net.cells_and_names())
    x = core.ones((8, 4))
    np.testing.assert_array_equal(net[1](x).asnumpy(), x.asnumpy())
    net.set_train(True)
    assert all(c.training for _, c in net.cells_and_names())
    assert np.any(net[1](x).asnumpy() == 0.0)


def test_apply_visits_children_first_then_self():
    net = nn.SequentialCell(nn.Dense(2, 2), nn.SequentialCell(nn.Tanh()))
    seen = []
    assert net.apply(lambda c: seen.append(type(c).__name__)) is net
    assert seen == ["Dense", "Tanh", "SequentialCell", "SequentialCell"]

    def zero_dense(cell):
        if isinstance(cell, nn.Dense):
            cell.weight.set_data(core.zeros(cell.weight.shape))

    net.apply(zero_dense)
    assert np.all(net[0].weight.asnumpy() == 0.0)


def test_value_and_grad_through_cell_matches_numpy():
    net = nn.Dense(3, 2, dtype=core.float64)
    x = np.random.default_rng(1).standard_normal((5, 3))
    w, b = net.weight.asnumpy(), net.bias.asnumpy()

    def loss_fn(x):
        return (net(x) ** 2).sum()

    loss, (gw, gb) = core.value_and_grad(loss_fn, None, net.trainable_params())(core.tensor(x))
    y = x @ w.T + b
    np.testing.assert_allclose(loss.item(), (y**2).sum(), rtol=1e-12)
    np.testing.assert_allclose(gw.asnumpy(), 2 * y.T @ x, rtol=1e-12)
    np.testing.assert_allclose(gb.asnumpy(), 2 * y.sum(0), rtol=1e-12)


def test_recompute_routes_call_through_core_recompute(monkeypatch):
    calls = []
    real = core.recompute

    def spy(fn):
        calls.append(fn)
        return real(fn)

    monkeypatch.setattr(core, "recompute", spy)
    net = nn.SequentialCell(
        nn.Dense(3, 4, dtype=core.float64), nn.Tanh(), nn.Dense(4, 1, dtype=core.float64)
    )
    x = core.tensor(np.random.default_rng(2).standard_normal((6, 3)))
    params = net.trainable_params()
    grad_fn = core.value_and_grad(lambda x: net(x).sum(), None, params)
    ref_loss, ref_grads = grad_fn(x)
    assert calls == []
    assert net[0].recompute() is net[0]
    net[2].recompute()
    loss, grads = grad_fn(x)
    assert len(calls) >= 2
    np.testing.assert_allclose(loss.asnumpy(), ref_loss.asnumpy(), rtol=1e-12)
    for g, r in zip(grads, ref_grads):
        np.testing.assert_allclose(g.asnumpy(), r.asnumpy(), rtol=1e-12)
    net[0].recompute(False)
    n = len(calls)
    net(x)
    assert len(calls) == n + 1  # only net[2] still recomputes


def test_repr_shows_tree():
    net = nn.SequentialCell(nn.Dense(2, 3), nn.ReLU())
    text = repr(net)
    assert "(0): Dense<input_channels=2, output_channels=3" in text
    assert "(1): ReLU" in text
    assert net.cls_name == "SequentialCell"


def test_update_parameters_name_with_prefix():
    net = nn.SequentialCell(nn.Dense(2, 2))
    net.update_parameters_name("model.")
    assert [p.name for p in net.trainable_params()] == ["model.0.weight", "model.0.bias"]
