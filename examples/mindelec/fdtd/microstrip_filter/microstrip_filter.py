"""S-parameters of the microstrip low-pass filter of Sheen et al. (1990) against the reference.

The case (Sheen, Ali, Abouzahra & Kong, "Application of the three-dimensional finite-difference
time-domain method to the analysis of planar microstrip circuits", IEEE T-MTT 38(7), 849-857,
1990; MindElec's ``AD_FDTD/fdtd_forward/solve_microstrip_filter.py``): a Duroid
substrate (eps_r = 2.2, 0.794 mm = 3 cells) of 50 x 46 cells of 0.4064 x 0.4233 x 0.265 mm
with a ground plane underneath and, on top, a 50 x 6-cell strip (20.32 x 2.54 mm) along x
with two 6-cell-wide, 20-cell-long feed lines (2.438 x 8.466 mm, about 50 ohm) leaving it
in y at x = 14..20 and 30..36 cells. Strips and ground are zero-thickness PEC sheets
(``structures.PECPlate``), the substrate a per-cell medium averaged onto the edges
(``structures.CellMedium``: the air-substrate interface gets (1 + 2.2) / 2). Each feed ends
at the board edge in a lumped 50-ohm port between strip and ground (``VoltageSource``: three
series edges, seven in parallel), and the board sits in 3 cells of air inside an 8-cell
CFS-CPML (MindElec's order 3, sigma_factor 1.3, kappa_max 7, alpha_max 0.05).

Port voltages and currents are read where MindElec reads them, on the feed lines 10 cells from
each board edge (``VoltageMonitor`` strip-to-ground, ``CurrentMonitor`` looping the strip),
and the S-matrix referred to 50 ohm is ``S = B A^{-1}`` from the two excitations (Kurokawa's
power waves, ``sparams.s_matrix(method="solve")``). The ports' own monitors give a second
S-matrix at the lumped ports, whose reciprocity ``S21 = S12`` is exact on the grid.

Reported: the |S21| notch frequencies (published near 7.0 and 8.4 GHz), the first -10 dB
crossing of |S21| against the reference curve's, and the worst |S21| dB difference in the
passband (0.5 - 5 GHz). Writes ``<out-dir>/microstrip_filter.s2p`` (default
``./microstrip_filter_out``; Touchstone, 50 ohm) and ``microstrip_filter.png`` (|S| dB and
phase, reference dashed).

The reference curves ``reference/microstrip_filter_s{11,21}_ref.txt`` are MindElec's dataset
(frequency GHz, |S| dB), copied unchanged; ``reference/PROVENANCE.md`` says where from.

    python examples/mindelec/fdtd/microstrip_filter/microstrip_filter.py          # 72x68x25, 8000 steps x 2
    python examples/mindelec/fdtd/microstrip_filter/microstrip_filter.py --tiny   # 2x coarser, 1000 steps x 2
"""

import pathlib
import time

import numpy as np

from diffsci.mindelec import fdtd
from diffsci.mindelec.fdtd.lumped import CurrentMonitor, VoltageMonitor, VoltageSource, port_times
from diffsci.mindelec.fdtd.sparams import SParameterSolver, passivity, plot_sparams, reciprocity_error
from diffsci.mindelec.fdtd.structures import CellMedium, PECPlate
from diffsci.mindelec.fdtd.touchstone import write_touchstone
from diffsci.mindelec.fdtd.waveforms import Gaussian
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent
REFERENCE = HERE / "reference"
CELL = (0.4064e-3, 0.4233e-3, 0.265e-3)  # m
EPS_SUBSTRATE = 2.2
# board layout in node indices of the full-resolution board (MindElec's numbers)
BOARD = (50, 46, 3)
STRIP_1 = ((14, 0), (20, 20))  # (x_lo, y_lo), (x_hi, y_hi) nodes
STRIP_2 = ((30, 26), (36, 46))
CENTRE = ((0, 20), (50, 26))
MONITOR_Y = (10, 36)  # reference planes on the two feed lines
PASSBAND = (0.5e9, 5.0e9)


