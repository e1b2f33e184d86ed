"""Array-level VJPs of the most common primitives, for backward passes nobody differentiates.

When a node's cotangent, its output and every primal are concrete tensors, nothing above this
backward pass traces it (a grad of grad, jvp, vmap or jit would have made them tracers), so its
VJP can run on the numpy arrays directly: the same expressions as the rules next to each
primitive in ``core/prims``, without a Tensor, a bind and a dispatch per operation. On a chain of
small ops this removes a third of the backward pass's cost (bench W1).

Each rule is ``rule(g, out, *xs, needed) -> tuple`` of arrays (or None where not needed).
"""

from ..prims import elementwise as E
from .reverse import array_vjps


def _add(g, out, x, y, needed):
    return g, g


def _sub(g, out, x, y, needed):
    return g, (-g if needed[1] else None)


def _mul(g, out, x, y, needed):
    return (g * y if needed[0] else None), (g * x if needed[1] else None)


def _div(g, out, x, y, needed):
    gx = g / y
    return gx, (-(gx * out) if needed[1] else None)


array_vjps.update({
    E.add: _add,
    E.sub: _sub,
    E.mul: _mul,
    E.div: _div,
    E.neg: lambda g, out, x, needed: (-g,),
    E.exp: lambda g, out, x, needed: (g * out,),
    E.tanh: lambda g, out, x, needed: (g * (1 - out * out),),  # as tanh_backward computes it
    E.logistic: lambda g, out, x, needed: (g * (out * (1.0 - out)),),
})
