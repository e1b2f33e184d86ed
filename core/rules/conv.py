"""Derivative, batching and lowering rules of ``unfold`` and ``fold`` (``core/prims/conv.py``).

Both primitives are linear and each is the other's transpose, so one transpose each gives the
VJP (and the JVP is the primitive applied to the tangent): derivatives of every order.
"""

from ..jit.lowering import deflowering
from ..prims.conv import fold, unfold
from ..vmap import batch_rules, to_front
from ._define import def_linear_unary


def _unfold_t(g, out, x, kernel, stride, dilation):
    spatial = tuple(x.shape[len(x.shape) - len(kernel) :])
    return fold(g, spatial=spatial, kernel=kernel, stride=stride, dilation=dilation)


def _fold_t(g, out, cols, spatial, kernel, stride, dilation):
    return unfold(g, kernel=kernel, stride=stride, dilation=dilation)


def_linear_unary(unfold, _unfold_t)
def_linear_unary(fold, _fold_t)


def _leading_batch(prim):
    """Both act on trailing axes only: the batch axis becomes one more leading axis."""

    def rule(args, bdims, **params):
        return prim(to_front(args[0], bdims[0]), **params), 0

    return rule


batch_rules[unfold] = _leading_batch(unfold)
batch_rules[fold] = _leading_batch(fold)


# ---- lowering: fold's result is a new array (jit may reuse it as a buffer); unfold's is not
# always: when its windows are already contiguous (a 1x1 kernel, stride 1) it returns a view of x
deflowering(fold, fresh=True)
