"""Native CPU kernels: C source compiled once with the machine's C compiler, loaded by ctypes.

numpy runs one pass over memory per ufunc and has no SIMD erf; a loop written in C that
computes a whole expression per element (GELU, a fused jit chain) makes one pass and lets the
compiler vectorize it. On glibc >= 2.35 (x86-64) the transcendental functions are glibc's
vector math library (libmvec: ``expf``, ``tanhf``, ``erff``... 4-16 lanes at once, <= 4 ulp),
declared below with GCC's ``simd`` attribute so that loops calling them vectorize without
``-ffast-math`` (which would change NaN semantics and, on GCC 12, flush denormals to zero in
the whole process).

Compiled libraries are cached on disk, keyed by the source, the flags, the compiler's version
and the CPU's feature flags (``-march=native`` code must not run on another CPU), in
``$DIFFSCI_CACHE_DIR`` (default ``$XDG_CACHE_HOME/diffsci`` or ``~/.cache/diffsci``). Each is
written to a temporary name and renamed, so concurrent processes never load half a file.

Threads: every kernel is written as a loop over a range [lo, hi) of its work and called
through ``diffsci_parallel_for`` (:func:`parallel_header`), which hands large ranges to the
process's thread pool (``core.backend.cpu_pool``, sized by ``core.set_num_threads``).

Everything here is optional: without a working compiler (or with ``DIFFSCI_NATIVE=0``),
:func:`available` is False and every caller keeps its numpy implementation.
"""

import contextlib
import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile

# ``DIFFSCI_MARCH`` (default ``native``) picks another ``-march``: ``x86-64-v2`` builds the
# kernels as for a CPU without AVX, to check that results hold on other machines
FLAGS = [
    "-O3",
    f"-march={os.environ.get('DIFFSCI_MARCH', 'native')}",
    "-fno-math-errno",
    "-fno-trapping-math",
    "-ffp-contract=off",
    "-fPIC",
    "-shared",
    "-pthread",
]
# A kernel splits its work across threads only when every thread gets at least this many
# elements (or rows holding as many): below it, waking the team (a few microseconds) costs more
# than the loop saves, and tiny arrays (W1's dispatch-bound ops) stay on the calling thread.
PARALLEL_GRAIN = 1 << 15
# Chunk boundaries are multiples of this many elements from the start of the array, so every
# element is computed by the same code path (SIMD body, vectorized libmvec call, or scalar
# tail) as in a one-thread run: results are bit-identical for any number of threads (the
# compiler must not peel loops for alignment, which GCC and clang do not do for these at -O3;
# tests/core/test_threads.py checks misaligned arrays).
PARALLEL_ALIGN = 64

_state = {}  # "compiler": [argv] or None, "version": str, "cpu": str
_libraries = {}  # cache key -> ctypes.CDLL


