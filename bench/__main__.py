"""``python -m bench [W1 W2 W3 W4 MM] [--quick] [--threads N] [--malloc-tune] [--no-rss]
[--no-memory] [--only ours torch] [--json out.json]``: one table per case with time ratios
ours/this and peak memory, then summary tables.

Without ``--threads`` two passes run: one at every library's default thread count (what users
get: ours ``core.get_num_threads()``, PyTorch's ``torch.get_num_threads()``, BLAS's and XLA's
own), then the same workloads in a child process with every pool at one thread (thread pools
are sized when a library loads, so the child sets them before importing anything). The run
ends with one summary table per pass. ``--threads N`` runs one pass at N threads."""

import argparse
import json
import os
import platform
import sys
import time

from . import WORKLOAD_MODULES, get_workload


def _limit_threads(n):
    """Cap every thread pool at ``n`` (set before numpy/torch/jax are imported; the RSS probe
    subprocesses inherit it). Useful on a shared machine: an OpenMP pool with more threads than
    free cores spins at its barriers and makes timings erratic."""
    for var in (
        "DIFFSCI_NUM_THREADS",
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "NUMEXPR_NUM_THREADS",
    ):
        os.environ[var] = str(n)
    if n == 1:
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = (
            flags + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        ).strip()


def _tune_malloc():
    """Keep freed memory in glibc's heap for reuse (no mmap per large block, no trimming), in
    this process and the RSS probes. Large numpy/torch temporaries then stop paying first-touch
    page faults on every step, which on some machines (VMs) costs as much as the arithmetic."""
    import ctypes

    os.environ["MALLOC_MMAP_MAX_"] = "0"
    os.environ["MALLOC_TRIM_THRESHOLD_"] = str(1 << 36)
    libc = ctypes.CDLL("libc.so.6")
    libc.mallopt(-4, 0)  # M_MMAP_MAX
    libc.mallopt(-1, ctypes.c_int(2**31 - 1))  # M_TRIM_THRESHOLD


def _versions():
    import numpy as np

    parts = [f"python {platform.python_version()}", f"numpy {np.__version__}"]
    for mod in ("torch", "jax"):
        try:
            m = __import__(mod)
            parts.append(f"{mod} {m.__version__}")
        except ImportError:
            parts.append(f"{mod} not installed (its rows are skipped)")
    try:
        import torch

        parts.append(f"torch threads {torch.get_num_threads()}")
    except ImportError:
        pass
    from diffsci import core
    from diffsci.core.backend import cc, threads

    native = "thread pool" if cc.parallel() else "no C compiler"
    parts.append(
        f"diffsci threads {core.get_num_threads()} (native kernels: {native}, "
        f"BLAS {sorted(set(threads.blas_threads()))})"
    )
    parts.append(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    if os.environ.get("MALLOC_MMAP_MAX_") == "0":
        parts.append("malloc tuned (no mmap, no trim)")
    if os.environ.get("OMP_NUM_THREADS"):
        parts.append(f"OMP/BLAS threads {os.environ['OMP_NUM_THREADS']}")
    return ", ".join(parts)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    ap.add_argument(
        "workloads", nargs="*", help=f"subset of {' '.join(WORKLOAD_MODULES)} (default: all)"
    )
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    ap.add_argument("--no-rss", action="store_true", help="skip the RSS subprocess probes")
    ap.add_argument("--no-memory", action="store_true", help="skip all memory measurements")
    ap.add_argument(
        "--only",
        nargs="+",
        metavar="FRAMEWORK",
        help="only rows of these frameworks or labels (ours, torch, jax.jit, ...)",
    )
    ap.add_argument("--json", metavar="PATH", help="also write the measurements as JSON")
    ap.add_argument(
        "--threads",
        type=int,
        metavar="N",
        help="one pass with ours, BLAS, OpenMP, torch and XLA at N threads (default: two "
        "passes, libraries' default threads then 1 thread)",
    )
    ap.add_argument("--no-summary", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument(
        "--malloc-tune",
        action="store_true",
        help="glibc: reuse freed heap memory instead of mmap/munmap per large array (all rows)",
    )
    args = ap.parse_args(argv)
    if args.threads:
        _limit_threads(args.threads)
    if args.malloc_tune:
        _tune_malloc()
    from .harness import format_case, jit_available, rows_to_json, run_case

    keys = [k.upper() for k in args.workloads] or list(WORKLOAD_MODULES)
    for k in keys:
        if k not in WORKLOAD_MODULES:
            ap.error(f"unknown workload {k!r}; choose from {', '.join(WORKLOAD_MODULES)}")

    print(f"diffsci bench: {_versions()}")
    print(
        "median = median over samples of the time per call, after warm-up, all rows in this"
        "\nprocess; ours/this = our time / this row's time (< 1 means we are faster);"
        "\ncheck = max |diff| / max|ref| of the first step's outputs vs our row;"
        "\ntracemalloc = MiB allocated by Python+numpy during one step (blind to torch/XLA"
        "\nallocators); RSS = MiB of new resident memory during one step, measured in a fresh"
        "\nsubprocess per row (all frameworks). core.jit: "
        + (
            "present, 'ours jit' rows added"
            if jit_available()
            else "not yet in core, no 'ours jit' rows"
        )
    )
    t_start = time.perf_counter()
    report = []
    for key in keys:
        wl = get_workload(key)
        print(f"\n{wl.key}  {wl.title}")
        notes = wl.notes()
        if notes:
            print(f"  {notes}")
        for cfg in wl.cases(args.quick):
            rows = run_case(
                wl,
                cfg,
                quick=args.quick,
                memory=not args.no_memory,
                rss=not (args.no_rss or args.no_memory),
                only=args.only,
                log=lambda *a, **k: print(*a, **k, file=sys.stderr, flush=True),
            )
            print(format_case(wl, cfg, rows), flush=True)
            report.append(rows_to_json(wl, cfg, rows))
    print(
        f"\ntotal {time.perf_counter() - t_start:.0f} s, load average now {os.getloadavg()[0]:.1f}"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, default=float)
    if args.no_summary:
        return 0
    from .summary import tables

    if args.threads:
        passes = [(f"{args.threads} thread(s), {_versions()}", report)]
    else:
        passes = [(f"default threads, {_versions()}", report)]
        one = _one_thread_pass(argv)
        if one is not None:
            passes.append(("1 thread (ours, BLAS, OpenMP, torch and XLA)", one))
    print("\n" + tables(passes))
    return 0


def _one_thread_pass(argv):
    """Run this command again in a child with ``--threads 1``; its report, or None."""
    import subprocess
    import tempfile

    argv = list(sys.argv[1:] if argv is None else argv)
    if "--json" in argv:  # the child writes its own report to a temporary file
        k = argv.index("--json")
        del argv[k : k + 2]
    print("\n==== the same workloads at 1 thread (child process) ====", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "one_thread.json")
        cmd = [sys.executable, "-m", "bench", *argv, "--threads", "1", "--json", path]
        done = subprocess.run([*cmd, "--no-summary"], check=False)
        if done.returncode != 0 or not os.path.exists(path):
            print(f"(the 1-thread pass failed with exit code {done.returncode})")
            return None
        with open(path) as f:
            return json.load(f)


if __name__ == "__main__":
    sys.exit(main())
