"""Derivative and batching rules of the indexing primitives (``core/prims/indexing.py``).

``getitem`` and ``index_add`` are linear in their data inputs: each one's transpose is the
other. ``index_update`` passes the cotangent of the slots it overwrote to the new values and
zero to the old ones. Index arrays get no cotangent.
"""

import numpy as np

from ..ops import creation as ops_creation
from ..ops import elementwise as ops_elementwise
from ..ops import shape as ops_shape
from ..prims.indexing import (
    advanced_position,
    getitem,
    has_arrays,
    index_add,
    index_update,
    result_shape,
)
from ..vmap import batch_rules, broadcast_batch, to_front
from ._define import defjvp, defvjp


def _tangent_or_zeros(t, x):
    return ops_creation.zeros_like(x) if t is None else t


# ---- getitem -----------------------------------------------------------------------------------
def _getitem_vjp(g, out, x, *arrays, index):
    ct = index_add(ops_creation.zeros_like(x), g, *arrays, index=index)
    return (ct,) + (None,) * len(arrays)


def _getitem_jvp(ts, out, x, *arrays, index):
    return None if ts[0] is None else getitem(ts[0], *arrays, index=index)


defvjp(getitem, _getitem_vjp)
defjvp(getitem, _getitem_jvp)


# ---- index_add ---------------------------------------------------------------------------------
def _index_add_vjp(g, out, x, v, *arrays, index):
    return (g, getitem(g, *arrays, index=index)) + (None,) * len(arrays)


def _index_add_jvp(ts, out, x, v, *arrays, index):
    tx, tv = _tangent_or_zeros(ts[0], x), _tangent_or_zeros(ts[1], v)
    return index_add(tx, tv, *arrays, index=index)


defvjp(index_add, _index_add_vjp)
defjvp(index_add, _index_add_jvp)


# ---- index_update ------------------------------------------------------------------------------
def _index_update_vjp(g, out, x, v, *arrays, index):
    zero = ops_creation.zeros((), dtype=g.dtype)
    gx = index_update(g, zero, *arrays, index=index)
    gv = getitem(g, *arrays, index=index)
    if arrays:
        gv = ops_elementwise.where(_surviving_writes(x, arrays, index), gv, zero)
    return (gx, gv) + (None,) * len(arrays)


def _surviving_writes(x, arrays, index):
    """Bool mask over the written slots of ``x[index] = v``: False where a later slot of the
    same assignment writes the same element of x (repeated indices; the last write wins, as in
    numpy), so an overwritten value gets no gradient. Built from primitives, so it also works
    on traced index arrays (jit, vmap). On the GPU, cupy does not fix which repeated write
    wins; the mask then follows the order of this scatter, like the forward pass's."""
    shape = result_shape(x.shape, [a.shape for a in arrays], index)
    slot = ops_shape.reshape(ops_creation.arange(int(np.prod(shape)), dtype="int64"), shape)
    winner = index_update(ops_creation.zeros(x.shape, dtype="int64"), slot, *arrays, index=index)
    return getitem(winner, *arrays, index=index) == slot


def _index_update_jvp(ts, out, x, v, *arrays, index):
    tx, tv = _tangent_or_zeros(ts[0], x), _tangent_or_zeros(ts[1], v)
    return index_update(tx, tv, *arrays, index=index)


defvjp(index_update, _index_update_vjp)
defjvp(index_update, _index_update_jvp)


# ---- batching ----------------------------------------------------------------------------------
#
# vmap of x[index]: the batch axis of x goes first. Without index arrays a full slice is
# prepended to the template. With index arrays, the batch axis becomes one more advanced
# index, an arange of shape (B, 1, ..., 1) in front of the others: numpy then always puts the
# broadcast advanced dims (B, *A) first, followed by the basic dims in order, and one
# transpose moves A to where numpy puts it in the unbatched x[index].

_FULL = ("slice", None, None, None)


def _unbatched_shape(a, b):
    return tuple(a.shape) if b is None else tuple(a.shape[:b]) + tuple(a.shape[b + 1 :])


def _batch_rule(prim):
    n_data = 1 if prim is getitem else 2

    def rule(args, bdims, index):
        size = next(a.shape[b] for a, b in zip(args, bdims) if b is not None)
        x = broadcast_batch(args[0], bdims[0], size)  # [B, *x]
        x_shape = tuple(x.shape[1:])
        arrays, arr_bdims = args[n_data:], bdims[n_data:]
        arr_shapes = [_unbatched_shape(a, b) for a, b in zip(arrays, arr_bdims)]
        result = result_shape(x_shape, arr_shapes, index)  # the unbatched x[index], numpy's order
        perm = None  # our order (B, *A, *basic) -> numpy's (B, *basic[:k], *A, *basic[k:])
        if not has_arrays(index):
            new_index = (_FULL, *index)
            new_arrays = []
        else:
            n_a = len(np.broadcast_shapes(*arr_shapes))
            batch_index = ops_shape.reshape(ops_creation.arange(size), (size,) + (1,) * n_a)
            new_arrays = [batch_index]
            for a, b, s in zip(arrays, arr_bdims, arr_shapes):
                if b is not None:
                    # [B, *a] right-aligned under the arange: [B, 1.., *a]
                    a = ops_shape.reshape(to_front(a, b), (size,) + (1,) * (n_a - len(s)) + s)
                new_arrays.append(a)
            new_index = (("array", 0),) + tuple(
                ("array", e[1] + 1) if isinstance(e, tuple) and e[0] == "array" else e
                for e in index
            )
            k = advanced_position(index, len(x_shape))
            n_basic = len(result) - n_a
            if k and n_a:
                perm = (
                    0,
                    *range(1 + n_a, 1 + n_a + k),
                    *range(1, 1 + n_a),
                    *range(1 + n_a + k, 1 + n_a + n_basic),
                )
        if prim is getitem:
            out = getitem(x, *new_arrays, index=new_index)
            return (out if perm is None else ops_shape.transpose(out, perm)), 0
        v, bv = args[1], bdims[1]
        # v broadcasts against the unbatched result; give it the batched result's rank and order
        if bv is None:
            v = ops_shape.reshape(v, (1,) * (1 + len(result) - v.ndim) + tuple(v.shape))
        else:
            v = to_front(v, bv)
            v = ops_shape.reshape(
                v, (size,) + (1,) * (len(result) - (v.ndim - 1)) + tuple(v.shape[1:])
            )
        if perm is not None:
            v = ops_shape.transpose(v, tuple(int(i) for i in np.argsort(perm)))
        return prim(x, v, *new_arrays, index=new_index), 0

    return rule


for _p in (getitem, index_add, index_update):
    batch_rules[_p] = _batch_rule(_p)
