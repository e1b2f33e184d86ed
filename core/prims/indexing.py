"""Indexing primitives: ``getitem``, ``index_add`` (scatter-add) and ``index_update``.

The static part of an index is a hashable *template*: a tuple whose entries are ints,
``None``, ``Ellipsis``, ``("slice", start, stop, step)`` or ``("array", k)`` for the k-th
integer index tensor passed as an extra primitive input. Boolean masks are turned into
integer arrays by ``core.ops`` before they get here. The derivative and batching rules are in
``core/rules/indexing.py``.
"""

import numpy as np

from ..primitive import ShapedArray
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


def has_arrays(template):
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
    if not has_arrays(index):
        return tuple(basic)
    k = advanced_position(index, ndim)
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
    if has_arrays(index):
        # numpy 2.x's add.at mis-adds values that broadcast along leading dims (values (2,)
        # for an index of shape (2, 2) adds them once, not twice): hand it a full-shape view
        target = result_shape(x.shape, [a.shape for a in arrays], index)
        if tuple(v.shape) != target:
            v = xp.broadcast_to(v, target)
        xp.add.at(out, idx, v)  # accumulates repeated indices, unlike out[idx] += v
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


# ---- where numpy puts the advanced-index dims ----------------------------------------------


def _is_advanced(e):
    return isinstance(e, int) or (isinstance(e, tuple) and e[0] == "array")


def advanced_position(index, ndim):
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
