"""Indexing ops: ``x[index]``, functional updates, gather/scatter and one-hot."""

import numpy as np

from .. import dtypes as _dt
from ..primitive import Tracer
from ..prims import indexing as prims_indexing
from ..prims.shape import reshape as _reshape
from ..tensor import Tensor
from ._convert import as_tensor, const, normalize_axis


def _parse_index(x, index):
    """Split a user index into a hashable template and a list of integer index tensors."""
    if not isinstance(index, tuple):
        index = (index,)
    template, arrays = [], []
    dim = 0
    if sum(1 for e in index if e is Ellipsis) > 1:
        raise IndexError("getitem: an index can only have a single ellipsis ('...')")
    for k, e in enumerate(index):
        if e is None or e is Ellipsis:
            template.append(e)
            if e is Ellipsis:
                # the entries after the ellipsis index the last dims
                after = sum(
                    _bool_rank(f) if _is_bool(f) else 1 for f in index[k + 1 :] if f is not None
                )
                dim = max(x.ndim - after, dim)
            continue
        if isinstance(e, slice):
            template.append(
                ("slice", _int_or_none(e.start), _int_or_none(e.stop), _int_or_none(e.step))
            )
            dim += 1
            continue
        if isinstance(e, (bool, np.bool_)):
            raise IndexError("getitem: a Python bool is not a valid index; use a boolean tensor")
        if isinstance(e, (int, np.integer)):
            n = x.shape[dim] if dim < x.ndim else None
            if n is not None and not -n <= int(e) < n:
                raise IndexError(
                    f"getitem: index {int(e)} out of range for axis {dim} of size {n} (shape {tuple(x.shape)})"
                )
            template.append(int(e))
            dim += 1
            continue
        t = e if isinstance(e, Tensor) else Tensor(np.asarray(e))
        if t.dtype == _dt.bool_:
            if isinstance(t, Tracer):
                raise IndexError(
                    "getitem: boolean-mask indexing of a traced tensor has a data-dependent shape; "
                    "use core.ops.where(mask, x, 0) instead"
                )
            mask = t.asnumpy()
            expect = tuple(x.shape[dim : dim + mask.ndim])
            if mask.shape != expect:
                raise IndexError(
                    f"getitem: boolean mask of shape {mask.shape} does not match {expect} at axis {dim} of {tuple(x.shape)}"
                )
            for idx in np.nonzero(mask):
                template.append(("array", len(arrays)))
                arrays.append(Tensor._wrap(idx.astype(np.int64)))
            dim += mask.ndim
            continue
        if t.dtype.kind not in "iu":
            raise IndexError(f"getitem: index tensors must be integer or bool, got {t.dtype}")
        template.append(("array", len(arrays)))
        arrays.append(t)
        dim += 1
    if dim > x.ndim:
        raise IndexError(
            f"getitem: too many indices ({dim}) for a tensor of shape {tuple(x.shape)}"
        )
    return tuple(template), arrays


def _is_bool(e):
    return (isinstance(e, Tensor) and e.dtype == _dt.bool_) or (
        isinstance(e, np.ndarray) and e.dtype == bool
    )


def _bool_rank(e):
    return len(e.shape)


def _int_or_none(v):
    return None if v is None else int(v)


def getitem(x, index):
    """``x[index]`` with basic (ints, slices, None, ...) and advanced (integer/bool tensor) indices."""
    x = as_tensor(x)
    template, arrays = _parse_index(x, index)
    if all(e == ("slice", None, None, None) for e in template) and not arrays:
        return x
    return prims_indexing.getitem(x, *arrays, index=template)


