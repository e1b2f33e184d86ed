"""Abstract fluid material with MindFlow's transport-property options."""

from abc import ABC, abstractmethod

__all__ = ["Material"]


class Material(ABC):
    """Base class: viscosity (constant or Sutherland) and conductivity (given or Prandtl).

    Args:
        config (dict): MindFlow's ``material`` section.
    """

    def __init__(self, config):
        self.gamma = None
        self.gas_constant = None
        self.cp = None
        self.given_dynamic_viscosity = config.get("dynamic_viscosity", 0.0)
        self.sutherland = config.get("sutherland", False)
        self.sutherland_parameters = config.get("sutherland_parameters")
        self.bulk_viscosity = config.get("bulk_viscosity", 0.0)
        self.given_thermal_conductivity = config.get("thermal_conductivity", 0.0)
        self.prandtl_conductivity = config.get("prandtl_conductivity", False)
        self.prandtl_number = config.get("prandtl_number", 0.0)

    def dynamic_viscosity(self, pri_var):
        """Dynamic viscosity: Sutherland's law of the temperature, or the given constant."""
        if self.sutherland:
            mu_0, temp_0, coe = self.sutherland_parameters
            temp = self.temperature(pri_var)
            return mu_0 * ((temp_0 + coe) / (temp + coe)) * (temp / temp_0) ** 1.5
        return self.given_dynamic_viscosity

    def thermal_conductivity(self, pri_var):
        """Heat conductivity: ``cp * mu / Pr`` with a Prandtl number, else the given constant."""
        if self.prandtl_conductivity:
            return self.cp * self.dynamic_viscosity(pri_var) / self.prandtl_number
        return self.given_thermal_conductivity

    @abstractmethod
    def sound_speed(self, pri_var): ...

    @abstractmethod
    def temperature(self, pri_var): ...

    @abstractmethod
    def energy(self, pri_var): ...

    @abstractmethod
    def total_energy(self, pri_var): ...

    @abstractmethod
    def total_enthalpy(self, pri_var): ...

    @abstractmethod
    def psi(self, pri_var): ...

    @abstractmethod
    def grueneisen(self, pri_var): ...
