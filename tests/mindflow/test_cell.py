"""mindflow.cell: the PINN networks against forward passes written out in numpy from their
parameters, MindFlow's documented examples, and the activations' formulas."""

import math

import numpy as np
import pytest

from diffsci import core
from diffsci.mindflow.cell import (
    DropPath,
    FCSequential,
    InputScale,
    LinearBlock,
    MultiScaleFCSequential,
    ResBlock,
    get_activation,
)

RNG = np.random.default_rng(11)


def _params(cell):
    return {name: p.asnumpy() for name, p in cell.parameters_and_names()}


def _np_fc(p, x, layers, act=np.sin, residual=True, prefix=""):
    """FCSequential written out: act(W0 x + b0); (layers - 2) x act(W h + b (+ h)); W h + b."""
    h = act(x @ p[f"{prefix}network.0.dense.weight"].T + p[f"{prefix}network.0.dense.bias"])
    for k in range(1, layers - 1):
        key = f"{prefix}network.{k}.dense." + ("dense." if residual else "")
        z = h @ p[key + "weight"].T + p[key + "bias"]
        h = act(z + h) if residual else act(z)
    last = f"{prefix}network.{layers - 1}.dense."
    return h @ p[last + "weight"].T + p[last + "bias"]


@pytest.mark.parametrize("residual", [True, False])
def test_fc_sequential_matches_numpy_forward(residual):
    net = FCSequential(3, 2, 5, 16, residual=residual, act="tanh", dtype=core.float64)
    blocks = list(net.network.cells())
    assert len(blocks) == 5
    hidden = ResBlock if residual else LinearBlock
    assert [type(b) for b in blocks] == [LinearBlock, hidden, hidden, hidden, LinearBlock]
    x = RNG.uniform(-1, 1, (7, 3))
    got = net(core.tensor(x)).asnumpy()
    assert got.shape == (7, 2)
    ref = _np_fc(_params(net), x, 5, np.tanh, residual)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-14)
    # acts on the last axis: a [2, 7, 3] batch gives the same rows
    got3 = net(core.tensor(np.stack([x, x]))).asnumpy()
    np.testing.assert_allclose(got3[1], ref, rtol=1e-12, atol=1e-14)


def test_fc_sequential_default_initialisation():
    core.set_seed(5)
    net = FCSequential(2, 1, 3, 400)  # MindFlow's defaults: act 'sin', 'normal', 'default'
    p = _params(net)
    w = p["network.1.dense.dense.weight"]  # [400, 400], N(0, 0.01^2)
    assert w.dtype == np.float32
    assert abs(w.std() - 0.01) < 5e-4 and abs(w.mean()) < 5e-4
    b0, b1 = p["network.0.dense.bias"], p["network.1.dense.dense.bias"]
    # 'default' bias: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in 2 and 400
    assert np.abs(b0).max() <= 1 / math.sqrt(2) and np.abs(b0).max() > 0.6
    assert np.abs(b1).max() <= 1 / math.sqrt(400) and np.abs(b1).max() > 0.04
    zero = FCSequential(2, 1, 3, 8, bias_init="zeros")
    assert not any(np.any(v) for k, v in _params(zero).items() if k.endswith("bias"))


def test_mindflow_documented_example_and_ones_init():
    # MindFlow's docstring: FCSequential(3, 3, 5, 32, weight_init="ones", bias_init="zeros")
    net = FCSequential(3, 3, 5, 32, weight_init="ones", bias_init="zeros", dtype=core.float64)
    out = net(core.ones((16, 3), dtype=core.float64)).asnumpy()
    assert out.shape == (16, 3)
    h = np.sin(3.0)  # every hidden unit after the first layer: sin(1 + 1 + 1)
    for _ in range(3):
        h = np.sin(32 * h + h)  # ResBlock: sin(W h + h), W all ones
    np.testing.assert_allclose(out, np.full((16, 3), 32 * h), rtol=1e-12)


