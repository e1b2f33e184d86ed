"""Fluid materials, picked by ``config['type']``."""

from ..registry import lookup
from .base import Material as Material
from .ideal_gas import IdealGas as IdealGas

_material_dict = {"IdealGas": IdealGas}


def define_material(config):
    """Build the material named by ``config['type']``."""
    return lookup(_material_dict, config["type"], "material type")(config)
