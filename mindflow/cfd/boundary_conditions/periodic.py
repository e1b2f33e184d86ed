"""Periodic boundary: ghost cells wrap around to the opposite side."""

from diffsci import core
from diffsci.core import ops

from .base import Boundary

__all__ = ["Periodic"]


@core.jit_class
class Periodic(Boundary):
    """Periodic boundary: head ghosts are the last ``pad`` cells, tail ghosts the first."""

    def fill_values_head(self, pri_var, axis, pad_size):
        n = pri_var.shape[axis + 1]
        return ops.slice_axis(pri_var, axis + 1, n - pad_size, n)

    def fill_values_tail(self, pri_var, axis, pad_size):
        return ops.slice_axis(pri_var, axis + 1, 0, pad_size)
