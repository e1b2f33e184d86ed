"""Riemann solvers, physical flux, positivity limiter and the exact Riemann solver."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.mindflow.cfd.exact_riemann import exact_riemann, star_state
from diffsci.mindflow.cfd.space_solver.flux import physical_flux
from diffsci.mindflow.cfd.space_solver.positivity import limit_flux_positivity, limit_positivity
from diffsci.mindflow.cfd.space_solver.riemann_computer import Roe, define_riemann_computer

NAMES = ["Rusanov", "HLL", "HLLC", "Roe"]
GAMMA = 1.4


class Gas:
    """Stand-in for helper-1's IdealGas: the solvers read only ``gamma``."""

    gamma = GAMMA


def con_np(pri, gamma=GAMMA):
    rho, u, v, w, p = pri
    return np.stack(
        [rho, rho * u, rho * v, rho * w, p / (gamma - 1) + 0.5 * rho * (u * u + v * v + w * w)]
    )


def tensor(a, dtype=core.float64):
    return core.tensor(np.asarray(a, dtype=np.float64), dtype=dtype)


def flux(name, ul, ur, axis, dtype=core.float64):
    solver = define_riemann_computer(name)(Gas())
    return solver.compute_riemann_flux(tensor(ul, dtype), tensor(ur, dtype), axis).asnumpy()


def random_pri(rng, n):
    return np.stack(
        [
            rng.uniform(0.05, 5, n),
            rng.normal(0, 2, n),
            rng.normal(0, 2, n),
            rng.normal(0, 2, n),
            rng.uniform(0.05, 5, n),
        ]
    )


def test_registry_names_and_unknown():
    assert {define_riemann_computer(n).__name__ for n in NAMES} == set(NAMES)
    with pytest.raises(ValueError, match=r"'Godunov'.*HLL, HLLC, Roe, Rusanov"):
        define_riemann_computer("Godunov")


state = st.tuples(
    st.floats(0.01, 10), st.floats(-5, 5), st.floats(-5, 5), st.floats(-5, 5), st.floats(0.01, 10)
)


