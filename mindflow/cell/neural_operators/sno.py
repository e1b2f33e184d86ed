"""Spectral neural operators (MindFlow's ``mindflow/cell/neural_operators/sno.py`` and
``sp_transform.py``).

Implements the SNO of Fanaskov & Oseledets 2023 ("Spectral Neural Operators", arXiv 2205.10573):
an FNO-like network whose spectral layers use a polynomial (Chebyshev, Legendre, ...) transform
on Gauss points instead of the FFT. A layer maps ``v [B, C, *spatial]`` to

    act( S_x S_y (K * (A_x A_y v)) + W v )

where ``A_d [n_modes_d, n_d]`` / ``S_d [n_d, n_modes_d]`` are the analysis / synthesis matrices
of axis ``d`` (see :func:`get_poly_transform`), ``K *`` is a ``kernel_size`` convolution over the
coefficient grid (MindFlow's choice for the linear map in spectral space) and ``W`` a ``1 x 1``
convolution (the skip). ``SNO2D`` may end with U-SNO layers whose skip is a :class:`UNet2D`.

Constructor arguments, defaults and sub-cell names are MindFlow's (``encoder.0.conv.weight``,
``sno_kernel.{i}.linear_conv.conv.weight``, ``sno_kernel.{i}.skip_conv.conv.weight``,
``sno_kernel.{i}.unet...``, ``decoder.{0,2}.conv.weight``; MindSpore's convolutions have no
bias). ``transforms`` is ``[[analysis, synthesis], ...]``, one pair per spatial axis, as Tensors
or numpy arrays; they are constants (not Parameters), used in the input's dtype.

Beyond MindFlow: ``dtype`` (the parameters' dtype; ``compute_dtype`` other than it runs the
convolutions in that dtype, MindSpore's ``to_float``); inputs may have several batch axes; the
shapes are checked against the transforms, with errors naming the argument to change; with
``data_format='channels_last'`` 3-D inputs ``[B, X, Y, Z, C]`` keep their axis order (MindFlow's
permutation ``(0, 4, 3, 1, 2)`` sends ``Z`` to the first transformed axis).
"""

import numpy as np

from diffsci import core
from diffsci.core import nn, ops

from ...utils.check_func import check_param_type
from ..activation import get_activation
from .unet import UNet2D

__all__ = [
    "SNO",
    "SNO1D",
    "SNO2D",
    "SNO3D",
    "ConvCell",
    "SNOKernelCell",
    "TransformCell",
    "USNOKernelCell2D",
]

_CONVS = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}


def _check_int(value, name, where, minimum=1):
    check_param_type(value, f"{where}: {name}", int, bool)
    if value < minimum:
        raise ValueError(f"{where}: {name} must be an int >= {minimum}, got {value}")


