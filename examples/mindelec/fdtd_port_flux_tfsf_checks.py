"""Accuracy checks of mindelec.fdtd's lumped ports, Poynting flux and TF/SF plane waves.

    .venv/bin/python examples/mindelec/fdtd_port_flux_tfsf_checks.py [--full]

Prints, against analytic or discrete-theory references:

1. Hertzian dipole (3D, one z edge, DC-free pulse): flux-box power / (eta (k I l)^2 / (12 pi))
   at 100 .. 20 cells per wavelength (``--full``: also on a larger grid).
2. Line current (2D TMz): flux power / (eta k I^2 / 8).
3. Line current, CW at 20 cells per wavelength: E_z at 5 wavelengths / (-(omega mu0 I / 4)
   H0^(2)(k rho)), with the continuum k and with the grid's k along x.
4. Parallel-plate line with a matched and a 2 Z0 resistor: |S11| and the difference from the
   discrete LC-ladder theory.
5. Two ports in a lossy random medium: reciprocity error max|S - S^T| / max|S|.
6. TF/SF leakage (max scattered-region field / incident) for grid-aligned and oblique waves.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.special import hankel2

from diffsci.mindelec.fdtd import C0, CPML, EPS0, ETA0, MU0, PEC, PMC, Grid, Materials, Simulation
from diffsci.mindelec.fdtd.flux import FluxMonitor, dipole_power, line_source_power
from diffsci.mindelec.fdtd.lumped import CurrentSource, Resistor, VoltageSource, port_times
from diffsci.mindelec.fdtd.monitors import Monitor, PointProbe
from diffsci.mindelec.fdtd.sparams import SParameterSolver, reciprocity_error, s_from_time_signals
from diffsci.mindelec.fdtd.tfsf import LineSource, PlaneWave
from diffsci.mindelec.fdtd.waveforms import ContinuousWave, Gaussian, NormDGaussian
from diffsci.scripts import ArgumentParser

D = 1e-3
FREQS = np.array([3e9, 5e9, 7.5e9, 10e9, 15e9])


def _current_dft(src, steps, dt, freqs):
    t = (np.arange(steps) + 0.5) * dt
    i = np.array([float(src.current(x)) for x in t])
    return (i[None, :] * np.exp(-2j * np.pi * freqs[:, None] * t[None, :])).sum(axis=1) * dt


def radiated(ndim, n, steps, npml):
    g = Grid((n,) * ndim, D, dtype="float64")
    wave = NormDGaussian(15e9) if ndim == 3 else Gaussian(15e9)
    src = CurrentSource("z", (n // 2,) * ndim, wave)
    m = npml + 2
    sim = Simulation(
        g,
        boundaries=CPML(npml),
        sources=[src],
        monitors=[FluxMonitor((m,) * ndim, (n - m,) * ndim, FREQS)],
    )
    _, r = sim.run(steps)
    i_f = _current_dft(src, steps, g.dt, FREQS)
    ref = dipole_power(FREQS, i_f * D) if ndim == 3 else line_source_power(FREQS, i_f)
    return r["flux"].numpy() / ref


def green():
    f0, per = C0 / (20 * D), 32
    g = Grid((150, 50), D, dt=1 / (f0 * per), dtype="float64")
    src = LineSource((20, 25), ContinuousWave(f0, ramp_periods=3))
    sim = Simulation(g, boundaries=CPML(12), sources=[src], monitors=[PointProbe("ez", (120, 25))])
    steps = 25 * per
    _, r = sim.run(steps)
    n = np.arange(steps)
    win = n >= steps - 8 * per
    w = 2 * math.pi * f0
    t_e, t_i = (n[win] + 1) * g.dt, (n[win] + 0.5) * g.dt
    cur = np.array([float(src.current(t)) for t in t_i])
    val = (r["probe"].numpy()[win] * np.exp(-1j * w * t_e)).sum() / (
        cur * np.exp(-1j * w * t_i)
    ).sum()
    k_num = 2 / D * math.asin(D / (C0 * g.dt) * math.sin(w * g.dt / 2))
    ref = -(w * MU0 / 4) * hankel2(0, (w / C0) * 100 * D)
    ref_num = -(w * MU0 / 4) * hankel2(0, k_num * 100 * D)
    return abs(val) / abs(ref) - 1, abs(val / ref - 1), abs(val / ref_num - 1)


def line_s11(ratio, ny=4, n=60, steps=700):
    g = Grid((n, ny, 1), D, dtype="float64")
    z0 = ETA0 * ny
    src = VoltageSource("y", (0, 0, 0), (1, ny, 1), Gaussian(10e9), resistance=z0, name="p1")
    load = Resistor("y", (n - 1, 0, 0), (n, ny, 1), resistance=ratio * z0)
    sim = Simulation(
        g,
        boundaries={"x": PMC(), "y": PEC(), "z": PMC()},
        sources=[src, load],
        monitors=[src.voltage_monitor(), src.current_monitor()],
    )
    _, r = sim.run(steps)
    f = np.array([0.5e9, 1e9, 2e9, 3e9])
    tv, ti = port_times(steps, g.dt)
    v, i = r["p1_v"].numpy(), r["p1_i"].numpy()
    s = s_from_time_signals(v[:, None, None], i[:, None, None], g.dt, f, tv, ti, z0=z0)
    s = s.numpy()[:, 0, 0]
    w = 2 * np.pi * f
    om, cosf = 2 * np.sin(w * g.dt / 2) / g.dt, np.cos(w * g.dt / 2)
    c, ell = EPS0 * D / ny, MU0 * ny * D
    z = 1 / (1j * om * c + cosf / (ratio * z0))
    for _ in range(n - 2):
        z = 1 / (1 / (z + 1j * om * ell) + 1j * om * c)
    z = z + 1j * om * ell
    return np.abs(s), np.abs(s - (z - z0) / (z + z0)).max()


def reciprocity(steps=1400):
    g = Grid((16, 2, 2), D, dtype="float64")
    rng = np.random.default_rng(1)
    mats = Materials(eps_r=1 + 2 * rng.random(g.shape), sigma=0.3 * rng.random(g.shape))

    def run(e):
        ports = [
            VoltageSource("y", (0, 0, 0), None, Gaussian(12e9), 200.0, float(e == 0), "p1"),
            VoltageSource("y", (15, 1, 1), None, Gaussian(12e9), 300.0, float(e == 1), "p2"),
        ]
        mons = [m for p in ports for m in (p.voltage_monitor(), p.current_monitor())]
        bnd = {"x": PMC(), "y": PEC(), "z": PMC()}
        _, r = Simulation(g, mats, boundaries=bnd, sources=ports, monitors=mons).run(steps)
        v = np.stack([r["p1_v"].numpy(), r["p2_v"].numpy()], 1)
        return v, np.stack([r["p1_i"].numpy(), r["p2_i"].numpy()], 1)

    tv, ti = port_times(steps, g.dt)
    solver = SParameterSolver(run, 2, g.dt, tv, ti, z0=[200.0, 300.0])
    solver.solve()
    return reciprocity_error(solver.eval(np.linspace(1e9, 15e9, 6)).numpy())


class _Field(Monitor):
    def __init__(self, component):
        self.component = self.name = component

    def record(self, state, step):
        return state.get(self.component)


def tfsf_leak(mode, direction):
    g = Grid((64, 64), D, dtype="float64", mode=mode)
    wave = PlaneWave((18, 18), (46, 46), Gaussian(7.5e9), direction=direction)
    sim = Simulation(
        g, boundaries=CPML(10), sources=[wave], monitors=[_Field(c) for c in g.components]
    )
    _, r = sim.run(360)
    out = {}
    for c in g.components:
        f = r[c].numpy()
        inside = wave._inside(g, c).astype(bool)
        scale = 1.0 if c[0] == "e" else ETA0
        out[c] = np.abs(f[:, ~inside]).max() * scale
    return out


def main():
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also the 44^3 dipole grid")
    args = parser.parse_args()
    t0 = time.time()
    print("cells per wavelength:", (C0 / FREQS / D).round(1))
    print("1. dipole P/P_ref - 1 (30^3):", (radiated(3, 30, 300, 8) - 1).round(4))
    if args.full:
        print("   dipole P/P_ref - 1 (44^3):", (radiated(3, 44, 450, 10) - 1).round(4))
    print("2. line current P/P_ref - 1:", (radiated(2, 60, 600, 10) - 1).round(4))
    mag, cplx, cplx_num = green()
    print(f"3. Green's function at 5 lambda: |G|/|G_ref| - 1 = {mag:.2e}, ")
    print(f"   |G/G_ref - 1| = {cplx:.2e} (continuum k), {cplx_num:.2e} (grid k)")
    for ratio in (1.0, 2.0):
        s, err = line_s11(ratio)
        print(f"4. load {ratio:g} Z0: |S11| = {s.round(4)}, max |S11 - ladder| = {err:.1e}")
    print(f"5. two-port reciprocity error: {reciprocity():.1e}")
    for mode, direction in (("TMz", "+x"), ("TEz", "-y"), ("TMz", 30.0), ("TEz", 45.0)):
        leak = {k: f"{v:.1e}" for k, v in tfsf_leak(mode, direction).items()}
        print(f"6. TF/SF leakage {mode} {direction}: (E, eta H) {leak}")
    print(f"({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    main()
