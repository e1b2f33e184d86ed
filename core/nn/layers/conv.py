"""Convolutions and transposed convolutions with MindSpore's ``pad_mode`` rules.

Inputs are channels-first: ``[..., C_in, *spatial]`` where ``...`` is any number of batch
axes (none for a single example). ``pad_mode``:

- ``'same'``: output size ``ceil(in / stride)``; the needed padding
  ``max((out - 1) * stride + dilation * (k - 1) + 1 - in, 0)`` is split evenly, the odd
  element going to the end (bottom/right).
- ``'valid'``: no padding; output ``floor((in - dilation * (k - 1) - 1) / stride) + 1``.
- ``'pad'``: explicit ``padding``: an int, one int per spatial axis (both sides), or
  ``(lo, hi)`` per spatial axis flattened (Conv2d: top, bottom, left, right;
  Conv3d: head, tail, top, bottom, left, right).

Transposed convolutions are the gradient of the convolution with the same arguments; their
output sizes follow MindSpore (``k_eff = dilation * (k - 1) + 1``):
``'same'``: ``in * stride``; ``'valid'``: ``in * stride + max(k_eff - stride, 0)``;
``'pad'``: ``(in - 1) * stride + k_eff - lo - hi + output_padding``.
"""

import math

from ... import dtypes as _dt
from ... import ops
from ..cell import Cell
from ..init import HeUniform, Uniform, _fans
from ._common import make_parameter, ntuple

__all__ = ["Conv1d", "Conv1dTranspose", "Conv2d", "Conv2dTranspose", "Conv3d", "Conv3dTranspose"]


def _pad_pairs(padding, nd, layer):
    """``padding`` (int, nd ints, or 2*nd ints) as nd ``(lo, hi)`` pairs of non-negative ints."""
    if isinstance(padding, int) and not isinstance(padding, bool):
        pairs = ((padding, padding),) * nd
    else:
        pad = tuple(padding)
        if not all(isinstance(p, int) and not isinstance(p, bool) for p in pad):
            raise TypeError(f"{layer}: padding must be ints, got {padding!r}")
        if len(pad) == 2 * nd:
            pairs = tuple((pad[2 * i], pad[2 * i + 1]) for i in range(nd))
        elif len(pad) == nd:
            pairs = tuple((p, p) for p in pad)
        else:
            raise ValueError(
                f"{layer}: padding must be an int, {nd} or {2 * nd} ints, got {padding!r}"
            )
    if any(lo < 0 or hi < 0 for lo, hi in pairs):
        raise ValueError(f"{layer}: padding must be non-negative, got {padding!r}")
    return pairs


