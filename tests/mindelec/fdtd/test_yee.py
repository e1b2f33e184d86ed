"""Yee updates: cavity resonances against the discrete dispersion relation, energy
conservation, gradients against central differences, jit against eager, bad input."""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from diffsci import core
from diffsci.mindelec import fdtd
from diffsci.mindelec.fdtd.monitors import Monitor
from diffsci.mindelec.fdtd.waveforms import Gaussian, ResolutionWarning


class ModeProjection(Monitor):
    """``sum(component * pattern)``: the amplitude of one cavity mode (discrete orthogonality)."""

    def __init__(self, component, pattern, name):
        self.component = component
        self.pattern = core.tensor(pattern, dtype=core.float64)
        self.name = name

    def record(self, state, step):
        return (state.get(self.component) * self.pattern).sum()


def fitted_omega(y, dt):
    """Angular frequency of ``y_n = A cos(w n dt) + B sin(w n dt) + C`` by least squares.

    The guess is the peak of a 16x zero-padded FFT; the refinement minimizes the residual of
    the linear fit over ``w`` (a Harminv-style single-mode fit).
    """
    t = np.arange(len(y)) * dt
    pad = 16 * len(y)
    spectrum = np.abs(np.fft.rfft(y - y.mean(), pad))
    guess = 2 * np.pi * np.fft.rfftfreq(pad, dt)[np.argmax(spectrum)]
    step = 2 * np.pi / (pad * dt)

    def residual(w):
        basis = np.stack([np.cos(w * t), np.sin(w * t), np.ones_like(t)], axis=1)
        coef, *_ = np.linalg.lstsq(basis, y, rcond=None)
        return np.sum((basis @ coef - y) ** 2)

    res = minimize_scalar(
        residual,
        bounds=(guess - step, guess + step),
        method="bounded",
        options={"xatol": guess * 1e-13},
    )
    return res.x


def discrete_omega(grid, k):
    """Yee dispersion: sin(w dt / 2) / (c dt) = sqrt(sum_i (sin(k_i d_i / 2) / d_i)^2)."""
    rhs = np.sqrt(sum((np.sin(ki * d / 2) / d) ** 2 for ki, d in zip(k, grid.spacing)))
    return 2 / grid.dt * np.arcsin(fdtd.C0 * grid.dt * rhs)


def test_tmz_cavity_resonance_matches_discrete_dispersion():
    # 12 x 9 PEC cavity, non-square cells; random initial Ez excites every mode, and the
    # projection on mode (2, 1) sin(2 pi x / Lx) sin(pi y / Ly) isolates it exactly
    nx, ny, dx, dy = 12, 9, 1.0e-3, 1.3e-3
    grid = fdtd.Grid((nx, ny), (dx, dy), courant=0.6, dtype="float64")
    i, j = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
    results = {}
    for m, n in ((2, 1), (1, 3)):
        pattern = np.sin(m * np.pi * i / nx) * np.sin(n * np.pi * j / ny)
        results[(m, n)] = pattern
    sim = fdtd.Simulation(
        grid, monitors=[ModeProjection("ez", p, f"mode{mn}") for mn, p in results.items()]
    )
    w_low = discrete_omega(grid, (np.pi / (nx * dx), 3 * np.pi / (ny * dy)))
    steps = int(np.ceil(200 * 2 * np.pi / (w_low * grid.dt)))  # >= 200 periods of both modes
    rng = np.random.default_rng(1)
    _, out = sim.run(steps, sim.initial_state(ez=rng.standard_normal((nx, ny))))
    for m, n in results:
        w_th = discrete_omega(grid, (m * np.pi / (nx * dx), n * np.pi / (ny * dy)))
        w = fitted_omega(out[f"mode{(m, n)}"].asnumpy(), grid.dt)
        assert abs(w / w_th - 1) < 1e-6, (m, n, w / w_th - 1)
        # the continuum frequency c |k| is off by far more: the test sees the dispersion
        w_c = fdtd.C0 * np.hypot(m * np.pi / (nx * dx), n * np.pi / (ny * dy))
        assert abs(w_c / w_th - 1) > 1e-4


