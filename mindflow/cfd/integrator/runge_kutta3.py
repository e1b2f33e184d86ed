"""Strong-stability-preserving third-order Runge-Kutta (Shu & Osher 1988, eq. 2.18)."""

from diffsci import core

from .base import Integrator

__all__ = ["RungeKutta3"]


@core.jit_class
class RungeKutta3(Integrator):
    """SSP-RK3: convex combinations of forward Euler stages (TVD under CFL <= 1)."""

    number_of_stages = 3

    def integrate(self, con_var, init_con_var, rhs, timestep, stage):
        if stage == 0:
            return con_var + timestep * rhs
        if stage == 1:
            return 0.75 * init_con_var + 0.25 * (con_var + timestep * rhs)
        return init_con_var / 3.0 + (2.0 / 3.0) * (con_var + timestep * rhs)
