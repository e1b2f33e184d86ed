"""FDTD benchmark: 3D Yee update with a 10-cell PML on 128^3 cells, float32, against the roofline.

The case (issue 15): a 128^3-cell vacuum box, a 10-cell absorbing layer on all six faces
(inside the 128 cells), float32 fields, a soft point source at the centre, run from zero
fields. Rate = cells x steps / seconds (million cell-updates per second; one update advances
all six components by one time step). Rows, each in a fresh interpreter:

- ``ours``: ``mindelec.fdtd.Simulation`` with ``CPML(10)`` (CFS-CPML, Roden & Gedney 2000),
  ``run(steps)``: the whole loop staged as one ``core.ops.scan`` under ``core.jit``, each half
  step one native C pass (``mindelec/fdtd/native_yee.py``; threads: ``core``'s pool);
- ``fdtd``: the ``fdtd`` package (0.3.5, pip ``fdtd``; ``numpy.float32`` backend; its own PML,
  ``fdtd.PML`` on the six faces; ``Grid.step``);
- ``gprMax``: gprMax 3 (Cython + OpenMP, float32; its CFS-PML, ``#pml_cells: 10``), timed
  around its ``solve_cpu`` loop (the solve only, not the model build). gprMax has no wheel on
  PyPI; build it from its repository (Cython and OpenMP; its ``setup.py`` also lists its
  ``tests``, ``tools`` and ``user_libs`` folders as packages, which the row does not need):

      pip install Cython psutil terminaltables colorama tqdm h5py
      git clone https://github.com/gprMax/gprMax && cd gprMax
      python setup.py build_ext --inplace        # then: GPRMAX_PATH=$PWD python -m bench.fdtd

  (or copy the built ``gprMax`` folder to ``.ref/gprMax-<commit>/`` in this repository, where
  the row looks by default, or any install that makes ``import gprMax`` work). Its thread
  count is ``OMP_NUM_THREADS`` (set from ``--threads``); ``OMP_WAIT_POLICY`` is ``PASSIVE``
  unless set: OpenMP threads that spin at barriers on a shared machine burn the cores the
  other thread needs (measured here under load, 2 threads: 58 s wall / 15 CPU-s spinning,
  13.5 s / 3.6 CPU-s passive, for 100 steps).

Both clocks are reported: wall (``time.perf_counter``) and CPU (``time.process_time``, all
threads of the process together); on a shared machine the CPU clock is the steadier one, and
at 1 thread the two agree on a quiet machine. Each rate is the best of ``--repeats`` timed runs
after a warm-up run (which compiles our graph and kernels).

Roofline: the kernel is memory bound. Bytes per cell-update of our kernel are counted from its
plan (``native_yee.HalfStep``): per half step, the curl's source components read, the old
components read, the new ones written, every coefficient map the kernel reads (uniform media:
none; maps are counted whole), and the CPML psi slabs read and written where they exist (the
PML fraction: ``psi cells / cells``); the 1D CPML profiles and mask vectors are negligible and
not counted. Without streaming stores a new line is read before it is written (write-allocate):
printed as a note, not counted. Copy bandwidth: ``numpy.copyto`` of a 256 MiB float32 array,
best of 10, bytes read + written, split over the row's thread count (numpy releases the GIL;
each thread copies its part). Roofline rate = bandwidth / bytes per cell-update.

    python -m bench.fdtd                       # default threads, then 1 thread
    python -m bench.fdtd --threads 1 --rows ours gprMax
    python -m bench.fdtd --tiny                # toy size (what tests/bench runs)
"""

import argparse
import glob
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

__all__ = [
    "CASE",
    "ROWS",
    "bytes_per_cell",
    "copy_bandwidth",
    "format_table",
    "main",
    "run_case",
    "run_row",
]

CASE = {"n": 128, "pml": 10, "steps": 100, "spacing": 1e-3}
TINY = {"n": 24, "pml": 4, "steps": 4, "spacing": 1e-3}
ROWS = ("ours", "fdtd", "gprMax")
# fewer steps for the slow pure-NumPy row: its rate does not depend on the count
STEPS_FACTOR = {"ours": 1, "fdtd": 0.05, "gprMax": 1}


def _simulation(cfg):
    from diffsci.mindelec import fdtd
    from diffsci.mindelec.fdtd.waveforms import Gaussian

    n, c = cfg["n"], cfg["n"] // 2
    grid = fdtd.Grid((n, n, n), cfg["spacing"], dtype="float32")
    # a pulse resolved by >= 20 cells per wavelength (no resolution warning)
    pulse = Gaussian(0.5 * 3e8 / (20 * cfg["spacing"]))
    return fdtd.Simulation(
        grid, None, fdtd.CPML(cfg["pml"]), sources=[fdtd.PointSource("ez", (c, c, c), pulse)]
    )


