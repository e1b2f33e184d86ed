"""mindflow.cfd: a differentiable compressible finite-volume solver (MindFlow's API)."""

from .boundary_conditions import BoundaryManager as BoundaryManager
from .config import validate_config as validate_config
from .exact_riemann import exact_riemann as exact_riemann
from .initial_conditions import riemann_initial_state as riemann_initial_state
from .material import IdealGas as IdealGas
from .mesh_info import MeshInfo as MeshInfo
from .runtime import RunTime as RunTime
from .simulator import Simulator as Simulator
from .utils import cal_con_var as cal_con_var
from .utils import cal_flux as cal_flux
from .utils import cal_pri_var as cal_pri_var
from .utils import load_yaml_config as load_yaml_config
from .visualization import vis_1d as vis_1d
from .visualization import vis_2d as vis_2d

__all__ = [
    "BoundaryManager",
    "IdealGas",
    "MeshInfo",
    "RunTime",
    "Simulator",
    "cal_con_var",
    "cal_flux",
    "cal_pri_var",
    "exact_riemann",
    "load_yaml_config",
    "riemann_initial_state",
    "validate_config",
    "vis_1d",
    "vis_2d",
]
