"""Drude metal reflection by ADE against Fresnel, and oblique TF/SF plane waves that do not leak.

1. A 1D Gaussian pulse meets a Drude half-space (``omega_p = 2 pi 30 GHz``,
   ``gamma = 2 pi 5 GHz``; ``mindelec.fdtd.dispersive``). The reflection coefficient is the
   DFT of (total - incident) over the DFT of the incident field at a probe, moved to the
   interface. It is compared with the Fresnel coefficient of the scheme's discrete permittivity
   on the Yee grid (``r = (e^{j k2} - e^{j k1}) / (e^{-j k1} - e^{j k2})``, ``cos k = 1 -
   eps_d q / 2``; the analytic reference of ``tests/mindelec/fdtd/test_dispersive.py``) and
   with the continuum Fresnel coefficient ``(1 - n) / (1 + n)`` of the Drude model (which
   differs by a few percent: the skin depth ``c0 / omega_p`` is 1.6 cells here).
2. A plane wave at 30 and 60 degrees on a 2D TMz and TEz grid with an empty total-field box:
   the largest field in the scattered-field region (E, and eta0 H, relative to the incident
   wave) with the incident-field array (``PlaneWave(method="array")``) and with the
   interpolated, phase-matched auxiliary grid (``method="auxiliary"``).

Prints both and plots |r| and its phase (``<out-dir>/drude_reflection.png``,
default ``./dispersive_media_out``).

    python examples/mindelec/fdtd/dispersive_media/dispersive_media.py
    python examples/mindelec/fdtd/dispersive_media/dispersive_media.py --tiny
"""

import math
import pathlib

import numpy as np

from diffsci.mindelec import fdtd
from diffsci.mindelec.fdtd.dispersive import DispersiveMaterial, DrudePole, discrete_permittivity
from diffsci.mindelec.fdtd.monitors import Monitor
from diffsci.mindelec.fdtd.waveforms import Gaussian
from diffsci.scripts import ArgumentParser, default_out_dir

D = 1e-3
TWO_PI = 2 * math.pi


def _probe_1d(n, material, source, probe, steps):
    grid = fdtd.Grid((n,), D, dtype="float64")
    sim = fdtd.Simulation(
        grid,
        boundaries=fdtd.CPML(20),
        sources=[fdtd.PointSource("ez", (source,), Gaussian(15e9))],
        monitors=[fdtd.PointProbe("ez", (probe,))],
        dispersive=material,
    )
    return sim.run(steps)[1]["probe"].asnumpy(), grid


def drude_reflection(steps=2000, n=400, interface=250):
    """Measured, discrete-Fresnel and continuum reflection of a Drude half-space, 1-15 GHz."""
    source, probe = 100, 200
    material = DispersiveMaterial(
        DrudePole(TWO_PI * 30e9, TWO_PI * 5e9), region=(np.arange(n) >= interface).astype(float)
    )
    total, grid = _probe_1d(n, material, source, probe, steps)
    incident, _ = _probe_1d(n, None, source, probe, steps)
    f = np.linspace(1e9, 15e9, 57)
    w = TWO_PI * f
    kernel = np.exp(-1j * np.outer(w, (np.arange(steps) + 1) * grid.dt))
    # per-cell wavenumbers: vacuum k1 and the metal's k2 from cos k = 1 - eps q / 2
    k1 = 2 * np.arcsin(np.sin(w * grid.dt / 2) * D / (fdtd.C0 * grid.dt))
    q = (D * 2 / grid.dt * np.sin(w * grid.dt / 2) / fdtd.C0) ** 2
    measured = (kernel @ (total - incident)) / (kernel @ incident)
    measured = measured * np.exp(2j * k1 * (interface - probe))  # at node `interface`
    k2 = np.arccos(1 - discrete_permittivity(material, w, grid.dt) * q / 2)
    k2 = np.where(k2.imag > 0, -k2, k2)
    discrete = (np.exp(1j * k2) - np.exp(1j * k1)) / (np.exp(-1j * k1) - np.exp(1j * k2))
    index = np.sqrt(material.permittivity(w))
    # the physical interface is half a cell before the node: move the continuum value there
    continuum = (1 - index) / (1 + index) * np.exp(1j * k1)
    return {
        "f": f,
        "measured": measured,
        "discrete": discrete,
        "continuum": continuum,
        "err_discrete": float(np.max(np.abs(measured / discrete - 1))),
        "err_continuum": float(np.max(np.abs(measured / continuum - 1))),
    }


