"""Normalization layers: layer, group and batch normalization.

``layer_norm`` and ``group_norm`` normalize trailing axes, so each is one primitive
(``core/prims/normalize.py``: one pass per row on the CPU); ``batch_norm`` normalizes over the
batch and spatial axes and returns the batch statistics too, so it is a composite.
"""

import numpy as np

from .. import dtypes as _dt
from ..prims import normalize as prims_normalize
from ._convert import as_tensor
from ._nn_args import as_float, channel_view, int_prod
from .creation import _const
from .elementwise import astype, rsqrt, stop_gradient
from .reduction import mean
from .shape import reshape


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalization over the trailing ``normalized_shape`` axes (Ba et al. 2016).

    Args:
        x: ``[..., *normalized_shape]``.
        normalized_shape: int or tuple: the trailing shape to normalize over.
        weight, bias: ``normalized_shape`` or None (elementwise affine).
        eps: added to the variance.

    Returns:
        Tensor of the shape of ``x``.
    """
    x = as_float(as_tensor(x))
    ns = (
        (int(normalized_shape),)
        if isinstance(normalized_shape, (int, np.integer))
        else tuple(int(s) for s in normalized_shape)
    )
    if not ns or x.ndim < len(ns) or tuple(x.shape[x.ndim - len(ns) :]) != ns:
        raise ValueError(
            f"layer_norm: input of shape {tuple(x.shape)} does not end with normalized_shape {ns}"
        )
    weight = None if weight is None else as_tensor(weight)
    bias = None if bias is None else as_tensor(bias)
    dtype = x.dtype
    for v, what in ((weight, "weight"), (bias, "bias")):
        if v is not None:
            if tuple(v.shape) != ns:
                raise ValueError(f"layer_norm: {what} of shape {tuple(v.shape)} should be {ns}")
            dtype = _dt.promote_types(dtype, v.dtype)
    # one primitive whatever is given: a missing weight is ones, a missing bias zeros (the
    # affine step rides along in the same pass, and constants get no derivative)
    x = astype(x, dtype)
    weight = _const(np.ones(ns, dtype), like=x) if weight is None else astype(weight, dtype)
    bias = _const(np.zeros(ns, dtype), like=x) if bias is None else astype(bias, dtype)
    return prims_normalize.layer_norm(x, weight, bias, n_axes=len(ns), eps=float(eps))


def group_norm(x, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalization (Wu & He 2018): statistics over each group of channels and all
    spatial positions, per sample.

    Args:
        x: ``[N, C, *spatial]``.
        num_groups: divides ``C``.
        weight, bias: ``[C]`` or None (per-channel affine).

    Returns:
        ``[N, C, *spatial]``.
    """
    x = as_float(as_tensor(x))
    if x.ndim < 2:
        raise ValueError(f"group_norm: input of shape {tuple(x.shape)} must be [N, C, *spatial]")
    n, c = x.shape[:2]
    g = int(num_groups)
    if g < 1 or c % g:
        raise ValueError(
            f"group_norm: {c} channels of input {tuple(x.shape)} do not split into {num_groups} groups"
        )
    # [N, G, C/G * prod(spatial)], normalized over its last axis
    y = prims_normalize.normalize(reshape(x, (n, g, -1)), n_axes=1, eps=float(eps))
    out = reshape(y, tuple(x.shape))
    nsp = x.ndim - 2
    if weight is not None:
        out = out * channel_view(weight, c, nsp, "group_norm", "weight")
    if bias is not None:
        out = out + channel_view(bias, c, nsp, "group_norm", "bias")
    return out


def batch_norm(
    x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5
):
    """Batch normalization (Ioffe & Szegedy 2015) over ``N`` and the spatial axes.

    Args:
        x: ``[N, C, *spatial]`` (``[N, C]`` for dense features).
        running_mean, running_var: ``[C]`` (may be None when ``training``).
        weight, bias: ``[C]`` or None.
        training: use the batch statistics and return updated running statistics; otherwise
            normalize with the running statistics.
        momentum: PyTorch's convention, ``new = (1 - momentum) * running + momentum * batch``
            (MindSpore's ``nn.BatchNorm`` momentum ``m`` corresponds to ``1 - m`` here).
        eps: added to the variance.

    Returns:
        Evaluation: the normalized ``[N, C, *spatial]``. Training: ``(out, new_mean, new_var)``
        where the new running statistics (no gradient; the variance update uses the unbiased
        batch variance) are None where the corresponding input was None. The caller stores
        them (``nn.BatchNorm`` assigns them to its buffers); nothing is updated in place.
    """
    x = as_float(as_tensor(x))
    if x.ndim < 2:
        raise ValueError(f"batch_norm: input of shape {tuple(x.shape)} must be [N, C, *spatial]")
    c, nsp = x.shape[1], x.ndim - 2
    axes = (0, *range(2, x.ndim))

    def affine(out):
        if weight is not None:
            out = out * channel_view(weight, c, nsp, "batch_norm", "weight")
        if bias is not None:
            out = out + channel_view(bias, c, nsp, "batch_norm", "bias")
        return out

    if not training:
        if running_mean is None or running_var is None:
            raise ValueError(
                "batch_norm: running_mean and running_var are needed when training=False"
            )
        rm = channel_view(running_mean, c, nsp, "batch_norm", "running_mean")
        rv = channel_view(running_var, c, nsp, "batch_norm", "running_var")
        return affine((x - rm) * rsqrt(rv + eps))
    count = int_prod(x.shape[a] for a in axes)
    if count < 2:
        raise ValueError(
            f"batch_norm: expected more than 1 value per channel when training, got input {tuple(x.shape)}"
        )
    mu = mean(x, axis=axes, keepdims=True)
    d = x - mu
    var = mean(d * d, axis=axes, keepdims=True)
    out = affine(d * rsqrt(var + eps))
    new_mean = new_var = None
    if running_mean is not None:
        running_mean = as_tensor(running_mean)
        channel_view(running_mean, c, nsp, "batch_norm", "running_mean")
        batch = stop_gradient(reshape(mu, (c,)))
        new_mean = astype((1.0 - momentum) * running_mean + momentum * batch, running_mean.dtype)
    if running_var is not None:
        running_var = as_tensor(running_var)
        channel_view(running_var, c, nsp, "batch_norm", "running_var")
        batch = stop_gradient(reshape(var, (c,))) * (count / (count - 1))
        new_var = astype((1.0 - momentum) * running_var + momentum * batch, running_var.dtype)
    return out, new_mean, new_var
