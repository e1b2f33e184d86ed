"""Reference fields for the 2-D TE Maxwell PINNs: a ``mindelec.fdtd`` run of MindElec's problem.

MindElec's ``Maxwell2DMur`` (``incremental_learning/src/maxwell.py``) solves, in SI units on
``[0, 1]^2 x [0, 4 ns]`` with zero initial fields,

    eps dEx/dt = dHz/dy,     eps dEy/dt = -dHz/dx,     mu dHz/dt = dEx/dy - dEy/dx + S(x, y, t),

    S = exp(-((t - t0) / tau)^2) * exp(-|x - x_s|^2 / (2 s^2)) / (2 pi s^2),

``tau = sqrt(2.3) / (pi f0)``, ``t0 = 3.65 tau``, ``s = src_radius / 4``, ``eps = eps_r eps0``,
``mu = mu_r mu0``; its boundary condition (second-order Mur) stands for an open domain. Here the
same equations run on a Yee grid (``mindelec.fdtd``, TEz: ``hz, ex, ey``) covering ``[0, 1]^2``
plus a CPML outside it (open space), with the source added to ``hz`` after each H half step
(``mu (H^{n+1/2} - H^{n-1/2}) / dt = -curl E^n + S(t_n)``: centred in time).

Fields are sampled at the evaluation points: ``E`` at whole steps, ``Hz`` as the mean of the
half steps either side, each component bilinearly interpolated from its staggered positions.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.interpolate import RegularGridInterpolator

from diffsci import core
from diffsci.core import ops
from diffsci.mindelec import fdtd
from diffsci.mindelec.fdtd.constants import MU0

FIELDS = ("ex", "ey", "hz")


def pulse_parameters(f0):
    """MindElec's Gaussian pulse: ``(tau, t0)`` in seconds for the frequency ``f0`` (Hz)."""
    tau = math.sqrt(2.3) / (math.pi * f0)
    return tau, 3.65 * tau


class SmoothMagneticSource(fdtd.Source):
    """``S(x, y, t)`` of the module docstring added to ``hz``: ``hz += dt / mu * S(t_n)``.

    Args:
        grid: the TEz ``fdtd.Grid``.
        origin: physical coordinates (m) of the grid's corner ``(0, 0)`` (``[-pml d, -pml d]``).
        center: the source centre (m); sigma: its Gaussian width ``s`` (m).
        f0: the pulse frequency (Hz); mu_r: the relative permeability at the source.
    """

    name = "smooth_magnetic_source"

    def __init__(self, grid, origin, center, sigma, f0, mu_r):
        px, py = grid.positions("hz")
        xx, yy = np.meshgrid(px + origin[0], py + origin[1], indexing="ij")  # [nx, ny]
        r2 = (xx - center[0]) ** 2 + (yy - center[1]) ** 2
        profile = np.exp(-r2 / (2 * sigma**2)) / (2 * math.pi * sigma**2)  # [nx, ny], 1/m^2
        self.profile = core.tensor(profile * grid.dt / (MU0 * mu_r), dtype=grid.dtype)
        self.tau, self.t0 = pulse_parameters(f0)

    def inject_h(self, state, step, grid):
        t = ops.astype(step, grid.dtype) * grid.dt  # t_n: the centre of the H half step
        amp = ops.exp(-(((t - self.t0) / self.tau) ** 2))
        return state.replace(hz=state.get("hz") + amp * self.profile)


def _interpolator(grid, origin, component, values):
    px, py = grid.positions(component)
    return RegularGridInterpolator(
        (px + origin[0], py + origin[1]), values, bounds_error=True, method="linear"
    )


