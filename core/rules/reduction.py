"""Derivative, batching and lowering rules of the reductions (``core/prims/reduction.py``)."""

import numpy as np

from ..jit.lowering import deflowering
from ..ops import creation as ops_creation
from ..ops import elementwise as ops_elementwise
from ..ops import reduction as ops_reduction
from ..ops import shape as ops_shape
from ..prims.reduction import (
    argmax,
    argmin,
    cumprod,
    cumsum,
    reduce_max,
    reduce_min,
    reduce_prod,
    reduce_sum,
    reduced_shape,
)
from ..vmap import axis_rule, batch_rules
from ._define import def_linear_unary, defjvp, defvjp


def _keep(g, x, axes, keepdims):
    """Reshape a reduced cotangent so that it broadcasts against ``x``."""
    if keepdims or not axes:
        return g
    return ops_shape.reshape(g, reduced_shape(x.shape, axes, True))


# ---- sum ---------------------------------------------------------------------------------------
def _sum_t(g, out, x, axes, keepdims):
    return ops_shape.broadcast_to(_keep(g, x, axes, keepdims), x.shape)


def_linear_unary(reduce_sum, _sum_t)


# ---- max, min ----------------------------------------------------------------------------------
def _extremum_mask(out, x, axes, keepdims):
    """1 where ``x`` attains the reduced extremum ``out``, else 0 (x's dtype)."""
    hit = ops_elementwise.equal(x, _keep(out, x, axes, keepdims))
    return ops_elementwise.astype(hit, x.dtype)


def _extremum_vjp(g, out, x, axes, keepdims):
    # ties share the cotangent equally, so the rule is a valid subgradient and symmetric
    mask = _extremum_mask(out, x, axes, keepdims)
    count = reduce_sum(mask, axes=axes, keepdims=True)
    return (_keep(g, x, axes, keepdims) * mask / count,)


def _extremum_jvp(ts, out, x, axes, keepdims):
    mask = _extremum_mask(out, x, axes, keepdims)
    count = reduce_sum(mask, axes=axes, keepdims=keepdims)
    return reduce_sum(ts[0] * mask, axes=axes, keepdims=keepdims) / count


for _p in (reduce_max, reduce_min):
    defvjp(_p, _extremum_vjp)
    defjvp(_p, _extremum_jvp)


# ---- prod --------------------------------------------------------------------------------------
def _prod_others(x, axes):
    """prod_{j != i} x_j along ``axes`` for every i, exact when some x are zero."""
    nd = len(x.shape)
    rest = [i for i in range(nd) if i not in axes]
    perm = tuple(rest) + tuple(axes)
    xt = ops_shape.transpose(x, perm)
    lead = tuple(xt.shape[: len(rest)])
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    flat = ops_shape.reshape(xt, lead + (n,))
    ones = ops_creation.ones_like(flat[..., :1])
    # exclusive products from the left and from the right, multiplied
    left = ops_reduction.cumprod(ops_shape.concat([ones, flat[..., :-1]], axis=-1), axis=-1)
    right = ops_reduction.cumprod(
        ops_shape.concat([flat[..., 1:], ones], axis=-1), axis=-1, reverse=True
    )
    others = ops_shape.reshape(left * right, xt.shape)
    inv = tuple(int(i) for i in np.argsort(perm))
    return ops_shape.transpose(others, inv)


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


# ---- cumsum, cumprod ---------------------------------------------------------------------------
def_linear_unary(cumsum, lambda g, out, x, axis, reverse: cumsum(g, axis=axis, reverse=not reverse))


def _shift(x, axis, d, fill, reverse):
    """``x`` moved ``d`` steps along ``axis`` in scan order: entry k holds ``x[k - d]``
    (``x[k + d]`` when ``reverse``); the ``d`` entries that enter are ``fill``."""
    n = x.shape[axis]
    d = min(d, n)
    edge_shape = tuple(d if i == axis else s for i, s in enumerate(x.shape))
    edge = ops_creation.full(edge_shape, fill, dtype=x.dtype)
    if d == n:
        return edge
    if reverse:
        return ops_shape.concat([ops_shape.slice_axis(x, axis, d, n), edge], axis=axis)
    return ops_shape.concat([edge, ops_shape.slice_axis(x, axis, 0, n - d)], axis=axis)


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


# ---- batching: the batch axis goes first, the axis params shift by one -------------------------
for _p in (reduce_sum, reduce_max, reduce_min, reduce_prod):
    batch_rules[_p] = axis_rule(_p, ("axes",))
for _p in (argmax, argmin, cumsum, cumprod):
    batch_rules[_p] = axis_rule(_p, ("axis",))


# ---- lowering: compiled code sums with the array method; the others return fresh arrays ---------
deflowering(
    reduce_sum,
    emit=lambda args, params: (
        f"{args[0]}.sum(axis={tuple(params['axes'])}, keepdims={params['keepdims']})"
    ),
)
for _p in (reduce_max, reduce_min, reduce_prod, cumsum):
    deflowering(_p, fresh=True)
