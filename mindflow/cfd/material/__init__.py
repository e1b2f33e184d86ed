"""Fluid materials, picked by ``config['type']``."""

from .base import Material as Material
from .ideal_gas import IdealGas as IdealGas

_material_dict = {"IdealGas": IdealGas}


def define_material(config):
    """Build the material named by ``config['type']``."""
    cls = _material_dict.get(config["type"])
    if cls is None:
        raise ValueError(
            f"material type {config['type']!r} is unknown; accepted values: "
            f"{', '.join(_material_dict)}"
        )
    return cls(config)
