"""CFD simulator (MindFlow's ``Simulator``): one object built from a config dict."""

import numpy as np

from diffsci import core
from diffsci.core import ops

from .boundary_conditions import BoundaryManager
from .config import validate_config
from .integrator import define_integrator
from .material import define_material
from .mesh_info import MeshInfo
from .runtime import RunTime
from .space_solver import SpaceSolver
from .utils import cal_con_var, cal_pri_var

__all__ = ["Simulator"]


@core.jit_class
class Simulator:
    """Compressible Euler / Navier-Stokes finite-volume solver.

    State: conservative variables ``con_var`` ``[5, nx, ny, nz]`` (rho, rho u, rho v, rho w,
    E) without ghost cells. Each stage fills ghost cells from the primitive variables,
    evaluates the flux divergence and applies the integrator (Simulator.integration_step).
    Everything on the state path is core ops: differentiable with ``core.grad`` and
    compilable with ``core.jit``.

    Args:
        config (dict): MindFlow's config (sections ``mesh``, ``material``, ``runtime``,
            ``integrator``, ``space_solver``, ``boundary_conditions``); validated first.
        net_dict (dict): MindFlow's slot for networks inside the flux (passed through).

    Example:
        >>> sim = Simulator(load_yaml_config("examples/mindflow/cfd/sod/sod.yaml"))
        >>> con_var = sim.run(cal_con_var(pri_var_0, sim.material))
    """

    def __init__(self, config, net_dict=None):
        validate_config(config)
        self.config = config
        self.mesh_info = MeshInfo(config["mesh"])
        self.material = define_material(config["material"])
        self.integrator = define_integrator(config["integrator"])
        self.space_solver = SpaceSolver(
            config["space_solver"], self.mesh_info, self.material, net_dict
        )
        self.boundary = BoundaryManager(config["boundary_conditions"], mesh_info=self.mesh_info)
        self._compiled_step = None

    def _check_shape(self, con_var):
        want = (5, *self.mesh_info.number_of_cells)
        if tuple(con_var.shape) != want:
            raise ValueError(f"con_var must have shape {want} [5, nx, ny, nz], got {con_var.shape}")

    def compute_rhs(self, con_var):
        """``dU/dt`` on the interior ``[5, nx, ny, nz]`` after filling the ghost cells."""
        pri_var = cal_pri_var(con_var, self.material)
        filled = cal_con_var(self.boundary.fill_boundarys(pri_var), self.material)
        return self.space_solver.compute_rhs(filled)

    def integration_step(self, con_var, timestep):
        """Advance the state by one time step with all integrator stages.

        Args:
            con_var (Tensor): ``[5, nx, ny, nz]`` conservative variables.
            timestep (float | Tensor): the step.

        Returns:
            Tensor ``[5, nx, ny, nz]`` at ``t + timestep``.
        """
        init_con_var = con_var
        for stage in range(self.integrator.number_of_stages):
            rhs = self.compute_rhs(con_var)
            con_var = self.integrator.integrate(con_var, init_con_var, rhs, timestep, stage)
        return con_var

    @property
    def compiled_step(self):
        """``integration_step`` compiled by ``core.jit`` (one graph per state shape/dtype).

        The time step is passed as a 0-d tensor so that a CFL-adaptive run compiles once.
        """
        if self._compiled_step is None:
            jitted = core.jit(self.integration_step)

            def step(con_var, timestep):
                # a Python float would be a static argument: one graph per distinct dt
                if not isinstance(timestep, core.Tensor):
                    timestep = core.tensor(timestep, dtype=con_var.dtype)
                return jitted(con_var, timestep)

            self._compiled_step = step
        return self._compiled_step

    def rollout(self, con_var, timestep, steps, checkpoint_every=None):
        """``steps`` fixed steps (differentiable end to end with ``core.grad``).

        Args:
            con_var (Tensor): ``[5, nx, ny, nz]`` initial conservative variables.
            timestep (float | Tensor): the fixed step.
            steps (int): number of steps.
            checkpoint_every: memory of reverse mode. None (default): a Python loop, so the
                backward pass keeps every step's intermediates (memory grows with ``steps``).
                An int k: the steps run as one ``core.ops.scan`` that stores the state every
                k steps and recomputes one block of k steps at a time in the backward pass
                (about ``steps / k + k`` stored states plus one step's intermediates; forward
                cost x2). ``"sqrt"`` picks k ~ sqrt(steps) (scan's default policy); a
                ``core.ops.CheckpointPolicy`` is passed through. Gradients are the same.

        Returns:
            Tensor ``[5, nx, ny, nz]`` after ``steps`` steps.
        """
        steps = int(steps)
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        if checkpoint_every is None:
            for _ in range(steps):
                con_var = self.integration_step(con_var, timestep)
            return con_var
        policy = _checkpoint_policy(checkpoint_every)
        if steps == 0:
            return con_var

        def body(state, _):
            return self.integration_step(state, timestep), None

        con_var, _ = ops.scan(body, con_var, length=steps, checkpoint=policy)
        return con_var

    def check_initial_state(self, con_var):
        """Raise ``ValueError`` naming the first cell with non-positive density or pressure."""
        pri = np.asarray(cal_pri_var(con_var, self.material).asnumpy())
        for var, name in ((0, "density"), (4, "pressure")):
            bad = np.argwhere(~(pri[var] > 0.0))
            if bad.size:
                cell = tuple(int(i) for i in bad[0])
                raise ValueError(
                    f"initial state has non-positive {name} {pri[var][cell]} at cell {cell}"
                )

    def run(self, con_var, end_time=None, save_every=None, jit=True, progress=True):
        """Run the CFL-adaptive time loop from ``runtime.current_time`` to ``end_time``.

        Args:
            con_var (Tensor): initial ``[5, nx, ny, nz]`` conservative variables.
            end_time (float): overrides ``config['runtime']['end_time']``.
            save_every (int): keep a snapshot ``(time, con_var)`` every this many steps
                (and the initial and final states).
            jit (bool): step with the ``core.jit`` compiled step.
            progress (bool): show a tqdm progress bar over simulated time.

        Returns:
            The final ``con_var``; ``(con_var, snapshots)`` when ``save_every`` is given.

        Raises:
            ValueError: non-positive initial density or pressure.
            FloatingPointError: a NaN/inf appears (names step, time and cell).
        """
        from tqdm.auto import tqdm

        self._check_shape(con_var)
        self.check_initial_state(con_var)
        runtime_cfg = dict(self.config.get("runtime", {}))
        if end_time is not None:
            runtime_cfg["end_time"] = end_time
        runtime = RunTime(runtime_cfg, self.mesh_info, self.material)
        step_fn = self.compiled_step if jit else self.integration_step
        snapshots = [(runtime.current_time, con_var)] if save_every else None
        start = runtime.current_time
        total = max(runtime.end_time - start, 0.0)
        with tqdm(
            total=total,
            disable=not progress,
            leave=False,
            bar_format="{l_bar}{bar}| t = {n:.4g} / {total:.4g} [{elapsed}<{remaining}]",
        ) as bar:
            pri_var = cal_pri_var(con_var, self.material)
            while runtime.time_loop(pri_var):
                runtime.compute_timestep(pri_var)
                con_var = step_fn(con_var, runtime.timestep)
                runtime.advance()
                pri_var = cal_pri_var(con_var, self.material)
                bar.update(min(runtime.timestep, total - bar.n))
                if save_every and runtime.step % save_every == 0:
                    snapshots.append((runtime.current_time, con_var))
            runtime.check_state(pri_var)
        self.last_runtime = runtime
        if save_every:
            if snapshots[-1][0] != runtime.current_time:
                snapshots.append((runtime.current_time, con_var))
            return con_var, snapshots
        return con_var


def _checkpoint_policy(checkpoint_every):
    """``Simulator.rollout``'s ``checkpoint_every`` -> ``ops.scan``'s ``checkpoint``."""
    if isinstance(checkpoint_every, ops.CheckpointPolicy):
        return checkpoint_every
    if checkpoint_every == "sqrt":
        return None
    if isinstance(checkpoint_every, bool) or not isinstance(checkpoint_every, (int, np.integer)):
        raise ValueError(
            f"checkpoint_every must be None, a positive int, 'sqrt' or a "
            f"core.ops.CheckpointPolicy, got {checkpoint_every!r}"
        )
    if checkpoint_every < 1:
        raise ValueError(f"checkpoint_every must be >= 1, got {checkpoint_every}")
    return int(checkpoint_every)
