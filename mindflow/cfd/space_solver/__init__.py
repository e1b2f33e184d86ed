"""Spatial discretisation: Godunov convective flux, viscous flux, their divergence."""

from .godunov_flux import GodunovFlux as GodunovFlux
from .space_solver import SpaceSolver as SpaceSolver
