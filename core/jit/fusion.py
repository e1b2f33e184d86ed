"""Elementwise fusion: chains of elementwise equations become one kernel.

On the CPU a fused kernel is a precompiled numexpr program (multi-threaded, one pass over
memory, no temporaries); on the GPU a cupy ElementwiseKernel. Small groups on small arrays
stay as plain numpy calls, where the per-call overhead of a kernel would dominate.
"""

import numpy as np

from .. import backend as _backend
from ..prims import elementwise as E
from ..primitive import Primitive, ShapedArray
from .ir import Eqn, Var

# primitive -> (numexpr template, C template, positions that must be plain names)
# Templates that repeat an argument require it to be a name, so no work is duplicated.
_TEMPLATES = {
    E.add: ("({0} + {1})", "({0} + {1})", ()),
    E.sub: ("({0} - {1})", "({0} - {1})", ()),
    E.mul: ("({0} * {1})", "({0} * {1})", ()),
    E.div: ("({0} / {1})", "({0} / {1})", ()),
    E.neg: ("(-{0})", "(-{0})", ()),
    E.exp: ("exp({0})", "exp({0})", ()),
    E.expm1: ("expm1({0})", "expm1({0})", ()),
    E.log: ("log({0})", "log({0})", ()),
    E.log1p: ("log1p({0})", "log1p({0})", ()),
    E.sqrt: ("sqrt({0})", "sqrt({0})", ()),
    E.sin: ("sin({0})", "sin({0})", ()),
    E.cos: ("cos({0})", "cos({0})", ()),
    E.tanh: ("tanh({0})", "tanh({0})", ()),
    E.abs: ("abs({0})", "fabs({0})", ()),
    E.logistic: ("(1 / (1 + exp(-{0})))", "(1 / (1 + exp(-{0})))", ()),
    E.pow: ("({0} ** {1})", "pow({0}, {1})", ()),
    E.maximum: ("where({0} > {1}, {0}, {1})", "max({0}, {1})", (0, 1)),
    E.minimum: ("where({0} < {1}, {0}, {1})", "min({0}, {1})", (0, 1)),
    E.select: ("where({0}, {1}, {2})", "({0} ? {1} : {2})", ()),
    E.greater: ("({0} > {1})", "({0} > {1})", ()),
    E.greater_equal: ("({0} >= {1})", "({0} >= {1})", ()),
    E.less: ("({0} < {1})", "({0} < {1})", ()),
    E.less_equal: ("({0} <= {1})", "({0} <= {1})", ()),
    E.equal: ("({0} == {1})", "({0} == {1})", ()),
    E.not_equal: ("({0} != {1})", "({0} != {1})", ()),
}
_OK_DTYPES = (np.dtype("float32"), np.dtype("float64"), np.dtype("bool"))
_MAX_INPUTS = 24
_SMALL = 4096  # elements: below this, only groups of >= 3 ops are worth a kernel call


class FusedKernel:
    """One fused elementwise expression over named inputs."""

    def __init__(self, numexpr_src, c_src, names, in_dtypes, out_dtype, n_ops):
        self.numexpr_src = numexpr_src
        self.c_src = c_src
        self.names = tuple(names)
        self.in_dtypes = tuple(in_dtypes)
        self.out_dtype = out_dtype
        self.n_ops = n_ops
        self._compiled = {}

    def compiled(self, backend):
        fn = self._compiled.get(backend.name)
        if fn is None:
            fn = backend.fuse_elementwise(self)
            self._compiled[backend.name] = fn
        return fn

    @property
    def name(self):
        return f"fused<{self.numexpr_src}>"

    def __repr__(self):
        return self.numexpr_src


def _fused_impl(xp, *arrays, kernel):
    backend = _backend.backend_of(arrays[0]) if arrays else _backend.current()
    return kernel.compiled(backend)(*arrays)


def _fused_abstract(*avals, kernel):
    shape = np.broadcast_shapes(*[a.shape for a in avals])
    return ShapedArray(shape, kernel.out_dtype)


