"""Spectral decompositions and matrix functions: ``eigh``, ``eig``, ``svd``, ``qr``, ``pinv``,
``expm``, ``sqrtm``. Each is one LAPACK/scipy call, so each is a primitive (speed and stability).

A primitive has one output, so a decomposition packs its factors into one array along the
second-to-last axis (``core.ops.decomp`` slices them apart with its ``split_*`` helpers):

    eigh  [..., n, n] -> [..., 1 + n, n]          row 0: eigenvalues w (ascending), rows 1..: V
    eig   [..., n, n] -> [..., 1 + n, n] complex  row 0: eigenvalues w, rows 1..: V
    svd   [..., m, n] -> [..., m + 1 + n, p]      rows :m: U, row m: s, rows m+1..: V = Vh^H
    qr    [..., m, n] -> [..., m + k, max(k, n)]  rows :m: Q [m, k], rows m..: R [k, n]

(eigenvalues and singular values are stored in the factors' dtype: complex for complex input).
The derivative rules need all factors at once, which packing gives them for free; they are in
``core/rules/decomp.py``.
"""

import numpy as np

from .. import dtypes as _dt
from ..backend.linalg import lapack_call, scipy_linalg
from ..primitive import ShapedArray
from ._define import defprim
from .linalg import _check_square, _square_aval


# ---- eigh: Hermitian eigendecomposition --------------------------------------------------------
def _eigh_impl(xp, a):
    w, v = lapack_call("eigh", xp.linalg.eigh, a)
    return xp.concatenate([w[..., None, :].astype(v.dtype), v], axis=-2)


def _eigh_aval(a):
    _check_square("eigh", a.shape)
    n = a.shape[-1]
    return ShapedArray(a.shape[:-2] + (n + 1, n), a.dtype)


# The input is assumed exactly Hermitian (``core.ops.eigh`` builds it from one triangle); the
# rules hold for Hermitian tangents, which is all such inputs have.
eigh = defprim("eigh", _eigh_impl, _eigh_aval)


# ---- eig: general (complex) eigendecomposition --------------------------------------------------
def _eig_impl(xp, a):
    w, v = lapack_call("eig", xp.linalg.eig, a)
    cdt = _dt.complex_dtype(a.dtype)
    return xp.concatenate([w[..., None, :], v], axis=-2).astype(cdt, copy=False)


def _eig_aval(a):
    _check_square("eig", a.shape)
    n = a.shape[-1]
    return ShapedArray(a.shape[:-2] + (n + 1, n), _dt.complex_dtype(a.dtype))


# Eigenvectors are normalized to unit length (numpy's convention); their phase is arbitrary,
# so only phase-invariant functions of V (|V|, V diag(w) V^-1, ...) have derivatives that
# finite differences can check.
eig = defprim("eig", _eig_impl, _eig_aval)


# ---- svd ----------------------------------------------------------------------------------------
def svd_width(m, n, full_matrices):
    return max(m, n) if full_matrices else min(m, n)


def _svd_impl(xp, a, full_matrices):
    u, s, vh = lapack_call("svd", lambda x: xp.linalg.svd(x, full_matrices=full_matrices), a)
    m, n = a.shape[-2:]
    p = svd_width(m, n, full_matrices)
    out = xp.zeros(a.shape[:-2] + (m + 1 + n, p), dtype=a.dtype)
    # full U is [m, m] and full V [n, n]: the narrower one is padded with zero columns
    out[..., :m, : u.shape[-1]] = u
    out[..., m, : s.shape[-1]] = s
    out[..., m + 1 :, : vh.shape[-2]] = xp.conj(xp.swapaxes(vh, -1, -2))
    return out


def _svd_aval(a, full_matrices):
    if len(a.shape) < 2:
        raise ValueError(f"svd: expected matrices [..., m, n], got shape {tuple(a.shape)}")
    m, n = a.shape[-2:]
    return ShapedArray(a.shape[:-2] + (m + 1 + n, svd_width(m, n, full_matrices)), a.dtype)


svd = defprim("svd", _svd_impl, _svd_aval)


# ---- qr -----------------------------------------------------------------------------------------
def qr_layout(m, n, full_matrices):
    """(columns of Q = rows of R, width of the packed array) for a [m, n] input."""
    q_cols = m if full_matrices else min(m, n)
    return q_cols, max(q_cols, n)


def _qr_impl(xp, a, full_matrices):
    mode = "complete" if full_matrices else "reduced"
    q, r = lapack_call("qr", lambda x: xp.linalg.qr(x, mode=mode), a)
    m, n = a.shape[-2:]
    q_cols, width = qr_layout(m, n, full_matrices)
    out = xp.zeros(a.shape[:-2] + (m + q_cols, width), dtype=a.dtype)
    out[..., :m, :q_cols] = q
    out[..., m:, :n] = r
    return out


def _qr_aval(a, full_matrices):
    if len(a.shape) < 2:
        raise ValueError(f"qr: expected matrices [..., m, n], got shape {tuple(a.shape)}")
    m, n = a.shape[-2:]
    q_cols, width = qr_layout(m, n, full_matrices)
    return ShapedArray(a.shape[:-2] + (m + q_cols, width), a.dtype)


# packed [..., m + k, max(k, n)]: rows :m hold Q [m, k], rows m: hold R [k, n]
qr = defprim("qr", _qr_impl, _qr_aval)


# ---- pinv ---------------------------------------------------------------------------------------
def _pinv_impl(xp, a, rcond):
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        return xp.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), dtype=a.dtype)
    kw = {} if rcond is None else {"rcond": rcond}
    return lapack_call("pinv", lambda x: xp.linalg.pinv(x, **kw), a).astype(a.dtype, copy=False)


def _pinv_aval(a, rcond):
    if len(a.shape) < 2:
        raise ValueError(f"pinv: expected matrices [..., m, n], got shape {tuple(a.shape)}")
    return ShapedArray(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)


# A primitive rather than a composite of svd: its closed-form derivative (Golub & Pereyra
# 1973) holds wherever the rank is locally constant, rank-deficient matrices included, where
# the svd's derivative has poles (repeated zero singular values).
pinv = defprim("pinv", _pinv_impl, _pinv_aval)


# ---- matrix functions ---------------------------------------------------------------------------
def _expm_impl(xp, a):
    return scipy_linalg(xp).expm(a).astype(a.dtype, copy=False)


expm = defprim("expm", _expm_impl, _square_aval("expm"))


def _sqrtm_impl(xp, a):
    sla = scipy_linalg(xp)
    if a.ndim == 2:
        x = lapack_call("sqrtm", sla.sqrtm, a)
    else:
        x = xp.stack([lapack_call("sqrtm", sla.sqrtm, m) for m in a.reshape(-1, *a.shape[-2:])])
        x = x.reshape(a.shape)
    if not _dt.is_complex(a.dtype) and xp.iscomplexobj(x):
        if xp.any(xp.abs(x.imag) > 1e3 * np.finfo(a.dtype).eps * max(1.0, float(xp.abs(x).max()))):
            raise ValueError(
                f"sqrtm: this real matrix of shape {tuple(a.shape)} has no real square root "
                "(a negative real eigenvalue); pass it as a complex matrix"
            )
        x = x.real
    return x.astype(a.dtype, copy=False)


sqrtm = defprim("sqrtm", _sqrtm_impl, _square_aval("sqrtm"))
