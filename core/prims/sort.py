"""Sorting primitive: ``argsort`` (stable, ascending or descending).

Sorted values are a composite (``take_along_axis`` of the input at these indices, see
``core/ops/sort.py``), so their derivative is a gather/scatter and needs no rule here.
``argsort`` itself has a zero derivative everywhere (integer output).
"""

import numpy as np

from ..primitive import ShapedArray
from ..vmap import axis_rule, batch_rules
from ._define import defprim


def _argsort_aval(x, axis, descending):
    if not 0 <= axis < len(x.shape):
        raise ValueError(f"argsort: axis {axis} out of range for shape {tuple(x.shape)}")
    return ShapedArray(x.shape, np.dtype("int64"))


def _stable_argsort(xp, x, axis):
    if xp is np:
        return np.argsort(x, axis=axis, kind="stable")
    return xp.argsort(x, axis=axis)  # cupy's argsort is always stable (radix sort)


def _argsort_impl(xp, x, axis, descending):
    if not descending:
        return _stable_argsort(xp, x, axis).astype(np.int64, copy=False)
    # Stable descending order (ties keep their input order, NaN first as in PyTorch):
    # sort the reversed array ascending, reverse the result, and map indices back.
    n = x.shape[axis]
    rev = xp.flip(_stable_argsort(xp, xp.flip(x, axis), axis), axis)
    return (n - 1 - rev).astype(np.int64, copy=False)


argsort = defprim("argsort", _argsort_impl, _argsort_aval, differentiable=False)
batch_rules[argsort] = axis_rule(argsort, ("axis",))
