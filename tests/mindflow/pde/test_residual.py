"""mindflow.pde.residual: residuals as Python functions of the network and its derivatives."""

import math

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops
from diffsci.mindflow.pde import Burgers
from diffsci.mindflow.pde.residual import (
    Derivatives,
    derivatives,
    divergence,
    grad,
    gradient,
    laplacian,
    normal_derivative,
)

from ._models import Columns, SinExp, mlp

RNG = np.random.default_rng(1)
NU = 0.01 / math.pi


def burgers(net, x):
    u, u_t, u_x, u_xx = derivatives(net, x, "u", "u_t", "u_x", "u_xx", in_vars="xt", out_vars="u")
    return u_t + u * u_x - NU * u_xx


def test_burgers_docstring_example_matches_the_sympy_problem():
    net = mlp([2, 12, 12, 1])
    x = core.tensor(RNG.uniform([-1, 0], [1, 1], size=(32, 2)), dtype=core.float64)
    ref = Burgers(net).parse_node(Burgers(net).pde_nodes, inputs=x)[0]
    np.testing.assert_allclose(burgers(net, x).numpy(), ref.numpy(), rtol=1e-12, atol=1e-15)
    # and on the traveling-wave exact solution it vanishes
    a, c = 0.05, 0.3
    exact = Columns(lambda x: c - a * ops.tanh(a * (x[:, 0:1] - c * x[:, 1:2]) / (2 * NU)))
    assert np.abs(burgers(exact, x).numpy()).max() < 1e-15


def test_keys_and_lazy_evaluation():
    model = SinExp()
    xs = RNG.uniform(-1, 1, size=(6, 2))
    x = core.tensor(xs, dtype=core.float64)
    d = derivatives(model, x, in_vars=("x", "t"), out_vars=("u", "w"))
    assert isinstance(d, Derivatives)
    ref = model.exact(0, 2, 1, xs)
    for key in ["u_xxt", "u_txx", ("u", "x", "t", "x"), (0, 0, 0, 1)]:
        np.testing.assert_allclose(d[key].numpy()[:, 0], ref, rtol=1e-12)
    np.testing.assert_allclose(d["w"].numpy()[:, 0], model.exact(1, 0, 0, xs), rtol=1e-13)
    d.request("w_tttt", "w_x")
    w4, wx = d.get("w_tttt", "w_x")
    np.testing.assert_allclose(w4.numpy()[:, 0], model.exact(1, 0, 4, xs), rtol=1e-12)
    np.testing.assert_allclose(wx.numpy()[:, 0], model.exact(1, 1, 0, xs), rtol=1e-12)
    # multi-character names are separated by underscores
    d2 = Derivatives(model, x, in_vars=("x1", "time"), out_vars=("u", "w"))
    np.testing.assert_allclose(d2["u_x1_time"].numpy()[:, 0], model.exact(0, 1, 1, xs), rtol=1e-12)
    # one-output networks may leave the output out of a tuple key
    one = Columns(lambda p: ops.sin(1.3 * p[:, 0:1]) * ops.exp(-0.7 * p[:, 1:2]))
    np.testing.assert_allclose(
        derivatives(one, x, ("x", "x"), in_vars="xt").numpy()[:, 0],
        model.exact(0, 2, 0, xs),
        rtol=1e-12,
    )
    (w_t,) = derivatives(model, x, [(1, 1)])  # a list of keys gives a tuple
    np.testing.assert_allclose(w_t.numpy()[:, 0], model.exact(1, 0, 1, xs), rtol=1e-12)
    np.testing.assert_allclose(
        grad(model, x, 1, (1, 1)).numpy()[:, 0], model.exact(1, 0, 2, xs), rtol=1e-12
    )
    g = gradient(model, x, out_index=0)
    np.testing.assert_allclose(
        g.numpy(), np.stack([model.exact(0, 1, 0, xs), model.exact(0, 0, 1, xs)], 1), rtol=1e-12
    )


def test_vector_calculus_helpers():
    # u = (x^2 y, sin(x) z, x y z) on (x, y, z): div = 2xy + 0 + xy; lap u0 = 2y
    field = Columns(
        lambda p: p[:, 0:1] ** 2 * p[:, 1:2],
        lambda p: ops.sin(p[:, 0:1]) * p[:, 2:3],
        lambda p: p[:, 0:1] * p[:, 1:2] * p[:, 2:3],
    )
    xs = RNG.uniform(-1, 1, size=(8, 3))
    x = core.tensor(xs, dtype=core.float64)
    X, Y, Z = xs.T
    np.testing.assert_allclose(divergence(field, x).numpy()[:, 0], 3 * X * Y, rtol=1e-12)
    np.testing.assert_allclose(laplacian(field, x).numpy()[:, 0], 2 * Y, rtol=1e-12)
    np.testing.assert_allclose(
        laplacian(field, x, out_index=1).numpy()[:, 0], -np.sin(X) * Z, rtol=1e-12
    )
    np.testing.assert_allclose(
        divergence(field, x, out_indices=(0, 2), dims=(1, 2)).numpy()[:, 0],
        X**2 + X * Y,
        rtol=1e-12,
    )
    normals = RNG.normal(size=(8, 2))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    got = normal_derivative(field, x, core.tensor(normals, dtype=core.float64), out_index=2)
    np.testing.assert_allclose(
        got.numpy()[:, 0], Y * Z * normals[:, 0] + X * Z * normals[:, 1], rtol=1e-12
    )
    with pytest.raises(ValueError, match="3 output columns"):
        divergence(field, x, out_indices=(0, 1, 2), dims=(0, 1))
    with pytest.raises(ValueError, match="normals must be"):
        normal_derivative(field, x, core.ones((8, 4), dtype=core.float64))


def test_training_gradient_under_jit_matches_eager():
    net = mlp([2, 8, 8, 1], seed=3)
    x = core.tensor(RNG.uniform([-1, 0], [1, 1], size=(16, 2)), dtype=core.float64)
    params = net.trainable_params()
    vg = core.value_and_grad(lambda x: (burgers(net, x) ** 2).mean(), None, params)
    loss, grads = vg(x)
    jloss, jgrads = core.jit(vg)(x)
    np.testing.assert_allclose(jloss.numpy(), loss.numpy(), rtol=1e-12)
    for g, jg in zip(grads, jgrads):
        np.testing.assert_allclose(jg.numpy(), g.numpy(), rtol=1e-10, atol=1e-14)
    assert any(np.abs(g.numpy()).max() > 0 for g in grads)


def test_bad_keys():
    x = core.ones((3, 2), dtype=core.float64)
    d = Derivatives(SinExp(), x, in_vars="xt", out_vars="uw")
    with pytest.raises(KeyError, match="'q' is neither an output"):
        d["q_x"]
    with pytest.raises(KeyError, match="'y' is not an input variable"):
        d[("u", "y")]
    with pytest.raises(KeyError, match="names no output but there are 2 outputs"):
        d[("x", "x")]
    with pytest.raises(KeyError, match="needs names"):
        Derivatives(SinExp(), x)["u_x"]
    with pytest.raises(ValueError, match="names 3 inputs but x has 2 columns"):
        Derivatives(SinExp(), x, in_vars="xyz")
    with pytest.raises(ValueError, match="share names"):
        Derivatives(SinExp(), x, in_vars="xt", out_vars="xu")