def _value_for(x, template, arrays, value, name):
    """``value`` as a tensor of x's dtype that broadcasts to ``x[index]`` (leading size-1 dims
    beyond that rank are dropped, as numpy does)."""
    from .elementwise import astype

    v = value if isinstance(value, Tensor) else as_tensor(value, dtype=x.dtype)
    if v.dtype != x.dtype:
        v = astype(v, x.dtype)
    target = prims_indexing.result_shape(tuple(x.shape), [tuple(a.shape) for a in arrays], template)
    shape = tuple(v.shape)
    extra = len(shape) - len(target)
    if extra > 0 and all(d == 1 for d in shape[:extra]):
        v = _reshape(v, shape=shape[extra:])
    try:
        ok = np.broadcast_shapes(tuple(v.shape), target) == target
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"{name}: a value of shape {shape} cannot be broadcast to x[index] of shape {target} "
            f"(x of shape {tuple(x.shape)})"
        )
    return v


def index_update(x, index, value):
    """A copy of ``x`` with ``x[index] = value`` (differentiable w.r.t. both)."""
    x = as_tensor(x)
    template, arrays = _parse_index(x, index)
    v = _value_for(x, template, arrays, value, "index_update")
    return prims_indexing.index_update(x, v, *arrays, index=template)


def index_add(x, index, value):
    """A copy of ``x`` with ``value`` added at ``index``; repeated indices accumulate."""
    x = as_tensor(x)
    template, arrays = _parse_index(x, index)
    v = _value_for(x, template, arrays, value, "index_add")
    return prims_indexing.index_add(x, v, *arrays, index=template)


def take(x, indices, axis=None):
    """Elements of ``x`` at integer ``indices`` along ``axis`` (flattened when None)."""
    x = as_tensor(x)
    if axis is None:
        if x.ndim != 1:
            x = _reshape(x, shape=(int(np.prod(x.shape)),))
        axis = 0
    axis = normalize_axis(axis, x.ndim, "take")
    return getitem(
        x, (slice(None),) * axis + (indices if not isinstance(indices, int) else int(indices),)
    )


def _along_axis_index(x, indices, axis):
    """Index tuple for take_along_axis: aranges on the other axes, ``indices`` on ``axis``."""
    idx = []
    for a in range(x.ndim):
        if a == axis:
            idx.append(indices)
        else:
            shape = [1] * x.ndim
            shape[a] = indices.shape[a]
            idx.append(const(np.arange(indices.shape[a]).reshape(shape)))
    return tuple(idx)


def take_along_axis(x, indices, axis):
    """``out[i, j, k] = x[i, indices[i, j, k], k]`` for axis 1 (numpy.take_along_axis)."""
    x, indices = as_tensor(x), as_tensor(indices)
    axis = normalize_axis(axis, x.ndim, "take_along_axis")
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices of rank {indices.ndim} for x of rank {x.ndim}")
    return getitem(x, _along_axis_index(x, indices, axis))


gather_elements = take_along_axis


def gather(x, indices, axis):
    """MindSpore ``ops.gather``: slices of ``x`` along ``axis`` picked by ``indices`` (any shape)."""
    return take(x, indices, axis)


def scatter_add(x, indices, updates, axis):
    """``x`` plus ``updates`` scattered along ``axis`` at ``indices`` (shapes as take_along_axis)."""
    x, indices = as_tensor(x), as_tensor(indices)
    axis = normalize_axis(axis, x.ndim, "scatter_add")
    return index_add(x, _along_axis_index(x, indices, axis), updates)


def index_add_axis(x, axis, indices, source):
    """MindSpore/PyTorch ``index_add``: ``x[..., indices[i], ...] += source[..., i, ...]``."""
    x = as_tensor(x)
    axis = normalize_axis(axis, x.ndim, "index_add")
    return index_add(x, (slice(None),) * axis + (as_tensor(indices),), source)


def one_hot(indices, num_classes, dtype=None):
    """``[..., num_classes]`` one-hot encoding of integer ``indices``."""
    from .elementwise import astype, equal

    indices = as_tensor(indices)
    classes = const(np.arange(int(num_classes), dtype=_dt.default_int), like=indices)
    hot = equal(_reshape(indices, shape=(*indices.shape, 1)), classes)
    return astype(hot, dtype or _dt.default_float)
