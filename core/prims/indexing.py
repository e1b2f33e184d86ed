"""Indexing primitives: ``getitem``, ``index_add`` (scatter-add) and ``index_update``.

The static part of an index is a hashable *template*: a tuple whose entries are ints,
``None``, ``Ellipsis``, ``("slice", start, stop, step)`` or ``("array", k)`` for the k-th
integer index tensor passed as an extra primitive input. Boolean masks are turned into
integer arrays by ``core.ops`` before they get here.
"""

import numpy as np

from ..autodiff.rules import defjvp, defvjp
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


def _getitem_aval(x, *arrays, index):
    dummy = np.lib.stride_tricks.as_strided(np.zeros((), x.dtype), shape=x.shape, strides=(0,) * len(x.shape))
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
defjvp(getitem, lambda ts, out, x, *arrays, index: None if ts[0] is None else getitem(ts[0], *arrays, index=index))


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
    return (gx, getitem(g, *arrays, index=index)) + (None,) * len(arrays)


def _index_update_jvp(ts, out, x, v, *arrays, index):
    tx = ts[0] if ts[0] is not None else _zeros(x)
    tv = ts[1] if ts[1] is not None else _zeros(v)
    return index_update(tx, tv, *arrays, index=index)


defvjp(index_update, _index_update_vjp)
defjvp(index_update, _index_update_jvp)


# ---- batching ---------------------------------------------------------------------------------
def _basic_template_batch(args, bdims, index, prim):
    """Only the data operands are batched and the index has no arrays: prepend a full slice."""
    size = next(a.shape[b] for a, b in zip(args, bdims) if b is not None)
    from ..vmap import broadcast_batch

    n_data = 1 if prim is getitem else 2
    data = list(args[:n_data])
    data[0] = broadcast_batch(data[0], bdims[0], size)
    if n_data == 2:
        v, bv = args[1], bdims[1]
        if bv is not None:
            # v broadcasts against x[index]; give it a leading batch axis aligned with x's
            v = to_front(v, bv)
            target_rank = len(getitem(data[0], index=((("slice", None, None, None),) + index)).shape)
            if v.ndim < target_rank:
                from .. import ops

                v = ops.reshape(v, (v.shape[0],) + (1,) * (target_rank - v.ndim) + tuple(v.shape[1:]))
        data[1] = v
    new_index = (("slice", None, None, None),) + tuple(index)
    return prim(*data, index=new_index), 0


def _batch_rule(prim):
    def rule(args, bdims, index):
        n_data = 1 if prim is getitem else 2
        if not _has_arrays(index) or all(b is None for b in bdims[n_data:]):
            if not _has_arrays(index):
                return _basic_template_batch(args, bdims, index, prim)
        return _advanced_batch(prim, args, bdims, index, n_data)

    return rule


