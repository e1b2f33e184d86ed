"""Hand-written native CPU kernels for the hot elementwise primitives numpy does slowly.

Exact GELU needs erf, which numpy lacks and scipy evaluates one float32 element at a time in
double precision (8 ns/element); a rational approximation in numpy takes 17 passes over
memory. One C loop calling the vectorized ``erff`` does it in one pass: GELU forward on 4M
float32 runs in 4 ms here instead of 16 ms (PyTorch: 3.5 ms).

Arrays of 64K elements or more (or as many in whole rows) are split across the thread pool
(``core.set_num_threads``); the result is the same bit for bit on any number of threads.

Each wrapper returns None when native kernels are unavailable (see ``core.backend.cc``) or the
dtype is not float32/float64; callers then keep their numpy implementation.
"""

import ctypes
import re

import numpy as np

from . import cc, cpu_layout
from .threads import get_num_threads

_TYPES = {np.dtype("float32"): ("float", "f", "f"), np.dtype("float64"): ("double", "", "")}

# name -> (number of array inputs, C body computing `out` from `a` (and `b`); T is the type,
# F the math-function suffix, L the literal suffix)
_KERNELS = {
    "erf": (1, "out = erf{F}(a);"),
    # exp(min(x, 0)) / (1 + exp(-|x|)): full relative precision at both ends, one exp
    "logistic": (1, "T e = exp{F}(-fabs{F}(a));\n    out = (a >= 0 ? (T)1 : e) / ((T)1 + e);"),
    # g * (1 - t^2), tanh's derivative times g, from t = tanh(x); the same operations in the
    # same order as numpy's path, so the result is bit-identical
    "tanh_backward": (2, "out = a * ((T)1 - b * b);"),
    # -2 c g t, what tanh_backward(g, t) passes back to t (numpy's path: same order)
    "tanh_backward_t": (3, "out = (T)-2 * a * b * c;"),
    "gelu": (1, "out = (T)0.5{L} * a * ((T)1 + erf{F}(a * (T)0.70710678118654752440{L}));"),
    # g * (Phi(x) + x phi(x)), the derivative of x Phi(x)
    "gelu_backward": (
        2,
        "T cdf = (T)0.5{L} * ((T)1 + erf{F}(b * (T)0.70710678118654752440{L}));\n"
        "    T pdf = (T)0.39894228040143267794{L} * exp{F}((T)-0.5{L} * b * b);\n"
        "    out = a * (cdf + b * pdf);",
    ),
    # tanh-form GELU 0.5 x (1 + tanh(x (k + k c x^2))), k = sqrt(2/pi), c = 0.044715
    "gelu_tanh": (
        1,
        "T t = tanh{F}(a * ((T)0.79788456080286535588{L} + (T)0.03567740813630012{L} * a * a));\n"
        "    out = (T)0.5{L} * a * ((T)1 + t);",
    ),
    # g * (0.5 (1 + t) + 0.5 x (1 - t^2) u'), u' = k (1 + 3 c x^2)
    "gelu_tanh_backward": (
        2,
        "T t = tanh{F}(b * ((T)0.79788456080286535588{L} + (T)0.03567740813630012{L} * b * b));\n"
        "    T du = (T)0.79788456080286535588{L} + (T)0.10703222440890037{L} * b * b;\n"
        "    out = a * ((T)0.5{L} * ((T)1 + t) + (T)0.5{L} * b * ((T)1 - t * t) * du);",
    ),
}


