"""Forward Euler."""

from diffsci import core

from .base import Integrator

__all__ = ["Euler"]


@core.jit_class
class Euler(Integrator):
    """First-order forward Euler, ``u + dt L(u)``."""

    number_of_stages = 1

    def integrate(self, con_var, init_con_var, rhs, timestep, stage):
        return con_var + timestep * rhs
