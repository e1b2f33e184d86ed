"""Reference fields of the time-domain Maxwell case from our own FDTD (``mindelec.fdtd``).

The PINN solves MindElec's 2D TE problem on ``[0, 1]^2 x [0, 4 ns]`` (``src/maxwell.py``):

    eps0 dEx/dt = dHz/dy,   eps0 dEy/dt = -dHz/dx,   mu0 dHz/dt = dEx/dy - dEy/dx + J(x, y, t)

with ``J = exp(-((t - t0)/tau)^2) * exp(-r^2 / (2 sigma^2)) / (2 pi sigma^2)`` (a magnetic
current density in the Hz equation, ``r`` the distance to the source point) and zero initial
fields. Here the same equations run on a Yee grid (``Grid(mode="TEz")``) that covers
``[0, 1]^2`` plus ``npml`` CPML cells on every side: the open space that MindElec's Mur
boundary approximates, so inside the square the two solutions agree. The source enters the Hz
half step (``inject_h``: ``Hz += dt/mu0 * J(n dt)``, the time centre of the update
``H^{n-1/2} -> H^{n+1/2}``), sampled at the Hz nodes and normalised so that its discrete
integral is exactly one, as the continuous one is.

The fields are sampled at ``n_times`` times ``k * range_t / (n_times - 1)`` (E at integer steps;
Hz as the mean of the two half steps around them, second-order accurate) and bilinearly
interpolated from their staggered Yee positions onto a uniform ``n_points x n_points`` grid of
``[0, 1]^2``. ``self_convergence`` compares two grids (``cells`` and ``2 * cells``).
"""

import math
import os

import numpy as np

from diffsci import core
from diffsci.core import ops
from diffsci.core.atomic import atomic_path
from diffsci.mindelec import fdtd

__all__ = ["maxwell_reference", "load_or_make_reference", "self_convergence"]


class MagneticCurrentDisc(fdtd.Source):
    """Gaussian-pulse magnetic current ``J(x, y, t)`` in the Hz equation (``inject_h``)."""

    name = "magnetic_current"

    def __init__(self, grid, offset, src_pos, sigma, tau, t0):
        xs, ys = grid.positions("hz")  # metres from the grid's corner
        x = xs - offset
        y = ys - offset
        r2 = (x[:, None] - src_pos[0]) ** 2 + (y[None, :] - src_pos[1]) ** 2  # [nx, ny]
        gauss = np.exp(-r2 / (2.0 * sigma**2))
        gauss /= gauss.sum() * grid.cell_volume  # discrete integral = 1 (continuous: 1)
        if gauss.max() <= 0 or not np.isfinite(gauss).all():
            raise ValueError("MagneticCurrentDisc: the source misses the grid")
        self.profile = core.tensor(gauss * grid.dt / fdtd.MU0, dtype=grid.dtype)  # [nx, ny]
        self.tau, self.t0 = tau, t0

    def inject_h(self, state, step, grid):
        t = ops.astype(step, grid.dtype) * grid.dt  # the centre of H^{n-1/2} -> H^{n+1/2}
        pulse = ops.exp(-(((t - self.t0) / self.tau) ** 2))
        return state.replace(hz=state.get("hz") + self.profile * pulse)


def _bilinear(values, coords, points):
    """Bilinear interpolation of ``values [nx, ny]`` sampled at ``coords = (x [nx], y [ny])``
    (uniform) onto ``points = (px [P], py [Q])``: ``[P, Q]``."""
    out = values
    for axis, (c, p) in enumerate(zip(coords, points)):
        h = c[1] - c[0]
        f = (p - c[0]) / h
        i = np.clip(np.floor(f).astype(int), 0, len(c) - 2)
        w = (f - i).reshape((-1, 1) if axis == 0 else (1, -1))
        lo = np.take(out, i, axis=axis)
        hi = np.take(out, i + 1, axis=axis)
        out = lo * (1 - w) + hi * w
    return out


