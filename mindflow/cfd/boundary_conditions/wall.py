"""No-slip wall moving with a given velocity."""

from diffsci import core

from .base import Boundary, mirror_ghosts

__all__ = ["Wall"]


@core.jit_class
class Wall(Boundary):
    """No-slip wall: mirrored ghosts with ``u_ghost = 2 u_wall - u``, so the face velocity is
    the wall's (``velocity_x``/``velocity_y``/``velocity_z``, default 0); rho and p mirror.
    """

    def __init__(self, config):
        super().__init__(config)
        self.velocities = [config.get(f"velocity_{c}", 0.0) for c in "xyz"]

    def _ghosts(self, pri_var, axis, pad_size, head):
        sign = [1.0, -1.0, -1.0, -1.0, 1.0]
        offset = [0.0, *(2.0 * v for v in self.velocities), 0.0]
        return mirror_ghosts(pri_var, axis, pad_size, head, sign, offset)

    def fill_values_head(self, pri_var, axis, pad_size):
        return self._ghosts(pri_var, axis, pad_size, True)

    def fill_values_tail(self, pri_var, axis, pad_size):
        return self._ghosts(pri_var, axis, pad_size, False)