def _advanced_batch(prim, args, bdims, index, n_data):
    """Batch an index with integer arrays: the batch becomes one more advanced index (an arange).

    Every slice is turned into an explicit arange array too, so that numpy puts all indexed
    dimensions in a predictable order; the result is then transposed into place.
    """
    from .. import ops
    from ..vmap import broadcast_batch

    size = next(a.shape[b] for a, b in zip(args, bdims) if b is not None)
    x = broadcast_batch(args[0], bdims[0], size)
    arrays = [broadcast_batch(a, b, size) for a, b in zip(args[n_data:], bdims[n_data:])]
    # expand Ellipsis and fill missing trailing dims with full slices
    entries = list(index)
    n_consumed = sum(1 for e in entries if e is not None and e is not Ellipsis)
    rank = x.ndim - 1
    if Ellipsis in entries:
        k = entries.index(Ellipsis)
        entries[k : k + 1] = [("slice", None, None, None)] * (rank - n_consumed)
    else:
        entries += [("slice", None, None, None)] * (rank - n_consumed)
    # Build a fully advanced index: batch arange, then one array per remaining entry.
    # Array entries broadcast together (shape A); each slice dimension adds its own axis.
    arr_shape = np.broadcast_shapes(*[tuple(a.shape[1:]) for a in arrays]) if arrays else ()
    slice_dims = []
    dim = 0
    for e in entries:
        if e is None:
            slice_dims.append(("new", None))
        elif isinstance(e, tuple) and e[0] == "slice":
            n = len(range(*slice(e[1], e[2], e[3]).indices(x.shape[1 + dim])))
            slice_dims.append(("slice", (dim, e, n)))
            dim += 1
        else:
            dim += 1
    n_slice = len(slice_dims)
    total = 1 + len(arr_shape) + n_slice  # result rank: batch, array dims, slice/new dims
    idx = []
    bshape = [1] * total
    bshape[0] = size
    idx.append(ops.reshape(ops.arange(size), bshape))
    dim = 0
    s = 0
    for e in entries:
        if e is None:
            s += 1
            continue
        if isinstance(e, tuple) and e[0] == "slice":
            n = len(range(*slice(e[1], e[2], e[3]).indices(x.shape[1 + dim])))
            start, stop, step = slice(e[1], e[2], e[3]).indices(x.shape[1 + dim])
            shape = [1] * total
            shape[1 + len(arr_shape) + s] = n
            idx.append(ops.reshape(ops.arange(start, stop, step), shape))
            s += 1
        elif isinstance(e, tuple) and e[0] == "array":
            a = arrays[e[1]]
            a = ops.broadcast_to(a, (size,) + tuple(arr_shape))
            idx.append(ops.reshape(a, (size,) + tuple(arr_shape) + (1,) * n_slice))
        else:  # int
            idx.append(ops.full((1,) * total, e, dtype="int64"))
        dim += 1
    # result of x[idx] has shape (B, *A, *slice_dims); new axes (None) need an explicit length-1 dim
    template = tuple(("array", k) for k in range(len(idx)))
    has_new = any(kind == "new" for kind, _ in slice_dims)
    if prim is getitem:
        out = getitem(x, *idx, index=template)
        order = _numpy_order(index, arr_shape, slice_dims)
        return _arrange(out, order, len(arr_shape), has_new), 0
    v = broadcast_batch(args[1], bdims[1], size)
    # v must broadcast to the unbatched result of x[index] (numpy order); bring it to ours
    ref = getitem(args[0] if bdims[0] is None else ops.take(args[0], 0, axis=bdims[0]),
                  *[a if b is None else ops.take(a, 0, axis=b) for a, b in zip(args[n_data:], bdims[n_data:])],
                  index=index)
    v = ops.broadcast_to(ops.reshape(v, (size,) + (1,) * (ref.ndim - (v.ndim - 1)) + tuple(v.shape[1:])),
                         (size,) + tuple(ref.shape))
    order = _numpy_order(index, arr_shape, slice_dims)
    v = _unarrange(v, order, len(arr_shape), slice_dims)
    return prim(x, v, *idx, index=template), 0


def _numpy_order(index, arr_shape, slice_dims):
    """Where numpy places the broadcast array dims among the slice dims in x[index]."""
    positions = [i for i, e in enumerate(index) if isinstance(e, tuple) and e[0] == "array" or isinstance(e, int)]
    if not positions:
        return 0
    contiguous = positions == list(range(positions[0], positions[-1] + 1))
    if not contiguous:
        return 0
    # count slice/new entries before the first array entry (Ellipsis expands to slices)
    before = 0
    expanded_before = 0
    for e in index[: positions[0]]:
        if e is Ellipsis:
            expanded_before += 1
        else:
            before += 1
    if expanded_before:
        n_after_arrays = sum(1 for e in index[positions[-1] + 1 :] if e is not Ellipsis)
        return len(slice_dims) - n_after_arrays - sum(
            1 for e in index[positions[-1] + 1 :] if isinstance(e, tuple) and e[0] == "slice" and False
        )
    return before


def _arrange(out, insert_at, n_arr, has_new):
    from .. import ops

    if insert_at == 0 or n_arr == 0:
        return out
    # out: (B, A..., S...) -> (B, S[:insert_at], A..., S[insert_at:])
    nd = out.ndim
    arr_axes = list(range(1, 1 + n_arr))
    sl_axes = list(range(1 + n_arr, nd))
    perm = [0] + sl_axes[:insert_at] + arr_axes + sl_axes[insert_at:]
    return ops.transpose(out, tuple(perm))


def _unarrange(v, insert_at, n_arr, slice_dims):
    from .. import ops

    if insert_at == 0 or n_arr == 0:
        return v
    nd = v.ndim
    # v: (B, S[:k], A..., S[k:]) -> (B, A..., S...)
    k = insert_at
    sl_before = list(range(1, 1 + k))
    arr_axes = list(range(1 + k, 1 + k + n_arr))
    sl_after = list(range(1 + k + n_arr, nd))
    return ops.transpose(v, tuple([0] + arr_axes + sl_before + sl_after))


for _p in (getitem, index_add, index_update):
    batch_rules[_p] = _batch_rule(_p)
