"""Derivative, batching and lowering rules of the shape primitives (``core/prims/shape.py``).

All of them are linear maps: the JVP applies the primitive to the tangent, the VJP is its
transpose (reshape back, the inverse permutation, a sum over broadcast axes, slices, a crop).
Compiled code writes reshape, transpose and broadcast_to as array method calls (views).
"""

import numpy as np

from ..jit.lowering import deflowering
from ..ops import creation as ops_creation
from ..ops import indexing as ops_indexing
from ..ops import shape as ops_shape
from ..prims.shape import broadcast_to, concatenate, pad, reshape, transpose
from ..vmap import batch_rules, broadcast_batch, to_front
from ._define import def_linear_unary, defjvp, defvjp

# ---- reshape -----------------------------------------------------------------------------------
def_linear_unary(reshape, lambda g, out, x, shape: reshape(g, shape=tuple(x.shape)))
batch_rules[reshape] = lambda args, bdims, shape: (
    reshape(to_front(args[0], bdims[0]), shape=(args[0].shape[bdims[0]],) + tuple(shape)),
    0,
)
deflowering(reshape, emit=lambda args, params: f"{args[0]}.reshape({tuple(params['shape'])})")


# ---- transpose ---------------------------------------------------------------------------------
def_linear_unary(
    transpose, lambda g, out, x, perm: transpose(g, perm=tuple(int(i) for i in np.argsort(perm)))
)
batch_rules[transpose] = lambda args, bdims, perm: (
    transpose(to_front(args[0], bdims[0]), perm=(0,) + tuple(p + 1 for p in perm)),
    0,
)
deflowering(transpose, emit=lambda args, params: f"{args[0]}.transpose({tuple(params['perm'])})")


# ---- broadcast_to ------------------------------------------------------------------------------
def_linear_unary(broadcast_to, lambda g, out, x, shape: ops_shape.sum_to_shape(g, tuple(x.shape)))


def _broadcast_batch(args, bdims, shape):
    x = to_front(args[0], bdims[0])
    extra = len(shape) - (x.ndim - 1)
    x = reshape(x, shape=(x.shape[0],) + (1,) * extra + tuple(x.shape[1:]))
    return broadcast_to(x, shape=(x.shape[0],) + tuple(shape)), 0


batch_rules[broadcast_to] = _broadcast_batch
deflowering(
    broadcast_to,
    emit=lambda args, params: f"xp.broadcast_to({args[0]}, {tuple(params['shape'])})",
)


# ---- concatenate -------------------------------------------------------------------------------
def _concat_vjp(g, out, *xs, axis):
    cts, start = [], 0
    for x in xs:
        n = x.shape[axis]
        cts.append(ops_shape.slice_axis(g, axis, start, start + n))
        start += n
    return tuple(cts)


def _concat_jvp(ts, out, *xs, axis):
    if all(t is None for t in ts):
        return None
    tangents = [ops_creation.zeros_like(x) if t is None else t for t, x in zip(ts, xs)]
    return concatenate(*tangents, axis=axis)


def _concat_batch(args, bdims, axis):
    size = next(a.shape[b] for a, b in zip(args, bdims) if b is not None)
    moved = [broadcast_batch(a, b, size) for a, b in zip(args, bdims)]
    return concatenate(*moved, axis=axis + 1), 0


defvjp(concatenate, _concat_vjp)
defjvp(concatenate, _concat_jvp)
batch_rules[concatenate] = _concat_batch
deflowering(concatenate, fresh=True)


# ---- constant pad ------------------------------------------------------------------------------
def _pad_vjp(g, out, x, pads, value):
    # the cotangent of the input is the cotangent of the region it was copied to
    index = tuple(slice(lo, lo + d) for (lo, _), d in zip(pads, x.shape))
    return (ops_indexing.getitem(g, index),)


defvjp(pad, _pad_vjp)
defjvp(pad, lambda ts, out, x, pads, value: pad(ts[0], pads=pads, value=0.0))
batch_rules[pad] = lambda args, bdims, pads, value: (
    pad(to_front(args[0], bdims[0]), pads=((0, 0),) + tuple(pads), value=value),
    0,
)
deflowering(pad, fresh=True)
