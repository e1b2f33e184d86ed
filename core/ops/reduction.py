"""Reductions: sum mean prod max min argmax argmin var std logsumexp norm cumsum cumprod."""

import builtins
import math

from .. import dtypes as _dt
from ..prims import reduction as prims_reduction
from ._convert import as_tensor, normalize_axes, normalize_axis
from .elementwise import astype, conj, equal, exp, log, not_equal, real, sqrt, stop_gradient, where
from .shape import reshape, squeeze

_LOW = (_dt.float16, _dt.bfloat16)


def _in_dtype(x, dtype):
    """``x`` as a tensor, converted to ``dtype`` first when one is given (numpy's ``dtype=``)."""
    x = as_tensor(x)
    return x if dtype is None else astype(x, dtype)


def sum(x, axis=None, keepdims=False, dtype=None):
    """Sum over ``axis`` (int, tuple or None for all)."""
    x = _in_dtype(x, dtype)
    if dtype is None and x.dtype == _dt.bool_:
        x = astype(x, _dt.int64)
    return prims_reduction.reduce_sum(
        x, axes=normalize_axes(axis, x.ndim, "sum"), keepdims=bool(keepdims)
    )


def _count(x, axes):
    n = 1
    for a in axes:
        n *= x.shape[a]
    return n


def mean(x, axis=None, keepdims=False, dtype=None):
    """Mean over ``axis``; ``dtype`` (numpy's) converts ``x`` first."""
    x = _in_dtype(x, dtype)
    if not _dt.is_inexact(x.dtype):
        x = astype(x, _dt.default_float)
    axes = normalize_axes(axis, x.ndim, "mean")
    if x.dtype in _LOW:  # the sum may overflow float16 although the mean does not
        return astype(mean(astype(x, _dt.float32), axes, keepdims), x.dtype)
    return prims_reduction.reduce_sum(x, axes=axes, keepdims=bool(keepdims)) * (
        1.0 / builtins.max(_count(x, axes), 1)
    )


def prod(x, axis=None, keepdims=False, dtype=None):
    x = _in_dtype(x, dtype)
    return prims_reduction.reduce_prod(
        x, axes=normalize_axes(axis, x.ndim, "prod"), keepdims=bool(keepdims)
    )


def _extremum(prim, name, x, axis, keepdims):
    x = as_tensor(x)
    if x.size == 0:
        raise ValueError(f"{name}: reduction of an empty tensor of shape {tuple(x.shape)}")
    return prim(x, axes=normalize_axes(axis, x.ndim, name), keepdims=bool(keepdims))


