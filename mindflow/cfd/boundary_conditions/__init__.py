"""Boundary conditions (Neumann, Periodic, Symmetry, Wall) and their manager."""

from .base import Boundary as Boundary
from .boundary_manager import BoundaryManager as BoundaryManager
from .boundary_manager import define_boundary as define_boundary
from .neumann import Neumann as Neumann
from .periodic import Periodic as Periodic
from .symmetry import Symmetry as Symmetry
from .wall import Wall as Wall