def load_reference():
    """``{(1, 1): (f_hz, db), (2, 1): (f_hz, db)}`` sorted by frequency."""
    out = {}
    for key, name in (((1, 1), "s11"), ((2, 1), "s21")):
        data = np.loadtxt(REFERENCE / f"microstrip_filter_{name}_ref.txt", delimiter=",")
        data = data[np.argsort(data[:, 0])]
        out[key] = (data[:, 0] * 1e9, data[:, 1])
    return out


def build(excited, coarsen=1, npml=8, air=3, dtype="float64", fmax=20e9, courant=0.9):
    """The filter with port ``excited`` (0 or 1) driven by a 1 V Gaussian (``fmax``) and the
    other terminated in 50 ohm.

    Args:
        coarsen: 1 (the published cells) or 2 (twice as coarse in x and y: the tiny mode).
        npml, air: CPML and air cells around the board.
        courant: fraction of the grid's Courant limit (MindElec: 0.9).

    Returns:
        ``(simulation, grid)``; the monitors are ``p{1,2}_v``/``p{1,2}_i`` (ports) and
        ``r{1,2}_v``/``r{1,2}_i`` (reference planes).
    """
    if coarsen not in (1, 2):
        raise ValueError(
            f"coarsen must be 1 or 2 (the layout's node indices are even), got {coarsen}"
        )
    c = coarsen
    board = (BOARD[0] // c, BOARD[1] // c, BOARD[2])
    pad = npml + air
    shape = tuple(n + 2 * pad for n in board)
    spacing = (CELL[0] * c, CELL[1] * c, CELL[2])
    probe = fdtd.Grid(shape, spacing, dtype=dtype)
    grid = fdtd.Grid(shape, spacing, dtype=dtype, courant=courant * probe.courant_limit)

    def node(x, y, z=0):
        return (pad + x // c, pad + y // c, pad + z)

    eps = np.ones(shape)
    eps[pad : pad + board[0], pad : pad + board[1], pad : pad + board[2]] = EPS_SUBSTRATE
    top = board[2]
    pec = PECPlate(shape, "z", node(0, 0), node(BOARD[0], BOARD[1]), name="ground")
    for (x0, y0), (x1, y1) in (STRIP_1, STRIP_2, CENTRE):
        pec = pec + PECPlate(shape, "z", node(x0, y0, top), node(x1, y1, top))
    wave = Gaussian(fmax)
    ports = []
    for p, ((x0, _), (x1, _)), y in ((0, STRIP_1, 0), (1, STRIP_2, BOARD[1])):
        lo = node(x0, y)
        hi = node(x1, y, top)
        ports.append(
            VoltageSource(
                "z",
                lo,
                (hi[0] + 1, lo[1] + 1, hi[2]),
                waveform=wave,
                resistance=50.0,
                amplitude=float(p == excited),
                name=f"p{p + 1}",
            )
        )
    monitors = [m for port in ports for m in (port.voltage_monitor(), port.current_monitor())]
    # reference planes: V strip-to-ground, I around the strip flowing into the filter
    for p, ((x0, _), (x1, _)), y, into in (
        (0, STRIP_1, MONITOR_Y[0], "y"),
        (1, STRIP_2, MONITOR_Y[1], "-y"),
    ):
        lo, hi = node(x0, y), node(x1, y, top)
        stop = (hi[0] + 1, lo[1] + 1)
        monitors.append(VoltageMonitor("z", lo, (*stop, hi[2]), name=f"r{p + 1}_v"))
        monitors.append(
            CurrentMonitor(into, (lo[0], lo[1], hi[2]), (*stop, hi[2] + 1), name=f"r{p + 1}_i")
        )
    sim = fdtd.Simulation(
        grid,
        boundaries=fdtd.CPML(npml, order=3, sigma_factor=1.3, kappa_max=7.0, alpha_max=0.05),
        sources=[CellMedium(eps, name="substrate"), pec, *ports],
        monitors=monitors,
    )
    return sim, grid


def notches(freqs, s21_db, band=(6.0e9, 9.5e9), depth_db=3.0):
    """Local minima of |S21| dB in ``band`` at least ``depth_db`` below their surroundings,
    refined by a parabola through the three samples (Hz)."""
    out = []
    for k in range(1, len(freqs) - 1):
        if not band[0] <= freqs[k] <= band[1]:
            continue
        if s21_db[k] < s21_db[k - 1] and s21_db[k] <= s21_db[k + 1]:
            window = s21_db[max(0, k - 20) : k + 21]
            if window.max() - s21_db[k] < depth_db:
                continue
            a, b, c = s21_db[k - 1 : k + 2]
            shift = 0.5 * (a - c) / (a - 2 * b + c) if (a - 2 * b + c) != 0 else 0.0
            out.append(freqs[k] + shift * (freqs[k + 1] - freqs[k]))
    return np.array(out)


def first_crossing(freqs, db, level=-10.0):
    """First frequency where ``db`` falls through ``level`` (linear interpolation, Hz)."""
    for k in range(len(freqs) - 1):
        if db[k] > level >= db[k + 1]:
            return freqs[k] + (level - db[k]) / (db[k + 1] - db[k]) * (freqs[k + 1] - freqs[k])
    return float("nan")


def compare(freqs, s, reference):
    """Notches, -10 dB crossings and passband error of |S21| against ``reference``."""
    db21 = 20 * np.log10(np.abs(s[:, 1, 0]))
    rf, rdb = reference[(2, 1)]
    fine = np.linspace(rf[0], rf[-1], 4000)
    ref_fine = np.interp(fine, rf, rdb)
    crossing, ref_crossing = first_crossing(freqs, db21), first_crossing(fine, ref_fine)
    band = (freqs >= PASSBAND[0]) & (freqs <= PASSBAND[1])
    passband_err = np.abs(db21[band] - np.interp(freqs[band], rf, rdb))
    return {
        "notches_ghz": notches(freqs, db21) / 1e9,
        "ref_notches_ghz": notches(rf, rdb, depth_db=1.0) / 1e9,
        "crossing_ghz": crossing / 1e9,
        "ref_crossing_ghz": ref_crossing / 1e9,
        "crossing_rel_err": abs(crossing / ref_crossing - 1),
        "passband_max_db_err": float(passband_err.max()),
        "s21_db": db21,
    }


def main(
    tiny=False, steps=None, out_dir=None, plot=True, verbose=True, dtype="float64", freqs=None
):
    """Run both excitations, extract S, compare, write the Touchstone file and the plot.

    Returns a dict: ``freqs`` (Hz), ``s`` (reference planes) and ``s_ports`` (at the lumped
    ports), ``[nf, 2, 2]`` complex; the ``compare`` numbers; ``reciprocity`` of each;
    ``max_singular_value``/``max_singular_value_ports`` (passivity: <= 1 once the ringing has
    decayed); ``touchstone`` (path); ``seconds`` (the two runs); ``cells``, ``steps``, ``decay`` (last
    100 samples' max |V| over the run's max).
    """
    coarsen, npml, air = (2, 4, 2) if tiny else (1, 8, 3)
    steps = int(steps or (1000 if tiny else 8000))
    freqs = np.linspace(0.1e9, 20e9, 200 if tiny else 400) if freqs is None else freqs
    out = pathlib.Path(out_dir or default_out_dir("microstrip_filter"))
    sims = [build(e, coarsen, npml, air, dtype) for e in (0, 1)]
    grid = sims[0][1]
    names = {"ports": ("p1", "p2"), "planes": ("r1", "r2")}
    runs = {}
    t0 = time.perf_counter()
    for e, (sim, _) in enumerate(sims):
        _, res = sim.run(steps)
        runs[e] = {k: v.numpy() for k, v in res.items()}
    seconds = time.perf_counter() - t0
    t_v, t_i = port_times(steps, grid.dt)
    results = {}
    for key, (a, b) in names.items():
        solver = SParameterSolver(
            lambda e, a=a, b=b: (
                np.stack([runs[e][f"{a}_v"], runs[e][f"{b}_v"]], axis=1),
                np.stack([runs[e][f"{a}_i"], runs[e][f"{b}_i"]], axis=1),
            ),
            2,
            grid.dt,
            t_v,
            t_i,
            z0=50.0,
        )
        solver.solve()
        results[key] = solver.eval(freqs, method="solve").numpy()
    s, s_ports = results["planes"], results["ports"]
    v_all = np.abs(np.concatenate([runs[e]["r1_v"] for e in (0, 1)]))
    decay = float(np.abs(runs[0]["r1_v"][-100:]).max() / v_all.max())
    reference = load_reference()
    summary = compare(freqs, s, reference)
    out.mkdir(parents=True, exist_ok=True)
    touchstone = write_touchstone(
        out / "microstrip_filter.s2p",
        freqs,
        s,
        z0=50.0,
        comments=(
            "mindelec.fdtd: microstrip low-pass filter (Sheen et al., IEEE T-MTT 38(7) 1990)",
            f"grid {grid.shape} cells, {steps} steps of {grid.dt:.6g} s, {dtype}, "
            + ("tiny (2x coarser)" if tiny else "published cells"),
            "reference planes 10 cells inside the board edges (MindElec's monitors)",
        ),
    )
    if plot:
        fig = plot_sparams(
            freqs,
            s,
            pairs=[(1, 1), (2, 1)],
            reference=reference,
            path=out / "microstrip_filter.png",
        )
        fig.suptitle("Microstrip low-pass filter (Sheen et al. 1990): mindelec.fdtd vs reference")
        fig.savefig(out / "microstrip_filter.png", dpi=120)
    result = {
        "freqs": freqs,
        "s": s,
        "s_ports": s_ports,
        "reciprocity": reciprocity_error(s),
        "reciprocity_ports": reciprocity_error(s_ports),
        "max_singular_value": passivity(s)[1],
        "max_singular_value_ports": passivity(s_ports)[1],
        "touchstone": touchstone,
        "seconds": seconds,
        "cells": int(np.prod(grid.shape)),
        "steps": steps,
        "decay": decay,
        **summary,
    }
    if verbose:
        mcells = 2 * steps * result["cells"] / seconds / 1e6
        print(
            f"grid {grid.shape} ({result['cells']} cells), dt {grid.dt:.4g} s, {steps} steps x 2 "
            f"excitations, {dtype}: {seconds:.1f} s ({mcells:.1f} M cell-updates/s)"
        )
        print(f"late-time |V| / max |V| (last 100 steps): {decay:.2e}")
        print(
            "|S21| notches (GHz):",
            np.round(result["notches_ghz"], 3),
            " reference:",
            np.round(result["ref_notches_ghz"], 3),
        )
        print(
            f"|S21| -10 dB crossing: {result['crossing_ghz']:.3f} GHz, reference "
            f"{result['ref_crossing_ghz']:.3f} GHz ({100 * result['crossing_rel_err']:.2f}%)"
        )
        print(
            f"passband {PASSBAND[0] / 1e9:g}-{PASSBAND[1] / 1e9:g} GHz: max ||S21| - ref| = "
            f"{result['passband_max_db_err']:.3f} dB"
        )
        print(
            f"reciprocity max|S - S^T|/max|S|: reference planes {result['reciprocity']:.2e}, "
            f"lumped ports {result['reciprocity_ports']:.2e}"
        )
        print(
            f"passivity, max singular value of S: reference planes "
            f"{result['max_singular_value']:.4f}, lumped ports "
            f"{result['max_singular_value_ports']:.4f}"
        )
        print(f"wrote {touchstone}")
    return result


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="2x coarser board, 1000 steps")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--float32", action="store_true", help="float32 fields")
    parser.add_argument(
        "--out-dir", aliases=["--out"], default=default_out_dir("microstrip_filter"),
        help="output folder",
    )
    args = parser.parse_args()
    main(
        tiny=args.tiny,
        steps=args.steps,
        out_dir=args.out_dir,
        dtype="float32" if args.float32 else "float64",
    )
