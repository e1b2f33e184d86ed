"""Linear-algebra primitives. ``matmul`` takes operands of rank >= 2 with broadcasting batch
dimensions (``core.ops.matmul`` handles rank-1 operands by reshaping).

Dense solvers and factorizations: ``inv``, ``solve``, ``triangular_solve``, ``cholesky`` and
``logdet`` (``core.ops`` builds det, slogdet and logdet from it).
"""

import numpy as np

from .. import dtypes as _dt
from ..rules._define import defjvp, defvjp
from ..backend import cpu_layout
from ..primitive import ShapedArray
from ..vmap import batch_rules, to_front
from ._define import broadcast_shapes, defprim


def _matmul_aval(x, y):
    if len(x.shape) < 2 or len(y.shape) < 2 or x.shape[-1] != y.shape[-2]:
        raise ValueError(f"matmul: shapes {tuple(x.shape)} and {tuple(y.shape)} are not aligned")
    batch = broadcast_shapes("matmul", x.shape[:-2], y.shape[:-2])
    return ShapedArray(batch + (x.shape[-2], y.shape[-1]), x.dtype)


def _blas_ready(xp, a):
    """``a`` laid out so that matmul reaches BLAS: numpy falls back to a slow loop for operands
    whose last two axes are neither row- nor column-contiguous (broadcast views, strided
    slices), which shows up as 100x slower gradients of broadcasts."""
    if a.ndim < 2:
        return a
    s0, s1 = a.strides[-2], a.strides[-1]
    item = a.itemsize
    if (s1 == item and s0 >= item * max(a.shape[-1], 1)) or (
        s0 == item and s1 >= item * max(a.shape[-2], 1)
    ):
        return a
    if xp is np:
        return cpu_layout.ascontiguousarray(a)  # a tiled copy when `a` is a transposed view
    return xp.ascontiguousarray(a)


def _matmul_impl(xp, x, y):
    x, y = _blas_ready(xp, x), _blas_ready(xp, y)
    if x.shape[-1] == 1:  # an outer product: numpy would make one tiny GEMM per batch entry
        return x * y
    if y.ndim == 2 and x.ndim > 2 and x.flags.c_contiguous:
        # [..., M, K] @ [K, N] as one [(... M), K] GEMM; numpy loops over the batch
        return xp.matmul(x.reshape(-1, x.shape[-1]), y).reshape(x.shape[:-1] + y.shape[-1:])
    return xp.matmul(x, y)


matmul = defprim("matmul", _matmul_impl, _matmul_aval)


def _mT(x):
    from .. import ops

    return ops.swapaxes(x, -1, -2)


def _matmul_vjp_y(g, x, y):
    if y.ndim == 2 and x.ndim > 2:
        # y is shared by the whole batch: one [K, (... M)] @ [(... M), N] GEMM instead of a
        # batched product summed over the batch afterwards
        from .. import ops

        x2 = ops.reshape(x, (-1, x.shape[-1]))
        return matmul(_mT(x2), ops.reshape(g, (-1, g.shape[-1])))
    return matmul(_mT(x), g)


defvjp(
    matmul,
    lambda g, out, x, y, _needed=(True, True): (
        matmul(g, _mT(y)) if _needed[0] else None,
        _matmul_vjp_y(g, x, y) if _needed[1] else None,
    ),
    masked=True,
)


def _matmul_jvp(ts, out, x, y):
    a = None if ts[0] is None else matmul(ts[0], y)
    b = None if ts[1] is None else matmul(x, ts[1])
    return b if a is None else (a if b is None else a + b)


defjvp(matmul, _matmul_jvp)


def _matmul_batch(args, bdims):
    from .. import ops

    x, y = args
    bx, by = bdims
    if by is None and bx is not None and x.ndim == 3 and y.ndim == 2 and bx == 0:
        # one big GEMM: (B, M, K) @ (K, N) -> reshape to (B*M, K)
        b, m, k = x.shape
        return ops.reshape(matmul(ops.reshape(x, (b * m, k)), y), (b, m, y.shape[-1])), 0
    rank = max(x.ndim - (bx is not None), y.ndim - (by is not None))
    moved = []
    for a, b in ((x, bx), (y, by)):
        if b is None:
            moved.append(a)
            continue
        a = to_front(a, b)
        r = a.ndim - 1
        if r < rank:
            a = ops.reshape(a, (a.shape[0],) + (1,) * (rank - r) + tuple(a.shape[1:]))
        moved.append(a)
    return matmul(*moved), 0


batch_rules[matmul] = _matmul_batch


# ---- dense solvers and factorizations ------------------------------------------------------
# Every primitive below acts on the trailing two axes ([..., n, n] matrices) and broadcasts
# the leading (batch) axes as numpy does. Derivatives follow JAX's complex convention: linear
# maps transpose without conjugation, and a holomorphic f has cotangent g * f'(z). Each of
# these is a primitive because it is one LAPACK call (speed and stability): as composites of
# elementwise ops they would be neither.


