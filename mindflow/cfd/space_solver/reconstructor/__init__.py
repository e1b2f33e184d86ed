"""Face reconstructors (MindFlow's ``space_solver.reconstructor``), plus WENO5-Z and TENO5."""

from __future__ import annotations

from ...registry import lookup
from .base import Reconstructor as Reconstructor
from .teno5 import TENO5 as TENO5
from .weno3 import WENO3 as WENO3
from .weno5 import WENO5 as WENO5
from .weno5z import WENO5Z as WENO5Z
from .weno7 import WENO7 as WENO7

_reconstructor_dict = {
    "WENO3": WENO3,
    "WENO5": WENO5,
    "WENO7": WENO7,
    "WENO5-Z": WENO5Z,
    "TENO5": TENO5,
}

# Beyond MindFlow (which always reconstructs conservative variables component-wise): the
# high-order schemes default to characteristic variables, which removes most of the
# post-shock oscillations; WENO3 is dissipative enough to stay component-wise.
_default_variables = {
    "WENO3": "conservative",
    "WENO5": "characteristic",
    "WENO7": "characteristic",
    "WENO5-Z": "characteristic",
    "TENO5": "characteristic",
}


def define_reconstructor(name):
    """The reconstructor class registered under ``name`` (config key ``reconstructor``).

    Raises:
        ValueError: for an unknown name, naming it and the accepted values.
    """
    return lookup(_reconstructor_dict, name, "space_solver.reconstructor")


def default_reconstruction_variables(name):
    """Default ``reconstruction_variables`` for reconstructor ``name``."""
    define_reconstructor(name)
    return _default_variables[name]


def reconstructor_names():
    """Names accepted by ``define_reconstructor``."""
    return tuple(_reconstructor_dict)
