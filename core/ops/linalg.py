"""Linear algebra: matmul, einsum (as BLAS-shaped batched matmuls), tensordot, dot."""

import functools
import string

import numpy as np

from .. import dtypes as _dt
from ..prims import linalg as P
from ._convert import as_tensor, binary_args
from .shape import reshape, squeeze, swapaxes, transpose


def matmul(x, y):
    """Matrix product with numpy semantics (rank-1 operands, broadcasting batch dims)."""
    x, y = binary_args(x, y)
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError(
            f"matmul: operands must have rank >= 1, got shapes {tuple(x.shape)} and {tuple(y.shape)}"
        )
    if x.ndim == 1 and y.ndim == 1:
        if x.shape[0] != y.shape[0]:
            raise ValueError(
                f"matmul: shapes {tuple(x.shape)} and {tuple(y.shape)} are not aligned"
            )
        return reshape(P.matmul(reshape(x, (1, -1)), reshape(y, (-1, 1))), ())
    if x.ndim == 1:
        return squeeze(P.matmul(reshape(x, (1, -1)), y), -2)
    if y.ndim == 1:
        return squeeze(P.matmul(x, reshape(y, (-1, 1))), -1)
    if x.shape[-1] != y.shape[-2]:
        raise ValueError(f"matmul: shapes {tuple(x.shape)} and {tuple(y.shape)} are not aligned")
    return P.matmul(x, y)


def dot(x, y):
    return matmul(x, y)


def inner(x, y):
    from .reduction import sum

    return sum(x * y, axis=-1)


def outer(x, y):
    x, y = as_tensor(x), as_tensor(y)
    return reshape(x, (-1, 1)) * reshape(y, (1, -1))


def tensordot(a, b, axes=2):
    """Sum over the last ``axes`` axes of ``a`` and first of ``b`` (or explicit axis lists)."""
    a, b = binary_args(a, b)
    if isinstance(axes, int):
        ax_a = list(range(a.ndim - axes, a.ndim))
        ax_b = list(range(axes))
    else:
        ax_a = [x % a.ndim for x in np.atleast_1d(axes[0]).tolist()]
        ax_b = [x % b.ndim for x in np.atleast_1d(axes[1]).tolist()]
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError(
                f"tensordot: axis {i} of {tuple(a.shape)} and axis {j} of {tuple(b.shape)} differ"
            )
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [i for i in range(b.ndim) if i not in ax_b]
    m = int(np.prod([a.shape[i] for i in free_a]))
    k = int(np.prod([a.shape[i] for i in ax_a]))
    n = int(np.prod([b.shape[i] for i in free_b]))
    am = reshape(transpose(a, free_a + ax_a), (m, k))
    bm = reshape(transpose(b, ax_b + free_b), (k, n))
    return reshape(P.matmul(am, bm), [a.shape[i] for i in free_a] + [b.shape[i] for i in free_b])


# ---- einsum ------------------------------------------------------------------------------------


def _einsum_error(equation, shapes, msg):
    return ValueError(
        f"einsum {equation!r} with operand shapes {[tuple(s) for s in shapes]}: {msg}"
    )


def _parse_equation(equation, shapes):
    """Terms with ``...`` replaced by fresh letters, and the output term (numpy's implicit
    output when there is no ``->``: the ellipsis dims, then the letters used once, sorted)."""
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise _einsum_error(equation, shapes, "more than one '->'")
    lhs, out = eq.split("->") if "->" in eq else (eq, None)
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise _einsum_error(
            equation, shapes, f"the equation names {len(terms)} operands, got {len(shapes)}"
        )
    letters = set(c for c in eq if c.isalpha())
    if (
        any(not (c.isalpha() or c in ",.->") for c in eq)
        or eq.replace("...", "").count(".")
        or (out and out.count("...") > 1)
    ):
        raise _einsum_error(
            equation, shapes, "use letters, ',', '->' and at most one '...' per term"
        )
    free = [c for c in string.ascii_letters if c not in letters]
    n_ell = 0
    for t, s in zip(terms, shapes):
        if "..." in t:
            k = len(s) - (len(t) - 3)
            if k < 0:
                raise _einsum_error(
                    equation, shapes, f"term {t!r} has more indices than its operand has dims"
                )
            n_ell = max(n_ell, k)
    ell = "".join(free[:n_ell])
    expanded = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            k = len(s) - (len(t) - 3)
            t = t.replace("...", ell[n_ell - k :])
        if len(t) != len(s):
            raise _einsum_error(
                equation, shapes, f"term {t!r} has {len(t)} indices for an operand of rank {len(s)}"
            )
        expanded.append(t)
    if out is None:
        counts = {}
        for c in lhs:
            if c.isalpha():
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1))
    else:
        out = out.replace("...", ell)
        present = set("".join(expanded))
        for c in out:
            if c not in present:
                raise _einsum_error(equation, shapes, f"output index {c!r} appears in no operand")
        if len(set(out)) != len(out):
            raise _einsum_error(equation, shapes, f"repeated output index in {out!r}")
    return expanded, out


