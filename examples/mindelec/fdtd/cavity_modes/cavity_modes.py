"""Resonances of a 2D TMz PEC cavity against the Yee scheme's discrete dispersion relation.

A rectangular PEC box of ``nx x ny`` cells (non-square cells, incommensurate sides: no
degenerate modes) is rung by a soft Gaussian E_z pulse at a generic point; after the pulse the
probe E_z at another point is a sum of undamped cavity modes. Their frequencies are fitted by
least squares (``mindelec.fdtd.analysis.fit_frequencies``, variable projection) and compared
with the Yee dispersion relation (Taflove & Hagness eq. 4.12, ``analysis.yee_omega``) at
``k = (m pi / Lx, n pi / Ly)``: the relative errors are round-off small, while the continuum
frequencies ``c |k|`` are off by the grid dispersion (printed for contrast). Writes
``<out-dir>/spectrum.png`` (default ``./cavity_modes_out``): the probe spectrum with the
predicted lines.

    python examples/mindelec/fdtd/cavity_modes/cavity_modes.py            # 12 x 9, 20000 steps
    python examples/mindelec/fdtd/cavity_modes/cavity_modes.py --tiny     # 12 x 9, 3000 steps

The fit's cost grows with the number of modes in the band (``scipy.optimize.least_squares``
with a finite-difference Jacobian): a 24 x 17 cavity (about 40 modes) takes minutes.
"""

import pathlib

import numpy as np

from diffsci.mindelec import fdtd
from diffsci.mindelec.fdtd.analysis import cavity_omegas, fit_frequencies, spectral_peaks
from diffsci.mindelec.fdtd.waveforms import Gaussian
from diffsci.scripts import ArgumentParser, default_out_dir


def main(nx=12, ny=9, dx=1.0e-3, dy=1.3e-3, steps=20000, out_dir=None, plot=True, verbose=True):
    """Run the cavity, fit the modes below the pulse's band edge, compare with theory.

    Args:
        nx, ny: cells; dx, dy: cell size (m).
        steps: time steps (the fit uses those after the pulse).
        out_dir: folder for ``spectrum.png`` (default ``cavity_modes_out/`` in the current
            working directory).

    Returns:
        dict: ``modes [K, 2]``, ``f_fit``, ``f_yee``, ``f_continuum`` (Hz), ``amplitude``,
        ``rel_err`` (fit / Yee - 1), ``max_rel_err`` over the well-excited modes,
        ``max_continuum_err`` (|c |k| / Yee - 1| over the same modes).
    """
    grid = fdtd.Grid((nx, ny), (dx, dy), dtype="float64")
    f_src = fdtd.C0 / (10 * max(dx, dy))  # >= 10 cells per wavelength up to the -20 dB edge
    wave = Gaussian(f_src)
    source, probe = (nx // 5 + 1, ny // 4 + 1), (2 * nx // 3 + 1, 2 * ny // 3)
    sim = fdtd.Simulation(
        grid,
        sources=[fdtd.PointSource("ez", source, wave)],
        monitors=[fdtd.PointProbe("ez", probe)],
    )
    _, res = sim.run(steps)
    y = res["probe"].asnumpy()
    t = (np.arange(steps) + 1) * grid.dt  # E samples at (n + 1) dt
    # every mode the pulse excites above about 1e-5 (its spectrum is exp(-(pi f tau)^2)), less
    # those with a node at the source or the probe (E_z of mode (m, n) is exactly
    # sin(m pi i / nx) sin(n pi j / ny) on the grid: they are absent from the signal)
    modes, w_yee, w_cont = cavity_omegas(grid, 2.2 * f_src)
    shape_at = lambda p: np.prod(  # noqa: E731
        np.sin(modes * np.pi * np.array(p) / np.array([nx, ny])), axis=1
    )
    seen = np.abs(shape_at(source) * shape_at(probe)) > 1e-6
    modes, w_yee, w_cont = modes[seen], w_yee[seen], w_cont[seen]
    start = int(np.ceil(2 * wave.t0 / grid.dt))  # the source is off after 2 t0
    # start from the periodogram peak within a resolution bin of each line, not from theory
    guesses = spectral_peaks(y[start:], grid.dt, w_yee)
    w_fit, amp = fit_frequencies(y[start:], grid.dt, guesses, t0=t[start])
    rel = w_fit / w_yee - 1
    good = amp > 1e-3 * amp.max()  # modes with a node near the probe are not measurable
    result = {
        "modes": modes,
        "f_fit": w_fit / (2 * np.pi),
        "f_yee": w_yee / (2 * np.pi),
        "f_continuum": w_cont / (2 * np.pi),
        "amplitude": amp,
        "rel_err": rel,
        "max_rel_err": float(np.abs(rel[good]).max()),
        "max_continuum_err": float(np.abs(w_cont[good] / w_yee[good] - 1).max()),
        "n_measured": int(good.sum()),
        "guess_rel_err": float(np.abs(guesses[good] / w_yee[good] - 1).max()),
    }
    if verbose:
        print(f"TMz PEC cavity {nx} x {ny} cells of {dx * 1e3:g} x {dy * 1e3:g} mm, {steps} steps")
        print("  (m, n)   f_fit (GHz)      f_Yee (GHz)      fit/Yee - 1   c|k|/Yee - 1   amp")
        for mn, ff, fy, fc, a, r in zip(
            modes, result["f_fit"], result["f_yee"], result["f_continuum"], amp, rel
        ):
            print(
                f"  {tuple(int(v) for v in mn)!s:8} {ff / 1e9:15.10f}  {fy / 1e9:15.10f}  "
                f"{r:+.2e}     {fc / fy - 1:+.2e}      {a:.1e}"
            )
        print(
            f"max |fit/Yee - 1| over {result['n_measured']} measurable modes: "
            f"{result['max_rel_err']:.2e} (continuum c|k| off by up to "
            f"{result['max_continuum_err']:.2e}; the periodogram start by "
            f"{result['guess_rel_err']:.1e})"
        )
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        folder = pathlib.Path(out_dir or default_out_dir("cavity_modes"))
        folder.mkdir(parents=True, exist_ok=True)
        seg = y[start:]
        n = 8 * len(seg)
        spec = np.abs(np.fft.rfft(seg * np.hanning(len(seg)), n))
        f = np.fft.rfftfreq(n, grid.dt)
        band = f < 2.3 * f_src
        fig, ax = plt.subplots(figsize=(8, 4))
        ax.semilogy(f[band] / 1e9, spec[band], lw=0.8, label="probe E_z spectrum (Hann)")
        for i, fy in enumerate(result["f_yee"]):
            ax.axvline(
                fy / 1e9, color="r", lw=0.6, ls="--", label="Yee prediction" if i == 0 else None
            )
        ax.set_xlabel("frequency (GHz)")
        ax.set_ylabel("|FFT| (a.u.)")
        ax.set_title(f"PEC cavity {nx}x{ny}: max |f_fit/f_Yee - 1| = {result['max_rel_err']:.1e}")
        ax.legend(loc="lower left")
        fig.tight_layout()
        fig.savefig(folder / "spectrum.png", dpi=120)
        plt.close(fig)
        if verbose:
            print(f"wrote {folder / 'spectrum.png'}")
    return result


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nx", type=int, default=12)
    parser.add_argument("--ny", type=int, default=9)
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--tiny", action="store_true", help="3000 steps")
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("cavity_modes"))
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args()
    if args.tiny:
        args.nx, args.ny, args.steps = 12, 9, 3000
    main(nx=args.nx, ny=args.ny, steps=args.steps, out_dir=args.out_dir, plot=not args.no_plot)
