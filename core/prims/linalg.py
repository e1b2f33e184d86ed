"""Linear-algebra primitives. ``matmul`` takes operands of rank >= 2 with broadcasting batch
dimensions (``core.ops.matmul`` handles rank-1 operands by reshaping)."""

from ..autodiff.rules import defjvp, defvjp
from ..primitive import ShapedArray
from ..vmap import batch_rules, to_front
from ._define import broadcast_shapes, defprim


def _matmul_aval(x, y):
    if len(x.shape) < 2 or len(y.shape) < 2 or x.shape[-1] != y.shape[-2]:
        raise ValueError(f"matmul: shapes {tuple(x.shape)} and {tuple(y.shape)} are not aligned")
    batch = broadcast_shapes("matmul", x.shape[:-2], y.shape[:-2])
    return ShapedArray(batch + (x.shape[-2], y.shape[-1]), x.dtype)


matmul = defprim("matmul", lambda xp, x, y: xp.matmul(x, y), _matmul_aval)


def _mT(x):
    from .. import ops

    return ops.swapaxes(x, -1, -2)


defvjp(matmul, lambda g, out, x, y: (matmul(g, _mT(y)), matmul(_mT(x), g)))


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
