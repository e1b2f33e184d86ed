"""Domain decomposition of the FDTD time loop over MPI ranks (``core.communication``).

    from core import communication as comm
    from mindelec import fdtd
    from mindelec.fdtd.distributed import DistributedSimulation
    comm.init()
    sim = DistributedSimulation(grid, materials, {"x": fdtd.CPML(10), "y": fdtd.CPML(10)},
                                sources=[fdtd.PointSource("ez", (40, 30), pulse)],
                                monitors=[fdtd.PointProbe("ez", (60, 30))])
    state, results = sim.run(500)     # results["probe"] on rank 0 (zeros elsewhere)

launched as ``mpiexec -n P python script.py``; the arguments are the serial ``Simulation``'s
(global grid and indices), and a plain ``python script.py`` (a world of one) runs the same
loop on one slab.

Decomposition: the x axis is cut into ``P`` equal slabs, rank ``r`` owning cells
``[r nx/P, (r+1) nx/P)`` of every field component (the Yee components share the grid's index
space, ``grid``). The update is Taflove & Hagness eqs. (3.x)/(4.x) as in ``yee``: the H half
step differentiates E forward along x (``E[i+1] - E[i]``) and the E step differentiates H
backward (``H[i] - H[i-1]``), so each half step needs one layer from one neighbour: before it,
the first and last x layers of the components that are differentiated along x (stacked, one
message per direction) travel by ``core.communication.halo_exchange`` (non-blocking
``MPI_Isend``/``MPI_Irecv``, differentiable). Boundaries act on the physical faces only:
PEC/PMC walls are folded into the update coefficients (sliced per slab), the zero field beyond
a non-periodic x face is the missing neighbour of rank 0 / rank ``P - 1``, a periodic x axis
makes the ranks a ring, and the CPML (Roden & Gedney 2000) of an x face lives on the ranks whose
slab intersects it, each holding its part of the ``psi`` slabs and profiles. y and z are whole
on every rank. Point sources and monitors act on the rank owning their x index; monitor results
are reduced (summed, the others contributing zeros) to rank 0 (``core.communication.reduce``,
differentiable: its VJP broadcasts the cotangent back).

The fields are the serial ones to round-off (the same arithmetic cell by cell), and so are
gradients through ``run`` with ``core.grad`` (materials, amplitudes...).

Gradients: every rank must take the same path through the exchanges' derivatives, so the
differentiated Tensors must reach every rank's fields: material maps do (each slab's
coefficients), soft point sources do (elsewhere they add 0 x their value), monitors do (a rank
without one contributes 0 x its fields). A hard source's parameters or an initial state given on
one rank only do not: differentiate those on a single rank.

Supported: ``PointSource``; ``PointProbe`` and ``DFTMonitor`` whose region has an int x entry
(a point or a y-z plane); PEC, PMC, periodic and CPML faces. Not (a ``NotImplementedError``):
Mur faces, dispersive media, other sources and monitors. The update coefficients are
computed globally on every rank (the material maps are global inputs) and then sliced.

Cost per step and rank (the scaling model of ``bench/scaling.py``): compute ~ (nx/P) ny nz
cells x 6 components; communication 2 exchanges of one x layer of 2 (2D) / 2 (3D, stacked)
components each way.
"""

from __future__ import annotations

import copy

import numpy as np

import core
from core import communication as comm
from core import ops

from .dft import DFTMonitor, DFTState, dft_init, dft_value
from .grid import AXES
from .monitors import PointProbe
from .simulation import Simulation, _step_tensor
from .sources import PointSource
from .state import FieldState
from .yee import cpml_embed, cpml_slab, curl_terms, diff_backward, diff_forward, psi_shapes

__all__ = ["DistributedSimulation"]

_TAG = 200


def slab_bounds(n, size, rank, halo=1):
    """``(start, stop)`` of this rank's x cells; ``ValueError`` (same text on every rank) when
    ``size`` does not divide ``n`` or leaves slabs thinner than ``halo`` cells."""
    from core.communication.decomposition import slab_bounds as _bounds

    return _bounds(n, size, rank, halo, "FDTD grid")