def bytes_per_cell(sim):
    """``(total, parts)``: bytes our native half steps move per cell-update (one full step of
    every cell), and the per-item breakdown ``{label: bytes}`` (see the module docstring)."""
    cells = int(np.prod(sim.grid.shape))
    size = _itemsize(sim)
    state = sim.initial_state()
    parts = {}
    for kind in ("h", "e"):
        plan, _ = sim._plans[kind]
        arrays = [x.asnumpy() for x in plan.operands(state, sim.coeffs)]
        masked, _stream = plan.variant(arrays)
        maps = [
            c
            for c in plan.coef_names
            if plan.coef_kinds[c] == "map" and not (masked and c in plan.masked)
        ]
        parts[f"{kind}: sources read"] = size * len(plan.sources())
        parts[f"{kind}: olds read"] = size * len(plan.terms)
        parts[f"{kind}: news written"] = size * len(plan.terms)
        parts[f"{kind}: coefficient maps read"] = size * len(maps)
        psi_cells = sum(int(np.prod(s)) for s in plan.psi_shapes.values())
        parts[f"{kind}: psi read + written"] = 2 * size * psi_cells / cells
    return sum(parts.values()), parts


def _itemsize(sim):
    return 4 if "32" in str(sim.grid.dtype) else 8


def _streams(sim):
    """Whether the native kernels stream their outputs (both half steps)."""
    state = sim.initial_state()
    out = []
    for kind in ("h", "e"):
        plan, _ = sim._plans[kind]
        out.append(plan.variant([x.asnumpy() for x in plan.operands(state, sim.coeffs)])[1])
    return all(out)


