"""Sorting: sort, argsort, topk.

Indices come from the ``argsort`` primitive (no derivative); values are gathered from the
input with ``take_along_axis``, so their derivative (a scatter of the cotangent back to the
chosen positions) comes from the indexing primitives with no rule of its own.
"""

from ..prims import sort as prims_sort
from ._convert import as_tensor, normalize_axis
from .indexing import take_along_axis
from .shape import slice_axis


def argsort(x, axis=-1, descending=False):
    """Indices that sort ``x`` along ``axis`` (stable: ties keep their input order).

    Args:
        x: tensor of any shape ``[..., n, ...]``.
        axis: the axis to sort along.
        descending: largest first (NaN first, as in PyTorch) instead of smallest first.

    Returns:
        int64 tensor of the shape of ``x``.
    """
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError("argsort: cannot sort a 0-d tensor")
    return prims_sort.argsort(
        x, axis=normalize_axis(axis, x.ndim, "argsort"), descending=bool(descending)
    )


def sort(x, axis=-1, descending=False):
    """Sorted values and the indices that sort them (MindSpore ``ops.sort``).

    Args:
        x: tensor ``[..., n, ...]``.
        axis: the axis to sort along.
        descending: largest first.

    Returns:
        ``(values, indices)``, both of the shape of ``x``; ``values`` is differentiable.
    """
    x = as_tensor(x)
    idx = argsort(x, axis, descending)
    return take_along_axis(x, idx, axis), idx


def topk(x, k, axis=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) entries along ``axis``.

    Args:
        x: tensor ``[..., n, ...]``.
        k: how many entries to keep, ``0 <= k <= n``.
        axis: the axis to search along.
        largest: the largest entries (else the smallest).
        sorted: kept for API compatibility; the result is always sorted (largest first when
            ``largest``, else smallest first).

    Returns:
        ``(values, indices)``, each ``[..., k, ...]``; ``values`` is differentiable.
    """
    del sorted  # always sorted: a full argsort is what produces the indices
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError("topk: cannot take the top entries of a 0-d tensor")
    axis = normalize_axis(axis, x.ndim, "topk")
    n = x.shape[axis]
    if not 0 <= int(k) <= n:
        raise ValueError(
            f"topk: k={k} out of range for axis {axis} of size {n} (shape {tuple(x.shape)})"
        )
    idx = slice_axis(argsort(x, axis, descending=bool(largest)), axis, 0, int(k))
    return take_along_axis(x, idx, axis), idx