def test_tez_cavity_resonance():
    # TEz: Hz = cos(m pi x / Lx) cos(n pi y / Ly) at the cell centres (i + 1/2, j + 1/2)
    nx, ny, d = 10, 7, 2e-3
    grid = fdtd.Grid((nx, ny), d, mode="TEz", courant=0.5, dtype="float64")
    i, j = np.meshgrid(np.arange(nx) + 0.5, np.arange(ny) + 0.5, indexing="ij")
    m, n = 1, 2
    pattern = np.cos(m * np.pi * i / nx) * np.cos(n * np.pi * j / ny)
    sim = fdtd.Simulation(grid, monitors=[ModeProjection("hz", pattern, "mode")])
    w_th = discrete_omega(grid, (m * np.pi / (nx * d), n * np.pi / (ny * d)))
    steps = int(np.ceil(200 * 2 * np.pi / (w_th * grid.dt)))
    rng = np.random.default_rng(2)
    state = sim.initial_state(ex=rng.standard_normal((nx, ny)), ey=rng.standard_normal((nx, ny)))
    _, out = sim.run(steps, state)
    w = fitted_omega(out["mode"].asnumpy(), grid.dt)
    assert abs(w / w_th - 1) < 1e-6, w / w_th - 1


def test_3d_box_resonance():
    # Ez at (i, j, k + 1/2) of mode (1, 2, 1): sin(kx x) sin(ky y) cos(kz z); random initial
    # E and H also excite static (gradient) fields, which the fit's constant absorbs
    shape, spacing = (6, 5, 4), (1e-3, 1.2e-3, 0.9e-3)
    grid = fdtd.Grid(shape, spacing, courant=0.5, dtype="float64")
    mnp = (1, 2, 1)
    k = [q * np.pi / (n * d) for q, n, d in zip(mnp, shape, spacing)]
    x, y, z = np.meshgrid(*(np.arange(n) for n in shape), indexing="ij")
    pattern = (
        np.sin(k[0] * x * spacing[0])
        * np.sin(k[1] * y * spacing[1])
        * np.cos(k[2] * (z + 0.5) * spacing[2])
    )
    sim = fdtd.Simulation(grid, monitors=[ModeProjection("ez", pattern, "mode")])
    w_th = discrete_omega(grid, k)
    steps = int(np.ceil(200 * 2 * np.pi / (w_th * grid.dt)))
    rng = np.random.default_rng(3)
    fields = {c: rng.standard_normal(shape) for c in ("ex", "ey", "ez")}
    _, out = sim.run(steps, sim.initial_state(**fields))
    w = fitted_omega(out["mode"].asnumpy(), grid.dt)
    assert abs(w / w_th - 1) < 1e-6, w / w_th - 1


def test_energy_conserved_in_closed_pec_box():
    # 3D, inhomogeneous lossless eps_r and mu_r, random E and H: W^n constant to 1e-10
    shape = (5, 4, 4)
    grid = fdtd.Grid(shape, (1e-3, 0.8e-3, 1.1e-3), dtype="float64")
    rng = np.random.default_rng(4)
    materials = fdtd.Materials(eps_r=1 + 3 * rng.random(shape), mu_r=1 + rng.random(shape))
    sim = fdtd.Simulation(grid, materials, monitors=[fdtd.EnergyMonitor(grid, materials)])
    fields = {c: rng.standard_normal(shape) for c in ("ex", "ey", "ez")}
    fields.update({c: rng.standard_normal(shape) / fdtd.ETA0 for c in ("hx", "hy", "hz")})
    _, out = sim.run(10_000, sim.initial_state(**fields))
    energy = out["energy"].asnumpy()
    assert energy.shape == (10_000,)
    drift = np.abs(energy / energy[0] - 1).max()
    assert drift < 1e-10, drift
    # the naive energy (E^n and H^{n+1/2} alone) oscillates at the 1e-3 level: the test is
    # sensitive to using the Yee form


def test_energy_decays_with_conductivity():
    shape = (6, 6)
    grid = fdtd.Grid(shape, 1e-3, dtype="float64")
    materials = fdtd.Materials(sigma=0.05)
    sim = fdtd.Simulation(grid, materials, monitors=[fdtd.EnergyMonitor(grid, materials)])
    rng = np.random.default_rng(5)
    _, out = sim.run(400, sim.initial_state(ez=rng.standard_normal(shape)))
    energy = out["energy"].asnumpy()
    assert energy[-1] < 0.5 * energy[0] and np.all(np.diff(energy) < 0)