def _check_square(name, *shapes):
    for s in shapes:
        if len(s) < 2 or s[-1] != s[-2]:
            raise ValueError(
                f"{name}: expected square matrices [..., n, n], got shape(s) {', '.join(str(tuple(t)) for t in shapes)}"
            )


def _square_aval(name):
    def rule(a, **params):
        _check_square(name, a.shape)
        return ShapedArray(a.shape, a.dtype)

    return rule


def _solve_aval(name):
    def rule(a, b, **params):
        _check_square(name, a.shape)
        if len(b.shape) < 2 or b.shape[-2] != a.shape[-1]:
            raise ValueError(
                f"{name}: right-hand side of shape {tuple(b.shape)} does not match matrix of shape "
                f"{tuple(a.shape)} (expected [..., {a.shape[-1]}, k])"
            )
        if a.dtype != b.dtype:
            raise ValueError(f"{name}: dtypes {a.dtype} and {b.dtype} differ")
        batch = broadcast_shapes(name, a.shape[:-2], b.shape[:-2])
        return ShapedArray(batch + tuple(b.shape[-2:]), a.dtype)

    return rule


def _linalg_call(name, fn, *args):
    """``fn(*args)``, with LAPACK's LinAlgError reworded to name the op (eager adds shapes)."""
    try:
        return fn(*args)
    except np.linalg.LinAlgError as err:
        msg = str(err)
        if "singular" in msg.lower():
            msg = f"{name}: matrix is singular ({msg})"
        elif "positive definite" in msg.lower():
            msg = f"{name}: matrix is not (Hermitian) positive definite ({msg})"
        else:
            msg = f"{name}: {msg}"
        raise np.linalg.LinAlgError(msg) from None


def _same_dtype(out, like):
    # numpy keeps float32/complex64; make sure no LAPACK wrapper upcasts behind our back.
    return out if out.dtype == like.dtype else out.astype(like.dtype)


inv = defprim(
    "inv",
    lambda xp, a: _same_dtype(_linalg_call("inv", xp.linalg.inv, a), a),
    _square_aval("inv"),
)


def _inv_vjp(g, out, a):
    # d inv = -inv da inv  =>  ga = -inv^T g inv^T
    return (-matmul(matmul(_mT(out), g), _mT(out)),)


defvjp(inv, _inv_vjp)
defjvp(inv, lambda ts, out, a: -matmul(matmul(out, ts[0]), out))


def _broadcast_batch(xp, a, b):
    """numpy's solve broadcasts batch axes itself; other backends get explicit views."""
    if xp is np or a.shape[:-2] == b.shape[:-2]:
        return a, b
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return xp.broadcast_to(a, batch + a.shape[-2:]), xp.broadcast_to(b, batch + b.shape[-2:])


def _solve_impl(xp, a, b):
    a, b = _broadcast_batch(xp, a, b)
    return _same_dtype(_linalg_call("solve", xp.linalg.solve, a, b), a)


solve = defprim("solve", _solve_impl, _solve_aval("solve"))


def _solve_vjp(g, out, a, b, _needed=(True, True)):
    # x = a^-1 b:  gb = a^-T g,  ga = -gb x^T
    gb = solve(_mT(a), g)
    return (-matmul(gb, _mT(out)) if _needed[0] else None), gb


def _solve_jvp(ts, out, a, b):
    ta, tb = ts
    rhs = tb if ta is None else (-matmul(ta, out) if tb is None else tb - matmul(ta, out))
    return solve(a, rhs)


defvjp(solve, _solve_vjp, masked=True)
defjvp(solve, _solve_jvp)


# ---- triangular solve ------------------------------------------------------------------------
# scipy.linalg batches triangular solves with a Python loop (~20 us a matrix); for many small
# matrices one batched LU solve in C is faster, even though it ignores the triangular structure.
_TRI_LOOP_MIN_N = 32
_TRI_LOOP_MAX_BATCH = 4


def _tri_impl(xp, a, b, lower):
    a = xp.tril(a) if lower else xp.triu(a)
    if xp is np:
        import scipy.linalg as sla

        nbatch = int(np.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2])))
        if a.shape[-1] >= _TRI_LOOP_MIN_N or nbatch <= _TRI_LOOP_MAX_BATCH:
            out = _linalg_call(
                "triangular_solve",
                lambda a_, b_: sla.solve_triangular(a_, b_, lower=lower, check_finite=False),
                a,
                b,
            )
            return _same_dtype(out, a)
    # the masked matrix is triangular, so a general LU solve gives the triangular solution
    a, b = _broadcast_batch(xp, a, b)
    return _same_dtype(_linalg_call("triangular_solve", xp.linalg.solve, a, b), a)


triangular_solve = defprim("triangular_solve", _tri_impl, _solve_aval("triangular_solve"))


def _tri_mask(x, lower):
    from .. import ops

    return ops.tril(x) if lower else ops.triu(x)


