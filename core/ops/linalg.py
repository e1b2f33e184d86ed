"""Linear algebra: matmul, einsum (as BLAS-shaped batched matmuls), tensordot, dot."""

import functools
import string

import numpy as np

from .. import dtypes as _dt
from ..prims import linalg as prims_linalg
from ._convert import as_tensor, binary_args
from ._matrix import cast_back, matrix_arg
from .decomp import svdvals
from .reduction import sqrt_at_kink
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
        return reshape(prims_linalg.matmul(reshape(x, (1, -1)), reshape(y, (-1, 1))), ())
    if x.ndim == 1:
        return squeeze(prims_linalg.matmul(reshape(x, (1, -1)), y), -2)
    if y.ndim == 1:
        return squeeze(prims_linalg.matmul(x, reshape(y, (-1, 1))), -1)
    if x.shape[-1] != y.shape[-2]:
        raise ValueError(f"matmul: shapes {tuple(x.shape)} and {tuple(y.shape)} are not aligned")
    return prims_linalg.matmul(x, y)


def _contract_last(name, x, y, y_axis):
    """Sum over the last axis of ``x`` and axis ``y_axis`` of ``y`` (numpy.tensordot)."""
    if x.shape[-1] != y.shape[y_axis]:
        raise ValueError(
            f"{name}: shapes {tuple(x.shape)} and {tuple(y.shape)} are not aligned: "
            f"{x.shape[-1]} (last axis of the first) != {y.shape[y_axis]} "
            f"(axis {y_axis} of the second)"
        )
    return tensordot(x, y, axes=([x.ndim - 1], [y_axis % y.ndim]))


def dot(x, y):
    """numpy.dot: a product of scalars when either operand is 0-d; otherwise the sum over the
    last axis of ``x`` and the second-to-last axis of ``y`` (the only axis when ``y`` is 1-d).

    Shapes: [...a, k] . [k] -> [...a];  [...a, k] . [...b, k, n] -> [...a, ...b, n]
    (an outer product of the batch axes, unlike matmul, which broadcasts them).
    """
    x, y = binary_args(x, y)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    if x.ndim <= 2 and y.ndim <= 2:
        return matmul(x, y)  # the same as numpy.dot for these ranks, one BLAS call
    return _contract_last("dot", x, y, -1 if y.ndim == 1 else -2)


def inner(x, y):
    """numpy.inner: a product of scalars when either operand is 0-d; otherwise the sum over the
    last axes of both. Shapes: [...a, k], [...b, k] -> [...a, ...b]."""
    x, y = binary_args(x, y)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    return _contract_last("inner", x, y, -1)


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
    return reshape(
        prims_linalg.matmul(am, bm), [a.shape[i] for i in free_a] + [b.shape[i] for i in free_b]
    )


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
    if not batch:
        in_place = _contract_in_place(x, tx, y, ty, summed, size)
        if in_place is not None:
            return in_place
    # Batch axes stay separate: matmul walks strided batches itself, while merging them into
    # one axis would force a transposed copy of each operand (e.g. "ijhc,ikhc->ihjk").
    lead = tuple(dims(batch))
    xm = reshape(transpose(x, [tx.index(c) for c in batch + x_only + summed]), lead + (m, k))
    ym = reshape(transpose(y, [ty.index(c) for c in batch + summed + y_only]), lead + (k, n))
    return reshape(prims_linalg.matmul(xm, ym), dims(res)), "".join(res)


def _sandwich(t, summed):
    """``(P, S, Q)`` with ``t == P + S + Q`` when the ``summed`` indices sit next to each other
    in ``t`` (``S`` in ``t``'s order), else None."""
    pos = sorted(t.index(c) for c in summed)
    if pos[-1] - pos[0] != len(pos) - 1:
        return None
    return t[: pos[0]], t[pos[0] : pos[-1] + 1], t[pos[-1] + 1 :]


