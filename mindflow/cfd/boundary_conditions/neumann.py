"""Zero-gradient (transmissive) boundary: ghost cells copy the boundary cell."""

from diffsci import core
from diffsci.core import ops

from .base import Boundary

__all__ = ["Neumann"]


@core.jit_class
class Neumann(Boundary):
    """Zero-gradient boundary (MindFlow's ``Neumann``): every ghost equals the edge cell."""

    def _fill(self, pri_var, axis, pad_size, index):
        edge = ops.slice_axis(pri_var, axis + 1, index, index + 1 if index >= 0 else None)
        return ops.concatenate([edge] * pad_size, axis=axis + 1)

    def fill_values_head(self, pri_var, axis, pad_size):
        return self._fill(pri_var, axis, pad_size, 0)

    def fill_values_tail(self, pri_var, axis, pad_size):
        return self._fill(pri_var, axis, pad_size, -1)
