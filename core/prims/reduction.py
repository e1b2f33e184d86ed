"""Reductions over static axes: sum, max, min, prod, argmax, argmin, cumsum, cumprod.

``axes`` is always a tuple of non-negative ints (``core.ops`` normalizes it). The derivative
and batching rules are in ``core/rules/reduction.py``.
"""

import numpy as np

from .. import dtypes as _dt
from ..primitive import ShapedArray
from ._define import defprim, same_aval


def reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _check_axes(name, x, axes):
    for a in axes:
        if not 0 <= a < len(x.shape):
            raise ValueError(f"{name}: axis {a} out of range for shape {tuple(x.shape)}")


def _reduce_aval(name, dtype_fn=None):
    def rule(x, axes, keepdims):
        _check_axes(name, x, axes)
        dtype = x.dtype if dtype_fn is None else dtype_fn(x.dtype)
        return ShapedArray(reduced_shape(x.shape, axes, keepdims), dtype)

    return rule


def _reduce(name, fn, differentiable=True, dtype_fn=None):
    return defprim(name, fn, _reduce_aval(name, dtype_fn), differentiable)


_LOW = (np.dtype("float16"), _dt.bfloat16)


def _accumulating(fn):
    """Run numpy's accumulating reduction ``fn(x, dtype=...)`` with the output dtype of x:
    numpy would widen int32 to int64 (the shape rule says x.dtype), and float16/bfloat16 are
    accumulated in float32 (in bfloat16, a sum of 1000 ones is 256)."""

    def impl(xp, x, **params):
        if x.dtype in _LOW:
            return fn(xp, x, dtype=np.float32, **params).astype(x.dtype)
        return fn(xp, x, dtype=x.dtype, **params)

    return impl


reduce_sum = _reduce(
    "reduce_sum",
    _accumulating(
        lambda xp, x, axes, keepdims, dtype: xp.sum(x, axis=axes, keepdims=keepdims, dtype=dtype)
    ),
)
reduce_max = _reduce(
    "reduce_max", lambda xp, x, axes, keepdims: xp.max(x, axis=axes, keepdims=keepdims)
)
reduce_min = _reduce(
    "reduce_min", lambda xp, x, axes, keepdims: xp.min(x, axis=axes, keepdims=keepdims)
)
reduce_prod = _reduce(
    "reduce_prod",
    _accumulating(
        lambda xp, x, axes, keepdims, dtype: xp.prod(x, axis=axes, keepdims=keepdims, dtype=dtype)
    ),
)


def _arg_aval(x, axis, keepdims):
    _check_axes("argmax", x, (axis,))
    return ShapedArray(reduced_shape(x.shape, (axis,), keepdims), np.dtype("int64"))


def _arg(name, fn):
    return defprim(
        name,
        lambda xp, x, axis, keepdims: fn(xp, x, axis, keepdims).astype(np.int64),
        _arg_aval,
        False,
    )


argmax = _arg("argmax", lambda xp, x, axis, keepdims: xp.argmax(x, axis=axis, keepdims=keepdims))
argmin = _arg("argmin", lambda xp, x, axis, keepdims: xp.argmin(x, axis=axis, keepdims=keepdims))


@_accumulating
def _cumsum_impl(xp, x, axis, reverse, dtype):
    if reverse:
        return xp.flip(xp.cumsum(xp.flip(x, axis), axis=axis, dtype=dtype), axis)
    return xp.cumsum(x, axis=axis, dtype=dtype)


@_accumulating
def _cumprod_impl(xp, x, axis, reverse, dtype):
    if reverse:
        return xp.flip(xp.cumprod(xp.flip(x, axis), axis=axis, dtype=dtype), axis)
    return xp.cumprod(x, axis=axis, dtype=dtype)


cumsum = defprim("cumsum", _cumsum_impl, same_aval)
cumprod = defprim("cumprod", _cumprod_impl, same_aval)
