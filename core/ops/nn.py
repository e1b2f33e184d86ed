"""Neural-network functional ops: convolution, pooling, softmax, normalization, dropout,
attention and losses.

Everything here is a composite. Convolutions are BLAS-shaped: pad -> ``unfold`` (im2col,
``core/prims/conv.py``) -> one batched matmul over ``C_in/groups * prod(kernel)``;
transposed convolutions are the same matmul followed by ``fold`` (col2im). Pooling reduces
the unfolded windows. Layouts are channels-first as in MindSpore/PyTorch:
``x [N, C, *spatial]``; a convolution also accepts an unbatched ``[C, *spatial]`` input.
"""

import functools
import math

import ml_dtypes
import numpy as np

from .. import dtypes as _dt
from ..autodiff.api import custom_vjp
from ..prims import conv as P
from ..tensor import Tensor
from ._convert import as_tensor, binary_args, normalize_axis
from .creation import _const
from .elementwise import (
    abs,
    astype,
    exp,
    isfinite,
    log,
    logical_and,
    not_equal,
    rsqrt,
    sqrt,
    stop_gradient,
    where,
)
from .indexing import getitem, one_hot
from .linalg import matmul
from .reduction import max as _max
from .reduction import mean
from .reduction import sum as _sum
from .shape import expand_dims, moveaxis, pad, reshape, swapaxes

_SPATIAL = {1: "L", 2: "H, W", 3: "D, H, W"}
_KERNEL = {1: "kL", 2: "kH, kW", 3: "kD, kH, kW"}
_PAD_MODES = {
    "zeros": "constant",
    "reflect": "reflect",
    "replicate": "edge",
    "circular": "periodic",
}