def _contract_in_place(x, tx, y, ty, summed, size):
    """The pair contraction without moving the larger operand, where the standard form
    [x_only, summed] @ [summed, y_only] would copy it into that order: a channel mixing
    "...ix,oi->...ox" (a weight applied along a middle axis) becomes ``w[o, i] @ x[P, i, Q]``,
    numpy broadcasting the matrix over P, instead of a transposed copy of x in and out. Only the
    smaller operand is rearranged. Returns ``(result, indices)`` or None (the standard form
    moves nothing big, or the summed indices of the larger operand are not adjacent)."""
    dims = lambda cs: [size[c] for c in cs]  # noqa: E731
    big_is_x = int(np.prod(x.shape)) >= int(np.prod(y.shape))
    big, tb, small, ts = (x, tx, y, ty) if big_is_x else (y, ty, x, tx)
    s_order = [c for c in tx if c in summed]  # the standard form's order of the summed axes
    standard = (
        list(tb) == [c for c in tb if c not in summed] + s_order
        if big_is_x
        else list(tb) == s_order + [c for c in tb if c not in summed]
    )
    if standard:
        return None
    parts = _sandwich(tb, summed)
    if parts is None:
        return None
    p_idx, s_idx, q_idx = parts
    a_only = [c for c in ts if c not in summed]
    k = int(np.prod(dims(s_idx)))
    n_a = int(np.prod(dims(a_only)))
    p_n, q_n = int(np.prod(dims(p_idx))), int(np.prod(dims(q_idx)))
    if not q_idx:  # big = [P, S]: [P, k] @ [k, a_only]
        am = reshape(transpose(small, [ts.index(c) for c in list(s_idx) + a_only]), (k, n_a))
        r = prims_linalg.matmul(reshape(big, (p_n, k)), am)
    else:  # [a_only, k] @ [P, k, Q], the matrix broadcast over P
        am = reshape(transpose(small, [ts.index(c) for c in a_only + list(s_idx)]), (n_a, k))
        r = prims_linalg.matmul(am, reshape(big, (p_n, k, q_n)))
    res = list(p_idx) + a_only + list(q_idx)
    return reshape(r, dims(res)), "".join(res)


def _sublist_equation(args):
    """numpy's interleaved form ``einsum(op0, sub0, op1, sub1, ..., [sub_out])`` (subscripts
    are lists of ints in [0, 52) and ``Ellipsis``) as ``(equation, operands)``."""

    def term(sub):
        out = []
        for i in sub:
            if i is Ellipsis:
                out.append("...")
            elif isinstance(i, (int, np.integer)) and 0 <= int(i) < len(string.ascii_letters):
                out.append(string.ascii_letters[int(i)])
            else:
                raise ValueError(
                    f"einsum: subscript {i!r} in {list(sub)} must be an int in [0, 52) or Ellipsis"
                )
        return "".join(out)

    operands, subs = list(args[0 : len(args) - len(args) % 2 : 2]), list(args[1::2])
    equation = ",".join(term(s) for s in subs)
    if len(args) % 2:
        equation += "->" + term(args[-1])
    return equation, operands


def einsum(equation, *operands):
    """Einstein summation (numpy.einsum semantics: ``...``, implicit output, repeated indices
    within a term take diagonals, size-1 dims broadcast, zero-length axes), evaluated as a
    sequence of batched matmuls (BLAS) in the contraction order chosen by opt_einsum.

    Args:
        equation: e.g. ``"bij,bjk->bik"``; or numpy's interleaved form
            ``einsum(x, [0, 1], y, [1, 2], [0, 2])``.
        operands: tensors, one per term (dtypes are promoted).
    """
    from .elementwise import astype

    if not isinstance(equation, str):
        equation, operands = _sublist_equation((equation, *operands))

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
            # size 1 broadcasts against anything, zero included (so no max(): 0 < 1)
            prev = size.get(c)
            if prev is None or prev == 1:
                size[c] = d
            elif d not in (1, prev):
                raise _einsum_error(equation, shapes, f"index {c!r} has sizes {prev} and {d}")
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


