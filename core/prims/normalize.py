"""The normalization primitive behind layer_norm: ``(x - mean) / sqrt(var + eps)`` over the
trailing ``n_axes`` axes.

As a composite it is eight passes over the activations (and numpy's short-row reductions are
slow); as one primitive it runs row block by row block in cache: 15x faster than the composite
on [128, 128, 128] (speed). Its derivatives are written with core ops.
"""

import numpy as np

from ..rules._define import defjvp, defvjp
from ..backend import cpu_kernels as _native
from ..primitive import ShapedArray
from ..vmap import batch_rules, to_front
from ._define import defprim

_BLOCK = 1 << 16  # elements per block (256 KiB of float32)
_NATIVE_MIN = 256  # elements: below this a ctypes call gains nothing


def _normalize_rows(xp, x, out, eps):
    """Rows of ``x`` [R, C] normalized into ``out``."""
    c = x.shape[1]
    # row sums as a matrix-vector product (BLAS): 4x faster than numpy's short-row reduction
    mu = x @ xp.full((c, 1), 1.0 / c, dtype=x.dtype)
    xp.subtract(x, mu, out=out)
    var = xp.einsum("ij,ij->i", out, out)[:, None]  # a dot product per row: no squared copy
    var *= x.dtype.type(1.0 / c)
    var += x.dtype.type(eps)
    xp.sqrt(var, out=var)
    xp.reciprocal(var, out=var)
    out *= var
    return out


def _normalize_impl(xp, x, n_axes, eps):
    c = 1
    for d in x.shape[x.ndim - n_axes :]:
        c *= d
    rows = x.size // max(c, 1)
    x2 = x.reshape(rows, c)
    if xp is np and x.size >= _NATIVE_MIN:
        out = _native.layer_norm_rows(x2, eps)  # one C pass per row, where a compiler exists
        if out is not None:
            return out.reshape(x.shape)
    out = xp.empty_like(x2)
    step = max(_BLOCK // max(c, 1), 1)
    if xp is not np or rows <= step:
        return _normalize_rows(xp, x2, out, eps).reshape(x.shape)
    for start in range(0, rows, step):
        stop = min(start + step, rows)
        _normalize_rows(xp, x2[start:stop], out[start:stop], eps)
    return out.reshape(x.shape)


def _normalize_abstract(x, n_axes, eps):
    if not 1 <= n_axes <= len(x.shape):
        raise ValueError(f"normalize: n_axes {n_axes} invalid for shape {tuple(x.shape)}")
    return ShapedArray(x.shape, x.dtype)


normalize = defprim("normalize", _normalize_impl, _normalize_abstract)


def _axes(x, n_axes):
    return tuple(range(len(x.shape) - n_axes, len(x.shape)))


def _project(v, xhat, x, n_axes, eps):
    """rstd * (v - mean(v) - xhat * mean(v * xhat)): the Jacobian of normalization applied to
    ``v``. It is symmetric, so the same expression gives both the JVP and the VJP."""
    from .. import ops

    axes = _axes(x, n_axes)
    d = x - ops.mean(x, axis=axes, keepdims=True)
    rstd = ops.rsqrt(ops.mean(d * d, axis=axes, keepdims=True) + eps)
    return rstd * (
        v
        - ops.mean(v, axis=axes, keepdims=True)
        - xhat * ops.mean(v * xhat, axis=axes, keepdims=True)
    )


defvjp(normalize, lambda g, out, x, n_axes, eps: (_project(g, out, x, n_axes, eps),))
defjvp(normalize, lambda ts, out, x, n_axes, eps: _project(ts[0], out, x, n_axes, eps))


def _normalize_batch(args, bdims, n_axes, eps):
    x = to_front(args[0], bdims[0])  # the normalized axes are trailing: a leading batch is free
    return normalize(x, n_axes=n_axes, eps=eps), 0


batch_rules[normalize] = _normalize_batch


# ---- layer_norm with its affine step -----------------------------------------------------------
# The same blocked pass also applies ``* weight + bias`` while the block is in cache: two
# fewer passes over the activations and no intermediate (speed; derivatives in core ops).


def _layer_norm_impl(xp, x, w, b, n_axes, eps):
    c = 1
    for d in x.shape[x.ndim - n_axes :]:
        c *= d
    rows = x.size // max(c, 1)
    x2 = x.reshape(rows, c)
    if xp is np and x.size >= _NATIVE_MIN:
        out = _native.layer_norm_rows(x2, eps, w.reshape(c), b.reshape(c))
        if out is not None:
            return out.reshape(x.shape)
    w1, b1 = w.reshape(1, c), b.reshape(1, c)
    out = xp.empty_like(x2)
    step = max(_BLOCK // max(c, 1), 1) if xp is np else rows
    for start in range(0, rows, step):
        stop = min(start + step, rows)
        block = _normalize_rows(xp, x2[start:stop], out[start:stop], eps)
        block *= w1
        block += b1
    return out.reshape(x.shape)


def _layer_norm_abstract(x, w, b, n_axes, eps):
    normalized = tuple(x.shape[len(x.shape) - n_axes :])
    for v, what in ((w, "weight"), (b, "bias")):
        if tuple(v.shape) != normalized:
            raise ValueError(f"layer_norm: {what} of shape {tuple(v.shape)} should be {normalized}")
    return _normalize_abstract(x, n_axes, eps)


layer_norm = defprim("layer_norm", _layer_norm_impl, _layer_norm_abstract)


def _layer_norm_vjp(g, out, x, w, b, n_axes, eps, _needed=(True, True, True)):
    xhat = normalize(x, n_axes=n_axes, eps=eps)
    gx = _project(g * w, xhat, x, n_axes, eps) if _needed[0] else None
    # weight and bias broadcast over the leading axes: the engine sums them back to [C...]
    return gx, (g * xhat if _needed[1] else None), (g if _needed[2] else None)


def _layer_norm_jvp(ts, out, x, w, b, n_axes, eps):
    xhat = normalize(x, n_axes=n_axes, eps=eps)
    total = None
    for term in (
        None if ts[0] is None else _project(ts[0], xhat, x, n_axes, eps) * w,
        None if ts[1] is None else xhat * ts[1],
        ts[2],
    ):
        if term is not None:
            total = term if total is None else total + term
    return total


defvjp(layer_norm, _layer_norm_vjp, masked=True)
defjvp(layer_norm, _layer_norm_jvp)


def _layer_norm_batch(args, bdims, n_axes, eps):
    from ..vmap import broadcast_batch

    x, w, b = args
    if bdims[1] is None and bdims[2] is None:
        return layer_norm(to_front(x, bdims[0]), w, b, n_axes=n_axes, eps=eps), 0
    # batched weight or bias: normalize once, then apply the affine step with broadcasting
    size = next(a.shape[d] for a, d in zip(args, bdims) if d is not None)
    x = broadcast_batch(x, bdims[0], size)
    w = broadcast_batch(w, bdims[1], size)
    b = broadcast_batch(b, bdims[2], size)
    xhat = normalize(x, n_axes=n_axes, eps=eps)
    lead = (size,) + (1,) * (x.ndim - 1 - n_axes)
    from .shape import reshape

    w = reshape(w, shape=lead + tuple(w.shape[1:]))
    b = reshape(b, shape=lead + tuple(b.shape[1:]))
    return xhat * w + b, 0


batch_rules[layer_norm] = _layer_norm_batch
