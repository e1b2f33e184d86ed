"""A jit pass for attention logits: ``softmax(a + b)`` over the last axis becomes one
``softmax_add`` equation on the CPU.

Attention adds a pair bias or mask to its logits right before the softmax; as two equations
that is one more full read and write of the largest tensor of the model ([N, heads, N, N] in
triangle attention). The fused native kernel adds the bias row by row while the row is in
cache (core.backend.cpu_kernels.softmax_add_last_axis).
"""

import numpy as np

from .. import backend as _backend
from ..backend import cc as _cc
from ..backend import cpu_kernels as _native
from ..primitive import Primitive, ShapedArray
from ..prims import elementwise as E
from ..prims import softmax as S
from .ir import Eqn

_MIN_SIZE = 4096  # elements of the logits: below this the unfused pair is as fast


def _impl(xp, a, b, axis):
    if xp is np:
        out = _native.softmax_add_last_axis(a, b)
        if out is not None:
            return out
    return S._softmax_impl(xp, a + b, axis)


def _abstract(a, b, axis):
    shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    return ShapedArray(shape, a.dtype)


# Not registered in prims.ALL: it only exists after autodiff, inside compiled graphs.
softmax_add = Primitive("softmax_add", _impl, _abstract)


def _rows_vary(v, out_shape):
    return len(v.aval.shape) >= 1 and v.aval.shape[-1] == out_shape[-1]


def fuse_softmax_add(graph, backend=None):
    """Replace ``s = softmax(add(a, b), axis=-1)`` by ``softmax_add(a, b)`` when the sum is
    read by nothing else (CPU with native kernels; float32/float64)."""
    backend = backend or _backend.current()
    if backend.array_type is not np.ndarray or not _cc.available():
        return graph
    uses = {}
    for e in graph.eqns:
        for v in e.inputs:
            uses[v.id] = uses.get(v.id, 0) + 1
    for v in graph.outputs:
        uses[v.id] = uses.get(v.id, 0) + 1
    producer = {e.out.id: e for e in graph.eqns}
    replaced = set()
    new_eqns = []
    for e in graph.eqns:
        if e.prim is S.softmax:
            x = e.inputs[0]
            add = producer.get(x.id)
            shape = tuple(e.out.aval.shape)
            if (
                add is not None
                and add.prim is E.add
                and uses.get(x.id) == 1
                and e.params["axis"] == len(shape) - 1
                and int(np.prod(shape)) >= _MIN_SIZE
                and e.out.aval.dtype in (np.float32, np.float64)
                and all(v.aval.dtype == e.out.aval.dtype for v in add.inputs)
                and all(_rows_vary(v, shape) for v in add.inputs)
            ):
                replaced.add(id(add))
                new_eqns.append(Eqn(softmax_add, add.inputs, dict(e.params), e.out, e.tag))
                continue
        new_eqns.append(e)
    graph.eqns = [e for e in new_eqns if id(e) not in replaced]
    return graph
