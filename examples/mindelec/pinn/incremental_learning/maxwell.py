"""The 2-D TE Maxwell problem of MindElec's incremental learning (``src/maxwell.py``,
``Maxwell2DMur``), its sampling (``src/dataset.py``) and the meta-auto-decoder network.

Equations (SI units; ``eps = eps_r eps0``, ``mu = mu_r mu0`` per scenario)::

    eps dEx/dt = dHz/dy,   eps dEy/dt = -dHz/dx,   mu dHz/dt = dEx/dy - dEy/dx + S(x, y, t)

with ``S`` the Gaussian pulse of ``fdtd_reference`` smoothed over the disk of radius
``src_radius`` (width ``src_radius / 4``), zero initial fields, and MindElec's second-order
Mur condition on the four sides (Mur 1981; with ``c = 1 / sqrt(eps mu)``)::

    x = 0:  dHz/dx - dHz/dt / c + (c eps / 2) dEx/dy = 0      x = 1: signs of the last two flipped
    y = 0:  dHz/dy - dHz/dt / c - (c eps / 2) dEy/dx = 0      y = 1: signs of the last two flipped

The network predicts scaled fields: ``Ex = s_ex u_0``, ``Ey = s_ey u_1``, ``Hz = s_hz u_2``
(``output_scale``, MindElec's 37.67303, 37.67303, 0.1), and every residual is MindElec's, each
equation divided by ``s_t`` (``2.5e8``) and the field scales so that it is O(1).

Meta-auto-decoder (Huang et al., "Meta-Auto-Decoder for Solving Parametric Partial
Differential Equations", NeurIPS 2022; MindElec's ``mad.py``): one network for every
``(eps_r, mu_r)`` scenario, told the scenario by a trainable latent code ``z_k`` appended to
its input (``MultiScaleFCCell(latent_vector=...)``: rows ``[k per, (k + 1) per)`` of a batch
belong to scenario ``k``). Pre-training fits the network and all codes; a new scenario is
reconstructed by fitting a fresh code (and, with ``finetune_model``, the network too).
"""

from __future__ import annotations

import math

import numpy as np

from diffsci import core
from diffsci.core import ops
from diffsci.datasets.geometry import Disk, Rectangle
from diffsci.mindelec.architecture import MultiScaleFCCell
from diffsci.mindelec.common.constants import EPS, MU

COLUMNS = ("src_domain", "src_ic", "no_src_domain", "no_src_ic", "bc")


def build_network(config, latent_vector, dtype=core.float32):
    """MindElec's ``MultiScaleFCCell`` from the config, sine activations, He-uniform weights."""
    return MultiScaleFCCell(
        int(config["input_size"]),
        int(config["output_size"]),
        layers=int(config["layers"]),
        neurons=int(config["neurons"]),
        residual=bool(config["residual"]),
        weight_init=core.nn.init.HeUniform(negative_slope=math.sqrt(5)),
        act="sin",
        num_scales=int(config["num_scales"]),
        amp_factor=float(config["amp_factor"]),
        scale_factor=float(config["scale_factor"]),
        input_scale=list(config["input_scale"]),
        input_center=list(config["input_center"]),
        latent_vector=latent_vector,
        dtype=dtype,
    )


def scenario_columns(config):
    """Per-row ``eps_r`` and ``mu_r`` of one batch column: ``([B, 1], [B, 1])`` numpy, scenario
    ``k = i_eps * n_mu + i_mu`` on rows ``[k per, (k + 1) per)`` (MindElec's ``eps_list``,
    ``mu_list``)."""
    per = int(config["train_batch_size"])
    eps = [e for e in config["EPS_candidates"] for _ in config["MU_candidates"] for _ in range(per)]
    mu = [m for _ in config["EPS_candidates"] for m in config["MU_candidates"] for _ in range(per)]
    return np.asarray(eps, float)[:, None], np.asarray(mu, float)[:, None]