def test_multiscale_matches_hand_computation():
    core.set_seed(2)
    latent = core.Parameter(core.tensor(RNG.standard_normal((2, 4))), name="latent")
    scale, center = [1.0, 2.0, 4.0], [0.5, -0.5, 0.0]
    net = MultiScaleFCSequential(
        3,
        2,
        4,
        8,
        act="tanh",
        num_scales=3,
        amp_factor=1.5,
        scale_factor=3.0,
        input_scale=scale,
        input_center=center,
        latent_vector=latent,
        dtype=core.float64,
    )
    assert net.scale_coef == [1.5, 4.5, 13.5]
    x = RNG.uniform(-1, 1, (6, 3))
    got = net(core.tensor(x)).asnumpy()
    p = _params(net)
    xs = (x - np.array(center)) * np.array(scale)
    z = latent.asnumpy()
    xt = np.concatenate([xs, np.repeat(z, 3, axis=0)], axis=1)  # rows 0-2: scenario 0
    ref = sum(
        _np_fc(p, c * xt, 4, np.tanh, True, prefix=f"cell_list.{i}.")
        for i, c in enumerate([1.5, 4.5, 13.5])
    )
    np.testing.assert_allclose(got, ref, rtol=1e-11, atol=1e-13)
    # the latent vector is trained: its gradient is nonzero and matches finite differences
    xt_ = core.tensor(x)
    g = core.grad(lambda: net(xt_).sum(), None, [latent])()
    g = (g[0] if isinstance(g, (tuple, list)) else g).asnumpy()
    z0, eps = z.copy(), 1e-6
    zp, zm = z0.copy(), z0.copy()
    zp[1, 2] += eps
    zm[1, 2] -= eps
    latent.set_data(core.tensor(zp))
    fp = net(xt_).sum().item()
    latent.set_data(core.tensor(zm))
    fm = net(xt_).sum().item()
    latent.set_data(core.tensor(z0))
    np.testing.assert_allclose(g[1, 2], (fp - fm) / (2 * eps), rtol=1e-6)
    with pytest.raises(ValueError, match="multiple of num_scenarios=2"):
        net(core.ones((5, 3), dtype=core.float64))


def test_multiscale_mindflow_example_shape():
    latent = core.Parameter(core.ones((4, 16)), name="latent_vector")
    net = MultiScaleFCSequential(
        3,
        3,
        5,
        32,
        weight_init="ones",
        bias_init="zeros",
        input_scale=[1.0, 2.0, 4.0],
        input_center=[3.5, 3.5, 3.5],
        latent_vector=latent,
    )
    assert net(core.ones((64, 3)) + 3.0).shape == (64, 3)


def test_input_scale():
    x = RNG.uniform(size=(16, 3)) + 3.0
    net = InputScale([1.0, 2.0, 4.0], [3.5, 3.5, 3.5], dtype=core.float64)
    out = net(core.tensor(x)).asnumpy()
    np.testing.assert_allclose(out, (x - 3.5) * np.array([1.0, 2.0, 4.0]), rtol=1e-15)
    assert np.all(np.abs(out[:, 2]) <= 2.0)
    np.testing.assert_allclose(InputScale([2.0, 3.0])(core.ones((1, 2))).asnumpy(), [[2.0, 3.0]])
    with pytest.raises(TypeError, match="input_scale must be list"):
        InputScale((1.0, 2.0))
    with pytest.raises(ValueError, match="input_center has 1 entries but input_scale has 2"):
        InputScale([1.0, 2.0], [0.0])


def test_res_block_and_linear_block():
    res = ResBlock(4, 4, activation="relu", dtype=core.float64)
    x = RNG.standard_normal((5, 4))
    p = _params(res)
    ref = np.maximum(x @ p["dense.dense.weight"].T + p["dense.dense.bias"] + x, 0.0)
    np.testing.assert_allclose(res(core.tensor(x)).asnumpy(), ref, rtol=1e-13)
    ident = ResBlock(4, 4, dtype=core.float64)  # no activation: W x + b + x
    p = _params(ident)
    ref = x @ p["dense.dense.weight"].T + p["dense.dense.bias"] + x
    np.testing.assert_allclose(ident(core.tensor(x)).asnumpy(), ref, rtol=1e-13)
    lin = LinearBlock(4, 2, activation=core.ops.tanh, has_bias=False, dtype=core.float64)
    ref = np.tanh(x @ _params(lin)["dense.weight"].T)
    np.testing.assert_allclose(lin(core.tensor(x)).asnumpy(), ref, rtol=1e-13)