def solve(
    eps_r,
    mu_r,
    points,
    times,
    cell=1e-3,
    pml=20,
    coord_min=(0.0, 0.0),
    coord_max=(1.0, 1.0),
    src_pos=(0.4975, 0.4975),
    src_radius=0.01,
    f0=1e9,
    dtype="float64",
):
    """Run the FDTD problem and sample ``ex, ey, hz`` at ``points`` and ``times``.

    Args:
        eps_r, mu_r: the relative permittivity / permeability (uniform).
        points: ``[M, 2]`` evaluation points (m) inside ``[coord_min, coord_max]``.
        times: increasing evaluation times (s), ``[T]``, each > 0.
        cell: Yee cell size (m); ``pml``: CPML cells outside the box on every side.
        coord_min, coord_max, src_pos, src_radius, f0: MindElec's config values.

    Returns:
        ``{"fields": [T, M, 3] (Ex, Ey V/m; Hz A/m), "dt": s, "steps": int, "shape": grid}``.
    """
    points = np.asarray(points, dtype=np.float64)
    times = np.asarray(times, dtype=np.float64)
    lo, hi = np.asarray(coord_min, float), np.asarray(coord_max, float)
    if np.any(points < lo - 1e-12) or np.any(points > hi + 1e-12):
        raise ValueError("fdtd_reference.solve: evaluation points outside the box")
    n_box = np.round((hi - lo) / cell).astype(int)
    shape = tuple(int(n) + 2 * pml + 1 for n in n_box)
    # dt: the grid's default Courant number (0.99 of the limit), lowered so that the first
    # time and the spacing of the times are whole steps
    dt_max = 0.99 * cell / (fdtd.C0 * math.sqrt(2))
    base = float(np.min(np.diff(np.concatenate([[0.0], times]))))
    dt = base / math.ceil(base / dt_max)
    grid = fdtd.Grid(shape, cell, dt=dt, dtype=dtype, mode="TEz")
    origin = lo - pml * cell
    sim = fdtd.Simulation(
        grid,
        fdtd.Materials(eps_r=float(eps_r), mu_r=float(mu_r)),
        boundaries=fdtd.CPML(pml, eps_r=float(eps_r)),
        sources=[SmoothMagneticSource(grid, origin, src_pos, src_radius / 4.0, f0, float(mu_r))],
    )
    steps_at = np.round(times / grid.dt).astype(int)
    if not np.allclose(steps_at * grid.dt, times, rtol=1e-9, atol=1e-3 * grid.dt):
        raise ValueError("fdtd_reference.solve: times are not whole steps of the grid")
    state, done = sim.initial_state(), 0
    out = np.zeros((len(times), len(points), 3))
    for k, target in enumerate(steps_at):
        if target > done:
            state, _ = sim.run(int(target - done), state=state, start=done)
            done = int(target)
        h_before = state.get("hz").asnumpy()  # H^{n-1/2}
        after, _ = sim.run(1, state=state, start=done)
        hz = 0.5 * (h_before + after.get("hz").asnumpy())  # H at t = n dt
        for c, (name, values) in enumerate(
            (("ex", state.get("ex").asnumpy()), ("ey", state.get("ey").asnumpy()), ("hz", hz))
        ):
            out[k, :, c] = _interpolator(grid, origin, name, values)(points)
    return {"fields": out, "dt": grid.dt, "steps": int(steps_at[-1]), "shape": shape}


def evaluation_set(n_space=51, n_time=20, range_t=4e-9, coord_min=(0.0, 0.0), coord_max=(1.0, 1.0)):
    """The evaluation points: an ``n_space^2`` grid (``meshgrid(x, y)`` order, y slow) and
    ``n_time`` times ``range_t / n_time .. range_t``. Returns ``(points [M, 2], times [T])``."""
    xs = np.linspace(coord_min[0], coord_max[0], n_space)
    ys = np.linspace(coord_min[1], coord_max[1], n_space)
    xx, yy = np.meshgrid(xs, ys)
    points = np.stack([xx.ravel(), yy.ravel()], axis=1)
    times = range_t * np.arange(1, n_time + 1) / n_time
    return points, times
