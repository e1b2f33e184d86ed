"""Random draws inside ``core.jit``: staged as graph equations so each call draws anew
(a draw made while tracing would otherwise be baked into the graph as a constant)."""

from .. import backend as _backend
from ..primitive import Primitive, ShapedArray, trace_stack

RANDOM_PRIMS = set()


def _draw(kind):
    def impl(xp, shape, dtype, **params):
        b = _backend.current()
        if kind == "normal":
            return b.normal(shape, dtype)
        if kind == "uniform":
            return b.uniform(shape, params["low"], params["high"], dtype)
        return b.randint(params["low"], params["high"], shape, dtype)

    prim = Primitive(f"random_{kind}", impl, lambda shape, dtype, **p: ShapedArray(shape, dtype), differentiable=False)
    RANDOM_PRIMS.add(prim)
    return prim


_PRIMS = {k: _draw(k) for k in ("normal", "uniform", "randint")}


def staged_draw(kind, shape, dtype, **params):
    """A tracer for a random draw if a jit trace is active, else None."""
    from .trace import JitTrace

    for t in reversed(trace_stack()):
        if type(t) is JitTrace:
            return t.process_nullary(_PRIMS[kind], dict(shape=tuple(shape), dtype=dtype, **params))
    return None