class ConvCell(nn.Cell):
    """A ``dim``-D convolution without bias, 'same'-sized: ``[..., C_in, *s] -> [..., C_out, *s]``.

    ``kernel_size > 1`` pads ``kernel_size // 2`` on both sides (MindFlow's ``pad_mode='pad'``; an
    odd kernel keeps the size). ``compute_dtype`` differing from ``dtype`` computes in that dtype.
    """

    def __init__(
        self,
        dim,
        in_channels,
        out_channels,
        kernel_size=1,
        compute_dtype=core.float32,
        dtype=core.float32,
    ):
        super().__init__()
        if dim not in _CONVS:
            raise ValueError(f"ConvCell: dim must be 1, 2 or 3, got {dim!r}")
        self.dim = dim
        pad = {"pad_mode": "pad", "padding": kernel_size // 2} if kernel_size > 1 else {}
        self.conv = _CONVS[dim](in_channels, out_channels, kernel_size, dtype=dtype, **pad)
        if core.dtypes.canonical(compute_dtype) != core.dtypes.canonical(dtype):
            self.conv.to_float(compute_dtype)

    def construct(self, x):
        return self.conv(x)


class TransformCell(nn.Cell):
    """Applies a polynomial transform matrix along one spatial axis.

    Args:
        dim: number of spatial axes of the inputs ``[..., C, *spatial]``.
        transform: ``[n_out, n_in]`` matrix (Tensor or array): analysis ``[n_modes, n]`` or
            synthesis ``[n, n_modes]``.
        axis: which spatial axis, ``0 <= axis < dim`` (x, y, z).

    Inputs ``[..., C, s_0, ..., s_axis = n_in, ...]``; outputs the same with ``n_out`` at
    ``axis``: ``out[..., i, ...] = sum_j transform[i, j] x[..., j, ...]``.
    """

    def __init__(self, dim, transform, axis=0):
        super().__init__()
        if not 0 <= axis < dim:
            raise ValueError(f"TransformCell: axis must be in [0, {dim}), got {axis}")
        t = transform if isinstance(transform, core.Tensor) else core.tensor(np.asarray(transform))
        if t.ndim != 2:
            raise ValueError(f"TransformCell: transform must be a matrix, got shape {t.shape}")
        self.dim, self.axis = dim, axis
        self.transform = t  # [n_out, n_in]
        self.transform_t = ops.transpose(t, (1, 0))  # [n_in, n_out]

    def construct(self, x):
        n_in = self.transform.shape[1]
        ax = x.ndim - self.dim + self.axis
        if x.shape[ax] != n_in:
            raise ValueError(
                f"TransformCell: spatial axis {self.axis} of the input {tuple(x.shape)} has "
                f"{x.shape[ax]} points, the transform {tuple(self.transform.shape)} expects {n_in}"
            )
        if self.axis == self.dim - 1:  # the last axis: x @ T^T
            return ops.matmul(x, ops.cast(self.transform_t, x.dtype))  # [..., n_out]
        t = ops.cast(self.transform, x.dtype)
        if self.axis == self.dim - 2:  # second to last: T @ x
            return ops.matmul(t, x)  # [..., n_out, s_last]
        y = ops.moveaxis(x, ax, -2)  # [..., n_in, s_last]
        y = ops.matmul(t, y)  # [..., n_out, s_last]
        return ops.moveaxis(y, -2, ax)  # [..., n_out at ax, ...]


def _check_transforms(transforms, where):
    """``[[analysis [m, n], synthesis [n, m]], ...]`` (1 to 3 pairs) as ``(dim, modes, res)``."""
    check_param_type(transforms, f"{where}: transforms", list)
    if len(transforms) not in (1, 2, 3):
        raise ValueError(
            f"{where}: transforms must hold one [analysis, synthesis] pair per spatial axis "
            f"(1, 2 or 3 pairs), got {len(transforms)}"
        )
    modes, res = [], []
    for i, pair in enumerate(transforms):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(
                f"{where}: transforms[{i}] must be [analysis, synthesis], got {type(pair).__name__}"
                + (f" of length {len(pair)}" if isinstance(pair, (list, tuple)) else "")
            )
        a_shape, s_shape = tuple(pair[0].shape), tuple(pair[1].shape)
        if len(a_shape) != 2 or len(s_shape) != 2 or a_shape != s_shape[::-1]:
            raise ValueError(
                f"{where}: transforms[{i}] must be analysis [n_modes, resolution] and synthesis "
                f"[resolution, n_modes], got shapes {a_shape} and {s_shape}"
            )
        if a_shape[0] > a_shape[1]:
            raise ValueError(
                f"{where}: transforms[{i}] has n_modes={a_shape[0]} above the resolution "
                f"{a_shape[1]}; build it with get_poly_transform(resolution, n_modes <= resolution)"
            )
        modes.append(a_shape[0])
        res.append(a_shape[1])
    return len(transforms), tuple(modes), tuple(res)


class SNOKernelCell(nn.Cell):
    r"""One SNO layer: ``act(S (K * (A x)) + W x)`` (see the module docstring).

    Args:
        in_channels, out_channels: channels in and out.
        transforms: ``[[analysis, synthesis], ...]``, one pair per spatial axis.
        kernel_size: kernel of the convolution ``K`` over the coefficients (odd keeps the size).
        activation: a Cell or callable (None: identity).
        compute_dtype: compute dtype of the convolutions. Default float32.
        dtype: parameters' dtype. Default float32.

    Inputs ``[..., in_channels, *resolution]``; outputs ``[..., out_channels, *resolution]``.
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        transforms,
        kernel_size,
        activation,
        compute_dtype=core.float32,
        dtype=core.float32,
    ):
        super().__init__()
        where = type(self).__name__
        _check_int(in_channels, "in_channels", where)
        _check_int(out_channels, "out_channels", where)
        _check_int(kernel_size, "kernel_size", where)
        dim, _, _ = _check_transforms(transforms, where)
        self.dim = dim
        self.linear_conv = ConvCell(
            dim, in_channels, out_channels, kernel_size, compute_dtype, dtype
        )
        self.skip_conv = ConvCell(dim, in_channels, out_channels, 1, compute_dtype, dtype)
        self.direct_transforms = nn.CellList(
            [TransformCell(dim, transforms[i][0], i) for i in range(dim)]
        )
        self.inverse_transforms = nn.CellList(
            [TransformCell(dim, transforms[i][1], i) for i in range(dim)]
        )
        self.act = activation

    def spectral_transform(self, x):
        """``S (K * (A x))``: ``[..., C_in, *n] -> [..., C_out, *n]``."""
        a = x
        for transform in self.direct_transforms:
            a = transform(a)  # [..., C_in, m_x, ...] one axis at a time
        s = self.linear_conv(a)  # [..., C_out, *m]
        for inv_transform in self.inverse_transforms:
            s = inv_transform(s)  # [..., C_out, n_x, ...]
        return s

    def _skip(self, x):
        return self.skip_conv(x)  # [..., C_out, *n]

    def construct(self, x):
        x = self.spectral_transform(x) + self._skip(x)  # [..., C_out, *n]
        return x if self.act is None else self.act(x)


class USNOKernelCell2D(SNOKernelCell):
    """A 2-D SNO layer whose skip is a :class:`UNet2D` (``n_layers=num_strides``, NCHW, no batch
    norm, ``base_channels=in_channels``) instead of the ``1 x 1`` convolution (U-SNO)."""

    def __init__(
        self,
        in_channels,
        out_channels,
        transforms,
        kernel_size,
        num_strides,
        activation,
        compute_dtype=core.float32,
        dtype=core.float32,
    ):
        super().__init__(
            in_channels, out_channels, transforms, kernel_size, activation, compute_dtype, dtype
        )
        _check_int(num_strides, "num_strides", type(self).__name__)
        self.skip_conv = None  # MindFlow's U-SNO layer has no 1 x 1 skip
        self.unet = UNet2D(
            in_channels,
            out_channels,
            base_channels=in_channels,
            n_layers=num_strides,
            data_format="NCHW",
            activation=activation if activation is not None else nn.Identity(),
            enable_bn=False,
            dtype=dtype,
        )

    def _skip(self, x):
        return self.unet(x)  # [..., C_out, H, W]


class SNO(nn.Cell):
    r"""Spectral neural operator (Fanaskov & Oseledets 2023): a ``1 x 1`` convolution lifting
    (``encoder``: conv, act), ``num_sno_layers`` SNO layers and ``num_usno_layers`` U-SNO layers
    (2-D only) at ``hidden_channels`` (``sno_kernel``), and a projection (``decoder``: conv, act,
    conv). The spatial dimension is ``len(transforms)``.

    Args:
        in_channels: input channels.
        out_channels: output channels.
        hidden_channels: channels of the SNO layers. Default 64.
        num_sno_layers: number of SNO layers, ``>= 1``. Default 3.
        data_format: ``'channels_first'`` (default) or ``'channels_last'``.
        transforms: ``[[analysis, synthesis], ...]``, one pair per spatial axis (x, y, z):
            analysis ``[n_modes, resolution]``, synthesis ``[resolution, n_modes]``, e.g. from
            ``get_poly_transform(resolution, n_modes)``. Required.
        kernel_size: kernel of the convolution over the coefficients. Default 5.
        num_usno_layers: U-SNO layers after the SNO layers (2-D only; ignored otherwise, as in
            MindFlow). Default 0.
        num_unet_strides: down-sampling levels of their U-Nets. Default 1.
        activation: name, Cell, or None (identity). Default ``'gelu'``.
        compute_dtype: compute dtype of the convolutions. Default float32.
        dtype: parameters' dtype. Default float32.

    Inputs:
        ``x [..., in_channels, *resolution]`` (channels_first) or
        ``[..., *resolution, in_channels]`` (channels_last), with the values at the Gauss points
        of the transforms.

    Outputs:
        ``[..., out_channels, *resolution]`` or ``[..., *resolution, out_channels]``.
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        hidden_channels=64,
        num_sno_layers=3,
        data_format="channels_first",
        transforms=None,
        kernel_size=5,
        num_usno_layers=0,
        num_unet_strides=1,
        activation="gelu",
        compute_dtype=core.float32,
        dtype=core.float32,
    ):
        super().__init__()
        where = type(self).__name__
        _check_int(in_channels, "in_channels", where)
        _check_int(out_channels, "out_channels", where)
        _check_int(hidden_channels, "hidden_channels", where)
        check_param_type(num_sno_layers, f"{where}: num_sno_layers", int, bool)
        if num_sno_layers < 1:
            raise ValueError(
                f"{where}: SNO should contain at least one spectral layer, got "
                f"num_sno_layers={num_sno_layers}"
            )
        _check_int(num_usno_layers, "num_usno_layers", where, minimum=0)
        if transforms is None:
            raise ValueError(
                f"{where}: transforms is required: [[analysis, synthesis]] per spatial axis, "
                f"e.g. from get_poly_transform(resolution, n_modes)"
            )
        self.dim, self.n_modes, self.resolutions = _check_transforms(transforms, where)
        if data_format not in ("channels_first", "channels_last"):
            raise ValueError(
                f"{where}: data_format must be 'channels_first' or 'channels_last', but got "
                f"data_format: {data_format}"
            )
        self.data_format = data_format
        self.in_channels, self.out_channels = in_channels, out_channels
        if activation is None:
            self.act = nn.Identity()
        elif isinstance(activation, str):
            self.act = get_activation(activation)
        else:
            self.act = activation
        if self.dim != 2:
            num_usno_layers = 0
        hc = hidden_channels

        self.encoder = nn.SequentialCell(
            [ConvCell(self.dim, in_channels, hc, 1, compute_dtype, dtype), self.act]
        )
        kernels = [
            SNOKernelCell(hc, hc, transforms, kernel_size, self.act, compute_dtype, dtype)
            for _ in range(num_sno_layers)
        ]
        kernels += [
            USNOKernelCell2D(
                hc, hc, transforms, kernel_size, num_unet_strides, self.act, compute_dtype, dtype
            )
            for _ in range(num_usno_layers)
        ]
        self.sno_kernel = nn.SequentialCell(kernels)
        self.decoder = nn.SequentialCell(
            [
                ConvCell(self.dim, hc, hc, 1, compute_dtype, dtype),
                self.act,
                ConvCell(self.dim, hc, out_channels, 1, compute_dtype, dtype),
            ]
        )

    def _check_input(self, x):
        where, d, c = type(self).__name__, self.dim, self.in_channels
        res = self.resolutions
        last = self.data_format == "channels_last"
        spatial = tuple(x.shape[-d - 1 : -1]) if last else tuple(x.shape[-d:])
        channels = x.shape[-1] if last and x.ndim > d else (x.shape[-d - 1] if x.ndim > d else -1)
        if x.ndim >= d + 1 and channels == c and spatial == res:
            return
        want = (
            f"[..., {', '.join(map(str, res))}, C={c}]"
            if last
            else (f"[..., C={c}, {', '.join(map(str, res))}]")
        )
        hint = ""
        if x.ndim >= d + 1:
            other_spatial = tuple(x.shape[-d:]) if last else tuple(x.shape[-d - 1 : -1])
            other_channels = x.shape[-d - 1] if last else x.shape[-1]
            if other_channels == c and other_spatial == res:
                other = "channels_first" if last else "channels_last"
                hint = f"; it looks {other}: pass data_format='{other}'"
            elif channels == c:
                hint = (
                    f"; its resolution {spatial} differs from the transforms' {res}: build "
                    f"the transforms with get_poly_transform at the data's resolution"
                )
        raise ValueError(
            f"{where}: input of shape {tuple(x.shape)} is not {want} "
            f"(data_format='{self.data_format}'){hint}"
        )

    def construct(self, x):
        self._check_input(x)
        d = self.dim
        if self.data_format == "channels_last":
            x = ops.moveaxis(x, -1, -d - 1)  # [..., C_in, *n]
        x = self.encoder(x)  # [..., hidden, *n]
        x = self.sno_kernel(x)  # [..., hidden, *n]
        x = self.decoder(x)  # [..., C_out, *n]
        if self.data_format == "channels_last":
            x = ops.moveaxis(x, -d - 1, -1)  # [..., *n, C_out]
        return x


