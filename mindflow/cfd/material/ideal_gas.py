"""Calorically perfect ideal gas, ``p = (gamma - 1) rho e``."""

from diffsci import core
from diffsci.core import ops

from .base import Material

__all__ = ["IdealGas"]


@core.jit_class
class IdealGas(Material):
    """Ideal gas. ``pri_var`` is ``[5, ...]`` = (rho, u, v, w, p); results are ``[...]``.

    Args:
        config (dict): ``heat_ratio`` (gamma), ``gas_constant`` or ``specific_gas_constant``
            (R), plus the transport options of :class:`Material`.
    """

    def __init__(self, config):
        super().__init__(config)
        self.gamma = config["heat_ratio"]
        self.gas_constant = config.get("gas_constant", config.get("specific_gas_constant", 0.0))
        self.cp = self.gamma / (self.gamma - 1) * self.gas_constant

    def psi(self, pri_var):
        return pri_var[4] / pri_var[0]

    def grueneisen(self, pri_var):
        return self.gamma - 1

    def sound_speed(self, pri_var):
        return ops.sqrt(self.gamma * pri_var[4] / pri_var[0])

    def temperature(self, pri_var):
        return pri_var[4] / (pri_var[0] * self.gas_constant)

    def energy(self, pri_var):
        """Specific internal energy e."""
        return pri_var[4] / (pri_var[0] * (self.gamma - 1))

    def total_energy(self, pri_var):
        """Total energy per volume E = p / (gamma - 1) + rho |u|^2 / 2."""
        kinetic = pri_var[1] ** 2 + pri_var[2] ** 2 + pri_var[3] ** 2
        return pri_var[4] / (self.gamma - 1) + 0.5 * pri_var[0] * kinetic

    def total_enthalpy(self, pri_var):
        """Specific total enthalpy H = (E + p) / rho."""
        return (self.total_energy(pri_var) + pri_var[4]) / pri_var[0]
