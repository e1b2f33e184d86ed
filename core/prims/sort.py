"""Sorting primitive: ``argsort`` (stable, ascending or descending).

Sorted values are a composite (``take_along_axis`` of the input at these indices, see
``core/ops/sort.py``), so their derivative is a gather/scatter and needs no rule here.
``argsort`` itself has a zero derivative everywhere (integer output); its batching rule is in
``core/rules/sort.py``.
"""

import numpy as np

from ..primitive import ShapedArray
from ._define import defprim


def _argsort_aval(x, axis, descending):
    if not 0 <= axis < len(x.shape):
        raise ValueError(f"argsort: axis {axis} out of range for shape {tuple(x.shape)}")
    return ShapedArray(x.shape, np.dtype("int64"))


def _argsort_impl(xp, x, axis, descending):
    # kind="stable": numpy's default quicksort would not keep ties in order (cupy's radix
    # sort always does, and takes the same argument)
    if not descending:
        return xp.argsort(x, axis=axis, kind="stable").astype(np.int64, copy=False)
    # Stable descending order (ties keep their input order, NaN first as in PyTorch):
    # sort the reversed array ascending, reverse the result, and map indices back.
    n = x.shape[axis]
    rev = xp.flip(xp.argsort(xp.flip(x, axis), axis=axis, kind="stable"), axis)
    return (n - 1 - rev).astype(np.int64, copy=False)


argsort = defprim("argsort", _argsort_impl, _argsort_aval, differentiable=False)
