"""Riemann solvers (MindFlow's ``riemann_computer``): Rusanov, HLL, HLLC, Roe."""

from ...registry import lookup
from .base import RiemannComputer as RiemannComputer
from .hll import HLL as HLL
from .hllc import HLLC as HLLC
from .roe import Roe as Roe
from .rusanov import Rusanov as Rusanov

# In sorted order: the error message lists the accepted values as they stand here.
_riemann_dict = {"HLL": HLL, "HLLC": HLLC, "Roe": Roe, "Rusanov": Rusanov}


def define_riemann_computer(name):
    """The Riemann solver class registered under `name` (config key ``riemann_computer``).

    Raises:
        ValueError: unknown name; the message names it and the accepted values.
    """
    return lookup(_riemann_dict, name, "space_solver.riemann_computer")


__all__ = ["HLL", "HLLC", "RiemannComputer", "Roe", "Rusanov", "define_riemann_computer"]
