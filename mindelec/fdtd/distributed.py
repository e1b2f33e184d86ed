"""Domain decomposition of the FDTD time loop over MPI ranks (``core.communication``).

    from diffsci.core import communication as comm
    from diffsci.mindelec import fdtd
    from diffsci.mindelec.fdtd.distributed import DistributedSimulation
    comm.init()
    sim = DistributedSimulation(grid, materials, {"x": fdtd.CPML(10), "y": fdtd.CPML(10)},
                                sources=[fdtd.PointSource("ez", (40, 30), pulse)],
                                monitors=[fdtd.PointProbe("ez", (60, 30))])
    state, results = sim.run(500)     # results["probe"] on rank 0 (zeros elsewhere)
    # or: the serial problem as built for Simulation, split over the ranks
    sim = DistributedSimulation.from_simulation(fdtd.Simulation(grid, ...))

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
makes the ranks a ring, the CPML (Roden & Gedney 2000) of an x face lives on the ranks whose
slab intersects it, each holding its part of the ``psi`` slabs and profiles, and Mur's update
(Taflove & Hagness eq. 6.35) of an x face runs on rank 0 / rank ``P - 1`` only (y and z faces
on every rank, on its part of the face). y and z are whole on every rank.

Everything the serial ``Simulation`` computes once per run is computed globally on every rank
and then sliced: the update coefficients with what the sources' ``prepare`` folded in
(``structures.CellMedium``, ``PECEdges``/``PECPlate``, the lumped elements' conductance), the
CPML profiles, the dispersive media's ADE coefficients. Per step, each rank does the serial
step's operations on its cells, in the serial order:

- native half steps (``native_yee``, when the serial run would use them: ``native=True`` and a
  C compiler): each half step is the serial C kernel (and its native adjoint) on the slab,
  which takes the field beyond the slab as zero, and then the one layer next to the cut is
  corrected for the neighbour's layer (the curl's x difference, and the CPML ``psi`` there:
  a few operations on one layer, see ``_native_half_step``); the same numbers as the serial
  kernel to round-off (the cut layer's sum is regrouped);
- sources: ``PointSource`` (soft or hard) on the rank owning its cell; lumped elements
  (``lumped``: ``VoltageSource``, ``Resistor``, ``LumpedElement``, ``CurrentSource``,
  ``tfsf.LineSource``) on the ranks their block of edges intersects, each with its part of the
  block (the drive ``-Cb' V_s / (R n_par A)`` of the element's eq. (2), sliced); a
  total-field/scattered-field ``tfsf.PlaneWave`` on every rank: grid-aligned (or
  ``method="auxiliary"``), the 1D auxiliary grid is replicated (``O(length)`` per step) and the
  incident field sampled on the slab and one layer either side, so the corrections of the x
  faces need no message; oblique with incident-field tables, each rank keeps the tables'
  columns on its slab; structures that act through ``prepare`` alone (``CellMedium``,
  ``PECEdges``/``PECPlate``) are in the sliced coefficients;
- dispersive media (``dispersive``: Drude/Lorentz ADE): the polarization currents live with
  their cells (``state.aux["dispersive"]`` holds the slab's part); the ADE update is pointwise,
  so no extra message;
- monitors: ``PointProbe``; ``DFTMonitor`` (an int x entry: the rank that owns it; a
  unit-step slice or the whole array: each rank its x range, zero-padded into the region and
  summed); ``EnergyMonitor`` (each rank the energy of its cells); the port monitors
  ``VoltageMonitor`` (``-sum E d / n_par``, each rank the sum over its edges) and
  ``CurrentMonitor`` (the loop integral of H: the ``H[i-1]`` of the first x layer is the
  neighbour's layer that the E half step received); ``FluxMonitor`` (time or frequency
  domain) whose box may span the cut, each rank its part of every face (the x faces' ``H`` half
  a cell below the face from the same ghost layer). A rank's part of a sum-like result
  (probe, port V and I, flux, energy) is its partial sum; results are summed on rank 0
  (``core.communication.reduce``, differentiable: its VJP broadcasts the cotangent back), or
  on every rank with ``run(..., all_ranks=True)``; the S-parameters then follow on rank 0 from
  the reduced port signals (``sparams.SParameterSolver``) exactly as in a serial script.

The fields are the serial ones to round-off (the same arithmetic cell by cell; sums over the
cut are regrouped), and so are gradients through ``run`` with ``core.grad`` (materials,
amplitudes...), on the composite and the native update (whose adjoint is native).

Gradients: ``core.grad`` of a loss of rank 0's results gives each rank the derivative
through its own slab: sum it over the ranks (``core.communication.all_reduce``): a material
map's gradient is each slab's part of it, a replicated parameter's (an amplitude) the sum of
its uses on every slab. Every rank must take the same path through the exchanges'
derivatives, so the differentiated Tensors must reach every rank's fields: material maps do
(each slab's coefficients), soft point sources, lumped sources and plane waves do (where
they have no cell they add 0 x their value at the slab's first cell), monitors do (a rank
without one contributes 0 x its fields). A hard source's parameters or an initial state
given on one rank only do not: differentiate those on a single rank.

Not supported (a ``NotImplementedError`` naming the feature): source classes not named above
(a user's own ``Source`` subclass: its ``inject`` would see the slab's indices),
DFT monitors whose region has a strided slice along x, and a Mur x face on slabs of one cell.

Cost per step and rank (the scaling model of ``bench/scaling.py``): compute ~ (nx/P) ny nz
cells x 6 components (native: plus one copy of each corrected component, 1 (2D) / 2 (3D) per
half step); communication 2 exchanges of one x layer of 1 (2D) / 2 (3D, stacked) components
each way. Memory: the slab's fields, coefficients and monitor state during the run; at
set-up every rank builds the global serial ``Simulation`` (coefficient maps, plane-wave
tables) before slicing, so the set-up's peak is one global problem per rank.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np

from diffsci import core
from diffsci.core import communication as comm
from diffsci.core import ops

from .dft import DFTMonitor, DFTState, dft_init, dft_value
from .dispersive import AUX_KEY
from .flux import FluxMonitor
from .grid import AXES
from .lumped import CurrentMonitor, CurrentSource, LumpedElement, VoltageMonitor
from .monitors import EnergyMonitor, PointProbe
from .native_yee import HalfStep
from .simulation import Simulation, _step_tensor
from .sources import PointSource, Source, h_time
from .state import FieldState
from .tfsf import PlaneWave
from .yee import (
    Materials,
    curl_terms,
    diff_backward,
    diff_forward,
    psi_shapes,
    stretched_difference,
)

__all__ = ["DistributedSimulation"]

_TAG = 200
_HALO = "_halo_h"  # the E half step's ghost layer of H, shown to the monitors (not carried)


def slab_bounds(n, size, rank, halo=1):
    """``(start, stop)`` of this rank's x cells; ``ValueError`` (same text on every rank) when
    ``size`` does not divide ``n`` or leaves slabs thinner than ``halo`` cells."""
    from diffsci.core.communication.decomposition import slab_bounds as _bounds

    return _bounds(n, size, rank, halo, "FDTD grid")


def _x_entry(monitor):
    """The x entry of a DFT monitor's region (None for the whole array)."""
    return None if monitor.region is None else next(iter(monitor.region))


