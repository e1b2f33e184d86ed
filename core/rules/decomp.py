"""Derivative and batching rules of the decompositions and matrix functions
(``core/prims/decomp.py``).

Derivatives follow JAX's complex convention (see ``linalg.py``). The VJPs of ``svd``, ``eig``,
``qr`` and ``pinv`` are the transposes of their JVPs (``transpose_linear``): one formula per
op, correct for complex inputs (whose JVPs conjugate), and differentiable again because the
JVP is written with core ops. Each rule reads all factors of the packed output at once
(``core.ops.decomp``'s ``split_*`` helpers).
"""

import numpy as np

from .. import dtypes as _dt
from ..ops import creation as ops_creation
from ..ops import elementwise as ops_elementwise
from ..ops import reduction as ops_reduction
from ..ops import shape as ops_shape
from ..ops._matrix import mH, mT
from ..ops.decomp import diag_embed, diagonal, split_eig, split_eigh, split_qr, split_svd
from ..ops.linalg import solve_sylvester
from ..prims.decomp import eig, eigh, expm, pinv, qr, qr_layout, sqrtm, svd
from ..prims.linalg import inv, matmul, triangular_solve
from ..vmap import axis_rule, batch_rules
from ._define import defjvp, defvjp, transpose_linear


# ---- helpers -----------------------------------------------------------------------------------
def _eye(n, dtype):
    return ops_creation.eye(n, dtype=dtype)


def _pack(*blocks):
    """The factors' tangents packed as the primitive packs the factors (along axis -2)."""
    return ops_shape.concat(list(blocks), axis=-2)


def _as(x, dtype):
    return x if x.dtype == dtype else ops_elementwise.astype(x, dtype)


def _inv_gaps(w):
    """F[..., i, j] = 1 / (w_j - w_i) for i != j, from eigenvalues w [..., n] (real or complex).

    F is 0 on the diagonal and wherever |w_j - w_i| is within rounding of 0 (repeated
    eigenvalues): there the derivative of the eigenvectors does not exist, but for a loss that
    does not depend on the choice of basis inside an eigenspace that term cancels exactly
    (the cotangent's block is symmetric, F's is antisymmetric), so dropping it is exact and
    keeps every derivative finite.
    """
    n = w.shape[-1]
    d = ops_shape.expand_dims(w, -2) - ops_shape.expand_dims(w, -1)  # d[i, j] = w_j - w_i
    eps = float(np.finfo(_dt.real_dtype(w.dtype)).eps)
    # the mask is a constant: no derivative flows through abs (its slope at 0 is 0/0)
    w0, d0 = ops_elementwise.stop_gradient(w), ops_elementwise.stop_gradient(d)
    top = ops_reduction.amax(ops_elementwise.abs(w0), axis=-1, keepdims=True)
    scale = ops_shape.expand_dims(top, -1)
    close = ops_elementwise.less_equal(
        ops_elementwise.abs(d0), scale * (16 * max(n, 1) * eps) + np.finfo(np.float64).tiny
    )
    return ops_elementwise.where(close, 0.0, 1.0 / ops_elementwise.where(close, 1.0, d))


def _safe_reciprocal(s):
    """1 / s, with 0 where s == 0 (a zero singular value adds nothing)."""
    zero = ops_elementwise.equal(s, 0)
    return ops_elementwise.where(zero, 0.0, 1.0 / ops_elementwise.where(zero, 1.0, s))


# ---- eigh: Hermitian eigendecomposition --------------------------------------------------------
def _eigh_jvp(ts, out, a):
    # dA Hermitian: dw = diag(V^H dA V), dV = V (F o V^H dA V)
    w, v = split_eigh(out)
    vdv = matmul(matmul(mH(v), ts[0]), v)
    dw = ops_shape.expand_dims(diagonal(vdv), -2)
    return _pack(dw, matmul(v, _inv_gaps(w) * vdv))


