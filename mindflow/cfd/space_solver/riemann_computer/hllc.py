"""HLLC flux (Toro, Spruce & Speares 1994; Toro ch. 10)."""

from diffsci.core import ops

from .base import RiemannComputer, normal_and_tangents


class HLLC(RiemannComputer):
    """HLLC flux: HLL with the contact wave restored (Toro, Spruce & Speares 1994).

    Wave speeds: the pressure-based estimates of Toro sec. 10.5.2 (eqs. 10.59-10.62): a PVRS
    star pressure p* = max(0, (p_L + p_R)/2 - (u_R - u_L) rho_bar c_bar / 2), then
    S_K = u_K -/+ c_K q_K with q_K = 1 for p* <= p_K (rarefaction) and
    sqrt(1 + (gamma + 1)/(2 gamma) (p*/p_K - 1)) otherwise (shock), widened where needed to
    Einfeldt's bounds u~ -/+ c~ (Roe averages; Einfeldt 1988). Contact speed S* (10.37),
    star states U*_K (10.39) and the four-case flux (10.26, 10.38). An isolated contact
    (equal u_n and p on both sides) is resolved exactly.
    """

    def compute_riemann_flux(self, con_var_left, con_var_right, axis):
        gamma = self.gamma
        normal, t1, t2 = normal_and_tangents(axis)
        pri_l, flux_l, c_l = self._sides(con_var_left, axis)
        pri_r, flux_r, c_r = self._sides(con_var_right, axis)
        rho_l, u_l, p_l = pri_l[0], pri_l[normal], pri_l[4]
        rho_r, u_r, p_r = pri_r[0], pri_r[normal], pri_r[4]

        # Step 1: pressure estimate (PVRS), Toro 10.61.
        rho_bar = 0.5 * (rho_l + rho_r)
        c_bar = 0.5 * (c_l + c_r)
        zero = ops.zeros_like(rho_l)
        p_star = ops.maximum(0.5 * (p_l + p_r) - 0.5 * (u_r - u_l) * rho_bar * c_bar, zero)

        # Step 2: wave speeds, Toro 10.59-10.60 (q = 1 across a rarefaction).
        g = (gamma + 1.0) / (2.0 * gamma)
        q_l = ops.sqrt(1.0 + g * ops.maximum(p_star / p_l - 1.0, zero))
        q_r = ops.sqrt(1.0 + g * ops.maximum(p_star / p_r - 1.0, zero))
        # PVRS underestimates p* in strong collisions (it can give S_L > S_R); bounding the
        # speeds by Einfeldt's Roe-average estimates (as in HLL) keeps S_L < S* < S_R.
        vel, _, c_roe = self._roe_average(pri_l, pri_r, con_var_left, con_var_right)
        u_roe = vel[axis]
        s_l = ops.minimum(u_l - c_l * q_l, u_roe - c_roe)
        s_r = ops.maximum(u_r + c_r * q_r, u_roe + c_roe)
        # Contact speed, Toro 10.37.
        m_l = rho_l * (s_l - u_l)  # < 0
        m_r = rho_r * (s_r - u_r)  # > 0
        s_star = (p_r - p_l + u_l * m_l - u_r * m_r) / (m_l - m_r)

        # Step 3: star fluxes F*_K = F_K + S_K (U*_K - U_K), Toro 10.38-10.39.
        def star_flux(con, pri, flux, s_k, m_k):
            factor = m_k / (s_k - s_star)  # rho_K (S_K - u_K) / (S_K - S*)
            u_k = pri[normal]
            comps = [None] * 5
            comps[0] = factor
            comps[normal] = factor * s_star
            comps[t1] = factor * pri[t1]
            comps[t2] = factor * pri[t2]
            comps[4] = factor * (con[4] / pri[0] + (s_star - u_k) * (s_star + pri[4] / m_k))
            return flux + s_k * (ops.stack(comps, axis=0) - con)

        flux_star_l = star_flux(con_var_left, pri_l, flux_l, s_l, m_l)
        flux_star_r = star_flux(con_var_right, pri_r, flux_r, s_r, m_r)

        # Toro 10.26: F_L if 0 <= S_L; F*_L if S_L <= 0 <= S*; F*_R if S* <= 0 <= S_R; F_R if S_R <= 0.
        return ops.where(
            s_l >= 0.0,
            flux_l,
            ops.where(s_star >= 0.0, flux_star_l, ops.where(s_r >= 0.0, flux_star_r, flux_r)),
        )
