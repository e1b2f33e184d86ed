"""Pads the state with ghost cells on both faces of every active axis."""

from diffsci import core
from diffsci.core import ops

from ..registry import lookup
from .neumann import Neumann
from .periodic import Periodic
from .symmetry import Symmetry
from .wall import Wall

__all__ = ["BoundaryManager", "define_boundary"]

_boundary_dict = {"Neumann": Neumann, "Wall": Wall, "Periodic": Periodic, "Symmetry": Symmetry}
_FACES = (("x_min", "x_max"), ("y_min", "y_max"), ("z_min", "z_max"))


def define_boundary(config):
    """Build the boundary named by ``config['type']``."""
    return lookup(_boundary_dict, config["type"], "boundary type")(config)


@core.jit_class
class BoundaryManager:
    """The boundaries of all active axes (MindFlow's ``BoundaryManager``).

    Args:
        config (dict): ``boundary_conditions`` section, faces ``x_min`` .. ``z_max``.
        mesh_info (MeshInfo): active axes and ``pad``.
    """

    def __init__(self, config, mesh_info):
        self.mesh_info = mesh_info
        self.head_list = [define_boundary(config[_FACES[a][0]]) for a in mesh_info.active_axis]
        self.tail_list = [define_boundary(config[_FACES[a][1]]) for a in mesh_info.active_axis]

    def fill_boundarys(self, pri_var):
        """Pad ``pri_var`` ``[5, nx, ny, nz]`` to ``[5, nx + 2 pad, ...]`` on active axes.

        Axes are padded in order, so the ghosts of later axes include the earlier axes'
        ghost cells (corners are filled).
        """
        pad = self.mesh_info.pad
        for i in self.mesh_info.active_axis:
            head = self.head_list[i].fill_values_head(pri_var, i, pad)
            tail = self.tail_list[i].fill_values_tail(pri_var, i, pad)
            pri_var = ops.concatenate([head, pri_var, tail], axis=i + 1)
        return pri_var