def _eigh_vjp(g, out, a):
    # the transpose of the JVP: ga = conj(V) (diag(gw) + F o V^T gV) V^T
    w, v = split_eigh(out)
    gw, gv = g[..., 0, :], g[..., 1:, :]
    inner = diag_embed(gw) + _inv_gaps(w) * matmul(mT(v), gv)
    return (matmul(matmul(ops_elementwise.conj(v), inner), mT(v)),)


defvjp(eigh, _eigh_vjp)
defjvp(eigh, _eigh_jvp)


# ---- eig: general (complex) eigendecomposition -------------------------------------------------
def _eig_tangent(t, out):
    # dw = diag(V^-1 dA V), dV = V (F o V^-1 dA V), then projected so |v_j| stays 1
    w, v = split_eig(out)
    vdv = matmul(inv(v), matmul(_as(t, v.dtype), v))
    dv = matmul(v, _inv_gaps(w) * vdv)
    along = ops_reduction.sum(ops_elementwise.conj(v) * dv, axis=-2)
    dv = dv - v * ops_shape.expand_dims(ops_elementwise.real(along), -2)
    return _pack(ops_shape.expand_dims(diagonal(vdv), -2), dv)


defvjp(eig, lambda g, out, a: (transpose_linear(lambda t: _eig_tangent(t, out), a, g),))
defjvp(eig, lambda ts, out, a: _eig_tangent(ts[0], out))


# ---- svd ---------------------------------------------------------------------------------------
def _svd_tangent(t, out, m, full_matrices):
    """JVP of the reduced SVD (as in JAX's ``svd_jvp_rule``); dA [..., m, n]."""
    n = t.shape[-1]
    if full_matrices and m != n:
        raise NotImplementedError(
            f"svd: no derivative with full_matrices=True for a non-square matrix ({m}x{n}): "
            "the extra columns of U or V are not unique; use full_matrices=False"
        )
    u, s, v = split_svd(out, m)
    cplx = _dt.is_complex(u.dtype)
    ds = matmul(matmul(mH(u), t), v)  # U^H dA V, [..., k, k]
    f = _inv_gaps(s * s)  # 1 / (s_j^2 - s_i^2)
    s_row = ops_shape.expand_dims(s, -2)  # s_j along columns
    s_col = ops_shape.expand_dims(s, -1)  # s_i along rows
    dss, sds = ds * s_row, s_col * ds
    s_inv = _safe_reciprocal(s)
    du_inner = f * (dss + mH(dss))
    if cplx:  # the phase of each singular pair moves along the imaginary part of diag(dS)
        du_inner = du_inner + 0.5 * (ds - mH(ds)) * diag_embed(s_inv)
    du = matmul(u, du_inner)
    dv = matmul(v, f * (sds + mH(sds)))
    s_inv_row = ops_shape.expand_dims(s_inv, -2)
    if m > n:  # the part of dA V outside span(U)
        dav = matmul(t, v)
        du = du + (dav - matmul(u, matmul(mH(u), dav))) * s_inv_row
    if n > m:
        dahu = matmul(mH(t), u)
        dv = dv + (dahu - matmul(v, matmul(mH(v), dahu))) * s_inv_row
    dsv = diagonal(ds)
    dsv = _as(ops_elementwise.real(dsv), ds.dtype) if cplx else dsv
    return _pack(du, ops_shape.expand_dims(dsv, -2), dv)


def _svd_jvp(ts, out, a, full_matrices):
    return _svd_tangent(ts[0], out, a.shape[-2], full_matrices)


def _svd_vjp(g, out, a, full_matrices):
    m = a.shape[-2]
    return (transpose_linear(lambda t: _svd_tangent(t, out, m, full_matrices), a, g),)


defvjp(svd, _svd_vjp)
defjvp(svd, _svd_jvp)


