"""Derivative, batching and lowering rules of ``softmax`` and ``log_softmax``
(``core/prims/softmax.py``).

The derivatives are written with core ops, so they differentiate again to any order.
"""

from ..jit.lowering import deflowering
from ..ops import elementwise as ops_elementwise
from ..ops import reduction as ops_reduction
from ..prims.softmax import log_softmax, softmax
from ..vmap import axis_rule, batch_rules
from ._define import defjvp, defvjp


def _sum(x, axis):
    return ops_reduction.sum(x, axis=axis, keepdims=True)


# ---- softmax: s = softmax(x) ---------------------------------------------------------------------
def _softmax_jacobian(v, s, axis):
    """``ds/dx`` applied to ``v``: ``s * (v - sum(s * v))``. The Jacobian ``diag(s) - s s^T`` is
    symmetric, so the same expression is the JVP (``v`` a tangent) and the VJP (a cotangent)."""
    return s * (v - _sum(s * v, axis))


defvjp(softmax, lambda g, s, x, axis: (_softmax_jacobian(g, s, axis),))
defjvp(softmax, lambda ts, s, x, axis: _softmax_jacobian(ts[0], s, axis))


# ---- log_softmax: out = x - logsumexp(x); its Jacobian is I - 1 s^T with s = exp(out) ----------
defvjp(log_softmax, lambda g, out, x, axis: (g - ops_elementwise.exp(out) * _sum(g, axis),))
defjvp(log_softmax, lambda ts, out, x, axis: ts[0] - _sum(ops_elementwise.exp(out) * ts[0], axis))


# ---- batching: the batch axis goes first, the softmax axis shifts by one ---------------------------
batch_rules[softmax] = axis_rule(softmax, ("axis",))
batch_rules[log_softmax] = axis_rule(log_softmax, ("axis",))


# ---- lowering: every implementation returns a new array, which jit may reuse as a buffer ---------
deflowering(softmax, fresh=True)
deflowering(log_softmax, fresh=True)
