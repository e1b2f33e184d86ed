"""Elementwise fusion: chains of elementwise equations become one kernel.

On the CPU a fused kernel over >= 4096 elements is a native C loop (``core.backend.cpu_fusion``:
one pass over memory, vectorized, transcendental functions from glibc's vector math library)
when a C compiler is available; otherwise, and for tiny arrays, a numexpr program. On the GPU
it is a cupy ElementwiseKernel. Small groups on small arrays stay as plain numpy calls, where
the per-call overhead of a kernel would dominate.
"""

import numpy as np

from .. import backend as _backend
from ..backend import cc as _cc
from ..primitive import Primitive, ShapedArray
from .ir import Eqn, Var
from .lowering import deflowering, lowerings

# What a primitive looks like inside a fused kernel (its numexpr and C templates, the inputs
# its templates repeat, the math functions it calls) is its lowering record
# (core/jit/lowering.py), registered by its family in core/rules.
_OK_DTYPES = (np.dtype("float32"), np.dtype("float64"), np.dtype("bool"))
_MAX_INPUTS = 24
# Longest chain of operations inlined into one expression. numexpr parses its program with
# Python's parser, which rejects more than 200 nested parentheses ("too many nested
# parentheses"; a template nests up to 4 levels per operation), and deep C expressions only
# slow the compiler down: a longer chain (an unrolled time loop) is split into several kernels.
_MAX_DEPTH = 32
_SMALL = 4096  # elements: below this, only groups of >= 3 ops are worth a kernel call
_CPU_MIN = 1 << 20  # elements: smaller CPU arrays stay on numpy (see _worth_it)


class FusedKernel:
    """One fused elementwise expression over named inputs."""

    def __init__(
        self, numexpr_src, c_src, names, in_dtypes, out_dtype, n_ops, native=False, math=()
    ):
        self.numexpr_src = numexpr_src  # None when numexpr lacks a function (erf)
        self.native = native  # CPU: a native C loop (core.backend.cpu_fusion), not numexpr
        self.c_src = c_src
        self.math = tuple(math)  # the C math functions c_src calls (exp, erf, fabs ...)
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
        return f"fused<{self}>"

    def __repr__(self):
        return self.numexpr_src if self.numexpr_src is not None else self.c_src


def _fused_impl(xp, *arrays, kernel):
    backend = _backend.backend_of(arrays[0]) if arrays else _backend.current()
    return kernel.compiled(backend)(*arrays)


def _fused_abstract(*avals, kernel):
    shape = np.broadcast_shapes(*[a.shape for a in avals])
    return ShapedArray(shape, kernel.out_dtype)


# Not registered in prims.ALL: it only exists after autodiff, inside compiled graphs.
fused = Primitive("fused", _fused_impl, _fused_abstract)
deflowering(fused, fresh=True)  # codegen calls the compiled kernel itself, with out=


def _size(v):
    size = 1
    for d in v.aval.shape:
        size *= d
    return size


def _native_cpu(e, on_gpu):
    """Whether a kernel rooted at ``e`` would be a native C loop (CPU, compiler, large)."""
    return not on_gpu and _size(e.out) >= _SMALL and _cc.available()


def _fusable(e, on_gpu=True):
    rec = lowerings.get(e.prim)
    if rec is None or rec.c is None:
        return False
    # numexpr calls transcendental functions one element at a time, slower than numpy's SIMD
    # ufuncs: on the CPU they join only native C loops, and only where glibc vectorizes them
    # (core.backend.cc.VECTOR_MATH); on the GPU every template is fused
    if not on_gpu and (rec.transcendental or rec.numexpr is None):
        if not (_cc.VECTOR_MATH and _native_cpu(e, on_gpu)):
            return False
    if e.out.aval.dtype not in _OK_DTYPES:
        return False
    return all(v.aval.dtype in _OK_DTYPES for v in e.inputs)


def _float_dtype(e):
    dts = {v.aval.dtype for v in [*e.inputs, e.out] if v.aval.dtype.kind == "f"}
    return dts.pop() if len(dts) == 1 else (None if not dts else "mixed")


class _Pending:
    """An expression tree not yet emitted: sources with ``{L<k>}`` leaf placeholders."""

    # ne is None without a numexpr form; depth: the longest chain of operations in the tree
    __slots__ = ("c", "depth", "eqns", "leaves", "ne", "root")

    def __init__(self, root, ne, c, leaves, eqns, depth):
        self.root, self.ne, self.c, self.leaves, self.eqns = root, ne, c, leaves, eqns
        self.depth = depth


def _shift(src, offset, count):
    if src is None:
        return None
    # renumber leaf placeholders {L0..L(count-1)} by offset, highest first so names never clash
    for k in range(count - 1, -1, -1):
        src = src.replace(f"{{L{k}}}", f"{{L{k + offset}}}")
    return src


