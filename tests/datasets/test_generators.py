"""The PDE data generators against exact solutions and independent formulas (float64)."""

import hashlib

import h5py
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci.datasets.pde import read_card
from diffsci.datasets.pde.generators import (
    AdvectionInitialCondition,
    cole_hopf_solution,
    darcy_matrix,
    etdrk4_coefficients,
    fno_forcing,
    generate_advection,
    generate_burgers,
    generate_darcy,
    generate_navier_stokes,
    neumann_grf,
    periodic_grf,
    sample_initial_condition,
    solve_burgers,
    solve_darcy,
    solve_navier_stokes,
    velocity_from_vorticity,
)

PI = np.pi


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- Gaussian random fields ---------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(
    shape=st.one_of(
        st.tuples(st.integers(2, 40)), st.tuples(st.integers(2, 12), st.integers(2, 12))
    ),
    size=st.integers(1, 3),
    seed=st.integers(0, 2**32 - 1),
    neumann=st.booleans(),
)
def test_grf_shapes_dtype_determinism(shape, size, seed, neumann):
    grf = neumann_grf if neumann else periodic_grf
    kw = dict(scale=2.0, tau=3.0, alpha=2.0, size=size)
    u = grf(np.random.default_rng(seed), shape, **kw)
    assert u.shape == (size, *shape) and u.dtype == np.float64 and np.isfinite(u).all()
    np.testing.assert_array_equal(u, grf(np.random.default_rng(seed), shape, **kw))
    if not neumann:  # the mean mode is dropped: every sample averages to zero over the torus
        np.testing.assert_allclose(u.mean(axis=tuple(range(1, u.ndim))), 0.0, atol=1e-12)


