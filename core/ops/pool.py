"""Pooling: max and average pooling over sliding windows, and adaptive average pooling.

Composites: the windows come from the ``unfold`` primitive (``core/prims/conv.py``) and are
reduced over their kernel axes; adaptive pooling is one matmul per spatial axis. Layouts are
channels-first, ``x [N, C, *spatial]`` or unbatched ``[C, *spatial]``.
"""

import ml_dtypes
import numpy as np

from .. import dtypes as _dt
from ..prims import conv as prims_conv
from ..prims.conv import window_out_sizes
from ._convert import as_tensor
from ._nn_args import SPATIAL, as_float, int_prod, ntuple, pad_pairs, pad_spatial, positive
from .creation import _const
from .linalg import matmul
from .reduction import max as reduction_max
from .reduction import sum as reduction_sum
from .shape import reshape, swapaxes


def _pool_windows(name, nsp, x, kernel_size, stride, padding, dilation, fill):
    """Padded, unfolded windows ``[..., *kernel, *out]`` of ``x [..., *spatial]``."""
    if x.ndim < nsp + 1:
        raise ValueError(
            f"{name}: input of shape {tuple(x.shape)} must be [N, C, {SPATIAL[nsp]}] or [C, {SPATIAL[nsp]}]"
        )
    kernel = positive(name, "kernel_size", ntuple(kernel_size, nsp, name, "kernel_size"))
    stride = (
        kernel if stride is None else positive(name, "stride", ntuple(stride, nsp, name, "stride"))
    )
    dilation = positive(name, "dilation", ntuple(dilation, nsp, name, "dilation"))
    pads = pad_pairs(name, padding, nsp)
    for (lo, hi), k, d in zip(pads, kernel, dilation):
        if max(lo, hi) > (d * (k - 1) + 1) // 2:
            raise ValueError(
                f"{name}: padding {pads} must be at most half the (dilated) kernel size {kernel}"
            )
    x = pad_spatial(x, pads, nsp, value=fill)
    window_out_sizes(name, tuple(x.shape[x.ndim - nsp :]), kernel, stride, dilation)
    return (
        prims_conv.unfold(x, kernel=kernel, stride=stride, dilation=dilation),
        kernel,
        stride,
        pads,
    )


def _kernel_axes(cols, nsp):
    return tuple(range(cols.ndim - 2 * nsp, cols.ndim - nsp))


def _max_pool(name, nsp, x, kernel_size, stride, padding, dilation):
    x = as_tensor(x)
    if _dt.is_complex(x.dtype):
        raise TypeError(f"{name}: complex input {x.dtype}{list(x.shape)} has no ordering")
    if _dt.is_inexact(x.dtype):
        # the most negative finite value, not -inf, so that core.set_debug_nans(True) does not
        # flag the padding; a window is never all padding (padding <= half the kernel)
        fill = float(ml_dtypes.finfo(x.dtype).min)
    elif x.dtype == _dt.bool_:
        fill = False
    else:
        fill = int(np.iinfo(x.dtype).min)
    cols, *_ = _pool_windows(name, nsp, x, kernel_size, stride, padding, dilation, fill)
    # reduce_max shares the cotangent among tied maxima, as core.ops.max does
    return reduction_max(cols, axis=_kernel_axes(cols, nsp))


def max_pool1d(x, kernel_size, stride=None, padding=0, dilation=1):
    """1-d max pooling of ``x [N, C, L]`` (or ``[C, L]``) -> ``[N, C, L_out]``.

    Args:
        kernel_size, stride (default ``kernel_size``), dilation: int or one per axis.
        padding: int, one per axis or (lo, hi) pairs, at most half the kernel; padded
            entries never win.
    """
    return _max_pool("max_pool1d", 1, x, kernel_size, stride, padding, dilation)


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1):
    """2-d max pooling of ``x [N, C, H, W]`` -> ``[N, C, H_out, W_out]`` (see :func:`max_pool1d`)."""
    return _max_pool("max_pool2d", 2, x, kernel_size, stride, padding, dilation)


def max_pool3d(x, kernel_size, stride=None, padding=0, dilation=1):
    """3-d max pooling of ``x [N, C, D, H, W]`` -> ``[N, C, D_out, H_out, W_out]``."""
    return _max_pool("max_pool3d", 3, x, kernel_size, stride, padding, dilation)


