"""MindFlow's ``mindflow/cell/neural_operators/dft.py``: truncated DFT cells on (real, imag) pairs.

``dft1/dft2/dft3(shape, modes, dim, compute_dtype)`` and their inverses ``idft1/2/3`` return
cells that MindFlow's applications (the airfoil FNO2D, the acoustic CBS solver) call on a tuple
``(x_re, x_im)`` and that return one. MindFlow builds them as products with 'sqrtn'-scaled DFT
matrices; here they are FFTs (``core.ops.fft``, ``norm="ortho"``) with the same result:

- forward, on the axes ``dim`` (``d`` of them): the orthonormal DFT of ``x_re + i x_im``;
  along the last axis of ``dim`` only the frequencies ``0..m-1`` are kept (the output has ``m``
  entries there), along every other axis the frequencies ``0..m-1`` and ``-m..-1`` are kept
  and those in between are set to zero (the output keeps the axis' length);
- inverse, on ``dim``: the orthonormal inverse DFT along each leading axis, reading only the
  rows ``0..m-1`` and ``-m..-1``; along the last axis the ``m`` given frequencies are treated as
  the half spectrum of a real signal of length ``n``: ``X_0 + 2 sum_{0<k<m} X_k e^{2 pi i k j/n}``
  (the Nyquist term once when ``m = n // 2 + 1``), scaled by ``1/sqrt(n)``. Its real part is
  ``irfft`` of the spectrum; the imaginary part is returned as MindFlow does.

Also here, as in MindFlow: the Fourier layers ``SpectralConv1dDft``, ``SpectralConv2dDft``,
``SpectralConv3dDft`` (:mod:`.spectral_conv`).
"""

from diffsci import core
from diffsci.core import nn, ops

from ...utils.check_func import check_param_type
from .spectral_conv import (
    SpectralConv1dDft,
    SpectralConv2dDft,
    SpectralConv3dDft,
    check_compute_dtype,
)

__all__ = [
    "SpectralConv1dDft",
    "SpectralConv2dDft",
    "SpectralConv3dDft",
    "dft1",
    "dft2",
    "dft3",
    "idft1",
    "idft2",
    "idft3",
]


class DFTn(nn.Cell):
    """Truncated orthonormal DFT (or its inverse) over ``dim`` (see the module docstring).

    Args:
        shape: the signal's lengths along ``dim``, a tuple of ``d`` ints.
        modes: frequencies kept per axis, a tuple of ``d`` ints.
        dim: the axes, a tuple of ``d`` ints; the last one is the half-spectrum axis.
        inv: the inverse transform.
        compute_dtype: float dtype of the outputs (float16/bfloat16 compute in float32).

    Inputs ``(x_re, x_im)``: forward ``[..., *shape]``; inverse ``shape`` with the last axis
    of ``dim`` of length ``modes[-1]``. Outputs ``(y_re, y_im)``: forward the last axis of
    ``dim`` of length ``modes[-1]``; inverse ``[..., *shape]``.
    """

    def __init__(self, shape, modes, dim, inv=False, compute_dtype=core.float32):
        super().__init__()
        self.shape, self.modes, self.dim = tuple(shape), tuple(modes), tuple(dim)
        self.inv = bool(inv)
        self.compute_dtype = check_compute_dtype(compute_dtype, "compute_dtype", "DFTn")

    def _check(self, x):
        d, where = len(self.dim), "idft" if self.inv else "dft"
        want = list(self.shape)
        if self.inv:
            want[-1] = self.modes[-1]
        got = [x.shape[a] if -x.ndim <= a < x.ndim else None for a in self.dim]
        if got != want:
            raise ValueError(
                f"{where}{d}: input of shape {tuple(x.shape)} has lengths {got} on dim "
                f"{list(self.dim)}, expected {want} (shape={list(self.shape)}, "
                f"modes={list(self.modes)})"
            )

    def construct(self, x):
        x_re, x_im = x
        cdt = self.compute_dtype
        work = core.float64 if cdt == core.float64 else core.float32
        z = ops.complex(ops.astype(x_re, work), ops.astype(x_im, work))
        self._check(z)
        *lead_axes, last = self.dim
        if not self.inv:
            z = ops.fft.fft(z, axis=last, norm="ortho")
            z = ops.slice_axis(z, last, 0, self.modes[-1])  # [..., m_last]
            for axis, n, m in zip(lead_axes, self.shape, self.modes):
                z = ops.fft.fft(z, axis=axis, norm="ortho")
                z = _keep_both_ends(z, axis, n, m)  # zeros between the kept modes
        else:
            for axis, n, m in zip(lead_axes, self.shape, self.modes):
                z = _keep_both_ends(z, axis, n, m)
                z = ops.fft.ifft(z, axis=axis, norm="ortho")
            n, m = self.shape[-1], self.modes[-1]
            # the half spectrum of a real signal: X_0 once, X_k (0 < k < n/2) twice, Nyquist once
            weights = [1.0] + [2.0] * (m - 1)
            if m == n // 2 + 1 and n % 2 == 0:
                weights[-1] = 1.0
            shape = [1] * z.ndim
            shape[last] = m
            z = z * ops.reshape(core.tensor(weights, dtype=work), tuple(shape))
            # the inverse DFT of the m given frequencies zero-padded to n, times n / sqrt(n)
            z = ops.fft.ifft(z, n=n, axis=last, norm="ortho")
        y_re, y_im = ops.real(z), ops.imag(z)
        if y_re.dtype != cdt:
            y_re, y_im = ops.astype(y_re, cdt), ops.astype(y_im, cdt)
        return y_re, y_im


