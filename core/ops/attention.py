"""Dense layers and scaled dot-product attention, as batched matmuls (BLAS)."""

import math

import ml_dtypes
import numpy as np

from .. import dtypes as _dt
from ._convert import as_tensor, binary_args
from .activation import softmax
from .creation import _const
from .elementwise import astype, logical_and, where
from .linalg import matmul
from .shape import reshape, swapaxes


def linear(x, weight, bias=None):
    """Dense layer ``x @ weight.T + bias`` (MindSpore ``Dense`` layout), as one GEMM.

    Args:
        x: ``[..., in]``.
        weight: ``[out, in]``.
        bias: ``[out]`` or None.

    Returns:
        ``[..., out]``.
    """
    x, weight = binary_args(x, weight)
    if weight.ndim != 2 or x.ndim < 1 or x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"linear: input of shape {tuple(x.shape)} does not match weight [out, in] of shape {tuple(weight.shape)}"
        )
    lead = tuple(x.shape[:-1])
    y = matmul(reshape(x, (-1, weight.shape[1])), swapaxes(weight, 0, 1))  # [prod(lead), out]
    y = reshape(y, (*lead, weight.shape[0]))
    if bias is not None:
        if tuple(bias.shape) != (weight.shape[0],):
            raise ValueError(
                f"linear: bias of shape {tuple(bias.shape)} should be ({weight.shape[0]},)"
            )
        y = y + bias
    return y


dense = linear


def scaled_dot_product_attention(q, k, v, bias=None, mask=None, scale=None, *, is_causal=False):
    """``softmax(q k^T * scale + bias, masked) v`` with two batched matmuls.

    Args:
        q: ``[..., L, d]``; k: ``[..., S, d]``; v: ``[..., S, d_v]`` (leading axes broadcast).
        bias: additive, broadcastable to ``[..., L, S]``, or None.
        mask: boolean, broadcastable to ``[..., L, S]``, True where a query may attend.
        scale: default ``1 / sqrt(d)``.
        is_causal: also mask keys after the query (``j > i``).

    Returns:
        ``[..., L, d_v]``. A query whose keys are all masked attends uniformly (masked scores
        are the most negative finite value, not -inf, so there is no 0/0).
    """
    q, k, v = as_tensor(q), as_tensor(k), as_tensor(v)
    dtype = _dt.promote_types(_dt.promote_types(q.dtype, k.dtype), v.dtype)
    dtype = dtype if _dt.is_inexact(dtype) else _dt.default_float
    q, k, v = astype(q, dtype), astype(k, dtype), astype(v, dtype)
    if (
        q.ndim < 2
        or k.ndim < 2
        or v.ndim < 2
        or q.shape[-1] != k.shape[-1]
        or k.shape[-2] != v.shape[-2]
    ):
        raise ValueError(
            f"scaled_dot_product_attention: q {tuple(q.shape)}, k {tuple(k.shape)}, v "
            f"{tuple(v.shape)} must be [..., L, d], [..., S, d], [..., S, d_v]"
        )
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    s = matmul(q * scale, swapaxes(k, -1, -2))  # [..., L, S]
    if bias is not None:
        s = s + bias
    if is_causal:
        causal = _const(np.tri(q.shape[-2], k.shape[-2], dtype=bool))
        mask = causal if mask is None else logical_and(as_tensor(mask), causal)
    if mask is not None:
        mask = as_tensor(mask)
        if mask.dtype != _dt.bool_:
            raise TypeError(
                f"scaled_dot_product_attention: mask must be boolean (True = attend), got {mask.dtype}; pass additive masks as bias"
            )
        s = where(mask, s, float(ml_dtypes.finfo(s.dtype).min))
    p = softmax(s, axis=-1)
    return matmul(p, v)  # [..., L, d_v]