def _prepare_only(source):
    """Whether ``source`` acts through ``prepare`` alone (a medium, a PEC sheet, a resistor):
    nothing to do per step once the coefficients are sliced."""
    kind = type(source)
    plain = (
        kind.inject is Source.inject
        and kind.inject_h is Source.inject_h
        and kind.init_aux is Source.init_aux
    )
    if isinstance(source, LumpedElement):
        return source.waveform is None
    return plain


class _SlabBoundaries:
    """The global ``Boundaries`` seen from one slab: x is never periodic (neighbours give the
    ghost layer) and the x CPML is the part of its slabs that this rank holds."""

    def __init__(self, inner, pml_x):
        self.inner = inner
        self.pml_x = tuple(pml_x)

    def periodic(self, axis):
        return False if axis == 0 else self.inner.periodic(axis)

    def pml_cells(self, axis):
        return self.pml_x if axis == 0 else self.inner.pml_cells(axis)

    def has_cpml(self, axis):
        return sum(self.pml_x) > 0 if axis == 0 else self.inner.has_cpml(axis)


class _Nothing:
    """A face with no boundary update (a cut between slabs, for ``apply_mur``)."""

    kind = "cut"


class DistributedSimulation:
    """``Simulation`` split in x slabs over the ranks of ``group`` (module docstring).

    Args:
        grid, materials, boundaries, sources, monitors, dispersive: as ``Simulation``
            (global grid, indices and maps).
        group: a ``core.communication`` group name (the world by default).
        jit: compile ``run`` (one ``core.ops.scan``) and ``step`` with ``core.jit`` (the
            exchanges are graph equations); False: the same, eager.
        native: run each half step with the serial native C kernel on the slab (corrected at
            the cut) where the serial ``Simulation(native=True)`` would; False: the
            composite ``yee`` update.

    Attributes:
        rank, size, start, stop: this rank, the slab count, its x cells ``[start, stop)``.
        serial: the global ``Simulation`` (checks, sources, monitors; built with
            ``native=False``; its global coefficients are dropped once sliced);
            ``local_grid``: the slab's.
        native: whether the half steps run natively (``{"h": bool, "e": bool}``).
        sources, monitors: this rank's parts (None where it has none).

    Raises:
        ValueError: on every rank, when the world size does not divide ``nx`` (or leaves
            slabs thinner than the 1-cell halo), or the serial checks fail.
        NotImplementedError: unsupported boundaries, sources or monitors (named).
    """

    def __init__(
        self,
        grid,
        materials=None,
        boundaries=None,
        sources=(),
        monitors=(),
        group=None,
        jit=True,
        native=True,
        dispersive=None,
    ):
        self.group = group
        self.rank = comm.get_rank(group)
        self.size = comm.get_group_size(group)
        self.start, self.stop = slab_bounds(grid.shape[0], self.size, self.rank)
        self.serial = Simulation(
            grid, materials, boundaries, sources, monitors, native=False, dispersive=dispersive
        )
        b = self.serial.boundaries
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
        self._mur = self._local_mur(b) if b.has_mur else None
        self.dispersive = None
        if self.serial.dispersive is not None:
            self.dispersive = copy.copy(self.serial.dispersive)
            self.dispersive.grid = self.local_grid
        self.coeffs = {"slab": self._local_coefficients(self.serial.coeffs, lo, hi)}
        self.serial.coeffs = None  # the global maps are not needed past the slicing
        self.sources = [self._local_source(s) for s in self.serial.sources]
        self.monitors = [self._local_monitor(m) for m in self.serial.monitors]
        self._plans = {}
        if native:
            self._native_plans()
        self.native = {kind: kind in self._plans for kind in ("h", "e")}
        self._step_jit = core.jit(self._step) if jit else self._step
        self._run_jit = self._run
        if jit:
            self._run_jit = core.jit(self._run, static_argnames=("steps", "checkpoint"))

    @classmethod
    def from_simulation(cls, sim, group=None, jit=True, native=None):
        """The serial ``Simulation`` ``sim`` split over the ranks (its grid, materials,
        boundaries, sources, monitors and dispersive media; ``native``: as ``sim`` unless
        given). Lumped elements' ``prepare`` runs again on the same objects (same values)."""
        dispersive = None if sim.dispersive is None else sim.dispersive.materials
        native = bool(sim._plans) if native is None else native
        return cls(sim.grid, sim.materials, sim.boundaries, sim.sources, sim.monitors,
                   group=group, jit=jit, native=native, dispersive=dispersive)  # fmt: skip

    # ---- set-up -----------------------------------------------------------------------------
    def _owns(self, i):
        return self.start <= int(i) < self.stop

    def _local_mur(self, b):
        """A copy of the global ``Boundaries`` on the slab for ``apply_mur``: the x faces only
        on the ranks that hold them."""
        m = self.stop - self.start
        low, high = b.sides[0]
        low = low if self.start == 0 else _Nothing()
        high = high if self.stop == self.grid.shape[0] else _Nothing()
        if "mur" in (low.kind, high.kind) and m < 2:
            raise NotImplementedError(
                f"DistributedSimulation: a Mur x face needs slabs of >= 2 cells, got {m}"
            )
        local = copy.copy(b)
        local.grid = self.local_grid
        local.sides = [(low, high), *b.sides[1:]]
        return local

    def _slice_value(self, value):
        n = self.grid.shape[0]
        if isinstance(value, dict):
            return {k: self._slice_value(v) for k, v in value.items()}
        if isinstance(value, core.Tensor) and value.ndim == self.grid.ndim and value.shape[0] == n:
            return value[self.start : self.stop]
        return value

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
            else:
                out[key] = self._slice_value(value)
        return out

    def _clip_block(self, block):
        """The part of an ``_EdgeBlock`` on this slab (slab indices), or None."""
        x0, x1 = max(block.start[0], self.start), min(block.stop[0], self.stop)
        if x0 >= x1:
            return None
        local = copy.copy(block)
        local.start = (x0 - self.start, *block.start[1:])
        local.stop = (x1 - self.start, *block.stop[1:])
        return local

    def _local_source(self, source):
        if _prepare_only(source):
            return None  # folded into the (sliced) coefficients
        if type(source) is PointSource:
            return self._local_point(source)
        if type(source) is PlaneWave:
            return _SlabPlaneWave.local(source, self)
        if isinstance(source, (LumpedElement, CurrentSource)) and type(source).inject in (
            LumpedElement.inject,
            CurrentSource.inject,
        ):
            return self._local_lumped(source)
        raise NotImplementedError(
            f"DistributedSimulation: source {getattr(source, 'name', source)!r} "
            f"({type(source).__name__}) is not supported; use PointSource, lumped sources "
            "(VoltageSource, Resistor, CurrentSource), tfsf.PlaneWave or prepare-only structures"
        )

    def _local_point(self, source):
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

    def _local_lumped(self, source):
        block = self._clip_block(source.block)
        if block is None:  # 0 x its value at the slab's first cell (see ``_local_point``)
            return _ZeroTouch(source)
        local = copy.copy(source)
        local.block = block
        g0 = source.block.start[0]
        local._drive = source._drive[block.start[0] + self.start - g0 : block.stop[0]
                                     + self.start - g0]  # fmt: skip
        return local

    def _local_monitor(self, monitor):
        kind = type(monitor)
        if kind is PointProbe:
            x = monitor.index[0]
            if not self._owns(x):
                return None
            local = copy.copy(monitor)
            local.index = (x - self.start, *monitor.index[1:])
            return local
        if kind is DFTMonitor and isinstance(_x_entry(monitor), (int, np.integer)):
            x = int(_x_entry(monitor))
            if not self._owns(x):
                return None
            local = copy.copy(monitor)
            local.region = (x - self.start, *tuple(monitor.region)[1:])
            return local
        if kind is DFTMonitor and _dft_x_range(monitor, self.grid) is not None:
            x0, x1 = _dft_x_range(monitor, self.grid)
            lo, hi = max(x0, self.start), min(x1, self.stop)
            if lo >= hi:
                return None
            rest = (slice(None),) * (self.grid.ndim - 1)
            rest = rest if monitor.region is None else tuple(monitor.region)[1:]
            local = copy.copy(monitor)
            local.region = (slice(lo - self.start, hi - self.start), *rest)
            return local
        if kind is EnergyMonitor:
            local = copy.copy(monitor)
            local.grid = self.local_grid
            local.materials = Materials(**{f.name: self._slice_value(getattr(
                monitor.materials, f.name)) for f in dataclasses.fields(Materials)})  # fmt: skip
            return local
        if kind in (VoltageMonitor, CurrentMonitor):
            block = self._clip_block(monitor.block)
            if block is None:
                return None
            local = copy.copy(monitor)
            local.block = block
            if kind is CurrentMonitor:
                local.__class__ = _SlabCurrentMonitor
                local._periodic = (False, *monitor._periodic[1:])
            return local
        if kind is FluxMonitor:
            return _SlabFlux.local(monitor, self.start, self.stop)
        raise NotImplementedError(
            f"DistributedSimulation: monitor {monitor.name!r} ({kind.__name__}) is not "
            "supported; use PointProbe, DFTMonitor (an int or a unit-step slice along x), "
            "EnergyMonitor, VoltageMonitor, CurrentMonitor or FluxMonitor"
        )

    def initial_state(self):
        """Zero fields of the slab, its ``psi`` terms, the sources' aux state (a plane wave's
        auxiliary grid: whole on every rank) and the dispersive currents."""
        state = FieldState.zeros(self.local_grid, psi_shapes(self.local_grid, self.boundaries))
        aux = {}
        for source in self.sources:
            extra = None if source is None else source.init_aux(self.local_grid)
            if extra is not None:
                aux[source.name] = extra
        if self.dispersive is not None:
            aux[AUX_KEY] = self.dispersive.init_aux()
        return state.replace(aux=aux)

    # ---- native half steps on the slab, corrected at the cut ---------------------------------
    def _native_plans(self):
        """The serial ``HalfStep`` plans on the slab (x a wall on both sides: the kernel takes
        zero beyond the slab); none where the serial run would not be native."""
        grid = self.grid
        slab = self.coeffs["slab"]
        for kind, names in (("h", grid.h_components), ("e", grid.e_components)):
            terms = {name: curl_terms(name, grid) for name in names}
            keys = [k for k in self._psi_keys() if k[0] == kind]
            plan = HalfStep(kind, terms, self.local_grid, self.boundaries, slab, keys)
            function = plan.function()
            if function is not None:
                self._plans[kind] = (plan, function)

    def _psi_keys(self):
        from .yee import psi_keys

        return psi_keys(self.local_grid, self.boundaries)

    def _native_half_step(self, kind, coeffs, state, halo):
        """The serial kernel on the slab, then the layer next to the cut corrected for the
        neighbour's layer ``G`` that the kernel took as zero.

        The curl's x difference there is ``D = G - F[m-1]`` (H step, last layer) or
        ``F[0] - G`` (E step, first layer): the kernel's differs by ``dD = G`` or ``-G``, so
        the curl term ``sign (D / dx [+ dk D + psi])`` gains ``sign dD (1 / dx [+ dk + a])`` and,
        in an x PML, ``psi`` (Roden & Gedney eq. 9: ``psi = b psi + a D``) gains ``a dD``; the
        layer's new value gains ``-Db`` (H) / ``+Cb`` (E) times that. On every rank, also at a
        wall (``G`` = 0 there), so that each rank's exchange feeds its update and derivative.
        Without a neighbour on either side (one rank, non-periodic) the kernel alone is the
        serial one."""
        plan, function = self._plans[kind]
        slab = coeffs["slab"]
        parts = function(*plan.operands(state, slab))
        new, new_psi = plan.unpack(parts)
        if self.size == 1 and self.prev is None and self.next is None:
            return state.replace(psi={**state.psi, **new_psi}, **new)
        m = self.local_grid.shape[0]
        row = m - 1 if kind == "h" else 0
        held_lo, held_hi = self.boundaries.pml_x
        if row < held_lo:
            pidx = row
        elif row >= m - held_hi:
            pidx = held_lo + row - (m - held_hi)
        else:
            pidx = None
        inv_dx = 1.0 / self.grid.spacing[0]
        b_name = "db" if kind == "h" else "cb"
        for name in plan.terms:
            dcurl = None
            for j, k, sign in curl_terms(name, self.grid):
                if j != 0:
                    continue
                src = ("e" if kind == "h" else "h") + AXES[k]
                d_delta = halo[src] if kind == "h" else -halo[src]  # [1, ...]
                term = d_delta * inv_dx
                key = f"{name}_x"
                if pidx is not None and key in new_psi:
                    a = slab[f"pml_a{kind}_x"][pidx : pidx + 1]
                    dk = slab[f"pml_dk{kind}_x"][pidx : pidx + 1]
                    psi = new_psi[key]
                    psi_row = psi[pidx : pidx + 1] + a * d_delta
                    new_psi[key] = ops.concatenate([psi[:pidx], psi_row, psi[pidx + 1 :]], axis=0)
                    term = term + (dk + a) * d_delta
                term = term if sign > 0 else -term
                dcurl = term if dcurl is None else dcurl + term
            if dcurl is None:
                continue
            coef = slab[f"{b_name}_{name}"]
            if isinstance(coef, core.Tensor) and coef.ndim == self.grid.ndim:
                coef = coef[row : row + 1]
            field = new[name]
            fixed = field[row : row + 1] + (-coef * dcurl if kind == "h" else coef * dcurl)
            parts = [field[: m - 1], fixed] if kind == "h" else [fixed, field[1:]]
            new[name] = ops.concatenate(parts, axis=0)
        return state.replace(psi={**state.psi, **new_psi}, **new)

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
            # (the CPML on the PML cells this rank holds)
            term = stretched_difference(delta, name, j, kind, coeffs, psi, b, grid)
            term = term if sign > 0 else -term
            total = term if total is None else total + term
        return total

    def _half_step(self, kind, coeffs, state):
        """``(state, halo)``: the half step of the slab and the ghost layer it read."""
        halo = self._x_halo(state, kind)
        if kind in self._plans:
            return self._native_half_step(kind, coeffs, state, halo), halo
        coeffs = coeffs["slab"]
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
        return state.replace(psi=psi, **new), halo

    def _step(self, coeffs, state, step):
        """``Simulation._step`` on the slab; returns ``(state, halo, halo_h)``: the new state,
        the ghost layer of H the E half step read (for the monitors) and the H half step's.
        Every rank's update reads both exchanges (at a wall their zeros), so ``core.jit``
        keeps them all: a rank dropping one would leave its neighbour waiting."""
        grid = self.local_grid
        slab = coeffs["slab"]
        before_h = state
        state, halo_h = self._half_step("h", coeffs, state)
        if self._mur is not None:  # the tangential H row outside the high faces (``Mur``)
            state = self._mur.apply_mur(state, before_h, "h")
        for source in self.sources:
            if source is not None:
                state = source.inject_h(state, step, grid)
        before = state
        if self.dispersive is None:
            state, halo = self._half_step("e", coeffs, state)
        else:  # the ADE's explicit currents (``Simulation._step``), pointwise on the slab
            current = self.dispersive.before_e(state, slab)
            state, halo = self._half_step("e", coeffs, state)
            state = state.replace(
                **{c: state.get(c) - slab[f"cb_{c}"] * current[c] for c in current}
            )
        if self._mur is not None:  # the tangential E on the faces
            state = self._mur.apply_mur(state, before, "e")
        for source in self.sources:
            if source is not None:
                state = source.inject(state, step, grid)
        if self.dispersive is not None:
            e_old = {c: before.get(c) for c in grid.e_components}
            aux = self.dispersive.after_e(state.aux[AUX_KEY], slab, e_old, state)
            state = state.replace(aux={**state.aux, AUX_KEY: aux})
        return state, halo, halo_h

    def step(self, state, step=0):
        """One step of the slab (compiled unless ``jit=False``): ``(E^n, H^{n-1/2}) ->
        (E^{n+1}, H^{n+1/2})``, with the two halo exchanges (``step`` = n)."""
        return self._step_jit(self.coeffs, state, _step_tensor(step))[0]

    def _advance(self, coeffs, state, step, carries):
        """One step and the monitors' updates (one compiled call per step): ``(state,
        carries, values, halo_h)``; the monitors see the E half step's ghost layer of H."""
        state, halo, halo_h = self._step(coeffs, state, step)
        seen = state.replace(aux={**state.aux, _HALO: halo})
        new, values = [], []
        for m, carry in zip(self.monitors, carries, strict=True):
            if m is None:
                new.append(None)
                values.append(None)
                continue
            carry, value = m.update(carry, seen, step)
            new.append(carry)
            values.append(value)
        # the H half step's exchange stays in the compiled graph (see ``_step``)
        return state, new, values, halo_h

    # ---- the loop ---------------------------------------------------------------------------
    def _run(self, coeffs, state, start, steps, checkpoint):
        """The loop as one ``core.ops.scan`` (``Simulation._run``): ``(state, carries,
        values)``, ``values[i]`` the stacked per-step values of this rank's monitor ``i``."""
        carries0 = [m.init_carry(self.local_grid, state) if m is not None else None
                    for m in self.monitors]  # fmt: skip

        def body(carry, n):
            state, carries = carry
            state, carries, values, _ = self._advance(coeffs, state, n, carries)
            return (state, carries), values

        steps_index = start + ops.arange(steps, dtype=core.int64)
        (state, carries), values = ops.scan(
            body, (state, carries0), xs=steps_index, checkpoint=checkpoint
        )
        return state, carries, values

    def run(self, steps, state=None, start=0, all_ranks=False, checkpoint=None):
        """Advance ``steps`` steps from ``state`` (default: zero fields of the slab).

        As ``Simulation.run``, the steps are one ``core.ops.scan`` compiled with ``core.jit``
        (``jit=False``: the same scan, eager), whose reverse pass under ``core.grad`` stores
        checkpoints of the carry and recomputes the rest (the recomputed steps exchange their
        halos again, on every rank alike).

        Args:
            steps, state, start, checkpoint: as ``Simulation.run``.
            all_ranks: sum the monitors' results onto every rank (``all_reduce``) instead of
                rank 0 only. Under ``core.grad`` every rank's loss then counts (the VJP of
                ``all_reduce`` sums the cotangents of the ``P`` copies): the gradient is ``P``
                times that of one loss; divide by ``size``.

        Returns:
            ``(state, results)``: this rank's slab ``FieldState`` and ``{monitor.name:
            result}`` on rank 0 (zeros on the other ranks unless ``all_ranks``): as the serial
            ``Simulation.run`` (a probe or port signal ``[steps]``, a DFT ``[nf,
            *region_shape]`` complex, a flux ``[nf]`` or ``[steps]``).
        """
        steps = int(steps)
        if steps < 1:
            raise ValueError(f"steps must be >= 1, got {steps}")
        state = self.initial_state() if state is None else state
        start_t = core.tensor(int(start), dtype=core.int64)
        state, carries, values = self._run_jit(
            self.coeffs, state, start_t, steps=steps, checkpoint=checkpoint
        )
        results = {}
        for i, glob in enumerate(self.serial.monitors):
            results[glob.name] = self._reduce_monitor(glob, self.monitors[i], carries[i],
                                                      values[i], steps, state,
                                                      all_ranks)  # fmt: skip
        return state, results

    def _sum(self, x, all_ranks):
        if all_ranks:
            return comm.all_reduce(x, group=self.group)
        return comm.reduce(x, dst=0, group=self.group)

    def _reduce_monitor(self, glob, local, carry, values, steps, state, all_ranks):
        dtype = self.grid.dtype
        # a rank without the monitor contributes zeros that still depend on its fields (0 x
        # their sum), so every rank differentiates through the reduction (SPMD grad)
        anchor = ops.sum(state.get(self.grid.e_components[0])) * 0.0
        if type(glob) is DFTMonitor:
            index = glob._index(self.grid.ndim)
            if local is None:  # the region's shape, zeros
                shape = np.broadcast_to(np.zeros(()), self.grid.shape)[index].shape
                carry = dft_init(glob.freqs.shape[0], shape, dtype)
                carry = DFTState(re=carry.re + anchor, im=carry.im + anchor)
            elif isinstance(index[0], slice):  # this rank's x range put in the region's
                x0, x1 = _dft_x_range(glob, self.grid)
                lo = local.region[0].start + self.start
                hi = local.region[0].stop + self.start
                pad = [(0, 0), (lo - x0, x1 - hi)] + [(0, 0)] * (carry.re.ndim - 2)
                carry = DFTState(re=ops.pad(carry.re, pad), im=ops.pad(carry.im, pad))
            re = self._sum(carry.re, all_ranks)
            im = self._sum(carry.im, all_ranks)
            return dft_value(DFTState(re=re, im=im))
        if type(glob) is FluxMonitor and glob.freqs is not None:
            if local is None:
                part = ops.zeros((glob.freqs.shape[0],), dtype=core.float64)
            else:
                part = local.finalize(carry, None)
            return self._sum(part + ops.astype(anchor, core.float64), all_ranks)
        # a signal per step: probes, port voltages and currents, time-domain flux
        series = ops.zeros((steps,), dtype=dtype) if local is None else values
        return self._sum(series + anchor, all_ranks)

    def gather(self, state):
        """The global field components ``{name: [nx, ...]}`` on every rank (``all_gather``)."""
        return {c: comm.all_gather(v, group=self.group, axis=0)
                for c, v in state.components().items()}  # fmt: skip


