"""Constants of electromagnetic simulation, SI units (MindElec's ``mindelec/common/constants.py``;
the same CODATA values as ``mindelec.fdtd.constants``)."""

import math

from ..fdtd.constants import C0, EPS0, MU0

__all__ = ["EPS", "LIGHT_SPEED", "MU", "PI"]

LIGHT_SPEED = C0  # m/s
MU = MU0  # H/m
EPS = EPS0  # F/m
PI = math.pi