@settings(max_examples=40, deadline=None)
@given(pri=state, axis=st.integers(0, 2))
def test_consistency_with_physical_flux(pri, axis):
    u = con_np(np.array(pri, dtype=np.float64)[:, None])
    exact = physical_flux(tensor(u), axis, Gas()).asnumpy()
    for name in NAMES:
        np.testing.assert_allclose(
            flux(name, u, u, axis), exact, rtol=1e-12, atol=1e-12, err_msg=name
        )


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_mirror_symmetry(name, axis):
    """Reflecting x_axis -> -x_axis swaps the sides and negates the normal flux components."""
    rng = np.random.default_rng(axis)
    pl, pr = random_pri(rng, 64), random_pri(rng, 64)
    mirror = np.ones((5, 1))
    mirror[axis + 1] = -1.0
    f = flux(name, con_np(pl), con_np(pr), axis)
    f_m = flux(name, con_np(pr * mirror), con_np(pl * mirror), axis)
    # mass, tangential momenta and energy fluxes flip sign; the normal momentum flux does not
    np.testing.assert_allclose(f_m, -mirror * f, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", NAMES)
def test_float32_runs(name):
    rng = np.random.default_rng(1)
    ul, ur = con_np(random_pri(rng, 16)), con_np(random_pri(rng, 16))
    f32 = flux(name, ul, ur, 0, core.float32)
    assert f32.dtype == np.float32
    np.testing.assert_allclose(f32, flux(name, ul, ur, 0), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_hllc_stationary_contact_exact(axis):
    pl = np.array([1.0, 0, 0.3, -0.2, 1.0])[:, None]
    pr = np.array([0.125, 0, -1.0, 0.5, 1.0])[:, None]
    pl[axis + 1] = pr[axis + 1] = 0.0
    f = flux("HLLC", con_np(pl), con_np(pr), axis)
    expected = np.zeros((5, 1))
    expected[axis + 1] = 1.0  # pressure only
    np.testing.assert_allclose(f, expected, atol=1e-14)
    # HLL and Rusanov smear it (nonzero mass flux): the contact is what HLLC adds
    assert abs(flux("HLL", con_np(pl), con_np(pr), axis)[0, 0]) > 1e-2


def test_hllc_moving_contact_exact():
    """A contact moving at u: the flux is the upwind (left) state's physical flux."""
    pl = np.array([1.0, 0.4, 0.1, 0.0, 1.0])[:, None]
    pr = np.array([0.2, 0.4, 0.1, 0.0, 1.0])[:, None]
    f = flux("HLLC", con_np(pl), con_np(pr), 0)
    np.testing.assert_allclose(f, physical_flux(tensor(con_np(pl)), 0, Gas()).asnumpy(), atol=1e-14)


def first_order_run(solver, pl, pr, n, t_end, cfl=0.5):
    """A first-order Godunov-type run on [0, 1] with transmissive ends (numpy loop over core flux)."""
    x = (np.arange(n) + 0.5) / n
    dx = 1.0 / n
    pri = np.where(x < 0.5, np.array(pl)[:, None], np.array(pr)[:, None])
    pri = np.stack([pri[0], pri[1], 0 * x, 0 * x, pri[2]])
    u = con_np(pri)
    t = 0.0
    while t < t_end:
        rho, vel = u[0], u[1] / u[0]
        p = (GAMMA - 1) * (u[4] - 0.5 * rho * vel**2)
        dt = min(cfl * dx / np.max(np.abs(vel) + np.sqrt(GAMMA * p / rho)), t_end - t)
        padded = np.concatenate([u[:, :1], u, u[:, -1:]], axis=1)
        f = solver.compute_riemann_flux(tensor(padded[:, :-1]), tensor(padded[:, 1:]), 0).asnumpy()
        u = u - dt / dx * (f[:, 1:] - f[:, :-1])
        t += dt
    return x, u


def test_roe_entropy_fix_no_expansion_shock():
    """Toro's sonic rarefaction (Toro ch. 11, test 1: u_L = 0.75): plain Roe keeps a jump at the
    sonic point, the entropy-fixed flux does not."""
    pl, pr, t_end, n = (1.0, 0.75, 1.0), (0.125, 0.0, 0.1), 0.2, 100
    x_fix, u_fix = first_order_run(Roe(Gas()), pl, pr, n, t_end)
    _, u_raw = first_order_run(Roe(Gas(), entropy_fix=False), pl, pr, n, t_end)
    rho_exact = exact_riemann((pl[0], pl[1], pl[2]), pr, GAMMA, x_fix, t_end, 0.5)[0]
    # the sonic point sits inside the left fan near x = 0.5; compare jumps around it
    window = (x_fix > 0.35) & (x_fix < 0.6)
    jump_fix = np.max(np.abs(np.diff(u_fix[0][window])))
    jump_raw = np.max(np.abs(np.diff(u_raw[0][window])))
    jump_exact = np.max(np.abs(np.diff(rho_exact[window])))
    assert jump_raw > 3 * jump_exact  # the expansion shock
    assert jump_fix < 1.5 * jump_exact
    assert np.sum(np.abs(u_fix[0] - rho_exact)) / n < np.sum(np.abs(u_raw[0] - rho_exact)) / n


def test_hllc_gradient_matches_central_differences():
    rng = np.random.default_rng(3)
    ul, ur = con_np(random_pri(rng, 6)), con_np(random_pri(rng, 6))
    solver = define_riemann_computer("HLLC")(Gas())
    weights = rng.normal(size=(5, 6))
    tr = tensor(ur)

    def loss(left):
        return (solver.compute_riemann_flux(left, tr, 0) * tensor(weights)).sum()

    grad = core.grad(loss)(tensor(ul)).asnumpy()
    h = 1e-6
    fd = np.zeros_like(ul)
    for idx in np.ndindex(*ul.shape):
        up, dn = ul.copy(), ul.copy()
        up[idx] += h
        dn[idx] -= h
        fd[idx] = (loss(tensor(up)).asnumpy() - loss(tensor(dn)).asnumpy()) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", NAMES)
def test_jit_matches_eager(name):
    rng = np.random.default_rng(4)
    ul, ur = tensor(con_np(random_pri(rng, 8))), tensor(con_np(random_pri(rng, 8)))
    solver = define_riemann_computer(name)(Gas())
    jitted = core.jit(lambda a, b: solver.compute_riemann_flux(a, b, 1))
    np.testing.assert_allclose(
        jitted(ul, ur).asnumpy(), solver.compute_riemann_flux(ul, ur, 1).asnumpy(), rtol=1e-13
    )


# ---- positivity limiter ------------------------------------------------------------------------


def test_positivity_limiter_adversarial():
    rng = np.random.default_rng(5)
    n, pad = 40, 2
    cells = con_np(random_pri(rng, n + 2 * pad) * np.array([[1e-3], [1], [1], [1], [1e-4]]))
    # adversarial faces: negative densities, energies far below the kinetic energy
    left = cells[:, pad - 1 : pad + n] + rng.normal(0, 1, (5, n + 1))
    right = cells[:, pad : pad + n + 1] + rng.normal(0, 1, (5, n + 1))
    eps = 1e-13
    lim_l, lim_r = limit_positivity(tensor(cells), tensor(left), tensor(right), 0, Gas(), eps)
    for face in (lim_l.asnumpy(), lim_r.asnumpy()):
        rho = face[0]
        p = (GAMMA - 1) * (face[4] - 0.5 * (face[1] ** 2 + face[2] ** 2 + face[3] ** 2) / rho)
        assert np.all(rho >= eps * (1 - 1e-6)) and np.all(p >= eps * (1 - 1e-6) - 1e-15)
    # the input really was adversarial
    assert np.any(left[0] < 0) and np.any(right[0] < 0)


def test_positivity_limiter_identity_on_admissible_faces():
    rng = np.random.default_rng(6)
    n, pad = 16, 3
    cells = con_np(random_pri(rng, n + 2 * pad)[:, :, None, None] * np.ones((1, 1, 4, 1)))
    left = cells[:, pad - 1 : pad + n, :, :] * 1.01
    right = cells[:, pad : pad + n + 1, :, :] * 0.99
    lim_l, lim_r = limit_positivity(tensor(cells), tensor(left), tensor(right), 0, Gas())
    np.testing.assert_array_equal(lim_l.asnumpy(), left)
    np.testing.assert_array_equal(lim_r.asnumpy(), right)


def test_positivity_limiter_other_axis_and_padding():
    """Axis 1 with the cell state padded on both active axes: faces are cropped to the interior."""
    rng = np.random.default_rng(7)
    nx, ny, pad = 5, 6, 2
    pri = random_pri(rng, (nx + 2 * pad) * (ny + 2 * pad)).reshape(5, nx + 2 * pad, ny + 2 * pad, 1)
    cells = con_np(pri)
    inner = cells[:, pad:-pad]
    left = inner[:, :, pad - 1 : pad + ny].copy()
    left[0] = -1.0
    right = inner[:, :, pad : pad + ny + 1].copy()
    lim_l, lim_r = limit_positivity(tensor(cells), tensor(left), tensor(right), 1, Gas(), 1e-8)
    assert lim_l.shape == left.shape and np.all(lim_l.asnumpy()[0] >= 1e-8 * (1 - 1e-9))
    np.testing.assert_array_equal(lim_r.asnumpy(), right)
    with pytest.raises(ValueError, match="ghost cells"):
        limit_positivity(tensor(inner[:, :, pad:-pad]), tensor(left), tensor(right), 1, Gas())


def _split_halves(cells, flux, pad, axis_len):
    """Hu-Adams-Shu half states U_i - F_{i+1/2} / alpha and U_{i+1} + F_{i+1/2} / alpha."""
    u_l, u_r = cells[:, pad - 1 : pad - 1 + axis_len], cells[:, pad : pad + axis_len]
    alpha = 0.0
    for u in (u_l, u_r):
        rho = u[0]
        p = (GAMMA - 1) * (u[4] - 0.5 * (u[1] ** 2 + u[2] ** 2 + u[3] ** 2) / rho)
        alpha = max(alpha, np.max(np.abs(u[1] / rho) + np.sqrt(GAMMA * p / rho)))
    return u_l - flux / alpha, u_r + flux / alpha


def _rho_p(u):
    return u[0], (GAMMA - 1) * (u[4] - 0.5 * (u[1] ** 2 + u[2] ** 2 + u[3] ** 2) / u[0])


def test_flux_limiter_near_vacuum_adversarial():
    """Near-vacuum cells, garbage (and NaN) high-order fluxes: every split half is admissible."""
    rng = np.random.default_rng(11)
    n, pad = 60, 2
    scale = np.array([[1e-6], [1], [1], [1], [1e-8]])
    cells = con_np(random_pri(rng, n + 2 * pad) * scale)
    high = rng.normal(0, 1, (5, n + 1)) * np.array([[1e-3], [1e-2], [1e-3], [1e-3], [1e-2]])
    high[:, 7] = np.nan
    high[4, 9] = np.inf
    eps = 1e-13
    limited = limit_flux_positivity(tensor(cells), tensor(high), 0, Gas(), eps).asnumpy()
    assert np.isfinite(limited).all()
    tol = 1e-9  # relative round-off of the half states (they are formed from values ~1e-3)
    for half in _split_halves(cells, limited, pad, n + 1):
        rho, p = _rho_p(half)
        assert np.all(rho >= eps - tol * np.abs(half[0]).max())
        assert np.all(p >= eps - tol * np.abs(half[4]).max())
    # the input really was adversarial: the unlimited halves are not admissible
    bad = [np.nanmin(_rho_p(h)[0]) for h in _split_halves(cells, high, pad, n + 1)]
    assert min(bad) < 0


def test_flux_limiter_identity_and_gradient_on_admissible_flux():
    """An admissible high-order flux (HLLC of the cell averages) comes back bit for bit, d = I."""
    rng = np.random.default_rng(12)
    n, pad = 30, 3
    cells = con_np(random_pri(rng, n + 2 * pad)[:, :, None, None] * np.ones((1, 1, 3, 1)))
    solver = define_riemann_computer("HLLC")(Gas())
    ul, ur = tensor(cells[:, pad - 1 : pad + n]), tensor(cells[:, pad : pad + n + 1])
    high = solver.compute_riemann_flux(ul, ur, 0)
    limited = limit_flux_positivity(tensor(cells), high, 0, Gas())
    np.testing.assert_array_equal(limited.asnumpy(), high.asnumpy())
    weights = tensor(rng.normal(size=high.shape))

    def loss(f):
        return (limit_flux_positivity(tensor(cells), f, 0, Gas()) * weights).sum()

    grad = core.grad(loss)(high)
    np.testing.assert_array_equal(grad.asnumpy(), weights.asnumpy())
    jitted = core.jit(lambda f: limit_flux_positivity(tensor(cells), f, 0, Gas()))
    np.testing.assert_array_equal(jitted(high).asnumpy(), high.asnumpy())


def test_flux_limiter_other_axis_and_padding():
    """Axis 2 with the cell state padded on x and z: faces cropped, the z halves admissible."""
    rng = np.random.default_rng(13)
    nx, nz, pad = 3, 8, 2
    pri = random_pri(rng, (nx + 2 * pad) * (nz + 2 * pad)).reshape(5, nx + 2 * pad, 1, nz + 2 * pad)
    cells = con_np(pri)
    high = rng.normal(0, 50, (5, nx, 1, nz + 1))
    eps = 1e-8
    limited = limit_flux_positivity(tensor(cells), tensor(high), 2, Gas(), eps).asnumpy()
    assert limited.shape == high.shape and np.any(limited != high)
    # z to tensor axis 1 and the normal momentum to component 1, for the 1D checker
    perm = [0, 3, 2, 1, 4]

    def along_z(a):
        return np.moveaxis(a[perm], 3, 1)

    inner = along_z(cells[:, pad:-pad])
    for half in _split_halves(inner, along_z(limited), pad, nz + 1):
        rho, p = _rho_p(half)
        assert np.all(rho >= eps * (1 - 1e-6)) and np.all(p >= eps * (1 - 1e-6))
    with pytest.raises(ValueError, match="ghost cells"):
        limit_flux_positivity(tensor(cells[..., pad:-pad]), tensor(high), 2, Gas())


# ---- exact Riemann solver ----------------------------------------------------------------------

TORO_4_3 = [  # Toro table 4.3: left, right, p*, u*
    ((1.0, 0.0, 1.0), (0.125, 0.0, 0.1), 0.30313, 0.92745),
    ((1.0, -2.0, 0.4), (1.0, 2.0, 0.4), 0.00189, 0.00000),
    ((1.0, 0.0, 1000.0), (1.0, 0.0, 0.01), 460.894, 19.5975),
    ((1.0, 0.0, 0.01), (1.0, 0.0, 100.0), 46.0950, -6.19633),
    ((5.99924, 19.5975, 460.894), (5.99242, -6.19633, 46.0950), 1691.64, 8.68975),
]


@pytest.mark.parametrize(("left", "right", "p_star", "u_star"), TORO_4_3)
def test_exact_star_states_toro_table_4_3(left, right, p_star, u_star):
    p, u = star_state(left, right, GAMMA)
    assert p == pytest.approx(p_star, rel=5e-5, abs=5e-6)
    assert u == pytest.approx(u_star, rel=5e-5, abs=5e-6)


def test_exact_sod_profile():
    x = np.linspace(0, 1, 2001)
    rho, u, p = exact_riemann((1, 0, 1), (0.125, 0, 0.1), GAMMA, x, 0.2, 0.5)
    plateau = (x > 0.7) & (x < 0.8)
    np.testing.assert_allclose(p[plateau], 0.30313, rtol=1e-4)
    np.testing.assert_allclose(u[plateau], 0.92745, rtol=1e-4)
    # Toro table 4.4 (test 1): rho*_L = 0.42632, rho*_R = 0.26557; shock speed 1.75216
    assert rho[(x > 0.6) & (x < 0.65)] == pytest.approx(0.42632, rel=1e-4)
    assert rho[(x > 0.72) & (x < 0.8)] == pytest.approx(0.26557, rel=1e-4)
    shock = x[np.argmax(np.abs(np.diff(rho[x > 0.8]))) + np.sum(x <= 0.8)]
    assert shock == pytest.approx(0.5 + 1.75216 * 0.2, abs=1e-3)
    # t = 0 returns the data
    r0 = exact_riemann((1, 0, 1), (0.125, 0, 0.1), GAMMA, x, 0.0, 0.5)[0]
    assert r0[0] == 1.0 and r0[-1] == 0.125


def test_exact_123_problem_and_vacuum_generation():
    x = np.linspace(0, 1, 1001)
    rho, u, p = exact_riemann((1, -2, 0.4), (1, 2, 0.4), GAMMA, x, 0.15, 0.5)
    np.testing.assert_allclose(rho, rho[::-1], rtol=1e-12)
    np.testing.assert_allclose(u, -u[::-1], atol=1e-12)
    assert p.min() == pytest.approx(0.00189, rel=3e-3) and rho.min() == pytest.approx(
        0.02185, rel=1e-3
    )
    # stronger: 2 (c_L + c_R) / (gamma - 1) <= u_R - u_L generates vacuum in the middle
    rho_v, _, p_v = exact_riemann((1, -4, 0.4), (1, 4, 0.4), GAMMA, x, 0.05, 0.5)
    c = np.sqrt(GAMMA * 0.4)
    vac = np.abs(x - 0.5) < (4 - 2 * c / (GAMMA - 1)) * 0.05 - 1e-9
    assert vac.sum() > 0 and np.all(rho_v[vac] == 0) and np.all(p_v[vac] == 0)
    assert np.all(rho_v >= 0) and np.all(p_v >= 0)
    with pytest.raises(ValueError, match="vacuum"):
        star_state((1, -4, 0.4), (1, 4, 0.4), GAMMA)


def test_exact_left_vacuum_state():
    """Toro sec. 4.6.1 mirrored: vacuum on the left, the gas expands into it as one rarefaction."""
    x = np.linspace(0, 1, 1001)
    right, t = (1.0, 0.0, 1.0), 0.1
    rho, u, p = exact_riemann((0.0, 0.0, 0.0), right, GAMMA, x, t, 0.5)
    c = np.sqrt(GAMMA)
    front = 0.5 + (0 - 2 * c / (GAMMA - 1)) * t  # u_R - 2 c_R / (gamma - 1)
    head = 0.5 + c * t
    assert np.all(rho[x < front - 1e-9] == 0) and np.all(rho[x > head + 1e-9] == 1.0)
    fan = (x > front + 1e-3) & (x < head - 1e-3)
    assert np.all(np.diff(rho[fan]) > 0) and np.all(np.diff(u[fan]) > 0)
    # Riemann invariant u - 2c/(gamma - 1) is constant across the fan (= that of the right state)
    c_fan = np.sqrt(GAMMA * p[fan] / rho[fan])
    np.testing.assert_allclose(u[fan] - 2 * c_fan / (GAMMA - 1), -2 * c / (GAMMA - 1), atol=1e-12)
    # the mirrored problem (right vacuum) is the reflection
    rho_m, u_m, _ = exact_riemann(right, (0.0, 0.0, 0.0), GAMMA, 1 - x, t, 0.5)
    np.testing.assert_allclose(rho_m, rho, atol=1e-12)
    np.testing.assert_allclose(u_m, -u, atol=1e-12)


def test_exact_bad_states():
    with pytest.raises(ValueError, match="left state"):
        exact_riemann((-1, 0, 1), (1, 0, 1), GAMMA, np.zeros(3), 0.1)
