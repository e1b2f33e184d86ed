"""The complex-valued Helmholtz PINN of examples/mindelec/pinn/frequency_domain_maxwell: the
gradient of the real loss with respect to complex parameters against central differences of
their real and imaginary parts (Wirtinger / JAX convention), the complex Laplacian and normal
derivative against differences, the finite-difference reference against a manufactured
solution (second order), and the free-space field against the Hankel function."""

import importlib
import pathlib
import sys

import numpy as np
import pytest
from scipy.special import hankel1

from diffsci import core

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "mindelec" / "pinn" / "frequency_domain_maxwell"


@pytest.fixture(scope="module")
def hz():
    sys.modules.pop("helmholtz", None)  # never another example's module of that name
    sys.path.insert(0, str(EXAMPLE))
    try:
        yield importlib.import_module("helmholtz")
    finally:
        sys.path.remove(str(EXAMPLE))
        sys.modules.pop("helmholtz", None)


def _batch(hz, k, n=24, m=12, seed=0):
    rng = np.random.default_rng(seed)
    geom = hz.make_geometry([0.0, 0.0], [1.0, 1.0])
    x = geom.sample_interior(n, seed=rng)
    xb, nb = geom.sample_boundary(m, seed=rng)
    f = hz.gaussian_source(x, (0.5, 0.5), 0.1)
    return tuple(core.tensor(a, dtype=core.float64) for a in (x, f, xb, nb))


def test_wirtinger_gradient_matches_central_differences(hz):
    """``grad`` of ``L = |pde|^2 + |bc|^2`` at a complex weight ``w = a + i b`` is
    ``dL/da - i dL/db`` (twice the Wirtinger ``dL/dz``): both parts against central
    differences of ``a`` and ``b``; a real trunk weight against its own difference."""
    k = 4.0
    core.set_seed(3)
    net = hz.ComplexHeadNet(neurons=6, layers=2, input_scale=3.0, input_center=0.5)
    terms = hz.complex_loss_terms(net, k, bc_weight=2.0, residual_scale=1.0 / k**2)
    batch = _batch(hz, k)

    def loss():
        t = terms(*batch)
        return t["pde"] + t["bc"]

    params = [net.weight, net.bias, net.trunk.hidden[0].weight]
    grads = core.grad(lambda: loss(), None, params)()
    g_w, g_b, g_trunk = (g.asnumpy() for g in grads)
    assert np.iscomplexobj(g_w) and np.iscomplexobj(g_b) and not np.iscomplexobj(g_trunk)

    def loss_at(param, index, delta):
        old = param.asnumpy().copy()
        new = old.copy()
        new[index] += delta
        param.set_data(core.tensor(new, dtype=param.dtype))
        value = float(loss().asnumpy())
        param.set_data(core.tensor(old, dtype=param.dtype))
        return value

    h = 1e-6
    for param, grad in ((net.weight, g_w), (net.bias, g_b)):
        for index in [(0, 0), (0, 3), (0, 5)] if param is net.weight else [(0,)]:
            d_re = (loss_at(param, index, h) - loss_at(param, index, -h)) / (2 * h)
            d_im = (loss_at(param, index, 1j * h) - loss_at(param, index, -1j * h)) / (2 * h)
            np.testing.assert_allclose(grad[index].real, d_re, rtol=1e-6, atol=1e-9)
            np.testing.assert_allclose(grad[index].imag, -d_im, rtol=1e-6, atol=1e-9)
    for index in [(0, 0), (3, 1)]:
        d = (
            loss_at(net.trunk.hidden[0].weight, index, h)
            - loss_at(net.trunk.hidden[0].weight, index, -h)
        ) / (2 * h)
        np.testing.assert_allclose(g_trunk[index], d, rtol=1e-6, atol=1e-9)


def test_adam_step_on_complex_parameters_lowers_the_loss(hz):
    """Core's Adam conjugates the complex gradient: small steps descend."""
    k = 4.0
    net = hz.ComplexHeadNet(neurons=8, layers=2, input_scale=3.0, input_center=0.5)
    terms = hz.complex_loss_terms(net, k, bc_weight=2.0, residual_scale=1.0 / k**2)
    batch = _batch(hz, k, seed=1)
    opt = core.nn.Adam([net.weight, net.bias], learning_rate=1e-3)
    grad_fn = core.value_and_grad(lambda *b: sum(terms(*b).values()), None, opt.parameters)
    first, grads = grad_fn(*batch)
    opt(grads)
    for _ in range(4):
        last, grads = grad_fn(*batch)
        opt(grads)
    assert float(last.asnumpy()) < float(first.asnumpy())


