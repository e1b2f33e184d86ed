"""Power radiated by a 3D Hertzian dipole through a Poynting flux box vs eta (k I l)^2 / (12 pi).

One z-directed edge of a cubic grid carries an impressed current ``I(t)`` (``CurrentSource``:
a dipole of moment ``I d``), a DC-free normalised derivative of a Gaussian (no static charge
is left behind). The grid is closed by ``CPML``; a ``FluxMonitor`` box two cells inside the
PML accumulates the running DFT of E and H on its faces and reports the time-averaged power
``P(f) = 1/2 Re sum (E x H^*) . n dA``. With the DFT ``I(f)`` of the injected current the
reference is the radiated power of a Hertzian dipole (Balanis, *Antenna Theory*, eq. 4-16;
``flux.dipole_power``)

    P(f) = eta0 (k |I(f)| d)^2 / (12 pi),     k = 2 pi f / c0.

Prints ``P_fdtd / P_ref - 1`` per frequency (the remaining error is the grid's dispersion and
the CPML's residual reflection: about 1% at 20 cells per wavelength, less above) and writes
``<out-dir>/dipole.png`` (default ``./dipole_radiation_out``): a slice of E_z through the
dipole while the pulse travels out, and the power ratio against frequency.

    python examples/mindelec/fdtd/dipole_radiation/dipole_radiation.py          # 44^3, 450 steps
    python examples/mindelec/fdtd/dipole_radiation/dipole_radiation.py --tiny   # 24^3, 200 steps
"""

import pathlib

import numpy as np

from diffsci.core import ops
from diffsci.mindelec import fdtd
from diffsci.mindelec.fdtd.flux import FluxMonitor, dipole_power
from diffsci.mindelec.fdtd.lumped import CurrentSource
from diffsci.mindelec.fdtd.monitors import Monitor
from diffsci.mindelec.fdtd.waveforms import NormDGaussian
from diffsci.scripts import ArgumentParser, default_out_dir

D = 1e-3
FREQS = np.array([3e9, 5e9, 7.5e9, 10e9, 15e9])  # 100 .. 20 cells per wavelength


class ZSlice(Monitor):
    """E_z on the plane ``z = k`` (index) at one chosen step: the carry keeps that snapshot."""

    def __init__(self, k, at_step, name="slice"):
        self.k, self.at_step, self.name = int(k), int(at_step), name

    def init_carry(self, grid, state):
        return state.get("ez")[:, :, self.k] * 0.0

    def update(self, carry, state, step):
        hit = ops.astype(step == self.at_step, carry.dtype)
        return carry * (1 - hit) + hit * state.get("ez")[:, :, self.k], None

    def finalize(self, carry, values):
        return carry


def current_spectrum(source, steps, dt, freqs):
    """DFT of the injected current at the times it is injected, ``(n + 1/2) dt`` (A s)."""
    t = (np.arange(steps) + 0.5) * dt
    i = np.asarray(source.current(t), dtype=float)
    return (i[None, :] * np.exp(-2j * np.pi * np.outer(freqs, t))).sum(axis=1) * dt


def main(n=44, steps=450, npml=10, out_dir=None, plot=True, verbose=True):
    """Radiate, measure the flux, compare; returns ``{"freqs", "ratio" (P / P_ref), "max_err",
    "power", "reference", "slice"}``."""
    grid = fdtd.Grid((n, n, n), D, dtype="float64")
    centre = (n // 2,) * 3
    source = CurrentSource("z", centre, NormDGaussian(15e9))
    m = npml + 2
    snap = int(0.45 * steps)
    sim = fdtd.Simulation(
        grid,
        boundaries=fdtd.CPML(npml),
        sources=[source],
        monitors=[FluxMonitor((m,) * 3, (n - m,) * 3, FREQS), ZSlice(n // 2, snap)],
    )
    _, res = sim.run(steps)
    power = res["flux"].asnumpy()
    reference = dipole_power(FREQS, current_spectrum(source, steps, grid.dt, FREQS) * D)
    ratio = power / reference
    result = {
        "freqs": FREQS,
        "power": power,
        "reference": reference,
        "ratio": ratio,
        "max_err": float(np.abs(ratio - 1).max()),
        "slice": res["slice"].asnumpy(),
    }
    if verbose:
        print(f"Hertzian dipole, {n}^3 cells of {D * 1e3:g} mm, CPML({npml}), {steps} steps")
        print("  f (GHz)  cells/wavelength  P_fdtd (W s^2)   P_ref (W s^2)    P/P_ref - 1")
        for f, p, r, q in zip(FREQS, power, reference, ratio):
            print(f"  {f / 1e9:7.2f}  {fdtd.C0 / f / D:16.0f}  {p:.6e}    {r:.6e}    {q - 1:+.4f}")
        print(f"max |P/P_ref - 1| = {result['max_err']:.4f}")
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from diffsci.mindelec.fdtd.io import plot_field

        folder = pathlib.Path(out_dir or default_out_dir("dipole_radiation"))
        folder.mkdir(parents=True, exist_ok=True)
        fig, (a0, a1) = plt.subplots(1, 2, figsize=(11, 4.5))
        plot_field(
            result["slice"], spacing=(D, D), ax=a0, title=f"E_z (V/m), z = {n // 2} d, step {snap}"
        )
        a1.plot(FREQS / 1e9, ratio - 1, "o-")
        a1.axhline(0, color="k", lw=0.5)
        a1.set_xlabel("frequency (GHz)")
        a1.set_ylabel("P_fdtd / P_ref - 1")
        a1.set_title("flux-box power vs eta (k I l)^2 / (12 pi)")
        a1.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(folder / "dipole.png", dpi=120)
        plt.close(fig)
        if verbose:
            print(f"wrote {folder / 'dipole.png'}")
    return result


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=44)
    parser.add_argument("--steps", type=int, default=450)
    parser.add_argument("--npml", type=int, default=10)
    parser.add_argument("--tiny", action="store_true", help="24^3 cells, CPML(6), 200 steps")
    parser.add_argument(
        "--out-dir", aliases=["--out"], default=default_out_dir("dipole_radiation")
    )
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args()
    if args.tiny:
        args.n, args.steps, args.npml = 24, 200, 6
    main(args.n, args.steps, args.npml, out_dir=args.out_dir, plot=not args.no_plot)