class _Field(Monitor):
    def __init__(self, component):
        self.component = self.name = component

    def record(self, state, step):
        return state.get(self.component)


def tfsf_leakage(mode, angle, method, n=64, steps=360):
    """Largest |E| and eta0 |H| in the scattered-field region over the run, and the largest
    incident |E| in the total-field box."""
    grid = fdtd.Grid((n, n), D, dtype="float64", mode=mode)
    lo, hi = (n * 9 // 32,) * 2, (n - n * 9 // 32,) * 2
    wave = fdtd.PlaneWave(lo, hi, Gaussian(7.5e9), direction=angle, method=method)
    sim = fdtd.Simulation(
        grid,
        boundaries=fdtd.CPML(10),
        sources=[wave],
        monitors=[_Field(c) for c in grid.components],
    )
    _, r = sim.run(steps)
    leak, peak = 0.0, 0.0
    for c in grid.components:
        field = r[c].numpy() * (1.0 if c[0] == "e" else fdtd.ETA0)
        inside = wave._inside(grid, c).astype(bool)
        leak = max(leak, float(np.abs(field[:, ~inside]).max()))
        if c[0] == "e":
            peak = max(peak, float(np.abs(field[:, inside]).max()))
    return leak, peak


def main(tiny=False, plot=True, verbose=True, out_dir=None):
    refl = drude_reflection(steps=1500 if tiny else 3000)
    cases = [("TMz", 30.0), ("TMz", 60.0), ("TEz", 30.0), ("TEz", 60.0)]
    if tiny:
        cases = cases[:1] + cases[-1:]
    leaks = {}
    for mode, angle in cases:
        for method in ("array", "auxiliary"):
            leaks[(mode, angle, method)] = tfsf_leakage(mode, angle, method)
    if verbose:
        print("1. Drude half-space (omega_p = 2 pi 30 GHz, gamma = 2 pi 5 GHz), 1-15 GHz:")
        print(f"   max |r / r_discrete - 1| = {refl['err_discrete']:.2e} (discrete Fresnel)")
        print(f"   max |r / r_continuum - 1| = {refl['err_continuum']:.2e} (continuum Drude)")
        print("2. TF/SF scattered-field leakage (max of E, eta0 H; incident amplitude 1):")
        for (mode, angle, method), (leak, peak) in leaks.items():
            print(f"   {mode} {angle:4.0f} deg {method:9s}: {leak:.2e} (box peak {peak:.4f})")
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        out_dir = pathlib.Path(out_dir or default_out_dir("dispersive_media"))
        out_dir.mkdir(parents=True, exist_ok=True)
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
        f = refl["f"] / 1e9
        for key, style in (("measured", "o"), ("discrete", "-"), ("continuum", "--")):
            ax1.plot(f, np.abs(refl[key]), style, label=key, markersize=3)
            ax2.plot(f, np.angle(refl[key]), style, label=key, markersize=3)
        ax1.set(xlabel="f (GHz)", ylabel="|r|", title="Drude half-space: |r|")
        ax2.set(xlabel="f (GHz)", ylabel="arg r (rad)", title="phase at the interface node")
        ax1.legend()
        fig.tight_layout()
        fig.savefig(out_dir / "drude_reflection.png", dpi=120)
        plt.close(fig)
    return {"reflection": refl, "leakage": leaks}


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="shorter runs, two TF/SF cases")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument(
        "--out-dir", default=default_out_dir("dispersive_media"), help="folder for the plot"
    )
    args = parser.parse_args()
    main(tiny=args.tiny, plot=not args.no_plot, out_dir=args.out_dir)
