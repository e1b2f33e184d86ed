"""Matrix products threaded by our own pool, over single-threaded BLAS calls.

Why: OpenBLAS's worker threads busy-wait for ~2^28 cycles (~0.1 s) after every threaded call
before they sleep. A training step alternates GEMMs with FFTs (scipy's pocketfft pool) and
native elementwise kernels (``cpu_pool``): each of those finds its second core held by a
spinning BLAS thread, so on a 2-core machine everything but the GEMMs ran on one core (the
FNO1D step: rfft/irfft, GELU and copies took as long on 2 threads as on 1; see
``bench/operators.py``). Under load from other processes the spinning also turns a 3 ms GEMM
into 100 ms and more. Here the work of one ``matmul`` is cut into panels (whole matrices of the
batch, then row or column blocks of each) that the threads of ``core.backend.cpu_pool`` claim,
each panel one call of BLAS's ``?gemm`` (scipy's ``cython_blas``: s, d, c, z) with BLAS held at
one thread (``threads.hold_blas``, from the first call on), so no BLAS thread ever wakes: the
pool's workers spin at most 100 us, then sleep on a condition variable, and the calling thread
does its share, so a core taken by another process costs the speed of one thread, not a stall.
Outer products (``k == 1``, an FNO projection's backward) are panels too.

:func:`matmul` returns None where it does not apply (one thread, small products, dtypes BLAS
lacks, operands whose two last axes are neither row- nor column-contiguous, no C compiler);
the caller then uses numpy's matmul. Each panel is a product over the full inner dimension, so
the result does not depend on the number of threads beyond what BLAS's own kernel choice for a
panel's size may change (a few ulp).
"""

import ctypes

import numpy as np

from . import cc
from . import threads as _threads

# products of fewer multiply-adds (m * n * k summed over the batch; a complex one counts 4)
# stay in numpy, on one BLAS thread (~100 us on one core: below it, waking the pool and the
# Python around the call, ~10 us, eat what a second thread saves)
PARALLEL_MACS = 1 << 21
# a panel holds at least this many rows (or columns) of the output: thinner ones waste BLAS's
# register blocking
MIN_PANEL = 16
# panels per thread (a late or preempted thread then holds up at most a fraction of the work)
PANELS_PER_THREAD = 3
_INT_MAX = (1 << 31) - 1  # scipy's cython_blas takes 32-bit ints

_TYPES = {  # dtype -> (cython_blas name, type code of the C kernel)
    np.dtype(np.float32): ("sgemm", 0),
    np.dtype(np.float64): ("dgemm", 1),
    np.dtype(np.complex64): ("cgemm", 2),
    np.dtype(np.complex128): ("zgemm", 3),
}

