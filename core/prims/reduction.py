"""Reductions over static axes: sum, max, min, prod, argmax, argmin, cumsum, cumprod.

``axes`` is always a tuple of non-negative ints (``core.ops`` normalizes it).
"""

import numpy as np

from ..autodiff.rules import def_linear_unary, defjvp, defvjp
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


reduce_sum = _reduce("reduce_sum", lambda xp, x, axes, keepdims: xp.sum(x, axis=axes, keepdims=keepdims))
reduce_max = _reduce("reduce_max", lambda xp, x, axes, keepdims: xp.max(x, axis=axes, keepdims=keepdims))
reduce_min = _reduce("reduce_min", lambda xp, x, axes, keepdims: xp.min(x, axis=axes, keepdims=keepdims))
reduce_prod = _reduce("reduce_prod", lambda xp, x, axes, keepdims: xp.prod(x, axis=axes, keepdims=keepdims))


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
    right = ops.flip(ops.cumprod(ops.flip(ops.concat([flat[..., 1:], ones], axis=-1), -1), axis=-1), -1)
    others = ops.reshape(left * right, xt.shape)
    inv = tuple(np.argsort(perm))
    return ops.transpose(others, inv)


defvjp(reduce_prod, lambda g, out, x, axes, keepdims: (_keep(g, x, axes, keepdims) * _prod_others(x, axes),))
defjvp(
    reduce_prod,
    lambda ts, out, x, axes, keepdims: reduce_sum(ts[0] * _prod_others(x, axes), axes=axes, keepdims=keepdims),
)


def _arg_aval(x, axis, keepdims):
    _check_axes("argmax", x, (axis,))
    return ShapedArray(_reduced_shape(x.shape, (axis,), keepdims), np.dtype("int64"))


def _arg(name, fn):
    p = defprim(name, lambda xp, x, axis, keepdims: fn(xp, x, axis, keepdims).astype(np.int64), _arg_aval, False)
    batch_rules[p] = axis_rule(p, ("axis",))
    return p


argmax = _arg("argmax", lambda xp, x, axis, keepdims: xp.argmax(x, axis=axis, keepdims=keepdims))
argmin = _arg("argmin", lambda xp, x, axis, keepdims: xp.argmin(x, axis=axis, keepdims=keepdims))


def _cumsum_impl(xp, x, axis, reverse):
    if reverse:
        return xp.flip(xp.cumsum(xp.flip(x, axis), axis=axis), axis)
    return xp.cumsum(x, axis=axis)


def _cumprod_impl(xp, x, axis, reverse):
    if reverse:
        return xp.flip(xp.cumprod(xp.flip(x, axis), axis=axis), axis)
    return xp.cumprod(x, axis=axis)


cumsum = defprim("cumsum", _cumsum_impl, same_aval)
cumprod = defprim("cumprod", _cumprod_impl, same_aval)
batch_rules[cumsum] = axis_rule(cumsum, ("axis",))
batch_rules[cumprod] = axis_rule(cumprod, ("axis",))
def_linear_unary(cumsum, lambda g, out, x, axis, reverse: cumsum(g, axis=axis, reverse=not reverse))


def _cumprod_vjp(g, out, x, axis, reverse):
    # d out_k / d x_i = out_k / x_i for i <= k (inputs must be nonzero for this rule)
    return (cumsum(g * out, axis=axis, reverse=not reverse) / x,)


defvjp(cumprod, _cumprod_vjp)
defjvp(cumprod, lambda ts, out, x, axis, reverse: out * cumsum(ts[0] / x, axis=axis, reverse=reverse))
