"""mindflow: CFD on the core engine, with MindFlow's API (``from mindflow import cfd``)."""

from . import cfd as cfd
from .cfd.utils import load_yaml_config as load_yaml_config
from .cfd.visualization import vis_1d as vis_1d
from .cfd.visualization import vis_2d as vis_2d
