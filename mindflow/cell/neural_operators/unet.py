"""U-Net (Ronneberger, Fischer & Brox 2015, "U-Net: Convolutional Networks for Biomedical Image
Segmentation", arXiv 1505.04597) as MindFlow's ``mindflow/cell/unet2d.py`` builds it.

``UNet2D`` keeps MindFlow's constructor (``in_channels, out_channels, base_channels, n_layers=4,
data_format='NHWC', kernel_size=2, stride=2, activation='relu', enable_bn=True``), its sub-cell
and parameter names (``inc.double_conv.0.weight``, ``layers_down.{i}.conv...``,
``layers_up.{i}.up.weight``, ``outc.weight``; ``layers_up.0`` is the deepest up block, as
MindFlow's reversed ``CellList`` has it) and MindSpore's layer defaults: convolutions
``pad_mode='same'`` without bias, max pooling ``'valid'``, transposed convolutions ``'same'``
(``H -> H * stride``). Odd sizes work: an up-sampled map smaller than its skip connection is
zero-padded to the skip's size (the extra row/column at the end) before the concatenation.

Beyond MindFlow: ``dtype`` (the parameters' dtype, float32 by default); inputs may carry more than
one batch axis (``[..., H, W, C]``), and a channel count that does not match names the layout.
"""

from diffsci import core
from diffsci.core import nn, ops

from ...utils.check_func import check_param_type
from ..activation import get_activation

__all__ = ["DoubleConv", "Down", "UNet2D", "Up"]


def _act(activation):
    return get_activation(activation) if isinstance(activation, str) else activation


