"""DeepONet / MIONet: forward passes written out in numpy from the parameters (Cartesian-product
and per-function points, several branches, several outputs), bad input, gradients against finite
differences (float64), jit against eager, and a short fit of the antiderivative operator."""

import numpy as np
import pytest
from scipy.integrate import cumulative_trapezoid

from diffsci import core
from diffsci.core import nn
from diffsci.mindflow.cell import DeepONet

RNG = np.random.default_rng(5)
F64 = core.float64


def _np_mlp(p, prefix, x, n_dense, last_act):
    for i in range(n_dense):
        x = x @ p[f"{prefix}.dense.{i}.weight"].T + p[f"{prefix}.dense.{i}.bias"]
        if i < n_dense - 1 or last_act:
            x = np.tanh(x)
    return x


def _randomize(net):
    """Non-zero biases everywhere (they start at zero), so that the test sees them."""
    for _, v in net.parameters_and_names():
        v.set_data(core.tensor(v.asnumpy() + RNG.uniform(-0.5, 0.5, v.shape)))
    return {k: v.asnumpy() for k, v in net.parameters_and_names()}


def test_deeponet_matches_numpy_for_shared_and_per_function_points():
    net = DeepONet([6, 8, 5], [2, 7, 5], activation="tanh", dtype=F64)
    p = _randomize(net)
    u = RNG.standard_normal((3, 6))
    y = RNG.standard_normal((4, 2))
    b = _np_mlp(p, "branches.0", u, 2, False)  # [3, 5]
    t = _np_mlp(p, "trunk", y, 2, True)  # [4, 5]
    np.testing.assert_allclose(
        net(core.tensor(u), core.tensor(y)).asnumpy(), b @ t.T + p["b"][0], atol=1e-12
    )
    ys = RNG.standard_normal((3, 4, 2))  # its own points for every function
    ts = _np_mlp(p, "trunk", ys, 2, True)  # [3, 4, 5]
    np.testing.assert_allclose(
        net((core.tensor(u), core.tensor(ys))).asnumpy(),
        np.einsum("bp,bnp->bn", b, ts) + p["b"][0],
        atol=1e-12,
    )


def test_mionet_multiplies_branches_and_splits_outputs():
    net = DeepONet(
        [[4, 6, 6], [3, 6]],
        [1, 5, 6],
        activation={"branch": "tanh", "trunk": "tanh"},
        trunk_last_activation=False,
        num_outputs=2,
        dtype=F64,
    )
    p = _randomize(net)
    u1, u2, y = (
        RNG.standard_normal((2, 4)),
        RNG.standard_normal((2, 3)),
        RNG.standard_normal((5, 1)),
    )
    feats = _np_mlp(p, "branches.0", u1, 2, False) * _np_mlp(p, "branches.1", u2, 1, False)
    t = _np_mlp(p, "trunk", y, 2, False)  # [5, 6]
    expected = np.einsum("bkp,nkp->bnk", feats.reshape(2, 2, 3), t.reshape(5, 2, 3)) + p["b"]
    out = net(core.tensor(u1), core.tensor(u2), core.tensor(y)).asnumpy()
    assert out.shape == (2, 5, 2)
    np.testing.assert_allclose(out, expected, atol=1e-12)


def test_deeponet_takes_cells_as_branch_and_trunk():
    branch = nn.SequentialCell(nn.Dense(4, 8, dtype=F64), nn.Tanh(), nn.Dense(8, 3, dtype=F64))
    trunk = nn.Dense(2, 3, dtype=F64)
    net = DeepONet(branch, trunk, dtype=F64)
    u, y = RNG.standard_normal((2, 4)), RNG.standard_normal((6, 2))
    expected = branch(core.tensor(u)).asnumpy() @ trunk(core.tensor(y)).asnumpy().T
    np.testing.assert_allclose(net(core.tensor(u), core.tensor(y)).asnumpy(), expected, atol=1e-12)


def test_deeponet_bad_input():
    with pytest.raises(ValueError, match=r"branch widths \[8\] and trunk width 6"):
        DeepONet([4, 8], [1, 6])
    with pytest.raises(ValueError, match="not a multiple of num_outputs=3"):
        DeepONet([4, 8], [1, 8], num_outputs=3)
    with pytest.raises(ValueError, match="at least two positive ints"):
        DeepONet([4], [1, 8])
    net = DeepONet([[4, 8], [2, 8]], [1, 8])
    with pytest.raises(ValueError, match="expected 2 branch input"):
        net(core.ones((3, 4)), core.ones((5, 1)))
    with pytest.raises(ValueError, match=r"must be \[B, m\]"):
        net(core.ones((4,)), core.ones((3, 2)), core.ones((5, 1)))
    with pytest.raises(ValueError, match=r"must be \[N, d\]"):
        net(core.ones((3, 4)), core.ones((3, 2)), core.ones((5,)))
    with pytest.raises(ValueError, match="3 point sets for 2 functions"):
        net(core.ones((2, 4)), core.ones((2, 2)), core.ones((3, 5, 1)))


