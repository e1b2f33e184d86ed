"""Linear algebra: matmul, einsum (as BLAS-shaped batched matmuls), tensordot, dot."""

import functools

import numpy as np

from .. import dtypes as _dt
from ..prims import linalg as P
from ._convert import as_tensor, binary_args
from .shape import reshape, squeeze, transpose


def matmul(x, y):
    """Matrix product with numpy semantics (rank-1 operands, broadcasting batch dims)."""
    x, y = binary_args(x, y)
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError(f"matmul: operands must have rank >= 1, got shapes {tuple(x.shape)} and {tuple(y.shape)}")
    if x.ndim == 1 and y.ndim == 1:
        if x.shape[0] != y.shape[0]:
            raise ValueError(f"matmul: shapes {tuple(x.shape)} and {tuple(y.shape)} are not aligned")
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
            raise ValueError(f"tensordot: axis {i} of {tuple(a.shape)} and axis {j} of {tuple(b.shape)} differ")
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [i for i in range(b.ndim) if i not in ax_b]
    m = int(np.prod([a.shape[i] for i in free_a]))
    k = int(np.prod([a.shape[i] for i in ax_a]))
    n = int(np.prod([b.shape[i] for i in free_b]))
    am = reshape(transpose(a, free_a + ax_a), (m, k))
    bm = reshape(transpose(b, ax_b + free_b), (k, n))
    return reshape(P.matmul(am, bm), [a.shape[i] for i in free_a] + [b.shape[i] for i in free_b])


# ---- einsum ------------------------------------------------------------------------------------


def _parse_equation(equation, operands):
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
    else:
        lhs = eq
        counts = {}
        for c in lhs.replace(",", ""):
            counts[c] = counts.get(c, 0) + 1
        out = "".join(sorted(c for c, n in counts.items() if n == 1 and c != "."))
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: {equation!r} names {len(terms)} operands, got {len(operands)}")
    if "..." in eq:
        # give the ellipsis dims single-letter names that the equation does not use
        free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in eq]
        n_ell = max(op.ndim - (len(t) - 3) for t, op in zip(terms, operands) if "..." in t)
        ell = "".join(free[:n_ell])
        new_terms = []
        for t, op in zip(terms, operands):
            if "..." in t:
                k = op.ndim - (len(t) - 3)
                t = t.replace("...", ell[n_ell - k :])
            new_terms.append(t)
        terms = new_terms
        out = out.replace("...", ell)
    for t, op in zip(terms, operands):
        if len(t) != op.ndim:
            raise ValueError(f"einsum: term {t!r} has {len(t)} indices but operand has shape {tuple(op.shape)}")
        if len(set(t)) != len(t):
            raise ValueError(f"einsum: repeated index in term {t!r} (diagonals) is not supported")
    return terms, out


@functools.lru_cache(maxsize=512)
def _contraction_path(terms, out, shapes):
    import opt_einsum

    views = [np.lib.stride_tricks.as_strided(np.zeros(()), s, (0,) * len(s)) for s in shapes]
    path, _ = opt_einsum.contract_path(",".join(terms) + "->" + out, *views, optimize="auto")
    return tuple(path)


def _contract_pair(x, tx, y, ty, keep):
    """Contract operands x (indices tx) and y (ty), keeping the indices in ``keep``, as one
    batched matmul: [batch, x_only, summed] @ [batch, summed, y_only]."""
    batch = [c for c in tx if c in ty and c in keep]
    summed = [c for c in tx if c in ty and c not in keep]
    x_only = [c for c in tx if c not in ty]
    y_only = [c for c in ty if c not in tx]
    size = {**dict(zip(tx, x.shape)), **dict(zip(ty, y.shape))}
    for c in batch + summed:
        if dict(zip(tx, x.shape))[c] != dict(zip(ty, y.shape))[c]:
            raise ValueError(f"einsum: index {c!r} has sizes {dict(zip(tx, x.shape))[c]} and {dict(zip(ty, y.shape))[c]}")
    nb = int(np.prod([size[c] for c in batch]))
    m = int(np.prod([size[c] for c in x_only]))
    k = int(np.prod([size[c] for c in summed]))
    n = int(np.prod([size[c] for c in y_only]))
    xm = reshape(transpose(x, [tx.index(c) for c in batch + x_only + summed]), (nb, m, k))
    ym = reshape(transpose(y, [ty.index(c) for c in batch + summed + y_only]), (nb, k, n))
    out = P.matmul(xm, ym)
    res_idx = batch + x_only + y_only
    return reshape(out, [size[c] for c in res_idx]), "".join(res_idx)


def _sum_unique(x, t, needed):
    from .reduction import sum

    drop = [i for i, c in enumerate(t) if c not in needed]
    if not drop:
        return x, t
    return sum(x, axis=tuple(drop)), "".join(c for c in t if c not in needed)


def einsum(equation, *operands):
    """Einstein summation, evaluated as a sequence of batched matmuls (BLAS) along the
    contraction order chosen by opt_einsum. Supports ``...``; not repeated indices in a term."""
    ops_ = [as_tensor(o) for o in operands]
    if len(ops_) > 1:
        dtype = ops_[0].dtype
        for o in ops_[1:]:
            dtype = _dt.promote_types(dtype, o.dtype)
        from .elementwise import astype

        ops_ = [astype(o, dtype) for o in ops_]
    terms, out = _parse_equation(equation, ops_)
    operands = list(ops_)
    terms = list(terms)
    if len(operands) > 2:
        path = _contraction_path(tuple(terms), out, tuple(tuple(o.shape) for o in operands))
    else:
        path = ((0, 1),) if len(operands) == 2 else ()
    for pair in path:
        i, j = sorted(pair)[0], sorted(pair)[1] if len(pair) > 1 else None
        if j is None:
            continue
        y, ty = operands.pop(j), terms.pop(j)
        x, tx = operands.pop(i), terms.pop(i)
        rest = set(out).union(*[set(t) for t in terms])
        x, tx = _sum_unique(x, tx, rest | set(ty))
        y, ty = _sum_unique(y, ty, rest | set(tx))
        z, tz = _contract_pair(x, tx, y, ty, rest)
        operands.append(z)
        terms.append(tz)
    (x,), (tx,) = operands, terms
    x, tx = _sum_unique(x, tx, set(out))
    return transpose(x, [tx.index(c) for c in out]) if tx != out else x
