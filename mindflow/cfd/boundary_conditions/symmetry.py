"""Symmetry (slip) boundary: mirror image with the normal velocity reversed."""

from diffsci import core

from .base import Boundary, mirror_ghosts

__all__ = ["Symmetry"]


@core.jit_class
class Symmetry(Boundary):
    """Mirror the cells across the face and negate the velocity normal to it."""

    @staticmethod
    def _sign(axis):
        sign = [1.0] * 5
        sign[axis + 1] = -1.0
        return sign

    def fill_values_head(self, pri_var, axis, pad_size):
        return mirror_ghosts(pri_var, axis, pad_size, True, self._sign(axis), [0.0] * 5)

    def fill_values_tail(self, pri_var, axis, pad_size):
        return mirror_ghosts(pri_var, axis, pad_size, False, self._sign(axis), [0.0] * 5)