def fuse_elementwise(graph, backend=None):
    """Replace chains of elementwise equations by ``fused`` equations.

    Expressions grow greedily in program order: an elementwise result used exactly once, by
    another fusable equation of the same shape, is inlined into it (up to ``_MAX_INPUTS``
    leaves and chains of ``_MAX_DEPTH`` operations); everything else is emitted where it is
    needed. ``backend`` (default: the current
    device) decides whether transcendental functions are fused (GPU, native CPU loops) or not.
    """
    backend = backend or _backend.current()
    on_gpu = backend.fuses_everything
    consumers = {}
    for i, e in enumerate(graph.eqns):
        for v in e.inputs:
            consumers.setdefault(v.id, []).append(i)
    out_ids = {v.id for v in graph.outputs}
    pending = {}  # var id -> _Pending
    new_eqns = []

    def emit(pend):
        native = _native_cpu(pend.root, on_gpu)
        if len(pend.eqns) == 1 or not _worth_it(pend.root, len(pend.eqns), on_gpu, native):
            new_eqns.extend(sorted(pend.eqns, key=lambda e: order[id(e)]))
            return
        # merged sub-expressions may share leaves: give each distinct Var one name
        unique, names = [], []
        for v in pend.leaves:
            k = next((j for j, u in enumerate(unique) if u.id == v.id), None)
            if k is None:
                k = len(unique)
                unique.append(v)
            names.append(f"x{k}")
        ne_src = None if pend.ne is None else pend.ne.format_map(_Names(names))
        c_src = pend.c.format_map(_Names(names))
        root = pend.root
        kernel = FusedKernel(
            ne_src,
            c_src,
            [f"x{k}" for k in range(len(unique))],
            [v.aval.dtype for v in unique],
            root.out.aval.dtype,
            len(pend.eqns),
            native=native,
            math=sorted({f for eq in pend.eqns for f in lowerings[eq.prim].math}),
        )
        new_eqns.append(Eqn(fused, unique, {"kernel": kernel}, root.out, root.tag))

    order = {id(e): i for i, e in enumerate(graph.eqns)}
    for e in graph.eqns:
        if not (_fusable(e, on_gpu) and _float_dtype(e) != "mixed"):
            for v in e.inputs:
                if v.id in pending:
                    emit(pending.pop(v.id))
            new_eqns.append(e)
            continue
        rec = lowerings[e.prim]
        ne_t, c_t, name_only = rec.numexpr, rec.c, rec.name_args
        leaves, eqns, ne_args, c_args = [], [e], [], []
        depth = 1
        for k, v in enumerate(e.inputs):
            pend = pending.get(v.id)
            if (
                pend is not None
                and k not in name_only
                and _can_merge(pend, e)
                and len(leaves) + len(pend.leaves) <= _MAX_INPUTS
                and pend.depth < _MAX_DEPTH
            ):
                pending.pop(v.id)
                offset = len(leaves)
                ne_args.append(_shift(pend.ne, offset, len(pend.leaves)))
                c_args.append(_shift(pend.c, offset, len(pend.leaves)))
                leaves.extend(pend.leaves)
                eqns.extend(pend.eqns)
                depth = max(depth, pend.depth + 1)
                continue
            if pend is not None:
                emit(pending.pop(v.id))
            idx = next((j for j, leaf in enumerate(leaves) if leaf.id == v.id), None)
            if idx is None:
                idx = len(leaves)
                leaves.append(v)
            ne_args.append(f"{{L{idx}}}")
            c_args.append(f"{{L{idx}}}")
        ne_src = None if ne_t is None or None in ne_args else ne_t.format(*ne_args)
        pend = _Pending(e, ne_src, c_t.format(*c_args), leaves, eqns, depth)
        cs = consumers.get(e.out.id, [])
        if e.out.id not in out_ids and len(cs) == 1:
            pending[e.out.id] = pend  # its single consumer may inline it
        else:
            emit(pend)
    for pend in list(pending.values()):
        emit(pend)
    graph.eqns = new_eqns
    return graph


def _can_merge(pend, consumer):
    if pend.root.out.aval.shape != consumer.out.aval.shape:
        return False  # inlining a smaller operand into a broadcast would repeat its work
    fa, fb = _float_dtype(pend.root), _float_dtype(consumer)
    return fa is None or fb is None or fa == fb


class _Names(dict):
    def __init__(self, names):
        super().__init__()
        self.names = names

    def __missing__(self, key):
        return self.names[int(key[1:])]


def _worth_it(e, n_ops, on_gpu, native=False):
    size = _size(e.out)
    if native:
        return n_ops >= 2  # one vectorized pass instead of n_ops, at ~1 us per call
    if not on_gpu:
        # Mid-sized arrays: numexpr's threaded set-up (~100 us) outweighs its gain, and numpy
        # ufuncs writing into reused buffers (codegen's out=) match its single-thread speed; a
        # kernel pays off on large arrays, where its threads do (2x at 8M elements on 2
        # cores, slower at 262K), and on tiny ones, where one call replaces several.
        if size < _SMALL:
            return n_ops >= 3
        return n_ops >= 2 and size >= _CPU_MIN
    if n_ops >= 3:
        return True
    return n_ops >= 2 and size >= _SMALL


__all__ = ["FusedKernel", "Var", "fuse_elementwise", "fused"]
