"""Declaring primitives, and the shape rules many of them share."""

import numpy as np

from ..backend import kernels
from ..primitive import Primitive, ShapedArray

ALL = []  # every primitive, in declaration order (coverage tests walk this list)


def defprim(name, impl, abstract, differentiable=True):
    """Declare a primitive: ``impl(xp, *arrays, **params)`` is its reference implementation,
    written against the array namespace ``xp``; a backend's registered kernel for ``name``
    (``core.backend.kernels``) specializes it. ``prim.reference`` keeps the reference."""
    prim = Primitive(name, kernels.specialize(name, impl), abstract, differentiable)
    prim.reference = impl
    ALL.append(prim)
    return prim


def broadcast_shapes(name, *shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(
            f"{name}: shapes {', '.join(str(tuple(s)) for s in shapes)} cannot be broadcast together"
        ) from None


def same_aval(x, **params):
    return ShapedArray(x.shape, x.dtype)


def elementwise_aval(name, out_dtype=None):
    """Shape rule of an n-ary elementwise primitive (numpy broadcasting)."""

    def rule(*xs, **params):
        shape = broadcast_shapes(name, *[x.shape for x in xs])
        dtype = out_dtype if out_dtype is not None else xs[-1].dtype
        return ShapedArray(shape, dtype)

    return rule
