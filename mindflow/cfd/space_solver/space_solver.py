"""Semi-discrete right-hand side of the compressible Euler / Navier-Stokes equations."""

from diffsci import core
from diffsci.core import ops

from .godunov_flux import GodunovFlux

__all__ = ["SpaceSolver"]


@core.jit_class
class SpaceSolver:
    """``dU/dt = sum over active axes of -(F_{i+1/2} - F_{i-1/2}) / dx`` (finite volume).

    The face flux is the convective (Godunov) flux minus the viscous flux.

    Args:
        config (dict): ``space_solver`` section (``is_convective_flux``, ``convective_flux``,
            ``is_viscous_flux``, ``viscous_flux``).
        mesh_info (MeshInfo): the grid.
        material (Material): the fluid.
        net_dict (dict): passed to the Godunov flux (MindFlow's learnable-flux slot).
    """

    def __init__(self, config, mesh_info, material, net_dict=None):
        conv = config.get("convective_flux")
        use_conv = config.get("is_convective_flux", conv is not None)
        self.convective_flux_computer = None
        if use_conv and conv:
            conv = dict(conv)
            if config.get("positivity", False):
                conv.setdefault("positivity", True)
            self.convective_flux_computer = GodunovFlux(material, mesh_info, conv, net_dict)
        self.viscous_flux_computer = None
        if config.get("is_viscous_flux", False):
            from .viscous_flux import ViscousFlux

            self.viscous_flux_computer = ViscousFlux(
                material, mesh_info, config.get("viscous_flux") or {}
            )
        self.active_axis = mesh_info.active_axis
        self.cell_sizes = mesh_info.cell_sizes
        self.number_of_cells = mesh_info.number_of_cells

    def compute_rhs(self, con_var):
        """Right-hand side on the interior cells.

        Args:
            con_var (Tensor): padded conservative variables ``[5, nx + 2 pad, ...]``.

        Returns:
            Tensor ``[5, nx, ny, nz]``.
        """
        rhs = None
        for axis in self.active_axis:
            flux = None
            if self.convective_flux_computer is not None:
                flux = self.convective_flux_computer.compute_flux(con_var, axis)
            if self.viscous_flux_computer is not None:
                visc = self.viscous_flux_computer.compute_flux(con_var, axis)
                flux = -visc if flux is None else flux - visc
            if flux is None:
                continue
            n = self.number_of_cells[axis]
            f_lo = ops.slice_axis(flux, axis + 1, 0, n)  # [5, ..., n, ...] faces i - 1/2
            f_hi = ops.slice_axis(flux, axis + 1, 1, n + 1)  # faces i + 1/2
            term = (f_lo - f_hi) / self.cell_sizes[axis]
            rhs = term if rhs is None else rhs + term
        if rhs is None:
            shape = [5, *self.number_of_cells]
            return ops.zeros(shape, dtype=con_var.dtype)
        return rhs