def _keep_both_ends(z, axis, n, m):
    """``z`` with the entries ``m..n-m-1`` along ``axis`` set to zero."""
    if n == 2 * m:
        return z
    lo = ops.slice_axis(z, axis, 0, m)
    hi = ops.slice_axis(z, axis, n - m, n)
    zshape = list(z.shape)
    zshape[axis] = n - 2 * m
    return ops.concat((lo, ops.zeros(tuple(zshape), dtype=z.dtype), hi), axis=axis)


def _checked(shape, modes, dim, d, where):
    """MindFlow's argument checks of dft{d}/idft{d}; ``modes`` as a tuple."""
    check_param_type(shape, f"{where}: shape", tuple)
    if d == 1:
        check_param_type(modes, f"{where}: modes", int, bool)
        modes = (modes,)
    else:
        check_param_type(modes, f"{where}: modes", tuple)
    dim = tuple(dim)
    for value, name in ((shape, "shape"), (modes, "modes"), (dim, "dim")):
        if len(value) != d:
            raise ValueError(f"{where}: {name} must have length {d}, got {value}")
    if any(n % 2 for n in shape):
        raise ValueError(f"{where}: shape must be even along every axis, got {shape}")
    for k, (n, m) in enumerate(zip(shape, modes)):
        limit = n // 2 + 1 if k == d - 1 else n // 2
        if not 1 <= m <= limit:
            raise ValueError(
                f"{where}: modes[{k}] must be in [1, {limit}] for shape[{k}] = {n}, got {m}"
            )
    return tuple(shape), modes, dim


def dft1(shape, modes, dim=(-1,), compute_dtype=core.float32):
    """1D truncated DFT cell (MindFlow's ``dft1``, torch ``rfft`` with ``norm='ortho'``)."""
    shape, modes, dim = _checked(shape, modes, dim, 1, "dft1")
    return DFTn(shape, modes, dim, False, compute_dtype)


def idft1(shape, modes, dim=(-1,), compute_dtype=core.float32):
    """1D inverse (MindFlow's ``idft1``; the real part is torch ``irfft``, ``norm='ortho'``)."""
    shape, modes, dim = _checked(shape, modes, dim, 1, "idft1")
    return DFTn(shape, modes, dim, True, compute_dtype)


def dft2(shape, modes, dim=(-2, -1), compute_dtype=core.float32):
    """2D truncated DFT cell (MindFlow's ``dft2``, torch ``rfft2`` with ``norm='ortho'``)."""
    shape, modes, dim = _checked(shape, modes, dim, 2, "dft2")
    return DFTn(shape, modes, dim, False, compute_dtype)


def idft2(shape, modes, dim=(-2, -1), compute_dtype=core.float32):
    """2D inverse (MindFlow's ``idft2``; the real part is torch ``irfft2``, ``norm='ortho'``)."""
    shape, modes, dim = _checked(shape, modes, dim, 2, "idft2")
    return DFTn(shape, modes, dim, True, compute_dtype)


def dft3(shape, modes, dim=(-3, -2, -1), compute_dtype=core.float32):
    """3D truncated DFT cell (MindFlow's ``dft3``, torch ``rfftn`` with ``norm='ortho'``)."""
    shape, modes, dim = _checked(shape, modes, dim, 3, "dft3")
    return DFTn(shape, modes, dim, False, compute_dtype)


def idft3(shape, modes, dim=(-3, -2, -1), compute_dtype=core.float32):
    """3D inverse (MindFlow's ``idft3``; the real part is torch ``irfftn``, ``norm='ortho'``)."""
    shape, modes, dim = _checked(shape, modes, dim, 3, "idft3")
    return DFTn(shape, modes, dim, True, compute_dtype)