# Not registered in prims.ALL: it only exists after autodiff, inside compiled graphs.
fused = Primitive("fused", _fused_impl, _fused_abstract)


def _fusable(e):
    if e.prim not in _TEMPLATES:
        return False
    if e.out.aval.dtype not in _OK_DTYPES:
        return False
    return all(v.aval.dtype in _OK_DTYPES for v in e.inputs)


def _float_dtype(e):
    dts = {v.aval.dtype for v in [*e.inputs, e.out] if v.aval.dtype.kind == "f"}
    return dts.pop() if len(dts) == 1 else (None if not dts else "mixed")


def fuse_elementwise(graph):
    """Replace chains of elementwise equations by ``fused`` equations."""
    consumers = {}
    for i, e in enumerate(graph.eqns):
        for k, v in enumerate(e.inputs):
            consumers.setdefault(v.id, []).append((i, k))
    out_ids = {v.id for v in graph.outputs}
    fusable = [_fusable(e) and _float_dtype(e) != "mixed" for e in graph.eqns]
    inline = [False] * len(graph.eqns)
    for i, e in enumerate(graph.eqns):
        if not fusable[i] or e.out.id in out_ids:
            continue
        cs = consumers.get(e.out.id, [])
        if len(cs) != 1:
            continue
        j, k = cs[0]
        c = graph.eqns[j]
        if not fusable[j] or k in _TEMPLATES[c.prim][2]:
            continue
        if c.out.aval.shape != e.out.aval.shape:
            continue  # inlining a smaller operand into a broadcast would repeat its work
        fe, fc = _float_dtype(e), _float_dtype(c)
        if fe is not None and fc is not None and fe != fc:
            continue
        inline[i] = True
    producer = {e.out.id: i for i, e in enumerate(graph.eqns)}
    new_eqns = []
    for i, e in enumerate(graph.eqns):
        if inline[i]:
            continue  # emitted by its consumer's group
        if not fusable[i]:
            new_eqns.append(e)
            continue
        group = []
        leaves = []
        expr = _build(e, graph.eqns, producer, inline, group, leaves)
        if expr is None or not _worth_it(e, len(group)):
            new_eqns.extend(graph.eqns[j] for j in sorted(group))
            continue
        names = [f"x{k}" for k in range(len(leaves))]
        ne_src = expr[0].format_map(_Names(names))
        c_src = expr[1].format_map(_Names(names))
        kernel = FusedKernel(ne_src, c_src, names, [v.aval.dtype for v in leaves], e.out.aval.dtype, len(group))
        new_eqns.append(Eqn(fused, leaves, {"kernel": kernel}, e.out, e.tag))
    graph.eqns = new_eqns
    return graph


class _Names(dict):
    def __init__(self, names):
        super().__init__()
        self.names = names

    def __missing__(self, key):
        return self.names[int(key[1:])]


def _build(e, eqns, producer, inline, group, leaves):
    """Expression (numexpr, C) for the tree rooted at ``e``; leaf placeholders are {Lk}."""
    group.append(producer[e.out.id])
    ne_t, c_t, _ = _TEMPLATES[e.prim]
    ne_args, c_args = [], []
    for v in e.inputs:
        j = producer.get(v.id)
        if j is not None and inline[j]:
            sub = _build(eqns[j], eqns, producer, inline, group, leaves)
            if sub is None:
                return None
            ne_args.append(sub[0])
            c_args.append(sub[1])
            continue
        try:
            k = next(i for i, leaf in enumerate(leaves) if leaf.id == v.id)
        except StopIteration:
            k = len(leaves)
            leaves.append(v)
            if len(leaves) > _MAX_INPUTS:
                return None
        ne_args.append("{L%d}" % k)
        c_args.append("{L%d}" % k)
    return ne_t.format(*ne_args), c_t.format(*c_args)


def _worth_it(e, n_ops):
    size = 1
    for d in e.out.aval.shape:
        size *= d
    if n_ops >= 3:
        return True
    return n_ops >= 2 and size >= _SMALL


__all__ = ["FusedKernel", "Var", "fuse_elementwise", "fused"]