@functools.lru_cache(maxsize=512)
def _contraction_path(terms, out, shapes):
    """opt_einsum's pairwise contraction order for these terms and shapes (cached)."""
    import opt_einsum

    views = [np.lib.stride_tricks.as_strided(np.zeros(()), s, (0,) * len(s)) for s in shapes]
    path, _ = opt_einsum.contract_path(",".join(terms) + "->" + out, *views, optimize="auto")
    return tuple(tuple(p) for p in path)


def _diagonal(x, t):
    """Take the diagonal over every index repeated within term ``t`` (e.g. 'ii->i')."""
    from .creation import arange
    from .indexing import getitem

    while len(set(t)) != len(t):
        c = next(ch for ch in t if t.count(ch) > 1)
        pos = [i for i, ch in enumerate(t) if ch == c]
        rest = [i for i in range(len(t)) if t[i] != c]
        x = transpose(x, rest + pos)
        n = x.shape[-1]
        # adjacent advanced indices at the end: numpy keeps the diagonal dim last
        x = getitem(x, (slice(None),) * len(rest) + (arange(n),) * len(pos))
        t = "".join(t[i] for i in rest) + c
    return x, t


def _sum_out(x, t, needed):
    """Sum ``x`` over the indices of ``t`` that are not ``needed`` later."""
    from .reduction import sum

    drop = tuple(i for i, c in enumerate(t) if c not in needed)
    if not drop:
        return x, t
    return sum(x, axis=drop), "".join(c for c in t if c in needed)


def _contract_pair(x, tx, y, ty, keep):
    """Contract x (indices tx) with y (ty), keeping the indices in ``keep``: one batched matmul
    [batch, x_only, summed] @ [batch, summed, y_only] (BLAS), or a broadcast product when no
    index is summed (outer and Hadamard products)."""
    x, tx = _sum_out(x, tx, keep | set(ty))
    y, ty = _sum_out(y, ty, keep | set(tx))
    size = {**dict(zip(tx, x.shape)), **dict(zip(ty, y.shape))}
    batch = [c for c in tx if c in ty and c in keep]
    summed = [c for c in tx if c in ty and c not in keep]
    x_only = [c for c in tx if c not in ty]
    y_only = [c for c in ty if c not in tx]
    res = batch + x_only + y_only
    dims = lambda cs: [size[c] for c in cs]  # noqa: E731
    if not summed:
        xt = reshape(
            transpose(x, [tx.index(c) for c in batch + x_only]),
            dims(batch + x_only) + [1] * len(y_only),
        )
        yt = reshape(
            transpose(y, [ty.index(c) for c in batch + y_only]),
            dims(batch) + [1] * len(x_only) + dims(y_only),
        )
        return xt * yt, "".join(res)
    m, k, n = (int(np.prod(dims(cs))) for cs in (x_only, summed, y_only))
    # Batch axes stay separate: matmul walks strided batches itself, while merging them into
    # one axis would force a transposed copy of each operand (e.g. "ijhc,ikhc->ihjk").
    lead = tuple(dims(batch))
    xm = reshape(transpose(x, [tx.index(c) for c in batch + x_only + summed]), lead + (m, k))
    ym = reshape(transpose(y, [ty.index(c) for c in batch + summed + y_only]), lead + (k, n))
    return reshape(P.matmul(xm, ym), dims(res)), "".join(res)