def test_gradient_wrt_eps_map_matches_central_differences():
    shape = (14, 12)
    grid = fdtd.Grid(shape, 1e-3, dtype="float64")
    rng = np.random.default_rng(6)
    eps0 = 1 + rng.random(shape)
    wave = Gaussian(1.4e10)

    def loss(eps):
        sim = fdtd.Simulation(
            grid,
            fdtd.Materials(eps_r=eps),
            boundaries={"x": fdtd.CPML(3), "y": fdtd.PEC()},
            sources=[fdtd.PointSource("ez", (5, 5), wave)],
            monitors=[fdtd.PointProbe("ez", (9, 7))],
        )
        _, out = sim.run(60, checkpoint=8)
        return (out["probe"] ** 2).sum()

    eps = core.tensor(eps0, dtype=core.float64)
    grad = core.grad(loss)(eps).asnumpy()
    h = 1e-6
    for cell in ((7, 6), (9, 7), (5, 5), (6, 3)):
        plus, minus = eps0.copy(), eps0.copy()
        plus[cell] += h
        minus[cell] -= h
        fd = (
            float(loss(core.tensor(plus, dtype=core.float64)))
            - float(loss(core.tensor(minus, dtype=core.float64)))
        ) / (2 * h)
        assert abs(grad[cell] - fd) <= 1e-4 * abs(fd), (cell, grad[cell], fd)
    assert np.abs(grad).max() > 0


def test_gradient_3d_with_cpml():
    shape = (8, 7, 6)
    grid = fdtd.Grid(shape, 1e-3, dtype="float64")
    rng = np.random.default_rng(7)
    eps0 = 1 + rng.random(shape)

    def loss(eps):
        sim = fdtd.Simulation(
            grid,
            fdtd.Materials(eps_r=eps, sigma=0.01),
            boundaries={"x": fdtd.CPML(2), "y": fdtd.Periodic(), "z": fdtd.PEC()},
            sources=[fdtd.PointSource("ez", (3, 3, 3), Gaussian(1.4e10, t0=50e-12))],
            monitors=[fdtd.PointProbe("ey", (4, 4, 2))],
        )
        _, out = sim.run(25)
        return (out["probe"] ** 2).sum()

    grad = core.grad(loss)(core.tensor(eps0, dtype=core.float64)).asnumpy()
    h = 1e-6
    for cell in ((3, 3, 3), (4, 4, 2), (3, 4, 2)):
        plus, minus = eps0.copy(), eps0.copy()
        plus[cell] += h
        minus[cell] -= h
        fd = (
            float(loss(core.tensor(plus, dtype=core.float64)))
            - float(loss(core.tensor(minus, dtype=core.float64)))
        ) / (2 * h)
        assert abs(grad[cell] - fd) <= 1e-4 * abs(fd), (cell, grad[cell], fd)


@pytest.mark.parametrize(
    ("shape", "mode", "boundaries"),
    [
        ((16,), None, fdtd.CPML(4)),
        ((10, 9), "TMz", {"x": fdtd.CPML(3), "y": fdtd.Periodic()}),
        ((10, 9), "TEz", {"x": fdtd.PMC(), "y": (fdtd.CPML(2), fdtd.PEC())}),
        ((8, 7, 9), None, {"x": fdtd.CPML(2), "y": fdtd.PMC(), "z": fdtd.Periodic()}),
        ((10, 9), "TMz", {"x": fdtd.Mur(), "y": (fdtd.PEC(), fdtd.Mur())}),
    ],
)
def test_jit_step_equals_eager_step(shape, mode, boundaries):
    grid = fdtd.Grid(shape, 1e-3, mode=mode, dtype="float64")
    rng = np.random.default_rng(8)
    materials = fdtd.Materials(eps_r=1 + rng.random(shape), sigma=0.02 * rng.random(shape))
    sim = fdtd.Simulation(grid, materials, boundaries)
    state = sim.initial_state(**{c: rng.standard_normal(shape) for c in grid.components})
    psi = {k: core.tensor(rng.standard_normal(tuple(v.shape))) for k, v in state.psi.items()}
    state = state.replace(psi=psi)
    for n in range(3):
        eager = sim.step(state, n)
        jitted = sim.compiled_step(state, n)
        for name, value in eager.components().items():
            np.testing.assert_allclose(
                jitted.get(name).asnumpy(),
                value.asnumpy(),
                rtol=1e-13,
                atol=1e-13 * np.abs(value.asnumpy()).max(),
            )
        for key, value in eager.psi.items():
            np.testing.assert_allclose(
                jitted.psi[key].asnumpy(), value.asnumpy(), rtol=1e-13, atol=1e-300
            )
        state = eager