def _tri_vjp(g, out, a, b, lower, _needed=(True, True)):
    # x = A^-1 b with A = tril(a) (or triu):  gb = A^-T g,  ga = mask(-gb x^T)
    gb = triangular_solve(_mT(a), g, lower=not lower)
    return (_tri_mask(-matmul(gb, _mT(out)), lower) if _needed[0] else None), gb


def _tri_jvp(ts, out, a, b, lower):
    ta, tb = ts
    if ta is None:
        rhs = tb
    else:
        rhs = -matmul(_tri_mask(ta, lower), out)
        rhs = rhs if tb is None else tb + rhs
    return triangular_solve(a, rhs, lower=lower)


defvjp(triangular_solve, _tri_vjp, masked=True)
defjvp(triangular_solve, _tri_jvp)


# ---- Cholesky ------------------------------------------------------------------------------------
cholesky = defprim(
    "cholesky",
    lambda xp, a: _same_dtype(_linalg_call("cholesky", xp.linalg.cholesky, a), a),
    _square_aval("cholesky"),
)


def _phi(x):
    """Lower triangle of x with the diagonal halved."""
    from ..ops.creation import _const

    n = x.shape[-1]
    w = np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n)
    return x * _const(w.astype(_dt.real_dtype(x.dtype)))


def _herm(x):
    from .. import ops

    return 0.5 * (x + ops.conj(_mT(x)))


def _cholesky_jvp(ts, out, a):
    # Murray (2016), arXiv:1602.07527, eq. 8: dL = L phi(L^-1 dA L^-H), dA made Hermitian.
    from .. import ops

    da = _herm(ts[0])
    s = triangular_solve(out, da, lower=True)  # L^-1 dA
    s = _mT(triangular_solve(ops.conj(out), _mT(s), lower=True))  # (L^-1 dA) L^-H
    return matmul(out, _phi(s))


def _cholesky_vjp(g, out, a):
    # The transpose of the JVP (bilinear pairing, no conjugation):
    # ga = herm(L^-T phi(L^T g) conj(L)^-1); the cotangent is Hermitian, as a is.
    from .. import ops

    p = _phi(matmul(_mT(out), g))
    z = triangular_solve(_mT(out), p, lower=False)  # L^-T p
    ga = _mT(triangular_solve(_mT(ops.conj(out)), _mT(z), lower=False))  # z conj(L)^-1
    return (_herm(ga),)


defvjp(cholesky, _cholesky_vjp)
defjvp(cholesky, _cholesky_jvp)


# ---- log-determinant ---------------------------------------------------------------------------
def _logdet_impl(xp, a):
    sign, logabs = _linalg_call("logdet", xp.linalg.slogdet, a)
    return (logabs + 1j * xp.angle(sign)).astype(_dt.complex_dtype(a.dtype))


def _logdet_aval(a):
    _check_square("logdet", a.shape)
    return ShapedArray(a.shape[:-2], _dt.complex_dtype(a.dtype))


# The principal complex logarithm of det a: log|det a| + i arg(det a), complex even for real a
# (then the imaginary part, 0 or pi, carries the sign), so that det, slogdet and logdet are
# composites of one LU factorization. Its derivative is tr(a^-1 da) (holomorphic for complex a;
# for real a the engine keeps the real part of the cotangent).
logdet = defprim("logdet", _logdet_impl, _logdet_aval)


def _logdet_vjp(g, out, a):
    from .. import ops

    return (ops.expand_dims(g, (-2, -1)) * _mT(inv(a)),)


def _logdet_jvp(ts, out, a):
    from .. import ops

    return ops.sum(_mT(inv(a)) * ts[0], axis=(-2, -1))


defvjp(logdet, _logdet_vjp)
defjvp(logdet, _logdet_jvp)


# ---- batching: the batch axis goes first; the impls broadcast leading axes -----------------------
def _matrix_batch(prim):
    def rule(args, bdims, **params):
        return prim(to_front(args[0], bdims[0]), **params), 0

    return rule


def _solve_batch(prim):
    """Batch axes first; a batched operand of lower rank gets size-1 axes after its batch
    axis, so that numpy broadcasting lines up the remaining batch axes (as for matmul)."""
    from .. import ops

    def rule(args, bdims, **params):
        rank = max(a.ndim - (b is not None) for a, b in zip(args, bdims))
        moved = []
        for a, b in zip(args, bdims):
            if b is not None:
                a = to_front(a, b)
                if a.ndim - 1 < rank:
                    a = ops.reshape(
                        a, (a.shape[0],) + (1,) * (rank - a.ndim + 1) + tuple(a.shape[1:])
                    )
            moved.append(a)
        return prim(*moved, **params), 0

    return rule


for _p in (inv, cholesky, logdet):
    batch_rules[_p] = _matrix_batch(_p)
for _p in (solve, triangular_solve):
    batch_rules[_p] = _solve_batch(_p)
