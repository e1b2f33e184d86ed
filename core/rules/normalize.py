"""Derivative, batching and lowering rules of ``normalize`` and ``layer_norm``
(``core/prims/normalize.py``).

Written with core ops, so they differentiate again to any order. The mean and variance are
recomputed from ``x`` (two reductions) instead of being saved by the forward pass: the
primitives return one tensor, and a backward pass needs them only once.
"""

from ..jit.lowering import deflowering
from ..ops import elementwise as ops_elementwise
from ..ops import reduction as ops_reduction
from ..ops import shape as ops_shape
from ..prims.normalize import layer_norm, normalize
from ..vmap import batch_rules, broadcast_batch, to_front
from ._define import defjvp, defvjp, tangent_sum


def _mean(v, n_axes):
    """Mean of ``v`` over its trailing ``n_axes`` axes, kept as size-1 axes."""
    axes = tuple(range(len(v.shape) - n_axes, len(v.shape)))
    return ops_reduction.mean(v, axis=axes, keepdims=True)


def _project(v, xhat, x, n_axes, eps):
    """The Jacobian of normalization at ``x`` applied to ``v`` (``xhat`` the normalized ``x``):
    ``rstd * (v - mean(v) - xhat * mean(v * xhat))``. It is symmetric, so the same expression
    gives both the JVP (``v`` a tangent) and the VJP (``v`` a cotangent)."""
    d = x - _mean(x, n_axes)
    rstd = ops_elementwise.rsqrt(_mean(d * d, n_axes) + eps)
    return rstd * (v - _mean(v, n_axes) - xhat * _mean(v * xhat, n_axes))


# ---- normalize -----------------------------------------------------------------------------------
defvjp(normalize, lambda g, out, x, n_axes, eps: (_project(g, out, x, n_axes, eps),))
defjvp(normalize, lambda ts, out, x, n_axes, eps: _project(ts[0], out, x, n_axes, eps))


# ---- layer_norm: out = xhat * w + b ----------------------------------------------------------------
def _layer_norm_vjp(g, out, x, w, b, n_axes, eps, _needed=(True, True, True)):
    xhat = normalize(x, n_axes=n_axes, eps=eps)
    gx = _project(g * w, xhat, x, n_axes, eps) if _needed[0] else None
    # weight and bias broadcast over the leading axes: the engine sums them back to [C...]
    return gx, (g * xhat if _needed[1] else None), (g if _needed[2] else None)


def _layer_norm_jvp(ts, out, x, w, b, n_axes, eps):
    xhat = normalize(x, n_axes=n_axes, eps=eps)
    return tangent_sum(
        None if ts[0] is None else _project(ts[0], xhat, x, n_axes, eps) * w,
        None if ts[1] is None else xhat * ts[1],
        ts[2],
    )


defvjp(layer_norm, _layer_norm_vjp, masked=True)
defjvp(layer_norm, _layer_norm_jvp)


# ---- batching: the normalized axes are trailing, so a leading batch axis is free ------------------
def _normalize_batch(args, bdims, n_axes, eps):
    return normalize(to_front(args[0], bdims[0]), n_axes=n_axes, eps=eps), 0


def _layer_norm_batch(args, bdims, n_axes, eps):
    x, w, b = args
    if bdims[1] is None and bdims[2] is None:
        return layer_norm(to_front(x, bdims[0]), w, b, n_axes=n_axes, eps=eps), 0
    # batched weight or bias: normalize once, then the affine step with broadcasting
    size = next(a.shape[d] for a, d in zip(args, bdims) if d is not None)
    x = broadcast_batch(x, bdims[0], size)  # [B, ..., *C]
    w = broadcast_batch(w, bdims[1], size)  # [B, *C]
    b = broadcast_batch(b, bdims[2], size)  # [B, *C]
    xhat = normalize(x, n_axes=n_axes, eps=eps)
    lead = (size,) + (1,) * (x.ndim - 1 - n_axes)
    w = ops_shape.reshape(w, lead + tuple(w.shape[1:]))  # [B, 1.., *C]
    b = ops_shape.reshape(b, lead + tuple(b.shape[1:]))
    return xhat * w + b, 0


batch_rules[normalize] = _normalize_batch
batch_rules[layer_norm] = _layer_norm_batch


# ---- lowering: every implementation returns a new array, which jit may reuse as a buffer ---------
deflowering(normalize, fresh=True)
deflowering(layer_norm, fresh=True)