def maxwell_reference(config, cells=500, npml=20, n_times=41, n_points=101, courant=0.95):
    """Run the FDTD reference of ``config`` (MindElec's ``config.yaml`` keys ``coord_min``,
    ``coord_max``, ``src_pos``, ``src_frq``, ``src_radius``, ``range_t``).

    Args:
        cells: Yee cells across the unit square (cell size ``1 / cells`` m).
        npml: CPML cells outside the square on every side.
        n_times: sample times ``0 .. range_t``.
        n_points: sample points per axis of the square.
        courant: fraction of the 2D Courant limit; ``dt`` is then shrunk so that the sample
            interval is a whole number of steps.

    Returns:
        dict: ``t [T]`` (s), ``x [P]``, ``y [P]`` (m), ``ex``, ``ey``, ``hz`` ``[T, P, P]`` (V/m,
        A/m; axis 1 is x), ``cells``, ``dt``, ``steps``.
    """
    lo, hi = np.asarray(config["coord_min"], float), np.asarray(config["coord_max"], float)
    if not (np.allclose(lo, 0.0) and np.allclose(hi, 1.0)):
        raise ValueError(f"maxwell_reference: expects the unit square, got {lo}..{hi}")
    dx = 1.0 / cells
    offset = npml * dx
    tau = math.sqrt(2.3) / (math.pi * config["src_frq"])
    t0 = 3.65 * tau
    sigma = config["src_radius"] / 4.0
    t_end = float(config["range_t"])
    sample_dt = t_end / (n_times - 1)
    dt_max = courant * dx / (fdtd.C0 * math.sqrt(2.0))
    per_sample = math.ceil(sample_dt / dt_max)
    n = cells + 2 * npml
    grid = fdtd.Grid((n, n), dx, dt=sample_dt / per_sample, dtype="float64", mode="TEz")
    source = MagneticCurrentDisc(grid, offset, config["src_pos"], sigma, tau, t0)
    sim = fdtd.Simulation(
        grid, boundaries={"x": fdtd.CPML(npml), "y": fdtd.CPML(npml)}, sources=[source]
    )
    px = np.linspace(0.0, 1.0, n_points)
    pos = {c: tuple(p - offset for p in grid.positions(c)) for c in ("ex", "ey", "hz")}
    fields = {c: np.zeros((n_times, n_points, n_points)) for c in ("ex", "ey", "hz")}
    state = sim.initial_state()
    step = 0
    for k in range(n_times):
        # state: E^step, H^{step - 1/2}; one step gives H^{step + 1/2}
        hz_prev = state.get("hz").asnumpy()
        e_now = {c: state.get(c).asnumpy() for c in ("ex", "ey")}
        state, _ = sim.run(1, state=state, start=step)
        step += 1
        hz_now = 0.5 * (hz_prev + state.get("hz").asnumpy())
        for c, v in (("ex", e_now["ex"]), ("ey", e_now["ey"]), ("hz", hz_now)):
            fields[c][k] = _bilinear(v, pos[c], (px, px))
        if k < n_times - 1 and per_sample > 1:
            state, _ = sim.run(per_sample - 1, state=state, start=step)
            step += per_sample - 1
    t = np.arange(n_times) * sample_dt
    return {"t": t, "x": px, "y": px, **fields, "cells": cells, "dt": grid.dt, "steps": step}


def self_convergence(config, cells=250, **kwargs):
    """Relative L2 difference per field between grids of ``cells`` and ``2 * cells``:
    ``{field: ||u_h - u_{h/2}|| / ||u_{h/2}||}``, with the two runs. For a second-order scheme
    the finer grid's own error is about a third of this."""
    coarse = maxwell_reference(config, cells=cells, **kwargs)
    fine = maxwell_reference(config, cells=2 * cells, **kwargs)
    err = {
        c: float(np.linalg.norm(coarse[c] - fine[c]) / np.linalg.norm(fine[c]))
        for c in ("ex", "ey", "hz")
    }
    return err, coarse, fine


def load_or_make_reference(path, config, cells=500, **kwargs):
    """The reference of :func:`maxwell_reference` cached in the HDF5 file ``path`` (made on the
    first call, written to a temporary file and renamed). A cached file made with other
    ``cells`` / sample counts is remade."""
    import h5py

    n_times = kwargs.get("n_times", 41)
    n_points = kwargs.get("n_points", 101)
    if os.path.exists(path):
        with h5py.File(path, "r") as f:
            ok = int(f.attrs.get("cells", -1)) == cells and f["ex"].shape == (
                n_times,
                n_points,
                n_points,
            )
            if ok:
                return {k: f[k][()] for k in f} | {k: f.attrs[k] for k in f.attrs}
    ref = maxwell_reference(config, cells=cells, **kwargs)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_path(path, suffix=".h5") as tmp, h5py.File(tmp, "w") as f:
        for k in ("t", "x", "y", "ex", "ey", "hz"):
            f.create_dataset(k, data=ref[k], compression="gzip")
        for k in ("cells", "dt", "steps"):
            f.attrs[k] = ref[k]
    return ref
