"""Forward mode: each :class:`JVPTracer` carries a primal and its tangent.

JVP rules receive the tangents of all inputs (``None`` where the input does not depend on the
differentiated arguments) and return the output tangent, written with core ops.
"""

from .. import dtypes as _dt
from ..primitive import PrimalTracer, Trace, bind, split_operands

jvp_rules = {}  # Primitive -> rule(tangents, out, *primals, **params) -> tangent or None


class JVPTracer(PrimalTracer):
    __slots__ = ("tangent",)

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    def __repr__(self):
        return f"JVPTracer(level={self._trace.level}, {self.concrete()!r})"


class JVPTrace(Trace):
    tracer_type = JVPTracer

    def process(self, prim, args, params):
        primals, tangents = split_tangents(self, args)
        out = bind(prim, primals, params)
        if not prim.differentiable or not _dt.is_inexact(out.dtype):
            return out
        rule = jvp_rules.get(prim)
        if rule is None:
            raise NotImplementedError(
                f"forward-mode derivative of primitive {prim.name} is not defined"
            )
        t = rule(tangents, out, *primals, **params)
        if t is None:
            return out
        return JVPTracer(self, out, fit_tangent(t, out))

    def __repr__(self):
        return f"JVPTrace(level={self.level})"


def split_tangents(trace, args):
    """``(primals, tangents)`` of ``args`` as ``trace`` sees them (see ``split_operands``)."""
    return split_operands(trace, args, "primal", "tangent")


def fit_tangent(t, out):
    """Broadcast and cast tangent ``t`` to the shape and dtype of primal output ``out``."""
    from ..ops.elementwise import astype, real
    from ..ops.shape import broadcast_to

    if t.shape != out.shape:
        t = broadcast_to(t, out.shape)
    if t.dtype != out.dtype:
        if _dt.is_complex(t.dtype) and not _dt.is_complex(out.dtype):
            t = real(t)
        if t.dtype != out.dtype:
            t = astype(t, out.dtype)
    return t