def _dft_x_range(monitor, grid):
    """``(x0, x1)``: the x cells of a DFT monitor whose region's x entry is a unit-step slice
    (or the whole array); None otherwise."""
    x = _x_entry(monitor)
    if x is None:
        return 0, grid.shape[0]
    if isinstance(x, slice) and x.step in (None, 1):
        x0, x1, _ = x.indices(grid.shape[0])
        return x0, x1
    return None


class _ZeroTouch(Source):
    """A lumped source's stand-in on a rank its block misses: adds 0 x its value at the
    slab's first edge, so the rank's fields depend on the source's Tensors (SPMD grad)."""

    def __init__(self, source):
        self.source = source
        self.name = source.name

    def inject(self, state, step, grid):
        s = self.source
        if isinstance(s, CurrentSource):
            value = s.current(h_time(step, grid))
        else:
            value = s.amplitude * s.waveform(h_time(step, grid))
        if not isinstance(value, core.Tensor):
            return state
        if value.dtype != grid.dtype:
            value = ops.astype(value, grid.dtype)
        field = state.get(s.component)
        index = (0,) * len(field.shape)
        return state.replace(**{s.component: ops.index_add(field, index, 0.0 * value)})


class _SlabCurrentMonitor(CurrentMonitor):
    """``CurrentMonitor`` on its part of the block: ``H[i-1]`` of the slab's first x layer
    is the neighbour's layer (``state.aux[_HALO]``, zeros at a wall)."""

    def _shifted_x(self, state, name):
        h = state.get(name)
        b = self.block
        if b.start[0] > 0:
            return self._shifted(h, 0)
        sl = list(b.slices)
        sl[0] = slice(0, b.stop[0] - 1)
        inner = h[tuple(sl)]
        sl[0] = slice(0, 1)
        first = state.aux[_HALO][name][tuple(sl)]
        return ops.concatenate([first, inner], axis=0) if inner.shape[0] else first

    def record(self, state, step):
        total = None
        for j, k, sign in self._terms:
            name = "h" + AXES[k]
            h = state.get(name)
            shifted = self._shifted_x(state, name) if j == 0 else self._shifted(h, j)
            term = (h[self.block.slices] - shifted) * (sign * self._area / self._grid.spacing[j])
            total = term if total is None else total + term
        return total.sum() * (self.block.sign / self._n_ser)


