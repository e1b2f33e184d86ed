"""MindElec's ``Maxwell2DMur``: 2D TE Maxwell equations with a Gaussian-pulse point source and
Mur's second-order absorbing boundary, as residuals of a ``mindelec.solver.Problem``.

Network: ``(x, y, t) -> (Ex, Ey, Hz)`` scaled, ``E = s_ex * u_ex`` (``output_scale``), the
inputs multiplied by ``input_scale`` inside the network (``t`` by ``2.5e8``, so 4 ns is 1).

Equations (SI; ``eps0``, ``mu0`` of vacuum; ``J`` the smoothed source, a magnetic current in
the Hz equation, MindElec's ``smooth_src``):

    eps0 dEx/dt - dHz/dy = 0
    eps0 dEy/dt + dHz/dx = 0
    mu0 dHz/dt + dEy/dx - dEx/dy - J = 0,
    J = exp(-((t - t0)/tau)^2) exp(-r^2/(2 sigma^2)) / (2 pi sigma^2),
    tau = sqrt(2.3) / (pi f0), t0 = 3.65 tau, sigma = src_radius / 4

each divided by ``s_field * s_t`` as MindElec does, so the residuals are O(1).

Boundary (Mur 1974, second order; Taflove & Hagness sec. 7.3, written with the TE fields as in
MindElec): on ``x = 0`` ``dHz/dx - (1/c) dHz/dt + (c eps0 / 2) dEx/dy = 0`` (signs flip on the
opposite face, ``x <-> y`` with ``Ey`` on ``y`` faces). Initial condition: all fields zero.
"""

import math

from diffsci import core
from diffsci.core import ops
from diffsci.mindelec.common import EPS, LIGHT_SPEED, MU, PI
from diffsci.mindelec.solver import Problem

__all__ = ["Maxwell2DMur", "check_source", "disc_inside"]


def disc_inside(config, radius):
    """Whether the disc of ``radius`` around ``src_pos`` lies in ``[coord_min, coord_max]``."""
    pos, lo, hi = config["src_pos"], config["coord_min"], config["coord_max"]
    return all(lo[i] + radius <= pos[i] <= hi[i] - radius for i in range(len(pos)))


def check_source(config):
    """Raise ValueError unless the source disc (``src_pos``, ``src_radius``) lies inside the
    domain ``[coord_min, coord_max]``, naming the source, radius and domain."""
    pos, radius = config["src_pos"], config["src_radius"]
    lo, hi = config["coord_min"], config["coord_max"]
    if len(pos) != len(lo):
        raise ValueError(f"src_pos {pos} must have {len(lo)} coordinates like coord_min {lo}")
    if not radius > 0:
        raise ValueError(f"src_radius must be > 0, got {radius}")
    if not disc_inside(config, radius):
        raise ValueError(
            f"the source at src_pos={list(pos)} with src_radius={radius} is not inside the "
            f"domain [{list(lo)}, {list(hi)}]: its disc must fit in the domain"
        )


