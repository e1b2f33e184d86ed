"""Time integrators, picked by ``config['type']``."""

from ..registry import lookup
from .base import Integrator as Integrator
from .euler import Euler as Euler
from .runge_kutta3 import RungeKutta3 as RungeKutta3

_integrator_dict = {"RungeKutta3": RungeKutta3, "Euler": Euler}


def define_integrator(config):
    """Build the integrator named by ``config['type']``."""
    return lookup(_integrator_dict, config["type"], "integrator type")()
