"""Domain decomposition of the CFD solver over MPI ranks (``core.communication``).

    from diffsci.core import communication as comm
    from diffsci.mindflow.cfd.distributed import DistributedSimulator
    comm.init()
    dsim = DistributedSimulator(config)                  # the same config as Simulator's
    u = dsim.scatter(cal_con_var(pri_var_0, dsim.material))   # [5, nx / P, ny, nz] slab
    u = dsim.run(u)                                      # CFL time loop, global time step
    full = dsim.gather(u)                                # [5, nx, ny, nz] on every rank

launched as ``mpiexec -n P python script.py`` (or ``python -m diffsci.core.launch -n P script.py``);
a plain ``python script.py`` is a world of one and runs the serial solver.

Decomposition: the first spatial axis (x) is cut into ``P`` equal slabs, rank ``r`` owning
cells ``[r nx/P, (r+1) nx/P)``. Each rank runs an ordinary ``Simulator`` on its slab whose
x ghost cells come from the neighbours instead of a boundary condition: before every
Runge-Kutta stage, the ``pad`` cells next to each internal face (``pad_size``: at least 3 for
WENO5, the reconstruction stencil's half width) travel by ``core.communication.halo_exchange``
(non-blocking ``MPI_Isend``/``MPI_Irecv``, both directions posted together). Physical boundary
conditions (``x_min`` / ``x_max``) fill only the faces of the global domain: rank 0's head and
rank ``P - 1``'s tail; a ``Periodic`` x axis makes the ranks a ring. The other axes (y, z) are
whole on every rank and keep their boundary conditions. The ghosts are exactly the serial
ghosts, so a P-rank run equals the 1-rank run cell for cell (to round-off). The CFL time step
is the global one (an ``all_reduce`` max of the wave rate), so the step sequence is the serial
one too.

Gradients: the exchange is differentiable (its VJP is the same exchange of the cotangents), so
``core.grad`` through ``rollout`` gives the serial gradient. Every rank must take the same path
through the exchanges' derivatives (SPMD), so differentiate with respect to Tensors that every
rank's slab depends on, e.g. each rank's own initial slab (the tests) or a parameter that all
ranks use.

Cost per stage and rank (the scaling model of ``bench/scaling.py``): compute ~ (nx/P) ny nz
cells; communication 2 messages of ``pad * ny * nz * 5`` values each way.
"""

import copy

import numpy as np

from diffsci import core
from diffsci.core import communication as comm
from diffsci.core import ops
from diffsci.core.communication.decomposition import slab_bounds as slab_bounds

from .runtime import RunTime
from .simulator import Simulator
from .utils import cal_pri_var

__all__ = ["DistributedSimulator", "slab_bounds"]

_TAG = 100  # tail cells travel to the next rank with tag 100, head cells to the previous with 101


class _SlabBoundary:
    """The ``BoundaryManager`` of one slab: x ghosts from the neighbours (``sendrecv``) or
    the physical boundary on the faces of the global domain; y, z as the serial manager."""

    def __init__(self, inner, prev, nxt, group):
        self.inner = inner
        self.mesh_info = inner.mesh_info
        self.prev, self.next, self.group = prev, nxt, group

    def fill_boundarys(self, pri_var):
        """Pad ``pri_var`` ``[5, nx_local, ny, nz]`` with ghost cells (see ``BoundaryManager``)."""
        pad = self.mesh_info.pad
        for i in self.mesh_info.active_axis:
            if i == 0:
                n = pri_var.shape[1]
                tail = ops.slice_axis(pri_var, 1, n - pad, n)
                head = ops.slice_axis(pri_var, 1, 0, pad)
                # one exchange of both directions on every rank (kept whole by core.jit)
                halo = comm.halo_exchange(head, tail, self.prev, self.next, self.group, _TAG)
                from_prev, from_next = halo[0], halo[1]
                if self.prev is None:
                    from_prev = self.inner.head_list[0].fill_values_head(pri_var, 0, pad)
                if self.next is None:
                    from_next = self.inner.tail_list[0].fill_values_tail(pri_var, 0, pad)
                lo, hi = from_prev, from_next
            else:
                lo = self.inner.head_list[i].fill_values_head(pri_var, i, pad)
                hi = self.inner.tail_list[i].fill_values_tail(pri_var, i, pad)
            pri_var = ops.concatenate([lo, pri_var, hi], axis=i + 1)
        return pri_var


