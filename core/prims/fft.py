"""FFT primitives: one complex-to-complex ``fft`` and the real pair ``rfft`` / ``irfft``.

All three transform over ``axes`` (a tuple of distinct non-negative ints) at the sizes the
input already has; ``core.ops.fft`` pads or truncates to numpy's ``n``/``s`` beforehand.
``norm`` is numpy's: "backward" (the inverse carries 1/N), "ortho" (1/sqrt(N) both ways) or
"forward" (the forward transform carries 1/N). Outputs keep the input's precision (complex64
for float32/complex64, complex128 for float64/complex128).

Derivative rules (JAX's convention: linear maps transpose without conjugation):

- ``fft`` is linear with a symmetric matrix (the DFT matrix equals its transpose), so both its
  tangent and its cotangent map are the same transform.
- ``rfft`` is ``x -> first N//2+1 bins of fft(x)`` on real x. Its transpose is
  ``Re(F^T pad(g))`` which equals ``irfft(conj(g) * w)`` with ``w = 1`` on the DC (and, for
  even N, Nyquist) bin and 1/2 on the others (``irfft`` counts those bins twice, the
  transpose only once) and the dual norm.
- ``irfft`` reads the N//2+1 bins as a Hermitian spectrum. Its transpose is
  ``conj(rfft(g)) * m`` with ``m = 1/w`` (the bins ``irfft`` doubled), dual norm; the same
  form as ``jax._src.lax.fft._irfft_transpose``.

"Dual norm" swaps "backward" and "forward" (the scale factor moves to the other side).
"""

import numpy as np

from .. import dtypes as _dt
from ..rules._define import def_linear_unary
from ..backend.threads import get_num_threads
from ..primitive import ShapedArray
from ..vmap import axis_rule, batch_rules
from ._define import defprim

NORMS = ("backward", "ortho", "forward")
_DUAL = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _check_axes(name, shape, axes, norm):
    if norm not in NORMS:
        raise ValueError(f"{name}: norm must be one of {NORMS}, got {norm!r}")
    if not axes:
        raise ValueError(f"{name}: needs at least one axis (input shape {tuple(shape)})")
    if len(set(axes)) != len(axes) or any(not 0 <= a < len(shape) for a in axes):
        raise ValueError(
            f"{name}: axes {axes} are not distinct axes of a tensor of shape {tuple(shape)}"
        )
    if any(shape[a] < 1 for a in axes):
        raise ValueError(f"{name}: empty axis in {axes} of shape {tuple(shape)}")


# ---- complex-to-complex ------------------------------------------------------------------------
def _fft_aval(x, axes, inverse, norm):
    _check_axes("fft", x.shape, axes, norm)
    if not _dt.is_complex(x.dtype):
        raise TypeError(f"fft: input must be complex, got {x.dtype} (shape {tuple(x.shape)})")
    return ShapedArray(x.shape, x.dtype)


def _fft_module(xp):
    """scipy.fft on the CPU: it keeps float32/complex64 in single precision and runs 3-5x
    faster than numpy.fft there (pocketfft with SIMD and single-precision kernels)."""
    if xp is np:
        return _SCIPY_FFT
    return xp.fft


class _ScipyFFT:
    """scipy.fft's n-d transforms with ``workers=core.get_num_threads()``, read at each call
    (as BLAS follows the same setting for matmul; see core.backend.threads)."""

    def __getattr__(self, name):
        import scipy.fft

        def call(*args, **kwargs):
            return getattr(scipy.fft, name)(*args, workers=get_num_threads(), **kwargs)

        setattr(self, name, call)
        return call


_SCIPY_FFT = _ScipyFFT()


def _fft_impl(xp, x, axes, inverse, norm):
    fft = _fft_module(xp)
    out = (fft.ifftn if inverse else fft.fftn)(x, axes=axes, norm=norm)
    return out if out.dtype == x.dtype else out.astype(x.dtype)


fft = defprim("fft", _fft_impl, _fft_aval)
def_linear_unary(
    fft, lambda g, out, x, axes, inverse, norm: fft(g, axes=axes, inverse=inverse, norm=norm)
)


# ---- real-to-complex -----------------------------------------------------------------------------
def _rfft_aval(x, axes, norm):
    _check_axes("rfft", x.shape, axes, norm)
    if not _dt.is_floating(x.dtype):
        raise TypeError(
            f"rfft: input must be real floating, got {x.dtype} (shape {tuple(x.shape)})"
        )
    shape = list(x.shape)
    shape[axes[-1]] = shape[axes[-1]] // 2 + 1
    return ShapedArray(shape, _dt.complex_dtype(x.dtype))


def _rfft_impl(xp, x, axes, norm):
    out = _fft_module(xp).rfftn(x, axes=axes, norm=norm)
    want = _dt.complex_dtype(x.dtype)
    return out if out.dtype == want else out.astype(want)


rfft = defprim("rfft", _rfft_impl, _rfft_aval)


def _bin_weights(n, axis, ndim, dtype, doubled):
    """[1, 1, ..., m, 1, ...] weights along ``axis`` of the m = n//2+1 half spectrum: 1 on the
    bins that appear once in the full spectrum (DC, and Nyquist for even n), 2 (``doubled``) or
    1/2 on the others."""
    from ..ops.creation import _const

    m = n // 2 + 1
    w = np.full(m, 2.0 if doubled else 0.5)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    shape = [1] * ndim
    shape[axis] = m
    return _const(w.reshape(shape).astype(_dt.real_dtype(dtype)))


def _rfft_t(g, out, x, axes, norm):
    from .. import ops

    n = x.shape[axes[-1]]
    h = ops.conj(g) * _bin_weights(n, axes[-1], g.ndim, g.dtype, doubled=False)
    return irfft(h, axes=axes, n=n, norm=_DUAL[norm])


def_linear_unary(rfft, _rfft_t)


# ---- complex-to-real -----------------------------------------------------------------------------
def _irfft_aval(x, axes, n, norm):
    _check_axes("irfft", x.shape, axes, norm)
    if not _dt.is_complex(x.dtype):
        raise TypeError(f"irfft: input must be complex, got {x.dtype} (shape {tuple(x.shape)})")
    if n < 1 or x.shape[axes[-1]] != n // 2 + 1:
        raise ValueError(
            f"irfft: output length {n} needs {n // 2 + 1} bins on axis {axes[-1]}, got shape {tuple(x.shape)}"
        )
    shape = list(x.shape)
    shape[axes[-1]] = n
    return ShapedArray(shape, _dt.real_dtype(x.dtype))


def _irfft_impl(xp, x, axes, n, norm):
    s = [x.shape[a] for a in axes[:-1]] + [n]
    out = _fft_module(xp).irfftn(x, s=s, axes=axes, norm=norm)
    want = _dt.real_dtype(x.dtype)
    return out if out.dtype == want else out.astype(want)


irfft = defprim("irfft", _irfft_impl, _irfft_aval)


def _irfft_t(g, out, x, axes, n, norm):
    from .. import ops

    spec = rfft(g, axes=axes, norm=_DUAL[norm])
    return ops.conj(spec) * _bin_weights(n, axes[-1], g.ndim, spec.dtype, doubled=True)


def_linear_unary(irfft, _irfft_t)

for _p in (fft, rfft, irfft):
    batch_rules[_p] = axis_rule(_p, axis_names=("axes",))