def max(x, axis=None, keepdims=False):
    """Maximum over ``axis`` (int, tuple or None for all); ties share the gradient equally."""
    return _extremum(prims_reduction.reduce_max, "max", x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    """Minimum over ``axis`` (int, tuple or None for all); ties share the gradient equally."""
    return _extremum(prims_reduction.reduce_min, "min", x, axis, keepdims)


def amax(x, axis=None, keepdims=False):
    return max(x, axis, keepdims)


def amin(x, axis=None, keepdims=False):
    return min(x, axis, keepdims)


def _arg_extremum(prim, name, x, axis, keepdims):
    x = as_tensor(x)
    if axis is None:
        return prim(reshape(x, (-1,)), axis=0, keepdims=False)
    return prim(x, axis=normalize_axis(axis, x.ndim, name), keepdims=bool(keepdims))


def argmax(x, axis=None, keepdims=False):
    """Index (int64) of the maximum along ``axis`` (of the flattened tensor when None)."""
    return _arg_extremum(prims_reduction.argmax, "argmax", x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    """Index (int64) of the minimum along ``axis`` (of the flattened tensor when None)."""
    return _arg_extremum(prims_reduction.argmin, "argmin", x, axis, keepdims)


def var(x, axis=None, keepdims=False, ddof=0, unbiased=None, dtype=None):
    """Variance; ``ddof=1`` (or ``unbiased=True``) divides by n - 1 (nan when n <= ddof, as
    numpy)."""
    x = _in_dtype(x, dtype)
    if unbiased is not None:
        ddof = 1 if unbiased else 0
    axes = normalize_axes(axis, x.ndim, "var")
    if x.dtype in _LOW:  # computed in float32: squares of float16 overflow early
        return astype(var(astype(x, _dt.float32), axes, keepdims, ddof), x.dtype)
    mu = mean(x, axes, keepdims=True)
    d = x - mu
    if _dt.is_complex(d.dtype):
        sq = real(d * conj(d))
    else:
        sq = d * d
    dof = _count(x, axes) - ddof
    return prims_reduction.reduce_sum(sq, axes=axes, keepdims=bool(keepdims)) * (
        1.0 / dof if dof > 0 else math.nan
    )


def std(x, axis=None, keepdims=False, ddof=0, unbiased=None, dtype=None):
    """Standard deviation. Where the variance is 0 (one element, or equal ones) std has a kink:
    its derivatives there are the conventional subgradient 0 (sqrt's slope would be infinite,
    and 0 * inf gave nan)."""
    return sqrt_at_kink(var(x, axis, keepdims, ddof, unbiased, dtype))


def sqrt_at_kink(v):
    """sqrt(v) for v >= 0 whose derivatives at v == 0 are the conventional subgradient 0 (the
    slope of sqrt is infinite there, and 0 * inf would make every derivative NaN)."""
    zero = equal(v, 0)
    return where(zero, 0.0, sqrt(where(zero, 1.0, v)))


def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) without overflow (shifted by the stop-gradient maximum)."""
    x = as_tensor(x)
    axes = normalize_axes(axis, x.ndim, "logsumexp")
    m = stop_gradient(prims_reduction.reduce_max(x, axes=axes, keepdims=True))
    m = where(prims_reduction.reduce_max(x, axes=axes, keepdims=True) > -float("inf"), m, 0.0)
    s = log(prims_reduction.reduce_sum(exp(x - m), axes=axes, keepdims=True)) + m
    if not keepdims:
        s = squeeze(s, axes)
    return s


def _flat_if_none(x, axis):
    """numpy's axis=None for cumulative ops: over the flattened tensor."""
    if axis is not None:
        return x, axis
    return reshape(x, (-1,)), 0


def cumsum(x, axis=0, reverse=False, dtype=None):
    """Cumulative sum along ``axis`` (of the flattened tensor when None)."""
    x, axis = _flat_if_none(_in_dtype(x, dtype), axis)
    if x.dtype == _dt.bool_:
        x = astype(x, _dt.int64)
    return prims_reduction.cumsum(
        x, axis=normalize_axis(axis, x.ndim, "cumsum"), reverse=bool(reverse)
    )


def cumprod(x, axis=0, reverse=False, dtype=None):
    """Cumulative product along ``axis`` (from the end when ``reverse``, of the flattened tensor
    when None); its derivatives are exact also where inputs are zero."""
    x, axis = _flat_if_none(_in_dtype(x, dtype), axis)
    return prims_reduction.cumprod(
        x, axis=normalize_axis(axis, x.ndim, "cumprod"), reverse=bool(reverse)
    )


def _any_or_all(prim, name, x, axis, keepdims):
    x = as_tensor(x)
    nonzero = astype(not_equal(x, 0), _dt.int32)
    return prim(nonzero, axes=normalize_axes(axis, x.ndim, name), keepdims=bool(keepdims)) > 0


def all(x, axis=None, keepdims=False):
    """True where every entry along ``axis`` is nonzero (bool)."""
    return _any_or_all(prims_reduction.reduce_min, "all", x, axis, keepdims)


def any(x, axis=None, keepdims=False):
    """True where some entry along ``axis`` is nonzero (bool)."""
    return _any_or_all(prims_reduction.reduce_max, "any", x, axis, keepdims)


# MindSpore 1.x functional names (``ops.reduce_mean(x, axis=(), keep_dims=False)``), which
# MindFlow's application scripts still call; ``axis=()`` means every axis, as there.
def _ms_axis(axis):
    return None if axis == () or axis is None else axis


def reduce_mean(x, axis=(), keep_dims=False):
    """MindSpore's ``ops.reduce_mean``: :func:`mean` over ``axis`` (``()``: all axes)."""
    return mean(x, _ms_axis(axis), keep_dims)


def reduce_sum(x, axis=(), keep_dims=False):
    """MindSpore's ``ops.reduce_sum``: :func:`sum` over ``axis`` (``()``: all axes)."""
    return sum(x, _ms_axis(axis), keep_dims)


def reduce_max(x, axis=(), keep_dims=False):
    """MindSpore's ``ops.reduce_max``."""
    return max(x, _ms_axis(axis), keep_dims)


def reduce_min(x, axis=(), keep_dims=False):
    """MindSpore's ``ops.reduce_min``."""
    return min(x, _ms_axis(axis), keep_dims)