class Sampler:
    """MindElec's random dataset (``src/dataset.py``): the source disk, the rectangle minus the
    disk, and the rectangle's boundary, each times ``[0, range_t]``; ``IC`` columns at
    ``t = 0``. Each call draws one batch: ``{column: [B, 3] (x, y, t)}``, ``B = per * scenarios``.
    """

    def __init__(self, config, seed=0):
        self.rect = Rectangle("rect", config["coord_min"], config["coord_max"], dtype=np.float64)
        self.disk = Disk("src", config["src_pos"], config["src_radius"], dtype=np.float64)
        self.no_src = self.rect - self.disk
        self.range_t = float(config["range_t"])
        self.size = (
            int(config["train_batch_size"])
            * len(config["EPS_candidates"])
            * len(config["MU_candidates"])
        )
        self.rng = np.random.default_rng(seed)
        src = np.asarray(config["src_pos"], float)
        lo, hi = np.asarray(config["coord_min"], float), np.asarray(config["coord_max"], float)
        r = float(config["src_radius"])
        if np.any(src - r < lo) or np.any(src + r > hi):
            raise ValueError(
                f"source disk at {tuple(src)} with radius {r} is not inside the domain "
                f"{tuple(lo)} .. {tuple(hi)}"
            )

    def _with_time(self, xy, t=None):
        t = self.rng.uniform(0.0, self.range_t, (len(xy), 1)) if t is None else t
        return np.concatenate([xy, t], axis=1)

    def __call__(self):
        n, rng = self.size, self.rng
        zero = np.zeros((n, 1))
        xb, _ = self.rect.sample_boundary(n, seed=rng)
        return {
            "src_domain": self._with_time(self.disk.sample_interior(n, seed=rng)),
            "src_ic": self._with_time(self.disk.sample_interior(n, seed=rng), zero),
            "no_src_domain": self._with_time(self.no_src.sample_interior(n, seed=rng)),
            "no_src_ic": self._with_time(self.no_src.sample_interior(n, seed=rng), zero),
            "bc": self._with_time(xb),
        }


