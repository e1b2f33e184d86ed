"""mindflow.verify's PINN references against published digits and their PDEs (finite differences)."""

import math

import numpy as np
import pytest

from diffsci.mindflow import verify
from diffsci.mindflow.verify import BURGERS_NU


def test_burgers_published_values():
    # Basdevant et al. / Raissi et al.'s reference digits quoted in issue 13
    u = verify.burgers_cole_hopf([-0.5, -0.1, -0.01], [0.25, 0.5, 1.0])
    np.testing.assert_allclose(np.round(u, 5), [0.80320, 0.95816, 0.59426], atol=0)


def test_burgers_steepest_slope():
    from scipy.optimize import minimize_scalar

    def neg_slope(t):
        return -abs(verify.burgers_cole_hopf(0.0, t, return_ux=True)[1])

    res = minimize_scalar(neg_slope, bounds=(0.45, 0.6), method="bounded", options={"xatol": 1e-7})
    assert round(-res.fun, 3) == 152.005
    assert abs(res.x - 0.5105) < 1e-4


def test_burgers_initial_boundary_and_pde_residual():
    x = np.linspace(-1, 1, 41)
    np.testing.assert_array_equal(verify.burgers_cole_hopf(x, 0.0), -np.sin(np.pi * x))
    np.testing.assert_allclose(verify.burgers_cole_hopf([-1.0, 1.0], 0.7), 0.0, atol=1e-12)
    # continuity at t -> 0+
    np.testing.assert_allclose(verify.burgers_cole_hopf(x, 1e-9), -np.sin(np.pi * x), atol=1e-6)
    # u_t + u u_x - nu u_xx = 0 by central differences, away from the shock; u_x vs differences
    xs, ts = np.meshgrid(np.linspace(-0.9, -0.2, 8), [0.1, 0.3, 0.8])
    h, k = 1e-4, 1e-5
    u, ux = verify.burgers_cole_hopf(xs, ts, return_ux=True)

    def f(dx=0.0, dt=0.0):
        return verify.burgers_cole_hopf(xs + dx, ts + dt)

    u_x = (f(h) - f(-h)) / (2 * h)
    u_xx = (f(h) - 2 * u + f(-h)) / h**2
    u_t = (f(dt=k) - f(dt=-k)) / (2 * k)
    np.testing.assert_allclose(ux, u_x, rtol=1e-6, atol=1e-6)
    residual = u_t + u * u_x - BURGERS_NU * u_xx
    assert np.abs(residual).max() < 1e-5


def test_burgers_grid_and_bad_input():
    x, t, u = verify.burgers_cole_hopf_grid(nx=16, nt=5)
    assert u.shape == (16, 5) and x[0] == -1.0 and t[-1] == 1.0
    np.testing.assert_allclose(u[:, 0], -np.sin(np.pi * x))
    with pytest.raises(ValueError, match="times must be"):
        verify.burgers_cole_hopf(0.0, -1.0)
    with pytest.raises(ValueError, match="n_quad must lie"):
        verify.burgers_cole_hopf(0.0, 0.5, n_quad=1000)
    with pytest.raises(ValueError, match="nu must be"):
        verify.burgers_cole_hopf(0.0, 0.5, nu=0.0)


def _laplacian_fd(fn, x, h=1e-4):
    lap = np.zeros((len(x), 1))
    for i in range(x.shape[1]):
        e = np.zeros(x.shape[1])
        e[i] = h
        lap += (fn(x + e) - 2 * fn(x) + fn(x - e)) / h**2
    return lap


@pytest.mark.parametrize("d", [1, 2, 3])
def test_poisson_closed_form(d):
    rng = np.random.default_rng(d)
    x = rng.uniform(0, 1, (50, d))
    lap = _laplacian_fd(verify.poisson_exact, x)
    np.testing.assert_allclose(lap, verify.poisson_source(x), atol=2e-6)
    # MindFlow's Dirichlet data: prod sin(4 pi x_i) / (16 d pi^2)
    expected = np.prod(np.sin(4 * np.pi * x), axis=1, keepdims=True) / (16 * d * np.pi**2)
    np.testing.assert_allclose(verify.poisson_exact(x), expected, rtol=1e-14)
    h = 1e-6
    fd = np.stack(
        [
            (
                verify.poisson_exact(x + h * np.eye(d)[i])
                - verify.poisson_exact(x - h * np.eye(d)[i])
            )[:, 0]
            / (2 * h)
            for i in range(d)
        ],
        axis=1,
    )
    np.testing.assert_allclose(verify.poisson_grad(x), fd, atol=1e-8)
    np.testing.assert_allclose(
        verify.poisson_robin_data(x), verify.poisson_exact(x) + fd.sum(1, keepdims=True), atol=1e-8
    )
    with pytest.raises(ValueError, match=r"shape \[N, d\]"):
        verify.poisson_exact(np.zeros((3, 4)))


