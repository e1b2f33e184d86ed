"""Indexing primitives: ``getitem``, ``index_add`` (scatter-add) and ``index_update``.

The static part of an index is a hashable *template*: a tuple whose entries are ints,
``None``, ``Ellipsis``, ``("slice", start, stop, step)`` or ``("array", k)`` for the k-th
integer index tensor passed as an extra primitive input. Boolean masks are turned into
integer arrays by ``core.ops`` before they get here.
"""

import numpy as np

from ..rules._define import defjvp, defvjp
from ..primitive import ShapedArray
from ..vmap import batch_rules, to_front
from ._define import defprim


def realize(template, arrays):
    """The numpy index for ``template`` with its array placeholders filled from ``arrays``."""
    out = []
    for e in template:
        if isinstance(e, tuple):
            if e[0] == "slice":
                out.append(slice(e[1], e[2], e[3]))
            else:
                out.append(arrays[e[1]])
        else:
            out.append(e)
    return tuple(out)


def _has_arrays(template):
    return any(isinstance(e, tuple) and e[0] == "array" for e in template)


def result_shape(x_shape, array_shapes, index):
    """Shape of ``x[index]`` for a valid index template (numpy's rules), without computing it."""
    ndim = len(x_shape)
    consumed = sum(1 for e in index if e is not None and e is not Ellipsis)
    basic, dim = [], 0
    for e in index:
        if e is None:
            basic.append(1)
        elif e is Ellipsis:
            n = ndim - consumed
            basic.extend(x_shape[dim : dim + n])
            dim += n
        elif isinstance(e, tuple) and e[0] == "slice":
            basic.append(len(range(*slice(e[1], e[2], e[3]).indices(x_shape[dim]))))
            dim += 1
        else:
            dim += 1
    basic.extend(x_shape[dim:])
    if not _has_arrays(index):
        return tuple(basic)
    k = _advanced_position(index, ndim)
    return tuple(basic[:k]) + tuple(np.broadcast_shapes(*array_shapes)) + tuple(basic[k:])


def _zero_strided(shape, dtype):
    """A read-only numpy array of ``shape`` that uses one element of memory (for shape rules)."""
    return np.lib.stride_tricks.as_strided(
        np.zeros((), dtype), shape=shape, strides=(0,) * len(shape), writeable=False
    )


def _getitem_aval(x, *arrays, index):
    dummy = _zero_strided(x.shape, x.dtype)
    fake = [np.zeros(a.shape, np.int64) for a in arrays]
    try:
        shape = dummy[realize(index, fake)].shape
    except IndexError as err:
        raise IndexError(f"getitem: index {index} on shape {tuple(x.shape)}: {err}") from None
    return ShapedArray(shape, x.dtype)


def _getitem_impl(xp, x, *arrays, index):
    return x[realize(index, arrays)]


getitem = defprim("getitem", _getitem_impl, _getitem_aval)


def _index_add_impl(xp, x, v, *arrays, index):
    out = x.copy()
    idx = realize(index, arrays)
    if _has_arrays(index):
        # numpy 2.x's add.at mis-adds values that broadcast along leading dims (values (2,)
        # for an index of shape (2, 2) adds them once, not twice): hand it a full-shape view
        target = result_shape(x.shape, [a.shape for a in arrays], index)
        if tuple(v.shape) != target:
            v = xp.broadcast_to(v, target)
        if xp is np:
            np.add.at(out, idx, v)  # accumulates repeated indices, unlike out[idx] += v
        else:
            import cupyx

            cupyx.scatter_add(out, idx, v)
    else:
        out[idx] += v
    return out


def _index_update_impl(xp, x, v, *arrays, index):
    out = x.copy()
    out[realize(index, arrays)] = v
    return out


def _scatter_aval(x, v, *arrays, index):
    return ShapedArray(x.shape, x.dtype)


index_add = defprim("index_add", _index_add_impl, _scatter_aval)
index_update = defprim("index_update", _index_update_impl, _scatter_aval)


def _zeros(x):
    from .. import ops

    return ops.zeros_like(x)


def _getitem_vjp(g, out, x, *arrays, index):
    return (index_add(_zeros(x), g, *arrays, index=index),) + (None,) * len(arrays)


defvjp(getitem, _getitem_vjp)
defjvp(
    getitem,
    lambda ts, out, x, *arrays, index: (
        None if ts[0] is None else getitem(ts[0], *arrays, index=index)
    ),
)


def _index_add_vjp(g, out, x, v, *arrays, index):
    return (g, getitem(g, *arrays, index=index)) + (None,) * len(arrays)


def _index_add_jvp(ts, out, x, v, *arrays, index):
    tx = ts[0] if ts[0] is not None else _zeros(x)
    tv = ts[1] if ts[1] is not None else _zeros(v)
    return index_add(tx, tv, *arrays, index=index)


defvjp(index_add, _index_add_vjp)
defjvp(index_add, _index_add_jvp)


def _index_update_vjp(g, out, x, v, *arrays, index):
    from .. import ops

    gx = index_update(g, ops.zeros((), dtype=g.dtype), *arrays, index=index)
    gv = getitem(g, *arrays, index=index)
    if arrays:
        gv = ops.where(_surviving_writes(x, arrays, index), gv, ops.zeros((), dtype=g.dtype))
    return (gx, gv) + (None,) * len(arrays)