class Maxwell2DMur:
    """MindElec's ``Maxwell2DMur`` residuals for a network ``[N, 3] (x, y, t) -> [N, 3]``.

    Args:
        network: the (latent-coded) network.
        config: the JSON config (``src_pos``, ``src_radius``, ``SrcFrq`` or ``src_frq``,
            ``coord_min``, ``coord_max``, ``output_scale``).
        eps_r, mu_r: ``[B, 1]`` arrays of each row's material (``scenario_columns``).
    """

    def __init__(self, network, config, eps_r, mu_r, dtype=core.float32):
        self.network = network
        self.dtype = dtype
        f0 = float(config.get("src_frq", config.get("SrcFrq", 1e9)))
        self.tau = math.sqrt(2.3) / (math.pi * f0)
        self.t0 = 3.65 * self.tau
        self.src = [float(v) for v in config["src_pos"]]
        self.sigma = float(config["src_radius"]) / 4.0
        self.coord_min = [float(v) for v in config["coord_min"]]
        self.coord_max = [float(v) for v in config["coord_max"]]
        scales = config.get("input_scales", [1.0, 1.0, 2.5e8])  # MindElec's residual scales
        self.s_x, self.s_y, self.s_t = (float(v) for v in scales)
        self.s_ex, self.s_ey, self.s_hz = (float(v) for v in config.get("output_scale"))
        self.eps = core.tensor(np.asarray(eps_r, float) * EPS, dtype=dtype)  # [B, 1] F/m
        self.mu = core.tensor(np.asarray(mu_r, float) * MU, dtype=dtype)  # [B, 1] H/m
        self.c = 1.0 / ops.sqrt(self.eps * self.mu)  # [B, 1] m/s

    def _jacobian(self, x):
        """``(u [N, 3], du/dx [N, 3], du/dy [N, 3], du/dt [N, 3])`` by three forward products."""
        outs = []
        for j in range(3):
            e = np.zeros(tuple(x.shape))
            e[:, j] = 1.0
            u, du = core.jvp(self.network, (x,), (core.tensor(e, dtype=x.dtype),))
            outs.append(du)
        return (u, *outs)

    def smooth_src(self, x, y, t):
        pulse = ops.exp(-(((t - self.t0) / self.tau) ** 2))
        r2 = (x - self.src[0]) ** 2 + (y - self.src[1]) ** 2
        return pulse * ops.exp(-r2 / (2 * self.sigma**2)) / (2 * math.pi * self.sigma**2)

    def governing_equation(self, data):
        """``[N, 3]`` residuals of the three equations at ``data [N, 3]``."""
        _, dx, dy, dt = self._jacobian(data)
        x, y, t = data[:, 0:1], data[:, 1:2], data[:, 2:3]
        st = self.s_t
        r1 = self.s_hz * dy[:, 2:3] / (self.s_ex * st * self.eps) - dt[:, 0:1] / st
        r2 = -self.s_hz * dx[:, 2:3] / (self.s_ey * st * self.eps) - dt[:, 1:2] / st
        curl = (self.s_ey * dx[:, 1:2] - self.s_ex * dy[:, 0:1]) / (self.s_hz * st * self.mu)
        source = self.smooth_src(x, y, t) / (self.s_hz * st * self.mu)
        r3 = curl + dt[:, 2:3] / st - source
        return ops.concat([r1, r2, r3], axis=1)

    def boundary_condition(self, data):
        """``[N, 4]`` Mur residuals, each masked to the points on its side."""
        _, dx, dy, dt = self._jacobian(data)
        x, y = data[:, 0:1], data[:, 1:2]
        tol = 1e-6

        def on(v, target):
            return ops.astype(ops.abs(v - target) < tol, self.dtype)

        c, eps = self.c, self.eps
        hx, hy, ht = dx[:, 2:3], dy[:, 2:3], dt[:, 2:3]
        ex_y, ey_x = dy[:, 0:1], dx[:, 1:2]
        k_x = self.s_ex * c * eps / (2 * self.s_hz * self.s_x)
        k_y = self.s_ey * c * eps / (2 * self.s_hz * self.s_y)
        r_x0 = hx / self.s_x - ht / (c * self.s_x) + k_x * ex_y
        r_x1 = hx / self.s_x + ht / (c * self.s_x) - k_x * ex_y
        r_y0 = hy / self.s_y - ht / (c * self.s_y) - k_y * ey_x
        r_y1 = hy / self.s_y + ht / (c * self.s_y) + k_y * ey_x
        return ops.concat(
            [
                r_x0 * on(x, self.coord_min[0]),
                r_x1 * on(x, self.coord_max[0]),
                r_y0 * on(y, self.coord_min[1]),
                r_y1 * on(y, self.coord_max[1]),
            ],
            axis=1,
        )

    def initial_condition(self, data):
        """``[N, 3]``: the fields at ``t = 0`` (zero)."""
        return self.network(data)

    def residuals(self, batch):
        """``{column: residual [N, c]}`` for a batch of ``Sampler`` (Tensors)."""
        return {
            "src_domain": self.governing_equation(batch["src_domain"]),
            "src_ic": self.initial_condition(batch["src_ic"]),
            "no_src_domain": self.governing_equation(batch["no_src_domain"]),
            "no_src_ic": self.initial_condition(batch["no_src_ic"]),
            "bc": self.boundary_condition(batch["bc"]),
        }


def smooth_l1(r, beta=1.0):
    """MindSpore's ``SmoothL1Loss`` against zero, averaged: ``0.5 r^2 / beta`` below ``beta``,
    ``|r| - 0.5 beta`` above."""
    a = ops.abs(r)
    return ops.where(a < beta, 0.5 * r * r / beta, a - 0.5 * beta).mean()


def predict_fields(network, points, times, output_scale, latent_rows=1, dtype=core.float32):
    """Physical ``(Ex, Ey, Hz)`` of the network at ``points [M, 2]`` x ``times [T]``: ``[T, M, 3]``.

    For a network with a latent vector of ``latent_rows`` scenarios, every row is evaluated
    with scenario 0's code (pass a network whose latent vector has one row).
    """
    scale = np.asarray(output_scale, float)
    out = []
    for t in times:
        x = np.concatenate([points, np.full((len(points), 1), t)], axis=1)
        pad = (-len(x)) % latent_rows
        if pad:
            x = np.concatenate([x, x[:pad]])
        u = network(core.tensor(x, dtype=dtype)).asnumpy()[: len(points)]
        out.append(u * scale)
    return np.stack(out)
