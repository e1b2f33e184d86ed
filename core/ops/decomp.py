"""Decompositions and matrix functions with numpy/scipy names and semantics: ``eigh``,
``eigvalsh``, ``eig``, ``eigvals``, ``svd``, ``svdvals``, ``pinv``, ``expm``, ``sqrtm``.

Each acts on the trailing two axes and batches over the leading ones; each is differentiable
to any order, in forward and reverse mode (the rules are in ``core/rules/decomp.py``).
"""

import numpy as np

from .. import dtypes as _dt
from ..prims import decomp as prims_decomp
from . import reduction as ops_reduction
from ._matrix import cast_back, matrix_arg
from .creation import eye
from .elementwise import astype, conj, greater, real
from .shape import expand_dims, swapaxes, tril, triu


# ---- helpers shared with the derivative rules (core/rules/decomp.py) ---------------------------
def diagonal(x):
    """[..., n, n] -> [..., n]: the main diagonal (a masked sum: differentiable to any order)."""
    n = x.shape[-1]
    return ops_reduction.sum(x * eye(n, dtype=_dt.real_dtype(x.dtype)), axis=-1)


def diag_embed(d):
    """[..., n] -> [..., n, n]: the diagonal matrices with diagonal ``d``."""
    n = d.shape[-1]
    return expand_dims(d, -2) * eye(n, dtype=_dt.real_dtype(d.dtype))


def split_eigh(packed):
    """[..., 1 + n, n] -> (w [..., n] real, V [..., n, n])."""
    w = packed[..., 0, :]
    return (real(w) if _dt.is_complex(w.dtype) else w), packed[..., 1:, :]


def split_eig(packed):
    """[..., 1 + n, n] -> (w [..., n], V [..., n, n]), both complex."""
    return packed[..., 0, :], packed[..., 1:, :]


def split_svd(packed, m, full_matrices=False):
    """[..., m + 1 + n, p] -> (U [..., m, m or k], s [..., k] real, V [..., n, n or k])."""
    n = packed.shape[-2] - m - 1
    k = min(m, n)
    u = packed[..., :m, : (m if full_matrices else k)]
    s = packed[..., m, :k]
    v = packed[..., m + 1 :, : (n if full_matrices else k)]
    return u, (real(s) if _dt.is_complex(s.dtype) else s), v


def split_qr(packed, m, n, full_matrices=False):
    """[..., m + k, w] -> (Q [..., m, k], R [..., k, n]); k = m when ``full_matrices``."""
    q_cols, _ = prims_decomp.qr_layout(m, n, full_matrices)
    return packed[..., :m, :q_cols], packed[..., m:, :n]


# ---- decompositions ----------------------------------------------------------------------------
def _hermitian_from(a, uplo, name):
    """The Hermitian matrix that LAPACK sees: the ``uplo`` triangle of ``a`` mirrored, with the
    real part of the diagonal. Derivatives then reach only that triangle, as in numpy."""
    if uplo not in ("L", "U"):
        raise ValueError(f"{name}: UPLO must be 'L' or 'U', got {uplo!r}")
    strict = tril(a, -1) if uplo == "L" else triu(a, 1)
    d = diagonal(a)
    d = real(d) if _dt.is_complex(a.dtype) else d
    return strict + conj(swapaxes(strict, -1, -2)) + diag_embed(d)


def eigh(a, UPLO="L"):
    """Eigenvalues and eigenvectors of Hermitian (real symmetric) matrices, as numpy.linalg.eigh.

    Only the ``UPLO`` triangle ('L' lower, 'U' upper) of ``a`` is read.

    Args:
        a: [..., n, n].

    Returns:
        ``(w, V)``: eigenvalues [..., n] (real, ascending) and orthonormal eigenvectors
        [..., n, n] (columns), ``a = V diag(w) V^H``.

    Derivatives are finite also where eigenvalues repeat: the terms 1 / (w_i - w_j) of equal
    eigenvalues are dropped, which is exact for any loss that does not depend on the choice of
    basis inside an eigenspace (the usual case: functions of ``V diag(f(w)) V^H``).
    """
    a, back = matrix_arg(a, "eigh")
    w, v = split_eigh(prims_decomp.eigh(_hermitian_from(a, UPLO, "eigh")))
    return cast_back(w, back), cast_back(v, back)


def eigvalsh(a, UPLO="L"):
    """Eigenvalues [..., n] (ascending) of Hermitian ``a`` [..., n, n] (see :func:`eigh`)."""
    return eigh(a, UPLO)[0]


def eig(a):
    """Eigenvalues and right eigenvectors of square matrices, as numpy.linalg.eig.

    Args:
        a: [..., n, n], real or complex.

    Returns:
        ``(w, V)``, both complex: eigenvalues [..., n] and unit-norm eigenvectors [..., n, n]
        (columns), ``a V = V diag(w)``. A real ``a`` gives complex results (also when every
        eigenvalue is real, so that the dtype does not depend on values).

    The phase of each eigenvector is arbitrary, so only phase-invariant functions of ``V``
    (``abs(V)``, ``V diag(f(w)) V^-1``) have meaningful derivatives; eigenvalues must be
    distinct for the eigenvector derivative.
    """
    a, _ = matrix_arg(a, "eig")
    return split_eig(prims_decomp.eig(a))


