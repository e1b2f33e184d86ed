"""Abstract base class of the Riemann solvers (MindFlow's ``RiemannComputer``)."""

from diffsci.core import ops

from ..flux import gamma_of, normal_and_tangents, physical_flux, primitive_of, sound_speed


class RiemannComputer:
    """Numerical flux F(U_L, U_R) through faces normal to one axis.

    Subclasses implement :meth:`compute_riemann_flux`; the shared pieces (primitive variables,
    physical fluxes, sound speeds, Roe averages) live here so each solver is its formula only.

    Args:
        material: the fluid (helper-1's ``IdealGas``; only ``gamma`` is read).
    """

    def __init__(self, material, net_dict=None):
        # net_dict: MindFlow passes it to every solver (RusanovNet uses it); accepted, unused.
        self.material = material

    @property
    def gamma(self):
        return gamma_of(self.material)

    def compute_riemann_flux(self, con_var_left, con_var_right, axis):
        """Flux through the faces.

        Args:
            con_var_left: conservative variables on the left of each face ``[5, ...]``.
            con_var_right: conservative variables on the right of each face ``[5, ...]``.
            axis: 0, 1, 2 for faces normal to x, y, z.

        Returns:
            Tensor ``[5, ...]``, the numerical flux.
        """
        raise NotImplementedError

    def _sides(self, con_var, axis):
        """(pri_var, flux, sound speed) of one side."""
        gamma = self.gamma
        pri_var = primitive_of(con_var, gamma)
        return (
            pri_var,
            physical_flux(con_var, axis, self.material, pri_var),
            sound_speed(pri_var, gamma),
        )

    def _roe_average(self, pri_l, pri_r, con_l, con_r):
        """Roe-averaged velocity ``[3, ...]`` components, total enthalpy and sound speed (Roe 1981)."""
        gamma = self.gamma
        sl, sr = ops.sqrt(pri_l[0]), ops.sqrt(pri_r[0])
        wl, wr = sl / (sl + sr), sr / (sl + sr)
        vel = [wl * pri_l[i] + wr * pri_r[i] for i in (1, 2, 3)]
        h_l = (con_l[4] + pri_l[4]) / pri_l[0]
        h_r = (con_r[4] + pri_r[4]) / pri_r[0]
        h = wl * h_l + wr * h_r
        q2 = vel[0] * vel[0] + vel[1] * vel[1] + vel[2] * vel[2]
        # (gamma - 1)(H - q^2/2) > 0 for physical states; floored so that near-vacuum states do
        # not produce a NaN (and a warning, an error under pytest) before the flux is assembled.
        c2 = ops.maximum((gamma - 1.0) * (h - 0.5 * q2), 1e-300 * ops.ones_like(h))
        return vel, h, ops.sqrt(c2)


__all__ = ["RiemannComputer", "normal_and_tangents"]
