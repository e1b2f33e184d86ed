"""The microstrip low-pass filter (``microstrip_filter.py``) split over MPI ranks.

The same problem as the serial example (Sheen, Ali, Abouzahra & Kong, IEEE T-MTT 38(7), 1990:
Duroid substrate, PEC strips and ground, two 50-ohm lumped ports, CFS-CPML), built by its
``build`` and run with ``mindelec.fdtd.distributed.DistributedSimulation.from_simulation``: the
grid is cut into equal x slabs, one per rank, with one-layer halo exchanges per half step and
the serial native C update on each slab. The port and reference-plane voltages and currents
are summed on rank 0, which extracts the 2-port S-matrix exactly as the serial script
(Kurokawa power waves, ``S = B A^-1``), compares |S21| with the published curve and writes
``<out-dir>/microstrip_filter_mpi.s2p`` and ``microstrip_filter_mpi.npz`` (signals and S;
default ``./microstrip_filter_out``).
``--check-serial`` also runs the serial ``Simulation`` on rank 0 and prints the largest
difference of the S-matrices (round-off: the fields are the serial ones cell by cell).

    mpiexec -n 2 python examples/mindelec/fdtd/microstrip_filter/microstrip_filter_mpi.py
    mpiexec -n 2 python .../microstrip_filter_mpi.py --tiny --check-serial   # 60x56x13, 400 steps

The published cells with the serial example's 8-cell CPML and 3 cells of air give 72 x 68 x 25
cells (2, 3, 4, 6, 8 ... ranks divide 72); ``--tiny`` keeps the published cells with a 4-cell
CPML and 1 cell of air (60 x 56 x 13) and 400 steps (the wave crosses the filter; the S-matrix
is not converged).
"""

import importlib.util
import pathlib
import time

import numpy as np

from diffsci.core import communication as comm
from diffsci.mindelec.fdtd.distributed import DistributedSimulation
from diffsci.mindelec.fdtd.lumped import port_times
from diffsci.mindelec.fdtd.sparams import SParameterSolver, reciprocity_error
from diffsci.mindelec.fdtd.touchstone import write_touchstone
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent


def _serial_example():
    path = HERE / "microstrip_filter.py"
    spec = importlib.util.spec_from_file_location("microstrip_filter", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def s_matrices(runs, dt, steps, freqs):
    """``{"ports": S, "planes": S}`` ``[nf, 2, 2]`` from the two excitations' results."""
    t_v, t_i = port_times(steps, dt)
    out = {}
    for key, (a, b) in {"ports": ("p1", "p2"), "planes": ("r1", "r2")}.items():
        solver = SParameterSolver(
            lambda e, a=a, b=b: (
                np.stack([runs[e][f"{a}_v"], runs[e][f"{b}_v"]], axis=1),
                np.stack([runs[e][f"{a}_i"], runs[e][f"{b}_i"]], axis=1),
            ),
            2,
            dt,
            t_v,
            t_i,
            z0=50.0,
        )
        solver.solve()
        out[key] = solver.eval(freqs, method="solve").numpy()
    return out


def main(tiny=False, steps=None, out_dir=None, check_serial=False, verbose=True):
    """Run both excitations on the ranks; on rank 0 return a dict with ``freqs``, ``s`` and
    ``s_ports`` (``[nf, 2, 2]``), ``seconds``, ``ranks``, ``cells``, ``steps`` and, with
    ``check_serial``, ``serial_seconds`` and ``max_rel_diff`` (max |S - S_serial| / max |S|
    over both S-matrices); None on the other ranks."""
    comm.init()
    rank, size = comm.get_rank(), comm.get_group_size()
    example = _serial_example()
    npml, air = (4, 1) if tiny else (8, 3)
    steps = int(steps or (400 if tiny else 8000))
    freqs = np.linspace(0.1e9, 20e9, 200 if tiny else 400)
    sims = [example.build(e, 1, npml, air)[0] for e in (0, 1)]
    grid = sims[0].grid
    runs, seconds = {}, 0.0
    for e, serial in enumerate(sims):
        dist = DistributedSimulation.from_simulation(serial)
        comm.barrier()
        t0 = time.perf_counter()
        _, res = dist.run(steps)
        seconds += time.perf_counter() - t0
        runs[e] = {k: v.numpy() for k, v in res.items()}
    if rank != 0:
        return None
    s = s_matrices(runs, grid.dt, steps, freqs)
    result = {
        "freqs": freqs,
        "s": s["planes"],
        "s_ports": s["ports"],
        "seconds": seconds,
        "ranks": size,
        "cells": int(np.prod(grid.shape)),
        "steps": steps,
        "reciprocity_ports": reciprocity_error(s["ports"]),
    }
    summary = example.compare(freqs, s["planes"], example.load_reference())
    if check_serial:
        t0 = time.perf_counter()
        serial_runs = {e: {k: v.numpy() for k, v in sim.run(steps)[1].items()}
                       for e, sim in enumerate(sims)}  # fmt: skip
        result["serial_seconds"] = time.perf_counter() - t0
        ref = s_matrices(serial_runs, grid.dt, steps, freqs)
        result["max_rel_diff"] = max(
            float(np.abs(s[k] - ref[k]).max() / np.abs(ref[k]).max()) for k in ref
        )
    out = pathlib.Path(out_dir or default_out_dir("microstrip_filter"))
    out.mkdir(parents=True, exist_ok=True)
    np.savez(
        out / "microstrip_filter_mpi.npz",
        freqs=freqs,
        s=s["planes"],
        s_ports=s["ports"],
        **{f"e{e}_{k}": v for e, res in runs.items() for k, v in res.items()},
    )
    write_touchstone(
        out / "microstrip_filter_mpi.s2p",
        freqs,
        s["planes"],
        z0=50.0,
        comments=(
            "mindelec.fdtd.distributed: microstrip low-pass filter (Sheen et al. 1990)",
            f"grid {grid.shape} cells on {size} x slabs, {steps} steps of {grid.dt:.6g} s",
        ),
    )
    if verbose:
        mcells = 2 * steps * result["cells"] / seconds / 1e6
        print(
            f"grid {grid.shape} on {size} ranks, {steps} steps x 2 excitations: {seconds:.1f} s "
            f"({mcells:.1f} M cell-updates/s)"
        )
        print(
            f"|S21| -10 dB crossing {summary['crossing_ghz']:.3f} GHz (reference "
            f"{summary['ref_crossing_ghz']:.3f}); notches (GHz) "
            f"{np.round(summary['notches_ghz'], 3)}; reciprocity at the ports "
            f"{result['reciprocity_ports']:.1e}"
        )
        if check_serial:
            print(
                f"serial Simulation on rank 0: {result['serial_seconds']:.1f} s; max |S - "
                f"S_serial| / max |S| = {result['max_rel_diff']:.2e}"
            )
    return result


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="60x56x13 cells, 400 steps")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument(
        "--out-dir", aliases=["--out"], default=default_out_dir("microstrip_filter"),
        help="output folder",
    )
    parser.add_argument("--check-serial", action="store_true", help="compare with Simulation")
    args = parser.parse_args()
    main(tiny=args.tiny, steps=args.steps, out_dir=args.out_dir, check_serial=args.check_serial)