# Row kernels over [rows, n] C-contiguous blocks. Reductions keep LANES partial results, so
# they vectorize without reassociation flags (what -ffast-math would permit).
_ROWS = """
#define LANES 16
static T rowmax_T(const T* x, ptrdiff_t n) {
  T acc[LANES], m = -INFINITY;
  for (int j = 0; j < LANES; ++j) acc[j] = -INFINITY;
  ptrdiff_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int j = 0; j < LANES; ++j) acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  for (int j = 0; j < LANES; ++j) m = acc[j] > m ? acc[j] : m;
  return m;
}
static T rowsum_T(const T* x, ptrdiff_t n) {
  T acc[LANES], s = 0;
  for (int j = 0; j < LANES; ++j) acc[j] = 0;
  ptrdiff_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int j = 0; j < LANES; ++j) acc[j] += x[i + j];
  for (; i < n; ++i) s += x[i];
  for (int j = 0; j < LANES; ++j) s += acc[j];
  return s;
}
static T rowsumsq_T(const T* x, ptrdiff_t n) {
  T acc[LANES], s = 0;
  for (int j = 0; j < LANES; ++j) acc[j] = 0;
  ptrdiff_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int j = 0; j < LANES; ++j) acc[j] += x[i + j] * x[i + j];
  for (; i < n; ++i) s += x[i] * x[i];
  for (int j = 0; j < LANES; ++j) s += acc[j];
  return s;
}
/* softmax of each row; the max shift is only for range, and a row whose max is not finite
   (all -inf) uses 0, giving 0/0 = NaN as numpy's path and PyTorch do */
static void softmax_row_T(const T* xr, T* yr, ptrdiff_t n) {  /* xr may be yr */
  T m = rowmax_T(xr, n);
  if (!isfinite(m)) m = 0;
  for (ptrdiff_t i = 0; i < n; ++i) yr[i] = exp{F}(xr[i] - m);
  T s = rowsum_T(yr, n);
  for (ptrdiff_t i = 0; i < n; ++i) yr[i] = yr[i] / s;
}
/* The row kernels run rows [lo, hi) of a job on one thread; rows are independent, so any
   split gives the one-thread result bit for bit. */
static ptrdiff_t row_grain_T(ptrdiff_t n) { return (DIFFSCI_GRAIN + n - 1) / n; }

typedef struct { const T* x; T* y; ptrdiff_t n; } softmax_job_T;
static void softmax_range_T(void* p, ptrdiff_t lo, ptrdiff_t hi) {
  const softmax_job_T* j = p;
  for (ptrdiff_t r = lo; r < hi; ++r) softmax_row_T(j->x + r * j->n, j->y + r * j->n, j->n);
}
void softmax_rows_T(const T* x, T* y, ptrdiff_t rows, ptrdiff_t n, ptrdiff_t threads) {
  softmax_job_T j = {x, y, n};
  diffsci_parallel_for(softmax_range_T, &j, rows, row_grain_T(n), 1, threads);
}
/* softmax(a + b) per row: row r reads a at oa = (r / per_outer) * sa + (r % per_outer) * n
   (likewise b), so an operand broadcast along leading axes is read in place */
typedef struct {
  const T* a; const T* b; T* y; ptrdiff_t n, per_outer, sa, sb;
} softmax_add_job_T;
static void softmax_add_range_T(void* p, ptrdiff_t lo, ptrdiff_t hi) {
  const softmax_add_job_T* j = p;
  ptrdiff_t n = j->n;
  for (ptrdiff_t r = lo; r < hi; ++r) {
    ptrdiff_t o = r / j->per_outer, w = (r % j->per_outer) * n;
    const T* ar = j->a + o * j->sa + w;
    const T* br = j->b + o * j->sb + w;
    T* yr = j->y + r * n;
    for (ptrdiff_t i = 0; i < n; ++i) yr[i] = ar[i] + br[i];
    softmax_row_T(yr, yr, n);
  }
}
void softmax_add_rows_T(const T* a, const T* b, T* y, ptrdiff_t rows, ptrdiff_t n,
                        ptrdiff_t per_outer, ptrdiff_t sa, ptrdiff_t sb, ptrdiff_t threads) {
  softmax_add_job_T j = {a, b, y, n, per_outer, sa, sb};
  diffsci_parallel_for(softmax_add_range_T, &j, rows, row_grain_T(n), 1, threads);
}
/* (x - mean) / sqrt(var + eps) per row, then * w + b when w is given (two-pass variance) */
typedef struct { const T* x; const T* w; const T* b; T* y; ptrdiff_t n; double eps; } ln_job_T;
static void layer_norm_range_T(void* p, ptrdiff_t lo, ptrdiff_t hi) {
  const ln_job_T* j = p;
  ptrdiff_t n = j->n;
  const T* w = j->w;
  const T* b = j->b;
  for (ptrdiff_t r = lo; r < hi; ++r) {
    const T* xr = j->x + r * n;
    T* yr = j->y + r * n;
    T mean = rowsum_T(xr, n) / (T)n;
    for (ptrdiff_t i = 0; i < n; ++i) yr[i] = xr[i] - mean;
    T rstd = (T)1 / sqrt{F}(rowsumsq_T(yr, n) / (T)n + (T)j->eps);
    if (w) {
      for (ptrdiff_t i = 0; i < n; ++i) yr[i] = yr[i] * rstd * w[i] + b[i];
    } else {
      for (ptrdiff_t i = 0; i < n; ++i) yr[i] = yr[i] * rstd;
    }
  }
}
void layer_norm_rows_T(const T* x, const T* w, const T* b, T* y, ptrdiff_t rows, ptrdiff_t n,
                       double eps, ptrdiff_t threads) {
  ln_job_T j = {x, w, b, y, n, eps};
  diffsci_parallel_for(layer_norm_range_T, &j, rows, row_grain_T(n), 1, threads);
}
"""


