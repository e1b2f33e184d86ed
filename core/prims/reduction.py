"""Reductions over static axes: sum, max, min, prod, argmax, argmin, cumsum, cumprod.

``axes`` is always a tuple of non-negative ints (``core.ops`` normalizes it).
"""

import numpy as np

from .. import dtypes as _dt
from ..rules._define import def_linear_unary, defjvp, defvjp
from ..primitive import ShapedArray
from ..vmap import axis_rule, batch_rules
from ._define import defprim, same_aval


def _reduced_shape(shape, axes, keepdims):
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
        return ShapedArray(_reduced_shape(x.shape, axes, keepdims), dtype)

    return rule


def _reduce(name, fn, differentiable=True, dtype_fn=None):
    p = defprim(name, fn, _reduce_aval(name, dtype_fn), differentiable)
    batch_rules[p] = axis_rule(p, ("axes",))
    return p


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


def _keep(g, x, axes, keepdims):
    """Reshape a reduced cotangent so that it broadcasts against ``x``."""
    from .. import ops

    if keepdims or not axes:
        return g
    return ops.reshape(g, _reduced_shape(x.shape, axes, True))


def _sum_t(g, out, x, axes, keepdims):
    from .. import ops

    return ops.broadcast_to(_keep(g, x, axes, keepdims), x.shape)


def_linear_unary(reduce_sum, _sum_t)


def _extremum_vjp(g, out, x, axes, keepdims):
    from .. import ops

    # ties share the cotangent equally, so the rule is a valid subgradient and symmetric
    mask = ops.astype(ops.equal(x, _keep(out, x, axes, keepdims)), x.dtype)
    count = reduce_sum(mask, axes=axes, keepdims=True)
    return (_keep(g, x, axes, keepdims) * mask / count,)


def _extremum_jvp(ts, out, x, axes, keepdims):
    from .. import ops

    mask = ops.astype(ops.equal(x, _keep(out, x, axes, keepdims)), x.dtype)
    count = reduce_sum(mask, axes=axes, keepdims=keepdims)
    return reduce_sum(ts[0] * mask, axes=axes, keepdims=keepdims) / count


for _p in (reduce_max, reduce_min):
    defvjp(_p, _extremum_vjp)
    defjvp(_p, _extremum_jvp)


def _prod_others(x, axes):
    """prod_{j != i} x_j along ``axes`` for every i, exact when some x are zero."""
    from .. import ops

    nd = len(x.shape)
    rest = [i for i in range(nd) if i not in axes]
    perm = tuple(rest) + tuple(axes)
    xt = ops.transpose(x, perm)
    lead = tuple(xt.shape[: len(rest)])
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    flat = ops.reshape(xt, lead + (n,))
    ones = ops.ones_like(flat[..., :1])
    left = ops.cumprod(ops.concat([ones, flat[..., :-1]], axis=-1), axis=-1)
    right = ops.flip(
        ops.cumprod(ops.flip(ops.concat([flat[..., 1:], ones], axis=-1), -1), axis=-1), -1
    )
    others = ops.reshape(left * right, xt.shape)
    inv = tuple(np.argsort(perm))
    return ops.transpose(others, inv)


defvjp(
    reduce_prod,
    lambda g, out, x, axes, keepdims: (_keep(g, x, axes, keepdims) * _prod_others(x, axes),),
)
defjvp(
    reduce_prod,
    lambda ts, out, x, axes, keepdims: reduce_sum(
        ts[0] * _prod_others(x, axes), axes=axes, keepdims=keepdims
    ),
)


def _arg_aval(x, axis, keepdims):
    _check_axes("argmax", x, (axis,))
    return ShapedArray(_reduced_shape(x.shape, (axis,), keepdims), np.dtype("int64"))


def _arg(name, fn):
    p = defprim(
        name,
        lambda xp, x, axis, keepdims: fn(xp, x, axis, keepdims).astype(np.int64),
        _arg_aval,
        False,
    )
    batch_rules[p] = axis_rule(p, ("axis",))
    return p


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
batch_rules[cumsum] = axis_rule(cumsum, ("axis",))
batch_rules[cumprod] = axis_rule(cumprod, ("axis",))
def_linear_unary(cumsum, lambda g, out, x, axis, reverse: cumsum(g, axis=axis, reverse=not reverse))


def _shift(x, axis, d, fill, reverse):
    """``x`` moved ``d`` steps along ``axis`` in scan order: entry k holds ``x[k - d]``
    (``x[k + d]`` when ``reverse``); the ``d`` entries that enter are ``fill``."""
    from .. import ops

    n = x.shape[axis]
    d = min(d, n)
    edge_shape = tuple(d if i == axis else s for i, s in enumerate(x.shape))
    edge = ops.full(edge_shape, fill, dtype=x.dtype)
    if d == n:
        return edge
    if reverse:
        return ops.concat([ops.slice_axis(x, axis, d, n), edge], axis=axis)
    return ops.concat([edge, ops.slice_axis(x, axis, 0, n - d)], axis=axis)


def _linear_scan(a, b, axis, reverse):
    """``s_k = a_k * s_{k-1} + b_k`` along ``axis`` (``s_{k+1}`` when ``reverse``), starting
    from 0. Hillis-Steele doubling: ceil(log2 n) vectorized steps of mul/add on shifted copies,
    so the result has exact derivatives of any order (no division, exact with zeros)."""
    n = a.shape[axis]
    d = 1
    while d < n:
        b = a * _shift(b, axis, d, 0.0, reverse) + b
        a = a * _shift(a, axis, d, 1.0, reverse)
        d *= 2
    return b


def _cumprod_jvp(ts, out, x, axis, reverse):
    # out_k = out_{k-1} x_k  =>  s_k = x_k s_{k-1} + out_{k-1} t_k (a linear recurrence)
    before = _shift(out, axis, 1, 1.0, reverse)
    return _linear_scan(x, before * ts[0], axis, reverse)


def _cumprod_vjp(g, out, x, axis, reverse):
    # transpose of the recurrence above: u_i = g_i + x_{i+1} u_{i+1};  xbar_i = out_{i-1} u_i.
    # Exact when some x are zero (unlike cumsum(g * out) / x).
    before = _shift(out, axis, 1, 1.0, reverse)
    after = _shift(x, axis, 1, 0.0, not reverse)
    return (before * _linear_scan(after, g, axis, not reverse),)


defvjp(cumprod, _cumprod_vjp)
defjvp(cumprod, _cumprod_jvp)
