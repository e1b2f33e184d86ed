"""Shape primitives: reshape, transpose, broadcast_to, concatenate, constant pad.

Other shape ops (squeeze, expand_dims, stack, split, tile, repeat, flip, roll, reflect pads)
are composites in ``core/ops/shape.py``. The derivative and batching rules are in
``core/rules/shape.py``; the CPU's reshape of a transposed view is a tiled copy
(``core/backend/cpu_impls/arrays.py``).
"""

import numpy as np

from ..primitive import ShapedArray
from ._define import defprim


# ---- reshape ------------------------------------------------------------------------------
def _reshape_aval(x, shape):
    if int(np.prod(x.shape)) != int(np.prod(shape)):
        raise ValueError(f"reshape: cannot reshape {tuple(x.shape)} into {tuple(shape)}")
    return ShapedArray(shape, x.dtype)


reshape = defprim("reshape", lambda xp, x, shape: xp.reshape(x, shape), _reshape_aval)


# ---- transpose ----------------------------------------------------------------------------
def _transpose_aval(x, perm):
    if sorted(perm) != list(range(len(x.shape))):
        raise ValueError(
            f"transpose: perm {perm} is not a permutation of the axes of {tuple(x.shape)}"
        )
    return ShapedArray(tuple(x.shape[p] for p in perm), x.dtype)


transpose = defprim("transpose", lambda xp, x, perm: xp.transpose(x, perm), _transpose_aval)


# ---- broadcast_to -------------------------------------------------------------------------
def _broadcast_aval(x, shape):
    try:
        np.broadcast_shapes(x.shape, shape)
        ok = tuple(np.broadcast_shapes(x.shape, shape)) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"broadcast_to: cannot broadcast {tuple(x.shape)} to {tuple(shape)}")
    return ShapedArray(shape, x.dtype)


broadcast_to = defprim(
    "broadcast_to", lambda xp, x, shape: xp.broadcast_to(x, shape), _broadcast_aval
)


# ---- concatenate ----------------------------------------------------------------------------
def _concat_aval(*xs, axis):
    first = xs[0]
    for x in xs[1:]:
        if len(x.shape) != len(first.shape) or any(
            a != b for i, (a, b) in enumerate(zip(x.shape, first.shape)) if i != axis
        ):
            raise ValueError(
                f"concat: shapes {[tuple(t.shape) for t in xs]} differ outside axis {axis}"
            )
    shape = list(first.shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    return ShapedArray(shape, first.dtype)


concatenate = defprim(
    "concatenate", lambda xp, *xs, axis: xp.concatenate(xs, axis=axis), _concat_aval
)


# ---- constant pad ------------------------------------------------------------------------------
def _pad_aval(x, pads, value):
    if len(pads) != len(x.shape):
        raise ValueError(f"pad: {len(pads)} (lo, hi) pairs for a tensor of rank {len(x.shape)}")
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        raise ValueError(f"pad: negative padding {pads}")
    return ShapedArray(tuple(d + lo + hi for d, (lo, hi) in zip(x.shape, pads)), x.dtype)


def _pad_impl(xp, x, pads, value):
    return xp.pad(x, pads, mode="constant", constant_values=value)


pad = defprim("pad", _pad_impl, _pad_aval)
