"""``core.ops.fft``: discrete Fourier transforms with numpy's signatures.

``fft ifft rfft irfft`` (one axis, length ``n``), ``fft2 ifft2 rfft2 irfft2`` (axes (-2, -1)),
``fftn ifftn rfftn irfftn`` (sizes ``s`` over ``axes``), plus ``fftfreq rfftfreq fftshift
ifftshift``. ``n``/``s`` pad with zeros or truncate each axis first, as numpy does; ``norm`` is
"backward" (default), "ortho" or "forward". All are differentiable to any order in both modes
and batch under ``core.vmap``.

Dtypes: float32/complex64 in -> complex64 out (numpy would give complex128), float64/complex128
-> complex128; the real inverses return float32/float64. Integer inputs compute in float32,
float16/bfloat16 in float32.

The three primitives (``core.prims.fft``) transform at the input's sizes; this module resizes,
casts and normalizes arguments.
"""

import numpy as np

from .. import dtypes as _dt
from ..prims import fft as prims_fft
from ._convert import as_tensor
from .elementwise import astype
from .shape import pad, slice_axis

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]


def _norm(norm, name):
    norm = "backward" if norm is None else norm
    if norm not in prims_fft.NORMS:
        raise ValueError(f"{name}: norm must be one of {prims_fft.NORMS} or None, got {norm!r}")
    return norm


def _as_complex(x, name):
    x = as_tensor(x)
    if _dt.is_complex(x.dtype):
        return x
    if x.dtype in (_dt.float64,):
        return astype(x, _dt.complex128)
    if _dt.is_floating(x.dtype) or x.dtype.kind in "biu":
        return astype(x, _dt.complex64)
    raise TypeError(f"{name}: unsupported dtype {x.dtype} (shape {tuple(x.shape)})")


def _as_real(x, name):
    x = as_tensor(x)
    if _dt.is_complex(x.dtype):
        raise TypeError(
            f"{name}: input must be real, got {x.dtype} (shape {tuple(x.shape)}); use fft/fftn for "
            "complex input"
        )
    if x.dtype in (_dt.float32, _dt.float64):
        return x
    if _dt.is_floating(x.dtype) or x.dtype.kind in "biu":
        return astype(x, _dt.float32)
    raise TypeError(f"{name}: unsupported dtype {x.dtype} (shape {tuple(x.shape)})")