def _rhs_args(a, b, name):
    """Promote ``a`` [..., n, n] and ``b`` to one dtype; ``b`` as [..., n, k] plus whether it was
    a (batch of) vector(s): b is a vector when ``b.ndim == 1`` or ``b.shape == a.shape[:-1]``
    (``torch.linalg.solve``'s rule)."""
    from .elementwise import astype

    a, b = as_tensor(a), as_tensor(b)
    a, back = matrix_arg(a, name)
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
    x = prims_linalg.solve(a, b)
    return cast_back(squeeze(x, -1) if vector else x, back)


def solve_sylvester(a, b, q):
    """X with ``a @ X + X @ b = q`` (scipy.linalg.solve_sylvester), batched over leading axes.

    Args:
        a: [..., n, n]; b: [..., m, m]; q: [..., n, m].

    Solved as one [n*m, n*m] system in Kronecker form, ``(a (x) I + I (x) b^T) vec(X) =
    vec(q)`` (row-major vec): O((n m)^3), meant for small matrices; a composite, so it has
    derivatives of every order in all three arguments.
    """
    from .elementwise import astype
    from .shape import expand_dims

    a, back = matrix_arg(a, "solve_sylvester")
    b, _ = matrix_arg(b, "solve_sylvester")
    q = as_tensor(q)
    n, m = a.shape[-1], b.shape[-1]
    if q.ndim < 2 or tuple(q.shape[-2:]) != (n, m):
        raise ValueError(
            f"solve_sylvester: q of shape {tuple(q.shape)} does not match a {tuple(a.shape)} and "
            f"b {tuple(b.shape)} (expected [..., {n}, {m}])"
        )
    d = _dt.promote_types(_dt.promote_types(a.dtype, b.dtype), q.dtype)
    d = d if _dt.is_inexact(d) else _dt.float32
    a, b, q = (x if x.dtype == d else astype(x, d) for x in (a, b, q))
    eye_n, eye_m = _eye_like(n, d), _eye_like(m, d)
    # [..., i, k, j, l] = a_ij d_kl + d_ij b_lk
    k = expand_dims(a, (-3, -1)) * reshape(eye_m, (1, m, 1, m)) + reshape(
        eye_n, (n, 1, n, 1)
    ) * expand_dims(swapaxes(b, -1, -2), (-4, -2))
    batch = np.broadcast_shapes(tuple(k.shape[:-4]), tuple(q.shape[:-2]))
    k = reshape(k, (*k.shape[:-4], n * m, n * m))
    x = prims_linalg.solve(k, reshape(q, (*q.shape[:-2], n * m, 1)))
    return cast_back(reshape(x, (*batch, n, m)), back)


def _eye_like(n, dtype):
    from .creation import eye

    return eye(n, dtype=dtype)


def solve_banded(l_and_u, ab, b):
    """Solve ``a @ x = b`` for a banded ``a`` given in LAPACK band storage, as
    scipy.linalg.solve_banded: ``a[i, j] = ab[u + i - j, j]``.

    Args:
        l_and_u: ``(l, u)``, the numbers of sub- and super-diagonals.
        ab: [l + u + 1, n] the diagonals; b: [n] or [n, k].

    A composite (the dense matrix gathered from ``ab``, then :func:`solve`), so derivatives
    reach ``ab`` and ``b`` to every order; meant for moderate n.
    """
    from .creation import _const
    from .elementwise import where
    from .indexing import getitem

    lo, up = (int(v) for v in l_and_u)
    ab = as_tensor(ab)
    if ab.ndim != 2 or ab.shape[0] != lo + up + 1:
        raise ValueError(
            f"solve_banded: ab of shape {tuple(ab.shape)} does not hold l + u + 1 = "
            f"{lo + up + 1} diagonals for (l, u) = ({lo}, {up})"
        )
    n = ab.shape[1]
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    row = up + i - j
    inside = (row >= 0) & (row <= lo + up)
    full = getitem(ab, (np.clip(row, 0, lo + up), j))  # [n, n]
    return solve(where(_const(inside), full, 0), b)