def _avg_pool(name, nsp, x, kernel_size, stride, padding, count_include_pad):
    x = as_float(as_tensor(x))
    cols, kernel, stride, pads = _pool_windows(name, nsp, x, kernel_size, stride, padding, 1, 0.0)
    total = reduction_sum(cols, axis=_kernel_axes(cols, nsp))  # [..., *out]
    if count_include_pad or all(lo == 0 and hi == 0 for lo, hi in pads):
        return total * (1.0 / int_prod(kernel))
    # divisor = number of real (unpadded) entries per window: a constant computed on the host
    spatial = tuple(x.shape[x.ndim - nsp :])
    ones = np.pad(np.ones(spatial), pads)
    count = np.lib.stride_tricks.sliding_window_view(ones, kernel)
    count = count[tuple(slice(None, None, s) for s in stride)].sum(axis=tuple(range(nsp, 2 * nsp)))
    return total / _const(count.astype(x.dtype), like=x)


def avg_pool1d(x, kernel_size, stride=None, padding=0, *, count_include_pad=True):
    """1-d average pooling of ``x [N, C, L]`` (or ``[C, L]``) -> ``[N, C, L_out]``.

    Args:
        kernel_size, stride (default ``kernel_size``): int or one per axis.
        padding: zero padding, at most half the kernel.
        count_include_pad: divide by the kernel size (True) or by the number of unpadded
            entries in each window (False).
    """
    return _avg_pool("avg_pool1d", 1, x, kernel_size, stride, padding, count_include_pad)


def avg_pool2d(x, kernel_size, stride=None, padding=0, *, count_include_pad=True):
    """2-d average pooling of ``x [N, C, H, W]`` -> ``[N, C, H_out, W_out]`` (see :func:`avg_pool1d`)."""
    return _avg_pool("avg_pool2d", 2, x, kernel_size, stride, padding, count_include_pad)


def avg_pool3d(x, kernel_size, stride=None, padding=0, *, count_include_pad=True):
    """3-d average pooling of ``x [N, C, D, H, W]`` -> ``[N, C, D_out, H_out, W_out]``."""
    return _avg_pool("avg_pool3d", 3, x, kernel_size, stride, padding, count_include_pad)


def _adaptive_matrix(n_in, n_out, dtype):
    """``[n_out, n_in]`` averaging matrix with PyTorch's bins [floor(i n/m), ceil((i+1) n/m))."""
    i = np.arange(n_out)
    start = (i * n_in) // n_out
    end = -((-(i + 1) * n_in) // n_out)
    j = np.arange(n_in)
    a = ((j >= start[:, None]) & (j < end[:, None])).astype(np.float64)
    return (a / (end - start)[:, None]).astype(dtype)


def _adaptive_avg_pool(name, nsp, x, output_size):
    x = as_float(as_tensor(x))
    if x.ndim < nsp + 1:
        raise ValueError(
            f"{name}: input of shape {tuple(x.shape)} must be [N, C, {SPATIAL[nsp]}] or [C, {SPATIAL[nsp]}]"
        )
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        output_size = (output_size,) * nsp
    output_size = tuple(output_size)
    if len(output_size) != nsp:
        raise ValueError(f"{name}: output_size {output_size} must have {nsp} entries")
    for a in range(nsp):
        axis = x.ndim - nsp + a
        n_in = x.shape[axis]
        n_out = n_in if output_size[a] is None else int(output_size[a])
        if n_out < 1:
            raise ValueError(f"{name}: output_size {output_size} must be positive")
        if n_out == n_in:
            continue
        m = _const(_adaptive_matrix(n_in, n_out, x.dtype).T, like=x)  # [n_in, n_out]
        y = swapaxes(x, axis, -1)  # [..., n_in]
        lead = tuple(y.shape[:-1])
        y = reshape(matmul(reshape(y, (-1, n_in)), m), (*lead, n_out))  # one GEMM
        x = swapaxes(y, axis, -1)
    return x


def adaptive_avg_pool1d(x, output_size):
    """Average pooling of ``x [N, C, L]`` to ``[N, C, output_size]`` with PyTorch's adaptive bins,
    computed as one matmul per spatial axis (None keeps an axis's size)."""
    return _adaptive_avg_pool("adaptive_avg_pool1d", 1, x, output_size)


def adaptive_avg_pool2d(x, output_size):
    """Adaptive average pooling of ``x [N, C, H, W]`` to ``[N, C, *output_size]``."""
    return _adaptive_avg_pool("adaptive_avg_pool2d", 2, x, output_size)


def adaptive_avg_pool3d(x, output_size):
    """Adaptive average pooling of ``x [N, C, D, H, W]`` to ``[N, C, *output_size]``."""
    return _adaptive_avg_pool("adaptive_avg_pool3d", 3, x, output_size)
