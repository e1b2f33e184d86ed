"""Simulation time controller (MindFlow's ``RunTime``): CFL time step, clock, NaN guard."""

import math

import numpy as np

from diffsci import core
from diffsci.core import ops

__all__ = ["RunTime"]


@core.jit_class
class RunTime:
    """Keeps the clock of a run and picks the time step.

    Args:
        config (dict): ``runtime`` section: ``CFL``, ``current_time``, ``end_time``,
            ``fixed_timestep``, ``timestep``.
        mesh_info (MeshInfo): the grid.
        material (Material): supplies the sound speed.

    Example:
        >>> runtime = RunTime(config["runtime"], simulator.mesh_info, simulator.material)
        >>> while runtime.time_loop(pri_var):
        ...     pri_var = cal_pri_var(con_var, simulator.material)
        ...     runtime.compute_timestep(pri_var)
        ...     con_var = simulator.integration_step(con_var, runtime.timestep)
        ...     runtime.advance()
    """

    def __init__(self, config, mesh_info, material):
        self.current_time = float(config.get("current_time", 0.0))
        self.end_time = float(config.get("end_time", 0.0))
        self.fixed_timestep = bool(config.get("fixed_timestep", False))
        self.timestep = float(config["timestep"]) if self.fixed_timestep else None
        self.cfl = config.get("CFL", 0.0)
        if not self.fixed_timestep and not 0.0 < self.cfl <= 1.0:
            raise ValueError(f"runtime CFL must be in (0, 1], got {self.cfl!r}")
        self.mesh_info = mesh_info
        self.material = material
        self.eps = 1e-8
        self.step = 0

    def max_wave_rate(self, pri_var):
        """``max over cells of sum_axes (|u_axis| + c) / dx_axis`` (a Python float)."""
        c = self.material.sound_speed(pri_var)
        rate = None
        for axis in self.mesh_info.active_axis:
            term = (ops.abs(pri_var[axis + 1]) + c) / self.mesh_info.cell_sizes[axis]
            rate = term if rate is None else rate + term
        return float(ops.max(rate).asnumpy())

    def compute_timestep(self, pri_var):
        """Set ``self.timestep``: ``CFL / max_wave_rate``, cut so the run ends at ``end_time``.

        Args:
            pri_var (Tensor): ``[5, nx, ny, nz]`` primitive variables (interior).
        """
        if self.fixed_timestep:
            dt = float(self.timestep) if self.timestep is not None else 0.0
        else:
            dt = self.cfl / (self.max_wave_rate(pri_var) + self.eps)
        remaining = self.end_time - self.current_time
        if remaining > 0.0:
            dt = min(dt, remaining)
        self.timestep = dt
        return dt

    def advance(self):
        """Move the clock by one time step."""
        if self.timestep is None:
            raise RuntimeError("RunTime.advance called before compute_timestep set a time step")
        self.current_time += self.timestep
        self.step += 1

    def check_state(self, pri_var):
        """Raise ``FloatingPointError`` naming step, time and cell if ``pri_var`` has a NaN/inf."""
        data = np.asarray(pri_var.asnumpy())
        bad = ~np.isfinite(data)
        if bad.any():
            var, *cell = (int(i) for i in np.argwhere(bad)[0])
            names = ("rho", "u", "v", "w", "p")
            raise FloatingPointError(
                f"non-finite {names[var]} = {data[(var, *cell)]} at step {self.step}, "
                f"time {self.current_time:.6g}, cell {tuple(cell)} (of {data.shape[1:]}); "
                "try a smaller CFL or positivity: true"
            )

    def time_loop(self, pri_var):
        """Whether to keep stepping: false at ``end_time``; NaN in ``pri_var`` is an error."""
        self.check_state(pri_var)
        if self.timestep is not None and self.timestep < self.eps and self.step > 0:
            return False
        return self.current_time < self.end_time and not math.isclose(
            self.current_time, self.end_time, rel_tol=1e-12, abs_tol=1e-14
        )
