"""Time integrators, picked by ``config['type']``."""

from .base import Integrator as Integrator
from .euler import Euler as Euler
from .runge_kutta3 import RungeKutta3 as RungeKutta3

_integrator_dict = {"RungeKutta3": RungeKutta3, "Euler": Euler}


def define_integrator(config):
    """Build the integrator named by ``config['type']``."""
    cls = _integrator_dict.get(config["type"])
    if cls is None:
        raise ValueError(
            f"integrator type {config['type']!r} is unknown; accepted values: "
            f"{', '.join(_integrator_dict)}"
        )
    return cls()