class Maxwell2DMur(Problem):
    """The 2D TE Maxwell problem with Mur's boundary (MindElec's ``Maxwell2DMur``).

    Args:
        model: the network ``[N, 3] -> [N, 3]`` (x, y, t) -> (Ex, Ey, Hz) scaled.
        config: the case's ``config.yaml`` dict (``src_pos``, ``src_radius``, ``src_frq``,
            ``coord_min``, ``coord_max``, ``input_scale``, ``output_scale``).
        domain_name, bc_name, ic_name: the column holding this sub-dataset's points.
        bc_normal: accepted (MindElec's), unused.

    Raises:
        ValueError: a source outside the domain; a network whose output is not 3 fields.
    """

    output_names = ("ex", "ey", "hz")

    def __init__(self, model, config, domain_name=None, bc_name=None, bc_normal=None, ic_name=None):
        super().__init__()
        check_source(config)
        out = getattr(model, "out_channel", None)
        if out is not None and out != len(self.output_names):
            raise ValueError(
                f"Maxwell2DMur: the network has {out} output fields but the TE equations need "
                f"{len(self.output_names)} {list(self.output_names)}"
            )
        self.domain_name, self.bc_name, self.ic_name = domain_name, bc_name, ic_name
        self.bc_normal = bc_normal
        self.model = model
        self.jacobian = core.batched_jacobian(model)  # x [N, 3] -> [3 fields, N, 3 coords]
        self.src_frq = config.get("src_frq", 1e9)
        self.tau = math.sqrt(2.3) / (PI * self.src_frq)
        self.t0 = 3.65 * self.tau
        self.amp = 1.0
        self.x0, self.y0 = config["src_pos"]
        self.sigma = config["src_radius"] / 4.0
        self.coord_min, self.coord_max = config["coord_min"], config["coord_max"]
        s_x, s_y, s_t = config.get("input_scale", [1.0, 1.0, 2.5e8])
        s_ex, s_ey, s_hz = config.get("output_scale", [37.67303, 37.67303, 0.1])
        self.s_x, self.s_y, self.s_t = s_x, s_y, s_t
        self.s_ex, self.s_ey, self.s_hz = s_ex, s_ey, s_hz

    def smooth_src(self, x, y, t):
        """``J(x, y, t)``, ``[N, 1]`` each (A/m^2 per unit amplitude)."""
        pulse = self.amp * ops.exp(-(((t - self.t0) / self.tau) ** 2))
        r2 = (x - self.x0) ** 2 + (y - self.y0) ** 2
        gauss = ops.exp(-r2 / (2.0 * self.sigma**2)) / (2.0 * PI * self.sigma**2)
        return pulse * gauss

    def _derivatives(self, data):
        if data.ndim != 2 or data.shape[1] != 3:
            raise ValueError(
                f"Maxwell2DMur: points must be [N, 3] (x, y, t), got {tuple(data.shape)}"
            )
        jac = self.jacobian(data)  # [3, N, 3]: d(field)/d(x, y, t) of the scaled outputs
        if jac.shape[0] != 3:
            raise ValueError(
                f"Maxwell2DMur: the network gives {jac.shape[0]} output fields, the TE "
                f"equations need 3 {list(self.output_names)}"
            )
        return [[jac[f, :, c : c + 1] for c in range(3)] for f in range(3)]  # [N, 1] each

    def governing_equation(self, *output, **kwargs):
        """Residuals ``[N, 3]`` of the three TE equations on ``kwargs[domain_name]``."""
        data = kwargs[self.domain_name]  # [N, 3]
        x, y, t = data[:, 0:1], data[:, 1:2], data[:, 2:3]
        (_, dex_dy, dex_dt), (dey_dx, _, dey_dt), (dhz_dx, dhz_dy, dhz_dt) = self._derivatives(data)
        s_t = self.s_t
        pde_r1 = (self.s_hz * dhz_dy) / (self.s_ex * s_t * EPS) - dex_dt / s_t
        pde_r2 = -(self.s_hz * dhz_dx) / (self.s_ey * s_t * EPS) - dey_dt / s_t
        curl = (self.s_ey * dey_dx - self.s_ex * dex_dy) / (self.s_hz * s_t * MU)
        src = self.smooth_src(x, y, t) / (self.s_hz * s_t * MU)
        pde_r3 = curl + dhz_dt / s_t - src
        return ops.concat([pde_r1, pde_r2, pde_r3], axis=1)  # [N, 3]

    def boundary_condition(self, *output, **kwargs):
        """Mur second-order residuals ``[N, 4]`` (one column per face, zero off that face)."""
        data = kwargs[self.bc_name]  # [N, 3]
        (_, dex_dy, _), (dey_dx, _, _), (dhz_dx, dhz_dy, dhz_dt) = self._derivatives(data)
        c = LIGHT_SPEED
        xs, ys = data[:, 0:1], data[:, 1:2]
        one, zero = 1.0, 0.0
        masks = [
            ops.where(xs == self.coord_min[0], one, zero),
            ops.where(xs == self.coord_max[0], one, zero),
            ops.where(ys == self.coord_min[1], one, zero),
            ops.where(ys == self.coord_max[1], one, zero),
        ]
        kx = self.s_ex * c * EPS / (2.0 * self.s_hz * self.s_x)
        ky = self.s_ey * c * EPS / (2.0 * self.s_hz * self.s_y)
        bc_r1 = dhz_dx / self.s_x - dhz_dt / (c * self.s_x) + kx * dex_dy  # x = x_min
        bc_r2 = dhz_dx / self.s_x + dhz_dt / (c * self.s_x) - kx * dex_dy  # x = x_max
        bc_r3 = dhz_dy / self.s_y - dhz_dt / (c * self.s_y) - ky * dey_dx  # y = y_min
        bc_r4 = dhz_dy / self.s_y + dhz_dt / (c * self.s_y) + ky * dey_dx  # y = y_max
        residuals = [r * m for r, m in zip((bc_r1, bc_r2, bc_r3, bc_r4), masks)]
        return ops.concat(residuals, axis=1)  # [N, 4]

    def initial_condition(self, *output, **kwargs):
        """Zero initial fields: the residual is the scaled output ``[N, 3]``."""
        u = output[0]
        if u.ndim != 2 or u.shape[1] != 3:
            raise ValueError(
                f"Maxwell2DMur: the network gives output of shape {tuple(u.shape)}, the TE "
                f"initial condition needs 3 fields {list(self.output_names)}"
            )
        return u
