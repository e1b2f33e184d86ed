"""Convolutions, transposed convolutions, and unfold/fold (im2col/col2im) in the
MindSpore/PyTorch layouts.

All are composites, BLAS-shaped: pad -> ``unfold`` (im2col, ``core/prims/conv.py``) -> one
(batched) matmul over ``C_in/groups * prod(kernel)``; transposed convolutions are the same
matmul followed by ``fold`` (col2im). Layouts are channels-first: ``x [N, C, *spatial]``; a
convolution also accepts an unbatched ``[C, *spatial]`` input.
"""

from .. import dtypes as _dt
from ..prims import conv as prims_conv
from ..prims.conv import window_out_sizes
from ._convert import as_tensor, binary_args
from ._nn_args import SPATIAL, channel_view, int_prod, ntuple, pad_pairs, pad_spatial, positive
from .elementwise import astype
from .indexing import getitem
from .linalg import matmul
from .shape import expand_dims, reshape, swapaxes

_KERNEL = {1: "kL", 2: "kH, kW", 3: "kD, kH, kW"}
_PAD_MODES = {
    "zeros": "constant",
    "reflect": "reflect",
    "replicate": "edge",
    "circular": "periodic",
}


# ---- argument normalization ---------------------------------------------------------------------
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
    return pad_pairs(name, padding, len(spatial))


def _float_pair(x, y):
    x, y = binary_args(x, y)
    if not _dt.is_inexact(x.dtype):
        x, y = astype(x, _dt.default_float), astype(y, _dt.default_float)
    return x, y


def _crop(x, pads, sizes):
    """``x[..., lo:lo + size, ...]`` on the trailing spatial axes."""
    return getitem(x, (Ellipsis, *[slice(lo, lo + n) for (lo, _), n in zip(pads, sizes)]))


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
            f"{name}: expected input [N, C_in, {SPATIAL[nsp]}] (or [C_in, {SPATIAL[nsp]}]) and "
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
    stride = positive(name, "stride", ntuple(stride, nsp, name, "stride"))
    dilation = positive(name, "dilation", ntuple(dilation, nsp, name, "dilation"))
    pads = _conv_padding(name, padding, tuple(x.shape[2:]), kernel, stride, dilation)
    x = pad_spatial(x, pads, nsp, _PAD_MODES[padding_mode])
    out_sp = window_out_sizes(name, tuple(x.shape[2:]), kernel, stride, dilation)
    if all(k == 1 for k in kernel) and all(s == 1 for s in stride):
        cols = x  # a 1x1 convolution needs no window copy: [N, C_in, *out]
    else:
        # [N, C_in, *k, *out]
        cols = prims_conv.unfold(x, kernel=kernel, stride=stride, dilation=dilation)
    q, kk = int_prod(out_sp), int_prod(kernel)
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
        y = y + channel_view(bias, c_out, nsp, name, "bias")
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
    stride = positive(name, "stride", ntuple(stride, nsp, name, "stride"))
    dilation = positive(name, "dilation", ntuple(dilation, nsp, name, "dilation"))
    pads = ((0, 0),) * nsp if padding == "valid" else pad_pairs(name, padding, nsp)
    out_pad = ntuple(output_padding, nsp, name, "output_padding")
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
    q, kk = int_prod(in_sp), int_prod(kernel)
    # [G, C_out/G * K, C_in/G] @ [N, G, C_in/G, Q] -> [N, G, C_out/G * K, Q]
    w_t = swapaxes(reshape(weight, (groups, c_ig, c_og * kk)), -1, -2)
    cols = matmul(w_t, reshape(x, (n, groups, c_ig, q)))
    cols = reshape(cols, (n, c_out, *kernel, *in_sp))  # [N, C_out, *k, *in]
    y = prims_conv.fold(
        cols, spatial=full, kernel=kernel, stride=stride, dilation=dilation
    )  # [N, C_out, *full]
    extra = tuple(max(lo + o - f, 0) for (lo, _), o, f in zip(pads, out_sp, full))
    y = pad_spatial(y, tuple((0, e) for e in extra), nsp)
    if any(lo for lo, _ in pads) or tuple(y.shape[2:]) != out_sp:
        y = _crop(y, pads, out_sp)
    if bias is not None:
        y = y + channel_view(bias, c_out, nsp, name, "bias")
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
    kernel = positive("unfold", "kernel_size", ntuple(kernel_size, nsp, "unfold", "kernel_size"))
    dilation = positive("unfold", "dilation", ntuple(dilation, nsp, "unfold", "dilation"))
    stride = positive("unfold", "stride", ntuple(stride, nsp, "unfold", "stride"))
    x = pad_spatial(x, pad_pairs("unfold", padding, nsp), nsp)
    window_out_sizes("unfold", tuple(x.shape[2:]), kernel, stride, dilation)
    cols = prims_conv.unfold(x, kernel=kernel, stride=stride, dilation=dilation)  # [N, C, *k, *out]
    n, c = x.shape[:2]
    return reshape(cols, (n, c * int_prod(kernel), -1))


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
    kernel = positive("fold", "kernel_size", ntuple(kernel_size, nsp, "fold", "kernel_size"))
    dilation = positive("fold", "dilation", ntuple(dilation, nsp, "fold", "dilation"))
    stride = positive("fold", "stride", ntuple(stride, nsp, "fold", "stride"))
    pads = pad_pairs("fold", padding, nsp)
    spatial = tuple(o + lo + hi for o, (lo, hi) in zip(output_size, pads))
    out = window_out_sizes("fold", spatial, kernel, stride, dilation)
    kk = int_prod(kernel)
    if cols.ndim != 3 or cols.shape[1] % kk or cols.shape[2] != int_prod(out):
        raise ValueError(
            f"fold: cols of shape {tuple(cols.shape)} do not hold [N, C * {kk}, {int_prod(out)}] "
            f"blocks of kernel {kernel} for output size {output_size}"
        )
    n, c = cols.shape[0], cols.shape[1] // kk
    x = prims_conv.fold(
        reshape(cols, (n, c, *kernel, *out)),
        spatial=spatial,
        kernel=kernel,
        stride=stride,
        dilation=dilation,
    )
    if any(lo or hi for lo, hi in pads):
        x = _crop(x, pads, output_size)
    return x
