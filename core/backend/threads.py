"""How many threads the CPU backend uses: one setting for BLAS, FFTs, numexpr and our kernels.

``core.set_num_threads(n)`` / ``core.get_num_threads()``; the default is the environment
variable ``DIFFSCI_NUM_THREADS`` when set, else the number of cores this process may run on
(``os.sched_getaffinity``, so ``taskset`` and container CPU sets are respected). The setting
reaches:

- BLAS (numpy's OpenBLAS/MKL) through ``threadpoolctl``, and numexpr, when it is set (by
  ``set_num_threads`` or by the environment variable at import); without either, those keep
  their own default, which is also one thread per core. Once core's own threaded GEMM
  (``core.backend.cpu_gemm``) has run, BLAS is *held* at one thread (:func:`hold_blas`):
  matrix products are then split over our pool, each panel a one-thread BLAS call, because
  OpenBLAS's workers spin for ~0.1 s after each threaded call and starve the FFTs and kernels
  that follow (and, under load from other processes, stall for whole time slices). LAPACK
  calls on large matrices (``core.backend.linalg.lapack_call``) get the ``n`` BLAS threads
  back for their duration (:func:`blas_for_lapack`);
- FFTs: ``scipy.fft``'s ``workers=`` argument, read at every call (``cpu_impls/arrays.py``);
- the native C kernels (``core.backend.cc``): the process's thread pool
  (``core.backend.cpu_pool``, fork-safe) splits arrays large enough to pay for it
  (``cc.PARALLEL_GRAIN`` elements per thread at least); results do not depend on the count.
"""

import os

_ENV = "DIFFSCI_NUM_THREADS"
_state = {"n": None, "blas_held": False}  # the setting (None until first read); BLAS held
# LAPACK calls whose largest operand has at least this many elements run with the ``n`` BLAS
# threads while BLAS is held (1024 x 1024: a factorization takes ~10 ms and more, against the
# ~0.1 ms of raising and restoring the limit and the spinning that follows)
LAPACK_THREADED_SIZE = 1 << 20


def usable_cores():
    """Cores this process may run on (its CPU affinity set; ``os.cpu_count()`` where the OS
    has no affinity call)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def _check(n, where):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{where}: the number of threads must be an int >= 1, got {n!r}")
    return n


def _from_env():
    raw = os.environ.get(_ENV, "").strip()
    if not raw:
        return None
    try:
        n = int(raw)
    except ValueError:
        n = raw
    return _check(n, f"environment variable {_ENV}")


def get_num_threads():
    """The number of threads CPU work may use (see the module docstring)."""
    n = _state["n"]
    if n is None:
        n = _from_env() or usable_cores()
        _state["n"] = n
    return n


def set_num_threads(n):
    """Use up to ``n`` threads for BLAS, FFTs, numexpr and native kernels from now on.

    Args:
        n: int >= 1.
    """
    _state["n"] = _check(n, "set_num_threads")
    _apply_to_libraries(n)


def hold_blas():
    """Hold every BLAS library at one thread from now on (called by ``cpu_gemm`` once its
    threaded GEMM works; see the module docstring). Idempotent."""
    if not _state["blas_held"]:
        _state["blas_held"] = True
        _apply_to_libraries(get_num_threads())


def blas_held():
    """True once BLAS is held at one thread (:func:`hold_blas`)."""
    return _state["blas_held"]


def blas_for_lapack(*arrays):
    """A context manager around one LAPACK call on ``arrays``: while BLAS is held, large
    operands (``LAPACK_THREADED_SIZE`` elements) get ``get_num_threads()`` BLAS threads back
    for the call; otherwise it does nothing."""
    import contextlib

    n = get_num_threads()
    size = max((getattr(a, "size", 0) for a in arrays), default=0)
    if not _state["blas_held"] or n < 2 or size < LAPACK_THREADED_SIZE:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=n, user_api="blas")


def blas_threads():
    """The thread counts of the BLAS libraries loaded in this process (threadpoolctl's
    view), as a list of ints; for tests and the bench header."""
    from threadpoolctl import threadpool_info

    return [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]


def _apply_to_libraries(n):
    """Cap numpy's BLAS (at one thread while held) and numexpr at ``n`` threads
    (process-wide, until changed again)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1 if _state["blas_held"] else n, user_api="blas")
    try:
        import numexpr
    except ImportError:  # numexpr is a dependency, but only the fused fallback needs it
        return
    numexpr.set_num_threads(n)


def apply_environment_setting():
    """Apply ``DIFFSCI_NUM_THREADS`` (when set) to the BLAS libraries loaded so far.

    ``core/__init__.py`` calls this last, after every module it imports has loaded its BLAS
    (scipy brings its own OpenBLAS, which numpy's limit does not reach)."""
    if _from_env() is not None:
        _apply_to_libraries(get_num_threads())
