"""FFT primitives: one complex-to-complex ``fft`` and the real pair ``rfft`` / ``irfft``.

All three transform over ``axes`` (a tuple of distinct non-negative ints) at the sizes the
input already has; ``core.ops.fft`` pads or truncates to numpy's ``n``/``s`` beforehand. The
real pair also works on a *truncated* half spectrum along the last axis, as spectral layers
keep only their low modes (the Fourier neural operator): ``rfft(..., bins=m)`` returns the
first ``m`` of the ``N//2+1`` bins, and ``irfft`` reads ``m <= n//2+1`` bins as the spectrum
with the missing high bins zero, so neither the zero-padded spectrum nor its cotangent is
ever built.
``norm`` is numpy's: "backward" (the inverse carries 1/N), "ortho" (1/sqrt(N) both ways) or
"forward" (the forward transform carries 1/N). Outputs keep the input's precision (complex64
for float32/complex64, complex128 for float64/complex128).

The reference implementations call the array namespace's ``fft`` module; the CPU runs them
with scipy.fft (multi-threaded, single precision kept; ``core/backend/cpu_impls/arrays.py``).
The derivative and batching rules are in ``core/rules/fft.py``.
"""

from .. import dtypes as _dt
from ..primitive import ShapedArray
from ._define import defprim

NORMS = ("backward", "ortho", "forward")


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


def _fft_impl(xp, x, axes, inverse, norm):
    out = (xp.fft.ifftn if inverse else xp.fft.fftn)(x, axes=axes, norm=norm)
    return out if out.dtype == x.dtype else out.astype(x.dtype)


fft = defprim("fft", _fft_impl, _fft_aval)


# ---- real-to-complex -----------------------------------------------------------------------------
def _rfft_aval(x, axes, norm, bins=None):
    _check_axes("rfft", x.shape, axes, norm)
    if not _dt.is_floating(x.dtype):
        raise TypeError(
            f"rfft: input must be real floating, got {x.dtype} (shape {tuple(x.shape)})"
        )
    shape = list(x.shape)
    full = shape[axes[-1]] // 2 + 1
    if bins is not None and not 1 <= bins <= full:
        raise ValueError(
            f"rfft: bins={bins} must be in [1, {full}] for {shape[axes[-1]]} points on axis "
            f"{axes[-1]} of shape {tuple(x.shape)}"
        )
    shape[axes[-1]] = full if bins is None else bins
    return ShapedArray(shape, _dt.complex_dtype(x.dtype))


def _rfft_impl(xp, x, axes, norm, bins=None):
    out = xp.fft.rfftn(x, axes=axes, norm=norm)
    if bins is not None and bins < out.shape[axes[-1]]:
        index = [slice(None)] * out.ndim
        index[axes[-1]] = slice(0, bins)
        out = xp.ascontiguousarray(out[tuple(index)])
    want = _dt.complex_dtype(x.dtype)
    return out if out.dtype == want else out.astype(want)


rfft = defprim("rfft", _rfft_impl, _rfft_aval)


# ---- complex-to-real -----------------------------------------------------------------------------
def _irfft_aval(x, axes, n, norm):
    _check_axes("irfft", x.shape, axes, norm)
    if not _dt.is_complex(x.dtype):
        raise TypeError(f"irfft: input must be complex, got {x.dtype} (shape {tuple(x.shape)})")
    if n < 1 or not 1 <= x.shape[axes[-1]] <= n // 2 + 1:
        raise ValueError(
            f"irfft: output length {n} needs 1 to {n // 2 + 1} bins on axis {axes[-1]}, got shape "
            f"{tuple(x.shape)}"
        )
    shape = list(x.shape)
    shape[axes[-1]] = n
    return ShapedArray(shape, _dt.real_dtype(x.dtype))


def _irfft_impl(xp, x, axes, n, norm):
    s = [x.shape[a] for a in axes[:-1]] + [n]
    out = xp.fft.irfftn(x, s=s, axes=axes, norm=norm)  # fewer bins: zero-padded to n//2+1
    want = _dt.real_dtype(x.dtype)
    return out if out.dtype == want else out.astype(want)


irfft = defprim("irfft", _irfft_impl, _irfft_aval)