_SOURCE = r"""
typedef void (*gemm_fn)(char*, char*, int*, int*, int*, const void*, const void*, int*,
                        const void*, int*, const void*, void*, int*);
static const float one_s = 1.f, zero_s = 0.f;
static const double one_d = 1., zero_d = 0.;
static const float one_c[2] = {1.f, 0.f}, zero_c[2] = {0.f, 0.f};
static const double one_z[2] = {1., 0.}, zero_z[2] = {0., 0.};

/* C[b] = A[b] @ B[b] for the batch entries b (byte offsets offa/offb/offc), row-major C
   (m x n, leading dimension n). A is m x k with element strides (ars, acs), one of them 1;
   B is k x n with (brs, bcs). BLAS is column-major: C^T = B^T A^T, i.e. gemm(opB, opA, n, m,
   k, B, A, C). A unit is one panel of one batch entry: rows [p*panel, ...) of C when split_m,
   else columns. */
typedef struct {
  gemm_fn f; int type; ptrdiff_t item;
  const char *a, *b; char* c;
  const ptrdiff_t *offa, *offb, *offc;
  ptrdiff_t m, n, k, ars, acs, brs, bcs, panel, panels, split_m;
} gemm_job;

static void gemm_range(void* job, ptrdiff_t lo, ptrdiff_t hi) {
  const gemm_job* j = job;
  const void* one = j->type == 0 ? (const void*)&one_s : j->type == 1 ? (const void*)&one_d
                  : j->type == 2 ? (const void*)one_c : (const void*)one_z;
  const void* zero = j->type == 0 ? (const void*)&zero_s : j->type == 1 ? (const void*)&zero_d
                   : j->type == 2 ? (const void*)zero_c : (const void*)zero_z;
  /* A^T as BLAS sees A's memory: 'N' when A's rows are contiguous, else 'T' */
  char ta = j->acs == 1 ? 'N' : 'T', tb = j->bcs == 1 ? 'N' : 'T';
  ptrdiff_t full = j->split_m ? j->m : j->n;
  for (ptrdiff_t u = lo; u < hi; ++u) {
    ptrdiff_t b = u / j->panels, p = u % j->panels;
    ptrdiff_t start = p * j->panel, len = full - start < j->panel ? full - start : j->panel;
    const char* a = j->a + j->offa[b];
    const char* bb = j->b + j->offb[b];
    char* c = j->c + j->offc[b];
    ptrdiff_t m = j->m, n = j->n;
    if (j->split_m) {
      a += start * j->ars * j->item;
      c += start * j->n * j->item;
      m = len;
    } else {
      bb += start * j->bcs * j->item;
      c += start * j->item;
      n = len;
    }
    int im = (int)m, in = (int)n, ik = (int)j->k, ldc = (int)j->n;
    int lda = (int)(ta == 'N' ? j->ars : j->acs), ldb = (int)(tb == 'N' ? j->brs : j->bcs);
    j->f(&tb, &ta, &in, &im, &ik, one, bb, &ldb, a, &lda, zero, c, &ldc);
  }
}

void diffsci_gemm(void* f, ptrdiff_t type, ptrdiff_t item, const char* a, const char* b,
                  char* c, const ptrdiff_t* offa, const ptrdiff_t* offb, const ptrdiff_t* offc,
                  ptrdiff_t batch, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, ptrdiff_t ars,
                  ptrdiff_t acs, ptrdiff_t brs, ptrdiff_t bcs, ptrdiff_t panel,
                  ptrdiff_t panels, ptrdiff_t split_m, ptrdiff_t threads) {
  gemm_job j = {(gemm_fn)f, (int)type, item, a, b, c, offa, offb, offc,
                m, n, k, ars, acs, brs, bcs, panel, panels, split_m};
  diffsci_parallel_for(gemm_range, &j, batch * panels, 1, 1, threads);
}
"""

_state = {}


def _capsule_address(capsule):
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return get_pointer(capsule, get_name(capsule))


def _setup():
    """(kernel, {dtype: gemm address}), or None where either is missing; on success BLAS is
    held at one thread from then on (``threads.hold_blas``)."""
    if "ready" in _state:
        return _state["ready"]
    _state["ready"] = None
    if not cc.parallel():
        return None
    try:
        from scipy.linalg import cython_blas

        capi = cython_blas.__pyx_capi__
        funcs = {dt: _capsule_address(capi[name]) for dt, (name, _) in _TYPES.items()}
        kernel = cc.function(cc.load(cc.parallel_header() + _SOURCE), "diffsci_gemm", 21)
    except (ImportError, AttributeError, KeyError, OSError, RuntimeError, ValueError):
        return None
    if not all(funcs.values()):
        return None
    # after scipy.linalg loaded its BLAS, so that the one behind cython_blas is held too
    _threads.hold_blas()
    _state["ready"] = (kernel, funcs)
    return _state["ready"]


