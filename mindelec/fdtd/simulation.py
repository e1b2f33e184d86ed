"""``Simulation``: the FDTD time loop, compiled with ``core.jit`` and staged as one scan.

    sim = Simulation(grid, Materials(eps_r=eps), boundaries={"x": CPML(10)},
                     sources=[PointSource("ez", (20,), Gaussian(3e9))],
                     monitors=[PointProbe("ez", (40,))])
    state, results = sim.run(1000)          # results["probe"]: Tensor [1000]

One step is ``yee.update_h``, the sources' ``inject_h``, ``yee.update_e``, the sources'
``inject``, Mur's boundary update where a face has one, and the monitors (the order and the
times are in ``sources``' docstring). ``run`` stages all its steps as one ``core.ops.scan``
inside ``core.jit`` (one compiled graph per step count). On the CPU with a C compiler each half
step is one native pass over the fields, with a native adjoint (``native_yee``); elsewhere the
composite ``yee`` update runs, fused by ``core.jit``. Where every source is a soft
``PointSource`` and every monitor samples points (``PointProbe``, ``PointProbes``; no
dispersive media, Mur faces or source state), the whole loop is one native call instead, and
its reverse pass a native checkpointed adjoint that uses a second thread (``native_run``). Under ``core.grad`` the scan's reverse
pass stores only checkpoints of the carry (``checkpoint=None``: about ``2 sqrt(N)`` states; an
int ``k``: every k-th; ``core.ops.CheckpointPolicy(budget=B)``: about ``B``) and recomputes the
rest, so the gradient of a long run has bounded memory. Material maps, amplitudes and waveform
parameters that are Tensors get gradients through the update coefficients and the injections;
run the gradient under ``core.jit`` (``core.jit(core.grad(loss))``) for speed.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from diffsci import core
from diffsci.core import ops

from .boundaries import Boundaries
from .dispersive import AUX_KEY, DispersiveUpdate
from .grid import AXES
from .native_run import native_run_for
from .native_yee import HalfStep
from .sources import PointSource
from .state import FieldState
from .waveforms import Waveform, check_resolution
from .yee import (
    Materials,
    curl_terms,
    psi_keys,
    psi_shapes,
    update_coefficients,
    update_e,
    update_h,
)

__all__ = ["Simulation"]


class Simulation:
    """An FDTD problem: grid, materials, boundaries, sources and monitors.

    Args:
        grid: the ``Grid``.
        materials: ``Materials`` (default: vacuum).
        boundaries: see ``boundaries`` (default: PEC on every face).
        sources: objects with the ``sources.Source`` interface.
        monitors: objects with the ``monitors.Monitor`` interface; their ``name`` keys the
            results (names must be unique).
        native: run each half step as one native C loop on the CPU (``native_yee``; values
            only: derivatives and other backends use the composite ``yee`` update); False
            always runs the composite. Ignored when the current device is not the CPU
            (``core.set_device("GPU")``: the composite update, fused by ``core.jit``).
        native_loop: run the whole time loop as one native call, with a native checkpointed
            reverse pass (``native_run``), where every source is a soft ``PointSource``, every
            monitor samples points (``Monitor.points``: ``PointProbe``, ``PointProbes``) and
            there are no dispersive media or Mur boundaries, on grids of at most
            ``native_run.NATIVE_LOOP_MAX_CELLS`` cells (2^19; above, the scan measured as fast
            or faster); False stages the loop as a ``core.ops.scan`` of native half steps.
        dispersive: a ``dispersive.DispersiveMaterial`` or a list of them (Drude/Lorentz
            poles by ADE; ``Materials.eps_r`` is their ``eps_inf``). The E half step keeps its
            native/composite path (the Drude conductivity is folded into ``Ca``, ``Cb``) and
            the polarization currents are one composite pass after it.

    Raises:
        ValueError: a source or monitor outside the grid or inside a PML, a material map of
            the wrong shape, duplicate monitor names.
    """

    def __init__(
        self,
        grid,
        materials=None,
        boundaries=None,
        sources=(),
        monitors=(),
        native=True,
        dispersive=None,
        native_loop=True,
    ):
        self.grid = grid
        # the native C paths work on host arrays; on a GPU every step is the composite update
        # (core.jit fuses its elementwise passes into cupy kernels)
        native = native and core.get_device() == "CPU"
        self.materials = (materials if materials is not None else Materials()).checked(grid)
        self.dispersive = None
        if dispersive is not None and not (
            isinstance(dispersive, (list, tuple)) and not dispersive
        ):
            self.dispersive = DispersiveUpdate(dispersive, grid)
        self.boundaries = (
            boundaries if isinstance(boundaries, Boundaries) else Boundaries(grid, boundaries)
        )
        self.sources = list(sources)
        self.monitors = list(monitors)
        names = [m.name for m in self.monitors]
        if len(set(names)) != len(names):
            raise ValueError(f"monitor names must be unique, got {names}")
        for item in (*self.sources, *self.monitors):
            item.check(grid, self.boundaries)
        self._check_fastest_medium()
        self._check_resolution()
        coefficient_materials = self.materials
        disp_coeffs = None
        if self.dispersive is not None:
            # the implicit parts of the ADE currents are a conductivity (Drude) and a
            # permittivity (Lorentz) in Ca, Cb
            sigma_extra, eps_extra, disp_coeffs = self.dispersive.coefficients()
            coefficient_materials = dataclasses.replace(
                self.materials,
                sigma=self.materials.sigma + sigma_extra,
                eps_r=self.materials.eps_r + eps_extra,
            ).checked(grid)
        coeffs = update_coefficients(grid, coefficient_materials, self.boundaries)
        if disp_coeffs is not None:
            coeffs[AUX_KEY] = disp_coeffs
        for source in self.sources:
            coeffs = source.prepare(coeffs, grid, self.boundaries)
        self.coeffs = coeffs
        self.psi_keys = psi_keys(grid, self.boundaries)
        self._plans = {}
        # soft point sources are added inside the native E half step, in place in its fresh
        # result (the composite's index_add copies the component every step), when every
        # source is one and nothing runs between the E update and the injection
        self._fused = ()
        fusable = (
            native
            and self.sources
            and self.dispersive is None
            and not self.boundaries.has_mur
            and all(type(s) is PointSource and not s.hard for s in self.sources)
        )
        if native:
            for kind, names in (("h", grid.h_components), ("e", grid.e_components)):
                terms = {name: curl_terms(name, grid) for name in names}
                keys = [k for k in self.psi_keys if k[0] == kind]
                plan = HalfStep(kind, terms, grid, self.boundaries, coeffs, keys)
                function = plan.function()
                if function is not None and kind == "e" and fusable:
                    injections = [(s.component, s.index) for s in self.sources]
                    fused = HalfStep(kind, terms, grid, self.boundaries, coeffs, keys, injections)
                    fused_function = fused.function()
                    if fused_function is not None:
                        plan, function = fused, fused_function
                        self._fused = tuple(self.sources)
                if function is not None:
                    self._plans[kind] = (plan, function)
        # the whole loop as one native call (and a native checkpointed reverse pass) where
        # sources and monitors allow it (``native_run``)
        self._native_run = native_run_for(self) if native and native_loop else None
        self._step_jit = core.jit(self._step)
        self._run_jit = core.jit(self._run, static_argnames=("steps", "checkpoint"))

    def _check_fastest_medium(self):
        """``ValueError`` when a medium faster than vacuum (``eps_r mu_r < 1``) pushes the
        local Courant number ``S / sqrt(eps_r mu_r)`` above the grid's limit (the Yee scheme's
        bound holds for the largest phase velocity on the grid)."""
        try:
            eps, mu = (
                v.asnumpy() if isinstance(v, core.Tensor) else np.asarray(v)
                for v in (self.materials.eps_r, self.materials.mu_r)
            )
        except Exception:  # symbolic under jit/grad
            return
        product = np.broadcast_to(np.asarray(eps) * np.asarray(mu), self.grid.shape).copy()
        # cells on PEC/PMC walls, where no E component is updated, do not count
        updated = np.zeros(self.grid.shape, dtype=bool)
        for name in self.grid.e_components:
            mask = self.boundaries.mask(name)
            updated |= True if mask is None else np.asarray(mask) != 0
        product[~updated] = np.inf
        lowest = float(product.min())
        if not np.isfinite(lowest):
            return
        local = self.grid.courant / math.sqrt(lowest)
        if local > self.grid.courant_limit * (1 + 1e-12):
            cell = tuple(int(i) for i in np.unravel_index(np.argmin(product), product.shape))
            raise ValueError(
                f"Courant number {self.grid.courant:.6g} is above the stability limit in the "
                f"fastest medium: eps_r mu_r = {lowest:.6g} at cell ({_where(cell)}) makes it "
                f"{local:.6g} > {self.grid.courant_limit:.6g}; use courant <= "
                f"{self.grid.courant_limit * math.sqrt(lowest):.6g}"
            )

    def _check_resolution(self):
        """Warn (``waveforms.ResolutionWarning``, naming the number) when a source's highest
        significant frequency has fewer than 10 cells per wavelength in the densest medium."""
        waves = [
            s.waveform for s in self.sources if isinstance(getattr(s, "waveform", None), Waveform)
        ]
        if not waves:
            return
        peaks = []
        for value in (self.materials.eps_r, self.materials.mu_r):
            try:
                array = value.asnumpy() if isinstance(value, core.Tensor) else np.asarray(value)
                peaks.append(float(np.max(array)))
            except Exception:  # symbolic under jit: checked when the values are concrete
                return
        if self.dispersive is not None:  # a Lorentz medium is denser below its resonance
            peaks[0] += self.dispersive.static_eps_peak()
        for wave in waves:
            try:
                check_resolution(wave, self.grid.spacing, peaks[0], peaks[1])
            except (TypeError, ValueError):  # traced waveform parameters
                continue

    # ---- state ----------------------------------------------------------------------------
    def initial_state(self, **fields) -> FieldState:
        """Zero fields and psi terms, the sources' aux state; ``fields`` overrides components
        (arrays of ``grid.shape``, converted to ``grid.dtype``; zeroed on PEC/PMC walls)."""
        state = FieldState.zeros(self.grid, psi_shapes(self.grid, self.boundaries))
        for name, value in fields.items():
            state.get(name)  # KeyError naming the present components
            if not isinstance(value, core.Tensor):
                value = core.tensor(np.asarray(value), dtype=self.grid.dtype)
            if tuple(value.shape) != self.grid.shape:
                raise ValueError(
                    f"initial {name} has shape {tuple(value.shape)}; the grid is {self.grid.shape}"
                )
            mask = self.boundaries.mask(name)
            if mask is not None:  # the walls hold tangential E (PEC) / H (PMC) at zero
                value = value * core.tensor(mask, dtype=self.grid.dtype)
            state = state.replace(**{name: value})
        aux = {}
        for source in self.sources:
            extra = source.init_aux(self.grid)
            if extra is not None:
                aux[source.name] = extra
        if self.dispersive is not None:
            aux[AUX_KEY] = self.dispersive.init_aux()
        return state.replace(aux=aux)

    # ---- one step -------------------------------------------------------------------------
    def _half_step(self, kind, coeffs, state, values=None):
        if kind not in self._plans:
            update = update_h if kind == "h" else update_e
            return update(state, coeffs, self.grid, self.boundaries)
        plan, function = self._plans[kind]
        # new components (point sources added where the plan fuses them), then new psi, flat
        parts = function(*plan.operands(state, coeffs, values))
        new, new_psi = plan.unpack(parts)
        return state.replace(psi={**state.psi, **new_psi}, **new)

    def _step(self, coeffs, state, step):
        grid = self.grid
        before_h = state
        state = self._half_step("h", coeffs, state)
        if self.boundaries.has_mur:  # the tangential H row outside the high faces (``Mur``)
            state = self.boundaries.apply_mur(state, before_h, "h")
        for source in self.sources:
            state = source.inject_h(state, step, grid)
        before = state
        if self._fused:
            values = ops.stack([_as_value(s.value(step, grid), grid) for s in self._fused])
            state = self._half_step("e", coeffs, state, values)
        elif self.dispersive is None:
            state = self._half_step("e", coeffs, state)
        else:
            # ADE (``dispersive``): E^{n+1} = [Ca E^n + Cb curl H] - Cb sum_p J_p (explicit part)
            current = self.dispersive.before_e(state, coeffs)
            state = self._half_step("e", coeffs, state)
            state = state.replace(
                **{c: state.get(c) - coeffs[f"cb_{c}"] * current[c] for c in current}
            )
        if self.boundaries.has_mur:  # the tangential E on the faces
            state = self.boundaries.apply_mur(state, before, "e")
        for source in self.sources:
            if source not in self._fused:
                state = source.inject(state, step, grid)
        if self.dispersive is not None:  # J^{n+1} from the final E^{n+1}
            e_old = {c: before.get(c) for c in grid.e_components}
            aux = self.dispersive.after_e(state.aux[AUX_KEY], coeffs, e_old, state)
            state = state.replace(aux={**state.aux, AUX_KEY: aux})
        return state

    def step(self, state: FieldState, step=0) -> FieldState:
        """One step, eagerly: ``(E^n, H^{n-1/2}) -> (E^{n+1}, H^{n+1/2})`` (``step`` = n)."""
        return self._step(self.coeffs, state, _step_tensor(step))

    def compiled_step(self, state: FieldState, step=0) -> FieldState:
        """``step`` compiled with ``core.jit`` (the coefficients are a graph input)."""
        return self._step_jit(self.coeffs, state, _step_tensor(step))

    # ---- the loop -------------------------------------------------------------------------
    def _run(self, coeffs, state, start, steps, checkpoint):
        grid = self.grid
        if self._native_run is not None and not state.aux:
            found = self._run_native(coeffs, state, start, steps, checkpoint)
            if found is not None:
                return found
        carries0 = [m.init_carry(grid, state) for m in self.monitors]

        def body(carry, n):
            state, carries = carry
            state = self._step(coeffs, state, n)
            new_carries, values = [], {}
            for monitor, mc in zip(self.monitors, carries, strict=True):
                mc, value = monitor.update(mc, state, n)
                new_carries.append(mc)
                values[monitor.name] = value
            return (state, new_carries), values

        steps_index = start + ops.arange(steps, dtype=core.int64)
        (state, carries), values = ops.scan(
            body, (state, carries0), xs=steps_index, checkpoint=checkpoint
        )
        results = {
            m.name: m.finalize(mc, values[m.name])
            for m, mc in zip(self.monitors, carries, strict=True)
        }
        return state, results

    def _run_native(self, coeffs, state, start, steps, checkpoint):
        """``_run`` as one native loop (``native_run``), or None where a source's values do not
        come out as one array ``[steps]`` (a waveform that takes only scalar times)."""
        run = self._native_run
        values = None
        if run.n_inj:
            steps_index = start + ops.arange(steps, dtype=core.int64)
            columns = []
            for source in self._fused:
                value = _as_value(source.value(steps_index, self.grid), self.grid)
                if tuple(value.shape) != (steps,):
                    return None
                columns.append(value)
            values = ops.stack(columns, axis=1)  # [steps, n_sources]
        fn = run.function(steps, checkpoint)
        h, e, traces = fn(*run.operands(state, coeffs, values))
        out = run.unpack_state(h, e, state)
        results = {
            m.name: m.finalize(None, v)
            for m, v in zip(self.monitors, run.results(traces, steps), strict=True)
        }
        return out, results

    def run(self, steps: int, state: FieldState | None = None, start: int = 0, checkpoint=None):
        """Advance ``steps`` steps from ``state`` (default: ``initial_state()``).

        Args:
            steps: number of steps (>= 1).
            state: the ``FieldState`` to start from (``E^start``, ``H^{start-1/2}``).
            start: index of the first step (the sources' time origin: ``t = (n + 1) dt``).
            checkpoint: the scan's checkpointing under ``core.grad`` (None: ~2 sqrt(steps)
                stored states; int ``k``: every k-th; False: all; ``CheckpointPolicy``).

        Returns:
            ``(state, results)``: the final ``FieldState`` and ``{monitor.name: result}``
            (a point probe: Tensor ``[steps]``).

        Raises:
            FloatingPointError: the fields became NaN/inf: names the first step, the field
                and the cell (the final state is checked once; only then is the run replayed
                to locate it). Runs under ``core.jit``/``core.grad`` carry symbolic values and
                are not checked.
        """
        steps = int(steps)
        if steps < 1:
            raise ValueError(f"steps must be >= 1, got {steps}")
        state = self.initial_state() if state is None else state
        start_t = core.tensor(int(start), dtype=core.int64)
        out, results = self._run_jit(
            self.coeffs, state, start_t, steps=steps, checkpoint=checkpoint
        )
        if _non_finite(out):
            self._locate_non_finite(state, int(start), steps)
        return out, results

    def _locate_non_finite(self, state, start, steps, chunk=128):
        """Name the first step, field and cell with a NaN/inf: the run is replayed in compiled
        chunks of ``chunk`` steps (checked between chunks), then step by step inside the first
        bad chunk. Only called when the final state is non-finite, so the normal loop pays a
        single check of its final state."""
        bad = _first_non_finite(state)
        if bad is not None:
            raise FloatingPointError(
                f"non-finite {bad[0]} = {bad[2]} at step {start} (already in the initial "
                f"state), cell ({_where(bad[1])}) of {self.grid.shape}"
            )
        n, end = start, start + steps
        while n < end:
            size = min(chunk, end - n)
            trial, _ = self._run_jit(
                self.coeffs,
                state,
                core.tensor(n, dtype=core.int64),
                steps=size,
                checkpoint=None,
            )
            if _first_non_finite(trial) is None:
                state, n = trial, n + size
                continue
            for m in range(n, n + size):
                state = self.compiled_step(state, m)
                bad = _first_non_finite(state)
                if bad is not None:
                    name, cell, value = bad
                    raise FloatingPointError(
                        f"non-finite {name} = {value} at step {m} "
                        f"(t = {(m + 1) * self.grid.dt:.6g} s), cell ({_where(cell)}) of "
                        f"{self.grid.shape}; check the Courant number, the materials (eps_r, "
                        "mu_r > 0, dispersive poles) and the sources"
                    )
            break
        raise FloatingPointError("the run produced non-finite fields (the replay did not)")


def _as_value(value, grid):
    """A point source's value as a 0-d Tensor of ``grid.dtype``."""
    if isinstance(value, core.Tensor):
        return value if value.dtype == grid.dtype else ops.astype(value, grid.dtype)
    return core.tensor(value, dtype=grid.dtype)


def _where(cell) -> str:
    return ", ".join(f"{a}={i}" for a, i in zip(AXES, cell))


def _first_non_finite(state):
    """``(name, cell, value)`` of the first non-finite entry of a component, psi term or
    dispersive current (components first), or None."""
    items = [*state.components().items(), *state.psi.items()]
    items += [(f"aux {k}", v) for k, v in state.aux.get(AUX_KEY, {}).items()]
    for name, field in items:
        data = field.asnumpy()
        bad = ~np.isfinite(data)
        if bad.any():
            cell = tuple(int(i) for i in np.argwhere(bad)[0])
            return name, cell, data[cell]
    return None


def _step_tensor(step):
    return step if isinstance(step, core.Tensor) else core.tensor(int(step), dtype=core.int64)


def _non_finite(state) -> bool:
    """Whether any concrete field of ``state`` holds NaN/inf (False for tracers)."""
    try:
        for field in (*state.components().values(), *state.psi.values()):
            if not np.all(np.isfinite(field.asnumpy())):
                return True
    except Exception:  # symbolic values under jit: nothing to check
        return False
    return False