def test_deeponet_gradient_matches_finite_differences():
    net = DeepONet([[3, 4, 4], [2, 4]], [1, 4, 4], num_outputs=2, dtype=F64)
    _randomize(net)
    u1, u2 = core.tensor(RNG.standard_normal((2, 3))), core.tensor(RNG.standard_normal((2, 2)))
    y = core.tensor(RNG.standard_normal((5, 1)))
    target = RNG.standard_normal((2, 5, 2))

    def loss(u1, u2, y):
        return ((net(u1, u2, y) - core.tensor(target)) ** 2).mean()

    params = net.trainable_params()
    _, grads = core.value_and_grad(loss, None, params)(u1, u2, y)
    eps = 1e-6
    for p, g in zip(params, grads, strict=True):
        base = p.asnumpy().copy()
        idx = tuple(RNG.integers(0, s) for s in base.shape)
        vals = []
        for sign in (1.0, -1.0):
            bumped = base.copy()
            bumped[idx] += sign * eps
            p.set_data(core.tensor(bumped))
            vals.append(float(loss(u1, u2, y).asnumpy()))
        p.set_data(core.tensor(base))
        assert abs((vals[0] - vals[1]) / (2 * eps) - g.asnumpy()[idx]) < 1e-7, (p.name, idx)


def test_deeponet_jit_equals_eager():
    net = DeepONet([5, 16, 8], [1, 16, 8])
    u = core.tensor(RNG.standard_normal((4, 5)).astype(np.float32))
    y = core.tensor(RNG.standard_normal((7, 1)).astype(np.float32))
    np.testing.assert_allclose(
        core.jit(net)(u, y).asnumpy(), net(u, y).asnumpy(), rtol=1e-5, atol=1e-6
    )


def _antiderivative_data(n_funcs, m, n_points, rng):
    """u(x) = sum_k a_k sin(k pi x) + b_k cos(k pi x) on [0, 1] at m sensors, and
    G(u)(y) = int_0^y u = sum_k a_k (1 - cos(k pi y)) / (k pi) + b_k sin(k pi y) / (k pi)."""
    k = np.arange(1, 4)[None, :]
    a, b = rng.standard_normal((n_funcs, 3)) / k, rng.standard_normal((n_funcs, 3)) / k
    x = np.linspace(0.0, 1.0, m)
    y = np.linspace(0.0, 1.0, n_points)

    def series(s, fa, fb):
        return (a[:, None, :] * fa(s[None, :, None] * k[None] * np.pi)).sum(-1) + (
            b[:, None, :] * fb(s[None, :, None] * k[None] * np.pi)
        ).sum(-1)

    u = series(x, np.sin, np.cos)  # [n_funcs, m]
    kp = k[None] * np.pi
    g = (a[:, None, :] * (1.0 - np.cos(y[None, :, None] * kp)) / kp).sum(-1) + (
        b[:, None, :] * np.sin(y[None, :, None] * kp) / kp
    ).sum(-1)  # [n_funcs, n_points]
    return u.astype(np.float32), y[:, None].astype(np.float32), g.astype(np.float32)


def test_deeponet_learns_the_antiderivative_a_little():
    core.set_seed(0)
    u, y, g = _antiderivative_data(64, 20, 16, np.random.default_rng(0))
    fine_u, _, _ = _antiderivative_data(64, 1501, 16, np.random.default_rng(0))
    integral = cumulative_trapezoid(fine_u.astype(np.float64), dx=1.0 / 1500, initial=0.0)
    np.testing.assert_allclose(integral[:, ::100], g, atol=1e-5)  # the data are G(u)
    net = DeepONet([20, 32, 32], [1, 32, 32])
    opt = nn.Adam(net.trainable_params(), learning_rate=3e-3)
    u_t, y_t, g_t = core.tensor(u), core.tensor(y), core.tensor(g)

    def loss_fn(u, y, g):
        return ((net(u, y) - g) ** 2).mean()

    grad_fn = core.value_and_grad(loss_fn, None, opt.parameters)

    @core.jit
    def train_step(u, y, g):
        loss, grads = grad_fn(u, y, g)
        opt(grads)
        return loss

    first = float(loss_fn(u_t, y_t, g_t).asnumpy())
    for _ in range(150):
        train_step(u_t, y_t, g_t)
    last = float(loss_fn(u_t, y_t, g_t).asnumpy())
    assert last < 0.2 * first, (first, last)
    u_new, _, g_new = _antiderivative_data(16, 20, 16, np.random.default_rng(1))
    held_out = float(((net(core.tensor(u_new), y_t).asnumpy() - g_new) ** 2).mean())
    assert held_out < 0.5 * float((g_new**2).mean()), held_out