# ---- qr ----------------------------------------------------------------------------------------
def _qr_square_tangent(dx, q, r):
    """dQ, dR of x = QR with x [..., m, n], m >= n, Q [m, n] (JAX's ``qr_jvp_rule``)."""
    n = r.shape[-1]
    dx_rinv = mT(triangular_solve(mT(r), mT(dx), lower=True))  # dx R^-1
    qt_dx_rinv = matmul(mH(q), dx_rinv)
    low = ops_shape.tril(qt_dx_rinv, -1)
    do = low - mH(low)  # skew-Hermitian
    if _dt.is_complex(q.dtype):  # the free phase of each column: imaginary diagonal
        imaginary = qt_dx_rinv - _as(ops_elementwise.real(qt_dx_rinv), q.dtype)
        do = do + _eye(n, _dt.real_dtype(q.dtype)) * imaginary
    return matmul(q, do - qt_dx_rinv) + dx_rinv, matmul(qt_dx_rinv - do, r)


def _qr_pack(dq, dr, m, n, full_matrices):
    q_cols, width = qr_layout(m, n, full_matrices)
    if width > q_cols:
        dq = ops_shape.pad(dq, [(0, 0)] * (dq.ndim - 1) + [(0, width - q_cols)])
    return _pack(dq, dr)


def _qr_tangent(t, out, m, n, full_matrices):
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
    dr2 = matmul(mH(dq), x2) + matmul(mH(q), t[..., m:])
    return _qr_pack(dq, ops_shape.concat([dr1, dr2], axis=-1), m, n, full_matrices)


def _qr_jvp(ts, out, a, full_matrices):
    m, n = a.shape[-2:]
    return _qr_tangent(ts[0], out, m, n, full_matrices)


def _qr_vjp(g, out, a, full_matrices):
    m, n = a.shape[-2:]
    return (transpose_linear(lambda t: _qr_tangent(t, out, m, n, full_matrices), a, g),)


defvjp(qr, _qr_vjp)
defjvp(qr, _qr_jvp)


# ---- pinv --------------------------------------------------------------------------------------
def _pinv_tangent(t, x, a):
    # dX = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X,   X = pinv(A)
    m, n = a.shape[-2:]
    tH, xH = mH(t), mH(x)
    left = _eye(m, a.dtype) - matmul(a, x)  # [m, m]
    right = _eye(n, a.dtype) - matmul(x, a)  # [n, n]
    return (
        -matmul(matmul(x, t), x)
        + matmul(matmul(x, matmul(xH, tH)), left)
        + matmul(right, matmul(tH, matmul(xH, x)))
    )


defvjp(pinv, lambda g, out, a, rcond: (transpose_linear(lambda t: _pinv_tangent(t, out, a), a, g),))
defjvp(pinv, lambda ts, out, a, rcond: _pinv_tangent(ts[0], out, a))


# ---- matrix functions --------------------------------------------------------------------------
def _block_upper(a, e, c):
    """[[a, e], [0, c]] from [..., n, n] blocks -> [..., 2n, 2n]."""
    top = ops_shape.concat([a, e], axis=-1)
    bottom = ops_shape.concat([ops_creation.zeros_like(c), c], axis=-1)
    return ops_shape.concat([top, bottom], axis=-2)


def _frechet_expm(a, e):
    """The Fréchet derivative L(a, e) of expm at a along e: the upper-right block of
    expm([[a, e], [0, a]]) (Higham, Functions of Matrices, Theorem 3.6)."""
    n = a.shape[-1]
    return expm(_block_upper(a, e, a))[..., :n, n:]


# d expm(A)[E] = L(A, E); its transpose (bilinear pairing) is L(A^T, G)
defvjp(expm, lambda g, out, a: (_frechet_expm(mT(a), g),))
defjvp(expm, lambda ts, out, a: _frechet_expm(a, ts[0]))

# X = sqrtm(A): X dX + dX X = dA; the transpose solves X^T G_A + G_A X^T = G
# (a Sylvester equation, ``core.ops.solve_sylvester``: one Kronecker-form solve)
defvjp(sqrtm, lambda g, out, a: (solve_sylvester(mT(out), mT(out), g),))
defjvp(sqrtm, lambda ts, out, a: solve_sylvester(out, out, ts[0]))


# ---- batching: the batch axis goes first; every impl broadcasts leading axes -------------------
for _p in (eigh, eig, svd, qr, pinv, expm, sqrtm):
    batch_rules[_p] = axis_rule(_p, axis_names=())