def _x_entry(monitor):
    """The x entry of a DFT monitor's region (None for the whole array)."""
    return None if monitor.region is None else next(iter(monitor.region))


class _SlabBoundaries:
    """The global ``Boundaries`` seen from one slab: x is never periodic (neighbours give the
    ghost layer) and the x CPML is the part of its slabs that this rank holds."""

    def __init__(self, inner, pml_x):
        self.inner = inner
        self.pml_x = pml_x

    def periodic(self, axis):
        return False if axis == 0 else self.inner.periodic(axis)

    def pml_cells(self, axis):
        return self.pml_x if axis == 0 else self.inner.pml_cells(axis)

    def has_cpml(self, axis):
        return sum(self.pml_x) > 0 if axis == 0 else self.inner.has_cpml(axis)


class DistributedSimulation:
    """``Simulation`` split in x slabs over the ranks of ``group`` (module docstring).

    Args:
        grid, materials, boundaries, sources, monitors: as ``Simulation`` (global).
        group: a ``core.communication`` group name (the world by default).
        jit: run each step compiled with ``core.jit`` (the exchanges are graph equations).

    Attributes:
        rank, size, start, stop: this rank, the slab count, its x cells ``[start, stop)``.
        serial: the global ``Simulation`` (checks, coefficients); ``local_grid``: the slab's.

    Raises:
        ValueError: on every rank, when the world size does not divide ``nx`` (or leaves
            slabs thinner than the 1-cell halo), or the serial checks fail.
        NotImplementedError: unsupported boundaries, sources or monitors (named).
    """

    def __init__(
        self, grid, materials=None, boundaries=None, sources=(), monitors=(), group=None, jit=True
    ):
        self.group = group
        self.rank = comm.get_rank(group)
        self.size = comm.get_group_size(group)
        self.start, self.stop = slab_bounds(grid.shape[0], self.size, self.rank)
        self.serial = Simulation(grid, materials, boundaries, sources, monitors, native=False)
        b = self.serial.boundaries
        if self.serial.dispersive is not None:
            raise NotImplementedError("DistributedSimulation: dispersive media are not supported")
        if b.has_mur:
            raise NotImplementedError(
                "DistributedSimulation: Mur faces are not supported (use CPML)"
            )
        self.grid = grid
        n = grid.shape[0]
        periodic = b.periodic(0)
        r, p = self.rank, self.size
        self.prev = (r - 1) % p if (r > 0 or periodic) else None
        self.next = (r + 1) % p if (r < p - 1 or periodic) else None
        lo, hi = b.pml_cells(0)
        self._low = (self.start, min(lo, self.stop))  # global x cells of the low PML held here
        self._high = (max(n - hi, self.start), self.stop)
        pml_x = (max(self._low[1] - self._low[0], 0), max(self._high[1] - self._high[0], 0))
        self.boundaries = _SlabBoundaries(b, pml_x)
        self.local_grid = copy.copy(grid)
        self.local_grid.shape = (self.stop - self.start, *grid.shape[1:])
        self.coeffs = self._local_coefficients(self.serial.coeffs, lo, hi)
        self.sources = [self._local_source(s) for s in self.serial.sources]
        self.monitors = [self._local_monitor(m) for m in self.serial.monitors]
        self._step_jit = core.jit(self._step) if jit else self._step

    # ---- set-up -----------------------------------------------------------------------------
    def _owns(self, i):
        return self.start <= int(i) < self.stop

    def _local_coefficients(self, coeffs, lo, hi):
        n = self.grid.shape[0]
        out = {}
        for key, value in coeffs.items():
            if key.startswith("pml_") and key.endswith("_x"):
                rows = list(range(*self._low)) if self._low[1] > self._low[0] else []
                if self._high[1] > self._high[0]:
                    rows += [lo + c - (n - hi) for c in range(*self._high)]
                if rows:
                    out[key] = ops.concatenate([value[i : i + 1] for i in rows], axis=0)
            elif (
                isinstance(value, core.Tensor)
                and value.ndim == self.grid.ndim
                and (value.shape[0] == n)
            ):
                out[key] = value[self.start : self.stop]
            else:
                out[key] = value
        return out

    def _local_source(self, source):
        if type(source) is not PointSource:
            raise NotImplementedError(
                f"DistributedSimulation: source {getattr(source, 'name', source)!r} "
                f"({type(source).__name__}) is not supported; use PointSource"
            )
        local = copy.copy(source)
        if self._owns(source.index[0]):
            local.index = (source.index[0] - self.start, *source.index[1:])
            return local
        if source.hard:
            return None
        # elsewhere a soft source adds 0 x its value at the slab's first cell: the fields are
        # unchanged (x + 0.0 == x) but depend on the source's Tensors on every rank, so that
        # every rank takes the same path through the exchanges' derivatives (SPMD grad)
        local.index = (0,) * len(source.index)
        local.amplitude = 0.0 * source.amplitude
        return local

    def _local_monitor(self, monitor):
        if type(monitor) is PointProbe:
            x = monitor.index[0]
        elif type(monitor) is DFTMonitor and isinstance(_x_entry(monitor), (int, np.integer)):
            x = int(_x_entry(monitor))
        else:
            raise NotImplementedError(
                f"DistributedSimulation: monitor {monitor.name!r} ({type(monitor).__name__}) is "
                "not supported; use a PointProbe or a DFTMonitor whose region has an int x entry"
            )
        if not self._owns(x):
            return None
        local = copy.copy(monitor)
        if type(monitor) is PointProbe:
            local.index = (x - self.start, *monitor.index[1:])
        else:
            local.region = (x - self.start, *tuple(monitor.region)[1:])
        return local

    def initial_state(self):
        """Zero fields of the slab and its ``psi`` terms."""
        return FieldState.zeros(self.local_grid, psi_shapes(self.local_grid, self.boundaries))

    # ---- one step ---------------------------------------------------------------------------
    def _x_halo(self, state, kind):
        """The neighbour layer each x derivative of this half step needs, by component."""
        other = self.grid.e_components if kind == "h" else self.grid.h_components
        mine = self.grid.h_components if kind == "h" else self.grid.e_components
        needed = {other[0][0] + AXES[k] for name in mine
                  for j, k, _ in curl_terms(name, self.grid) if j == 0}  # fmt: skip
        names = [c for c in other if c in needed]
        if not names:
            return {}
        stack = ops.stack([state.get(c) for c in names])  # [c, nx_local, ...]
        m = stack.shape[1]
        halo = comm.halo_exchange(
            stack[:, :1], stack[:, m - 1 :], self.prev, self.next, self.group, _TAG
        )  # [2, c, 1, ...]: row 0 prev's last layer, row 1 next's first layer
        row = halo[1] if kind == "h" else halo[0]
        return {c: row[i] for i, c in enumerate(names)}

    def _curl(self, name, state, coeffs, psi, kind, halo):
        """``yee._curl`` on the slab: x differences use the neighbour layer ``halo``."""
        grid, b = self.local_grid, self.boundaries
        total = None
        for j, k, sign in curl_terms(name, grid):
            src = ("e" if kind == "h" else "h") + AXES[k]
            f = state.get(src)
            if j == 0:
                if kind == "h":  # forward: F[i+1] - F[i], F[n] from the next rank (0 at a wall)
                    delta = ops.concatenate([f[1:], halo[src]], axis=0) - f
                else:  # backward: F[i] - F[i-1], F[-1] from the previous rank
                    delta = f - ops.concatenate([halo[src], f[:-1]], axis=0)
            else:
                diff = diff_forward if kind == "h" else diff_backward
                delta = diff(f, j, b.periodic(j))
            key = f"{name}_{AXES[j]}"
            term = delta * (1.0 / grid.spacing[j])
            if key in psi:  # Roden & Gedney eqs. 9-10, on the PML cells this rank holds
                axis = AXES[j]
                lo, hi = b.pml_cells(j)
                slab = cpml_slab(delta, j, lo, hi)
                new_psi = (
                    coeffs[f"pml_b{kind}_{axis}"] * psi[key] + coeffs[f"pml_a{kind}_{axis}"] * slab
                )
                psi[key] = new_psi
                extra = coeffs[f"pml_dk{kind}_{axis}"] * slab + new_psi
                term = term + cpml_embed(extra, j, lo, hi, grid.shape[j])
            term = term if sign > 0 else -term
            total = term if total is None else total + term
        return total

    def _half_step(self, kind, coeffs, state):
        halo = self._x_halo(state, kind)
        psi = dict(state.psi)
        new = {}
        names = self.grid.h_components if kind == "h" else self.grid.e_components
        a, bkey = ("da", "db") if kind == "h" else ("ca", "cb")
        for name in names:
            curl = self._curl(name, state, coeffs, psi, kind, halo)
            ca = coeffs[f"{a}_{name}"]
            old = state.get(name)
            old = old if isinstance(ca, float) and ca == 1.0 else ca * old
            cb = coeffs[f"{bkey}_{name}"]
            new[name] = old - cb * curl if kind == "h" else old + cb * curl
        return state.replace(psi=psi, **new)

    def _step(self, coeffs, state, step):
        grid = self.local_grid
        state = self._half_step("h", coeffs, state)
        for source in self.sources:
            if source is not None:
                state = source.inject_h(state, step, grid)
        state = self._half_step("e", coeffs, state)
        for source in self.sources:
            if source is not None:
                state = source.inject(state, step, grid)
        return state

    def step(self, state, step=0):
        """One step of the slab (compiled unless ``jit=False``): ``(E^n, H^{n-1/2}) ->
        (E^{n+1}, H^{n+1/2})``, with the two halo exchanges (``step`` = n)."""
        return self._step_jit(self.coeffs, state, _step_tensor(step))

    # ---- the loop ---------------------------------------------------------------------------
    def run(self, steps, state=None, start=0):
        """Advance ``steps`` steps from ``state`` (default: zero fields of the slab).

        Returns:
            ``(state, results)``: this rank's slab ``FieldState`` and ``{monitor.name:
            result}`` on rank 0 (zeros on the other ranks): a probe ``[steps]``, a DFT
            ``[nf, *region_shape]`` complex.
        """
        steps = int(steps)
        if steps < 1:
            raise ValueError(f"steps must be >= 1, got {steps}")
        state = self.initial_state() if state is None else state
        carries = [m.init_carry(self.local_grid, state) if m is not None else None
                   for m in self.monitors]  # fmt: skip
        values = [[] for _ in self.monitors]
        for n in range(int(start), int(start) + steps):
            step = _step_tensor(n)
            state = self._step_jit(self.coeffs, state, step)  # (``self.step``)
            for i, m in enumerate(self.monitors):
                if m is not None:
                    carries[i], value = m.update(carries[i], state, step)
                    values[i].append(value)
        results = {}
        for i, glob in enumerate(self.serial.monitors):
            results[glob.name] = self._reduce_monitor(glob, self.monitors[i], carries[i],
                                                      values[i], steps, state)  # fmt: skip
        return state, results

    def _reduce_monitor(self, glob, local, carry, values, steps, state):
        dtype = self.grid.dtype
        # a rank without the monitor contributes zeros that still depend on its fields (0 x
        # their sum), so every rank differentiates through the reduction (SPMD grad)
        anchor = ops.sum(state.get(glob.component)) * 0.0
        if type(glob) is PointProbe:
            series = ops.stack(values) if local is not None else ops.zeros((steps,), dtype=dtype)
            return comm.reduce(series + anchor, dst=0, group=self.group)
        if local is None:  # the region's shape without the x entry, zeros
            shape = np.broadcast_to(np.zeros(()), self.grid.shape)[tuple(glob.region)].shape
            carry = dft_init(glob.freqs.shape[0], shape, dtype)
            carry = DFTState(re=carry.re + anchor, im=carry.im + anchor)
        re = comm.reduce(carry.re, dst=0, group=self.group)
        im = comm.reduce(carry.im, dst=0, group=self.group)
        return dft_value(DFTState(re=re, im=im))

    def gather(self, state):
        """The global field components ``{name: [nx, ...]}`` on every rank (``all_gather``)."""
        return {c: comm.all_gather(v, group=self.group, axis=0)
                for c, v in state.components().items()}  # fmt: skip
