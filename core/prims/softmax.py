"""The softmax primitive.

Softmax is a composite of max, sub, exp, sum and div, but as five separate primitives it
makes five passes over (and four fresh allocations of) tensors that dominate attention's memory
traffic, e.g. [N, heads, N, N] in triangle attention. As one primitive it allocates once and
works in that buffer (speed; its derivatives are still written with core ops).
"""

import numpy as np

from ..rules._define import defjvp, defvjp
from ..backend import cpu_kernels as _native
from ..primitive import ShapedArray
from ..vmap import axis_rule, batch_rules
from ._define import defprim

_BLOCK = 1 << 16  # elements per block (256 KiB of float32): one block stays in L2 cache
_NATIVE_MIN = 256  # elements: below this a ctypes call gains nothing


# |x| below this: exp(x) neither overflows nor lets a row sum underflow, so no shift is needed
_NO_SHIFT_BOUND = {np.dtype("float32"): 80.0, np.dtype("float64"): 700.0}


def _softmax_rows(xp, x, axis, out):
    """Softmax of ``x`` into ``out`` (both the same shape)."""
    bound = _NO_SHIFT_BOUND.get(x.dtype)
    if bound is not None and xp is np and x.size:
        # The per-row max is only there for range: when the whole block is in range, skip it.
        # A block-wide max/min is a SIMD reduction, 7x cheaper than numpy's per-row max (and a
        # NaN or -inf fails the test and takes the shifted path).
        if -bound < x.min() and x.max() < bound:
            xp.exp(x, out=out)
            xp.divide(out, _row_sums(xp, out, axis), out=out)
            return out
    m = xp.max(x, axis=axis, keepdims=True)
    if not bool(xp.isfinite(m).all()):
        m = xp.where(xp.isfinite(m), m, 0)  # rows of -inf give 0/0 = NaN, as in PyTorch
    xp.subtract(x, m, out=out)
    xp.exp(out, out=out)
    xp.divide(out, _row_sums(xp, out, axis), out=out)
    return out


def _row_sums(xp, a, axis):
    """Sums over ``axis`` (keepdims); for the rows of a 2-D block a matrix-vector product (BLAS),
    4x faster than numpy's reduction over short rows."""
    if a.ndim == 2 and axis == 1 and a.flags.c_contiguous:
        return a @ xp.ones((a.shape[1], 1), dtype=a.dtype)
    return a.sum(axis=axis, keepdims=True)


def _softmax_impl(xp, x, axis):
    if xp is np and axis == x.ndim - 1 and x.size >= _NATIVE_MIN:
        out = _native.softmax_last_axis(x)  # one C pass per row, where a compiler exists
        if out is not None:
            return out
    out = xp.empty_like(x)
    n_rows = x.size // max(x.shape[axis], 1)
    rows_per_block = _BLOCK // max(x.shape[axis], 1)
    if xp is not np or axis != x.ndim - 1 or n_rows <= rows_per_block or rows_per_block == 0:
        return _softmax_rows(xp, x, axis, out)
    # Large input, last axis: its five passes run block by block, each block while it is in
    # cache, so main memory is read once and written once (2x faster for attention logits).
    x2 = x.reshape(n_rows, x.shape[-1])
    out2 = out.reshape(n_rows, x.shape[-1])
    for start in range(0, n_rows, rows_per_block):
        stop = min(start + rows_per_block, n_rows)
        _softmax_rows(xp, x2[start:stop], 1, out2[start:stop])
    return out


def _softmax_abstract(x, axis):
    if not 0 <= axis < len(x.shape):
        raise ValueError(f"softmax: axis {axis} out of range for shape {tuple(x.shape)}")
    return ShapedArray(x.shape, x.dtype)


softmax = defprim("softmax", _softmax_impl, _softmax_abstract)


def _sum(x, axis):
    from .reduction import reduce_sum

    return reduce_sum(x, axes=(axis,), keepdims=True)


# d softmax = s * (dx - sum(s * dx)); the same expression transposes onto the cotangent
defvjp(softmax, lambda g, s, x, axis: (s * (g - _sum(g * s, axis)),))
defjvp(softmax, lambda ts, s, x, axis: s * (ts[0] - _sum(ts[0] * s, axis)))
batch_rules[softmax] = axis_rule(softmax, ("axis",))
