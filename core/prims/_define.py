"""Declaring primitives, and the shape rules many of them share."""

import numpy as np

from ..primitive import Primitive, ShapedArray

ALL = []  # every primitive, in declaration order (coverage tests walk this list)


def defprim(name, impl, abstract, differentiable=True):
    prim = Primitive(name, impl, abstract, differentiable)
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
