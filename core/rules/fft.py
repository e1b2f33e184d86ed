"""Derivative and batching rules of the FFT primitives (``core/prims/fft.py``).

All three are linear; JAX's convention holds (linear maps transpose without conjugation):

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
Truncated spectra (``rfft(..., bins=m)``, ``irfft`` of ``m < n//2+1`` bins) transpose into each
other: the weights are those of the first ``m`` bins, and no padded spectrum is built.
"""

import numpy as np

from .. import dtypes as _dt
from ..ops import creation as ops_creation
from ..ops import elementwise as ops_elementwise
from ..prims.fft import fft, irfft, rfft
from ..vmap import axis_rule, batch_rules
from ._define import def_linear_unary

_DUAL = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _bin_weights(n, axis, ndim, dtype, doubled, bins=None):
    """[1, 1, ..., m, 1, ...] weights along ``axis`` of the first m (``bins``, default n//2+1)
    bins of the half spectrum: 1 on the bins that appear once in the full spectrum (DC, and
    Nyquist for even n), 2 (``doubled``) or 1/2 on the others."""
    full = n // 2 + 1
    w = np.full(full, 2.0 if doubled else 0.5)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    m = full if bins is None else bins
    shape = [1] * ndim
    shape[axis] = m
    return ops_creation._const(w[:m].reshape(shape).astype(_dt.real_dtype(dtype)))


def _rfft_t(g, out, x, axes, norm, bins=None):
    n = x.shape[axes[-1]]
    w = _bin_weights(n, axes[-1], g.ndim, g.dtype, doubled=False, bins=g.shape[axes[-1]])
    return irfft(ops_elementwise.conj(g) * w, axes=axes, n=n, norm=_DUAL[norm])


def _irfft_t(g, out, x, axes, n, norm):
    m = x.shape[axes[-1]]
    kw = {} if m == n // 2 + 1 else {"bins": m}
    spec = rfft(g, axes=axes, norm=_DUAL[norm], **kw)
    w = _bin_weights(n, axes[-1], g.ndim, spec.dtype, doubled=True, bins=m)
    return ops_elementwise.conj(spec) * w


def_linear_unary(
    fft, lambda g, out, x, axes, inverse, norm: fft(g, axes=axes, inverse=inverse, norm=norm)
)
def_linear_unary(rfft, _rfft_t)
def_linear_unary(irfft, _irfft_t)

for _p in (fft, rfft, irfft):
    batch_rules[_p] = axis_rule(_p, axis_names=("axes",))