def test_periodic_plane_wave_phase_velocity():
    # 1D periodic ring: a sampled wave exp(i k x) advances by the discrete w per step
    n, d = 32, 1e-3
    grid = fdtd.Grid((n,), d, courant=0.7, dtype="float64")
    k = 2 * np.pi * 3 / (n * d)
    x = np.arange(n) * d
    sim = fdtd.Simulation(
        grid, boundaries=fdtd.Periodic(), monitors=[ModeProjection("ez", np.cos(k * x), "c")]
    )
    w_th = discrete_omega(grid, (k,))
    steps = int(np.ceil(200 * 2 * np.pi / (w_th * grid.dt)))
    _, out = sim.run(steps, sim.initial_state(ez=np.cos(k * x)))
    assert abs(fitted_omega(out["c"].asnumpy(), grid.dt) / w_th - 1) < 1e-6


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match=r"stability limit 0\.57735"):
        fdtd.Grid((4, 4, 4), 1e-3, courant=0.6)
    with pytest.raises(ValueError, match=r"stability limit 0\.707"):
        fdtd.Grid((4, 4), 1e-3, courant=0.71)
    with pytest.raises(ValueError, match="stability limit 1"):
        fdtd.Grid((4,), 1e-3, dt=1.01e-3 / fdtd.C0)
    grid = fdtd.Grid((20, 20), 1e-3)
    with pytest.raises(ValueError, match=r"eps_r has shape \(20, 19\)"):
        fdtd.Simulation(grid, fdtd.Materials(eps_r=np.ones((20, 19))))
    with pytest.raises(ValueError, match="outside the grid"):
        fdtd.Simulation(grid, sources=[fdtd.PointSource("ez", (20, 3), Gaussian(1e10))])
    with pytest.raises(ValueError, match="inside the PML along x"):
        fdtd.Simulation(grid, boundaries=fdtd.CPML(5), monitors=[fdtd.PointProbe("ez", (2, 10))])
    with pytest.raises(ValueError, match="must be positive"):
        fdtd.Simulation(grid, fdtd.Materials(eps_r=-1.0))
    with pytest.warns(ResolutionWarning, match=r"5\.17 cells per wavelength"):
        fdtd.Simulation(
            grid,
            fdtd.Materials(eps_r=4.0),
            sources=[fdtd.PointSource("ez", (10, 10), Gaussian(3e10))],
        )
    with pytest.raises(ValueError, match="Periodic on axis y"):
        fdtd.Simulation(grid, boundaries={"y": (fdtd.Periodic(), fdtd.PEC())})


def test_nan_names_step_and_cell():
    grid = fdtd.Grid((12,), 1e-3, dtype="float64")
    sim = fdtd.Simulation(grid, fdtd.Materials(eps_r=1.0))
    ez = np.zeros(12)
    ez[7] = np.inf
    with pytest.raises(FloatingPointError, match=r"at step 0 .*cell \(x=\d+\)"):
        sim.run(5, sim.initial_state(ez=ez))


def test_checkpointed_gradient_has_bounded_memory():
    # 200 steps under jit(grad): the default checkpointing (~2 sqrt(N) stored states) peaks far
    # below storing every state, and the gradient is the same
    import tracemalloc

    n = 120
    grid = fdtd.Grid((n,), 1e-3, dtype="float64")
    eps = core.tensor(1 + np.random.default_rng(9).random(n), dtype=core.float64)

    def gradient(checkpoint, steps):
        def loss(eps):
            sim = fdtd.Simulation(
                grid,
                fdtd.Materials(eps_r=eps),
                fdtd.CPML(8),
                sources=[fdtd.PointSource("ez", (30,), Gaussian(1.4e10))],
                monitors=[fdtd.PointProbe("ez", (90,))],
            )
            return (sim.run(steps, checkpoint=checkpoint)[1]["probe"] ** 2).sum()

        fn = core.jit(core.grad(loss))
        fn(eps)  # compile outside the measurement
        tracemalloc.start()
        g = fn(eps).asnumpy()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return g, peak

    g_all, peak_all = gradient(False, 200)
    g_ck, peak_ck = gradient(None, 200)
    np.testing.assert_allclose(g_ck, g_all, rtol=1e-12, atol=1e-12 * np.abs(g_all).max())
    assert peak_ck < 0.4 * peak_all, (peak_ck, peak_all)
    assert np.abs(g_all).max() > 0