class DoubleConv(nn.Cell):
    """Two ``3 x 3`` 'same' convolutions, each followed by batch norm (optional) and ``activation``.

    ``[N, C_in, H, W] -> [N, C_out, H, W]``; ``mid_channels`` (default ``out_channels``) between
    them. ``double_conv`` holds ``conv, (bn,) act, conv, (bn,) act`` in that order.
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        mid_channels=None,
        activation="relu",
        enable_bn=True,
        dtype=core.float32,
    ):
        super().__init__()
        mid_channels = mid_channels or out_channels
        act = _act(activation)
        layers = [nn.Conv2d(in_channels, mid_channels, kernel_size=3, dtype=dtype)]
        if enable_bn:
            layers.append(nn.BatchNorm2d(mid_channels, dtype=dtype))
        layers += [act, nn.Conv2d(mid_channels, out_channels, kernel_size=3, dtype=dtype)]
        if enable_bn:
            layers.append(nn.BatchNorm2d(out_channels, dtype=dtype))
        layers.append(act)
        self.double_conv = nn.SequentialCell(layers)

    def construct(self, x):
        return self.double_conv(x)  # [N, C_out, H, W]


class Down(nn.Cell):
    """Max pooling (``kernel_size``, ``stride``, 'valid') then :class:`DoubleConv`:
    ``[N, C_in, H, W] -> [N, C_out, floor((H - k) / s) + 1, ...]``."""

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size=2,
        stride=2,
        activation="relu",
        enable_bn=True,
        dtype=core.float32,
    ):
        super().__init__()
        self.conv = DoubleConv(
            in_channels, out_channels, activation=activation, enable_bn=enable_bn, dtype=dtype
        )
        self.maxpool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride)

    def construct(self, x):
        return self.conv(self.maxpool(x))


class Up(nn.Cell):
    """Transposed convolution to ``in_channels // 2`` channels ('same': size times ``stride``),
    zero padding to the skip connection's size, concatenation ``(skip, up)`` on the channel axis,
    then :class:`DoubleConv` to ``out_channels``.

    Inputs ``x1 [N, C_in, h, w]`` (coarse) and ``x2 [N, C_in - C_in // 2, H, W]`` (skip, with
    ``H >= h * stride``); output ``[N, C_out, H, W]``.
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size=2,
        stride=2,
        activation="relu",
        enable_bn=True,
        dtype=core.float32,
    ):
        super().__init__()
        self.up = nn.Conv2dTranspose(
            in_channels, in_channels // 2, kernel_size=kernel_size, stride=stride, dtype=dtype
        )
        self.conv = DoubleConv(
            in_channels, out_channels, activation=activation, enable_bn=enable_bn, dtype=dtype
        )

    def construct(self, x1, x2):
        x1 = self.up(x1)  # [N, C_in // 2, h * s, w * s]
        diff_h = x2.shape[-2] - x1.shape[-2]
        diff_w = x2.shape[-1] - x1.shape[-1]
        if diff_h < 0 or diff_w < 0:
            raise ValueError(
                f"Up: the up-sampled map {tuple(x1.shape)} is larger than its skip connection "
                f"{tuple(x2.shape)}; kernel_size/stride of the pooling and the transposed "
                f"convolution do not invert each other"
            )
        if diff_h or diff_w:
            pads = (
                (0, 0),
                (0, 0),
                (diff_h // 2, diff_h - diff_h // 2),
                (diff_w // 2, diff_w - diff_w // 2),
            )
            x1 = ops.pad(x1, pads)  # [N, C_in // 2, H, W]
        x = ops.concat((x2, x1), axis=1)  # [N, C_in, H, W]
        return self.conv(x)  # [N, C_out, H, W]


class UNet2D(nn.Cell):
    r"""The 2-D U-Net of MindFlow: a contracting path of ``n_layers`` (pool, double conv) blocks
    doubling the channels from ``base_channels``, an expanding path of (transposed conv, concat
    skip, double conv) blocks halving them, and a ``3 x 3`` convolution of
    ``concat(features, input)`` to ``out_channels``.

    Args:
        in_channels: input channels.
        out_channels: output channels.
        base_channels: channels after the first double convolution (level ``i`` has
            ``base_channels * 2**i``).
        n_layers: number of down-/up-sampling levels, ``>= 1``. Default 4.
        data_format: ``'NHWC'`` (default) or ``'NCHW'``.
        kernel_size: kernel of the max pooling and of the transposed convolutions. Default 2.
        stride: their stride (int or two ints). Default 2.
        activation: name or Cell. Default ``'relu'``.
        enable_bn: batch normalisation after every ``3 x 3`` convolution. Default True.
        dtype: parameters' dtype. Default float32.

    Inputs:
        ``x [..., H, W, in_channels]`` (NHWC) or ``[..., in_channels, H, W]`` (NCHW), with
        ``H, W >= stride**n_layers`` (at least one pixel at the deepest level).

    Outputs:
        ``[..., H, W, out_channels]`` or ``[..., out_channels, H, W]``.
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        base_channels,
        n_layers=4,
        data_format="NHWC",
        kernel_size=2,
        stride=2,
        activation="relu",
        enable_bn=True,
        dtype=core.float32,
    ):
        super().__init__()
        for name, v in (
            ("in_channels", in_channels),
            ("out_channels", out_channels),
            ("base_channels", base_channels),
            ("n_layers", n_layers),
        ):
            check_param_type(v, f"UNet2D: {name}", int, bool)
            if v < 1 and name != "n_layers":
                raise ValueError(f"UNet2D: {name} must be a positive int, got {v}")
        check_param_type(data_format, "UNet2D: data_format", str, bool)
        check_param_type(enable_bn, "UNet2D: enable_bn", bool)
        if data_format not in ("NHWC", "NCHW"):
            raise ValueError(
                f"UNet2D: data_format must be 'NHWC' or 'NCHW', but got data_format: {data_format}"
            )
        if n_layers < 1:
            raise ValueError(
                f"UNet2D: the UNet block should contain at least one downsample convolution "
                f"(n_layers >= 1), got n_layers={n_layers}"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.base_channels = base_channels
        self.n_layers = n_layers
        self.kernel_size = kernel_size
        self.stride = stride
        self.data_format = data_format
        self.enable_bn = enable_bn
        self.activation = _act(activation)

        self.inc = DoubleConv(
            in_channels, base_channels, None, self.activation, enable_bn, dtype=dtype
        )
        down, up = [], []
        for i in range(n_layers):
            c_i, c_next = base_channels * 2**i, base_channels * 2 ** (i + 1)
            down.append(Down(c_i, c_next, kernel_size, stride, self.activation, enable_bn, dtype))
            up.append(Up(c_next, c_i, kernel_size, stride, self.activation, enable_bn, dtype))
        self.layers_down = nn.CellList(down)
        self.layers_up = nn.CellList(up[::-1])  # deepest first, as MindFlow's reversed list
        self.outc = nn.Conv2d(base_channels + in_channels, out_channels, kernel_size=3, dtype=dtype)

    def _to_nchw(self, x):
        name, c = "UNet2D", self.in_channels
        if x.ndim < 4:
            raise ValueError(
                f"{name}: input of shape {tuple(x.shape)} must have a batch axis and be "
                f"{'[N, H, W, C]' if self.data_format == 'NHWC' else '[N, C, H, W]'}"
            )
        if self.data_format == "NHWC":
            if x.shape[-1] != c:
                hint = (
                    " (it looks channels-first: pass data_format='NCHW')"
                    if x.shape[-3] == c
                    else ""
                )
                raise ValueError(
                    f"{name}: input of shape {tuple(x.shape)} is not [N, H, W, C={c}] "
                    f"(data_format='NHWC'){hint}"
                )
            return ops.moveaxis(x, -1, -3)  # [..., C, H, W]
        if x.shape[-3] != c:
            hint = " (it looks channels-last: pass data_format='NHWC')" if x.shape[-1] == c else ""
            raise ValueError(
                f"{name}: input of shape {tuple(x.shape)} is not [N, C={c}, H, W] "
                f"(data_format='NCHW'){hint}"
            )
        return x

    def _check_depth(self, spatial):
        """Every pooling level must have at least one kernel's worth of pixels."""
        k, st = _pair(self.kernel_size), _pair(self.stride)
        size = spatial
        for i in range(self.n_layers):
            if any(n < kk for n, kk in zip(size, k)):
                raise ValueError(
                    f"UNet2D: the input's spatial size {spatial} is too small for "
                    f"n_layers={self.n_layers} (level {i} has {size}, below the pooling kernel "
                    f"{self.kernel_size}); lower n_layers or enlarge the input"
                )
            size = tuple((n - kk) // ss + 1 for n, kk, ss in zip(size, k, st))

    def construct(self, x):
        x0 = self._to_nchw(x)  # [..., C_in, H, W]
        lead = tuple(x0.shape[:-3])
        if len(lead) != 1:
            x0 = ops.reshape(x0, (-1, *x0.shape[-3:]))  # [N, C_in, H, W]
        self._check_depth(tuple(x0.shape[-2:]))
        x = self.inc(x0)  # [N, base, H, W]
        skips = [x]
        for layer in self.layers_down:
            x = layer(x)  # level i: [N, base * 2**(i+1), H / s**(i+1), W / s**(i+1)]
            skips.append(x)
        for i, layer in enumerate(self.layers_up):
            x = layer(x, skips[-i - 2])  # [N, base * 2**(n-1-i), ...]
        x = self.outc(ops.concat((x, x0), axis=1))  # [N, C_out, H, W]
        if len(lead) != 1:
            x = ops.reshape(x, (*lead, *x.shape[-3:]))  # [..., C_out, H, W]
        if self.data_format == "NHWC":
            x = ops.moveaxis(x, -3, -1)  # [..., H, W, C_out]
        return x


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)
