"""CFS-CPML: reflection at normal incidence against a large reference domain, no late-time
growth, and the profile of Roden & Gedney / MindElec's CFSParameters."""

import numpy as np
import pytest

from diffsci.mindelec import fdtd
from diffsci.mindelec.fdtd.waveforms import Gaussian

D = 1e-3
FMAX = fdtd.C0 / (20 * D)  # 20 cells per wavelength at the top of the band


def _probe(shape, source, probe, boundaries, steps, courant, mode=None):
    grid = fdtd.Grid(shape, D, courant=courant, dtype="float64", mode=mode)
    sim = fdtd.Simulation(
        grid,
        boundaries=boundaries,
        sources=[fdtd.PointSource("ez", source, Gaussian(FMAX))],
        monitors=[fdtd.PointProbe("ez", probe)],
    )
    return sim.run(steps)[1]["probe"].asnumpy(), grid


def _reflection_db(field, reference, dt):
    """(time-domain peak, worst in-band) of |field - reference| / |reference|, dB."""
    err = field - reference
    n = 4 * len(err)
    freqs = np.fft.rfftfreq(n, dt)
    band = (freqs > 0) & (freqs <= FMAX)
    ratio = np.abs(np.fft.rfft(err, n))[band] / np.abs(np.fft.rfft(reference, n))[band]
    peak = np.abs(err).max() / np.abs(reference).max()
    return 20 * np.log10(peak), 20 * np.log10(ratio.max())


@pytest.mark.parametrize(
    ("courant", "pml"),
    [
        (0.99, fdtd.CPML(10)),  # MindElec's defaults: order 4, sigma 1.5 sigma_opt, kappa 11
        (0.5, fdtd.CPML(10)),
        (0.99, fdtd.CPML(10, order=3, sigma_factor=1.0, kappa_max=5.0, alpha_max=0.05)),
    ],
)
def test_1d_normal_incidence_reflection_below_60db(courant, pml):
    n, cells, pad, steps = 100, 10, 400, 600
    source, probe = 40, n - cells - 5
    field, grid = _probe((n,), (source,), (probe,), pml, steps, courant)
    # the reference's walls are 400 cells further: their echo reaches the probe after the window
    reference, _ = _probe(
        (n + 2 * pad,), (source + pad,), (probe + pad,), fdtd.PEC(), steps, courant
    )
    peak_db, band_db = _reflection_db(field, reference, grid.dt)
    assert peak_db < -60 and band_db < -60, (peak_db, band_db)
    # a PEC wall instead of the PML reflects everything: the measurement can fail
    pec, _ = _probe((n,), (source,), (probe,), fdtd.PEC(), steps, courant)
    assert _reflection_db(pec, reference, grid.dt)[0] > -3


def test_2d_normal_incidence_reflection_below_60db():
    n, cells, pad, steps = 50, 10, 110, 170
    source, probe = (25, 25), (n - cells - 3, 25)
    field, grid = _probe((n, n), source, probe, fdtd.CPML(cells), steps, 0.7)
    shift = lambda p: tuple(i + pad for i in p)  # noqa: E731
    reference, _ = _probe(
        (n + 2 * pad, n + 2 * pad), shift(source), shift(probe), fdtd.PEC(), steps, 0.7
    )
    peak_db, band_db = _reflection_db(field, reference, grid.dt)
    assert peak_db < -60 and band_db < -60, (peak_db, band_db)


def test_no_late_time_growth():
    # 2D TMz box closed by CPML on every side, lossy nowhere else: after the pulse has left,
    # the fields decay and stay down (no growth of the psi recursion)
    grid = fdtd.Grid((30, 30), D, dtype="float64")
    sim = fdtd.Simulation(
        grid,
        boundaries=fdtd.CPML(8, alpha_max=0.05),
        sources=[fdtd.PointSource("ez", (15, 15), Gaussian(FMAX))],
        monitors=[fdtd.EnergyMonitor(grid, fdtd.Materials())],
    )
    _, out = sim.run(6000, checkpoint=False)
    energy = out["energy"].asnumpy()
    peak = energy.max()
    # the Gaussian's DC part leaves a slowly decaying 2D static tail (~1e-7 of the peak at
    # step 1000); a growing late-time instability would grow exponentially instead
    assert np.abs(energy[1000:]).max() < 1e-6 * peak
    assert np.abs(energy[-1000:]).max() < 0.1 * np.abs(energy[1000:2000]).max()