def test_weight_norm():
    plain = LinearBlock(3, 5, weight_init="normal", dtype=core.float64)
    normed = LinearBlock(3, 5, weight_init="normal", weight_norm=True, dtype=core.float64)
    normed.dense.weight.set_data(plain.dense.weight)
    normed.dense.bias.set_data(core.tensor(RNG.standard_normal(5)))
    plain.dense.bias.set_data(normed.dense.bias)
    v = plain.dense.weight.asnumpy()
    normed.weight_g.set_data(core.tensor(np.linalg.norm(v, axis=1)))
    x = core.tensor(RNG.standard_normal((4, 3)))
    np.testing.assert_allclose(normed(x).asnumpy(), plain(x).asnumpy(), rtol=1e-12)
    # W = g v / ||v||: scaling v changes nothing; the row norms of W are g
    normed.dense.weight.set_data(core.tensor(3.0 * v))
    np.testing.assert_allclose(normed(x).asnumpy(), plain(x).asnumpy(), rtol=1e-12)
    g = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    normed.weight_g.set_data(core.tensor(g))
    b = normed.dense.bias.asnumpy()
    w = (normed(x).asnumpy() - b).T @ np.linalg.pinv(x.asnumpy().T)  # recover W [5, 3]
    np.testing.assert_allclose(np.linalg.norm(w, axis=1), g, rtol=1e-9)
    fresh = FCSequential(2, 1, 3, 4, weight_norm=True)
    assert {n for n, _ in fresh.parameters_and_names() if n.endswith("weight_g")} == {
        "network.0.weight_g",
        "network.1.dense.weight_g",
        "network.2.weight_g",
    }


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"in_channels must equal out_channels.*3.*4"):
        ResBlock(3, 4)
    with pytest.raises(ValueError, match=r"layers .* must be >= 3, got 2"):
        FCSequential(2, 1, 2, 8)
    with pytest.raises(TypeError, match="layers must be int"):
        FCSequential(2, 1, 3.0, 8)
    with pytest.raises(TypeError, match="residual must be bool"):
        FCSequential(2, 1, 3, 8, residual=1)
    with pytest.raises(TypeError, match="num_scales must be int"):
        MultiScaleFCSequential(2, 1, 3, 8, num_scales=2.0)
    with pytest.raises(TypeError, match="latent_vector must be Parameter"):
        MultiScaleFCSequential(2, 1, 3, 8, latent_vector=core.ones((2, 2)))
    with pytest.raises(ValueError, match="does not end in in_channels=2"):
        FCSequential(2, 1, 3, 8)(core.ones((4, 3)))


_X = np.array([[1.2, 0.1], [0.2, 3.2], [-2.5, -0.4]])


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize(
    "name, formula",
    [
        ("relu", lambda x: np.maximum(x, 0)),
        ("relu6", lambda x: np.clip(x, 0, 6)),
        ("tanh", np.tanh),
        ("sigmoid", _sigmoid),
        ("sin", np.sin),
        ("srelu", lambda x: np.sin(2 * np.pi * x) * np.maximum(x, 0) * np.maximum(1 - x, 0)),
        ("silu", lambda x: x * _sigmoid(x)),
        ("Swish", lambda x: x * _sigmoid(x)),
        ("elu", lambda x: np.where(x > 0, x, np.expm1(x))),
        ("leakyrelu", lambda x: np.where(x >= 0, x, 0.2 * x)),
        ("prelu", lambda x: np.where(x > 0, x, 0.25 * x)),
        ("hswish", lambda x: x * np.clip(x + 3, 0, 6) / 6),
        ("hsigmoid", lambda x: np.clip(x + 3, 0, 6) / 6),
        ("logsigmoid", lambda x: np.log(_sigmoid(x))),
        ("softplus", lambda x: np.log1p(np.exp(x))),
        (
            "fast_gelu",
            lambda x: x / (1 + np.exp(-1.702 * np.abs(x))) * np.exp(0.851 * (x - np.abs(x))),
        ),
        ("gelu", lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))),
        ("softmax", lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
        ("logsoftmax", lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
    ],
)
def test_activations_match_their_formulas(name, formula):
    got = get_activation(name)(core.tensor(_X)).asnumpy()
    np.testing.assert_allclose(got, formula(_X), rtol=1e-6, atol=1e-7)


def test_get_activation_documented_values_and_errors():
    x = core.tensor(np.array([[1.2, 0.1], [0.2, 3.2]], np.float32))
    # MindFlow's docstrings
    np.testing.assert_allclose(
        get_activation("sigmoid")(x).asnumpy(),
        [[0.7685248, 0.5249792], [0.54983395, 0.96083426]],
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        get_activation("srelu")(x).asnumpy(), [[0.0, 0.05290067], [0.15216905, 0.0]], atol=1e-6
    )
    assert get_activation(None) is None
    with pytest.raises(ValueError, match=r"unknown activation 'sine'; accepted names: .*sin, "):
        get_activation("sine")
    with pytest.raises(TypeError, match="must be a str or None"):
        get_activation(3)


def test_drop_path():
    cell = DropPath(0.5)
    x = core.ones((200, 3))
    cell.set_train(True)
    out = cell(x).asnumpy()
    rows = out[:, 0]
    assert set(np.unique(rows)) <= {0.0, 2.0} and 40 < (rows == 0).sum() < 160
    assert np.all(out == rows[:, None])  # whole samples are dropped
    cell.set_train(False)
    np.testing.assert_array_equal(cell(x).asnumpy(), x.asnumpy())
