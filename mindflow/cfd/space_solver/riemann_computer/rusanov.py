"""Rusanov (local Lax-Friedrichs) flux."""

from diffsci.core import ops

from .base import RiemannComputer


class Rusanov(RiemannComputer):
    """Rusanov flux: F = (F_L + F_R)/2 - a/2 (U_R - U_L), a = max(|u_n| + c) over both sides.

    Rusanov 1961; Toro, *Riemann Solvers and Numerical Methods for Fluid Dynamics*, sec. 10.5.1.
    """

    def compute_riemann_flux(self, con_var_left, con_var_right, axis):
        normal = axis + 1
        pri_l, flux_l, c_l = self._sides(con_var_left, axis)
        pri_r, flux_r, c_r = self._sides(con_var_right, axis)
        alpha = ops.maximum(ops.abs(pri_l[normal]) + c_l, ops.abs(pri_r[normal]) + c_r)
        return 0.5 * (flux_l + flux_r) - 0.5 * alpha * (con_var_right - con_var_left)