def einsum(equation, *operands):
    """Einstein summation (numpy.einsum semantics: ``...``, implicit output, repeated indices
    within a term take diagonals, size-1 dims broadcast), evaluated as a sequence of batched
    matmuls (BLAS) in the contraction order chosen by opt_einsum.

    Args:
        equation: e.g. ``"bij,bjk->bik"``.
        operands: tensors, one per term (dtypes are promoted).
    """
    from .elementwise import astype

    ops_ = [as_tensor(o) for o in operands]
    dtype = ops_[0].dtype if ops_ else None
    for o in ops_[1:]:
        dtype = _dt.promote_types(dtype, o.dtype)
    ops_ = [astype(o, dtype) for o in ops_]
    shapes = [tuple(o.shape) for o in ops_]
    terms, out = _parse_equation(equation, shapes)
    for i, (o, t) in enumerate(zip(ops_, terms)):
        ops_[i], terms[i] = _diagonal(o, t)
    size = {}
    for o, t in zip(ops_, terms):
        for c, d in zip(t, o.shape):
            if size.get(c, 1) not in (1, d) and d != 1:
                raise _einsum_error(equation, shapes, f"index {c!r} has sizes {size[c]} and {d}")
            size[c] = max(size.get(c, 1), d)
    for i, (o, t) in enumerate(zip(ops_, terms)):
        # a size-1 dim broadcasts: drop it from this operand, the index lives on in the others
        drop = [j for j, c in enumerate(t) if o.shape[j] == 1 and size[c] != 1]
        if drop:
            ops_[i] = reshape(o, [d for j, d in enumerate(o.shape) if j not in drop])
            terms[i] = "".join(c for j, c in enumerate(t) if j not in drop)
    if len(ops_) > 2:
        path = _contraction_path(tuple(terms), out, tuple(tuple(o.shape) for o in ops_))
    else:
        path = ((0, 1),) if len(ops_) == 2 else ()
    for step in path:
        picked = [(ops_.pop(i), terms.pop(i)) for i in sorted(step, reverse=True)][::-1]
        keep = set(out).union(*terms)
        x, tx = picked[0]
        if len(picked) == 1:
            x, tx = _sum_out(x, tx, keep)
        for j, (y, ty) in enumerate(picked[1:], start=2):
            later = keep.union(*[t for _, t in picked[j:]])
            x, tx = _contract_pair(x, tx, y, ty, later)
        ops_.append(x)
        terms.append(tx)
    (x,), (tx,) = ops_, terms
    x, tx = _sum_out(x, tx, set(out))
    x = transpose(x, [tx.index(c) for c in out]) if tx != out else x
    shape = tuple(size[c] for c in out)
    if tuple(x.shape) != shape:  # an output index that only ever had size 1
        x = reshape(x, shape)
    return x


# ---- dense solvers and factorizations ----------------------------------------------------------