def test_periodic_grf_covariance_matches_the_series():
    # C(x, y) = sum_k scale (4 pi^2 k^2 + tau^2)^-alpha cos(2 pi k (x - y)) over the grid's
    # modes k = -n/2+1 .. n/2, k != 0 (zero mean), summed directly, against samples
    n, scale, tau, alpha = 16, 625.0, 5.0, 2.0
    u = periodic_grf(np.random.default_rng(0), n, scale=scale, tau=tau, alpha=alpha, size=20000)
    k = np.arange(-n // 2 + 1, n // 2 + 1)
    k = k[k != 0]
    lam = scale * (4 * PI**2 * k**2 + tau**2) ** -alpha
    lags = np.arange(n) / n
    exact = (lam[None, :] * np.cos(2 * PI * k[None, :] * lags[:, None])).sum(axis=1)
    # stationary: average u(x) u(x + lag) over x and samples
    emp = np.array([np.mean(u * np.roll(u, -j, axis=1)) for j in range(n)])
    np.testing.assert_allclose(emp, exact, rtol=0, atol=0.03 * exact[0])


def test_periodic_grf_2d_variance_matches_the_series():
    n, scale, tau, alpha = 8, 7.0**1.5, 7.0, 2.5
    u = periodic_grf(
        np.random.default_rng(1), (n, n), scale=scale, tau=tau, alpha=alpha, size=20000
    )
    k = np.arange(-n // 2 + 1, n // 2 + 1)
    kx, ky = np.meshgrid(k, k, indexing="ij")
    lam = scale * (4 * PI**2 * (kx**2 + ky**2) + tau**2) ** -alpha
    lam[(kx == 0) & (ky == 0)] = 0.0
    np.testing.assert_allclose(u.var(axis=0).mean(), lam.sum(), rtol=0.03)


def test_neumann_grf_covariance_matches_the_series():
    # C(x_i, x_j) = sum_{k<n} lambda_k phi_k(x_i) phi_k(x_j), phi_0 = 1, phi_k = sqrt2 cos(pi k x)
    n, scale, tau, alpha = 7, 1.0, 3.0, 2.0
    u = neumann_grf(
        np.random.default_rng(2), n, scale=scale, tau=tau, alpha=alpha, size=40000, zero_mean=False
    )
    x = np.linspace(0, 1, n)
    k = np.arange(n)
    lam = scale * (PI**2 * k**2 + tau**2) ** -alpha
    phi = np.where(k == 0, 1.0, np.sqrt(2) * np.cos(PI * np.outer(x, k)))
    exact = (phi * lam) @ phi.T
    np.testing.assert_allclose(u.T @ u / len(u), exact, rtol=0, atol=0.03 * exact.max())


def test_grf_errors_name_the_argument():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="periodic_grf: shape"):
        periodic_grf(rng, (1,), scale=1.0, tau=1.0, alpha=2.0)
    with pytest.raises(ValueError, match="neumann_grf: need scale > 0"):
        neumann_grf(rng, 8, scale=-1.0, tau=1.0, alpha=2.0)
    with pytest.raises(ValueError, match="tau = 0"):
        periodic_grf(rng, 8, scale=1.0, tau=0.0, alpha=2.0, zero_mean=False)


# --- Burgers --------------------------------------------------------------------------------


def test_etdrk4_coefficients_match_closed_forms_and_limits():
    z = np.array([-0.5, -2.0, -30.0])
    c = etdrk4_coefficients(z)
    ez = np.exp(z)
    np.testing.assert_allclose(c["Q"], (np.exp(z / 2) - 1) / z, rtol=1e-13)
    np.testing.assert_allclose(c["f1"], (-4 - z + ez * (4 - 3 * z + z**2)) / z**3, rtol=1e-12)
    np.testing.assert_allclose(c["f2"], (2 + z + ez * (z - 2)) / z**3, rtol=1e-12)
    np.testing.assert_allclose(c["f3"], (-4 - 3 * z - z**2 + ez * (4 - z)) / z**3, rtol=1e-12)
    # z -> 0, where the closed forms cancel: Q -> 1/2, f1 = f2 = f3 -> 1/6 (Kassam & Trefethen)
    c0 = etdrk4_coefficients(np.array([0.0, -1e-9]))
    np.testing.assert_allclose(c0["Q"], 0.5, rtol=1e-8)
    for f in ("f1", "f2", "f3"):
        np.testing.assert_allclose(c0[f], 1 / 6, rtol=1e-8)


@pytest.mark.parametrize("nu, n, b", [(0.1, 64, 0.8), (0.02, 128, 0.9)])
def test_burgers_matches_cole_hopf(nu, n, b):
    a, modes = 1.0, [(1, b, 0.3), (2, 0.05, 1.0)]
    x = np.arange(n) / n
    times = np.array([0.0, 0.25, 1.0])
    u = solve_burgers(cole_hopf_solution(x, 0.0, nu, a, modes), nu, times, dt=1e-3)
    exact = np.stack([cole_hopf_solution(x, t, nu, a, modes) for t in times])
    assert np.abs(exact).max() > 0.3  # a nonlinear case, not a vanishing one
    assert np.abs(u - exact).max() < 1e-6


def test_burgers_fourth_order_in_time():
    nu, n = 0.1, 64
    a, modes = 1.0, [(1, 0.8, 0.3), (2, 0.15, 1.0)]
    x = np.arange(n) / n
    exact = cole_hopf_solution(x, 1.0, nu, a, modes)
    u0 = cole_hopf_solution(x, 0.0, nu, a, modes)
    err = [np.abs(solve_burgers(u0, nu, [1.0], dt)[-1] - exact).max() for dt in (0.1, 0.05, 0.025)]
    ratios = np.array(err[:-1]) / np.array(err[1:])
    assert np.all(ratios > 12), (err, ratios)  # 2^4 = 16 for a fourth-order scheme


@settings(max_examples=15, deadline=None)
@given(half=st.integers(2, 40), batch=st.integers(1, 3), seed=st.integers(0, 1000))
def test_solve_burgers_shapes_and_conservation(half, batch, seed):
    n = 2 * half
    u0 = np.random.default_rng(seed).standard_normal((batch, n))
    u = solve_burgers(u0, 0.05, [0.0, 0.05, 0.1], dt=0.01)
    assert u.shape == (batch, 3, n)
    np.testing.assert_array_equal(u[:, 0], u0)
    # the mean is conserved: (u^2/2)_x and u_xx have none
    np.testing.assert_allclose(u.mean(axis=2) - u0.mean(axis=1, keepdims=True), 0.0, atol=1e-13)
    assert solve_burgers(u0[0], 0.05, [0.1], dt=0.01).shape == (1, n)


def _burgers_small(**kw):
    args = dict(resolution=64, n_time=3, t_final=0.2, dt=0.01, progress=False)
    return generate_burgers(**(args | kw))


def test_generate_burgers_deterministic_and_conservative(tmp_path):
    d = _burgers_small(n_samples=5, seed=7, batch_size=2)
    u = d["tensor"]
    assert u.shape == (5, 3, 64) and u.dtype == np.float64
    np.testing.assert_array_equal(d["t-coordinate"], [0.0, 0.1, 0.2])
    np.testing.assert_array_equal(d["x-coordinate"], np.arange(64) / 64)
    # sample i depends on (seed, i) only: not on N, nor on the batch size
    np.testing.assert_array_equal(
        _burgers_small(n_samples=3, seed=7, batch_size=3)["tensor"], u[:3]
    )
    assert not np.array_equal(_burgers_small(n_samples=1, seed=8)["tensor"], u[:1])
    # the mean is conserved (zero: FNO's fields have no mean mode), the energy decays
    np.testing.assert_allclose(u.mean(axis=2), 0.0, atol=1e-13)
    energy = (u**2).mean(axis=2)
    assert np.all(np.diff(energy, axis=1) < 0)
    # the stored first frame is the GRF initial condition itself
    u0 = periodic_grf(
        np.random.default_rng(np.random.SeedSequence(7).spawn(5)[2]),
        64,
        scale=625.0,
        tau=5.0,
        alpha=2.0,
    )[0]
    np.testing.assert_array_equal(u[2, 0], u0)


def test_generate_burgers_subsample_is_the_fine_solution():
    fine = _burgers_small(n_samples=2, seed=1, resolution=128)
    coarse = _burgers_small(n_samples=2, seed=1, resolution=128, subsample=4)
    np.testing.assert_array_equal(coarse["tensor"], fine["tensor"][..., ::4])
    np.testing.assert_array_equal(coarse["x-coordinate"], fine["x-coordinate"][::4])


def test_generate_burgers_writes_the_same_file_for_the_same_seed(tmp_path, capsys):
    p1, p2 = tmp_path / "a.h5", tmp_path / "b.hdf5"
    d = _burgers_small(n_samples=3, seed=4, path=p1, progress=True)
    assert "burgers" in capsys.readouterr().err  # the tqdm bar
    _burgers_small(n_samples=3, seed=4, path=p2)
    assert _sha(p1) == _sha(p2)
    with h5py.File(p1) as f:
        for name, arr in d.items():
            np.testing.assert_array_equal(f[name][...], arr)
    card = read_card(p1)
    assert card["pde"] == "burgers1d" and card["seed"] == 4
    assert card["parameters"]["nu"] == 0.1 and card["grid"]["nx"] == 64
    assert card["generator"] == "datasets.pde.generators.generate_burgers"
    with pytest.raises(FileExistsError):
        _burgers_small(n_samples=3, seed=5, path=p1)
    assert _sha(p1) == _sha(p2)  # untouched by the refused write
    _burgers_small(n_samples=3, seed=4, path=p1, dtype=np.float32, overwrite=True)
    with h5py.File(p1) as f:
        assert f["tensor"].dtype == np.float32


def test_generate_burgers_bad_arguments():
    with pytest.raises(ValueError, match="resolution must be even and divisible by subsample"):
        _burgers_small(n_samples=1, resolution=64, subsample=3)
    with pytest.raises(ValueError, match="n_samples must be an integer >= 1"):
        _burgers_small(n_samples=0)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        _burgers_small(n_samples=1, seed=-1)
    with pytest.raises(FloatingPointError, match=r"sample\(s\) \[0\] blew up with dt=1\.0"):
        _burgers_small(n_samples=1, nu=1e-3, dt=1.0, scale=1e8, t_final=4.0)


# --- Darcy ----------------------------------------------------------------------------------


def _manufactured(n):
    # u = sin(pi x) sin(pi y) e^x (zero on the boundary), a = 2 + sin(2 pi x + 1) cos(pi y),
    # f = -div(a grad u) = -(a Lap u + a_x u_x + a_y u_y), all by hand
    x = np.linspace(0, 1, n)
    X, Y = np.meshgrid(x, x, indexing="ij")
    sx, cx, sy, cy, ex = np.sin(PI * X), np.cos(PI * X), np.sin(PI * Y), np.cos(PI * Y), np.exp(X)
    u = sx * sy * ex
    ux = (PI * cx + sx) * sy * ex
    uy = PI * sx * cy * ex
    lap = (-(PI**2) * sx + 2 * PI * cx + sx) * sy * ex - PI**2 * u
    a = 2 + np.sin(2 * PI * X + 1) * cy
    ax = 2 * PI * np.cos(2 * PI * X + 1) * cy
    ay = -PI * np.sin(2 * PI * X + 1) * sy
    return a, -(a * lap + ax * ux + ay * uy), u


def test_darcy_second_order_on_a_manufactured_solution():
    err = []
    for n in (17, 33, 65):
        a, f, u = _manufactured(n)
        err.append(np.abs(solve_darcy(a, f) - u).max())
    ratios = np.array(err[:-1]) / np.array(err[1:])
    assert np.all((ratios > 3.7) & (ratios < 4.3)), (err, ratios)


def test_darcy_constant_coefficient_matches_the_poisson_series():
    # -Lap u = 1 on the unit square: u = sum_{m,n odd} 16 sin(m pi x) sin(n pi y)
    #                                     / (pi^4 m n (m^2 + n^2))
    n = 65
    x = np.linspace(0, 1, n)
    m = np.arange(1, 400, 2)
    s = np.sin(PI * np.outer(x, m))  # [n, modes]
    w = 16 / (PI**4 * m[:, None] * m[None, :] * (m[:, None] ** 2 + m[None, :] ** 2))
    exact = s @ w @ s.T
    u = solve_darcy(np.full((n, n), 2.0), 2.0)  # a = 2, f = 2: the same u
    assert abs(exact[n // 2, n // 2] - 0.0736713532) < 1e-8  # the known centre value
    assert np.abs(u - exact).max() < 1e-4


def test_darcy_matrix_is_the_five_point_harmonic_stencil():
    # the matrix written out node by node, with the face coefficients as harmonic means
    rng = np.random.default_rng(0)
    n = 6
    a = rng.uniform(0.5, 20.0, (n, n))
    m, h2 = n - 2, 1.0 / (n - 1) ** 2
    dense = np.zeros((m * m, m * m))
    for i in range(1, n - 1):
        for j in range(1, n - 1):
            row = (i - 1) * m + (j - 1)
            for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                p, q = a[i, j], a[i + di, j + dj]
                face = 2 * p * q / (p + q)
                dense[row, row] += face / h2
                if 1 <= i + di <= n - 2 and 1 <= j + dj <= n - 2:
                    dense[row, (i + di - 1) * m + (j + dj - 1)] = -face / h2
    np.testing.assert_allclose(darcy_matrix(a).toarray(), dense, rtol=1e-14, atol=0)


def test_darcy_thresholded_symmetry_positivity():
    rng = np.random.default_rng(3)
    psi = neumann_grf(rng, (17, 17), scale=1.0, tau=3.0, alpha=2.0)[0]
    a = np.where(psi >= 0, 12.0, 3.0)
    A = darcy_matrix(a)
    assert abs(A - A.T).max() == 0  # harmonic means are symmetric in their two nodes
    assert np.linalg.eigvalsh(A.toarray()).min() > 0  # positive definite
    u = solve_darcy(a)
    assert np.all(u[1:-1, 1:-1] > 0)  # f = 1 > 0: the maximum principle
    assert np.all(u[[0, -1], :] == 0) and np.all(u[:, [0, -1]] == 0)
    np.testing.assert_allclose(solve_darcy(a.T), u.T, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(solve_darcy(a[::-1]), u[::-1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(solve_darcy(4 * a), u / 4, rtol=1e-12, atol=1e-15)
    # bounded by the solutions with the coefficient everywhere at its extremes
    lo, hi = solve_darcy(np.full_like(a, 12.0)), solve_darcy(np.full_like(a, 3.0))
    assert np.all(u >= lo - 1e-15) and np.all(u <= hi + 1e-15)


def test_generate_darcy(tmp_path):
    p = tmp_path / "darcy.h5"
    d = generate_darcy(3, resolution=33, subsample=2, seed=5, path=p, progress=False)
    assert d["tensor"].shape == (3, 1, 17, 17) and d["nu"].shape == (3, 17, 17)
    assert set(np.unique(d["nu"])) == {3.0, 12.0}
    np.testing.assert_array_equal(d["x-coordinate"], np.linspace(0, 1, 33)[::2])
    full = generate_darcy(3, resolution=33, seed=5, progress=False)
    np.testing.assert_array_equal(d["tensor"], full["tensor"][:, :, ::2, ::2])
    np.testing.assert_allclose(full["tensor"][1, 0], solve_darcy(full["nu"][1]), rtol=0, atol=0)
    with h5py.File(p) as f:
        np.testing.assert_array_equal(f["nu"][...], d["nu"])
        np.testing.assert_array_equal(f["tensor"][...], d["tensor"])
    assert read_card(p)["pde"] == "darcy2d"
    with pytest.raises(ValueError, match="subsample must divide resolution - 1"):
        generate_darcy(1, resolution=32, subsample=2, progress=False)
    with pytest.raises(ValueError, match="a must be finite and > 0"):
        solve_darcy(np.zeros((5, 5)))


# --- Navier-Stokes --------------------------------------------------------------------------


def _grid(n):
    x = np.arange(n) / n
    return np.meshgrid(x, x, indexing="ij")


@pytest.mark.parametrize(
    "case", ["taylor_green", "shell25"], ids=["taylor-green", "|k|^2=25 shell"]
)
def test_navier_stokes_eigenmode_decay(case):
    # a vorticity in one eigenspace of the Laplacian has psi parallel to w, so u.grad w = 0
    # exactly and w(t) = w0 exp(-nu lambda t) (Taylor & Green 1937)
    X, Y = _grid(32)
    if case == "taylor_green":
        w0, lam, nu, dt = np.sin(2 * PI * X) * np.sin(2 * PI * Y), 8 * PI**2, 1e-3, 1e-2
    else:
        w0 = (
            3 * np.cos(2 * PI * (3 * X + 4 * Y))
            + 0.7 * np.sin(2 * PI * 5 * Y)
            + 1.3 * np.cos(2 * PI * (4 * X - 3 * Y) + 0.4)
        )
        lam, nu, dt = 4 * PI**2 * 25, 1e-4, 5e-3
    w = solve_navier_stokes(w0, nu, [0.0, 0.5, 1.0], dt)
    exact = w0[None] * np.exp(-nu * lam * np.array([0.0, 0.5, 1.0]))[:, None, None]
    assert np.abs(w - exact).max() / np.abs(w0).max() < 1e-8


def test_navier_stokes_fno_forcing_steady_state():
    # f is in the |k|^2 = 2 eigenspace: w* = f / (nu 8 pi^2) is an exact steady state
    n, nu = 32, 1e-3
    f = fno_forcing(n)
    w_star = f / (nu * 8 * PI**2)
    w = solve_navier_stokes(w_star, nu, [1.0], 1e-2, forcing=f)[-1]
    assert np.abs(w - w_star).max() / np.abs(w_star).max() < 1e-12


def test_navier_stokes_forced_run_mean_zero_and_second_order():
    n, nu = 32, 1e-3
    w0 = 20 * periodic_grf(np.random.default_rng(4), (n, n), scale=7.0**1.5, tau=7.0, alpha=2.5)
    f = fno_forcing(n)
    ws = [solve_navier_stokes(w0[0], nu, [0.5, 1.0], dt, forcing=f) for dt in (0.02, 0.01, 0.005)]
    for w in ws:
        np.testing.assert_allclose(w.mean(axis=(1, 2)), 0.0, atol=1e-14)
    d1 = np.abs(ws[0][-1] - ws[1][-1]).max()
    d2 = np.abs(ws[1][-1] - ws[2][-1]).max()
    assert 3.5 < d1 / d2 < 4.5, (d1, d2)  # Heun + Crank-Nicolson: second order
    assert np.abs(ws[2][-1] - w0[0]).max() > 100 * d2  # the flow did move


def test_navier_stokes_advection_term():
    # w = sin(2 pi x) + cos(4 pi y): psi = sin(2 pi x)/(4 pi^2) + cos(4 pi y)/(16 pi^2), so
    # u = psi_y = -sin(4 pi y)/(4 pi), v = -psi_x = -cos(2 pi x)/(2 pi) and
    # u.grad w = 1.5 cos(2 pi x) sin(4 pi y); dw/dt = -u.grad w + nu Lap w at t = 0
    X, Y = _grid(16)
    nu, dt = 1e-2, 1e-7
    w0 = np.sin(2 * PI * X) + np.cos(4 * PI * Y)
    rate = -1.5 * np.cos(2 * PI * X) * np.sin(4 * PI * Y) - nu * 4 * PI**2 * (
        np.sin(2 * PI * X) + 4 * np.cos(4 * PI * Y)
    )
    w = solve_navier_stokes(w0, nu, [dt], dt)[-1]
    np.testing.assert_allclose((w - w0) / dt, rate, rtol=0, atol=1e-5 * np.abs(rate).max())


def test_two_thirds_rule_drops_modes_from_the_products():
    # modes |k| >= n/3 take no part in the nonlinear terms (Orszag's 2/3 rule): fields made of
    # such modes only evolve by diffusion alone, mode by mode (without the rule they would mix)
    n, nu, t = 12, 1e-2, 0.3
    x = np.arange(n) / n
    u0 = np.cos(2 * PI * 4 * x) + 0.5 * np.sin(2 * PI * 5 * x)
    exact = np.cos(2 * PI * 4 * x) * np.exp(-nu * (8 * PI) ** 2 * t) + 0.5 * np.sin(
        2 * PI * 5 * x
    ) * np.exp(-nu * (10 * PI) ** 2 * t)
    np.testing.assert_allclose(solve_burgers(u0, nu, [t], 0.01)[-1], exact, atol=1e-13)
    X, Y = _grid(n)
    w0 = np.cos(2 * PI * 5 * X) + np.sin(2 * PI * 4 * Y)
    exact = np.cos(2 * PI * 5 * X) * np.exp(-nu * 4 * PI**2 * 25 * t) + np.sin(
        2 * PI * 4 * Y
    ) * np.exp(-nu * 4 * PI**2 * 16 * t)
    w = solve_navier_stokes(w0, nu, [t], 1e-4)[-1]  # Crank-Nicolson: O(dt^2) off exact decay
    np.testing.assert_allclose(w, exact, atol=1e-6)


def test_velocity_from_vorticity_taylor_green():
    X, Y = _grid(16)
    w = np.sin(2 * PI * X) * np.sin(2 * PI * Y)
    u, v = velocity_from_vorticity(w)
    # psi = w / (8 pi^2): u = psi_y, v = -psi_x
    np.testing.assert_allclose(u, np.sin(2 * PI * X) * np.cos(2 * PI * Y) / (4 * PI), atol=1e-15)
    np.testing.assert_allclose(v, -np.cos(2 * PI * X) * np.sin(2 * PI * Y) / (4 * PI), atol=1e-15)


def test_generate_navier_stokes(tmp_path):
    p = tmp_path / "ns.h5"
    kw = dict(resolution=16, subsample=2, t_final=0.5, n_time=3, dt=0.05, progress=False)
    d = generate_navier_stokes(3, seed=2, path=p, batch_size=2, **kw)
    assert d["tensor"].shape == (3, 3, 8, 8)
    np.testing.assert_array_equal(
        generate_navier_stokes(2, seed=2, **kw)["tensor"], d["tensor"][:2]
    )
    full = generate_navier_stokes(1, seed=2, **(kw | {"subsample": 1}))["tensor"]
    np.testing.assert_array_equal(full[..., ::2, ::2], d["tensor"][:1])
    np.testing.assert_allclose(full.mean(axis=(2, 3)), 0.0, atol=1e-15)
    with h5py.File(p) as f:
        np.testing.assert_array_equal(f["tensor"][...], d["tensor"])
        np.testing.assert_array_equal(f["y-coordinate"][...], np.arange(0, 16, 2) / 16)
    assert read_card(p)["parameters"]["nu"] == 1e-3
    with pytest.raises(ValueError, match="forcing must be 'fno' or 'none'"):
        generate_navier_stokes(1, forcing="kolmogorov", **kw)


# --- advection ------------------------------------------------------------------------------


def test_advection_is_the_shifted_initial_condition():
    # beta dt_save = one cell: frame j is frame 0 rolled by j cells
    nx = 64
    d = generate_advection(40, beta=0.5, nx=nx, t_final=1.0, dt_save=1 / 32, seed=0, progress=False)
    u = d["tensor"]
    assert u.shape == (40, 33, 64)
    for j in (1, 5, 32):
        np.testing.assert_allclose(u[:, j], np.roll(u[:, 0], j, axis=1), rtol=0, atol=1e-12)
    # t = 2 = 1 / beta: one full period
    d2 = generate_advection(40, beta=0.5, nx=nx, t_final=2.0, dt_save=1.0, seed=0, progress=False)
    np.testing.assert_allclose(d2["tensor"][:, -1], d2["tensor"][:, 0], rtol=0, atol=1e-12)


def test_advection_matches_the_fourier_shift():
    # a sum of sines shifts exactly in Fourier space: u_k(t) = u_k(0) exp(-2 pi i k beta t)
    ic = AdvectionInitialCondition(
        np.array([3.0, 7.0]), np.array([0.6, 0.3]), np.array([1.0, 2.0]), False, -1.0, None
    )
    nx, beta, t = 128, 0.37, 1.3
    x = (np.arange(nx) + 0.5) / nx
    k = np.fft.rfftfreq(nx, 1 / nx)
    shifted = np.fft.irfft(np.fft.rfft(ic(x)) * np.exp(-2j * PI * k * beta * t), n=nx)
    np.testing.assert_allclose(ic(x - beta * t), shifted, rtol=0, atol=1e-13)


def test_advection_upwind_converges_first_order():
    # first-order upwind finite volumes (CFL 0.5) converge to the exact values at rate 1
    ic = AdvectionInitialCondition(
        np.array([1.0, 2.0]), np.array([0.8, 0.4]), np.array([0.1, 2.0]), False, 1.0, None
    )
    beta, t = 1.0, 0.5
    errs = []
    for nx in (128, 256, 512):
        x = (np.arange(nx) + 0.5) / nx
        u, dt = ic(x), 0.5 / nx / beta
        for _ in range(round(t / dt)):
            u = u - beta * dt * nx * (u - np.roll(u, 1))
        errs.append(np.abs(u - ic(x - beta * t)).max())
    ratios = np.array(errs[:-1]) / np.array(errs[1:])
    assert np.all((ratios > 1.8) & (ratios < 2.2)), (errs, ratios)


def test_advection_initial_condition_family():
    rng = np.random.default_rng(0)
    ics = [sample_initial_condition(rng) for _ in range(3000)]
    ks = np.concatenate([ic.wavenumbers for ic in ics])
    assert ks.min() == 1 and ks.max() == 8
    assert 0.08 < np.mean([ic.absolute for ic in ics]) < 0.12
    assert 0.08 < np.mean([ic.window is not None for ic in ics]) < 0.12
    assert 0.47 < np.mean([ic.sign > 0 for ic in ics]) < 0.53
    win = next(ic for ic in ics if ic.window is not None)
    xl, xr = win.window
    assert 0.1 <= xl <= 0.45 and 0.55 <= xr <= 0.9
    x = np.array([0.02, 0.98])  # outside the window: the profile vanishes there
    assert np.abs(win(x)).max() < 1e-3


def test_generate_advection_file_and_errors(tmp_path):
    p = tmp_path / "adv.hdf5"
    d = generate_advection(4, beta=0.1, nx=32, t_final=0.05, seed=9, path=p, progress=False)
    np.testing.assert_allclose(d["t-coordinate"], [0, 0.01, 0.02, 0.03, 0.04, 0.05], atol=1e-15)
    np.testing.assert_array_equal(d["x-coordinate"], (np.arange(32) + 0.5) / 32)
    with h5py.File(p) as f:
        np.testing.assert_array_equal(f["tensor"][...], d["tensor"])
    assert read_card(p)["parameters"]["beta"] == 0.1
    with pytest.raises(ValueError, match="must be a multiple of dt_save"):
        generate_advection(1, t_final=0.055, progress=False)