def _surviving_writes(x, arrays, index):
    """Bool mask over the written slots of ``x[index] = v``: False where a later slot of the
    same assignment writes the same element of x (repeated indices; the last write wins, as in
    numpy), so an overwritten value gets no gradient. Built from primitives, so it also works
    on traced index arrays (jit, vmap). On the GPU, cupy does not fix which repeated write
    wins; the mask then follows the order of this scatter, like the forward pass's."""
    from .. import ops

    shape = result_shape(x.shape, [a.shape for a in arrays], index)
    slot = ops.reshape(ops.arange(int(np.prod(shape)), dtype="int64"), shape)
    winner = index_update(ops.zeros(x.shape, dtype="int64"), slot, *arrays, index=index)
    return getitem(winner, *arrays, index=index) == slot


def _index_update_jvp(ts, out, x, v, *arrays, index):
    tx = ts[0] if ts[0] is not None else _zeros(x)
    tv = ts[1] if ts[1] is not None else _zeros(v)
    return index_update(tx, tv, *arrays, index=index)


defvjp(index_update, _index_update_vjp)
defjvp(index_update, _index_update_jvp)


# ---- batching ---------------------------------------------------------------------------------
#
# vmap of x[index]: the batch axis of x goes first. Without index arrays a full slice is
# prepended to the template. With index arrays, the batch axis becomes one more advanced
# index, an arange of shape (B, 1, ..., 1) in front of the others: numpy then always puts the
# broadcast advanced dims (B, *A) first, followed by the basic dims in order, and one
# transpose moves A to where numpy puts it in the unbatched x[index].

_FULL = ("slice", None, None, None)


def _is_advanced(e):
    return isinstance(e, int) or (isinstance(e, tuple) and e[0] == "array")


def _advanced_position(index, ndim):
    """Where numpy puts the broadcast advanced dims among the basic result dims of
    ``x[index]`` (x of rank ``ndim``, index with arrays; ints then count as advanced): after
    the basic dims that precede the first advanced entry when all advanced entries are adjacent,
    else in front (0). Any slice, None or Ellipsis (even an empty one) between them separates."""
    consumed = sum(1 for e in index if e is not None and e is not Ellipsis)
    pos, first, gap = 0, None, False
    for e in index:
        if _is_advanced(e):
            if first is None:
                first = pos
            elif gap:
                return 0
        else:
            if first is not None:
                gap = True
            pos += (ndim - consumed) if e is Ellipsis else 1
    return first


def _unbatched_shape(a, b):
    return tuple(a.shape) if b is None else tuple(a.shape[:b]) + tuple(a.shape[b + 1 :])


def _batch_rule(prim):
    n_data = 1 if prim is getitem else 2

    def rule(args, bdims, index):
        from .. import ops
        from ..vmap import broadcast_batch

        size = next(a.shape[b] for a, b in zip(args, bdims) if b is not None)
        x = broadcast_batch(args[0], bdims[0], size)  # [B, *x]
        x_shape = tuple(x.shape[1:])
        arrays, arr_bdims = args[n_data:], bdims[n_data:]
        arr_shapes = [_unbatched_shape(a, b) for a, b in zip(arrays, arr_bdims)]
        result = result_shape(x_shape, arr_shapes, index)  # the unbatched x[index], numpy's order
        perm = None  # our order (B, *A, *basic) -> numpy's (B, *basic[:k], *A, *basic[k:])
        if not _has_arrays(index):
            new_index = (_FULL, *index)
            new_arrays = []
        else:
            n_a = len(np.broadcast_shapes(*arr_shapes))
            batch_index = ops.reshape(ops.arange(size), (size,) + (1,) * n_a)
            new_arrays = [batch_index]
            for a, b, s in zip(arrays, arr_bdims, arr_shapes):
                if b is not None:
                    # [B, *a] right-aligned under the arange: [B, 1.., *a]
                    a = ops.reshape(to_front(a, b), (size,) + (1,) * (n_a - len(s)) + s)
                new_arrays.append(a)
            new_index = (("array", 0),) + tuple(
                ("array", e[1] + 1) if isinstance(e, tuple) and e[0] == "array" else e
                for e in index
            )
            k = _advanced_position(index, len(x_shape))
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
            return (out if perm is None else ops.transpose(out, perm)), 0
        v, bv = args[1], bdims[1]
        # v broadcasts against the unbatched result; give it the batched result's rank and order
        if bv is None:
            v = ops.reshape(v, (1,) * (1 + len(result) - v.ndim) + tuple(v.shape))
        else:
            v = to_front(v, bv)
            v = ops.reshape(v, (size,) + (1,) * (len(result) - (v.ndim - 1)) + tuple(v.shape[1:]))
        if perm is not None:
            v = ops.transpose(v, tuple(int(i) for i in np.argsort(perm)))
        return prim(x, v, *new_arrays, index=new_index), 0

    return rule


for _p in (getitem, index_add, index_update):
    batch_rules[_p] = _batch_rule(_p)