def eigvals(a):
    """Complex eigenvalues [..., n] of ``a`` [..., n, n] (see :func:`eig`)."""
    return eig(a)[0]


def svd(a, full_matrices=True, compute_uv=True):
    """Singular value decomposition, as numpy.linalg.svd.

    Args:
        a: [..., m, n]; k = min(m, n).
        full_matrices: U [..., m, m] and Vh [..., n, n] (True, numpy's default), or the reduced
            U [..., m, k] and Vh [..., k, n].
        compute_uv: False returns the singular values only.

    Returns:
        ``(U, s, Vh)`` with ``a = U[..., :k] diag(s) Vh[..., :k, :]``, s [..., k] real and
        descending; or ``s`` alone.

    Derivatives exist for the reduced factors and for square matrices (``full_matrices=True``
    of a non-square matrix raises on differentiation: its extra columns are not unique), and
    for ``s`` always. Singular values must be distinct (and nonzero when m != n) for the
    derivative of U and V; pairs closer than rounding are dropped as in :func:`eigh`.
    """
    a, back = matrix_arg(a, "svd", square=False)
    m, n = a.shape[-2:]
    full = bool(full_matrices) and bool(compute_uv) and m != n
    u, s, v = split_svd(prims_decomp.svd(a, full_matrices=full), m, full)
    if not compute_uv:
        return cast_back(s, back)
    vh = swapaxes(v, -1, -2)
    if _dt.is_complex(vh.dtype):
        vh = conj(vh)
    return cast_back(u, back), cast_back(s, back), cast_back(vh, back)


def svdvals(a):
    """Singular values [..., min(m, n)] (descending) of ``a`` [..., m, n]."""
    return svd(a, full_matrices=False, compute_uv=False)


def pinv(a, rcond=None):
    """Moore-Penrose pseudo-inverse [..., n, m] of ``a`` [..., m, n], as numpy.linalg.pinv:
    singular values below ``rcond`` (default ``max(m, n) * eps``) times the largest count as 0.

    The derivative (Golub & Pereyra) holds where the rank does not change under small
    perturbations, rank-deficient matrices included (e.g. ``pinv(x.T @ x)`` with x [5, 7])."""
    a, back = matrix_arg(a, "pinv", square=False)
    return cast_back(prims_decomp.pinv(a, rcond=None if rcond is None else float(rcond)), back)


def expm(a):
    """Matrix exponential of ``a`` [..., n, n] (scipy.linalg.expm). Its derivative is the
    Fréchet derivative, the upper-right block of ``expm([[a, e], [0, a]])``, so derivatives
    of every order are matrix exponentials again."""
    a, back = matrix_arg(a, "expm")
    return cast_back(prims_decomp.expm(a), back)


def sqrtm(a):
    """Principal matrix square root ``x`` of ``a`` [..., n, n] (scipy.linalg.sqrtm): ``x @ x = a``.

    A real ``a`` gives a real root and must have no negative real eigenvalue (pass a complex
    matrix otherwise). The derivative solves the Sylvester equation ``x dx + dx x = da`` as one
    [n^2, n^2] linear system: fine for the small matrices it is meant for (n up to ~30)."""
    a, back = matrix_arg(a, "sqrtm")
    return cast_back(prims_decomp.sqrtm(a), back)


def qr(a, mode="reduced"):
    """QR decomposition, as numpy.linalg.qr: ``a = Q R`` with orthonormal columns in Q and upper
    triangular R.

    Args:
        a: [..., m, n]; k = min(m, n).
        mode: 'reduced' (Q [..., m, k], R [..., k, n]), 'complete' (Q [..., m, m], R [..., m, n])
            or 'r' (R [..., k, n] alone).

    Returns:
        ``(Q, R)``, or ``R`` for mode 'r'.

    Derivatives of every order for 'reduced' and 'r' (tall, square and wide matrices, real and
    complex) and for 'complete' unless m > n (its extra columns of Q are not unique: raises).
    """
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    a, back = matrix_arg(a, "qr", square=False)
    m, n = a.shape[-2:]
    full = mode == "complete"
    q, r = split_qr(prims_decomp.qr(a, full_matrices=full), m, n, full)
    return cast_back(r, back) if mode == "r" else (cast_back(q, back), cast_back(r, back))


def matrix_rank(a, tol=None):
    """Number of singular values of ``a`` [..., m, n] above ``tol`` (default: numpy's
    ``s.max() * max(m, n) * eps``), as numpy.linalg.matrix_rank; int64 [...], no derivative."""
    a, _ = matrix_arg(a, "matrix_rank", square=False)
    s = svdvals(a)
    if tol is None:
        eps = float(np.finfo(_dt.real_dtype(s.dtype)).eps)
        tol = ops_reduction.amax(s, axis=-1, keepdims=True) * (max(a.shape[-2:]) * eps)
    return ops_reduction.sum(astype(greater(s, tol), _dt.int64), axis=-1)