def _matrix_arg(x, name):
    """``x`` as a float/complex tensor of rank >= 2 with square trailing axes, and the dtype to
    cast results back to (LAPACK has no half precision: float16/bfloat16 compute in float32)."""
    from .elementwise import astype

    x = as_tensor(x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(
            f"{name}: expected a square matrix or a batch of them [..., n, n], got shape {tuple(x.shape)}"
        )
    if x.dtype in (_dt.float32, _dt.float64, _dt.complex64, _dt.complex128):
        return x, None
    if _dt.is_floating(x.dtype):
        return astype(x, _dt.float32), x.dtype
    if x.dtype.kind in "biu":
        return astype(x, _dt.float32), None
    raise TypeError(f"{name}: unsupported dtype {x.dtype} (shape {tuple(x.shape)})")


def _back(x, dtype):
    from .elementwise import astype

    return x if dtype is None else astype(x, dtype)


def _rhs_args(a, b, name):
    """Promote ``a`` [..., n, n] and ``b`` to one dtype; ``b`` as [..., n, k] plus whether it was
    a (batch of) vector(s): b is a vector when ``b.ndim == 1`` or ``b.shape == a.shape[:-1]``
    (``torch.linalg.solve``'s rule)."""
    from .elementwise import astype

    a, b = as_tensor(a), as_tensor(b)
    a, back = _matrix_arg(a, name)
    if b.ndim == 0:
        raise ValueError(
            f"{name}: right-hand side must have rank >= 1, got shape {tuple(b.shape)} for matrix {tuple(a.shape)}"
        )
    d = _dt.promote_types(a.dtype, b.dtype)
    if not _dt.is_inexact(d) or d in (_dt.float16, _dt.bfloat16):
        d = _dt.float32
    a, b = (a if a.dtype == d else astype(a, d)), (b if b.dtype == d else astype(b, d))
    n = a.shape[-1]
    vector = b.ndim == 1 or tuple(b.shape) == tuple(a.shape[:-1])
    if vector:
        if b.shape[-1] != n:
            raise ValueError(
                f"{name}: vector right-hand side of shape {tuple(b.shape)} does not match matrix {tuple(a.shape)}"
            )
        b = reshape(b, (*b.shape, 1))
    elif b.shape[-2] != n:
        raise ValueError(
            f"{name}: right-hand side of shape {tuple(b.shape)} does not match matrix {tuple(a.shape)} "
            f"(expected [..., {n}] or [..., {n}, k])"
        )
    try:
        np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    except ValueError:
        raise ValueError(
            f"{name}: batch shapes of {tuple(a.shape)} and {tuple(b.shape)} cannot be broadcast"
        ) from None
    return a, b, vector, back


def solve(a, b):
    """Solve ``a @ x = b``.

    Args:
        a: [..., n, n] invertible matrices.
        b: [..., n, k] right-hand sides (batch axes broadcast against a's), or vectors: [n],
            or [..., n] with exactly a's batch shape (``torch.linalg.solve``'s rule).

    Returns:
        x with the shape of ``b`` (batch axes broadcast). Singular ``a`` raises LinAlgError.
    """
    a, b, vector, back = _rhs_args(a, b, "solve")
    x = P.solve(a, b)
    return _back(squeeze(x, -1) if vector else x, back)


def solve_triangular(a, b, lower=True, transpose=False):
    """Solve ``A @ x = b`` (or ``A^T @ x = b`` with ``transpose``) where ``A`` is the lower
    (``lower=True``) or upper triangle of ``a`` [..., n, n]; the other triangle is not read.

    ``b`` is [..., n, k] or [..., n] as in :func:`solve`; returns x of b's shape.
    """
    a, b, vector, back = _rhs_args(a, b, "solve_triangular")
    if transpose:
        a, lower = swapaxes(a, -1, -2), not lower
    x = P.triangular_solve(a, b, lower=bool(lower))
    return _back(squeeze(x, -1) if vector else x, back)


def inv(a):
    """Inverse of ``a`` [..., n, n] -> [..., n, n]; singular ``a`` raises LinAlgError."""
    a, back = _matrix_arg(a, "inv")
    return _back(P.inv(a), back)


inverse = inv


def cholesky(a, upper=False):
    """Cholesky factor of Hermitian positive-definite ``a`` [..., n, n]: lower ``L`` with
    ``a = L @ L^H`` (or upper ``U = L^H`` with ``a = U^H @ U`` when ``upper``).

    Only the lower triangle of ``a`` is read. Derivatives treat ``a`` as Hermitian: the
    cotangent is Hermitian and tangents are made Hermitian (Murray 2016, arXiv:1602.07527),
    as in PyTorch and JAX. A matrix that is not positive definite raises LinAlgError.
    """
    from .elementwise import conj

    a, back = _matrix_arg(a, "cholesky")
    low = P.cholesky(a)
    return _back(conj(swapaxes(low, -1, -2)) if upper else low, back)


def slogdet(a):
    """Sign and log of the absolute determinant of ``a`` [..., n, n]: ``(sign, logabsdet)``, both
    [...]; ``sign`` is +-1 (real ``a``), a unit complex number (complex ``a``) or 0 (singular
    ``a``); ``logabsdet`` is real. ``det = sign * exp(logabsdet)`` without overflow."""
    from .creation import ones_like, zeros_like
    from .elementwise import complex as _complex
    from .elementwise import exp, imag, isfinite, not_equal, real, where

    a, back = _matrix_arg(a, "slogdet")
    ld = P.logdet(a)  # log|det| + i arg(det), one LU factorization
    logabs = real(ld)
    if _dt.is_complex(a.dtype):
        phase = exp(_complex(zeros_like(logabs), imag(ld)))
        return where(isfinite(logabs), phase, 0), logabs
    one = ones_like(logabs)
    sign = where(not_equal(imag(ld), 0), -one, one)  # arg(det) is 0 or pi
    sign = where(isfinite(logabs), sign, 0)
    return _back(sign, back), _back(logabs, back)


def det(a):
    """Determinant of ``a`` [..., n, n] -> [...].

    A composite ``exp(log det a)`` of one LU factorization (its derivative, ``g * det *
    inv(a)^T``, follows from the chain rule); 0 for singular ``a``.
    """
    from .elementwise import exp, real

    a, back = _matrix_arg(a, "det")
    d = exp(P.logdet(a))
    return d if _dt.is_complex(a.dtype) else _back(real(d), back)


def logdet(a):
    """``log det a`` [..., n, n] -> [...]: real for real ``a`` (NaN where the determinant is
    negative, as in torch.logdet), the principal complex logarithm for complex ``a``."""
    from .elementwise import imag, not_equal, real, where

    a, back = _matrix_arg(a, "logdet")
    ld = P.logdet(a)
    if _dt.is_complex(a.dtype):
        return ld
    return _back(where(not_equal(imag(ld), 0), float("nan"), real(ld)), back)
