"""Boundary conditions: each fills the ghost cells of one face of one axis.

A boundary receives primitive variables ``pri_var`` ``[5, ...]`` (already padded along the
axes handled before this one) and returns the ``pad_size`` ghost layers along ``axis`` for
the head (min) or tail (max) face, ordered as they sit in the padded array.
"""

from abc import ABC, abstractmethod

from diffsci.core import ops

__all__ = ["Boundary", "mirror_ghosts"]


def _layers(var, axis, start, stop):
    """``var[:, ..., start:stop, ...]`` along spatial ``axis`` (tensor axis ``axis + 1``)."""
    return ops.slice_axis(var, axis + 1, start, stop)


def mirror_ghosts(pri_var, axis, pad_size, head, sign, offset):
    """Ghost layers mirrored across the face: ``sign * var(mirror) + offset``.

    Args:
        pri_var (Tensor): ``[5, ...]`` primitive variables.
        axis (int): spatial axis 0/1/2.
        pad_size (int): ghost layers.
        head (bool): min face if true, max face otherwise.
        sign (list[float]): five per-variable factors.
        offset (list[float]): five per-variable offsets.

    Returns:
        Tensor ``[5, ...]`` with ``pad_size`` layers along ``axis``.
    """
    n = pri_var.shape[axis + 1]
    inner = _layers(pri_var, axis, 0, pad_size) if head else _layers(pri_var, axis, n - pad_size, n)
    mirrored = ops.flip(inner, axis + 1)
    shape = [5] + [1] * (pri_var.ndim - 1)
    s = ops.tensor(sign, dtype=pri_var.dtype).reshape(shape)
    o = ops.tensor(offset, dtype=pri_var.dtype).reshape(shape)
    return mirrored * s + o


class Boundary(ABC):
    """Abstract boundary.

    Args:
        config (dict): the face's section, e.g. ``{"type": "Wall", "velocity_x": 0.1}``.
    """

    def __init__(self, config):
        self.config = config

    @abstractmethod
    def fill_values_head(self, pri_var, axis, pad_size): ...

    @abstractmethod
    def fill_values_tail(self, pri_var, axis, pad_size): ...
