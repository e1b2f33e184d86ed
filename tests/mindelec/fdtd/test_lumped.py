"""Lumped elements: a matched resistor absorbs on a parallel-plate line (and a 2 Z0 load
reflects 1/3), the two-port S-matrix of a lossy structure is reciprocal to 1e-6, the source
drives half its EMF into a matched line, the equivalent conductivity is MindElec's, gradients
through the element's coefficients match central differences, and misplaced elements raise."""

import functools

import numpy as np
import pytest

from diffsci import core
from diffsci.mindelec.fdtd import CPML, EPS0, ETA0, MU0, PEC, PMC, Grid, Materials, Simulation
from diffsci.mindelec.fdtd.lumped import (
    CurrentMonitor,
    Resistor,
    VoltageMonitor,
    VoltageSource,
    port_times,
)
from diffsci.mindelec.fdtd.sparams import (
    SParameterSolver,
    passivity,
    reciprocity_error,
    s_from_time_signals,
)
from diffsci.mindelec.fdtd.waveforms import Gaussian

# the composite update: no native kernels to compile (F1's tests check that both agree)
_Sim = functools.partial(Simulation, native=False)

NY = 4  # plate separation in cells; the line is one cell wide between PMC walls


F = np.array([0.5e9, 1e9, 2e9, 3e9])


def _line(load_ratio, steps=500, axis="y"):
    """Parallel-plate line along x (PEC plates at y = 0, NY d; PMC at z = 0, d): a 1 V
    Gaussian source with internal resistance Z0 = eta0 NY at x = 0, a load at the far end."""
    g = Grid((40, NY, 1), 1e-3, dtype="float64")
    z0 = ETA0 * NY
    src = VoltageSource(axis, (0, 0, 0), (1, NY, 1), Gaussian(10e9), resistance=z0, name="p1")
    load = Resistor("y", (39, 0, 0), (40, NY, 1), resistance=load_ratio * z0)
    sim = _Sim(
        g,
        boundaries={"x": PMC(), "y": PEC(), "z": PMC()},
        sources=[src, load],
        monitors=[src.voltage_monitor(), src.current_monitor()],
    )
    _, r = sim.run(steps)
    v, i = r["p1_v"].numpy(), r["p1_i"].numpy()
    tv, ti = port_times(steps, g.dt)
    s = s_from_time_signals(v[:, None, None], i[:, None, None], g.dt, F, t_v=tv, t_i=ti, z0=z0)
    return v, s.numpy()[:, 0, 0], g


def _ladder_s11(load_ratio, g):
    """S11 of the discrete line: the Yee TEM line is an LC ladder (node C = eps0 d w / h,
    series L = mu0 h d / w per cell) in leapfrog time, so with the sample-time DFT the
    reactances take Omega = 2 sin(omega dt / 2) / dt and the semi-implicit resistor conducts
    cos(omega dt / 2) / R. The port voltage is node 0's, its current the first series branch's;
    every node carries a full cell of capacitance (the PMC end walls sit half a cell out)."""
    d, dt, n = 1e-3, g.dt, g.shape[0]
    w = 2 * np.pi * F
    omega, cosf = 2 * np.sin(w * dt / 2) / dt, np.cos(w * dt / 2)
    c, ell, z0 = EPS0 * d * d / (NY * d), MU0 * NY * d * d / d, ETA0 * NY
    z = 1 / (1j * omega * c + cosf / (load_ratio * z0))
    for _node in range(n - 2, 0, -1):
        z = 1 / (1 / (z + 1j * omega * ell) + 1j * omega * c)
    z = z + 1j * omega * ell
    return (z - z0) / (z + z0)


def test_matched_resistor_absorbs_and_mismatch_reflects():
    v, s11, g = _line(1.0)
    # a 1 V source with R = Z0 puts V_s / 2 on a matched line
    assert abs(np.max(v) - 0.5) < 2e-3
    # continuum: S11 = 0; on the grid |S11| is O(k d / 2) (the end nodes' capacitance)
    assert np.all(np.abs(s11) < 0.025), np.abs(s11)
    # discrete theory (the ladder) to the DFT's truncation
    assert np.max(np.abs(s11 - _ladder_s11(1.0, g))) < 1e-7
    v_2, s11_2, g = _line(2.0)
    assert np.all(np.abs(np.abs(s11_2) - 1.0 / 3.0) < 0.02), np.abs(s11_2)
    assert np.max(np.abs(s11_2 - _ladder_s11(2.0, g))) < 5e-5
    # MindElec's "yn": the positive terminal at the low plate; V, I and the drive flip together
    v_n, s11_n, _ = _line(2.0, axis="yn")
    assert np.allclose(v_n, v_2, rtol=0, atol=1e-12)
    assert np.allclose(s11_n, s11_2, rtol=0, atol=1e-12)


def test_equivalent_conductivity_is_mindelec_resistor():
    g = Grid((10, 10, 10), 1e-3)
    r = Resistor("z", (4, 4, 3), (6, 5, 6), resistance=100.0)  # 3 in series, 2 in parallel
    assert r.block.counts() == (3, 2)
    # MindElec: coef = (n_ser dz) / (n_par dx dy) / R
    assert np.isclose(r.sigma(g), (3 * 1e-3) / (2 * 1e-6) / 100.0)


