"""Initial states built on the mesh: the Riemann problem (shock tube) along one axis."""

import numpy as np

from diffsci import core

from .utils import cal_con_var

__all__ = ["riemann_initial_state"]


def riemann_initial_state(mesh_info, material, left, right, x0, axis=0, dtype=core.float64):
    """Conservative state of a Riemann problem: ``left`` for ``x < x0``, ``right`` for ``x >= x0``.

    The shock-tube initial condition of Toro, Riemann Solvers, 3rd ed., sec. 4.3.3 (Sod, Lax,
    the 123 problem), set at the cell centres; the velocity is the component along ``axis``,
    the transverse velocities are 0.

    Args:
        mesh_info (MeshInfo): the mesh (``mesh_xyz`` gives the cell centres).
        material (Material): supplies the total energy.
        left, right: ``(rho, u, p)`` either side of the diaphragm.
        x0 (float): the diaphragm's coordinate along ``axis``.
        axis (int): 0, 1 or 2 (x, y, z).
        dtype: float64 or float32 (the cell centres are compared in it too).

    Returns:
        Tensor ``[5, nx, ny, nz]`` = (rho, rho u, rho v, rho w, E).
    """
    if axis not in (0, 1, 2):
        raise ValueError(f"axis must be 0, 1 or 2 (x, y, z), got {axis!r}")
    x = mesh_info.mesh_xyz(dtype)[axis].asnumpy()  # [nx, ny, nz]
    pri = np.zeros((5, *x.shape))  # [5, nx, ny, nz]
    for k, j in ((0, 0), (1 + axis, 1), (4, 2)):
        pri[k] = np.where(x < x0, left[j], right[j])
    return cal_con_var(core.tensor(pri).astype(dtype), material)
