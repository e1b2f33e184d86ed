"""Riemann solvers (MindFlow's ``riemann_computer``): Rusanov, HLL, HLLC, Roe."""

from .base import RiemannComputer as RiemannComputer
from .hll import HLL as HLL
from .hllc import HLLC as HLLC
from .roe import Roe as Roe
from .rusanov import Rusanov as Rusanov

_riemann_dict = {"Rusanov": Rusanov, "HLL": HLL, "HLLC": HLLC, "Roe": Roe}


def define_riemann_computer(name):
    """The Riemann solver class registered under `name` (config key ``riemann_computer``).

    Raises:
        ValueError: unknown name; the message names it and the accepted values.
    """
    try:
        return _riemann_dict[name]
    except (KeyError, TypeError):
        accepted = ", ".join(sorted(_riemann_dict))
        raise ValueError(
            f"space_solver.riemann_computer: unknown value {name!r}; accepted values: {accepted}"
        ) from None


__all__ = ["HLL", "HLLC", "RiemannComputer", "Roe", "Rusanov", "define_riemann_computer"]