# ---- argument normalization ---------------------------------------------------------------------
def _ntuple(value, n, name, what):
    """One int per spatial axis from an int or a sequence of n ints."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    value = tuple(value)
    if len(value) != n or not all(isinstance(v, (int, np.integer)) for v in value):
        raise ValueError(
            f"{name}: {what} {value} must be an int or {n} ints (one per spatial axis)"
        )
    return tuple(int(v) for v in value)


def _positive(name, what, values):
    if any(v < 1 for v in values):
        raise ValueError(f"{name}: {what} {values} must be positive")
    return values


def _pairs(name, padding, n):
    """``((lo, hi), ...)`` per spatial axis from an int, n ints, or n (lo, hi) pairs."""
    if isinstance(padding, (int, np.integer)):
        pads = ((int(padding), int(padding)),) * n
    else:
        padding = tuple(padding)
        if len(padding) != n:
            raise ValueError(
                f"{name}: padding {padding} must be an int, {n} ints or {n} (lo, hi) pairs"
            )
        pads = []
        for p in padding:
            if isinstance(p, (int, np.integer)):
                pads.append((int(p), int(p)))
            elif len(tuple(p)) == 2:
                pads.append((int(p[0]), int(p[1])))
            else:
                raise ValueError(
                    f"{name}: padding entry {p!r} is neither an int nor a (lo, hi) pair"
                )
        pads = tuple(pads)
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        raise ValueError(f"{name}: negative padding {pads}")
    return pads


def _conv_padding(name, padding, spatial, kernel, stride, dilation):
    if isinstance(padding, str):
        mode = padding.lower()
        if mode == "valid":
            return ((0, 0),) * len(spatial)
        if mode == "same":
            # output size ceil(n / stride) (TensorFlow/MindSpore 'same'; for stride 1 this is
            # PyTorch's 'same'); the odd pixel of an uneven total goes to the high side
            pads = []
            for n, k, s, d in zip(spatial, kernel, stride, dilation):
                total = max((-(-n // s) - 1) * s + d * (k - 1) + 1 - n, 0)
                pads.append((total // 2, total - total // 2))
            return tuple(pads)
        raise ValueError(f"{name}: padding {padding!r} must be 'same', 'valid', an int or a tuple")
    return _pairs(name, padding, len(spatial))


def _prod(values):
    n = 1
    for v in values:
        n *= int(v)
    return n


def _float(x):
    return x if _dt.is_inexact(x.dtype) else astype(x, _dt.default_float)


def _float_pair(x, y):
    x, y = binary_args(x, y)
    if not _dt.is_inexact(x.dtype):
        x, y = astype(x, _dt.default_float), astype(y, _dt.default_float)
    return x, y


def _pad_spatial(x, pads, nsp, mode="constant", value=0.0):
    if all(lo == 0 and hi == 0 for lo, hi in pads):
        return x
    return pad(x, ((0, 0),) * (x.ndim - nsp) + tuple(pads), mode=mode, value=value)


def _crop(x, pads, sizes):
    """``x[..., lo:lo + size, ...]`` on the trailing spatial axes."""
    return getitem(x, (Ellipsis, *[slice(lo, lo + n) for (lo, _), n in zip(pads, sizes)]))


def _channel_view(v, c, nsp, name, what):
    """A per-channel vector ``[C]`` shaped ``[C, 1, ..., 1]`` to broadcast over ``[N, C, *spatial]``."""
    v = as_tensor(v)
    if tuple(v.shape) != (c,):
        raise ValueError(f"{name}: {what} of shape {tuple(v.shape)} should be ({c},)")
    return reshape(v, (c,) + (1,) * nsp)


# ---- convolution ----------------------------------------------------------------------------------
def _conv_operands(name, nsp, x, weight, weight_layout):
    """Float ``x`` as ``[N, C_in, *spatial]`` (a batch axis added to an unbatched input) and
    ``weight`` ``[weight_layout, *kernel]``; also the shape the caller gave and whether it was
    unbatched."""
    x, weight = _float_pair(x, weight)
    x_shape = tuple(x.shape)  # as the caller gave it, for error messages
    unbatched = x.ndim == nsp + 1
    if unbatched:
        x = expand_dims(x, 0)
    if x.ndim != nsp + 2 or weight.ndim != nsp + 2:
        raise ValueError(
            f"{name}: expected input [N, C_in, {_SPATIAL[nsp]}] (or [C_in, {_SPATIAL[nsp]}]) and "
            f"weight [{weight_layout}, {_KERNEL[nsp]}], got shapes {x_shape} and "
            f"{tuple(weight.shape)}"
        )
    return x, weight, x_shape, unbatched


def _conv(name, nsp, x, weight, bias, stride, padding, dilation, groups, padding_mode):
    x, weight, x_shape, unbatched = _conv_operands(name, nsp, x, weight, "C_out, C_in/groups")
    n, c_in = x.shape[:2]
    c_out, c_g = weight.shape[:2]
    groups = int(groups)
    if groups < 1 or c_in % groups or c_out % groups or c_g * groups != c_in:
        raise ValueError(
            f"{name}: input {x_shape} with {c_in} channels does not match weight "
            f"{tuple(weight.shape)} with groups={groups} (need C_in == groups * weight.shape[1] "
            "and C_out divisible by groups)"
        )
    if padding_mode not in _PAD_MODES:
        raise ValueError(f"{name}: padding_mode {padding_mode!r} not in {sorted(_PAD_MODES)}")
    kernel = tuple(weight.shape[2:])
    stride = _positive(name, "stride", _ntuple(stride, nsp, name, "stride"))
    dilation = _positive(name, "dilation", _ntuple(dilation, nsp, name, "dilation"))
    pads = _conv_padding(name, padding, tuple(x.shape[2:]), kernel, stride, dilation)
    x = _pad_spatial(x, pads, nsp, _PAD_MODES[padding_mode])
    out_sp = P.window_out_sizes(name, tuple(x.shape[2:]), kernel, stride, dilation)
    if all(k == 1 for k in kernel) and all(s == 1 for s in stride):
        cols = x  # a 1x1 convolution needs no window copy: [N, C_in, *out]
    else:
        cols = P.unfold(x, kernel=kernel, stride=stride, dilation=dilation)  # [N, C_in, *k, *out]
    q, kk = _prod(out_sp), _prod(kernel)
    if groups == 1:
        # [C_out, C_in*K] @ [N, C_in*K, Q] -> [N, C_out, Q]
        y = matmul(reshape(weight, (c_out, c_g * kk)), reshape(cols, (n, c_g * kk, q)))
    else:
        # [G, C_out/G, C_g*K] @ [N, G, C_g*K, Q] -> [N, G, C_out/G, Q]
        y = matmul(
            reshape(weight, (groups, c_out // groups, c_g * kk)),
            reshape(cols, (n, groups, c_g * kk, q)),
        )
    y = reshape(y, (n, c_out, *out_sp))  # [N, C_out, *out]
    if bias is not None:
        y = y + _channel_view(bias, c_out, nsp, name, "bias")
    return reshape(y, tuple(y.shape[1:])) if unbatched else y


def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, padding_mode="zeros"):
    """1-d convolution (cross-correlation, as in MindSpore/PyTorch).

    Args:
        x: ``[N, C_in, L]`` (or unbatched ``[C_in, L]``).
        weight: ``[C_out, C_in / groups, kL]``.
        bias: ``[C_out]`` or None.
        stride, dilation: int or one int per spatial axis.
        padding: int, one int per axis, one ``(lo, hi)`` pair per axis, ``'same'`` (output
            size ``ceil(L / stride)``; odd totals pad one more on the high side) or ``'valid'``.
        groups: ``C_in`` and ``C_out`` split into this many independent groups.
        padding_mode: ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.

    Returns:
        ``[N, C_out, L_out]`` with ``L_out = (L + pads - dilation * (kL - 1) - 1) // stride + 1``.
    """
    return _conv("conv1d", 1, x, weight, bias, stride, padding, dilation, groups, padding_mode)


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, padding_mode="zeros"):
    """2-d convolution: ``x [N, C_in, H, W]``, ``weight [C_out, C_in / groups, kH, kW]``,
    ``bias [C_out]`` -> ``[N, C_out, H_out, W_out]``. Arguments as in :func:`conv1d`."""
    return _conv("conv2d", 2, x, weight, bias, stride, padding, dilation, groups, padding_mode)


def conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, padding_mode="zeros"):
    """3-d convolution: ``x [N, C_in, D, H, W]``, ``weight [C_out, C_in / groups, kD, kH, kW]``,
    ``bias [C_out]`` -> ``[N, C_out, D_out, H_out, W_out]``. Arguments as in :func:`conv1d`."""
    return _conv("conv3d", 3, x, weight, bias, stride, padding, dilation, groups, padding_mode)


def _conv_transpose(name, nsp, x, weight, bias, stride, padding, output_padding, groups, dilation):
    x, weight, x_shape, unbatched = _conv_operands(name, nsp, x, weight, "C_in, C_out/groups")
    n, c_in = x.shape[:2]
    c_og = weight.shape[1]
    groups = int(groups)
    if groups < 1 or weight.shape[0] != c_in or c_in % groups:
        raise ValueError(
            f"{name}: input {x_shape} with {c_in} channels does not match weight "
            f"{tuple(weight.shape)} with groups={groups} (need weight.shape[0] == C_in, "
            "divisible by groups)"
        )
    c_out, c_ig = c_og * groups, c_in // groups
    kernel = tuple(weight.shape[2:])
    stride = _positive(name, "stride", _ntuple(stride, nsp, name, "stride"))
    dilation = _positive(name, "dilation", _ntuple(dilation, nsp, name, "dilation"))
    pads = ((0, 0),) * nsp if padding == "valid" else _pairs(name, padding, nsp)
    out_pad = _ntuple(output_padding, nsp, name, "output_padding")
    for op, s, d in zip(out_pad, stride, dilation):
        if not 0 <= op < max(s, d):
            raise ValueError(
                f"{name}: output_padding {out_pad} must be smaller than max(stride, dilation) "
                f"per axis (stride {stride}, dilation {dilation})"
            )
    in_sp = tuple(x.shape[2:])
    full = tuple(
        (i - 1) * s + d * (k - 1) + 1 for i, s, d, k in zip(in_sp, stride, dilation, kernel)
    )
    out_sp = tuple(f - lo - hi + op for f, (lo, hi), op in zip(full, pads, out_pad))
    if any(o <= 0 for o in out_sp):
        raise ValueError(
            f"{name}: input {x_shape}, kernel {kernel}, stride {stride}, padding {pads} "
            f"give a non-positive output size {out_sp}"
        )
    q, kk = _prod(in_sp), _prod(kernel)
    # [G, C_out/G * K, C_in/G] @ [N, G, C_in/G, Q] -> [N, G, C_out/G * K, Q]
    w_t = swapaxes(reshape(weight, (groups, c_ig, c_og * kk)), -1, -2)
    cols = matmul(w_t, reshape(x, (n, groups, c_ig, q)))
    cols = reshape(cols, (n, c_out, *kernel, *in_sp))  # [N, C_out, *k, *in]
    y = P.fold(
        cols, spatial=full, kernel=kernel, stride=stride, dilation=dilation
    )  # [N, C_out, *full]
    extra = tuple(max(lo + o - f, 0) for (lo, _), o, f in zip(pads, out_sp, full))
    y = _pad_spatial(y, tuple((0, e) for e in extra), nsp)
    if any(lo for lo, _ in pads) or tuple(y.shape[2:]) != out_sp:
        y = _crop(y, pads, out_sp)
    if bias is not None:
        y = y + _channel_view(bias, c_out, nsp, name, "bias")
    return reshape(y, tuple(y.shape[1:])) if unbatched else y


def conv_transpose1d(
    x, weight, bias=None, stride=1, padding=0, output_padding=0, *, groups=1, dilation=1
):
    """1-d transposed convolution (the adjoint of :func:`conv1d` with respect to its input).

    Args:
        x: ``[N, C_in, L]`` (or unbatched ``[C_in, L]``).
        weight: ``[C_in, C_out / groups, kL]`` (the layout of the matching conv1d's weight).
        bias: ``[C_out]`` or None.
        stride, dilation: int or one int per spatial axis.
        padding: int, one int per axis or one ``(lo, hi)`` pair per axis: removed from the
            output (the padding of the matching conv1d).
        output_padding: extra size on the high side of each axis, smaller than
            ``max(stride, dilation)``; picks one of the input sizes that conv1d maps to ``L``.
        groups, dilation: keyword-only (PyTorch's positional order differs from MindSpore's).

    Returns:
        ``[N, C_out, L_out]`` with
        ``L_out = (L - 1) * stride - lo - hi + dilation * (kL - 1) + output_padding + 1``.
    """
    return _conv_transpose(
        "conv_transpose1d", 1, x, weight, bias, stride, padding, output_padding, groups, dilation
    )


def conv_transpose2d(
    x, weight, bias=None, stride=1, padding=0, output_padding=0, *, groups=1, dilation=1
):
    """2-d transposed convolution: ``x [N, C_in, H, W]``, ``weight [C_in, C_out / groups, kH, kW]``
    -> ``[N, C_out, H_out, W_out]``. Arguments as in :func:`conv_transpose1d`."""
    return _conv_transpose(
        "conv_transpose2d", 2, x, weight, bias, stride, padding, output_padding, groups, dilation
    )


def conv_transpose3d(
    x, weight, bias=None, stride=1, padding=0, output_padding=0, *, groups=1, dilation=1
):
    """3-d transposed convolution: ``x [N, C_in, D, H, W]``, ``weight [C_in, C_out / groups, kD,
    kH, kW]`` -> ``[N, C_out, D_out, H_out, W_out]``. Arguments as in :func:`conv_transpose1d`."""
    return _conv_transpose(
        "conv_transpose3d", 3, x, weight, bias, stride, padding, output_padding, groups, dilation
    )


def unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks (im2col) in the MindSpore/PyTorch layout.

    Args:
        x: ``[N, C, *spatial]`` with ``len(spatial)`` spatial axes (2 for an int kernel_size).
        kernel_size, dilation, padding, stride: int or one per spatial axis (padding may also
            be (lo, hi) pairs; zero padding).

    Returns:
        ``[N, C * prod(kernel_size), L]``, ``L`` the number of windows (row-major over the
        output positions), channel-major then kernel offsets along the second axis.
    """
    x = as_tensor(x)
    nsp = x.ndim - 2
    if nsp < 1:
        raise ValueError(f"unfold: input of shape {tuple(x.shape)} must be [N, C, *spatial]")
    kernel = _positive("unfold", "kernel_size", _ntuple(kernel_size, nsp, "unfold", "kernel_size"))
    dilation = _positive("unfold", "dilation", _ntuple(dilation, nsp, "unfold", "dilation"))
    stride = _positive("unfold", "stride", _ntuple(stride, nsp, "unfold", "stride"))
    x = _pad_spatial(x, _pairs("unfold", padding, nsp), nsp)
    P.window_out_sizes("unfold", tuple(x.shape[2:]), kernel, stride, dilation)
    cols = P.unfold(x, kernel=kernel, stride=stride, dilation=dilation)  # [N, C, *k, *out]
    n, c = x.shape[:2]
    return reshape(cols, (n, c * _prod(kernel), -1))


def fold(cols, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum sliding local blocks back into a tensor (col2im): the adjoint of :func:`unfold`.

    Args:
        cols: ``[N, C * prod(kernel_size), L]``.
        output_size: the spatial shape ``(H, W, ...)`` of the result (before padding is removed
            it is ``output_size + pads``).

    Returns:
        ``[N, C, *output_size]``.
    """
    cols = as_tensor(cols)
    output_size = tuple(
        int(o) for o in ((output_size,) * 2 if isinstance(output_size, int) else output_size)
    )
    nsp = len(output_size)
    kernel = _positive("fold", "kernel_size", _ntuple(kernel_size, nsp, "fold", "kernel_size"))
    dilation = _positive("fold", "dilation", _ntuple(dilation, nsp, "fold", "dilation"))
    stride = _positive("fold", "stride", _ntuple(stride, nsp, "fold", "stride"))
    pads = _pairs("fold", padding, nsp)
    spatial = tuple(o + lo + hi for o, (lo, hi) in zip(output_size, pads))
    out = P.window_out_sizes("fold", spatial, kernel, stride, dilation)
    kk = _prod(kernel)
    if cols.ndim != 3 or cols.shape[1] % kk or cols.shape[2] != _prod(out):
        raise ValueError(
            f"fold: cols of shape {tuple(cols.shape)} do not hold [N, C * {kk}, {_prod(out)}] "
            f"blocks of kernel {kernel} for output size {output_size}"
        )
    n, c = cols.shape[0], cols.shape[1] // kk
    x = P.fold(
        reshape(cols, (n, c, *kernel, *out)),
        spatial=spatial,
        kernel=kernel,
        stride=stride,
        dilation=dilation,
    )
    if any(lo or hi for lo, hi in pads):
        x = _crop(x, pads, output_size)
    return x


# ---- pooling ----------------------------------------------------------------------------------------
def _pool_windows(name, nsp, x, kernel_size, stride, padding, dilation, fill):
    """Padded, unfolded windows ``[..., *kernel, *out]`` of ``x [..., *spatial]``."""
    if x.ndim < nsp + 1:
        raise ValueError(
            f"{name}: input of shape {tuple(x.shape)} must be [N, C, {_SPATIAL[nsp]}] or [C, {_SPATIAL[nsp]}]"
        )
    kernel = _positive(name, "kernel_size", _ntuple(kernel_size, nsp, name, "kernel_size"))
    stride = (
        kernel
        if stride is None
        else _positive(name, "stride", _ntuple(stride, nsp, name, "stride"))
    )
    dilation = _positive(name, "dilation", _ntuple(dilation, nsp, name, "dilation"))
    pads = _pairs(name, padding, nsp)
    for (lo, hi), k, d in zip(pads, kernel, dilation):
        if max(lo, hi) > (d * (k - 1) + 1) // 2:
            raise ValueError(
                f"{name}: padding {pads} must be at most half the (dilated) kernel size {kernel}"
            )
    x = _pad_spatial(x, pads, nsp, value=fill)
    P.window_out_sizes(name, tuple(x.shape[x.ndim - nsp :]), kernel, stride, dilation)
    return P.unfold(x, kernel=kernel, stride=stride, dilation=dilation), kernel, stride, pads


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
    return _max(cols, axis=_kernel_axes(cols, nsp))


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
    x = _float(as_tensor(x))
    cols, kernel, stride, pads = _pool_windows(name, nsp, x, kernel_size, stride, padding, 1, 0.0)
    total = _sum(cols, axis=_kernel_axes(cols, nsp))  # [..., *out]
    if count_include_pad or all(lo == 0 and hi == 0 for lo, hi in pads):
        return total * (1.0 / _prod(kernel))
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
    x = _float(as_tensor(x))
    if x.ndim < nsp + 1:
        raise ValueError(
            f"{name}: input of shape {tuple(x.shape)} must be [N, C, {_SPATIAL[nsp]}] or [C, {_SPATIAL[nsp]}]"
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


# ---- softmax ----------------------------------------------------------------------------------------
def _shifted(x, axis):
    """``x - max(x)`` along ``axis`` with the max as a constant (rows of -inf are not shifted)."""
    m = stop_gradient(_max(x, axis=axis, keepdims=True))
    return x - where(isfinite(m), m, 0.0)


def _log_softmax_value(x, axis):
    z = _shifted(x, axis)
    return z - log(_sum(exp(z), axis=axis, keepdims=True))


@functools.cache
def _log_softmax_fn(axis):
    # custom VJP for speed: backward g - softmax * sum(g), softmax = exp(out)
    def log_softmax(x):
        return _log_softmax_value(x, axis)

    def fwd(x):
        out = _log_softmax_value(x, axis)
        return out, out

    def bwd(out, g):
        return (g - exp(out) * _sum(g, axis=axis, keepdims=True),)

    return custom_vjp(log_softmax).defvjp(fwd, bwd)


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis``, shifted by the maximum so it never overflows.

    A row that is all ``-inf`` gives NaN (0/0), as in PyTorch.
    """
    x = _float(as_tensor(x))
    if x.ndim == 0:
        raise ValueError("softmax: needs a tensor of rank >= 1, got a 0-d tensor")
    from ..prims.softmax import softmax as softmax_p

    return softmax_p(x, axis=normalize_axis(axis, x.ndim, "softmax"))


def log_softmax(x, axis=-1):
    """``x - logsumexp(x)`` along ``axis`` (numerically stable)."""
    x = _float(as_tensor(x))
    if x.ndim == 0:
        raise ValueError("log_softmax: needs a tensor of rank >= 1, got a 0-d tensor")
    return _log_softmax_fn(normalize_axis(axis, x.ndim, "log_softmax"))(x)


# ---- normalization --------------------------------------------------------------------------------
def _normalize(x, axes, eps):
    """``(x - mean) / sqrt(var + eps)`` over ``axes`` (biased variance)."""
    mu = mean(x, axis=axes, keepdims=True)
    d = x - mu
    var = mean(d * d, axis=axes, keepdims=True)
    return d * rsqrt(var + eps)


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
    x = _float(as_tensor(x))
    ns = (
        (int(normalized_shape),)
        if isinstance(normalized_shape, (int, np.integer))
        else tuple(int(s) for s in normalized_shape)
    )
    if not ns or x.ndim < len(ns) or tuple(x.shape[x.ndim - len(ns) :]) != ns:
        raise ValueError(
            f"layer_norm: input of shape {tuple(x.shape)} does not end with normalized_shape {ns}"
        )
    from ..prims import normalize as N

    for v, what in ((weight, "weight"), (bias, "bias")):
        if v is not None and tuple(v.shape) != ns:
            raise ValueError(f"layer_norm: {what} of shape {tuple(v.shape)} should be {ns}")
    if _dt.is_complex(x.dtype):
        out = _normalize(x, tuple(range(x.ndim - len(ns), x.ndim)), eps)
    elif weight is not None and bias is not None:
        weight, bias = as_tensor(weight), as_tensor(bias)
        if weight.dtype == x.dtype and bias.dtype == x.dtype:
            return N.layer_norm(x, weight, bias, n_axes=len(ns), eps=float(eps))
        out = N.normalize(x, n_axes=len(ns), eps=float(eps))
    else:
        out = N.normalize(x, n_axes=len(ns), eps=float(eps))
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


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
    x = _float(as_tensor(x))
    if x.ndim < 2:
        raise ValueError(f"group_norm: input of shape {tuple(x.shape)} must be [N, C, *spatial]")
    n, c = x.shape[:2]
    g = int(num_groups)
    if g < 1 or c % g:
        raise ValueError(
            f"group_norm: {c} channels of input {tuple(x.shape)} do not split into {num_groups} groups"
        )
    y = _normalize(reshape(x, (n, g, -1)), (2,), eps)  # [N, G, C/G * prod(spatial)]
    out = reshape(y, tuple(x.shape))
    nsp = x.ndim - 2
    if weight is not None:
        out = out * _channel_view(weight, c, nsp, "group_norm", "weight")
    if bias is not None:
        out = out + _channel_view(bias, c, nsp, "group_norm", "bias")
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
    x = _float(as_tensor(x))
    if x.ndim < 2:
        raise ValueError(f"batch_norm: input of shape {tuple(x.shape)} must be [N, C, *spatial]")
    c, nsp = x.shape[1], x.ndim - 2
    axes = (0, *range(2, x.ndim))

    def affine(out):
        if weight is not None:
            out = out * _channel_view(weight, c, nsp, "batch_norm", "weight")
        if bias is not None:
            out = out + _channel_view(bias, c, nsp, "batch_norm", "bias")
        return out

    if not training:
        if running_mean is None or running_var is None:
            raise ValueError(
                "batch_norm: running_mean and running_var are needed when training=False"
            )
        rm = _channel_view(running_mean, c, nsp, "batch_norm", "running_mean")
        rv = _channel_view(running_var, c, nsp, "batch_norm", "running_var")
        return affine((x - rm) * rsqrt(rv + eps))
    count = _prod(x.shape[a] for a in axes)
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
        _channel_view(running_mean, c, nsp, "batch_norm", "running_mean")
        batch = stop_gradient(reshape(mu, (c,)))
        new_mean = astype((1.0 - momentum) * running_mean + momentum * batch, running_mean.dtype)
    if running_var is not None:
        running_var = as_tensor(running_var)
        _channel_view(running_var, c, nsp, "batch_norm", "running_var")
        batch = stop_gradient(reshape(var, (c,))) * (count / (count - 1))
        new_var = astype((1.0 - momentum) * running_var + momentum * batch, running_var.dtype)
    return out, new_mean, new_var


# ---- dropout, dense, attention ------------------------------------------------------------------
def dropout(x, p=0.5, training=True):
    """Zero each entry with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    The mask comes from ``core.random`` (repeatable with ``core.set_seed``). Inside
    ``core.vmap`` one mask of the per-example shape is shared by the whole batch.
    """
    x = as_tensor(x)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability p={p} must be in [0, 1]")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    from .. import random

    keep = random.bernoulli(tuple(x.shape), 1.0 - p, dtype=x.dtype)
    return x * (keep * (1.0 / (1.0 - p)))


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


# ---- losses ---------------------------------------------------------------------------------------
def _reduce(loss, reduction, name):
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return _sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{name}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _diff(name, input, target):
    input, target = binary_args(input, target)
    input, target = _float(input), _float(target)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(
            f"{name}: input of shape {tuple(input.shape)} and target of shape {tuple(target.shape)} differ"
        )
    return input - target


def mse_loss(input, target, reduction="mean"):
    """Mean squared error ``(input - target)^2`` reduced by ``reduction`` ('mean', 'sum', 'none')."""
    d = _diff("mse_loss", input, target)
    return _reduce(d * d, reduction, "mse_loss")


def l1_loss(input, target, reduction="mean"):
    """Mean absolute error ``|input - target|``."""
    return _reduce(abs(_diff("l1_loss", input, target)), reduction, "l1_loss")


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``beta = 0``: L1)."""
    d = _diff("smooth_l1_loss", input, target)
    a = abs(d)
    if beta <= 0:
        return _reduce(a, reduction, "smooth_l1_loss")
    loss = where(a < beta, (0.5 / beta) * d * d, a - 0.5 * beta)
    return _reduce(loss, reduction, "smooth_l1_loss")


def _check_class_range(name, target, n_cls, ignore_index):
    if type(target) is not Tensor:  # symbolic (jit/vmap): no data-dependent check
        return
    t = target.asnumpy()
    bad = (t != ignore_index) & ((t < 0) | (t >= n_cls))
    if bad.any():
        raise ValueError(f"{name}: target contains class {int(t[bad][0])} outside [0, {n_cls})")


def _nll(name, logp, target, weight, ignore_index, reduction, label_smoothing):
    """Negative log-likelihood of class indices (with label smoothing), PyTorch's reductions."""
    c_axis = 1 if logp.ndim >= 2 else 0
    n_cls = logp.shape[c_axis]
    expect = tuple(d for i, d in enumerate(logp.shape) if i != c_axis)
    if tuple(target.shape) != expect:
        raise ValueError(
            f"{name}: target of shape {tuple(target.shape)} should be {expect} for input {tuple(logp.shape)}"
        )
    _check_class_range(name, target, n_cls, ignore_index)
    wb = None
    if weight is not None:
        weight = astype(as_tensor(weight), logp.dtype)
        if tuple(weight.shape) != (n_cls,):
            raise ValueError(f"{name}: weight of shape {tuple(weight.shape)} should be ({n_cls},)")
        wb = reshape(
            weight, (n_cls,) + (1,) * (logp.ndim - c_axis - 1)
        )  # broadcasts on the class axis
    valid = not_equal(target, ignore_index)
    hot = moveaxis(one_hot(where(valid, target, 0), n_cls, dtype=logp.dtype), -1, c_axis)
    validf = astype(valid, logp.dtype)
    hot_w = hot if wb is None else hot * wb
    nll = -_sum(logp * hot_w, axis=c_axis) * validf  # [N, *d]
    loss = nll
    if label_smoothing > 0.0:
        lw = logp if wb is None else logp * wb
        smooth = -_sum(lw, axis=c_axis) * validf
        loss = (1.0 - label_smoothing) * nll + (label_smoothing / n_cls) * smooth
    if reduction == "mean":
        denom = _sum(validf) if wb is None else _sum(_sum(hot_w, axis=c_axis) * validf)
        return _sum(loss) / denom
    return _reduce(loss, reduction, name)


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """Negative log-likelihood of class ``target`` under log-probabilities ``input``.

    Args:
        input: ``[N, C]``, ``[N, C, *d]`` or ``[C]`` log-probabilities.
        target: integer class indices ``[N]``, ``[N, *d]`` or ``[]``.
        weight: ``[C]`` per-class weights or None.
        ignore_index: target value that contributes nothing (and is not counted).
        reduction: 'mean' (weighted mean over the non-ignored targets), 'sum' or 'none'.
    """
    logp = _float(as_tensor(input))
    return _nll("nll_loss", logp, as_tensor(target), weight, ignore_index, reduction, 0.0)


def cross_entropy(
    input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0
):
    """Cross entropy between ``softmax(input)`` over the class axis and ``target``
    (MindSpore/PyTorch ``cross_entropy``).

    Args:
        input: logits ``[N, C]``, ``[N, C, *d]`` or ``[C]`` (class axis 1, or 0 for rank 1).
        target: integer class indices ``[N, *d]``, or class probabilities of the shape of
            ``input`` (a floating tensor).
        weight: ``[C]`` per-class weights or None.
        ignore_index: for index targets, the value that contributes nothing.
        reduction: 'mean', 'sum' or 'none'. For index targets the mean is weighted by
            ``weight[target]``; for probability targets it is over the ``N * prod(d)`` samples.
        label_smoothing: ``eps`` in [0, 1]: the target mixes with the uniform distribution,
            ``(1 - eps) * target + eps / C``.

    Returns:
        The reduced loss (a scalar), or per-sample losses ``[N, *d]`` for 'none'.
    """
    logits = _float(as_tensor(input))
    target = as_tensor(target)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing={label_smoothing} must be in [0, 1]")
    if logits.ndim == 0:
        raise ValueError("cross_entropy: input must have a class axis, got a 0-d tensor")
    c_axis = 1 if logits.ndim >= 2 else 0
    logp = log_softmax(logits, axis=c_axis)
    if not _dt.is_inexact(target.dtype):
        return _nll("cross_entropy", logp, target, weight, ignore_index, reduction, label_smoothing)
    if tuple(target.shape) != tuple(logits.shape):
        raise ValueError(
            f"cross_entropy: probability target of shape {tuple(target.shape)} should match input {tuple(logits.shape)}"
        )
    n_cls = logits.shape[c_axis]
    t = astype(target, logp.dtype)
    if label_smoothing > 0.0:
        t = t * (1.0 - label_smoothing) + label_smoothing / n_cls
    prod = logp * t
    if weight is not None:
        weight = astype(as_tensor(weight), logp.dtype)
        if tuple(weight.shape) != (n_cls,):
            raise ValueError(
                f"cross_entropy: weight of shape {tuple(weight.shape)} should be ({n_cls},)"
            )
        prod = prod * reshape(weight, (n_cls,) + (1,) * (logits.ndim - c_axis - 1))
    return _reduce(-_sum(prod, axis=c_axis), reduction, "cross_entropy")


def _safe_norm(x, axes):
    """Euclidean norm over ``axes`` whose gradient at 0 is 0 instead of NaN."""
    sq = _sum(x * x, axis=axes)
    pos = sq > 0
    return where(pos, sqrt(where(pos, sq, 1.0)), 0.0)


def relative_l2_loss(input, target, reduction="mean"):
    """Relative L2 error ``||input - target|| / ||target||`` per sample (the neural-operator
    loss of Li et al. 2021, FNO), norms over every axis but the first.

    Args:
        input, target: ``[N, ...]`` (a rank-1 input is one sample).
        reduction: 'mean' over samples, 'sum' or 'none' (``[N]``).
    """
    d = _diff("relative_l2_loss", input, target)
    target = _float(as_tensor(target))
    if d.ndim <= 1:
        axes = tuple(range(d.ndim))
        return _safe_norm(d, axes) / _safe_norm(target, axes)
    axes = tuple(range(1, d.ndim))
    return _reduce(_safe_norm(d, axes) / _safe_norm(target, axes), reduction, "relative_l2_loss")
