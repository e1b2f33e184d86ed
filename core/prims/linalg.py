"""Linear-algebra primitives. ``matmul`` takes operands of rank >= 2 with broadcasting batch
dimensions (``core.ops.matmul`` handles rank-1 operands by reshaping).

Dense solvers and factorizations: ``inv``, ``solve``, ``triangular_solve``, ``cholesky`` and
``logdet`` (``core.ops`` builds det, slogdet and logdet from it).

The derivative, batching and lowering rules are in ``core/rules/linalg.py``; the CPU's kernels
(tiled copies of matmul's operands, scipy's triangular solver) in
``core/backend/cpu_impls/arrays.py``.
"""

import numpy as np

from .. import dtypes as _dt
from ..backend.linalg import lapack_call
from ..primitive import ShapedArray
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
    return xp.ascontiguousarray(a)  # the CPU's kernel makes this a tiled copy


_HALF = (np.dtype("float16"), _dt.bfloat16)


def _matmul_impl(xp, x, y):
    if x.dtype in _HALF:
        # float16/bfloat16 products accumulate in float32 through BLAS and round once (as
        # PyTorch's CPU GEMM does); numpy has no BLAS for them, and for bfloat16 it would
        # return float32, not the operands' dtype
        f32 = np.dtype("float32")
        return _matmul_impl(xp, x.astype(f32), y.astype(f32)).astype(x.dtype)
    x, y = _blas_ready(xp, x), _blas_ready(xp, y)
    if x.shape[-1] == 1:  # an outer product: numpy would make one tiny GEMM per batch entry
        return x * y
    if y.ndim == 2 and x.ndim > 2 and x.flags.c_contiguous:
        # [..., M, K] @ [K, N] as one [(... M), K] GEMM; numpy loops over the batch
        return xp.matmul(x.reshape(-1, x.shape[-1]), y).reshape(x.shape[:-1] + y.shape[-1:])
    return xp.matmul(x, y)


matmul = defprim("matmul", _matmul_impl, _matmul_aval)


# ---- dense solvers and factorizations ------------------------------------------------------
# Every primitive below acts on the trailing two axes ([..., n, n] matrices) and broadcasts
# the leading (batch) axes as numpy does. Each of these is a primitive because it is one
# LAPACK call (speed and stability): as composites of elementwise ops they would be neither.


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


def _same_dtype(out, like):
    # numpy keeps float32/complex64; make sure no LAPACK wrapper upcasts behind our back.
    return out if out.dtype == like.dtype else out.astype(like.dtype)


inv = defprim(
    "inv",
    lambda xp, a: _same_dtype(lapack_call("inv", xp.linalg.inv, a), a),
    _square_aval("inv"),
)


def _broadcast_batch(xp, a, b):
    """``a`` and ``b`` as views with one batch shape (not every backend's solve broadcasts)."""
    if a.shape[:-2] == b.shape[:-2]:
        return a, b
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return xp.broadcast_to(a, batch + a.shape[-2:]), xp.broadcast_to(b, batch + b.shape[-2:])


def _solve_impl(xp, a, b):
    a, b = _broadcast_batch(xp, a, b)
    return _same_dtype(lapack_call("solve", xp.linalg.solve, a, b), a)


solve = defprim("solve", _solve_impl, _solve_aval("solve"))


# ---- triangular solve ------------------------------------------------------------------------
def _tri_impl(xp, a, b, lower):
    # the masked matrix is triangular, so a general LU solve gives the triangular solution
    # (the CPU's kernel calls a triangular solver where that is faster)
    a = xp.tril(a) if lower else xp.triu(a)
    a, b = _broadcast_batch(xp, a, b)
    return _same_dtype(lapack_call("triangular_solve", xp.linalg.solve, a, b), a)


triangular_solve = defprim("triangular_solve", _tri_impl, _solve_aval("triangular_solve"))


# ---- Cholesky ------------------------------------------------------------------------------------
cholesky = defprim(
    "cholesky",
    lambda xp, a: _same_dtype(lapack_call("cholesky", xp.linalg.cholesky, a), a),
    _square_aval("cholesky"),
)


# ---- log-determinant ---------------------------------------------------------------------------
def _logdet_impl(xp, a):
    sign, logabs = lapack_call("logdet", xp.linalg.slogdet, a)
    return (logabs + 1j * xp.angle(sign)).astype(_dt.complex_dtype(a.dtype))


def _logdet_aval(a):
    _check_square("logdet", a.shape)
    return ShapedArray(a.shape[:-2], _dt.complex_dtype(a.dtype))


# The principal complex logarithm of det a: log|det a| + i arg(det a), complex even for real a
# (then the imaginary part, 0 or pi, carries the sign), so that det, slogdet and logdet are
# composites of one LU factorization. Its derivative is tr(a^-1 da) (holomorphic for complex a;
# for real a the engine keeps the real part of the cotangent).
logdet = defprim("logdet", _logdet_impl, _logdet_aval)
