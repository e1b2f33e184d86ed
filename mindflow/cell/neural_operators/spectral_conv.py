"""Fourier layers: the spectral convolution of the Fourier neural operator.

Implements the kernel integral operator of Li et al., "Fourier Neural Operator for Parametric
Partial Differential Equations", ICLR 2021 (arXiv 2010.08895), eq. (4):

    (K v)(x) = F^{-1}( R . (F v) )(x),

with ``F`` the real FFT over the ``d`` spatial axes, ``R`` a complex weight per kept mode mixing
``in_channels`` into ``out_channels``, and every mode above ``n_modes`` set to zero. The kept
modes are the ``n_modes[k]`` lowest frequencies of each axis: both signs (``0..m-1`` and
``-m..-1``) on the leading axes, ``0..m-1`` on the last axis (the real FFT's half spectrum),
so a ``d``-dimensional layer has ``2**(d-1)`` corner blocks of weights.

MindFlow (``mindflow/cell/neural_operators/dft.py``, ``SpectralConv{1,2,3}dDft``) computes
the transform as matrix products with truncated DFT matrices built for one resolution; here
the FFT (``core.ops.fft``: ``rfftn``/``irfftn``, pruned: the last axis is transformed first and
cut to its kept modes before the other axes are) does it, so the same weights act on any grid
that holds the modes: a layer built with ``resolutions=256`` evaluates at 1024 points. The
normalisation is the same as MindFlow's (its "sqrtn" DFT both ways equals numpy's default
forward/backward pair), so MindFlow checkpoints map one to one: the weights are real and
imaginary Parameters with MindFlow's names (``_w_re``/``_w_im`` in 1D; ``_w_re{k}``,
``_w_im{k}`` for the corner ``k`` in 2D and 3D, ``k - 1`` counting in binary which of the
leading axes take negative frequencies, first axis lowest bit), each of shape
``[in_channels, out_channels, *n_modes]``.
"""

from diffsci import core
from diffsci.core import Parameter, nn, ops
from diffsci.core.nn.init import Uniform, initializer

from ...utils.check_func import check_param_type

__all__ = [
    "SpectralConv1d",
    "SpectralConv1dDft",
    "SpectralConv2d",
    "SpectralConv2dDft",
    "SpectralConv3d",
    "SpectralConv3dDft",
    "check_modes_fit",
    "param_dtype_for",
]

_FLOATS = (core.float16, core.bfloat16, core.float32, core.float64)


