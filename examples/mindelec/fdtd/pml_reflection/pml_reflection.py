"""Reflection of a 10-cell CFS-CPML against frequency, at normal incidence and at 60 degrees.

A 2D TMz point source (soft E_z, Gaussian pulse up to ``fmax``, 20 cells per wavelength there)
sits a few cells from the x-high face of a box closed by ``CPML(10)`` (MindElec's
``CFSParameters`` defaults: order 4, sigma 1.5 sigma_opt, kappa 11, alpha 0.05 .. 0; Roden &
Gedney 2000). A probe records E_z:

- normal incidence: probe on the source's row between the source and the PML;
- 60 degrees: source and probe ``h`` cells from the PML face and ``sep`` cells apart along y,
  so the specular echo meets the face at ``atan(sep / (2 h))`` (about 60 degrees).

The same probe in a PEC box padded so far that nothing returns within the record is the
reference; the reflection is ``|F(field - reference)| / |F(reference)|`` in dB
(``mindelec.fdtd.analysis.reflection_spectrum``), printed and plotted against frequency
(``<out-dir>/reflection.png``, default ``./pml_reflection_out``). A PEC wall in place of the
CPML is printed for contrast (about -5 dB: it sits 10 cells further, and the 2D cylindrical
wave spreads over the longer path; the measurement sees a reflection when there is one).

    python examples/mindelec/fdtd/pml_reflection/pml_reflection.py          # longer records
    python examples/mindelec/fdtd/pml_reflection/pml_reflection.py --tiny
"""

import math
import pathlib

import numpy as np

from diffsci.mindelec import fdtd
from diffsci.mindelec.fdtd.analysis import reflection_spectrum
from diffsci.mindelec.fdtd.waveforms import Gaussian
from diffsci.scripts import ArgumentParser, default_out_dir

D = 1e-3
FMAX = fdtd.C0 / (20 * D)  # 20 cells per wavelength at the top of the band
COURANT = 0.7  # of c dt / d; the 2D limit is 1 / sqrt(2)


def _probe(shape, source, probe, boundaries, steps):
    grid = fdtd.Grid(shape, D, courant=COURANT, dtype="float64")
    sim = fdtd.Simulation(
        grid,
        boundaries=boundaries,
        sources=[fdtd.PointSource("ez", source, Gaussian(FMAX))],
        monitors=[fdtd.PointProbe("ez", probe)],
    )
    return sim.run(steps)[1]["probe"].asnumpy(), grid.dt


def _reference(shape, source, probe, steps):
    pad = steps // 2 + 10  # c dt < d / sqrt(2): the walls' echo needs more than `steps` steps
    shift = lambda p: tuple(i + pad for i in p)  # noqa: E731
    big = tuple(n + 2 * pad for n in shape)
    return _probe(big, shift(source), shift(probe), fdtd.PEC(), steps)[0]


def measure(case, cells, steps, freqs, with_pec=False):
    """Reflection (dB) at ``freqs`` for ``case`` "normal" or "oblique", and the time-domain
    peak ratio (dB); with ``with_pec`` also the reflection of a PEC wall in place of the PML."""
    if case == "normal":
        n = (cells + 40, 51)
        source, probe = (n[0] - cells - 15, 25), (n[0] - cells - 3, 25)
        angle = 0.0
    else:
        h, sep = 5, 17
        n = (cells + h + 30, 60 + sep)
        source, probe = (n[0] - cells - h, 30), (n[0] - cells - h, 30 + sep)
        angle = math.degrees(math.atan(sep / (2 * h)))
    pml = fdtd.CPML(cells)  # on every face; the nearest (x high) returns the first echo
    field, dt = _probe(n, source, probe, pml, steps)
    reference = _reference(n, source, probe, steps)
    out = {
        "angle": angle,
        "db": reflection_spectrum(field, reference, dt, freqs),
        "peak_db": 20 * math.log10(np.abs(field - reference).max() / np.abs(reference).max()),
    }
    if with_pec:
        pec = {"x": (fdtd.CPML(cells), fdtd.PEC()), "y": fdtd.CPML(cells)}
        wall, _ = _probe(n, source, probe, pec, steps)
        out["pec_db"] = reflection_spectrum(wall, reference, dt, freqs)
    return out


def main(cells=10, steps_normal=400, steps_oblique=500, out_dir=None, plot=True, verbose=True):
    """Measure both cases; returns ``{"freqs": [nf] Hz, "normal": {...}, "oblique": {...}}``
    with ``db`` (reflection spectrum), ``peak_db`` and ``angle`` (degrees) per case, and
    ``max_db`` (worst in-band reflection)."""
    freqs = np.linspace(0.05, 1.0, 40) * FMAX
    result = {"freqs": freqs}
    for case, steps in (("normal", steps_normal), ("oblique", steps_oblique)):
        r = measure(case, cells, steps, freqs, with_pec=case == "normal")
        r["max_db"] = float(r["db"].max())
        result[case] = r
        if verbose:
            extra = f", PEC wall {r['pec_db'].min():+.1f} dB" if "pec_db" in r else ""
            print(
                f"CPML({cells}) at {r['angle']:.1f} deg ({steps} steps): worst in-band "
                f"{r['max_db']:.1f} dB, time-domain peak {r['peak_db']:.1f} dB{extra}"
            )
    if verbose:
        print("  f (GHz)  normal (dB)  oblique (dB)")
        for f, a, b in zip(freqs[::4], result["normal"]["db"][::4], result["oblique"]["db"][::4]):
            print(f"  {f / 1e9:7.2f}  {a:10.1f}  {b:11.1f}")
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        folder = pathlib.Path(out_dir or default_out_dir("pml_reflection"))
        folder.mkdir(parents=True, exist_ok=True)
        fig, ax = plt.subplots(figsize=(7, 4))
        for case in ("normal", "oblique"):
            r = result[case]
            ax.plot(freqs / 1e9, r["db"], label=f"CPML({cells}), {r['angle']:.0f} deg")
        ax.plot(freqs / 1e9, result["normal"]["pec_db"], "k:", label="PEC wall, 0 deg")
        ax.set_xlabel("frequency (GHz)")
        ax.set_ylabel("reflection (dB)")
        ax.set_title("CFS-CPML vs a large reference domain (20 cells/wavelength at 15 GHz)")
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(folder / "reflection.png", dpi=120)
        plt.close(fig)
        if verbose:
            print(f"wrote {folder / 'reflection.png'}")
    return result


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=10)
    parser.add_argument("--tiny", action="store_true", help="short records (170 / 330 steps)")
    parser.add_argument(
        "--out-dir", aliases=["--out"], default=default_out_dir("pml_reflection")
    )
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args()
    steps = (170, 330) if args.tiny else (400, 500)
    main(args.cells, *steps, out_dir=args.out_dir, plot=not args.no_plot)