def _two_port(excited, steps=600):
    g = Grid((16, 2, 2), 1e-3, dtype="float64")
    rng = np.random.default_rng(1)
    eps = 1 + 2 * rng.random(g.shape)
    sigma = 1.0 * rng.random(g.shape)  # S/m: the ringing decays within the run
    ports = [
        VoltageSource("y", (0, 0, 0), None, Gaussian(12e9), 200.0, float(excited == 0), "p1"),
        VoltageSource("y", (15, 1, 1), None, Gaussian(12e9), 300.0, float(excited == 1), "p2"),
    ]
    monitors = [m for p in ports for m in (p.voltage_monitor(), p.current_monitor())]
    sim = _Sim(
        g,
        Materials(eps_r=eps, sigma=sigma),
        boundaries={"x": PMC(), "y": PEC(), "z": PMC()},
        sources=ports,
        monitors=monitors,
    )
    _, r = sim.run(steps)
    v = np.stack([r["p1_v"].numpy(), r["p2_v"].numpy()], axis=1)
    i = np.stack([r["p1_i"].numpy(), r["p2_i"].numpy()], axis=1)
    return v, i


def test_two_port_reciprocity_and_passivity():
    steps = 600
    g_dt = Grid((16, 2, 2), 1e-3, dtype="float64").dt
    tv, ti = port_times(steps, g_dt)
    solver = SParameterSolver(lambda e: _two_port(e, steps), 2, g_dt, tv, ti, z0=[200.0, 300.0])
    v, _i = solver.solve()
    assert np.abs(v.numpy()[-20:]).max() < 1e-6 * np.abs(v.numpy()).max()  # decayed
    f = np.linspace(1e9, 15e9, 6)
    s = solver.eval(f, method="solve").numpy()
    assert np.abs(s[:, 1, 0]).max() > 0.05  # the ports are coupled
    assert reciprocity_error(s) < 1e-6
    ok, sv = passivity(s, tol=1e-6)
    assert ok, sv


def test_gradient_through_element_coefficients():
    g = Grid((6, 3, 3), 1e-3, dtype="float64")
    src = VoltageSource("z", (2, 1, 1), None, Gaussian(14e9), resistance=50.0, name="p")
    mon = VoltageMonitor("z", (4, 1, 1), name="v")
    base = np.ones(g.shape)

    def loss(eps):
        sim = _Sim(g, Materials(eps_r=eps), sources=[src], monitors=[mon], native=False)
        _, r = sim.run(60)
        return (r["v"] * r["v"]).sum()

    grad = core.grad(loss)(core.tensor(base, dtype=core.float64)).numpy()
    for cell in ((2, 1, 1), (4, 1, 1), (3, 1, 1)):
        h = 1e-6
        plus, minus = base.copy(), base.copy()
        plus[cell] += h
        minus[cell] -= h
        fd = (float(loss(core.tensor(plus))) - float(loss(core.tensor(minus)))) / (2 * h)
        assert np.isclose(grad[cell], fd, rtol=1e-5, atol=1e-12 * abs(fd) + 1e-30), (cell, fd)


def test_misplaced_elements_raise():
    g = Grid((20, 20, 20), 1e-3)
    pml = {"x": CPML(5)}
    with pytest.raises(ValueError, match="PML"):
        _Sim(g, boundaries=pml, sources=[Resistor("z", (2, 10, 10))])
    with pytest.raises(ValueError, match="outside the grid"):
        _Sim(g, sources=[Resistor("z", (10, 10, 19), (11, 11, 21))])
    with pytest.raises(ValueError, match="wall"):
        _Sim(g, sources=[Resistor("y", (0, 5, 5))])  # ey on the x = 0 PEC wall
    with pytest.raises(ValueError, match="zp"):
        Resistor("zq", (5, 5, 5))
    with pytest.raises(ValueError, match="resistance"):
        Resistor("z", (5, 5, 5), resistance=0.0)
    with pytest.raises(ValueError, match="not an E component"):
        _Sim(Grid((20, 20), 1e-3), sources=[Resistor("x", (5, 5))])  # TMz has ez only
    with pytest.raises(ValueError, match="waveform"):
        VoltageSource("z", (5, 5, 5))
    with pytest.raises(ValueError, match="PML"):
        _Sim(g, boundaries=pml, monitors=[CurrentMonitor("z", (19, 5, 5))])


def test_native_steps_agree_with_composite():
    """The elements rewrite Ca/Cb before the native kernels are built: both paths agree."""
    from diffsci.mindelec.fdtd.tfsf import PlaneWave

    g = Grid((24, 24), 1e-3, dtype="float64")
    out = []
    for native in (True, False):
        src = VoltageSource("z", (6, 12), None, Gaussian(14e9), resistance=50.0, name="p")
        sources = [src, Resistor("z", (18, 12), resistance=20.0)]
        sources.append(PlaneWave((3, 3), (20, 20), Gaussian(14e9), direction="+y"))
        sim = Simulation(
            g,
            sources=sources,
            monitors=[src.voltage_monitor(), src.current_monitor()],
            native=native,
        )
        _, r = sim.run(80)
        out.append((r["p_v"].numpy(), r["p_i"].numpy()))
    assert np.abs(out[0][0]).max() > 0
    for a, b in zip(out[0], out[1]):
        assert np.allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())