class _SlabFlux(FluxMonitor):
    """``FluxMonitor`` on the part of its faces this slab holds (each plan entry clipped along
    x, its weights with it); an x face on the slab's first layer reads ``H`` half a cell below
    from the neighbour's layer (``state.aux[_HALO]``)."""

    @classmethod
    def local(cls, monitor, start, stop):
        plan, from_halo = [], []
        for e, h, index, h_lo, w in monitor._plan:
            x = index[0]
            if isinstance(x, slice):
                x0, x1 = max(x.start, start), min(x.stop, stop)
                if x0 >= x1:
                    continue
                sl = slice(x0 - start, x1 - start)
                index = (sl, *index[1:])
                h_lo = (sl, *h_lo[1:])
                w = w[x0 - x.start : x1 - x.start]
                halo = False
            else:
                if not start <= x < stop:
                    continue
                index = (x - start, *index[1:])
                halo = x == start
                h_lo = (0 if halo else x - 1 - start, *h_lo[1:])
            plan.append((e, h, index, h_lo, w))
            from_halo.append(halo)
        if not plan:
            return None
        local = copy.copy(monitor)
        local.__class__ = cls
        local._plan = plan
        local._from_halo = from_halo
        return local

    def _samples(self, state):
        out = []
        for (e, h, index, h_lo, _w), halo in zip(self._plan, self._from_halo):
            hf = state.get(h)
            if halo:  # zeros before the first step (``init_carry``: E samples only)
                layer = state.aux.get(_HALO, {}).get(h)
                below = ops.zeros_like(hf[index]) if layer is None else layer[h_lo]
            else:
                below = hf[h_lo]
            out.append((state.get(e)[index], (hf[index] + below) * 0.5))
        return out


