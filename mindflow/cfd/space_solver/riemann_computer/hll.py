"""HLL flux with Einfeldt's wave-speed estimates (HLLE)."""

from diffsci.core import ops

from .base import RiemannComputer


class HLL(RiemannComputer):
    """Harten-Lax-van Leer flux (Harten, Lax & van Leer 1983; Toro sec. 10.3).

    Wave speeds after Einfeldt 1988: S_L = min(u_L - c_L, u~ - c~), S_R = max(u_R + c_R, u~ + c~)
    with Roe averages (~). Clipping S_L to <= 0 and S_R to >= 0 makes the one formula
    F = (S_R F_L - S_L F_R + S_L S_R (U_R - U_L)) / (S_R - S_L) cover the supersonic cases too
    (S_L >= 0 gives F_L, S_R <= 0 gives F_R) without a branch.
    """

    def compute_riemann_flux(self, con_var_left, con_var_right, axis):
        normal = axis + 1
        pri_l, flux_l, c_l = self._sides(con_var_left, axis)
        pri_r, flux_r, c_r = self._sides(con_var_right, axis)
        vel, _, c_roe = self._roe_average(pri_l, pri_r, con_var_left, con_var_right)
        u_roe = vel[axis]
        zero = ops.zeros_like(u_roe)
        s_l = ops.minimum(ops.minimum(pri_l[normal] - c_l, u_roe - c_roe), zero)
        s_r = ops.maximum(ops.maximum(pri_r[normal] + c_r, u_roe + c_roe), zero)
        return (s_r * flux_l - s_l * flux_r + s_l * s_r * (con_var_right - con_var_left)) / (
            s_r - s_l
        )
