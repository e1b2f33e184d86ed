"""core.batched_jacobian / core.batched_hessian (MindFlow's layouts [m, N, d] and [m, d, N, d])
against central finite differences, torch.autograd, and a closed form; core.data_sink."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import nn

RNG = np.random.default_rng(7)


def _net(d_in=3, hidden=6, d_out=2):
    core.set_seed(3)
    return nn.SequentialCell(
        nn.Dense(d_in, hidden, dtype=core.float64),
        nn.Tanh(),
        nn.Dense(hidden, hidden, dtype=core.float64),
        nn.Tanh(),
        nn.Dense(hidden, d_out, dtype=core.float64),
    )


def _fd_jacobian(f, x, eps=1e-6):
    """[m, N, d] by central differences of f: [N, d] -> [N, m] (numpy in, numpy out)."""
    n, d = x.shape
    m = f(x).shape[1]
    out = np.zeros((m, n, d))
    for j in range(d):
        xp, xm = x.copy(), x.copy()
        xp[:, j] += eps
        xm[:, j] -= eps
        out[:, :, j] = ((f(xp) - f(xm)) / (2 * eps)).T
    return out


def test_batched_jacobian_matches_finite_differences():
    net = _net()
    x = RNG.uniform(-1, 1, (7, 3))
    jac = core.batched_jacobian(net)(core.tensor(x))
    assert jac.shape == (2, 7, 3)
    ref = _fd_jacobian(lambda a: net(core.tensor(a)).asnumpy(), x)
    np.testing.assert_allclose(jac.asnumpy(), ref, atol=1e-8)


def test_batched_hessian_matches_finite_differences_of_the_jacobian():
    net = _net()
    x = RNG.uniform(-1, 1, (5, 3))
    hes = core.batched_hessian(net)(core.tensor(x))
    assert hes.shape == (2, 3, 5, 3)
    jac = core.batched_jacobian(net)
    eps = 1e-6
    ref = np.zeros((2, 3, 5, 3))  # [m, d_k, N, d_j]
    for j in range(3):
        xp, xm = x.copy(), x.copy()
        xp[:, j] += eps
        xm[:, j] -= eps
        dj = (jac(core.tensor(xp)).asnumpy() - jac(core.tensor(xm)).asnumpy()) / (2 * eps)
        ref[..., j] = np.transpose(dj, (0, 2, 1))  # [m, N, d_k] -> [m, d_k, N]
    np.testing.assert_allclose(hes.asnumpy(), ref, atol=1e-7)
    # symmetric in the two input axes
    np.testing.assert_allclose(hes.asnumpy(), np.transpose(hes.asnumpy(), (0, 3, 2, 1)), atol=1e-12)


def test_closed_form_polynomial_field():
    # u = (x0^2 x1, sin(x0) + x1^3): the derivatives are known exactly
    def model(p):
        x0, x1 = p[:, 0:1], p[:, 1:2]
        return core.ops.concat([x0 * x0 * x1, core.ops.sin(x0) + x1**3], axis=1)

    x = RNG.uniform(-1, 1, (4, 2))
    jac = core.batched_jacobian(model)(core.tensor(x)).asnumpy()
    hes = core.batched_hessian(model)(core.tensor(x)).asnumpy()
    x0, x1 = x[:, 0], x[:, 1]
    np.testing.assert_allclose(jac[0], np.stack([2 * x0 * x1, x0**2], axis=1), atol=1e-12)
    np.testing.assert_allclose(jac[1], np.stack([np.cos(x0), 3 * x1**2], axis=1), atol=1e-12)
    np.testing.assert_allclose(hes[0, 0], np.stack([2 * x1, 2 * x0], axis=1), atol=1e-12)
    np.testing.assert_allclose(hes[0, 1], np.stack([2 * x0, 0 * x0], axis=1), atol=1e-12)
    np.testing.assert_allclose(hes[1, 0], np.stack([-np.sin(x0), 0 * x0], axis=1), atol=1e-12)
    np.testing.assert_allclose(hes[1, 1], np.stack([0 * x0, 6 * x1], axis=1), atol=1e-12)


def test_under_jit_and_inside_grad():
    net = _net(d_in=2, d_out=1)
    x = core.tensor(RNG.uniform(-1, 1, (6, 2)))
    hes = core.batched_hessian(net)
    eager = hes(x).asnumpy()
    np.testing.assert_allclose(core.jit(hes)(x).asnumpy(), eager, rtol=1e-12, atol=1e-14)

    # a PINN-style loss on u_xx: its parameter gradient against finite differences
    def loss():
        return (hes(x)[0, 0, :, 0] ** 2).mean()

    w = net.trainable_params()[0]
    grads = core.grad(loss, None, [w])()
    g = grads[0].asnumpy() if isinstance(grads, (tuple, list)) else grads.asnumpy()
    w0 = w.asnumpy().copy()
    eps = 1e-6
    for idx in [(0, 0), (3, 1)]:
        wp, wm = w0.copy(), w0.copy()
        wp[idx] += eps
        wm[idx] -= eps
        w.set_data(core.tensor(wp))
        lp = loss().item()
        w.set_data(core.tensor(wm))
        lm = loss().item()
        w.set_data(core.tensor(w0))
        np.testing.assert_allclose(g[idx], (lp - lm) / (2 * eps), rtol=1e-5, atol=1e-9)


def test_bad_shapes_are_named():
    net = _net()
    with pytest.raises(ValueError, match=r"\[batch_size, in_channels\]"):
        core.batched_jacobian(net)(core.ones((3,), dtype=core.float64))
    with pytest.raises(ValueError, match="got an output of shape"):
        core.batched_jacobian(lambda x: x.sum())(core.ones((4, 3)))


@pytest.mark.parity
def test_matches_torch_autograd():
    torch = pytest.importorskip("torch")
    net = _net()
    layers = [c for c in net.cells() if isinstance(c, nn.Dense)]
    tnet = torch.nn.Sequential(
        torch.nn.Linear(3, 6),
        torch.nn.Tanh(),
        torch.nn.Linear(6, 6),
        torch.nn.Tanh(),
        torch.nn.Linear(6, 2),
    ).double()
    with torch.no_grad():
        for ours, theirs in zip(layers, [tnet[0], tnet[2], tnet[4]]):
            theirs.weight.copy_(torch.tensor(ours.weight.asnumpy()))
            theirs.bias.copy_(torch.tensor(ours.bias.asnumpy()))
    x = RNG.uniform(-1, 1, (5, 3))
    tx = torch.tensor(x, requires_grad=True)
    # torch's autograd: rows are independent, so grad of a column's sum is per point
    u = tnet(tx)  # [N, m]
    tj = torch.stack(
        [torch.autograd.grad(u[:, i].sum(), tx, create_graph=True)[0] for i in range(2)]
    )  # [m, N, d]
    th = torch.stack(
        [
            torch.stack(
                [torch.autograd.grad(tj[i, :, k].sum(), tx, retain_graph=True)[0] for k in range(3)]
            )
            for i in range(2)
        ]
    )  # [m, d_k, N, d_j]
    jac = core.batched_jacobian(net)(core.tensor(x)).asnumpy()
    hes = core.batched_hessian(net)(core.tensor(x)).asnumpy()
    np.testing.assert_allclose(jac, tj.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hes, th.detach().numpy(), rtol=1e-10, atol=1e-12)


# ---- core.data_sink ---------------------------------------------------------------------------


def test_data_sink_walks_the_batches_and_wraps_epochs():
    from diffsci.datasets import NumpySlicesDataset

    data = np.arange(10, dtype=np.float64).reshape(5, 2)
    ds = NumpySlicesDataset({"a": data}, shuffle=False).batch(2, drop_remainder=True)  # 2/epoch
    seen = []

    def step(a):
        seen.append(a.asnumpy()[:, 0].tolist())
        return a.sum()

    sink = core.data_sink(step, ds, sink_size=3)
    out = sink()  # batches 1, 2, then the next epoch's first
    assert seen == [[0.0, 2.0], [4.0, 6.0], [0.0, 2.0]]
    assert out.item() == 0 + 1 + 2 + 3
    sink()
    assert seen[3:] == [[4.0, 6.0], [0.0, 2.0], [4.0, 6.0]]


def test_data_sink_plain_iterable_and_jit():
    batches = [(core.tensor([1.0]), core.tensor([2.0])), (core.tensor([3.0]), core.tensor([4.0]))]
    sink = core.data_sink(lambda a, b: a * b, batches, sink_size=1, jit_config={"jit_level": "O1"})
    assert [sink().item() for _ in range(3)] == [2.0, 12.0, 2.0]
    with pytest.raises(ValueError, match="sink_size"):
        core.data_sink(lambda a: a, batches, sink_size=0)
    with pytest.raises(ValueError, match="no batches"):
        core.data_sink(lambda a: a, [], sink_size=1)()