class _ConvNd(Cell):
    """Shared construction of Conv{1,2,3}d (whose signature this is) and their transposes."""

    _nd = 0
    _transposed = False

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        pad_mode="same",
        padding=0,
        dilation=1,
        group=1,
        has_bias=False,
        weight_init=None,
        bias_init=None,
        dtype=_dt.float32,
    ):
        super().__init__()
        name, nd = type(self).__name__, self._nd
        self.in_channels, self.out_channels, self.group = (
            int(in_channels),
            int(out_channels),
            int(group),
        )
        if self.group < 1 or self.in_channels % self.group or self.out_channels % self.group:
            raise ValueError(
                f"{name}: in_channels={in_channels} and out_channels={out_channels} must both be "
                f"divisible by group={group}"
            )
        self.kernel_size = ntuple(kernel_size, nd, "kernel_size", name)
        self.stride = ntuple(stride, nd, "stride", name)
        self.dilation = ntuple(dilation, nd, "dilation", name)
        if not isinstance(pad_mode, str) or pad_mode.lower() not in ("same", "valid", "pad"):
            raise ValueError(f"{name}: pad_mode must be 'same', 'valid' or 'pad', got {pad_mode!r}")
        self.pad_mode = pad_mode.lower()
        self.padding = padding
        self._pads = _pad_pairs(padding, nd, name)
        if self.pad_mode != "pad" and any(lo or hi for lo, hi in self._pads):
            raise ValueError(
                f"{name}: padding must be 0 when pad_mode is {pad_mode!r}, got {padding!r}"
            )
        if self._transposed:
            shape = (self.in_channels, self.out_channels // self.group, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.group, *self.kernel_size)
        fan_in, _ = _fans(shape, name)
        if weight_init is None:
            weight_init = HeUniform(math.sqrt(5))
        if bias_init is None:
            bias_init = Uniform(1.0 / math.sqrt(fan_in))
        self.weight = make_parameter(weight_init, shape, dtype, "weight")
        self.has_bias = bool(has_bias)
        self.bias = (
            make_parameter(bias_init, (self.out_channels,), dtype, "bias") if has_bias else None
        )

    def _batched(self, x):
        """``x`` as ``[B, C_in, *spatial]`` and the batch shape to restore."""
        nd = self._nd
        if x.ndim < nd + 1 or x.shape[-nd - 1] != self.in_channels:
            raise ValueError(
                f"{type(self).__name__}: input of shape {tuple(x.shape)} is not "
                f"[..., C_in={self.in_channels}, {nd} spatial axes]"
            )
        lead = tuple(x.shape[: x.ndim - nd - 1])
        if len(lead) != 1:
            x = ops.reshape(x, (-1, *x.shape[x.ndim - nd - 1 :]))  # [B, C_in, *spatial]
        return x, lead

    @staticmethod
    def _unbatched(y, lead):
        if len(lead) == 1:
            return y
        return ops.reshape(y, (*lead, *y.shape[1:]))  # [..., C_out, *spatial_out]

    def extend_repr(self):
        return (
            f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
            f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
            f"padding={self.padding}, dilation={self.dilation}, group={self.group}, "
            f"has_bias={self.has_bias}"
        )


class _Conv(_ConvNd):
    def construct(self, x):
        xb, lead = self._batched(x)  # [B, C_in, *spatial]
        conv = getattr(ops, f"conv{self._nd}d")
        y = conv(
            xb,
            self.weight,
            self.bias,
            stride=self.stride,
            # the ops' 'same' and 'valid' are MindSpore's (odd 'same' padding at the end)
            padding=self._pads if self.pad_mode == "pad" else self.pad_mode,
            dilation=self.dilation,
            groups=self.group,
        )  # [B, C_out, *spatial_out]
        return self._unbatched(y, lead)


class _ConvTranspose(_ConvNd):
    _transposed = True

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        pad_mode="same",
        padding=0,
        output_padding=0,
        dilation=1,
        group=1,
        has_bias=False,
        weight_init=None,
        bias_init=None,
        dtype=_dt.float32,
    ):
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            pad_mode,
            padding,
            dilation,
            group,
            has_bias,
            weight_init,
            bias_init,
            dtype,
        )
        name, nd = type(self).__name__, self._nd
        if isinstance(output_padding, int) and not isinstance(output_padding, bool):
            output_padding = (output_padding,) * nd
        self.output_padding = tuple(int(p) for p in output_padding)
        if len(self.output_padding) != nd:
            raise ValueError(
                f"{name}: output_padding must be an int or {nd} ints, got {output_padding!r}"
            )
        for op, s, d in zip(self.output_padding, self.stride, self.dilation):
            if not 0 <= op < max(s, d):
                raise ValueError(
                    f"{name}: output_padding {output_padding!r} must be in [0, max(stride, dilation))"
                )
        if any(self.output_padding) and self.pad_mode != "pad":
            raise ValueError(f"{name}: a non-zero output_padding needs pad_mode='pad'")

    def _effective_kernel(self):
        return tuple(d * (k - 1) + 1 for k, d in zip(self.kernel_size, self.dilation))

    def _crop(self, n, s, k, axis):
        """``(start, length)`` of the output inside the unpadded transposed result, per axis."""
        if self.pad_mode == "same":
            return max(k - s, 0) // 2, n * s
        if self.pad_mode == "valid":
            return 0, n * s + max(k - s, 0)
        lo, hi = self._pads[axis]
        return lo, (n - 1) * s + k - lo - hi + self.output_padding[axis]

    def construct(self, x):
        xb, lead = self._batched(x)  # [B, C_in, *spatial]
        conv_t = getattr(ops, f"conv_transpose{self._nd}d")
        # the full (unpadded) transposed convolution: [B, C_out, (n - 1) * s + k_eff ...]
        y = conv_t(
            xb,
            self.weight,
            None,
            stride=self.stride,
            padding=0,
            output_padding=0,
            dilation=self.dilation,
            groups=self.group,
        )
        for i, (n, s, k) in enumerate(zip(xb.shape[2:], self.stride, self._effective_kernel())):
            axis = 2 + i
            start, length = self._crop(n, s, k, i)
            if length <= 0:
                raise ValueError(
                    f"{type(self).__name__}: input of shape {tuple(x.shape)} gives an empty output "
                    f"along spatial axis {i}"
                )
            full = y.shape[axis]
            stop = min(start + length, full)
            if start > 0 or stop < full:
                y = ops.slice_axis(y, axis, start, stop)
            if start + length > full:  # positions no input reaches: zeros (MindSpore's rule)
                pads = [(0, 0)] * y.ndim
                pads[axis] = (0, start + length - full)
                y = ops.pad(y, tuple(pads))
        if self.bias is not None:
            y = y + ops.reshape(self.bias, (self.out_channels,) + (1,) * self._nd)
        return self._unbatched(y, lead)


