"""Koopman neural operators: ``KNO1D``, ``KNO2D``.

Implements the Koopman neural operator of Xiong et al., "Koopman neural operator as a
mesh-free solver of non-linear partial differential equations", J. Comput. Phys. 2024
(arXiv 2301.10022), in the form of MindFlow's ``kno1d.py``/``kno2d.py`` (from KoopmanLab,
arXiv 2301.01104): an encoder ``phi = tanh(enc(u))`` to an observable space of ``channels``
functions, ``depths`` applications of one shared Koopman operator ``K`` acting in Fourier space
on the lowest ``modes`` frequencies (``z <- tanh(z + K z)``, the spectral convolution of
:mod:`.spectral_conv`), a high-frequency pointwise correction ``tanh(w0 phi + z)``, and a decoder
``dec``. The network also returns the reconstruction ``dec(tanh(enc(u)))`` that the
training loss uses to keep the encoder invertible.

Names, arguments, defaults and parameter names are MindFlow's: ``enc.{weight,bias}``,
``dec.{weight,bias}``, ``koopman_layer._w_re...``, ``w0.{weight,bias}``. As in the FNO,
the FFT replaces MindFlow's DFT matrices, so the weights apply at any resolution that holds
``modes``.
"""

from diffsci import core
from diffsci.core import nn, ops

from ...utils.check_func import check_param_type
from .fno import PointwiseConv1d, PointwiseConv2d
from .spectral_conv import SpectralConv1d, SpectralConv2d, check_modes_fit, param_dtype_for

__all__ = ["KNO1D", "KNO2D"]


class _KNO(nn.Cell):
    """The Koopman neural operator over ``_ndim`` spatial axes (see the module docstring).

    Args:
        in_channels: channels of the input (and output) field, a positive int.
        channels: dimension of the observable space (the lifting width), a positive int.
        modes: Fourier modes kept by the Koopman operator on each axis, a positive int.
        depths: number of applications of the Koopman operator, a positive int.
        resolution: the training grid's points per axis; inputs may come on any grid that
            holds ``modes``.
        compute_dtype: dtype of the Koopman operator's transform. Default float32 (float64
            makes every parameter float64).

    Inputs ``x``: ``[batch, *grid, in_channels]`` (channels last). Outputs ``(x_pred,
    x_reconstruct)``, both ``[batch, *grid, in_channels]``.
    """

    _ndim = 0
    _spectral = None
    _pointwise = None

    def __init__(self, in_channels, channels, modes, depths, resolution, compute_dtype):
        super().__init__()
        where, d = type(self).__name__, self._ndim
        for value, name in (
            (in_channels, "in_channels"),
            (channels, "channels"),
            (modes, "modes"),
            (depths, "depths"),
            (resolution, "resolution"),
        ):
            check_param_type(value, f"{where}: {name}", int, bool)
            if value < 1:
                raise ValueError(f"{where}: {name} must be a positive int, got {value}")
        self.in_channels = in_channels
        self.channels = channels
        self.modes = modes
        self.depths = depths
        self.resolution = resolution
        check_modes_fit([modes] * d, [resolution] * d, where, "resolution", "modes")
        pdt = param_dtype_for(core.dtypes.canonical(compute_dtype))
        self.enc = nn.Dense(in_channels, channels, has_bias=True, dtype=pdt)
        self.dec = nn.Dense(channels, in_channels, has_bias=True, dtype=pdt)
        self.koopman_layer = self._spectral(
            channels, channels, [modes] * d, [resolution] * d, compute_dtype=compute_dtype
        )
        self.w0 = self._pointwise(channels, channels, has_bias=True, weight_init=None, dtype=pdt)

    def construct(self, x):
        where, d = type(self).__name__, self._ndim
        if x.ndim != d + 2 or x.shape[-1] != self.in_channels:
            hint = ""
            if x.ndim == d + 2 and x.shape[1] == self.in_channels:
                hint = "; it looks like channels-first data: move the channel axis last"
            raise ValueError(
                f"{where}: input of shape {tuple(x.shape)} is not [batch, *grid ({d} axes), "
                f"in_channels={self.in_channels}] (channels last){hint}"
            )
        check_modes_fit([self.modes] * d, x.shape[1:-1], where, "input grid", "modes")
        x_reconstruct = self.dec(ops.tanh(self.enc(x)))  # [B, *grid, C_in]
        x = ops.tanh(self.enc(x))  # [B, *grid, channels]
        x = ops.moveaxis(x, -1, 1)  # [B, channels, *grid]
        x_w = x
        for _ in range(self.depths):
            x = ops.tanh(x + self.koopman_layer(x))  # [B, channels, *grid]
        x = ops.tanh(self.w0(x_w) + x)  # [B, channels, *grid]
        x = ops.moveaxis(x, 1, -1)  # [B, *grid, channels]
        x = self.dec(x)  # [B, *grid, C_in]
        return x, x_reconstruct

    def extend_repr(self):
        return (
            f"in_channels={self.in_channels}, channels={self.channels}, modes={self.modes}, "
            f"depths={self.depths}, resolution={self.resolution}"
        )


class KNO1D(_KNO):
    """The 1D Koopman neural operator (MindFlow's ``KNO1D``); see :class:`_KNO`.

    Inputs ``[batch, n, in_channels]``; outputs ``(prediction, reconstruction)``, each
    ``[batch, n, in_channels]``.
    """

    _ndim = 1
    _spectral = SpectralConv1d
    _pointwise = PointwiseConv1d

    def __init__(
        self,
        in_channels=1,
        channels=32,
        modes=16,
        depths=4,
        resolution=1024,
        compute_dtype=core.float32,
    ):
        super().__init__(in_channels, channels, modes, depths, resolution, compute_dtype)


class KNO2D(_KNO):
    """The 2D Koopman neural operator (MindFlow's ``KNO2D``); see :class:`_KNO`.

    Inputs ``[batch, n_1, n_2, in_channels]`` (MindFlow's Navier-Stokes case: 10 time steps as
    channels); outputs ``(prediction, reconstruction)``, each ``[batch, n_1, n_2,
    in_channels]``.
    """

    _ndim = 2
    _spectral = SpectralConv2d
    _pointwise = PointwiseConv2d

    def __init__(
        self,
        in_channels=10,
        channels=32,
        modes=16,
        depths=4,
        resolution=64,
        compute_dtype=core.float32,
    ):
        super().__init__(in_channels, channels, modes, depths, resolution, compute_dtype)
