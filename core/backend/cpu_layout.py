"""Fast contiguous copies of transposed arrays (a native tiled transpose).

``np.ascontiguousarray`` of a permuted view walks the source in the destination's order: when
the source's unit-stride axis is not the destination's last axis, every element read touches
a new cache line. A [256, 256, 128] float32 pair tensor viewed as [128, 256, 256] takes 63 ms
to copy that way against 5 ms for a plain copy (PyTorch's ``.contiguous()`` takes 70 ms). The
einsums of AlphaFold's triangle updates and attention do such copies to reach BLAS, several
per layer.

:func:`contiguous` copies in square tiles over the two axes involved (the source's fastest axis
and the destination's last axis), so both sides stream through whole cache lines. It returns
None where numpy's copy is already fine or no C compiler is available (``core.backend.cc``);
callers then use numpy. The copy moves bits: every dtype of item size 1, 2, 4, 8 or 16 works.
"""

import re

import numpy as np

from . import cc
from .threads import get_num_threads

MIN_SIZE = 1 << 15  # elements; below this numpy's copy is as fast (the data fits in cache)
_MAX_DIMS = 8
_TILE = 32
_ITEMS = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t", 16: "item16"}

_HEADER = """
#include <stddef.h>
#include <stdint.h>
typedef struct { uint64_t lo, hi; } item16;
"""

# one copy of this per item type T
_KERNEL = """
/* dst (C-contiguous, shape `shape`) = src read with element strides `ss`. Axis p is the
   source's fastest axis and axis d = ndim - 1 the destination's. A unit of work is one
   TILE-row strip of one [shape[p], shape[d]] block (the other axes are the block's index
   `o`, decoded mixed-radix), copied in TILE x TILE tiles; units are split among threads. */
typedef struct {
  const T* src; T* dst; ptrdiff_t ndim, p, strips; const ptrdiff_t* shape; const ptrdiff_t* ss;
} permute_job_T;
static void permute_range_T(void* job, ptrdiff_t lo, ptrdiff_t hi) {
  const permute_job_T* j = job;
  const ptrdiff_t *shape = j->shape, *ss = j->ss;
  ptrdiff_t ndim = j->ndim, p = j->p, d = ndim - 1, ds[MAX_DIMS], total = 1;
  for (ptrdiff_t k = ndim - 1; k >= 0; --k) { ds[k] = total; total *= shape[k]; }
  ptrdiff_t np_ = shape[p], nd = shape[d], sp = ss[p], sd = ss[d], dp = ds[p];
  for (ptrdiff_t u = lo; u < hi; ++u) {
    ptrdiff_t o = u / j->strips, ip0 = (u % j->strips) * TILE, so = 0, dof = 0;
    for (ptrdiff_t k = ndim - 1; k >= 0; --k) {
      if (k == p || k == d) continue;
      ptrdiff_t idx = o % shape[k];
      o /= shape[k];
      so += idx * ss[k];
      dof += idx * ds[k];
    }
    const T* s = j->src + so;
    T* t = j->dst + dof;
    ptrdiff_t ip1 = ip0 + TILE < np_ ? ip0 + TILE : np_;
    for (ptrdiff_t id0 = 0; id0 < nd; id0 += TILE) {
      ptrdiff_t id1 = id0 + TILE < nd ? id0 + TILE : nd;
      for (ptrdiff_t ip = ip0; ip < ip1; ++ip) {
        const T* sr = s + ip * sp;
        T* tr = t + ip * dp;
        for (ptrdiff_t id = id0; id < id1; ++id) tr[id] = sr[id * sd];
      }
    }
  }
}
void permute_copy_T(const T* src, T* dst, ptrdiff_t ndim, const ptrdiff_t* shape,
                    const ptrdiff_t* ss, ptrdiff_t p, ptrdiff_t threads) {
  ptrdiff_t total = 1;
  for (ptrdiff_t k = 0; k < ndim; ++k) total *= shape[k];
  if (total == 0) return;
  ptrdiff_t strips = (shape[p] + TILE - 1) / TILE, row = TILE * shape[ndim - 1];
  permute_job_T j = {src, dst, ndim, p, strips, shape, ss};
  ptrdiff_t units = total / (shape[p] * shape[ndim - 1]) * strips;
  diffsci_parallel_for(permute_range_T, &j, units, (DIFFSCI_GRAIN + row - 1) / row, 1, threads);
}
"""


def _source():
    kernel = _KERNEL.replace("MAX_DIMS", str(_MAX_DIMS)).replace("TILE", str(_TILE))
    parts = [_HEADER, cc.parallel_header()]
    for size, ctype in _ITEMS.items():
        parts.append(re.sub(r"\bT\b", ctype, re.sub(r"_T\b", f"_{size}", kernel)))
    return "\n".join(parts)


_functions = {}


def _function(itemsize):
    fn = _functions.get(itemsize)
    if fn is None:
        try:
            lib = cc.load(_source())
        except (OSError, RuntimeError):
            return None
        fn = cc.function(lib, f"permute_copy_{itemsize}", 7)
        _functions[itemsize] = fn
    return fn


def plan(shape, strides, itemsize):
    """``(shape, element strides, p)`` for the tiled copy of an array with these byte
    ``strides``, size-1 axes dropped; or None when numpy's own copy is as good (the source's
    fastest axis is already the last one) or the layout is not one this kernel takes."""
    if itemsize not in _ITEMS:
        return None
    dims = [(n, s) for n, s in zip(shape, strides, strict=True) if n != 1]
    if len(dims) < 2 or len(dims) > _MAX_DIMS or any(s % itemsize for _, s in dims):
        return None
    shape = tuple(n for n, _ in dims)
    el = tuple(s // itemsize for _, s in dims)
    moving = [k for k in range(len(el)) if el[k] != 0]
    if not moving:
        return None
    p = min(moving, key=lambda k: (abs(el[k]), -k))
    if p == len(el) - 1 or abs(el[-1]) <= 1:
        return None  # the rows are already read in order
    return shape, el, p


def contiguous(a):
    """A C-contiguous copy of numpy array ``a`` made by the tiled kernel, or None (then use
    ``np.ascontiguousarray``): ``a`` already contiguous, small, not transposed, or no compiler."""
    if a.flags.c_contiguous or a.size < MIN_SIZE or not cc.available():
        return None
    layout = plan(a.shape, a.strides, a.itemsize)
    if layout is None:
        return None
    fn = _function(a.itemsize)
    if fn is None:
        return None
    shape, el, p = layout
    out = np.empty(a.shape, a.dtype)
    dims = np.asarray(shape, dtype=np.intp)
    steps = np.asarray(el, dtype=np.intp)
    fn(
        *[cc.address(v) for v in (a, out)],
        len(shape),
        *[cc.address(v) for v in (dims, steps)],
        p,
        get_num_threads(),
    )
    return out


def ascontiguousarray(a):
    """``np.ascontiguousarray(a)``, through the tiled kernel where that is faster."""
    out = contiguous(a)
    return np.ascontiguousarray(a) if out is None else out
