"""Graph passes of ``core.jit``. Each takes a Graph and returns a Graph; ``verify()`` runs after
every pass (``run_passes``)."""

import numpy as np

from .. import backend as _backend
from ..prims.elementwise import add, convert, div, mul, neg, sub
from ..prims.reduction import reduce_sum
from ..prims.shape import broadcast_to, reshape, transpose
from .ir import Eqn, Graph, Var


# ---- dead code ----------------------------------------------------------------------------------
def dead_code(graph):
    """Drop equations whose result is never used."""
    live = {v.id for v in graph.outputs}
    kept = []
    for e in reversed(graph.eqns):
        if e.out.id in live:
            kept.append(e)
            for v in e.inputs:
                live.add(v.id)
    graph.eqns = kept[::-1]
    return graph


# ---- common subexpressions --------------------------------------------------------------------
def _param_key(params):
    try:
        key = tuple(sorted(params.items()))
        hash(key)
        return key
    except TypeError:
        return None


def common_subexpressions(graph):
    """Merge equations with the same primitive, inputs and params (recomputed work is kept
    apart: merging it with the forward pass would undo recompute's memory saving)."""
    seen = {}
    mapping = {}
    kept = []
    for e in graph.eqns:
        e.inputs = [mapping.get(v.id, v) for v in e.inputs]
        pk = _param_key(e.params)
        if pk is None or not e.inputs:  # nullary equations are random draws: never merged
            kept.append(e)
            continue
        key = (e.prim, tuple(v.id for v in e.inputs), pk, e.tag)
        prev = seen.get(key)
        if prev is not None:
            mapping[e.out.id] = prev
            continue
        seen[key] = e.out
        kept.append(e)
    graph.eqns = kept
    graph.outputs = [mapping.get(v.id, v) for v in graph.outputs]
    return graph


# ---- constant folding ----------------------------------------------------------------------------
_FOLD_LIMIT = 1 << 16  # don't materialize big constants at compile time (e.g. broadcasts)


def fold_constants(graph):
    """Evaluate equations whose inputs are all constants, when the result is small."""
    kept = []
    mapping = {}
    for e in graph.eqns:
        e.inputs = [mapping.get(v.id, v) for v in e.inputs]
        if (
            e.inputs
            and all(v.const is not None for v in e.inputs)
            and e.out.aval.shape is not None
            and _size(e.out.aval.shape) <= _FOLD_LIMIT
        ):
            arrays = [v.const for v in e.inputs]
            xp = _backend.backend_of(arrays[0]).xp
            value = e.prim.impl(xp, *arrays, **e.params)
            value = xp.asarray(value)
            mapping[e.out.id] = Var(e.out.aval, const=value)
            continue
        kept.append(e)
    graph.eqns = kept
    graph.outputs = [mapping.get(v.id, v) for v in graph.outputs]
    return graph


def _size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# ---- algebraic simplification ----------------------------------------------------------------------
def _is_const_value(v, value):
    if v.const is None:
        return False
    c = v.const
    if c.size > 64:
        if not all(st == 0 for st in c.strides):
            return False
        c = c.reshape(-1)[:1]  # a broadcast scalar (all strides 0): one element tells all
    try:
        return bool((np.asarray(c) == value).all())
    except TypeError:
        return False


def simplify(graph):
    """Identities that tracing leaves behind: x*1, x+0, x-0, x/1, neg(neg x), no-op reshapes,
    transposes, broadcasts and casts, reshape of reshape, transpose of transpose."""
    producer = {}
    mapping = {}
    kept = []
    for e in graph.eqns:
        e.inputs = [mapping.get(v.id, v) for v in e.inputs]
        alias = _simplify_one(e, producer)
        if alias is not None:
            mapping[e.out.id] = alias
            continue
        producer[e.out.id] = e
        kept.append(e)
    graph.eqns = kept
    graph.outputs = [mapping.get(v.id, v) for v in graph.outputs]
    return graph


def _same(v, out):
    return v.aval.shape == out.aval.shape and v.aval.dtype == out.aval.dtype


def _simplify_one(e, producer):
    p, ins, out = e.prim, e.inputs, e.out
    if p is mul:
        x, y = ins
        if _is_const_value(y, 1) and _same(x, out):
            return x
        if _is_const_value(x, 1) and _same(y, out):
            return y
    elif p is add:
        x, y = ins
        if _is_const_value(y, 0) and _same(x, out):
            return x
        if _is_const_value(x, 0) and _same(y, out):
            return y
    elif p is sub and _is_const_value(ins[1], 0) and _same(ins[0], out):
        return ins[0]
    elif p is div and _is_const_value(ins[1], 1) and _same(ins[0], out):
        return ins[0]
    elif p is neg:
        src = producer.get(ins[0].id)
        if src is not None and src.prim is neg:
            return src.inputs[0]
    elif p in (reshape, broadcast_to, convert) and _same(ins[0], out):
        return ins[0]
    elif p is transpose:
        if tuple(e.params["perm"]) == tuple(range(len(out.aval.shape))):
            return ins[0]
        src = producer.get(ins[0].id)
        if src is not None and src.prim is transpose:
            inner, outer = src.params["perm"], e.params["perm"]
            e.inputs = [src.inputs[0]]
            e.params = {"perm": tuple(inner[i] for i in outer)}
            if e.params["perm"] == tuple(range(len(out.aval.shape))):
                return src.inputs[0]
    elif p is reshape:
        src = producer.get(ins[0].id)
        if src is not None and src.prim is reshape:
            e.inputs = [src.inputs[0]]
            if _same(src.inputs[0], out):
                return src.inputs[0]
    elif p is reduce_sum and not e.params["axes"] and _same(ins[0], out):
        return ins[0]
    return None


def run_passes(graph, passes=None, backend=None):
    """The default pipeline for ``backend`` (default: the current device); each pass is
    followed by ``verify()``."""
    import functools

    from .fuse_softmax import fuse_softmax_add
    from .fusion import fuse_elementwise

    if passes is None:  # an empty sequence means "no passes" (the raw trace)
        passes = (
            simplify,
            fold_constants,
            common_subexpressions,
            simplify,
            dead_code,
            functools.partial(fuse_softmax_add, backend=backend),
            functools.partial(fuse_elementwise, backend=backend),
            dead_code,
        )
    for fn in passes:
        graph = fn(graph)
        graph.verify()
    return graph


__all__ = [
    "Eqn",
    "Graph",
    "common_subexpressions",
    "dead_code",
    "fold_constants",
    "run_passes",
    "simplify",
]