def copy_bandwidth(threads=1, mib=256, repeats=10):
    """``(wall, cpu)``: bytes read + written per second by ``numpy.copyto`` of a ``mib`` MiB
    float32 array, split in ``threads`` parts copied by as many Python threads, best of
    ``repeats``: per second of wall clock, and per CPU second of the process (all threads),
    the clock that matches the rows' CPU rates."""
    from concurrent.futures import ThreadPoolExecutor

    a = np.ones(mib * 2**20 // 4, dtype=np.float32)
    b = np.empty_like(a)
    bounds = np.linspace(0, a.size, threads + 1).astype(int)
    pieces = [(b[lo:hi], a[lo:hi]) for lo, hi in itertools.pairwise(bounds)]
    wall = cpu = float("inf")
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(repeats + 1):
            t0, c0 = time.perf_counter(), time.process_time()
            list(pool.map(lambda p: np.copyto(*p), pieces))
            wall = min(wall, time.perf_counter() - t0)
            cpu = min(cpu, time.process_time() - c0)
    return 2 * a.nbytes / wall, 2 * a.nbytes / max(cpu, 1e-9)


# ---- rows -------------------------------------------------------------------------------------
def _ours(cfg, steps):
    sim = _simulation(cfg)

    def run():
        state, _ = sim.run(steps)
        state.get("ez").asnumpy()

    info = {"bytes_per_cell": bytes_per_cell(sim)[0], "streaming": _streams(sim)}
    return run, info


def _import_fdtd():
    """``import fdtd``, undoing what it does to PyTorch on import: fdtd 0.3.5 turns autograd off
    process-wide and makes float64 torch's default dtype (``fdtd/backend.py``), which broke
    every later torch comparison in the same test process."""
    try:
        import torch
    except ImportError:
        import fdtd

        return fdtd
    grad, dtype = torch.is_grad_enabled(), torch.get_default_dtype()
    try:
        import fdtd
    finally:
        torch.set_grad_enabled(grad)
        torch.set_default_dtype(dtype)
    return fdtd


def _fdtd_package(cfg, steps):
    fdtd = _import_fdtd()

    fdtd.set_backend("numpy.float32")
    n, p, c = cfg["n"], cfg["pml"], cfg["n"] // 2
    grid = fdtd.Grid(shape=(n, n, n), grid_spacing=cfg["spacing"], permittivity=1.0)
    grid[0:p, :, :] = fdtd.PML(name="pml_xlow")
    grid[-p:, :, :] = fdtd.PML(name="pml_xhigh")
    grid[:, 0:p, :] = fdtd.PML(name="pml_ylow")
    grid[:, -p:, :] = fdtd.PML(name="pml_yhigh")
    grid[:, :, 0:p] = fdtd.PML(name="pml_zlow")
    grid[:, :, -p:] = fdtd.PML(name="pml_zhigh")
    grid[c, c, c] = fdtd.PointSource(period=20, name="source")
    # fdtd 0.3.5's "numpy.float32" backend still builds float64 arrays with this NumPy (its
    # check ``result.dtype in {numpy.float32, ...}`` compares dtypes with types in a set,
    # which is never true): cast every float64 array of the grid and its objects
    for holder in (grid, *grid.boundaries, *grid.sources):
        for key, value in vars(holder).items():
            if isinstance(value, np.ndarray) and value.dtype == np.float64:
                setattr(holder, key, value.astype(np.float32))
    grid.step()
    assert grid.E.dtype == np.float32 and grid.H.dtype == np.float32, grid.E.dtype

    def run():
        for _ in range(steps):
            grid.step()

    return run, {"version": getattr(fdtd, "__version__", "?")}


_GPRMAX_INPUT = """#title: bench.fdtd {n}^3 with a {p}-cell PML
#domain: {size:.6f} {size:.6f} {size:.6f}
#dx_dy_dz: {d:.6f} {d:.6f} {d:.6f}
#time_window: {iterations}
#pml_cells: {p}
#waveform: gaussian 1 {freq:.6e} pulse
#hertzian_dipole: z {centre:.6f} {centre:.6f} {centre:.6f} pulse
"""


def _gprmax_path():
    """Where a built gprMax tree is: ``$GPRMAX_PATH``, else ``.ref/gprMax*`` in the repository
    (ignored by git, like the other reference installs), else None (``import gprMax``)."""
    path = os.environ.get("GPRMAX_PATH")
    if path:
        return path
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for found in sorted(glob.glob(os.path.join(root, ".ref", "gprMax*"))):
        if os.path.isdir(os.path.join(found, "gprMax")):
            return found
    return None


def _gprmax(cfg, steps):
    path = _gprmax_path()
    if path:
        sys.path.insert(0, path)
    saved = np.geterr()
    import gprMax.gprMax as gpr_main
    import gprMax.model_build_run as mbr

    # gprMax's modules call np.seterr(divide/invalid="raise") on import: keep those modes for
    # its own runs only, not for the rest of this process (a later test would inherit them)
    gprmax_modes = np.geterr()
    np.seterr(**saved)

    n, p, d = cfg["n"], cfg["pml"], cfg["spacing"]
    timings = []
    solve = mbr.solve_cpu

    def timed_solve(*args):
        t0, c0 = time.perf_counter(), time.process_time()
        out = solve(*args)
        timings.append((time.perf_counter() - t0, time.process_time() - c0))
        return out

    mbr.solve_cpu = timed_solve
    workdir = tempfile.mkdtemp(prefix="bench_gprmax_")
    infile = os.path.join(workdir, "model.in")
    with open(infile, "w") as f:
        f.write(
            _GPRMAX_INPUT.format(
                n=n,
                p=p,
                size=n * d,
                d=d,
                iterations=steps,
                freq=0.5 * 3e8 / (20 * d),
                centre=(n // 2 + 0.5) * d,
            )
        )

    def run():
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()), np.errstate(**gprmax_modes):
            gpr_main.api(infile)
        return timings[-1]

    return run, {"input": "gprMax 3, float32, CFS-PML"}


def run_row(row, threads=None, tiny=False, steps=None, repeats=3):
    """One row in this process: ``{"wall": s, "cpu": s, "steps", "cells", "threads", ...}``
    (best of ``repeats`` timed runs after one warm-up; ``threads`` must be set before the
    first run: a fresh process, see :func:`run_case`)."""
    from diffsci import core

    cfg = dict(TINY if tiny else CASE)
    steps = max(1, round((steps or cfg["steps"]) * STEPS_FACTOR[row]))
    if threads:
        core.set_num_threads(threads)
    build = {"ours": _ours, "fdtd": _fdtd_package, "gprMax": _gprmax}[row]
    run, info = build(cfg, steps)
    run()  # warm-up: compiles our graph and kernels
    wall = cpu = float("inf")
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        inner = run()
        w, c = time.perf_counter() - t0, time.process_time() - c0
        if inner is not None:  # gprMax: its solve loop only
            w, c = inner
        wall, cpu = min(wall, w), min(cpu, c)
    if row == "gprMax":
        used = int(os.environ.get("OMP_NUM_THREADS", threads or core.get_num_threads()))
    else:
        used = core.get_num_threads() if row == "ours" else 1
    return {
        "wall": wall,
        "cpu": cpu,
        "steps": steps,
        "cells": cfg["n"] ** 3,
        "threads": used,
        **info,
    }


def _available(row):
    import importlib.util

    if row == "fdtd":
        return importlib.util.find_spec("fdtd") is not None, "skipped: pip install fdtd==0.3.5"
    if row == "gprMax":
        path = _gprmax_path()
        if path and os.path.isdir(os.path.join(path, "gprMax")):
            return True, ""
        found = importlib.util.find_spec("gprMax") is not None
        return found, "skipped: gprMax is not importable (see the module docstring to build it)"
    return True, ""


def run_case(threads=None, tiny=False, steps=None, repeats=3, rows=ROWS, timeout=900):
    """Every row, each in a fresh interpreter: ``[(row, result or None, note)]``."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = []
    for row in rows:
        ok, why = _available(row)
        if not ok:
            out.append((row, None, why))
            continue
        env = dict(os.environ)
        if threads:
            env["DIFFSCI_NUM_THREADS"] = str(threads)
            env["OMP_NUM_THREADS"] = str(threads)
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        spec = json.dumps([row, threads, tiny, steps, repeats])
        cmd = [sys.executable, "-m", "bench.fdtd", "--_row", spec]
        try:
            res = subprocess.run(
                cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            out.append((row, None, f"timed out after {timeout} s"))
            continue
        lines = res.stdout.strip().splitlines()
        if res.returncode != 0 or not lines:
            tail = (res.stderr or res.stdout).strip().splitlines()
            out.append((row, None, "failed: " + (tail[-1] if tail else f"exit {res.returncode}")))
            continue
        out.append((row, json.loads(lines[-1]), ""))
    return out


def rates(result):
    """``(wall, cpu)`` million cell-updates per second of a row's result."""
    work = result["cells"] * result["steps"] / 1e6
    return work / result["wall"], work / result["cpu"]


def format_table(results, bandwidth, title=""):
    """The rows (Mcell-updates/s on both clocks, ours / row) and the roofline lines
    (``bandwidth``: ``(wall, cpu)`` bytes per second, as ``copy_bandwidth`` returns)."""
    ours = next((r for name, r, _ in results if name == "ours" and r), None)
    lines = [
        f"FDTD 3D CPML {title}".rstrip(),
        f"  {'row':<8} {'Mcell/s wall':>12} {'Mcell/s cpu':>12} {'ours/row wall':>14} "
        f"{'ours/row cpu':>13} {'steps':>6} {'threads':>7}",
    ]
    for name, r, note in results:
        if r is None:
            lines.append(f"  {name:<8} {note}")
            continue
        w, c = rates(r)
        if ours:
            ow, oc = rates(ours)
            ratios = f"{ow / w:>14.2f} {oc / c:>13.2f}"
        else:
            ratios = f"{'-':>14} {'-':>13}"
        lines.append(
            f"  {name:<8} {w:>12.1f} {c:>12.1f} {ratios} {r['steps']:>6} {r['threads']:>7}"
        )
    if ours:
        per_cell = ours["bytes_per_cell"]
        for clock, bw, rate in zip(("wall", "cpu"), bandwidth, rates(ours), strict=True):
            roof = bw / per_cell / 1e6
            lines.append(
                f"  roofline ({clock} clock): {per_cell:.1f} bytes/cell-update (ours) at "
                f"{bw / 1e9:.1f} GB/s (numpy copy, {ours['threads']} thread(s)) = "
                f"{roof:.0f} Mcell/s; ours {rate:.0f} = {rate / roof:.2f} of it"
            )
        if not ours["streaming"]:
            lines.append("  (outputs not streamed: write-allocate reads come on top)")
    return "\n".join(lines)


def _header(tiny):
    from diffsci import core

    cfg = TINY if tiny else CASE
    return (
        f"{cfg['n']}^3 cells, {cfg['pml']}-cell PML on 6 faces, float32, vacuum, point source; "
        f"core threads (default) {core.get_num_threads()}, CPU {_cpu_name()}, "
        f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'PASSIVE')}"
    )


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def _breakdown(tiny):
    sim = _simulation(TINY if tiny else CASE)
    total, parts = bytes_per_cell(sim)
    text = ", ".join(f"{k} {v:.2f}" for k, v in parts.items())
    return f"bytes per cell-update {total:.1f} = {text}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--threads",
        type=int,
        action="append",
        help="thread counts to run (default: the machine's default, then 1)",
    )
    parser.add_argument("--steps", type=int, help=f"steps per run (default {CASE['steps']})")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS))
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--_row", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._row:
        row, threads, tiny, steps, repeats = json.loads(args._row)
        print(json.dumps(run_row(row, threads, tiny, steps, repeats)))
        return None
    from diffsci import core

    print(_header(args.tiny), flush=True)
    print(_breakdown(args.tiny), flush=True)
    tables = {}
    for threads in args.threads or [None, 1]:
        n = threads or core.get_num_threads()
        bandwidth = copy_bandwidth(n, mib=16 if args.tiny else 256)
        results = run_case(threads, args.tiny, args.steps, args.repeats, rows=args.rows)
        label = "default threads" if threads is None else f"{threads} thread(s)"
        print(format_table(results, bandwidth, f"({label})"), flush=True)
        tables[threads] = (results, bandwidth)
    return tables


if __name__ == "__main__":
    main()