# Eager a + b, a - b, a * b over float arrays laid out as [n_outer, n_inner] runs (the layout of
# core.backend.cpu_fusion: each operand is full along the inner run or one value per run, and
# advances by its outer stride per run). One IEEE operation per element, as numpy's ufunc:
# the same bits, on several threads.
_ARITH = """
typedef struct {
  const T* a; const T* b; T* y; ptrdiff_t n_inner, fa, fb, sa, sb, by_rows;
} arith_job_T;
#define ARITH_RANGE(NAME, OP)                                                          \\
  static void NAME##_range_T(void* p, ptrdiff_t lo, ptrdiff_t hi) {                    \\
    const arith_job_T* j = p;                                                          \\
    ptrdiff_t o0 = 0, o1 = 1, i0 = lo, i1 = hi;                                        \\
    if (j->by_rows) { o0 = lo; o1 = hi; i0 = 0; i1 = j->n_inner; }                     \\
    for (ptrdiff_t o = o0; o < o1; ++o) {                                              \\
      const T* a = j->a + o * j->sa;                                                   \\
      const T* b = j->b + o * j->sb;                                                   \\
      T* y = j->y + o * j->n_inner;                                                    \\
      if (j->fa && j->fb) { for (ptrdiff_t i = i0; i < i1; ++i) y[i] = a[i] OP b[i]; } \\
      else if (j->fa) { T v = b[0]; for (ptrdiff_t i = i0; i < i1; ++i) y[i] = a[i] OP v; } \\
      else if (j->fb) { T v = a[0]; for (ptrdiff_t i = i0; i < i1; ++i) y[i] = v OP b[i]; } \\
      else { T v = a[0] OP b[0]; for (ptrdiff_t i = i0; i < i1; ++i) y[i] = v; }      \\
    }                                                                                  \\
  }                                                                                    \\
  void NAME##_T(const T* a, const T* b, T* y, ptrdiff_t n_outer, ptrdiff_t n_inner,     \\
                ptrdiff_t fa, ptrdiff_t fb, ptrdiff_t sa, ptrdiff_t sb, ptrdiff_t threads) { \\
    arith_job_T j = {a, b, y, n_inner, fa, fb, sa, sb, n_outer > 1};                   \\
    if (j.by_rows)                                                                     \\
      diffsci_parallel_for(NAME##_range_T, &j, n_outer,                                \\
                           (DIFFSCI_GRAIN + n_inner - 1) / n_inner, 1, threads);       \\
    else                                                                               \\
      diffsci_parallel_for(NAME##_range_T, &j, n_inner, DIFFSCI_GRAIN, DIFFSCI_ALIGN, threads); \\
  }
ARITH_RANGE(arith_add, +)
ARITH_RANGE(arith_sub, -)
ARITH_RANGE(arith_mul, *)
#undef ARITH_RANGE
"""
ARITH_MIN_SIZE = 2 * cc.PARALLEL_GRAIN  # smaller: numpy's one-thread SIMD loop is as fast


def _typed(code, ctype, fsuffix, lsuffix=""):
    """``code`` for one C type: ``T`` is the type, a ``_T`` suffix names the function for it,
    ``{F}`` the math-function suffix and ``{L}`` the literal suffix."""
    code = code.replace("{F}", fsuffix).replace("{L}", lsuffix)
    return re.sub(r"\bT\b", ctype, re.sub(r"_T\b", "_" + ctype, code))


# One elementwise kernel: job struct, the loop over [lo, hi), and the exported entry point
_ELEMENTWISE = """
typedef struct { @FIELDS@ T* y; } @NAME@_job_T;
static void @NAME@_range_T(void* p, ptrdiff_t lo, ptrdiff_t hi) {
  const @NAME@_job_T* j = p;
  T* y = j->y;
  for (ptrdiff_t i = lo; i < hi; ++i) {
    T out; @LOADS@
    @BODY@
    y[i] = out;
  }
}
void @NAME@_T(@ARGS@, T* y, ptrdiff_t n, ptrdiff_t threads) {
  @NAME@_job_T j = {@PASS@, y};
  diffsci_parallel_for(@NAME@_range_T, &j, n, DIFFSCI_GRAIN, DIFFSCI_ALIGN, threads);
}
"""