class Conv1d(_Conv):
    """1-D convolution: ``[..., C_in, L] -> [..., C_out, L_out]``.

    Args:
        in_channels, out_channels: channel counts (both divisible by ``group``).
        kernel_size, stride, dilation: int.
        pad_mode: 'same' (default) | 'valid' | 'pad'; see the module docstring.
        padding: with pad_mode='pad': int or (left, right).
        group: number of channel groups.
        has_bias: default False (MindSpore).
        weight_init: None (default) is ``HeUniform(sqrt(5))``; bias_init None is
            ``Uniform(1 / sqrt(fan_in))``.
        dtype: parameter dtype.

    ``weight`` is ``[C_out, C_in / group, k]`` (MindSpore stores ``[C_out, C_in / group, 1, k]``;
    this layer keeps PyTorch's layout), ``bias`` ``[C_out]``.
    """

    _nd = 1


class _ConvWithLayout(_Conv):
    """Conv2d and Conv3d: MindSpore's signature has a ``data_format`` before ``dtype``; only the
    channels-first layout (``_data_format``, also what None means) is supported."""

    _data_format = ""

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        pad_mode="same",
        padding=0,
        dilation=1,
        group=1,
        has_bias=False,
        weight_init=None,
        bias_init=None,
        data_format=None,
        dtype=_dt.float32,
    ):
        if data_format not in (None, self._data_format):
            raise ValueError(
                f"{type(self).__name__}: only data_format={self._data_format!r} is supported, "
                f"got {data_format!r}"
            )
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            pad_mode,
            padding,
            dilation,
            group,
            has_bias,
            weight_init,
            bias_init,
            dtype,
        )


class Conv2d(_ConvWithLayout):
    """2-D convolution: ``[..., C_in, H, W] -> [..., C_out, H_out, W_out]``.

    Arguments as :class:`Conv1d`; ``kernel_size``, ``stride``, ``dilation`` are an int or two
    ints; ``padding`` (pad_mode='pad') an int, (pad_h, pad_w) or (top, bottom, left, right).
    ``data_format``: None or 'NCHW' (the only layout supported).
    ``weight`` is ``[C_out, C_in / group, kh, kw]``.
    """

    _nd = 2
    _data_format = "NCHW"


class Conv3d(_ConvWithLayout):
    """3-D convolution: ``[..., C_in, D, H, W] -> [..., C_out, D_out, H_out, W_out]``.

    ``padding`` (pad_mode='pad'): an int, three ints, or (head, tail, top, bottom, left,
    right). ``data_format``: None or 'NCDHW' (the only layout supported).
    ``weight`` is ``[C_out, C_in / group, kd, kh, kw]``.
    """

    _nd = 3
    _data_format = "NCDHW"


class Conv1dTranspose(_ConvTranspose):
    """1-D transposed convolution: ``[..., C_in, L] -> [..., C_out, L_out]``.

    ``weight`` is ``[C_in, C_out / group, k]``. Output sizes: see the module docstring.
    ``output_padding`` (pad_mode='pad' only, ``< max(stride, dilation)``) extends the output at
    the end with the values of the transposed convolution there (plus bias), i.e. the exact
    input-gradient of the convolution with the larger input, as in PyTorch. (MindSpore appends
    zeros after adding the bias; the sizes agree.)
    """

    _nd = 1


class Conv2dTranspose(_ConvTranspose):
    """2-D transposed convolution: ``[..., C_in, H, W] -> [..., C_out, H_out, W_out]``.

    ``weight`` is ``[C_in, C_out / group, kh, kw]``; ``padding`` as :class:`Conv2d`,
    ``output_padding`` an int or two ints. With ``pad_mode='same'``: ``H_out = H * stride``.
    """

    _nd = 2


class Conv3dTranspose(_ConvTranspose):
    """3-D transposed convolution: ``[..., C_in, D, H, W] -> [..., C_out, D_out, H_out, W_out]``.

    ``weight`` is ``[C_in, C_out / group, kd, kh, kw]``.
    """

    _nd = 3