def solve_triangular(a, b, lower=True, transpose=False):
    """Solve ``A @ x = b`` (or ``A^T @ x = b`` with ``transpose``) where ``A`` is the lower
    (``lower=True``) or upper triangle of ``a`` [..., n, n]; the other triangle is not read.

    ``b`` is [..., n, k] or [..., n] as in :func:`solve`; returns x of b's shape.
    """
    a, b, vector, back = _rhs_args(a, b, "solve_triangular")
    if transpose:
        a, lower = swapaxes(a, -1, -2), not lower
    x = prims_linalg.triangular_solve(a, b, lower=bool(lower))
    return cast_back(squeeze(x, -1) if vector else x, back)


def inv(a):
    """Inverse of ``a`` [..., n, n] -> [..., n, n]; singular ``a`` raises LinAlgError."""
    a, back = matrix_arg(a, "inv")
    return cast_back(prims_linalg.inv(a), back)


inverse = inv


def cholesky(a, upper=False):
    """Cholesky factor of Hermitian positive-definite ``a`` [..., n, n]: lower ``L`` with
    ``a = L @ L^H`` (or upper ``U = L^H`` with ``a = U^H @ U`` when ``upper``).

    Only the lower triangle of ``a`` is read. Derivatives treat ``a`` as Hermitian: the
    cotangent is Hermitian and tangents are made Hermitian (Murray 2016, arXiv:1602.07527),
    as in PyTorch and JAX. A matrix that is not positive definite raises LinAlgError.
    """
    from .elementwise import conj

    a, back = matrix_arg(a, "cholesky")
    low = prims_linalg.cholesky(a)
    return cast_back(conj(swapaxes(low, -1, -2)) if upper else low, back)


def slogdet(a):
    """Sign and log of the absolute determinant of ``a`` [..., n, n]: ``(sign, logabsdet)``, both
    [...]; ``sign`` is +-1 (real ``a``), a unit complex number (complex ``a``) or 0 (singular
    ``a``); ``logabsdet`` is real. ``det = sign * exp(logabsdet)`` without overflow."""
    from .creation import ones_like, zeros_like
    from .elementwise import complex as _complex
    from .elementwise import exp, imag, isfinite, not_equal, real, where

    a, back = matrix_arg(a, "slogdet")
    ld = prims_linalg.logdet(a)  # log|det| + i arg(det), one LU factorization
    logabs = real(ld)
    if _dt.is_complex(a.dtype):
        phase = exp(_complex(zeros_like(logabs), imag(ld)))
        return where(isfinite(logabs), phase, 0), logabs
    one = ones_like(logabs)
    sign = where(not_equal(imag(ld), 0), -one, one)  # arg(det) is 0 or pi
    sign = where(isfinite(logabs), sign, 0)
    return cast_back(sign, back), cast_back(logabs, back)


def det(a):
    """Determinant of ``a`` [..., n, n] -> [...].

    A composite ``exp(log det a)`` of one LU factorization (its derivative, ``g * det *
    inv(a)^T``, follows from the chain rule); 0 for singular ``a``.
    """
    from .elementwise import exp, real

    a, back = matrix_arg(a, "det")
    d = exp(prims_linalg.logdet(a))
    return d if _dt.is_complex(a.dtype) else cast_back(real(d), back)


def logdet(a):
    """``log det a`` [..., n, n] -> [...]: real for real ``a`` (NaN where the determinant is
    negative, as in torch.logdet), the principal complex logarithm for complex ``a``."""
    from .elementwise import imag, not_equal, real, where

    a, back = matrix_arg(a, "logdet")
    ld = prims_linalg.logdet(a)
    if _dt.is_complex(a.dtype):
        return ld
    return cast_back(where(not_equal(imag(ld), 0), float("nan"), real(ld)), back)


