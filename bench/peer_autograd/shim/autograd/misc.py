"""``autograd.misc.flatten``: a pytree of arrays as one vector, and back."""

import numpy as np

from diffsci import core
from diffsci.core import tree as _tree

from ._core import to_tensor


def flatten(value):
    leaves, treedef = _tree.flatten(value)
    leaves = [to_tensor(v) for v in leaves]
    shapes = [tuple(v.shape) for v in leaves]
    sizes = [int(np.prod(s)) for s in shapes]
    flat = (
        core.ops.concatenate([core.ops.reshape(v, (-1,)) for v in leaves])
        if leaves
        else core.tensor(np.zeros(0))
    )

    def unflatten(vector):
        out, start = [], 0
        for shape, size in zip(shapes, sizes):
            out.append(core.ops.reshape(vector[start : start + size], shape))
            start += size
        return _tree.unflatten(treedef, out)

    return flat, unflatten


def const_graph(fun, *args, **kwargs):
    raise AttributeError("[peer-missing] autograd.misc.const_graph: autograd internals")
