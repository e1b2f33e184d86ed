"""Abstract explicit time integrator over a right-hand side evaluated stage by stage."""

from abc import ABC, abstractmethod

__all__ = ["Integrator"]


class Integrator(ABC):
    """An explicit multistage scheme: ``number_of_stages`` calls of ``integrate``."""

    number_of_stages = 1

    @abstractmethod
    def integrate(self, con_var, init_con_var, rhs, timestep, stage):
        """State after ``stage`` given the current stage state, the step's start and the rhs."""