def matrix_power(a, n):
    """``a`` [..., m, m] to the integer power ``n``, as numpy.linalg.matrix_power: the identity
    for n = 0, powers of ``inv(a)`` for n < 0; by repeated squaring (O(log |n|) matmuls)."""
    from .creation import eye
    from .shape import broadcast_to

    if not isinstance(n, (int, np.integer)):
        raise TypeError(f"matrix_power: exponent must be an int, got {type(n).__name__}")
    a = as_tensor(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(
            f"matrix_power: expected square matrices [..., m, m], got {tuple(a.shape)}"
        )
    if n == 0:
        return broadcast_to(eye(a.shape[-1], dtype=a.dtype), tuple(a.shape))
    if n < 0:
        a, n = inv(a), -n
    result = None
    while n:
        if n & 1:
            result = a if result is None else matmul(result, a)
        n >>= 1
        if n:
            a = matmul(a, a)
    return result


def multi_dot(arrays):
    """``arrays[0] @ arrays[1] @ ...`` as numpy.linalg.multi_dot: the first may be 1-d (a row)
    and the last 1-d (a column); the product order minimizes the scalar multiplications
    (the classic matrix-chain dynamic programme over the 2-d shapes)."""
    ts = [as_tensor(t) for t in arrays]
    if len(ts) < 2:
        raise ValueError(f"multi_dot: expected at least two arrays, got {len(ts)}")
    dims = [ts[0].shape[-2] if ts[0].ndim == 2 else 1]
    for t in ts:
        dims.append(t.shape[-1] if t.ndim >= 1 else 1)
    n = len(ts)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = float("inf")
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i, j):
        if i == j:
            return ts[i]
        k = split[i][j]
        return matmul(product(i, k), product(k + 1, j))

    return product(0, n - 1)


# ---- products: kron, cross -----------------------------------------------------------------------