def test_profile_matches_roden_gedney():
    # b = exp(-(sigma/kappa + alpha) dt/eps0), a = sigma (b - 1) / (sigma kappa + kappa^2 alpha)
    grid = fdtd.Grid((40,), D, dtype="float64")
    pml = fdtd.CPML(10, order=3, sigma_factor=1.2, kappa_max=7, alpha_max=0.2, alpha_min=0.01)
    bounds = fdtd.Boundaries(grid, {"x": (fdtd.PEC(), pml)})
    prof = bounds.cpml_profiles(0)
    b, a, kappa = prof["h"]
    x = np.arange(40) + 0.5
    rho = np.clip((x - 30) / 10, 0, 1)
    sigma = 1.2 * 4 / (150 * np.pi * D) * rho**3
    kap = 1 + 6 * rho**3
    alpha = 0.01 + 0.19 * (1 - rho)
    bb = np.exp(-(sigma / kap + alpha) * grid.dt / fdtd.EPS0)
    aa = sigma * (bb - 1) / (sigma * kap + kap**2 * alpha)
    inside = rho > 0
    np.testing.assert_allclose(b[inside], bb[inside], rtol=1e-14)
    np.testing.assert_allclose(a[inside], aa[inside], rtol=1e-14)
    np.testing.assert_allclose(kappa[inside], kap[inside], rtol=1e-14)
    assert np.all(a[~inside] == 0) and np.all(kappa[~inside] == 1)
    assert not bounds.has_cpml(0) or bounds.pml_cells(0) == (0, 10)


def test_2d_oblique_60_degrees_below_40db():
    # source and probe 5 cells from the x-high PML, 17 cells apart along y: the echo from the
    # PML face arrives at 60 degrees incidence (MindElec's default CPML parameters)
    cells, h, sep = 10, 5, 17
    n = (cells + h + 30, 60 + sep)
    source = (n[0] - cells - h, 30)
    probe = (source[0], 30 + sep)
    steps = 330
    pad = steps // 2 + 10  # the reference's walls are out of reach within the window
    field, grid = _probe(n, source, probe, fdtd.CPML(cells), steps, 0.7)
    shift = lambda p: tuple(i + pad for i in p)  # noqa: E731
    reference, _ = _probe(
        (n[0] + 2 * pad, n[1] + 2 * pad), shift(source), shift(probe), fdtd.PEC(), steps, 0.7
    )
    peak_db, band_db = _reflection_db(field, reference, grid.dt)
    assert peak_db < -40 and band_db < -40, (peak_db, band_db)


def test_mur_for_comparison():
    # 1D normal incidence: Mur's first-order ABC is nearly exact near c dt = d
    n, pad, steps = 100, 400, 600
    field, grid = _probe((n,), (40,), (85,), fdtd.Mur(), steps, 0.99)
    reference, _ = _probe((n + 2 * pad,), (40 + pad,), (85 + pad,), fdtd.PEC(), steps, 0.99)
    assert _reflection_db(field, reference, grid.dt)[0] < -60
    # 2D: grazing waves along the side walls defeat it; the CPML does not care
    n, steps, pad = 50, 170, 110
    source, probe = (25, 25), (37, 25)
    shift = lambda p: tuple(i + pad for i in p)  # noqa: E731
    reference, _ = _probe((n + 2 * pad,) * 2, shift(source), shift(probe), fdtd.PEC(), steps, 0.7)
    mur, grid = _probe((n, n), source, probe, fdtd.Mur(), steps, 0.7)
    cpml, _ = _probe((n, n), source, probe, fdtd.CPML(10), steps, 0.7)
    mur_db = _reflection_db(mur, reference, grid.dt)[0]
    cpml_db = _reflection_db(cpml, reference, grid.dt)[0]
    assert mur_db > -40 and cpml_db < -60 and cpml_db < mur_db - 40, (mur_db, cpml_db)


@pytest.mark.parametrize("mode, source", [("TEz", "ey"), ("TMz", "ez")])
def test_mur_box_fields_decay_on_every_stored_node(mode, source):
    """A 2D box closed by Mur on all four sides: after the pulse has left, every stored field,
    the tangential H row half a cell outside the high walls included, decays with the
    interior. (Updated by the curl against the implicit zero E beyond the wall, that row
    integrated the pulse's static wake and stayed at the order of the peak.)"""
    n = 40
    grid = fdtd.Grid((n, n), D, courant=0.7, dtype="float64", mode=mode)
    sim = fdtd.Simulation(
        grid,
        boundaries=fdtd.Mur(),
        sources=[fdtd.PointSource(source, (n // 2, n // 2), Gaussian(FMAX))],
    )
    state, peak = sim.initial_state(), {c: 0.0 for c in grid.components}
    for step in range(1000):
        state = sim.step(state, step)
        if step < 200:
            for c in grid.components:
                peak[c] = max(peak[c], float(np.abs(state.get(c).asnumpy()).max()))
    for c in grid.h_components:
        field = np.abs(state.get(c).asnumpy())
        interior = field[2:-2, 2:-2].max()
        assert field.max() < 1e-6 * peak[c], (c, field.max(), peak[c])
        assert field[-1].max() < 10 * interior + 1e-12 * peak[c], (c, field[-1].max(), interior)
        assert field[:, -1].max() < 10 * interior + 1e-12 * peak[c]
