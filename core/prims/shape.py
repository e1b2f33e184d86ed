"""Shape primitives: reshape, transpose, broadcast_to, concatenate, constant pad.

Other shape ops (squeeze, expand_dims, stack, split, tile, repeat, flip, roll, reflect pads)
are composites in ``core/ops/shape.py``.
"""

import numpy as np

from ..rules._define import def_linear_unary, defjvp, defvjp
from ..backend import cpu_layout
from ..primitive import ShapedArray
from ..vmap import batch_rules, broadcast_batch, to_front
from ._define import defprim


# ---- reshape ------------------------------------------------------------------------------
def _reshape_aval(x, shape):
    if int(np.prod(x.shape)) != int(np.prod(shape)):
        raise ValueError(f"reshape: cannot reshape {tuple(x.shape)} into {tuple(shape)}")
    return ShapedArray(shape, x.dtype)


def _reshape_impl(xp, x, shape):
    if xp is np and x.size >= cpu_layout.MIN_SIZE and not x.flags.c_contiguous:
        try:
            return np.reshape(x, shape, copy=False)  # a view where the strides allow one
        except ValueError:
            # numpy would copy a transposed view in its slow order (einsum's operands)
            return cpu_layout.ascontiguousarray(x).reshape(shape)
        except TypeError:  # numpy < 2.1: no copy argument
            pass
    return xp.reshape(x, shape)


reshape = defprim("reshape", _reshape_impl, _reshape_aval)
def_linear_unary(reshape, lambda g, out, x, shape: reshape(g, shape=tuple(x.shape)))
batch_rules[reshape] = lambda args, bdims, shape: (
    reshape(to_front(args[0], bdims[0]), shape=(args[0].shape[bdims[0]],) + tuple(shape)),
    0,
)


# ---- transpose ----------------------------------------------------------------------------
def _transpose_aval(x, perm):
    if sorted(perm) != list(range(len(x.shape))):
        raise ValueError(
            f"transpose: perm {perm} is not a permutation of the axes of {tuple(x.shape)}"
        )
    return ShapedArray(tuple(x.shape[p] for p in perm), x.dtype)


transpose = defprim("transpose", lambda xp, x, perm: xp.transpose(x, perm), _transpose_aval)
def_linear_unary(
    transpose, lambda g, out, x, perm: transpose(g, perm=tuple(int(i) for i in np.argsort(perm)))
)
batch_rules[transpose] = lambda args, bdims, perm: (
    transpose(to_front(args[0], bdims[0]), perm=(0,) + tuple(p + 1 for p in perm)),
    0,
)


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


def _broadcast_t(g, out, x, shape):
    from .. import ops

    return ops.sum_to_shape(g, tuple(x.shape))


def_linear_unary(broadcast_to, _broadcast_t)


def _broadcast_batch(args, bdims, shape):
    x = to_front(args[0], bdims[0])
    extra = len(shape) - (x.ndim - 1)
    x = reshape(x, shape=(x.shape[0],) + (1,) * extra + tuple(x.shape[1:]))
    return broadcast_to(x, shape=(x.shape[0],) + tuple(shape)), 0


batch_rules[broadcast_to] = _broadcast_batch


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


def _concat_vjp(g, out, *xs, axis):
    from .. import ops

    cts, start = [], 0
    for x in xs:
        n = x.shape[axis]
        cts.append(ops.slice_axis(g, axis, start, start + n))
        start += n
    return tuple(cts)


def _concat_jvp(ts, out, *xs, axis):
    from .. import ops

    if all(t is None for t in ts):
        return None
    return concatenate(*[ops.zeros_like(x) if t is None else t for t, x in zip(ts, xs)], axis=axis)


def _concat_batch(args, bdims, axis):
    size = next(a.shape[b] for a, b in zip(args, bdims) if b is not None)
    moved = [broadcast_batch(a, b, size) for a, b in zip(args, bdims)]
    return concatenate(*moved, axis=axis + 1), 0


defvjp(concatenate, _concat_vjp)
defjvp(concatenate, _concat_jvp)
batch_rules[concatenate] = _concat_batch


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


def _pad_t(g, out, x, pads, value):
    from .. import ops

    index = tuple(slice(lo, lo + d) for (lo, _), d in zip(pads, x.shape))
    return ops.getitem(g, index)


defvjp(pad, lambda g, out, x, pads, value: (_pad_t(g, out, x, pads, value),))
defjvp(pad, lambda ts, out, x, pads, value: pad(ts[0], pads=pads, value=0.0))
batch_rules[pad] = lambda args, bdims, pads, value: (
    pad(to_front(args[0], bdims[0]), pads=((0, 0),) + tuple(pads), value=value),
    0,
)