def _glibc_vector_math():
    """True where glibc's libmvec has the float vector variants we declare (x86-64, >= 2.35)."""
    if platform.machine() not in ("x86_64", "AMD64") or not sys.platform.startswith("linux"):
        return False
    lib, version = platform.libc_ver()
    if lib != "glibc":
        return False
    try:
        major, minor = (int(p) for p in version.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (2, 35)


VECTOR_MATH = _glibc_vector_math()

# glibc's vector math library (x86-64, >= 2.35): the functions it has float and double SIMD
# variants of, by number of arguments. sqrt and fabs are single instructions, never declared.
_LIBMVEC = {
    "exp": 1, "expm1": 1, "log": 1, "log1p": 1, "sin": 1, "cos": 1, "tanh": 1, "erf": 1,
    "pow": 2,
}  # fmt: skip


def math_header(functions=()):
    """``<math.h>``, and the math ``functions`` a kernel calls (``exp``, ``erf`` ...) declared
    vectorizable where libmvec has them: the attribute glibc's own header sets only under
    ``-ffast-math``. Other functions are called through the scalar libm."""
    lines = ["#include <stddef.h>", "#include <math.h>"]
    vectorized = sorted(f for f in set(functions) if f in _LIBMVEC) if VECTOR_MATH else []
    if vectorized:
        lines.append('#define DIFFSCI_VEC __attribute__((simd("notinbranch"), const, nothrow))')
        for name in vectorized:
            lines.append(f"DIFFSCI_VEC float {name}f({', '.join(['float'] * _LIBMVEC[name])});")
            lines.append(f"DIFFSCI_VEC double {name}({', '.join(['double'] * _LIBMVEC[name])});")
    return "\n".join(lines) + "\n"


_PARALLEL = """
typedef void (*diffsci_range)(void* job, ptrdiff_t lo, ptrdiff_t hi);
typedef void (*diffsci_pool_fn)(diffsci_range, void*, ptrdiff_t, ptrdiff_t, ptrdiff_t, ptrdiff_t);
static diffsci_pool_fn diffsci_pool;  /* set by Python after loading (cc.load) */
void diffsci_bind_pool(void* run) { diffsci_pool = (diffsci_pool_fn)run; }
/* fn(job, lo, hi) over [0, n): on the calling thread, or split among up to `threads` threads
   of the pool (core.backend.cpu_pool) when each gets at least `grain` units; chunk bounds
   are multiples of `align`. */
static void diffsci_parallel_for(diffsci_range fn, void* job, ptrdiff_t n, ptrdiff_t grain,
                                 ptrdiff_t align, ptrdiff_t threads) {
  if (diffsci_pool && threads > 1 && n >= 2 * grain)
    diffsci_pool(fn, job, n, grain, align, threads);
  else
    fn(job, 0, n);
}
"""


def parallel_header():
    """C source of ``diffsci_parallel_for(fn, job, n, grain, align, threads)``, the one way
    kernels use threads (see PARALLEL_GRAIN, PARALLEL_ALIGN; ``threads`` is
    ``core.get_num_threads()`` at each call). :func:`load` binds it to the process's pool."""
    return (
        "#include <stddef.h>\n"
        f"#define DIFFSCI_GRAIN {PARALLEL_GRAIN}\n#define DIFFSCI_ALIGN {PARALLEL_ALIGN}\n"
        + _PARALLEL
    )


def _pool_address():
    """Address of ``diffsci_pool_run`` (core.backend.cpu_pool), or 0 (kernels run on the
    calling thread) when the pool does not build here."""
    if "pool" not in _state:
        from . import cpu_pool

        _state["pool"] = 0
        try:
            lib = load(cpu_pool.SOURCE)
            _state["pool_lib"] = lib
            _state["pool"] = ctypes.cast(lib.diffsci_pool_run, ctypes.c_void_p).value or 0
        except (OSError, RuntimeError, AttributeError):
            pass
    return _state["pool"]


def parallel():
    """True when native kernels can run on several threads here."""
    return available() and _pool_address() != 0


def pool_workers():
    """Worker threads the kernels' pool has started in this process (0 before any parallel
    kernel, and in a forked child until its first one)."""
    if not parallel():
        return 0
    fn = _state["pool_lib"].diffsci_pool_workers
    fn.restype = ctypes.c_int
    return fn()


def _find_compiler():
    if os.environ.get("DIFFSCI_NATIVE", "1") == "0":
        return None
    candidates = [os.environ.get("CC"), sysconfig.get_config_var("CC"), "cc", "gcc", "clang"]
    for cand in candidates:
        if not cand:
            continue
        argv = cand.split()
        if shutil.which(argv[0]) is not None:
            return argv
    return None


def _compiler_identity(argv):
    try:
        out = subprocess.run(
            [*argv, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.splitlines()[0] if out.returncode == 0 and out.stdout else None


def _cpu_identity():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return line
    except OSError:
        pass
    return platform.machine() + platform.processor()


def cache_dir():
    """Where compiled kernels are kept (created on first use)."""
    root = os.environ.get("DIFFSCI_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "diffsci")
    return os.path.join(root, "kernels")


def _setup():
    if "compiler" in _state:
        return _state["compiler"]
    argv = _find_compiler()
    version = _compiler_identity(argv) if argv else None
    _state["compiler"] = argv if version else None
    _state["version"] = version or ""
    _state["cpu"] = _cpu_identity()
    if _state["compiler"] is not None:
        # one trivial kernel proves that compiling, writing the cache and loading all work
        try:
            load("int diffsci_probe(void) { return 42; }\n")
        except (OSError, RuntimeError):
            _state["compiler"] = None
    return _state["compiler"]


def available():
    """True when native kernels can be compiled and loaded on this machine."""
    return _setup() is not None


@contextlib.contextmanager
def disabled():
    """Within this block, act as on a machine without a compiler (numpy/numexpr paths only);
    for tests and benchmarks that compare both paths."""
    saved = _setup()
    _state["compiler"] = None
    try:
        yield
    finally:
        _state["compiler"] = saved


def load(source):
    """The ctypes library built from C ``source`` (compiled on first use, then cached).

    Raises RuntimeError with the compiler's message when the source does not compile.
    """
    argv = _state.get("compiler") if "compiler" in _state else _setup()
    if argv is None:
        raise RuntimeError(
            "no C compiler for native kernels (set CC, or DIFFSCI_NATIVE=0 to silence this)"
        )
    key = hashlib.sha256(
        "\0".join([source, " ".join(argv + FLAGS), _state["version"], _state["cpu"]]).encode()
    ).hexdigest()[:32]
    lib = _libraries.get(key)
    if lib is not None:
        return lib
    directory = cache_dir()
    path = os.path.join(directory, f"k{key}.so")
    if not os.path.exists(path):
        os.makedirs(directory, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=directory) as tmp:
            src = os.path.join(tmp, "kernel.c")
            with open(src, "w") as f:
                f.write(source)
            built = os.path.join(tmp, "kernel.so")
            result = subprocess.run(
                [*argv, *FLAGS, src, "-o", built, "-lm"],
                capture_output=True,
                text=True,
                check=False,
            )
            if result.returncode != 0:
                raise RuntimeError(f"native kernel failed to compile:\n{result.stderr}\n{source}")
            os.replace(built, path)  # atomic: another process sees the old state or the whole file
    lib = ctypes.CDLL(path)
    if "void diffsci_bind_pool(" in source:
        bind = lib.diffsci_bind_pool
        bind.argtypes = [ctypes.c_void_p]
        bind.restype = None
        bind(_pool_address())
    _libraries[key] = lib
    return lib


def function(lib, name, n_args):
    """``lib.name`` typed as ``void name(<n_args pointer-or-size arguments>)``."""
    fn = getattr(lib, name)
    fn.argtypes = [ctypes.c_ssize_t] * n_args
    fn.restype = None
    return fn


def _slow_address(array):
    return array.__array_interface__["data"][0]


def _data_field_offset():
    """Byte offset of the data pointer in a numpy array object, or None where it cannot be
    confirmed. numpy's ABI (``PyArrayObject_fields``, read by the ``PyArray_DATA`` macro that
    compiled extensions inline) puts ``char *data`` right after ``PyObject_HEAD``; checked here
    against ``__array_interface__`` on arrays of several kinds (views with offsets included)."""
    import numpy as np

    offset = object.__basicsize__
    base = np.arange(64, dtype=np.float64)
    probes = [base, base[5:], base[::3], base.reshape(8, 8)[2:, 1:], np.zeros((3, 4), np.int8)]
    try:
        for probe in probes:
            if ctypes.c_void_p.from_address(id(probe) + offset).value != _slow_address(probe):
                return None
    except Exception:  # any failure: keep the documented route
        return None
    return offset


_DATA_OFFSET = _data_field_offset()
_NDARRAY = __import__("numpy").ndarray
_from_address = ctypes.c_void_p.from_address


def address(array):
    """The data pointer of a numpy array, as an int.

    Reads the array object's ``data`` field (offset checked at import by
    :func:`_data_field_offset`): about 0.4 us, against 3 us for ``__array_interface__`` or
    ``array.ctypes.data``, which build a dict or an object per call (a native FDTD step asks for
    ~16 pointers). Anything that is not exactly an ``ndarray`` takes the documented route."""
    if type(array) is _NDARRAY and _DATA_OFFSET is not None:
        return _from_address(id(array) + _DATA_OFFSET).value or 0
    return _slow_address(array)