# the math functions the kernels above call (vectorized where glibc can, see cc.math_header)
_MATH = ("erf", "exp", "fabs", "sqrt", "tanh")


def _source():
    parts = [cc.math_header(_MATH), cc.parallel_header()]
    for ctype, fsuffix, _ in _TYPES.values():
        parts.append(_typed(_ROWS, ctype, fsuffix))
        parts.append(_typed(_ARITH, ctype, fsuffix))
    for name, (n_in, body) in _KERNELS.items():
        names = [f"xa{k}" for k in range(n_in)]
        code = (
            _ELEMENTWISE.replace("@NAME@", name)
            .replace("@FIELDS@", " ".join(f"const T* {a};" for a in names))
            .replace("@PASS@", ", ".join(names))
            .replace("@ARGS@", ", ".join(f"const T* {a}" for a in names))
            .replace("@LOADS@", " ".join(f"T {'abc'[k]} = j->xa{k}[i];" for k in range(n_in)))
            .replace("@BODY@", body)
        )
        for ctype, fsuffix, lsuffix in _TYPES.values():
            parts.append(_typed(code, ctype, fsuffix, lsuffix))
    return "\n".join(parts)


_functions = {}


def _library():
    """The kernels' library, or None when it cannot be built here (disk full, read-only cache):
    the callers then take their numpy path."""
    try:
        return cc.load(_source())
    except (OSError, RuntimeError):
        return None


def _function(name, dtype, n_args):
    """``name`` for ``dtype`` from the kernels' library (all pointer/size arguments, the last
    one the thread count, except layer_norm's double eps before it), or None."""
    key = (name, dtype)
    fn = _functions.get(key)
    if fn is None:
        lib = _library()
        if lib is None:
            return None
        fn = cc.function(lib, f"{name}_{_TYPES[dtype][0]}", n_args)
        if name == "layer_norm_rows":
            fn.argtypes = [ctypes.c_ssize_t] * 6 + [ctypes.c_double, ctypes.c_ssize_t]
        _functions[key] = fn
    return fn


def _run(name, *arrays):
    dtype = arrays[0].dtype
    if dtype not in _TYPES or any(a.dtype != dtype for a in arrays) or not cc.available():
        return None
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays):
        return None  # broadcasting is left to numpy
    fn = _function(name, dtype, _KERNELS[name][0] + 3)
    if fn is None:
        return None
    arrays = [cpu_layout.ascontiguousarray(a) for a in arrays]
    out = np.empty(shape, dtype)
    fn(*[cc.address(a) for a in arrays], cc.address(out), out.size, get_num_threads())
    return out


def _rows_ready(x):
    return x.dtype in _TYPES and cc.available() and x.ndim >= 1 and x.shape[-1] > 0


