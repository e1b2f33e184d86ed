"""``python -m diffsci.core.launch -n 4 script.py [args...]``: run a script on 4 MPI processes.

A thin wrapper over ``mpiexec -n 4 python -m mpi4py script.py args...``: it finds ``mpiexec``
next to this Python (the ``mpich`` wheel of the ``distributed`` extra puts it in the virtual
environment's ``bin``) or on ``PATH``, runs the script through mpi4py's runner (an exception
nobody catches on one rank aborts every rank instead of leaving them waiting), puts this
checkout on ``PYTHONPATH``, and gives each rank ``cores // n`` threads unless
``DIFFSCI_NUM_THREADS`` says otherwise. ``-m module`` runs a module instead of a script; ``-n 1`` without MPI runs plain Python.
Plain ``mpiexec -n 4 python script.py`` works too.
"""

import argparse
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

__all__ = ["build_command", "find_mpiexec", "main"]

_ROOT = pathlib.Path(__file__).resolve().parents[1]


def find_mpiexec(python=None, path=None):
    """The ``mpiexec`` (or ``mpirun``) next to ``python``, else on ``path`` (``$PATH``).

    Raises:
        FileNotFoundError: none found; the message says how to get one.
    """
    python = pathlib.Path(python or sys.executable)
    for name in ("mpiexec", "mpirun"):
        candidate = python.parent / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    for name in ("mpiexec", "mpirun"):
        found = shutil.which(name, path=path)
        if found:
            return found
    raise FileNotFoundError(
        f"core.launch: no mpiexec or mpirun next to {python} or on PATH; install the "
        "distributed extra (pip install -e '.[distributed]': mpi4py and the mpich wheel, which "
        "provides mpiexec) or a system MPI"
    )


def build_command(nprocs, target, args, module=False, mpiexec=None, python=None):
    """The mpiexec command line that runs ``target`` (a script, or a module when ``module``)
    on ``nprocs`` processes."""
    if nprocs < 1:
        raise ValueError(f"core.launch: -n must be >= 1, got {nprocs}")
    python = python or sys.executable
    mpiexec = mpiexec or find_mpiexec(python)
    run = ["-m", "mpi4py"] + (["-m", target] if module else [target])
    return [mpiexec, "-n", str(nprocs), python, *run, *args]


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m diffsci.core.launch", description="Run a script on N MPI processes."
    )
    parser.add_argument("-n", "--nprocs", type=int, required=True, help="number of processes")
    parser.add_argument("-m", dest="module", action="store_true", help="run a module")
    parser.add_argument("target", help="the script (or module with -m)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    opts = parser.parse_args(argv)
    have_mpi = importlib.util.find_spec("mpi4py") is not None
    if not have_mpi and opts.nprocs > 1:
        sys.stderr.write("core.launch: mpi4py is not installed; pip install -e '.[distributed]'\n")
        return 2
    try:
        cmd = build_command(opts.nprocs, opts.target, opts.args, module=opts.module)
    except FileNotFoundError as exc:
        if opts.nprocs > 1:
            sys.stderr.write(f"{exc}\n")
            return 2
        cmd = None
    except ValueError as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    if cmd is None or not have_mpi:  # one process needs no MPI: plain python
        cmd = [sys.executable, *(["-m"] if opts.module else []), opts.target, *opts.args]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH")) if p)
    if "DIFFSCI_NUM_THREADS" not in env:
        env["DIFFSCI_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // opts.nprocs))
    return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main())
