"""S11 of a printed planar antenna fed by a lumped port: MindElec's inverted-F antenna (IFA).

The printed-antenna case with a reference curve we can commit is MindElec's
(``AD_FDTD/fdtd_forward/solve_invert_f.py``; the line-fed patch of Sheen et al. 1990 has no
published data file): a substrate of eps_r = 2.2, 0.787 mm thick (3 cells of 0.262 mm along
x) and 40 x 40 mm (100 x 100 cells of 0.4 mm in y, z) with a ground plane on the back face
over y = 0..40 cells only (the upper part of the board is the antenna's clearance). On the
front face a 6-cell-wide feed strip runs from the board edge (y = 0) up to y = 71 at
z = 60..66, joined at the top by the 60-cell radiating arm (y = 65..71, z = 21..81), a second
arm (y = 52..58, z = 40..81) and a short (y = 40..71, z = 75..81) that a PEC wall through the
substrate at y = 40 ties to the ground plane. A lumped 50-ohm port (``VoltageSource`` along
+x, three series edges, seven in parallel) between ground and strip at the board edge feeds
it; the board sits in 3 cells of air inside a 10-cell CFS-CPML (alpha_max 0.05).

PEC sheets are ``structures.PECPlate`` (zero thickness), the substrate ``structures.CellMedium``
(edges on its faces get the mean of the cells around them). S11 = b / a from the port's own
voltage and current monitors (Kurokawa's power waves referred to 50 ohm,
``sparams.s_matrix``). Reported: the S11 minima (the resonances; the reference has them near
2.43 and 5.74 GHz) and their depths. Writes ``<out-dir>/invert_f.s1p`` (default
``./patch_antenna_out``) and ``invert_f.png`` (|S11| dB and phase, the reference dashed).

The reference curve ``reference/invert_f_s11_ref.txt`` is MindElec's dataset (frequency GHz,
|S11| dB), copied unchanged; ``reference/PROVENANCE.md`` says where from.

    python examples/mindelec/fdtd/patch_antenna/patch_antenna.py          # 29x126x126, 7000 steps
    python examples/mindelec/fdtd/patch_antenna/patch_antenna.py --tiny   # 4x coarser in y, z, 800 steps
"""

import pathlib
import time

import numpy as np

from diffsci.mindelec import fdtd
from diffsci.mindelec.fdtd.lumped import VoltageSource, port_times
from diffsci.mindelec.fdtd.sparams import SParameterSolver, plot_sparams
from diffsci.mindelec.fdtd.structures import CellMedium, PECPlate
from diffsci.mindelec.fdtd.touchstone import write_touchstone
from diffsci.mindelec.fdtd.waveforms import Gaussian
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent
REFERENCE = HERE / "reference" / "invert_f_s11_ref.txt"
CELL = (0.262e-3, 0.4e-3, 0.4e-3)  # m
EPS_SUBSTRATE = 2.2
BOARD = (3, 100, 100)  # cells
# front-face strips (y_lo, z_lo), (y_hi, z_hi) in nodes of the published cells
STRIPS = (
    ((0, 60), (71, 66)),  # feed
    ((40, 75), (71, 81)),  # shorting arm
    ((65, 21), (71, 81)),  # radiating arm
    ((52, 40), (58, 81)),  # second arm
)
GROUND_Y = 40  # the back-face ground plane covers y = 0..40
FEED_Z = (60, 66)
SHORT_Z = (75, 81)


def load_reference():
    """``(f_hz, s11_db)`` sorted by frequency."""
    data = np.loadtxt(REFERENCE, delimiter=",")
    data = data[np.argsort(data[:, 0])]
    return data[:, 0] * 1e9, data[:, 1]