def _axes_sizes(x, s, axes, name):
    """numpy's rules: axes default to the last len(s) axes (all axes when s is None too)."""
    if axes is None:
        axes = range(x.ndim) if s is None else range(x.ndim - len(s), x.ndim)
    axes = [int(a) for a in ((axes,) if isinstance(axes, (int, np.integer)) else axes)]
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise ValueError(
                f"{name}: axis {a} out of range for a tensor of shape {tuple(x.shape)}"
            )
    axes = tuple(a % x.ndim for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated axis in {axes} (shape {tuple(x.shape)})")
    if not axes:
        raise ValueError(f"{name}: needs at least one axis (shape {tuple(x.shape)})")
    if s is None:
        s = [None] * len(axes)
    s = [
        None if v is None or v == -1 else int(v)
        for v in ((s,) if isinstance(s, (int, np.integer)) else s)
    ]
    if len(s) != len(axes):
        raise ValueError(f"{name}: s={s} and axes={axes} have different lengths")
    for v in s:
        if v is not None and v < 1:
            raise ValueError(f"{name}: invalid number of data points {v} (must be >= 1)")
    return axes, s


def _resize(x, axis, size):
    """Zero-pad or truncate ``x`` along ``axis`` to ``size``."""
    n = x.shape[axis]
    if size == n:
        return x
    if size < n:
        return slice_axis(x, axis, 0, size)
    pads = [(0, 0)] * x.ndim
    pads[axis] = (0, size - n)
    return pad(x, tuple(pads))


def _resize_axes(x, axes, sizes):
    """:func:`_resize` along each of ``axes`` whose size is given (not None)."""
    for a, v in zip(axes, sizes):
        if v is not None:
            x = _resize(x, a, v)
    return x


def _c2c(x, s, axes, norm, inverse, name):
    x = _as_complex(x, name)
    axes, s = _axes_sizes(x, s, axes, name)
    norm = _norm(norm, name)
    x = _resize_axes(x, axes, s)
    return prims_fft.fft(x, axes=axes, inverse=inverse, norm=norm)


def _r2c(x, s, axes, norm, name, bins=None):
    x = _as_real(x, name)
    axes, s = _axes_sizes(x, s, axes, name)
    norm = _norm(norm, name)
    x = _resize_axes(x, axes, s)
    if bins is None:
        return prims_fft.rfft(x, axes=axes, norm=norm)
    full = x.shape[axes[-1]] // 2 + 1
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or not 1 <= bins <= full:
        raise ValueError(
            f"{name}: bins must be an int in [1, {full}] ({x.shape[axes[-1]]} points on axis "
            f"{axes[-1]} of shape {tuple(x.shape)}), got {bins!r}"
        )
    return prims_fft.rfft(x, axes=axes, norm=norm, bins=int(bins))


def _c2r(x, s, axes, norm, name):
    x = _as_complex(x, name)
    axes, s = _axes_sizes(x, s, axes, name)
    norm = _norm(norm, name)
    x = _resize_axes(x, axes[:-1], s[:-1])
    last = axes[-1]
    n = s[-1] if s[-1] is not None else 2 * (x.shape[last] - 1)
    if n < 1:
        raise ValueError(
            f"{name}: invalid number of data points {n} from {x.shape[last]} bins on axis {last} of "
            f"shape {tuple(x.shape)}; pass n/s"
        )
    if x.shape[last] > n // 2 + 1:
        x = _resize(x, last, n // 2 + 1)
    # fewer bins: the prim reads the missing high ones as zeros (no padded copy is made)
    return prims_fft.irfft(x, axes=axes, n=n, norm=norm)


# ---- one axis ------------------------------------------------------------------------------------


def fft(a, n=None, axis=-1, norm=None):
    """1-D DFT of ``a`` along ``axis``, padded/truncated to ``n``: [..., n] complex."""
    return _c2c(a, None if n is None else (n,), (axis,), norm, False, "fft")


def ifft(a, n=None, axis=-1, norm=None):
    """1-D inverse DFT along ``axis`` (length ``n``)."""
    return _c2c(a, None if n is None else (n,), (axis,), norm, True, "ifft")


def rfft(a, n=None, axis=-1, norm=None, *, bins=None):
    """DFT of real ``a`` along ``axis``: the n//2+1 non-negative frequency bins, or only the
    first ``bins`` of them (beyond numpy: what spectral layers keep; its gradient, and
    :func:`irfft` of such a truncated spectrum, never build the zero-padded one)."""
    return _r2c(a, None if n is None else (n,), (axis,), norm, "rfft", bins)


def irfft(a, n=None, axis=-1, norm=None):
    """Inverse of :func:`rfft`: real output of length ``n`` (default ``2 * (bins - 1)``)
    along ``axis``; the input is read as the half spectrum of a Hermitian signal."""
    return _c2r(a, None if n is None else (n,), (axis,), norm, "irfft")


# ---- two axes ------------------------------------------------------------------------------------


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """2-D DFT over ``axes`` (sizes ``s``)."""
    return _c2c(a, s, axes, norm, False, "fft2")


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return _c2c(a, s, axes, norm, True, "ifft2")


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """2-D DFT of real ``a``: [..., s0, s1 // 2 + 1] complex."""
    return _r2c(a, s, axes, norm, "rfft2")


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """Inverse of :func:`rfft2`: [..., s0, s1] real."""
    return _c2r(a, s, axes, norm, "irfft2")


# ---- n axes --------------------------------------------------------------------------------------


def fftn(a, s=None, axes=None, norm=None):
    """N-D DFT over ``axes`` (all axes by default; the last len(s) when only ``s`` is given)."""
    return _c2c(a, s, axes, norm, False, "fftn")


def ifftn(a, s=None, axes=None, norm=None):
    return _c2c(a, s, axes, norm, True, "ifftn")


def rfftn(a, s=None, axes=None, norm=None):
    """N-D DFT of real ``a``; the last of ``axes`` keeps s[-1] // 2 + 1 bins."""
    return _r2c(a, s, axes, norm, "rfftn")


def irfftn(a, s=None, axes=None, norm=None):
    """Inverse of :func:`rfftn`; output sizes ``s`` (the last defaults to 2 * (bins - 1))."""
    return _c2r(a, s, axes, norm, "irfftn")


# ---- helpers -------------------------------------------------------------------------------------


def fftfreq(n, d=1.0, dtype=None):
    """Sample frequencies [n] of an n-point DFT with sample spacing ``d`` (numpy.fft.fftfreq)."""
    from .creation import tensor

    return tensor(np.fft.fftfreq(int(n), d), dtype=dtype or _dt.default_float)


def rfftfreq(n, d=1.0, dtype=None):
    """Sample frequencies [n // 2 + 1] of :func:`rfft` (numpy.fft.rfftfreq)."""
    from .creation import tensor

    return tensor(np.fft.rfftfreq(int(n), d), dtype=dtype or _dt.default_float)


def _roll_half(x, axes, sign):
    """Roll ``x`` by ``sign * (n // 2)`` along each of ``axes`` (all axes when None)."""
    from .shape import roll

    x = as_tensor(x)
    axes = (
        tuple(range(x.ndim))
        if axes is None
        else ((axes,) if isinstance(axes, int) else tuple(axes))
    )
    return roll(x, tuple(sign * (x.shape[a] // 2) for a in axes), axes)


def fftshift(x, axes=None):
    """Move the zero frequency to the centre (numpy.fft.fftshift; all axes by default)."""
    return _roll_half(x, axes, 1)


def ifftshift(x, axes=None):
    """Inverse of :func:`fftshift`."""
    return _roll_half(x, axes, -1)