def test_kovasznay_satisfies_steady_navier_stokes():
    re = 20.0
    nu = 1 / re
    lam = verify.kovasznay_lambda(re)
    assert lam == pytest.approx(10 - math.sqrt(100 + 4 * math.pi**2))  # -1.8101...
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-0.5, 1.0, 30), rng.uniform(-0.5, 1.5, 30)
    h = 1e-4

    def d(fn, dx, dy):
        return (fn(x + dx, y + dy) - fn(x - dx, y - dy)) / (2 * h)

    def d2(fn, dx, dy):
        return (fn(x + dx, y + dy) - 2 * fn(x, y) + fn(x - dx, y - dy)) / h**2

    comp = [lambda a, b, i=i: verify.kovasznay(a, b, re)[i] for i in range(3)]
    u, v, _ = verify.kovasznay(x, y, re)
    ux, uy = d(comp[0], h, 0), d(comp[0], 0, h)
    vx, vy = d(comp[1], h, 0), d(comp[1], 0, h)
    px, py = d(comp[2], h, 0), d(comp[2], 0, h)
    lap_u = d2(comp[0], h, 0) + d2(comp[0], 0, h)
    lap_v = d2(comp[1], h, 0) + d2(comp[1], 0, h)
    assert np.abs(ux + vy).max() < 1e-6
    assert np.abs(u * ux + v * uy + px - nu * lap_u).max() < 1e-5
    assert np.abs(u * vx + v * vy + py - nu * lap_v).max() < 1e-5


def test_taylor_green_satisfies_navier_stokes():
    nu = 0.7
    rng = np.random.default_rng(1)
    x, y, t = rng.uniform(0, 2 * np.pi, 30), rng.uniform(0, 2 * np.pi, 30), rng.uniform(0, 2, 30)
    h = 1e-4

    def comp(i):
        return lambda a, b, c: verify.taylor_green_2d(a, b, c, nu)[i]

    def d(fn, e):
        return (fn(x + e[0], y + e[1], t + e[2]) - fn(x - e[0], y - e[1], t - e[2])) / (2 * h)

    def d2(fn, e):
        return (
            fn(x + e[0], y + e[1], t + e[2]) - 2 * fn(x, y, t) + fn(x - e[0], y - e[1], t - e[2])
        ) / h**2

    ex, ey, et = (h, 0, 0), (0, h, 0), (0, 0, h)
    u, v, _ = verify.taylor_green_2d(x, y, t, nu)
    fu, fv, fp = comp(0), comp(1), comp(2)
    assert np.abs(d(fu, ex) + d(fv, ey)).max() < 1e-8
    mom_u = d(fu, et) + u * d(fu, ex) + v * d(fu, ey) + d(fp, ex) - nu * (d2(fu, ex) + d2(fu, ey))
    mom_v = d(fv, et) + u * d(fv, ex) + v * d(fv, ey) + d(fp, ey) - nu * (d2(fv, ex) + d2(fv, ey))
    assert np.abs(mom_u).max() < 1e-5 and np.abs(mom_v).max() < 1e-5
    # MindFlow's test labels (nu = 1): u = -cos x sin y e^{-2t}
    u1, _, p1 = verify.taylor_green_2d(1.0, 0.5, 0.3)
    assert u1 == pytest.approx(-math.cos(1.0) * math.sin(0.5) * math.exp(-0.6))
    assert p1 == pytest.approx(-0.25 * (math.cos(2.0) + math.cos(1.0)) * math.exp(-1.2))


def test_relative_l2():
    ref = np.array([[3.0, 0.0], [4.0, 1.0]])
    pred = ref + np.array([[0.0, 0.0], [0.0, 0.5]])
    assert verify.relative_l2(pred, ref) == pytest.approx(0.5 / math.sqrt(26))
    np.testing.assert_allclose(verify.relative_l2(pred, ref, axis=0), [0.0, 0.5])
    with pytest.raises(ValueError, match="shape"):
        verify.relative_l2(pred, ref[:1])
    with pytest.raises(ValueError, match="zero"):
        verify.relative_l2(pred, np.zeros_like(ref))


def test_darcy_satisfies_mixed_darcy():
    rng = np.random.default_rng(2)
    x, y = rng.uniform(0, 1, 40), rng.uniform(0, 1, 40)
    h = 1e-5

    def d(i, dx, dy):
        return (verify.darcy_2d(x + dx, y + dy)[i] - verify.darcy_2d(x - dx, y - dy)[i]) / (2 * h)

    u, v, _ = verify.darcy_2d(x, y)
    np.testing.assert_allclose(d(0, h, 0) + d(1, 0, h), verify.darcy_source(x, y), atol=1e-5)
    np.testing.assert_allclose(u + d(2, h, 0), 0.0, atol=1e-8)
    np.testing.assert_allclose(v + d(2, 0, h), 0.0, atol=1e-8)
    # MindFlow's Dirichlet data for p
    assert verify.darcy_2d(0.125, 0.1)[2] == pytest.approx(
        math.sin(math.pi / 4) * math.cos(0.2 * math.pi)
    )