def test_complex_laplacian_and_normal_derivative(hz):
    net = hz.ComplexHeadNet(neurons=8, layers=2, input_scale=5.0, input_center=0.5)
    x = np.array([[0.3, 0.4], [0.6, 0.55], [0.9, 0.1]])
    n = np.array([[1.0, 0.0], [0.0, -1.0], [0.6, 0.8]])
    lap = hz.laplacian(net, core.tensor(x, dtype=core.float64)).asnumpy()
    dn = hz.normal_derivative(
        net, core.tensor(x, dtype=core.float64), core.tensor(n, dtype=core.float64)
    ).asnumpy()

    def f(p):
        return net(core.tensor(p, dtype=core.float64)).asnumpy()

    h = 1e-3
    fd = sum((f(x + h * e) - 2 * f(x) + f(x - h * e)) / h**2 for e in (np.eye(2)[0], np.eye(2)[1]))
    np.testing.assert_allclose(lap, fd, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dn, (f(x + h * n) - f(x - h * n)) / (2 * h), rtol=1e-5, atol=1e-6)

    # and of a closed form: u = exp(i (3 x + 2 y)) has Delta u = -13 u
    def plane(p):
        return core.ops.exp(1j * (3.0 * p[:, 0:1] + 2.0 * p[:, 1:2]).astype(core.complex128))

    u = plane(core.tensor(x, dtype=core.float64)).asnumpy()
    np.testing.assert_allclose(
        hz.laplacian(plane, core.tensor(x, dtype=core.float64)).asnumpy(), -13.0 * u, atol=1e-12
    )


def test_fd_reference_converges_at_second_order_on_a_manufactured_solution(hz):
    """``u = exp(i (3x + 2y)) (1 + x y^2)`` with its source and Robin data: the max error falls
    by about 4 per halving of h."""
    k = 10.0

    def exact(p):
        return np.exp(1j * (3 * p[:, 0] + 2 * p[:, 1])) * (1 + p[:, 0] * p[:, 1] ** 2)

    def source(p):  # -(Delta + k^2) u
        x, y = p[:, 0], p[:, 1]
        e, q = np.exp(1j * (3 * x + 2 * y)), 1 + x * y**2
        lap = e * (-9 * q + 6j * y**2) + e * (-4 * q + 8j * x * y + 2 * x)
        return -(lap + k * k * exact(p))

    def g(p, normal):  # du/dn - i k u
        x, y = p[:, 0], p[:, 1]
        e, q = np.exp(1j * (3 * x + 2 * y)), 1 + x * y**2
        ux, uy = e * (3j * q + y**2), e * (2j * q + 2 * x * y)
        return normal[:, 0] * ux + normal[:, 1] * uy - 1j * k * exact(p)

    errs = []
    for n in (21, 41, 81):
        xs, ys, u = hz.fd_helmholtz(n, k, source, g=g)
        xx, yy = np.meshgrid(xs, ys)
        ref = exact(np.stack([xx.ravel(), yy.ravel()], axis=1)).reshape(n, n)
        errs.append(np.abs(u - ref).max())
    orders = np.log2(np.asarray(errs[:-1]) / np.asarray(errs[1:]))
    assert np.all(orders > 1.8), (errs, orders)
    assert errs[-1] < 5e-4


def test_free_space_field_is_the_smoothed_hankel_function(hz):
    """Far from a narrow Gaussian, ``f * (i/4) H0(k r) = (i/4) H0(k r) exp(-k^2 s^2 / 2)``
    (a Gaussian average multiplies every plane-wave component by that factor)."""
    k, s = 10.0, 0.02
    r = np.array([0.15, 0.3, 0.45])
    pts = np.stack([0.5 + r, np.full_like(r, 0.5)], axis=1)
    u = hz.free_space_solution(pts, k, (0.5, 0.5), s)
    exact = 0.25j * hankel1(0, k * r) * np.exp(-((k * s) ** 2) / 2)
    np.testing.assert_allclose(u, exact, rtol=1e-6)


def test_absorbing_reference_is_close_to_free_space(hz):
    """The first-order absorbing condition reflects a little: the FD solution stays within
    15 % of the free-space field (about 7 % for these values) and is not equal to it."""
    k, s = 10.0, 0.05
    xs, ys, u = hz.fd_helmholtz(61, k, lambda p: hz.gaussian_source(p, (0.5, 0.5), s))
    xx, yy = np.meshgrid(xs, ys)
    free = hz.free_space_solution(np.stack([xx.ravel(), yy.ravel()], 1), k, (0.5, 0.5), s)
    rel = np.linalg.norm(u.ravel() - free) / np.linalg.norm(free)
    assert 0.01 < rel < 0.15, rel