def _layout(a):
    """(row stride, column stride) in elements of the two last axes of ``a`` when one of them
    is 1 and the other one a valid BLAS leading dimension, else None."""
    rows, cols = a.shape[-2], a.shape[-1]
    item = a.itemsize
    s0, s1 = a.strides[-2], a.strides[-1]
    if s0 % item or s1 % item:
        return None
    s0, s1 = s0 // item, s1 // item
    if cols == 1:
        s1 = 1  # the stride of a length-1 axis is arbitrary
    if rows == 1:
        s0 = max(cols, 1)
    if s1 == 1 and s0 >= max(cols, 1):
        return s0, 1
    if rows > 1 and s0 == 1 and s1 >= max(rows, 1):
        return 1, s1
    if cols == 1 and s0 >= 1:  # a column vector with any row stride: rows are contiguous
        return s0, 1
    return None


def _batch_offsets(a, batch_shape):
    """Byte offset of each matrix of ``a`` (broadcast to ``batch_shape``), as int64 [B]."""
    lead = a.ndim - 2
    strides = [0] * (len(batch_shape) - lead) + [
        0 if a.shape[i] == 1 else a.strides[i] for i in range(lead)
    ]
    offsets = np.zeros(batch_shape, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(batch_shape, strides)):
        if stride and size > 1:
            shape = [1] * len(batch_shape)
            shape[axis] = size
            offsets = offsets + np.arange(size, dtype=np.int64).reshape(shape) * stride
    return np.ascontiguousarray(np.broadcast_to(offsets, batch_shape)).reshape(-1)


def matmul(x, y, threads=None):
    """``x @ y`` (numpy's broadcasting rules, both at least 2-d, the same dtype) computed by
    the pool over one-thread BLAS calls; None where this path does not apply (see the module
    docstring): the caller then computes it otherwise."""
    threads = _threads.get_num_threads() if threads is None else threads
    if threads < 2 or x.ndim < 2 or y.ndim < 2 or x.dtype != y.dtype or x.dtype not in _TYPES:
        return None
    m, k = x.shape[-2:]
    k2, n = y.shape[-2:]
    if k != k2 or min(m, n, k) < 1 or max(m, n, k) > _INT_MAX:
        return None
    try:
        batch_shape = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    except ValueError:
        return None
    if y.ndim == 2 and x.ndim > 2 and x.flags.c_contiguous:
        # [..., M, K] @ [K, N] as one [(... M), K] GEMM
        out = matmul(x.reshape(-1, k), y, threads)
        return None if out is None else out.reshape(x.shape[:-1] + (n,))
    ready = _setup()  # first: BLAS is held at one thread also for the products left to numpy
    if ready is None:
        return None
    batch = 1
    for size in batch_shape:
        batch *= size
    # an outer product (k == 1) is as costly as writing its result: count k as 2 at least
    if m * n * max(k, 2) * batch * (4 if x.dtype.kind == "c" else 1) < PARALLEL_MACS:
        return None
    lx, ly = _layout(x), _layout(y)
    if lx is None or ly is None or max(lx + ly) > _INT_MAX:
        return None
    kernel, funcs = ready
    out = np.empty(tuple(batch_shape) + (m, n), dtype=x.dtype)
    # panels: whole matrices when the batch alone gives every thread a few; else cut each
    # matrix along its longer output side
    split_m = m >= n
    side = m if split_m else n
    want = -(-threads * PANELS_PER_THREAD // batch)  # panels per matrix
    panels = max(1, min(want, side // MIN_PANEL))
    panel = -(-side // panels)
    panels = -(-side // panel)
    offa, offb = _batch_offsets(x, batch_shape), _batch_offsets(y, batch_shape)
    offc = np.arange(batch, dtype=np.int64) * (m * n * out.itemsize)
    args = (
        funcs[x.dtype], _TYPES[x.dtype][1], out.itemsize,
        cc.address(x), cc.address(y), cc.address(out),
        cc.address(offa), cc.address(offb), cc.address(offc),
        batch, m, n, k, lx[0], lx[1], ly[0], ly[1], panel, panels, int(split_m), threads,
    )  # fmt: skip
    kernel(*args)
    return out