def _sno_dim(transforms, dim, cls):
    if isinstance(transforms, list) and len(transforms) != dim:
        raise ValueError(
            f"{cls}: transforms must hold {dim} [analysis, synthesis] pair(s), one per spatial "
            f"axis, got {len(transforms)}"
        )


class SNO1D(SNO):
    r"""The 1-D SNO: ``transforms=[[analysis, synthesis]]``; inputs ``[B, C_in, n]``
    (channels_first) or ``[B, n, C_in]``. Arguments as :class:`SNO`."""

    def __init__(
        self,
        in_channels,
        out_channels,
        hidden_channels=64,
        num_sno_layers=3,
        data_format="channels_first",
        transforms=None,
        kernel_size=5,
        activation="gelu",
        compute_dtype=core.float32,
        dtype=core.float32,
    ):
        _sno_dim(transforms, 1, "SNO1D")
        super().__init__(
            in_channels=in_channels,
            out_channels=out_channels,
            hidden_channels=hidden_channels,
            num_sno_layers=num_sno_layers,
            data_format=data_format,
            transforms=transforms,
            kernel_size=kernel_size,
            activation=activation,
            compute_dtype=compute_dtype,
            dtype=dtype,
        )


class SNO2D(SNO):
    r"""The 2-D SNO (U-SNO with ``num_usno_layers > 0``): ``transforms=[[A_x, S_x], [A_y, S_y]]``;
    inputs ``[B, C_in, n_x, n_y]`` (channels_first) or ``[B, n_x, n_y, C_in]``. Arguments as
    :class:`SNO`."""

    def __init__(
        self,
        in_channels,
        out_channels,
        hidden_channels=64,
        num_sno_layers=3,
        data_format="channels_first",
        transforms=None,
        kernel_size=5,
        num_usno_layers=0,
        num_unet_strides=1,
        activation="gelu",
        compute_dtype=core.float32,
        dtype=core.float32,
    ):
        _sno_dim(transforms, 2, "SNO2D")
        super().__init__(
            in_channels=in_channels,
            out_channels=out_channels,
            hidden_channels=hidden_channels,
            num_sno_layers=num_sno_layers,
            data_format=data_format,
            transforms=transforms,
            kernel_size=kernel_size,
            num_usno_layers=num_usno_layers,
            num_unet_strides=num_unet_strides,
            activation=activation,
            compute_dtype=compute_dtype,
            dtype=dtype,
        )


class SNO3D(SNO):
    r"""The 3-D SNO: three transform pairs; inputs ``[B, C_in, n_x, n_y, n_z]`` (channels_first)
    or ``[B, n_x, n_y, n_z, C_in]``. Arguments as :class:`SNO`."""

    def __init__(
        self,
        in_channels,
        out_channels,
        hidden_channels=64,
        num_sno_layers=3,
        data_format="channels_first",
        transforms=None,
        kernel_size=5,
        activation="gelu",
        compute_dtype=core.float32,
        dtype=core.float32,
    ):
        _sno_dim(transforms, 3, "SNO3D")
        super().__init__(
            in_channels=in_channels,
            out_channels=out_channels,
            hidden_channels=hidden_channels,
            num_sno_layers=num_sno_layers,
            data_format=data_format,
            transforms=transforms,
            kernel_size=kernel_size,
            activation=activation,
            compute_dtype=compute_dtype,
            dtype=dtype,
        )