def build(coarsen=1, npml=10, air=3, dtype="float64", fmax=10e9, courant=0.9):
    """The IFA driven by a 1 V Gaussian (``fmax``) through its 50-ohm port.

    ``coarsen=4`` quarters the resolution in y and z (node indices rounded down: the tiny mode,
    a pipeline check, not the antenna). Returns ``(simulation, grid)``; monitors ``p1_v``, ``p1_i``.
    """
    c = int(coarsen)
    board = (BOARD[0], BOARD[1] // c, BOARD[2] // c)
    pad = npml + air
    shape = tuple(n + 2 * pad for n in board)
    spacing = (CELL[0], CELL[1] * c, CELL[2] * c)
    probe = fdtd.Grid(shape, spacing, dtype=dtype)
    grid = fdtd.Grid(shape, spacing, dtype=dtype, courant=courant * probe.courant_limit)
    back, front = pad, pad + board[0]

    def node(x, y, z):
        return (x, pad + y // c, pad + z // c)

    eps = np.ones(shape)
    eps[back:front, pad : pad + board[1], pad : pad + board[2]] = EPS_SUBSTRATE
    pec = PECPlate(shape, "x", node(back, 0, 0), node(back, GROUND_Y, BOARD[2]), name="ground")
    for (y0, z0), (y1, z1) in STRIPS:
        pec = pec + PECPlate(shape, "x", node(front, y0, z0), node(front, y1, z1))
    pec = pec + PECPlate(
        shape, "y", node(back, GROUND_Y, SHORT_Z[0]), node(front, GROUND_Y, SHORT_Z[1])
    )
    lo = node(back, 0, FEED_Z[0])
    hi = node(front, 0, FEED_Z[1])
    port = VoltageSource(
        "x", lo, (hi[0], lo[1] + 1, hi[2] + 1), waveform=Gaussian(fmax), resistance=50.0, name="p1"
    )
    sim = fdtd.Simulation(
        grid,
        boundaries=fdtd.CPML(npml, alpha_max=0.05),
        sources=[CellMedium(eps, name="substrate"), pec, port],
        monitors=[port.voltage_monitor(), port.current_monitor()],
    )
    return sim, grid


def minima(freqs, db, depth_db=3.0, window=20):
    """Local minima of ``db`` at least ``depth_db`` below the max of ``window`` samples each
    side, refined by a parabola through three samples: ``(f_hz, db)`` arrays."""
    fs, vals = [], []
    for k in range(1, len(freqs) - 1):
        if db[k] < db[k - 1] and db[k] <= db[k + 1]:
            if db[max(0, k - window) : k + window + 1].max() - db[k] < depth_db:
                continue
            a, b, cc = db[k - 1 : k + 2]
            curv = a - 2 * b + cc
            shift = 0.5 * (a - cc) / curv if curv != 0 else 0.0
            fs.append(freqs[k] + shift * (freqs[k + 1] - freqs[k]))
            vals.append(b - 0.25 * (a - cc) * shift)
    return np.array(fs), np.array(vals)


def _paired_rel_err(found, reference):
    """``|f / f_ref - 1|`` for each reference minimum against the nearest one found (nan if
    none was found)."""
    if found.size == 0:
        return np.full(reference.shape, np.nan)
    nearest = found[np.argmin(np.abs(found[None, :] - reference[:, None]), axis=1)]
    return np.abs(nearest / reference - 1)


def main(
    tiny=False, steps=None, out_dir=None, plot=True, verbose=True, dtype="float64", freqs=None
):
    """Run, extract S11, compare with the reference, write the Touchstone file and the plot.

    Returns a dict: ``freqs`` (Hz), ``s11`` complex ``[nf]``, ``resonances_ghz``/``depths_db``
    and the reference's ``ref_resonances_ghz``/``ref_depths_db``, ``resonance_rel_err`` (per
    reference minimum, against the nearest found), ``touchstone`` (path),
    ``seconds``, ``cells``, ``steps``, ``decay`` (last 100 samples' max |V| over the max).
    """
    coarsen, npml, air = (4, 4, 1) if tiny else (1, 10, 3)
    steps = int(steps or (800 if tiny else 7000))
    freqs = np.linspace(0.1e9, 10e9, 200 if tiny else 496) if freqs is None else freqs
    out = pathlib.Path(out_dir or default_out_dir("patch_antenna"))
    sim, grid = build(coarsen, npml, air, dtype)
    t0 = time.perf_counter()
    _, res = sim.run(steps)
    seconds = time.perf_counter() - t0
    v, i = res["p1_v"].numpy(), res["p1_i"].numpy()
    t_v, t_i = port_times(steps, grid.dt)
    solver = SParameterSolver(lambda e: (v[:, None], i[:, None]), 1, grid.dt, t_v, t_i, z0=50.0)
    solver.solve()
    s11 = solver.eval(freqs).numpy()[:, 0, 0]
    db = 20 * np.log10(np.abs(s11))
    rf, rdb = load_reference()
    res_f, res_db = minima(freqs, db)
    ref_f, ref_db = minima(rf, rdb, depth_db=3.0, window=4)
    out.mkdir(parents=True, exist_ok=True)
    touchstone = write_touchstone(
        out / "invert_f.s1p",
        freqs,
        s11,
        z0=50.0,
        comments=(
            "mindelec.fdtd: MindElec's printed inverted-F antenna, S11 at the lumped port",
            f"grid {grid.shape} cells, {steps} steps of {grid.dt:.6g} s, {dtype}"
            + (", tiny (4x coarser in y, z)" if tiny else ""),
        ),
    )
    if plot:
        fig = plot_sparams(freqs, s11[:, None, None], reference={(1, 1): (rf, rdb)})
        fig.suptitle("Printed inverted-F antenna: mindelec.fdtd vs MindElec's reference")
        fig.savefig(out / "invert_f.png", dpi=120)
    decay = float(np.abs(v[-100:]).max() / np.abs(v).max())
    result = {
        "freqs": freqs,
        "s11": s11,
        "resonances_ghz": res_f / 1e9,
        "depths_db": res_db,
        "ref_resonances_ghz": ref_f / 1e9,
        "ref_depths_db": ref_db,
        "resonance_rel_err": _paired_rel_err(res_f, ref_f),
        "touchstone": touchstone,
        "seconds": seconds,
        "cells": int(np.prod(grid.shape)),
        "steps": steps,
        "decay": decay,
    }
    if verbose:
        mcells = steps * result["cells"] / seconds / 1e6
        print(
            f"grid {grid.shape} ({result['cells']} cells), dt {grid.dt:.4g} s, {steps} steps, "
            f"{dtype}: {seconds:.1f} s ({mcells:.1f} M cell-updates/s)"
        )
        print(f"late-time |V| / max |V| (last 100 steps): {decay:.2e}")
        print(
            "S11 minima (GHz):",
            np.round(result["resonances_ghz"], 3),
            "depths (dB):",
            np.round(res_db, 1),
        )
        print(
            "reference minima (GHz):",
            np.round(result["ref_resonances_ghz"], 3),
            "depths (dB):",
            np.round(ref_db, 1),
        )
        print("relative frequency error:", np.round(result["resonance_rel_err"], 4))
        print(f"wrote {touchstone}")
    return result


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="4x coarser in y and z, 800 steps")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--float32", action="store_true", help="float32 fields")
    parser.add_argument(
        "--out-dir", aliases=["--out"], default=default_out_dir("patch_antenna"),
        help="output folder",
    )
    args = parser.parse_args()
    main(
        tiny=args.tiny,
        steps=args.steps,
        out_dir=args.out_dir,
        dtype="float32" if args.float32 else "float64",
    )
