"""Launching test workers under ``mpiexec -n N`` (shared by the MPI tests of every package).

``MPIEXEC`` is the launcher (``core.launch.find_mpiexec``) or None, with ``WHY`` the reason it
cannot start; ``needs_mpi`` skips a test with that reason. ``mpirun(script, *args)`` runs a
worker with one thread per rank, the repository on ``PYTHONPATH`` and ``DIFFSCI_COMM_TIMEOUT``
set, so a mismatched collective ends in an error instead of a hang.
"""

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _mpiexec():
    if importlib.util.find_spec("mpi4py") is None:
        return None, "mpi4py is not installed (pip install -e '.[distributed]')"
    from diffsci.core.launch import find_mpiexec

    try:
        return find_mpiexec(), None
    except FileNotFoundError as exc:
        return None, str(exc)


MPIEXEC, WHY = _mpiexec()
needs_mpi = pytest.mark.skipif(MPIEXEC is None, reason=f"MPI cannot start: {WHY}")


def mpi_env(comm_timeout=60):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.update(DIFFSCI_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env["DIFFSCI_COMM_TIMEOUT"] = str(comm_timeout)
    return env


def mpirun(script, *args, n=2, comm_timeout=60, wall=240, check=False):
    """Run ``python script *args`` on ``n`` ranks; the CompletedProcess (asserting a zero exit
    status, with both outputs in the message, when ``check``)."""
    cmd = [MPIEXEC, "-n", str(n), sys.executable, str(script), *map(str, args)]
    proc = subprocess.run(
        cmd, env=mpi_env(comm_timeout), capture_output=True, text=True, timeout=wall, cwd=ROOT
    )
    if check:
        assert proc.returncode == 0, f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc
