"""Spectral decompositions and matrix functions: ``eigh``, ``eig``, ``svd``, ``pinv``, ``expm``,
``sqrtm``. Each is one LAPACK/scipy call, so each is a primitive (speed and stability).

A primitive has one output, so a decomposition packs its factors into one array along the
second-to-last axis (``core.ops`` slices them apart; the ``split_*`` helpers below):

    eigh  [..., n, n] -> [..., 1 + n, n]          row 0: eigenvalues w (ascending), rows 1..: V
    eig   [..., n, n] -> [..., 1 + n, n] complex  row 0: eigenvalues w, rows 1..: V
    svd   [..., m, n] -> [..., m + 1 + n, p]      rows :m: U, row m: s, rows m+1..: V = Vh^H

(eigenvalues and singular values are stored in the factors' dtype: complex for complex input).
The derivative rules need all factors at once, which packing gives them for free.

Derivatives follow JAX's complex convention (see ``linalg.py``). The VJPs of ``svd``, ``eig``
and ``pinv`` are the transposes of their JVPs, taken by differentiating the (linear) JVP
with respect to its tangent: one formula per op, correct for complex inputs (whose JVPs
conjugate), and differentiable again because the JVP is written with core ops.
"""

import numpy as np

from .. import dtypes as _dt
from ..rules._define import defjvp, defvjp
from ..primitive import ShapedArray
from ..vmap import batch_rules, to_front
from ._define import defprim
from .linalg import _check_square, _linalg_call, inv, matmul


# ---- helpers written with core ops (so that every rule differentiates again) -------------------
def _ops():
    from .. import ops

    return ops


def _mT(x):
    return _ops().swapaxes(x, -1, -2)


def _mH(x):
    return _ops().conj(_mT(x)) if _dt.is_complex(x.dtype) else _mT(x)


def _eye(n, dtype):
    return _ops().eye(n, dtype=dtype)


def _diag(x):
    """[..., n, n] -> [..., n]: the main diagonal."""
    n = x.shape[-1]
    return _ops().sum(x * _eye(n, _dt.real_dtype(x.dtype)), axis=-1)


def _diag_embed(d):
    """[..., n] -> [..., n, n]: a diagonal matrix."""
    n = d.shape[-1]
    return _ops().expand_dims(d, -2) * _eye(n, _dt.real_dtype(d.dtype))


def _pack(*blocks):
    return _ops().concat(list(blocks), axis=-2)


def _inv_gaps(w):
    """F[..., i, j] = 1 / (w_j - w_i) for i != j, from eigenvalues w [..., n] (real or complex).

    F is 0 on the diagonal and wherever |w_j - w_i| is within rounding of 0 (repeated
    eigenvalues): there the derivative of the eigenvectors does not exist, but for a loss that
    does not depend on the choice of basis inside an eigenspace that term cancels exactly
    (the cotangent's block is symmetric, F's is antisymmetric), so dropping it is exact and
    keeps every derivative finite.
    """
    ops = _ops()
    n = w.shape[-1]
    d = ops.expand_dims(w, -2) - ops.expand_dims(w, -1)  # d[i, j] = w_j - w_i
    eps = float(np.finfo(_dt.real_dtype(w.dtype)).eps)
    # the mask is a constant: no derivative flows through abs (its slope at 0 is 0/0)
    w0, d0 = ops.stop_gradient(w), ops.stop_gradient(d)
    scale = ops.expand_dims(ops.amax(ops.abs(w0), axis=-1, keepdims=True), -1)
    close = ops.less_equal(ops.abs(d0), scale * (16 * max(n, 1) * eps) + np.finfo(np.float64).tiny)
    return ops.where(close, 0.0, 1.0 / ops.where(close, 1.0, d))


def _safe_reciprocal(s):
    """1 / s, with 0 where s == 0 (a zero singular value adds nothing)."""
    ops = _ops()
    zero = ops.equal(s, 0)
    return ops.where(zero, 0.0, 1.0 / ops.where(zero, 1.0, s))


def _transposed_jvp(jvp_of_tangent, a, g):
    """The cotangent of ``a`` for output cotangent ``g``: the transpose of the linear map
    ``t -> jvp_of_tangent(t)``, as the pullback of that map (at t = 0; any point would do)."""
    from ..autodiff.api import vjp

    _, pull = vjp(jvp_of_tangent, _ops().zeros_like(a))
    return pull(g)[0]


def _as(x, dtype):
    return x if x.dtype == dtype else _ops().astype(x, dtype)


# ---- eigh: Hermitian eigendecomposition --------------------------------------------------------
def _eigh_impl(xp, a):
    w, v = _linalg_call("eigh", xp.linalg.eigh, a)
    return xp.concatenate([w[..., None, :].astype(v.dtype), v], axis=-2)


def _eigh_aval(a):
    _check_square("eigh", a.shape)
    n = a.shape[-1]
    return ShapedArray(a.shape[:-2] + (n + 1, n), a.dtype)


# The input is assumed exactly Hermitian (``core.ops.eigh`` builds it from one triangle); the
# rules hold for Hermitian tangents, which is all such inputs have.
eigh = defprim("eigh", _eigh_impl, _eigh_aval)


def split_eigh(packed):
    """[..., 1 + n, n] -> (w [..., n] real, V [..., n, n])."""
    w = packed[..., 0, :]
    return (_ops().real(w) if _dt.is_complex(w.dtype) else w), packed[..., 1:, :]


def _eigh_jvp(ts, out, a):
    # dA Hermitian: dw = diag(V^H dA V), dV = V (F o V^H dA V)
    w, v = split_eigh(out)
    vdv = matmul(matmul(_mH(v), ts[0]), v)
    dw = _ops().expand_dims(_diag(vdv), -2)
    return _pack(dw, matmul(v, _inv_gaps(w) * vdv))


def _eigh_vjp(g, out, a):
    # the transpose of the JVP: ga = conj(V) (diag(gw) + F o V^T gV) V^T
    w, v = split_eigh(out)
    gw, gv = g[..., 0, :], g[..., 1:, :]
    core = _diag_embed(gw) + _inv_gaps(w) * matmul(_mT(v), gv)
    return (matmul(matmul(_ops().conj(v), core), _mT(v)),)


defvjp(eigh, _eigh_vjp)
defjvp(eigh, _eigh_jvp)


# ---- eig: general (complex) eigendecomposition --------------------------------------------------
def _eig_impl(xp, a):
    w, v = _linalg_call("eig", xp.linalg.eig, a)
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


def split_eig(packed):
    """[..., 1 + n, n] -> (w [..., n], V [..., n, n]), both complex."""
    return packed[..., 0, :], packed[..., 1:, :]


def _eig_tangent(t, out):
    # dw = diag(V^-1 dA V), dV = V (F o V^-1 dA V), then projected so |v_j| stays 1
    ops = _ops()
    w, v = split_eig(out)
    vdv = matmul(inv(v), matmul(_as(t, v.dtype), v))
    dv = matmul(v, _inv_gaps(w) * vdv)
    dv = dv - v * ops.expand_dims(ops.real(ops.sum(ops.conj(v) * dv, axis=-2)), -2)
    return _pack(ops.expand_dims(_diag(vdv), -2), dv)


defvjp(eig, lambda g, out, a: (_transposed_jvp(lambda t: _eig_tangent(t, out), a, g),))
defjvp(eig, lambda ts, out, a: _eig_tangent(ts[0], out))


# ---- svd ----------------------------------------------------------------------------------------
def _svd_width(m, n, full_matrices):
    return max(m, n) if full_matrices else min(m, n)


def _svd_impl(xp, a, full_matrices):
    u, s, vh = _linalg_call("svd", lambda x: xp.linalg.svd(x, full_matrices=full_matrices), a)
    m, n = a.shape[-2:]
    p = _svd_width(m, n, full_matrices)
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
    return ShapedArray(a.shape[:-2] + (m + 1 + n, _svd_width(m, n, full_matrices)), a.dtype)


svd = defprim("svd", _svd_impl, _svd_aval)


def split_svd(packed, m, full_matrices=False):
    """[..., m + 1 + n, p] -> (U [..., m, m or k], s [..., k] real, V [..., n, n or k])."""
    n = packed.shape[-2] - m - 1
    k = min(m, n)
    u = packed[..., :m, : (m if full_matrices else k)]
    s = packed[..., m, :k]
    v = packed[..., m + 1 :, : (n if full_matrices else k)]
    return u, (_ops().real(s) if _dt.is_complex(s.dtype) else s), v


def _svd_tangent(t, out, m, full_matrices):
    """JVP of the reduced SVD (as in JAX's ``svd_jvp_rule``); dA [..., m, n]."""
    ops = _ops()
    n = t.shape[-1]
    if full_matrices and m != n:
        raise NotImplementedError(
            f"svd: no derivative with full_matrices=True for a non-square matrix ({m}x{n}): "
            "the extra columns of U or V are not unique; use full_matrices=False"
        )
    u, s, v = split_svd(out, m)
    cplx = _dt.is_complex(u.dtype)
    ds = matmul(matmul(_mH(u), t), v)  # U^H dA V, [..., k, k]
    f = _inv_gaps(s * s)  # 1 / (s_j^2 - s_i^2)
    s_row = ops.expand_dims(s, -2)  # s_j along columns
    s_col = ops.expand_dims(s, -1)  # s_i along rows
    dss, sds = ds * s_row, s_col * ds
    s_inv = _safe_reciprocal(s)
    du_core = f * (dss + _mH(dss))
    if cplx:  # the phase of each singular pair moves along the imaginary part of diag(dS)
        du_core = du_core + 0.5 * (ds - _mH(ds)) * _diag_embed(s_inv)
    du = matmul(u, du_core)
    dv = matmul(v, f * (sds + _mH(sds)))
    s_inv_row = ops.expand_dims(s_inv, -2)
    if m > n:  # the part of dA V outside span(U)
        dav = matmul(t, v)
        du = du + (dav - matmul(u, matmul(_mH(u), dav))) * s_inv_row
    if n > m:
        dahu = matmul(_mH(t), u)
        dv = dv + (dahu - matmul(v, matmul(_mH(v), dahu))) * s_inv_row
    dsv = _diag(ds)
    dsv = _as(ops.real(dsv), ds.dtype) if cplx else dsv
    return _pack(du, ops.expand_dims(dsv, -2), dv)


def _svd_jvp(ts, out, a, full_matrices):
    return _svd_tangent(ts[0], out, a.shape[-2], full_matrices)


def _svd_vjp(g, out, a, full_matrices):
    m = a.shape[-2]
    return (_transposed_jvp(lambda t: _svd_tangent(t, out, m, full_matrices), a, g),)


defvjp(svd, _svd_vjp)
defjvp(svd, _svd_jvp)


# ---- qr -----------------------------------------------------------------------------------------
def _qr_layout(m, n, full_matrices):
    """(columns of Q = rows of R, width of the packed array) for a [m, n] input."""
    q_cols = m if full_matrices else min(m, n)
    return q_cols, max(q_cols, n)


def _qr_impl(xp, a, full_matrices):
    mode = "complete" if full_matrices else "reduced"
    q, r = _linalg_call("qr", lambda x: xp.linalg.qr(x, mode=mode), a)
    m, n = a.shape[-2:]
    q_cols, width = _qr_layout(m, n, full_matrices)
    out = xp.zeros(a.shape[:-2] + (m + q_cols, width), dtype=a.dtype)
    out[..., :m, :q_cols] = q
    out[..., m:, :n] = r
    return out


def _qr_aval(a, full_matrices):
    if len(a.shape) < 2:
        raise ValueError(f"qr: expected matrices [..., m, n], got shape {tuple(a.shape)}")
    m, n = a.shape[-2:]
    q_cols, width = _qr_layout(m, n, full_matrices)
    return ShapedArray(a.shape[:-2] + (m + q_cols, width), a.dtype)


# packed [..., m + k, max(k, n)]: rows :m hold Q [m, k], rows m: hold R [k, n]
qr = defprim("qr", _qr_impl, _qr_aval)


def split_qr(packed, m, n, full_matrices=False):
    """[..., m + k, w] -> (Q [..., m, k], R [..., k, n]); k = m when ``full_matrices``."""
    q_cols, _ = _qr_layout(m, n, full_matrices)
    return packed[..., :m, :q_cols], packed[..., m:, :n]


def _qr_square_tangent(dx, q, r):
    """dQ, dR of x = QR with x [..., m, n], m >= n, Q [m, n] (JAX's ``qr_jvp_rule``)."""
    ops = _ops()
    from .linalg import triangular_solve

    n = r.shape[-1]
    dx_rinv = _mT(triangular_solve(_mT(r), _mT(dx), lower=True))  # dx R^-1
    qt_dx_rinv = matmul(_mH(q), dx_rinv)
    low = ops.tril(qt_dx_rinv, -1)
    do = low - _mH(low)  # skew-Hermitian
    if _dt.is_complex(q.dtype):  # the free phase of each column: imaginary diagonal
        do = do + _eye(n, _dt.real_dtype(q.dtype)) * (
            qt_dx_rinv - _as(ops.real(qt_dx_rinv), q.dtype)
        )
    return matmul(q, do - qt_dx_rinv) + dx_rinv, matmul(qt_dx_rinv - do, r)


def _qr_tangent(t, out, m, n, full_matrices):
    ops = _ops()
    if full_matrices and m > n:
        raise NotImplementedError(
            f"qr: no derivative with mode='complete' for a tall matrix ({m}x{n}): the extra "
            "columns of Q are not unique; use mode='reduced'"
        )
    q, r = split_qr(out, m, n, full_matrices)
    if m >= n:
        dq, dr = _qr_square_tangent(t, q, r)
        return _qr_pack(dq, dr, m, n, full_matrices)
    # wide: x = [x1 x2] with x1 [m, m] square; Q R1 = x1 and R2 = Q^H x2
    dq, dr1 = _qr_square_tangent(t[..., :m], q, r[..., :m])
    x2 = matmul(q, r[..., m:])
    dr2 = matmul(_mH(dq), x2) + matmul(_mH(q), t[..., m:])
    return _qr_pack(dq, ops.concat([dr1, dr2], axis=-1), m, n, full_matrices)


def _qr_pack(dq, dr, m, n, full_matrices):
    ops = _ops()
    q_cols, width = _qr_layout(m, n, full_matrices)
    if width > q_cols:
        dq = ops.pad(dq, [(0, 0)] * (dq.ndim - 1) + [(0, width - q_cols)])
    return _pack(dq, dr)


def _qr_jvp(ts, out, a, full_matrices):
    m, n = a.shape[-2:]
    return _qr_tangent(ts[0], out, m, n, full_matrices)


def _qr_vjp(g, out, a, full_matrices):
    m, n = a.shape[-2:]
    return (_transposed_jvp(lambda t: _qr_tangent(t, out, m, n, full_matrices), a, g),)


defvjp(qr, _qr_vjp)
defjvp(qr, _qr_jvp)


# ---- pinv ---------------------------------------------------------------------------------------
def _pinv_impl(xp, a, rcond):
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        return xp.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), dtype=a.dtype)
    kw = {} if rcond is None else {"rcond": rcond}
    return _linalg_call("pinv", lambda x: xp.linalg.pinv(x, **kw), a).astype(a.dtype, copy=False)


def _pinv_aval(a, rcond):
    if len(a.shape) < 2:
        raise ValueError(f"pinv: expected matrices [..., m, n], got shape {tuple(a.shape)}")
    return ShapedArray(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)


# A primitive rather than a composite of svd: its closed-form derivative (Golub & Pereyra
# 1973) holds wherever the rank is locally constant, rank-deficient matrices included, where
# the svd's derivative has poles (repeated zero singular values).
pinv = defprim("pinv", _pinv_impl, _pinv_aval)


def _pinv_tangent(t, x, a):
    # dX = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X,   X = pinv(A)
    m, n = a.shape[-2:]
    tH, xH = _mH(t), _mH(x)
    left = _eye(m, a.dtype) - matmul(a, x)  # [m, m]
    right = _eye(n, a.dtype) - matmul(x, a)  # [n, n]
    return (
        -matmul(matmul(x, t), x)
        + matmul(matmul(x, matmul(xH, tH)), left)
        + matmul(right, matmul(tH, matmul(xH, x)))
    )


defvjp(pinv, lambda g, out, a, rcond: (_transposed_jvp(lambda t: _pinv_tangent(t, out, a), a, g),))
defjvp(pinv, lambda ts, out, a, rcond: _pinv_tangent(ts[0], out, a))


# ---- matrix functions ---------------------------------------------------------------------------
def _scipy_linalg(xp):
    if xp is np:
        import scipy.linalg

        return scipy.linalg
    import cupyx.scipy.linalg

    return cupyx.scipy.linalg


def _square_same(name):
    def rule(a):
        _check_square(name, a.shape)
        return ShapedArray(a.shape, a.dtype)

    return rule


def _expm_impl(xp, a):
    return _scipy_linalg(xp).expm(a).astype(a.dtype, copy=False)


expm = defprim("expm", _expm_impl, _square_same("expm"))


def _block_upper(a, e, c):
    """[[a, e], [0, c]] from [..., n, n] blocks -> [..., 2n, 2n]."""
    ops = _ops()
    top = ops.concat([a, e], axis=-1)
    bottom = ops.concat([ops.zeros_like(c), c], axis=-1)
    return ops.concat([top, bottom], axis=-2)


def _frechet_expm(a, e):
    """The Fréchet derivative L(a, e) of expm at a along e: the upper-right block of
    expm([[a, e], [0, a]]) (Higham, Functions of Matrices, Theorem 3.6)."""
    n = a.shape[-1]
    return expm(_block_upper(a, e, a))[..., :n, n:]


# d expm(A)[E] = L(A, E); its transpose (bilinear pairing) is L(A^T, G)
defvjp(expm, lambda g, out, a: (_frechet_expm(_mT(a), g),))
defjvp(expm, lambda ts, out, a: _frechet_expm(a, ts[0]))


def _sqrtm_impl(xp, a):
    sla = _scipy_linalg(xp)
    if a.ndim == 2:
        x = _linalg_call("sqrtm", sla.sqrtm, a)
    else:
        x = xp.stack([_linalg_call("sqrtm", sla.sqrtm, m) for m in a.reshape(-1, *a.shape[-2:])])
        x = x.reshape(a.shape)
    if not _dt.is_complex(a.dtype) and xp.iscomplexobj(x):
        if xp.any(xp.abs(x.imag) > 1e3 * np.finfo(a.dtype).eps * max(1.0, float(xp.abs(x).max()))):
            raise ValueError(
                f"sqrtm: this real matrix of shape {tuple(a.shape)} has no real square root "
                "(a negative real eigenvalue); pass it as a complex matrix"
            )
        x = x.real
    return x.astype(a.dtype, copy=False)


sqrtm = defprim("sqrtm", _sqrtm_impl, _square_same("sqrtm"))


# X = sqrtm(A): X dX + dX X = dA; the transpose solves X^T G_A + G_A X^T = G
# (a Sylvester equation, ``core.ops.solve_sylvester``: one Kronecker-form solve)
defvjp(sqrtm, lambda g, out, a: (_ops().solve_sylvester(_mT(out), _mT(out), g),))
defjvp(sqrtm, lambda ts, out, a: _ops().solve_sylvester(out, out, ts[0]))


# ---- batching: the batch axis goes first; every impl broadcasts leading axes --------------------
def _front_rule(prim):
    def rule(args, bdims, **params):
        return prim(to_front(args[0], bdims[0]), **params), 0

    return rule


for _p in (eigh, eig, svd, qr, pinv, expm, sqrtm):
    batch_rules[_p] = _front_rule(_p)
