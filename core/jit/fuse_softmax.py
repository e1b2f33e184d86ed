"""A jit pass for attention logits: ``softmax(a + b)`` over the last axis becomes one
``softmax_add`` equation.

Attention adds a pair bias or mask to its logits right before the softmax; as two equations
that is one more full read and write of the largest tensor of the model ([N, heads, N, N] in
triangle attention). The CPU backend registers a native kernel for ``softmax_add`` that adds
the bias row by row while the row is in cache (``core/backend/cpu_impls/nn.py``); elsewhere
its reference runs the add and then the softmax: the same work as the two equations.
"""

import numpy as np

from ..backend import kernels
from ..primitive import Primitive, ShapedArray
from ..prims.elementwise import add
from ..prims.softmax import softmax
from .ir import Eqn
from .lowering import deflowering

_MIN_SIZE = 4096  # elements of the logits: below this the unfused pair is as fast


def _reference(xp, a, b, axis):
    return softmax.impl(xp, xp.add(a, b), axis)


def _abstract(a, b, axis):
    shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    return ShapedArray(shape, a.dtype)


# Not registered in prims.ALL: it only exists after autodiff, inside compiled graphs.
softmax_add = Primitive("softmax_add", kernels.specialize("softmax_add", _reference), _abstract)
softmax_add.reference = _reference
deflowering(softmax_add, fresh=True)  # its result is a new array, reusable as a buffer


def _rows_vary(v, out_shape):
    return len(v.aval.shape) >= 1 and v.aval.shape[-1] == out_shape[-1]


def fuse_softmax_add(graph, backend=None):
    """Replace ``s = softmax(add(a, b), axis=-1)`` by ``softmax_add(a, b)`` when the sum is
    read by nothing else (float32/float64). ``backend`` is unused: whether the fused kernel
    runs natively is the backend's kernel's choice (``core.backend.kernels``)."""
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
        if e.prim is softmax:
            x = e.inputs[0]
            total = producer.get(x.id)
            shape = tuple(e.out.aval.shape)
            if (
                total is not None
                and total.prim is add
                and uses.get(x.id) == 1
                and e.params["axis"] == len(shape) - 1
                and int(np.prod(shape)) >= _MIN_SIZE
                and e.out.aval.dtype in (np.float32, np.float64)
                and all(v.aval.dtype == e.out.aval.dtype for v in total.inputs)
                and all(_rows_vary(v, shape) for v in total.inputs)
            ):
                replaced.add(id(total))
                new_eqns.append(Eqn(softmax_add, total.inputs, dict(e.params), e.out, e.tag))
                continue
        new_eqns.append(e)
    graph.eqns = [e for e in new_eqns if id(e) not in replaced]
    return graph
