"""mindflow: CFD and physics-informed networks on the core engine, with MindFlow's API.

``from diffsci.mindflow import cfd``; the PINN subpackages ``mindflow.cell``, ``mindflow.core``
(MindFlow's name: losses, schedules, batched derivatives), ``mindflow.pde``, ``mindflow.pinn``,
``mindflow.utils``, ``mindflow.geometry``, ``mindflow.data``. As in MindFlow, their public
names are also reachable from the top level (``from diffsci.mindflow import MTLWeightedLoss,
load_yaml_config``); those subpackages are imported on first use (``mindflow.pde`` brings
sympy), so ``from diffsci import mindflow`` stays light.
"""

import importlib as _importlib
import types as _types

from . import cfd as cfd
from . import utils as utils
from .cfd.visualization import vis_1d as vis_1d
from .cfd.visualization import vis_2d as vis_2d
from .utils import load_yaml_config as load_yaml_config
from .utils import log_config as log_config
from .utils import log_timer as log_timer
from .utils import print_log as print_log

_LAZY_SUBPACKAGES = ("data", "geometry", "core", "pde", "cell", "pinn", "train")
# searched in this order for a top-level name (MindFlow's ``from .x import *`` order)
_FLAT = ("data", "geometry", "core", "pde", "cell", "cfd", "pinn", "train")


def __getattr__(name):
    """A subpackage (``mindflow.pde``) or one of its public names (``mindflow.PDEWithLoss``),
    imported on first use (PEP 562)."""
    if name in _LAZY_SUBPACKAGES:
        return _importlib.import_module(f"{__name__}.{name}")
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    for sub in _FLAT:
        try:
            module = _importlib.import_module(f"{__name__}.{sub}")
        except ModuleNotFoundError as err:
            if err.name == f"{__name__}.{sub}":  # that subpackage does not exist (yet)
                continue
            raise
        value = getattr(module, name, None)
        if value is not None and not isinstance(value, _types.ModuleType):
            globals()[name] = value
            return value
    raise AttributeError(
        f"module {__name__!r} has no attribute {name!r} (searched mindflow.utils and "
        f"{', '.join('mindflow.' + s for s in _FLAT)})"
    )
