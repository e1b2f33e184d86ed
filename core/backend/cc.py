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

FLAGS = [
    "-O3",
    "-march=native",
    "-fno-math-errno",
    "-fno-trapping-math",
    "-ffp-contract=off",
    "-fPIC",
    "-shared",
]
# Added to FLAGS where the compiler has OpenMP (GCC's libgomp, clang with libomp); without it
# the kernels build single-threaded (their parallel parts are under #ifdef _OPENMP).
OPENMP_FLAGS = ["-fopenmp"]

# A kernel splits its work across threads only when every thread gets at least this many
# elements (or rows holding as many): below it, waking the team (a few microseconds) costs more
# than the loop saves, and tiny arrays (W1's dispatch-bound ops) stay on the calling thread.
PARALLEL_GRAIN = 1 << 15
# Chunk boundaries are multiples of this many elements from the start of the array, so every
# element is computed by the same code path (SIMD body, vectorized libmvec call, or scalar
# tail) as in a one-thread run: results are bit-identical for any number of threads.
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

# The math functions kernels may call, float and double. With libmvec they are declared
# vectorizable (the attribute glibc's own header sets only under -ffast-math).
_MATH_FUNCTIONS = ["exp", "expm1", "log", "log1p", "sqrt", "sin", "cos", "tanh", "erf", "pow"]


def math_header():
    """C declarations of the math functions (vectorizable where libmvec exists)."""
    lines = ["#include <stddef.h>", "#include <math.h>"]
    if VECTOR_MATH:
        lines.append('#define DIFFSCI_VEC __attribute__((simd("notinbranch"), const, nothrow))')
        for name in _MATH_FUNCTIONS:
            if name == "sqrt":
                continue  # a single instruction already
            if name == "pow":
                lines.append("DIFFSCI_VEC float powf(float, float);")
                lines.append("DIFFSCI_VEC double pow(double, double);")
                continue
            lines.append(f"DIFFSCI_VEC float {name}f(float);")
            lines.append(f"DIFFSCI_VEC double {name}(double);")
    return "\n".join(lines) + "\n"


_PARALLEL = """
#ifdef _OPENMP
#include <omp.h>
#endif
typedef void (*diffsci_range)(void* job, ptrdiff_t lo, ptrdiff_t hi);
/* fn(job, lo, hi) over [0, n): on the calling thread, or split among up to `threads` OpenMP
   threads when each gets at least `grain` units; chunk starts are multiples of `align`. */
static void diffsci_parallel_for(diffsci_range fn, void* job, ptrdiff_t n, ptrdiff_t grain,
                                 ptrdiff_t align, ptrdiff_t threads) {
  ptrdiff_t team = n / (grain > 0 ? grain : 1);
  if (team > threads) team = threads;
#ifdef _OPENMP
  if (team > 1) {
    ptrdiff_t blocks = (n + align - 1) / align;
#pragma omp parallel num_threads((int)team)
    {
      ptrdiff_t t = omp_get_thread_num(), k = omp_get_num_threads();
      ptrdiff_t lo = blocks * t / k * align, hi = blocks * (t + 1) / k * align;
      if (hi > n) hi = n;
      if (lo < hi) fn(job, lo, hi);
    }
    return;
  }
#endif
  fn(job, 0, n);
}
"""


def parallel_header():
    """C source of ``diffsci_parallel_for(fn, job, n, grain, align, threads)``, the one way
    kernels use threads (see PARALLEL_GRAIN, PARALLEL_ALIGN); ``threads`` comes from
    ``core.backend.threads.native_threads()`` at every call."""
    return (
        "#include <stddef.h>\n"
        f"#define DIFFSCI_GRAIN {PARALLEL_GRAIN}\n#define DIFFSCI_ALIGN {PARALLEL_ALIGN}\n"
        + _PARALLEL
    )


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
    _state["flags"] = FLAGS + OPENMP_FLAGS
    if _state["compiler"] is not None:
        # one small kernel proves that compiling (with OpenMP, else without), writing the
        # cache and loading all work
        probe = parallel_header() + "int diffsci_probe(void) { return omp_get_max_threads(); }\n"
        for flags in (FLAGS + OPENMP_FLAGS, FLAGS):
            _state["flags"] = flags
            try:
                load(probe if flags is not FLAGS else "int diffsci_probe(void) { return 1; }\n")
                break
            except (OSError, RuntimeError):
                continue
        else:
            _state["compiler"] = None
    return _state["compiler"]


def openmp():
    """True when native kernels are built with OpenMP (they can use several threads)."""
    return available() and _state["flags"] is not FLAGS


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
    flags = _state["flags"]
    key = hashlib.sha256(
        "\0".join([source, " ".join(argv + flags), _state["version"], _state["cpu"]]).encode()
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
                [*argv, *flags, src, "-o", built, "-lm"],
                capture_output=True,
                text=True,
                check=False,
            )
            if result.returncode != 0:
                raise RuntimeError(f"native kernel failed to compile:\n{result.stderr}\n{source}")
            os.replace(built, path)  # atomic: another process sees the old state or the whole file
    lib = ctypes.CDLL(path)
    _libraries[key] = lib
    return lib


def function(lib, name, n_args):
    """``lib.name`` typed as ``void name(<n_args pointer-or-size arguments>)``."""
    fn = getattr(lib, name)
    fn.argtypes = [ctypes.c_ssize_t] * n_args
    fn.restype = None
    return fn


def address(array):
    """The data pointer of a numpy array, as an int (cheaper than ``array.ctypes.data``)."""
    return array.__array_interface__["data"][0]
