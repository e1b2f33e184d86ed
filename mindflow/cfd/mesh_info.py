"""Mesh information container (MindFlow's ``MeshInfo``): a uniform Cartesian grid."""

from diffsci import core
from diffsci.core import ops

__all__ = ["MeshInfo"]


@core.jit_class
class MeshInfo:
    """Uniform Cartesian mesh; axes beyond ``dim`` have one cell and no ghost cells.

    Args:
        config (dict): MindFlow's ``mesh`` section: ``dim``, ``nx``/``ny``/``nz``,
            ``x_range``/``y_range``/``z_range``, ``pad_size`` (ghost cells per side).

    Example:
        >>> m = MeshInfo({"dim": 1, "nx": 100, "x_range": [0, 1], "pad_size": 3})
        >>> m.cell_sizes[0]
        0.01
    """

    def __init__(self, config):
        self.dim = config.get("dim")
        self.nx = config.get("nx", 1)
        self.ny = config.get("ny", 1)
        self.nz = config.get("nz", 1)
        self.x_range = list(config.get("x_range", [0, 0]))
        self.y_range = list(config.get("y_range", [0, 0]))
        self.z_range = list(config.get("z_range", [0, 0]))
        self.pad = config.get("pad_size", 0)
        self.active_axis = list(range(self.dim))
        self.number_of_cells = [self.nx, self.ny, self.nz]
        ranges = (self.x_range, self.y_range, self.z_range)
        self.cell_sizes = [(r[1] - r[0]) / n for r, n in zip(ranges, self.number_of_cells)]

    def cell_edges(self, axis):
        """Face coordinates along ``axis`` as a Python list of ``n + 1`` floats."""
        lo = (self.x_range, self.y_range, self.z_range)[axis][0]
        d = self.cell_sizes[axis]
        return [lo + i * d for i in range(self.number_of_cells[axis] + 1)]

    def mesh_xyz(self, dtype=core.float32):
        """Cell-centre coordinates ``(mesh_x, mesh_y, mesh_z)``, each ``[nx, ny, nz]``."""
        axes = []
        for r, n, d in zip(
            (self.x_range, self.y_range, self.z_range), self.number_of_cells, self.cell_sizes
        ):
            axes.append(ops.linspace(r[0] + d / 2, r[1] - d / 2, n).astype(dtype))
        mesh_x = axes[0].reshape(-1, 1, 1) + ops.zeros((1, self.ny, self.nz), dtype=dtype)
        mesh_y = axes[1].reshape(1, -1, 1) + ops.zeros((self.nx, 1, self.nz), dtype=dtype)
        mesh_z = axes[2].reshape(1, 1, -1) + ops.zeros((self.nx, self.ny, 1), dtype=dtype)
        return mesh_x, mesh_y, mesh_z