class DistributedSimulator:
    """``Simulator`` over x slabs, one per rank of ``group`` (see the module docstring).

    Args:
        config (dict): the serial ``Simulator``'s config (global mesh).
        net_dict (dict): passed to each slab's ``Simulator``.
        group: a ``core.communication`` group name (the world by default).

    Attributes:
        rank, size: this rank and the number of slabs.
        start, stop: this rank's global x cells ``[start, stop)``.
        local: the slab's ``Simulator`` (its mesh has ``nx = stop - start``).
        material: the fluid (``local.material``).

    Raises:
        ValueError: on every rank, before any message, when the world size does not divide
            ``nx`` or leaves a slab thinner than ``pad_size`` cells.
    """

    def __init__(self, config, net_dict=None, group=None):
        self.group = group
        self.rank = comm.get_rank(group)
        self.size = comm.get_group_size(group)
        self.global_simulator = Simulator(config, net_dict)  # validates; global mesh info
        gmesh = self.global_simulator.mesh_info
        self.nx, self.pad = int(gmesh.nx), int(gmesh.pad)
        self.start, self.stop = slab_bounds(self.nx, self.size, self.rank, self.pad, "CFD mesh")
        local_cfg = copy.deepcopy(config)
        dx = gmesh.cell_sizes[0]
        x0 = gmesh.x_range[0]
        local_cfg["mesh"]["nx"] = self.stop - self.start
        local_cfg["mesh"]["x_range"] = [x0 + self.start * dx, x0 + self.stop * dx]
        self.local = Simulator(local_cfg, net_dict)
        # the serial cell size, bit for bit (the slab's range / cells may round differently)
        self.local.mesh_info.cell_sizes[0] = dx
        visc = self.local.space_solver.viscous_flux_computer
        if visc is not None:
            visc.cell_sizes[0] = dx
        periodic = config["boundary_conditions"]["x_min"]["type"] == "Periodic"
        r, p = self.rank, self.size
        prev = (r - 1) % p if (r > 0 or periodic) else None
        nxt = (r + 1) % p if (r < p - 1 or periodic) else None
        self.local.boundary = _SlabBoundary(self.local.boundary, prev, nxt, group)
        self.prev, self.next = prev, nxt
        self.material = self.local.material
        self.mesh_info = self.local.mesh_info
        self.last_runtime = None

    # ---- data movement ----------------------------------------------------------------------
    def scatter(self, con_var):
        """This rank's slab ``[5, nx/P, ny, nz]`` of a global ``[5, nx, ny, nz]`` state
        (every rank holds the global array; build it per slab for big grids)."""
        want = (5, *self.global_simulator.mesh_info.number_of_cells)
        if tuple(con_var.shape) != want:
            raise ValueError(f"scatter: con_var must have shape {want}, got {con_var.shape}")
        return ops.slice_axis(con_var, 1, self.start, self.stop)

    def gather(self, con_var):
        """The global ``[5, nx, ny, nz]`` state on every rank from the slabs (``all_gather``
        along x; differentiable: its VJP is ``reduce_scatter``)."""
        return comm.all_gather(con_var, group=self.group, axis=1)

    # ---- time stepping ----------------------------------------------------------------------
    def integration_step(self, con_var, timestep):
        """One step of every integrator stage on the slab (halo exchange before each stage)."""
        return self.local.integration_step(con_var, timestep)

    def rollout(self, con_var, timestep, steps, checkpoint_every=None):
        """``steps`` fixed steps on the slab (``Simulator.rollout``; differentiable)."""
        return self.local.rollout(con_var, timestep, steps, checkpoint_every)

    def global_max_wave_rate(self, pri_var):
        """``max over all ranks' cells of sum_axes (|u| + c) / dx`` (a Python float)."""
        runtime = RunTime({"CFL": 1.0}, self.mesh_info, self.material)
        local = core.tensor([runtime.max_wave_rate(pri_var)], dtype=core.float64)
        return float(comm.all_reduce(local, op="max", group=self.group).asnumpy()[0])

    def run(self, con_var, end_time=None, jit=True):
        """The CFL-adaptive loop of ``Simulator.run`` on the slab, with the global time step.

        Args:
            con_var (Tensor): this rank's ``[5, nx/P, ny, nz]`` slab.
            end_time (float): overrides ``config['runtime']['end_time']``.
            jit (bool): step with the compiled step (the exchanges are graph equations).

        Returns:
            The slab at ``end_time``.

        Raises:
            FloatingPointError: a NaN/inf on any rank (raised on every rank).
        """
        self.local._check_shape(con_var)
        cfg = dict(self.local.config.get("runtime", {}))
        if end_time is not None:
            cfg["end_time"] = end_time
        runtime = RunTime(cfg, self.mesh_info, self.material)
        step_fn = self.local.compiled_step if jit else self.local.integration_step
        pri_var = cal_pri_var(con_var, self.material)
        while self._time_loop(runtime, pri_var):
            if runtime.fixed_timestep:
                runtime.compute_timestep(pri_var)
            else:
                rate = self.global_max_wave_rate(pri_var)
                dt = runtime.cfl / (rate + runtime.eps)
                remaining = runtime.end_time - runtime.current_time
                runtime.timestep = min(dt, remaining) if remaining > 0.0 else dt
            con_var = step_fn(con_var, runtime.timestep)
            runtime.advance()
            pri_var = cal_pri_var(con_var, self.material)
        self.last_runtime = runtime
        return con_var

    def _time_loop(self, runtime, pri_var):
        bad = np.array([0.0 if np.isfinite(np.asarray(pri_var.asnumpy())).all() else 1.0])
        any_bad = comm.all_reduce(core.tensor(bad), op="max", group=self.group)
        if float(any_bad.asnumpy()[0]) > 0.0:
            try:
                runtime.check_state(pri_var)
            except FloatingPointError as exc:
                msg = f"rank {self.rank} (x cells from {self.start}): {exc}"
                raise FloatingPointError(msg) from None
            raise FloatingPointError(
                f"rank {self.rank}: another rank's slab has a NaN/inf at step {runtime.step}"
            )
        return runtime.time_loop(pri_var)