class _SlabPlaneWave(PlaneWave):
    """``tfsf.PlaneWave`` on a slab. Auxiliary-grid method: the 1D incident grid is whole on
    every rank (replicated, ``O(length)`` per step); the incident field is sampled on the slab
    and one layer either side, so the corrections' x differences (eq. (1) of ``tfsf``) need
    no message, and they are the serial ones cell by cell (beyond a non-periodic wall the
    serial zero and the clamped sample both give 0: the box keeps a cell from every wall).
    Array method (oblique incidence): the columns of the precomputed tables on the slab."""

    @classmethod
    def local(cls, wave, sim):
        start, stop = sim.start, sim.stop
        n = sim.grid.shape[0]
        local = copy.copy(wave)
        local.__class__ = cls
        local._touch = None
        mode = "wrap" if sim.serial.boundaries.periodic(0) else "clip"
        ext = np.arange(start - 1, stop + 1)
        rows = np.arange(start, stop)

        def cut(x, where=ext):  # a grid-shaped map (numpy or constant Tensor) on x cells
            if isinstance(x, core.Tensor):
                if x.ndim != sim.grid.ndim or x.shape[0] != n:
                    return x
                if where is rows:
                    return x[start:stop]
                return core.tensor(np.take(x.asnumpy(), where, axis=0, mode=mode), dtype=x.dtype)
            if np.ndim(x) != sim.grid.ndim:
                return x  # a number
            return np.take(x, where, axis=0, mode=mode)

        if wave._array is None:
            local._samples = {
                name: (kind, share, cut(idx), cut(frac))
                for name, (kind, share, idx, frac) in wave._samples.items()
            }
            local._fix = {
                kind: [(name, inc, j, periodic, cut(coef, rows), factor, cut(m_f), cut(m_g))
                       for name, inc, j, periodic, coef, factor, m_f, m_g in entries]
                for kind, entries in wave._fix.items()
            }  # fmt: skip
            return local
        local._array, local._coef = {}, {}
        for kind, tables in wave._array.items():
            local._array[kind], local._coef[kind] = {}, {}
            for name, (idx, table) in tables.items():
                keep = np.flatnonzero((idx[0] >= start) & (idx[0] < stop))
                if keep.size == 0:
                    continue
                at = (idx[0][keep] - start, *(i[keep] for i in idx[1:]))
                local._array[kind][name] = (at, ops.take(table, keep, axis=1))
                local._coef[kind][name] = cut(wave._coef[kind][name], rows)
        if not any(local._array.values()):  # 0 x the amplitude (SPMD grad, see _ZeroTouch)
            local._touch = wave.amplitude
        return local

    def _apply(self, state, kind, values, grid):
        diff = diff_forward if kind == "h" else diff_backward
        changes, cache = {}, {}
        for name, inc_name, j, periodic, coef, factor, m_f, m_g in self._fix[kind]:
            if inc_name not in cache:
                cache[inc_name] = self._incident(inc_name, values)
            inc = cache[inc_name]  # [m + 2, ...]: the slab and a layer either side
            delta = m_f * diff(inc, j, periodic and j > 0) - diff(m_g * inc, j, periodic and j > 0)
            delta = delta[1 : delta.shape[0] - 1]
            field = changes.get(name, state.get(name))
            changes[name] = field + coef * (delta * factor)
        return state.replace(**changes)

    def _apply_array(self, state, kind, step, grid):
        if self._touch is not None and isinstance(self._touch, core.Tensor):
            comp = grid.e_components[0]
            field = state.get(comp)
            touch = ops.astype(self._touch, field.dtype) * 0.0
            return state.replace(**{comp: ops.index_add(field, (0,) * field.ndim, touch)})
        return super()._apply_array(state, kind, step, grid)
