"""``ops.interpolate``: resizing ``[N, C, *spatial]`` tensors, MindSpore/PyTorch conventions.

A composite: along each resized axis the output gathers input rows at host-computed indices
(nearest) or mixes two gathered rows with fixed weights (linear), so it is differentiable in
the input to any order with no rule of its own. ``area`` is adaptive average pooling.
"""

import math

import numpy as np

from .creation import _const
from .indexing import take

_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3}
_MODES = ("nearest", "nearest-exact", "area", *_LINEAR_MODES)


def _out_sizes(op, in_sizes, size, scale_factor):
    """Output spatial sizes and the source/destination scale of each axis."""
    n = len(in_sizes)
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{op}: give exactly one of size and scale_factor")
    if size is not None:
        sizes = (size,) * n if isinstance(size, int) else tuple(int(s) for s in size)
        if len(sizes) != n:
            raise ValueError(f"{op}: size {size} has {len(sizes)} entries for {n} spatial dims")
        return sizes, [i / o for i, o in zip(in_sizes, sizes)]
    factors = (scale_factor,) * n if isinstance(scale_factor, (int, float)) else tuple(scale_factor)
    if len(factors) != n:
        raise ValueError(
            f"{op}: scale_factor {scale_factor} has {len(factors)} entries for {n} spatial dims"
        )
    sizes = tuple(math.floor(i * f) for i, f in zip(in_sizes, factors))
    return sizes, [1.0 / f for f in factors]


def nearest_indices(n_in, n_out, scale, align_corners=False, exact=False):
    """Source index of each of ``n_out`` destination positions (numpy int64 ``[n_out]``).

    ``floor(dst * scale)`` (PyTorch/MindSpore 'nearest'), ``floor((dst + 0.5) * scale)``
    ('nearest-exact'), or with ``align_corners`` ``round(dst * (n_in - 1) / (n_out - 1))``
    (``ResizeNearestNeighbor(align_corners=True)``).
    """
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        s = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        src = np.floor(dst * s + 0.5)
    else:
        src = np.floor((dst + 0.5) * scale) if exact else np.floor(dst * scale)
    return np.minimum(src, n_in - 1).astype(np.int64)


def linear_weights(n_in, n_out, scale, align_corners):
    """``(i0, i1, w)`` such that output ``= (1 - w) x[i0] + w x[i1]`` (numpy ``[n_out]`` each)."""
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    else:
        src = np.maximum((dst + 0.5) * scale - 0.5, 0.0)
    i0 = np.minimum(np.floor(src), n_in - 1).astype(np.int64)
    i1 = np.minimum(i0 + 1, n_in - 1)
    return i0, i1, src - i0


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
):
    """Resize the trailing spatial axes of ``input``.

    Args:
        input: ``[N, C, L]``, ``[N, C, H, W]`` or ``[N, C, D, H, W]``.
        size: int or tuple: the output spatial size.
        scale_factor: float or tuple: output size ``floor(in * scale_factor)``.
        mode: 'nearest', 'nearest-exact', 'linear' (3-D input), 'bilinear' (4-D),
            'trilinear' (5-D) or 'area' (adaptive average pooling).
        align_corners: linear modes only: map the corner pixels' centres onto each other.
        recompute_scale_factor: when True, the scale is recomputed from the output size
            instead of using ``1 / scale_factor``.

    Returns:
        ``[N, C, *size]`` of ``input``'s dtype.
    """
    op = "interpolate"
    if mode not in _MODES:
        raise ValueError(f"{op}: mode must be one of {_MODES}, got {mode!r}")
    nd = input.ndim - 2
    if nd not in (1, 2, 3):
        raise ValueError(
            f"{op}: input must be [N, C, *spatial] with 1-3 spatial dims, got {tuple(input.shape)}"
        )
    if mode in _LINEAR_MODES and _LINEAR_MODES[mode] != nd:
        raise ValueError(
            f"{op}: mode {mode!r} needs {_LINEAR_MODES[mode] + 2}-D input, got shape {tuple(input.shape)}"
        )
    if align_corners and mode not in _LINEAR_MODES:
        raise ValueError(f"{op}: align_corners is only for linear modes, not {mode!r}")
    in_sizes = tuple(input.shape[2:])
    sizes, scales = _out_sizes(op, in_sizes, size, scale_factor)
    if recompute_scale_factor:
        scales = [i / o for i, o in zip(in_sizes, sizes)]
    if mode == "area":
        from . import pool as ops_pool

        pool = (
            ops_pool.adaptive_avg_pool1d,
            ops_pool.adaptive_avg_pool2d,
            ops_pool.adaptive_avg_pool3d,
        )[nd - 1]
        return pool(input, sizes if nd > 1 else sizes[0])
    out = input
    for k in range(nd):
        axis = 2 + k
        n_in, n_out = in_sizes[k], sizes[k]
        if mode in _LINEAR_MODES:
            i0, i1, w = linear_weights(n_in, n_out, scales[k], bool(align_corners))
            shape = (n_out,) + (1,) * (nd - 1 - k)
            w = _const(w.astype(input.dtype).reshape(shape), like=input)
            out = (
                take(out, _const(i0, input), axis) * (1 - w)
                + take(out, _const(i1, input), axis) * w
            )
        else:
            idx = nearest_indices(n_in, n_out, scales[k], exact=mode == "nearest-exact")
            out = take(out, _const(idx, input), axis)
    return out
