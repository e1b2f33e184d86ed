"""First-order Godunov flux (piecewise-constant faces + Rusanov) used by the framework tests.

It stands in for the WENO reconstructors and Riemann solvers so that the framework (boundary
filling, flux divergence, integrators, time loop) is tested on its own.
"""

from diffsci.core import ops
from diffsci.mindflow.cfd.utils import cal_flux, cal_pri_var


class FirstOrderRusanov:
    """``compute_flux(con_var_padded, axis)`` -> ``[5, ...]`` face fluxes (n + 1 along axis)."""

    def __init__(self, mesh_info, material):
        self.mesh_info = mesh_info
        self.material = material

    def _interior(self, var, axis):
        pad = self.mesh_info.pad
        for other in self.mesh_info.active_axis:
            if other != axis:
                n = self.mesh_info.number_of_cells[other]
                var = ops.slice_axis(var, other + 1, pad, pad + n)
        return var

    def compute_flux(self, con_var, axis):
        pad = self.mesh_info.pad
        n = self.mesh_info.number_of_cells[axis]
        var = self._interior(con_var, axis)
        left = ops.slice_axis(var, axis + 1, pad - 1, pad + n)  # cell left of each face
        right = ops.slice_axis(var, axis + 1, pad, pad + n + 1)
        pl, pr = cal_pri_var(left, self.material), cal_pri_var(right, self.material)
        speed = ops.maximum(
            ops.abs(pl[axis + 1]) + self.material.sound_speed(pl),
            ops.abs(pr[axis + 1]) + self.material.sound_speed(pr),
        )
        fl, fr = cal_flux(left, pl, axis), cal_flux(right, pr, axis)
        return 0.5 * (fl + fr) - 0.5 * speed * (right - left)