def softmax_last_axis(x):
    """Softmax over the last axis of a float32/float64 array, or None."""
    if not _rows_ready(x):
        return None
    x = cpu_layout.ascontiguousarray(x)
    out = np.empty_like(x)
    n = x.shape[-1]
    fn = _function("softmax_rows", x.dtype, 5)
    if fn is None:
        return None
    fn(cc.address(x), cc.address(out), x.size // n, n, get_num_threads())
    return out


def softmax_add_last_axis(a, b):
    """softmax(a + b) over the last axis in one pass (float32/float64, a and b broadcasting
    along leading axes only, both varying along the last), or None."""
    from .cpu_fusion import layout

    if not _rows_ready(a) or b.dtype != a.dtype or b.ndim < 1:
        return None
    out_shape = tuple(np.broadcast_shapes(a.shape, b.shape))
    n = out_shape[-1]
    lay = layout([a.shape, b.shape], out_shape)
    if lay is None or a.shape[-1] != n or b.shape[-1] != n:
        return None
    _, n_inner, _, (sa, sb) = lay
    if n_inner % n:
        return None
    a, b = cpu_layout.ascontiguousarray(a), cpu_layout.ascontiguousarray(b)
    out = np.empty(out_shape, a.dtype)
    fn = _function("softmax_add_rows", a.dtype, 9)
    if fn is None:
        return None
    rows = out.size // n
    fn(*[cc.address(v) for v in (a, b, out)], rows, n, n_inner // n, sa, sb, get_num_threads())
    return out


def layer_norm_rows(x, eps, w=None, b=None):
    """Each row of ``x`` [R, C] normalized (and ``* w + b`` with w, b of shape [C]), or None."""
    if not _rows_ready(x) or x.ndim != 2:
        return None
    dt = x.dtype
    if w is not None and (
        w.dtype != dt or b.dtype != dt or w.size != x.shape[1] or b.size != x.shape[1]
    ):
        return None
    x = cpu_layout.ascontiguousarray(x)
    out = np.empty_like(x)
    keep = [] if w is None else [cpu_layout.ascontiguousarray(w), cpu_layout.ascontiguousarray(b)]
    ptrs = [0, 0] if w is None else [cc.address(a) for a in keep]
    fn = _function("layer_norm_rows", dt, 8)
    if fn is None:
        return None
    rows, n = x.shape
    fn(cc.address(x), *ptrs, cc.address(out), rows, n, ctypes.c_double(eps), get_num_threads())
    return out


def logistic(x):
    """The logistic sigmoid of a float32/float64 array, or None."""
    return _run("logistic", x)


def erf(x):
    """erf(x) for a float32/float64 array, or None (see module docstring)."""
    return _run("erf", x)


def gelu(x):
    """x Phi(x) (exact GELU) for a float32/float64 array, or None."""
    return _run("gelu", x)


def gelu_tanh(x):
    """The tanh-form GELU for a float32/float64 array, or None."""
    return _run("gelu_tanh", x)


def gelu_tanh_backward(g, x):
    """g times the tanh-form GELU's derivative at x (same shapes and dtype), or None."""
    return _run("gelu_tanh_backward", g, x)


def tanh_backward(g, t):
    """g (1 - t^2) for arrays of one shape and dtype (float32/float64), or None."""
    return _run("tanh_backward", g, t)


def tanh_backward_t(c, g, t):
    """-2 c g t for arrays of one shape and dtype (float32/float64), or None."""
    return _run("tanh_backward_t", c, g, t)


def gelu_backward(g, x):
    """g (Phi(x) + x phi(x)), GELU's derivative times g (same shapes and dtype), or None."""
    return _run("gelu_backward", g, x)


def arith(name, x, y, out=None):
    """``x + y``, ``x - y`` or ``x * y`` (``name`` "add", "sub", "mul") of two float32/float64
    numpy arrays of one dtype, broadcasting, on several threads; or None, and the caller uses
    numpy: one thread set, output under 2 * cc.PARALLEL_GRAIN elements (numpy's one-thread SIMD
    loop is as fast, and tiny ops must stay cheap), other dtypes, or a broadcast that is not
    two runs (see cpu_fusion.layout). ``out``: a C-contiguous array of the result's shape and
    dtype to write into (it may be ``x`` or ``y`` itself: each element is read before it is
    written, at the same index); another ``out`` also gives None."""
    if type(x) is not np.ndarray or type(y) is not np.ndarray:
        return None
    if max(x.size, y.size) < ARITH_MIN_SIZE or get_num_threads() < 2:
        return None
    dtype = x.dtype
    if dtype not in _TYPES or y.dtype != dtype or not cc.available():
        return None
    # a transposed operand (an attention bias, a permuted activation) is copied by the threaded
    # tiled transpose first: numpy's strided loop over it would be slower than copy + loop
    x, y = cpu_layout.ascontiguousarray(x), cpu_layout.ascontiguousarray(y)
    from .cpu_fusion import layout

    out_shape = np.broadcast_shapes(x.shape, y.shape)
    lay = layout([x.shape, y.shape], out_shape)
    if lay is None:
        return None
    fn = _function(f"arith_{name}", dtype, 10)
    if fn is None:
        return None
    n_outer, n_inner, (fa, fb), (sa, sb) = lay
    if out is None:
        out = np.empty(out_shape, dtype)
    elif (
        type(out) is not np.ndarray
        or out.shape != out_shape
        or out.dtype != dtype
        or not out.flags.c_contiguous
        or any(v is not out and np.may_share_memory(v, out) for v in (x, y))
    ):
        return None  # a view of an operand would be overwritten while it is read
    fn(*[cc.address(v) for v in (x, y, out)], n_outer, n_inner, fa, fb, sa, sb, get_num_threads())
    return out
