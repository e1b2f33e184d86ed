"""Derivative, batching and lowering rules of the linear-algebra primitives
(``core/prims/linalg.py``).

Derivatives follow JAX's complex convention: linear maps transpose without conjugation, and a
holomorphic f has cotangent ``g * f'(z)``.
"""

import numpy as np

from .. import dtypes as _dt
from ..jit.lowering import deflowering
from ..ops import creation as ops_creation
from ..ops import elementwise as ops_elementwise
from ..ops import reduction as ops_reduction
from ..ops import shape as ops_shape
from ..ops._matrix import mT
from ..prims.linalg import cholesky, inv, logdet, matmul, solve, triangular_solve
from ..vmap import axis_rule, batch_rules
from ._define import align_batch, broadcasting_batch_rule, defjvp, defvjp, tangent_sum


# ---- matmul ------------------------------------------------------------------------------------
def _matmul_vjp_y(g, x, y):
    if y.ndim == 2 and x.ndim > 2:
        # y is shared by the whole batch: one [K, (... M)] @ [(... M), N] GEMM instead of a
        # batched product summed over the batch afterwards
        x2 = ops_shape.reshape(x, (-1, x.shape[-1]))
        return matmul(mT(x2), ops_shape.reshape(g, (-1, g.shape[-1])))
    return matmul(mT(x), g)


def _matmul_vjp(g, out, x, y, _needed=(True, True)):
    return (
        matmul(g, mT(y)) if _needed[0] else None,
        _matmul_vjp_y(g, x, y) if _needed[1] else None,
    )


def _matmul_jvp(ts, out, x, y):
    return tangent_sum(
        None if ts[0] is None else matmul(ts[0], y),
        None if ts[1] is None else matmul(x, ts[1]),
    )


def _matmul_batch(args, bdims):
    x, y = args
    bx, by = bdims
    if by is None and bx == 0 and x.ndim == 3 and y.ndim == 2:
        # one big GEMM: (B, M, K) @ (K, N) -> reshape to (B*M, K)
        b, m, k = x.shape
        out = matmul(ops_shape.reshape(x, (b * m, k)), y)
        return ops_shape.reshape(out, (b, m, y.shape[-1])), 0
    return matmul(*align_batch(args, bdims)), 0


defvjp(matmul, _matmul_vjp, masked=True)
defjvp(matmul, _matmul_jvp)
batch_rules[matmul] = _matmul_batch
deflowering(matmul, fresh=True)


# ---- inv ---------------------------------------------------------------------------------------
def _inv_vjp(g, out, a):
    # d inv = -inv da inv  =>  ga = -inv^T g inv^T
    return (-matmul(matmul(mT(out), g), mT(out)),)


defvjp(inv, _inv_vjp)
defjvp(inv, lambda ts, out, a: -matmul(matmul(out, ts[0]), out))


# ---- solve -------------------------------------------------------------------------------------
def _solve_vjp(g, out, a, b, _needed=(True, True)):
    # x = a^-1 b:  gb = a^-T g,  ga = -gb x^T
    gb = solve(mT(a), g)
    return (-matmul(gb, mT(out)) if _needed[0] else None), gb


def _solve_jvp(ts, out, a, b):
    # a x = b  =>  a dx = db - da x
    ta, tb = ts
    return solve(a, tangent_sum(tb, None if ta is None else -matmul(ta, out)))


defvjp(solve, _solve_vjp, masked=True)
defjvp(solve, _solve_jvp)


# ---- triangular solve --------------------------------------------------------------------------
def _tri_mask(x, lower):
    return ops_shape.tril(x) if lower else ops_shape.triu(x)


def _tri_vjp(g, out, a, b, lower, _needed=(True, True)):
    # x = A^-1 b with A = tril(a) (or triu):  gb = A^-T g,  ga = mask(-gb x^T)
    gb = triangular_solve(mT(a), g, lower=not lower)
    return (_tri_mask(-matmul(gb, mT(out)), lower) if _needed[0] else None), gb


def _tri_jvp(ts, out, a, b, lower):
    ta, tb = ts
    da_x = None if ta is None else -matmul(_tri_mask(ta, lower), out)
    return triangular_solve(a, tangent_sum(tb, da_x), lower=lower)


defvjp(triangular_solve, _tri_vjp, masked=True)
defjvp(triangular_solve, _tri_jvp)


# ---- Cholesky ----------------------------------------------------------------------------------
def _phi(x):
    """Lower triangle of x with the diagonal halved."""
    n = x.shape[-1]
    w = np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n)
    return x * ops_creation._const(w.astype(_dt.real_dtype(x.dtype)))


def _herm(x):
    """The Hermitian part (x + x^H) / 2."""
    return 0.5 * (x + ops_elementwise.conj(mT(x)))


def _cholesky_jvp(ts, out, a):
    # Murray (2016), arXiv:1602.07527, eq. 8: dL = L phi(L^-1 dA L^-H), dA made Hermitian.
    da = _herm(ts[0])
    s = triangular_solve(out, da, lower=True)  # L^-1 dA
    s = mT(triangular_solve(ops_elementwise.conj(out), mT(s), lower=True))  # (L^-1 dA) L^-H
    return matmul(out, _phi(s))


def _cholesky_vjp(g, out, a):
    # The transpose of the JVP (bilinear pairing, no conjugation):
    # ga = herm(L^-T phi(L^T g) conj(L)^-1); the cotangent is Hermitian, as a is.
    p = _phi(matmul(mT(out), g))
    z = triangular_solve(mT(out), p, lower=False)  # L^-T p
    ga = mT(triangular_solve(mT(ops_elementwise.conj(out)), mT(z), lower=False))  # z conj(L)^-1
    return (_herm(ga),)


defvjp(cholesky, _cholesky_vjp)
defjvp(cholesky, _cholesky_jvp)


# ---- log-determinant ---------------------------------------------------------------------------
# d log det a = tr(a^-1 da): the cotangent is g * a^-T
defvjp(logdet, lambda g, out, a: (ops_shape.expand_dims(g, (-2, -1)) * mT(inv(a)),))
defjvp(logdet, lambda ts, out, a: ops_reduction.sum(mT(inv(a)) * ts[0], axis=(-2, -1)))


# ---- batching: the batch axis goes first; the impls broadcast leading axes ---------------------
for _p in (inv, cholesky, logdet):
    batch_rules[_p] = axis_rule(_p, axis_names=())
for _p in (solve, triangular_solve):
    batch_rules[_p] = broadcasting_batch_rule(_p)