def kron(a, b):
    """Kronecker product, as numpy.kron: the operand of lower rank gets leading size-1 axes,
    then ``out[i * b.shape + j] = a[i] * b[j]`` along every axis; shape ``a.shape * b.shape``."""
    a, b = binary_args(a, b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    # interleave: a as [a0, 1, a1, 1, ...], b as [1, b0, 1, b1, ...]; the product merges pairs
    ai = reshape(a, [d for s in sa for d in (s, 1)])
    bi = reshape(b, [d for s in sb for d in (1, s)])
    return reshape(ai * bi, [x * y for x, y in zip(sa, sb)])


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (or 2-vectors, as numpy.cross) along ``axisa`` of ``a`` and
    ``axisb`` of ``b`` (``axis`` sets all three); the other axes broadcast.

    Returns:
        3-vectors along ``axisc`` when either input has length 3 (a 2-vector has z = 0), or
        the z component alone [...] when both have length 2.
    """
    from .shape import moveaxis, stack

    a, b = binary_args(a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"cross: inputs must be vectors, got shapes {tuple(a.shape)} and {tuple(b.shape)}"
        )
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(
            f"cross: vectors must have length 2 or 3, got {na} (axis {axisa} of the first) and "
            f"{nb} (axis {axisb} of the second)"
        )
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    z = a0 * b1 - a1 * b0
    if na == 2 and nb == 2:
        return z
    a2 = a[..., 2] if na == 3 else None
    b2 = b[..., 2] if nb == 3 else None
    # a missing z component is 0 (at least one of a2, b2 exists, so x and y are tensors)
    x = (a1 * b2 if b2 is not None else 0) - (a2 * b1 if a2 is not None else 0)
    y = (a2 * b0 if a2 is not None else 0) - (a0 * b2 if b2 is not None else 0)
    return moveaxis(stack([x, y, z], axis=-1), -1, axisc)


# ---- norms ---------------------------------------------------------------------------------------
_MATRIX_ORDS = (None, "fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf"))


def _abs2(x):
    """|x|^2, smooth also at 0 for complex x (abs itself has a kink there)."""
    from .elementwise import imag, real

    if _dt.is_complex(x.dtype):
        return real(x) * real(x) + imag(x) * imag(x)
    return x * x


def _vector_norm(x, ord, axes, keepdims):
    from .elementwise import abs, equal, not_equal, where
    from .reduction import amax, amin, sum

    if ord is None or ord == 2 or ord == "fro":
        return sqrt_at_kink(sum(_abs2(x), axis=axes, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(
            f"norm: invalid order {ord!r} for vectors (axis {axes}, shape {tuple(x.shape)})"
        )
    if ord == float("inf"):
        return amax(abs(x), axis=axes, keepdims=keepdims)
    if ord == -float("inf"):
        return amin(abs(x), axis=axes, keepdims=keepdims)
    if ord == 0:  # the number of nonzero entries (no derivative)
        from .elementwise import astype

        dt = _dt.real_dtype(x.dtype) if _dt.is_inexact(x.dtype) else _dt.default_float
        return sum(astype(not_equal(x, 0), dt), axis=axes, keepdims=keepdims)
    if ord == 1:
        return sum(abs(x), axis=axes, keepdims=keepdims)
    # At the zero vector the root has an infinite slope: the subgradient 0 is used, and the
    # vector is replaced by ones first so that no derivative of |x|^p at 0 is evaluated either.
    zero = equal(amax(abs(x), axis=axes, keepdims=True), 0)
    s = sum(abs(where(zero, 1.0, x)) ** ord, axis=axes, keepdims=True)
    out = where(zero, 0.0, s ** (1.0 / ord))
    return out if keepdims else squeeze(out, axes)


def _matrix_norm(x, ord, axes, keepdims):
    from .elementwise import abs
    from .reduction import amax, amin, sum
    from .shape import expand_dims

    if ord not in _MATRIX_ORDS:
        raise ValueError(f"norm: invalid order {ord!r} for matrices (one of {_MATRIX_ORDS})")
    r, c = axes
    if ord is None or ord == "fro":
        out = sqrt_at_kink(sum(_abs2(x), axis=axes))
    else:
        rest = [i for i in range(x.ndim) if i not in (r, c)]
        m = transpose(x, [*rest, r, c])  # [..., rows, cols]
        if ord in ("nuc", 2, -2):
            s = svdvals(m)
            out = sum(s, axis=-1) if ord == "nuc" else (amax if ord == 2 else amin)(s, axis=-1)
        elif ord in (1, -1):  # max/min absolute column sum
            out = (amax if ord == 1 else amin)(sum(abs(m), axis=-2), axis=-1)
        else:  # +-inf: max/min absolute row sum
            out = (amax if ord > 0 else amin)(sum(abs(m), axis=-1), axis=-1)
    return expand_dims(out, tuple(sorted(axes))) if keepdims else out


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm, as numpy.linalg.norm.

    Args:
        x: a tensor.
        ord: vector norms (``axis`` an int, or ``x`` 1-d): None/2, 1, inf, -inf, 0 (count of
            nonzeros), any other p (``sum(|x|^p)^(1/p)``). Matrix norms (``axis`` a pair, or
            ``x`` 2-d): None/'fro', 'nuc' (sum of singular values), 2 / -2 (largest / smallest
            singular value), 1 / -1 (max / min absolute column sum), inf / -inf (rows).
        axis: None (all of a 1-d or 2-d ``x``; with ``ord=None`` the 2-norm of any ``x``
            flattened), an int, or a tuple of axes (two for matrix norms; more with
            ``ord=None`` for the 2-norm over all of them).
        keepdims: keep the reduced axes with size 1.

    Derivatives: at a kink (the zero vector or matrix for the 2- and p-norms) the conventional
    subgradient 0 is used, also for the second derivative; nuclear and spectral norms
    differentiate through the singular values.
    """
    from ._convert import normalize_axes

    x = as_tensor(x)
    if axis is None:
        if ord is None:
            return _vector_norm(x, None, tuple(range(x.ndim)), keepdims)
        if x.ndim not in (1, 2):
            raise ValueError(
                f"norm: ord={ord!r} needs a 1-d or 2-d input or an explicit axis, got shape {tuple(x.shape)}"
            )
        axis = tuple(range(x.ndim))
    axes = normalize_axes(axis, x.ndim, "norm")  # checked and sorted
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        rows, cols = (int(a) % x.ndim for a in axis)  # the order says which axis holds rows
        return _matrix_norm(x, ord, (rows, cols), keepdims)
    if ord is None:
        return _vector_norm(x, None, axes, keepdims)
    raise ValueError(f"norm: ord={ord!r} needs one or two axes, got axis={axis}")