def as_dim_list(value, ndim, name, where):
    """``value`` (an int, or a list/tuple of ``ndim`` ints) as a list of ``ndim`` positive ints;
    an int is repeated ``ndim`` times (MindFlow's FNO2D/FNO3D rule)."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value] * ndim
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise TypeError(f"{where}: {name} must be an int or a list of ints, got {value!r}")
    if len(value) != ndim:
        raise ValueError(
            f"{where}: {name} must have {ndim} entries (one per spatial axis), got {list(value)} "
            f"of length {len(value)}"
        )
    if any(v < 1 for v in value):
        raise ValueError(f"{where}: {name} must be positive, got {list(value)}")
    return list(value)


def check_modes_fit(n_modes, sizes, where, what="resolutions", modes_name="n_modes"):
    """Raise ValueError unless the grid ``sizes`` holds ``n_modes`` without overlap.

    A leading axis keeps ``m`` modes of each sign, so it needs ``size >= 2 * m``; the last
    axis keeps ``0..m-1`` of the real FFT's ``size // 2 + 1`` frequencies. The message names
    ``what`` (the grid) and ``modes_name`` (the argument to lower; ``'modes'``: one int for
    every axis, as in KNO).
    """
    d = len(n_modes)
    for k, (m, n) in enumerate(zip(n_modes, sizes)):
        arg = modes_name if modes_name == "modes" else f"{modes_name}[{k}]"
        if k < d - 1 and n < 2 * m:
            raise ValueError(
                f"{where}: {what} {list(sizes)} has {n} points on spatial axis {k}, fewer than "
                f"2 * {arg} = {2 * m} (modes of both signs are kept on this axis); lower "
                f"{arg} to at most {n // 2} or use a finer grid"
            )
        if k == d - 1 and m > n // 2 + 1:
            raise ValueError(
                f"{where}: {what} {list(sizes)} has {n} points on spatial axis {k} (the last), "
                f"whose real FFT has only {n // 2 + 1} frequencies, fewer than {arg} = {m}; "
                f"lower {arg} to at most {n // 2 + 1} or use a finer grid"
            )


def check_compute_dtype(dtype, name, where):
    """``dtype`` as a core floating dtype (float16, bfloat16, float32 or float64)."""
    d = core.dtypes.canonical(dtype) if dtype is not None else None
    if d not in _FLOATS:
        raise ValueError(
            f"{where}: {name} must be float16, bfloat16, float32 or float64, got {dtype!r}"
        )
    return d


def param_dtype_for(compute_dtype):
    """Parameters are float32 (MindFlow's), float64 when the computation is float64."""
    return core.float64 if compute_dtype == core.float64 else core.float32


class _SpectralConvNd(nn.Cell):
    """The Fourier layer over the last ``_ndim`` axes (see the module docstring).

    Args:
        in_channels: channels of the input, a positive int.
        out_channels: channels of the output, a positive int.
        n_modes: modes kept per spatial axis, an int (all axes) or a list of ``d`` ints.
        resolutions: the grid the layer is built for, an int or a list of ``d`` ints; checked
            against ``n_modes`` here. Inputs may come on any grid that holds the modes.
        compute_dtype: dtype of the transform and the mode mixing (MindFlow's argument).
            float32 (default) computes in complex64, float64 in complex128; float16 and
            bfloat16 transform in float32 (``core.ops.fft``) and return ``compute_dtype``.

    Inputs ``x``: ``[..., in_channels, n_1, ..., n_d]`` (channels first, any batch axes).
    Outputs: ``[..., out_channels, n_1, ..., n_d]`` in ``compute_dtype``.
    """

    _ndim = 0

    def __init__(self, in_channels, out_channels, n_modes, resolutions, compute_dtype=core.float32):
        super().__init__()
        name, d = type(self).__name__, self._ndim
        check_param_type(in_channels, f"{name}: in_channels", int, bool)
        check_param_type(out_channels, f"{name}: out_channels", int, bool)
        if in_channels < 1 or out_channels < 1:
            raise ValueError(
                f"{name}: in_channels and out_channels must be positive, got {in_channels} and "
                f"{out_channels}"
            )
        self.in_channels, self.out_channels = in_channels, out_channels
        self.n_modes = as_dim_list(n_modes, d, "n_modes", name)
        self.resolutions = as_dim_list(resolutions, d, "resolutions", name)
        check_modes_fit(self.n_modes, self.resolutions, name)
        self.compute_dtype = check_compute_dtype(compute_dtype, "compute_dtype", name)
        # MindFlow's init: scale * U[0, 1) for the real and the imaginary parts
        self._scale = 1.0 / (in_channels * out_channels)
        shape = (in_channels, out_channels, *self.n_modes)
        pdtype = param_dtype_for(self.compute_dtype)
        half = self._scale / 2
        n_corners = 2 ** (d - 1)
        for k in range(n_corners):
            suffix = "" if d == 1 else str(k + 1)
            for part in ("re", "im"):
                value = initializer(Uniform(half), shape, pdtype) + half
                setattr(self, f"_w_{part}{suffix}", Parameter(value, requires_grad=True))

    def _corner_weights(self):
        """The complex weight of each corner, ``[(signs, w [in, out, *n_modes])]``; ``signs``
        holds one bool per leading axis (True: negative frequencies)."""
        d = self._ndim
        out = []
        for k in range(2 ** (d - 1)):
            suffix = "" if d == 1 else str(k + 1)
            signs = tuple(bool((k >> i) & 1) for i in range(d - 1))
            out.append((signs, getattr(self, f"_w_re{suffix}"), getattr(self, f"_w_im{suffix}")))
        return out

    def construct(self, x):
        d, name = self._ndim, type(self).__name__
        if x.ndim < d + 1 or x.shape[-d - 1] != self.in_channels:
            raise ValueError(
                f"{name}: input of shape {tuple(x.shape)} is not [..., in_channels="
                f"{self.in_channels}, {d} spatial axes] (channels first)"
            )
        sizes = tuple(x.shape[x.ndim - d :])
        check_modes_fit(self.n_modes, sizes, name, what="input grid")
        axes = tuple(range(-d, 0))
        cdt = self.compute_dtype
        x = ops.astype(x, cdt) if x.dtype != cdt else x
        m = self.n_modes
        # rfftn, pruned: the last axis first, cut to its m_d kept frequencies, so that the
        # leading axes transform m_d columns instead of n_d // 2 + 1 (the FFTs commute)
        # only the m_d kept bins are returned (and only they reach the gradient: no padded
        # spectrum is built in the backward pass)
        x_ft = ops.fft.rfft(x, axis=-1, bins=m[d - 1])  # [..., C_in, n_1, ..., n_{d-1}, m_d]
        for k in range(d - 1):
            x_ft = ops.fft.fft(x_ft, axis=axes[k])
        rdt = ops.real(x_ft).dtype
        lead = tuple(x_ft.shape[: x_ft.ndim - d - 1])
        letters = "xyz"[:d]
        eq = f"...i{letters},io{letters}->...o{letters}"
        blocks = {}
        for signs, w_re, w_im in self._corner_weights():
            index = [slice(None)] * (d + 1)  # channel axis, then the spatial axes
            for k, neg in enumerate(signs):
                index[1 + k] = slice(sizes[k] - m[k], sizes[k]) if neg else slice(0, m[k])
            corner = x_ft[(Ellipsis, *index)]  # [..., C_in, m_1, ..., m_d]
            w = ops.complex(ops.astype(w_re, rdt), ops.astype(w_im, rdt))  # [C_in, C_out, *m]
            blocks[signs] = ops.einsum(eq, corner, w)  # [..., C_out, m_1, ..., m_d]
        # put the corners back on the grid: zeros between the two signs of each leading axis
        for k in range(d - 1):
            merged = {}
            for signs, block in blocks.items():
                if signs[0]:
                    continue
                neg = blocks[(True, *signs[1:])]
                parts = [block]
                gap = sizes[k] - 2 * m[k]
                if gap:
                    zshape = list(block.shape)
                    zshape[len(lead) + 1 + k] = gap
                    parts.append(ops.zeros(tuple(zshape), dtype=block.dtype))
                parts.append(neg)
                merged[signs[1:]] = ops.concat(parts, axis=len(lead) + 1 + k)  # n_k on axis k
            blocks = merged
        out_ft = blocks[()]  # [..., C_out, n_1, ..., n_{d-1}, m_d]
        # irfftn, pruned the same way: the leading axes on m_d columns, then the last axis,
        # whose transform reads the m_d bins as the spectrum with the higher ones zero
        for k in range(d - 1):
            out_ft = ops.fft.ifft(out_ft, axis=axes[k])
        y = ops.fft.irfft(out_ft, n=sizes[-1], axis=-1)  # [..., C_out, n_1, ..., n_d]
        return ops.astype(y, cdt) if y.dtype != cdt else y

    def extend_repr(self):
        return (
            f"in_channels={self.in_channels}, out_channels={self.out_channels}, "
            f"n_modes={self.n_modes}, resolutions={self.resolutions}, "
            f"compute_dtype={self.compute_dtype}"
        )


class SpectralConv1d(_SpectralConvNd):
    """1D Fourier layer (MindFlow's ``SpectralConv1dDft``): rfft, mode mixing, irfft.

    Parameters ``_w_re``, ``_w_im`` ``[in_channels, out_channels, n_modes]``.
    Inputs ``[..., in_channels, n]``; outputs ``[..., out_channels, n]`` with any ``n`` such
    that ``n // 2 + 1 >= n_modes``. Arguments as :class:`_SpectralConvNd`.
    """

    _ndim = 1


class SpectralConv2d(_SpectralConvNd):
    """2D Fourier layer (MindFlow's ``SpectralConv2dDft``).

    Parameters ``_w_re1, _w_im1`` (frequencies ``+`` on axis 1) and ``_w_re2, _w_im2`` (``-``),
    each ``[in_channels, out_channels, m_1, m_2]``. Inputs ``[..., in_channels, n_1, n_2]`` with
    ``n_1 >= 2 m_1``, ``n_2 // 2 + 1 >= m_2``; outputs ``[..., out_channels, n_1, n_2]``.
    """

    _ndim = 2


class SpectralConv3d(_SpectralConvNd):
    """3D Fourier layer (MindFlow's ``SpectralConv3dDft``).

    Four corners ``_w_re{k}, _w_im{k}`` ``[in_channels, out_channels, m_1, m_2, m_3]``, ``k`` =
    1: (+, +), 2: (-, +), 3: (+, -), 4: (-, -) for the signs of the frequencies on axes 1, 2.
    Inputs ``[..., in_channels, n_1, n_2, n_3]``; outputs ``[..., out_channels, n_1, n_2, n_3]``.
    """

    _ndim = 3


# MindFlow's class names (mindflow/cell/neural_operators/dft.py)
SpectralConv1dDft = SpectralConv1d
SpectralConv2dDft = SpectralConv2d
SpectralConv3dDft = SpectralConv3d
