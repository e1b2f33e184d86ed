"""Lumped elements on Yee edges: a voltage source with internal resistance, a resistor, an
impressed current, and the port voltage and current monitors that feed ``SParameterSolver``.

A lumped element occupies a block of E edges of one component ``e<axis>`` (``axis`` is the
element's direction): ``n_ser`` edges in series along ``axis`` and ``n_par`` in parallel
across it. Each edge carries the conduction current density of a resistor ``r_e`` in series
with a source ``v_e`` (Piket-May, Taflove & Baron, IEEE T-MTT 42(8), 1994; Taflove & Hagness,
*Computational Electrodynamics*, 3rd ed., sec. 15.9, eqs. 15.50-15.53):

    J = (d / (r_e A)) E + v_e / (r_e A),      r_e = R n_par / n_ser,   v_e = V_s / n_ser,   (1)

with ``d`` the edge length and ``A`` the cross-section of one edge's cell (m^2). Put in
Ampere's law ``eps dE/dt = curl H - J`` and centred at ``t = (n + 1/2) dt`` (E averaged over the
two steps) it is a conductivity ``sigma_e = n_ser d / (R n_par A)`` at the element's edges
(MindElec's ``Resistor`` coefficient) plus an impressed current:

    E^{n+1} = Ca' E^n + Cb' curl H^{n+1/2} - Cb' V_s^{n+1/2} / (R n_par A),              (2)

where ``Ca'``, ``Cb'`` are ``yee``'s coefficients with ``sigma + sigma_e`` (``prepare``
rewrites them). In the steady state with no current, ``E = -V_s / (n_ser d)``: the port
voltage is ``V = -integral E . dl`` along ``+axis`` (the potential of the element's high end
minus its low end), so the high end is the positive terminal.

Port quantities (what ``SParameterSolver`` takes, Kurokawa's convention of ``sparams``):

- ``VoltageMonitor``: ``V = -sum_series E d`` (the line integral across the port), averaged
  over the ``n_par`` parallel columns, at ``t = (step + 1) dt``.
- ``CurrentMonitor``: ``I = loop integral of H`` around each edge (right-handed about
  ``+axis``; by the discrete Ampere law the edge's conduction plus displacement current),
  summed over the parallel edges and averaged over the series levels, at
  ``t = (step + 1/2) dt``. That is the current leaving the element's positive terminal, i.e.
  flowing *into* the network: the element's own cell (its gap capacitance) belongs to the
  source side.

``port_times(steps, dt)`` gives the two sample-time arrays that ``SParameterSolver`` needs.
"""

from __future__ import annotations

import numpy as np

from diffsci import core
from diffsci.core import ops

from .grid import AXES
from .monitors import Monitor
from .sources import Source, h_time
from .yee import curl_terms

__all__ = [
    "CurrentMonitor",
    "CurrentSource",
    "LumpedElement",
    "Resistor",
    "VoltageMonitor",
    "VoltageSource",
    "port_times",
]


def _axis_sign(axis) -> tuple[int, int]:
    """``(axis index, orientation)`` from ``"z"``/``"+z"``/``"zp"`` (+1), ``"-z"``/``"zn"`` (-1)
    (MindElec's ``polarization`` strings) or an int (+1)."""
    if isinstance(axis, str):
        text = axis.lower()
        sign = -1 if text.startswith("-") or (len(text) == 2 and text.endswith("n")) else 1
        name = text.strip("+-")[:1]
        if (
            name not in AXES
            or len(text.strip("+-")) > 2
            or text.strip("+-")[1:] not in ("", "p", "n")
        ):
            raise ValueError(
                f"axis must be 'x', 'y', 'z', '+z'/'-z' or 'zp'/'zn' (MindElec), got {axis!r}"
            )
        return AXES.index(name), sign
    return int(axis), 1


class _EdgeBlock:
    """A block of ``e<axis>`` edges: ``start`` (inclusive) to ``stop`` (exclusive) per axis."""

    def __init__(self, axis, start, stop=None, name="lumped"):
        self.axis, self.sign = _axis_sign(axis)
        self.component = "e" + AXES[self.axis]
        self.start = tuple(int(i) for i in start)
        if stop is None:
            stop = tuple(i + 1 for i in self.start)
        self.stop = tuple(int(i) for i in stop)
        self.name = name
        if len(self.start) != len(self.stop):
            raise ValueError(f"{name}: start {self.start} and stop {self.stop} differ in length")
        if any(b <= a for a, b in zip(self.start, self.stop)):
            raise ValueError(f"{name}: empty block start={self.start} stop={self.stop}")

    @property
    def oriented(self) -> str:
        """The axis with its orientation, ``"+z"`` or ``"-z"``."""
        return ("+" if self.sign > 0 else "-") + AXES[self.axis]

    @property
    def slices(self):
        return tuple(slice(a, b) for a, b in zip(self.start, self.stop))

    def counts(self):
        """``(n_ser, n_par)``: edges in series along the axis and in parallel across it."""
        n = [b - a for a, b in zip(self.start, self.stop)]
        n_ser = n[self.axis] if self.axis < len(n) else 1  # 2D: z is one (infinite) edge
        return n_ser, int(np.prod(n)) // n_ser

    def area(self, grid) -> float:
        """Cross-section of one edge's cell (m^2 in 3D; m in 2D, where the missing axis is per
        unit length; 1 in 1D)."""
        return float(np.prod([d for a, d in enumerate(grid.spacing) if a != self.axis]))

    def length(self, grid) -> float:
        """Edge length ``d`` along the axis (m; 1 for ``z`` on a 2D grid: per unit length)."""
        return grid.spacing[self.axis] if self.axis < grid.ndim else 1.0

    def check_block(self, grid, boundaries):
        if len(self.start) != grid.ndim:
            raise ValueError(f"{self.name}: start {self.start} needs {grid.ndim} entries")
        if not 0 <= self.axis < 3:
            raise ValueError(f"{self.name}: axis must be 0, 1 or 2 (x, y, z), got {self.axis}")
        if self.component not in grid.e_components:
            raise ValueError(
                f"{self.name}: component {self.component!r} is not an E component of this grid "
                f"({grid.e_components}); a lumped element along {AXES[self.axis]} needs it"
            )
        last = tuple(b - 1 for b in self.stop)
        for corner in (self.start, last):
            grid.check_index(corner, what=self.name, pml=boundaries.pml)
        mask = boundaries.mask(self.component)
        if mask is not None and not np.all(mask[self.slices]):
            raise ValueError(
                f"{self.name}: block {self.start}..{self.stop} touches a PEC/PMC wall where "
                f"{self.component} is held at zero"
            )

    def mask(self, grid) -> np.ndarray:
        m = np.zeros(grid.shape)
        m[self.slices] = 1.0
        return m


def _lossy_coefficients(coeffs, name, sigma_map, grid):
    """``(Ca', Cb')`` with ``sigma_map`` (S/m, numpy ``grid.shape``) added to the conductivity.

    From ``Ca = (1 - s) / (1 + s)`` and ``Cb = (dt / eps) / (1 + s)`` (``s = sigma dt / 2 eps``):
    ``s = (1 - Ca) / (1 + Ca)``, ``dt / eps = Cb (1 + s)``, then ``s' = s + sigma_e Cb (1 + s) / 2``
    (core ops, so a Tensor ``eps_r`` map keeps its gradient).
    """
    ones = core.tensor(np.ones(grid.shape), dtype=grid.dtype)
    ca = coeffs[f"ca_{name}"] * ones
    cb = coeffs[f"cb_{name}"] * ones
    s = (1.0 - ca) / (1.0 + ca)
    dt_eps = cb * (1.0 + s)
    s_new = s + core.tensor(0.5 * sigma_map, dtype=grid.dtype) * dt_eps
    return (1.0 - s_new) / (1.0 + s_new), dt_eps / (1.0 + s_new)


class LumpedElement(Source):
    """A resistor ``R`` (ohm) in series with a voltage ``amplitude * waveform(t)`` (V) on a
    block of ``e<axis>`` edges, eqs. (1)-(2).

    Args:
        axis: the element's direction, ``"x"``/``"y"``/``"z"`` or 0/1/2 (positive terminal at
            the block's high end); ``"-z"`` or MindElec's ``"zn"`` puts it at the low end
            (``"+z"``/``"zp"`` are ``"z"``): V, I and the drive change sign.
        start: first edge index (``ndim`` ints); ``stop``: one past the last per axis
            (default: one edge). The block must lie inside the grid and outside any PML.
        resistance: ``R`` of the whole element, ohm (> 0).
        waveform: callable ``w(t)`` (``waveforms``) or None for a plain resistor.
        amplitude: V, a number or a 0-d Tensor.
        name: key of the source (its monitors are named ``<name>_v``/``<name>_i``).

    ``prepare`` keeps the element's drive (``Cb'`` on its edges) on the instance: give each
    ``Simulation`` its own element objects.
    """

    def __init__(
        self,
        axis,
        start,
        stop=None,
        resistance=50.0,
        waveform=None,
        amplitude=1.0,
        name="lumped",
    ):
        if not float(resistance) > 0:
            raise ValueError(f"{name}: resistance must be > 0 ohm, got {resistance}")
        self.block = _EdgeBlock(axis, start, stop, name)
        self.resistance = float(resistance)
        self.waveform = waveform
        self.amplitude = amplitude
        self.name = name
        self._drive = None

    @property
    def component(self) -> str:
        return self.block.component

    def check(self, grid, boundaries) -> None:
        self.block.check_block(grid, boundaries)

    def sigma(self, grid) -> float:
        """The equivalent conductivity ``sigma_e = n_ser d / (R n_par A)`` (S/m)."""
        n_ser, n_par = self.block.counts()
        d = self.block.length(grid)
        return n_ser * d / (self.resistance * n_par * self.block.area(grid))

    def prepare(self, coeffs, grid, boundaries):
        mask = self.block.mask(grid)
        name = self.component
        ca, cb = _lossy_coefficients(coeffs, name, self.sigma(grid) * mask, grid)
        coeffs = dict(coeffs)
        coeffs[f"ca_{name}"], coeffs[f"cb_{name}"] = ca, cb
        _n_ser, n_par = self.block.counts()
        # (2): the impressed term is -Cb' V_s / (R n_par A) on the element's edges
        scale = self.block.sign / (self.resistance * n_par * self.block.area(grid))
        self._drive = cb[self.block.slices] * scale
        return coeffs

    def inject(self, state, step, grid):
        if self.waveform is None:
            return state
        if self._drive is None:
            raise RuntimeError(f"{self.name}: prepare() was not called (use it in a Simulation)")
        vs = self.amplitude * self.waveform(h_time(step, grid))
        if isinstance(vs, core.Tensor) and vs.dtype != grid.dtype:
            vs = ops.astype(vs, grid.dtype)
        field = state.get(self.component)
        delta = _embed(-self._drive * vs, self.block, grid)
        return state.replace(**{self.component: field + delta})

    def voltage_monitor(self, name=None) -> VoltageMonitor:
        """A ``VoltageMonitor`` across this element (named ``<name>_v``)."""
        b = self.block
        return VoltageMonitor(b.oriented, b.start, b.stop, name=name or f"{self.name}_v")

    def current_monitor(self, name=None) -> CurrentMonitor:
        """A ``CurrentMonitor`` around this element (named ``<name>_i``)."""
        b = self.block
        return CurrentMonitor(b.oriented, b.start, b.stop, name=name or f"{self.name}_i")


class VoltageSource(LumpedElement):
    """MindElec's ``VoltageSource``: a lumped voltage source ``V_s(t) = amplitude * waveform(t)``
    with internal resistance ``resistance`` (a port of ``SParameterSolver``; with
    ``amplitude=0`` it is the port's matched termination). Arguments as ``LumpedElement``."""

    def __init__(
        self, axis, start, stop=None, waveform=None, resistance=50.0, amplitude=1.0, name="port"
    ):
        if waveform is None:
            raise ValueError(f"{name}: a VoltageSource needs a waveform (use Resistor for none)")
        super().__init__(axis, start, stop, resistance, waveform, amplitude, name)


class Resistor(LumpedElement):
    """A lumped resistor of ``resistance`` ohm on a block of edges (eq. (1) with ``V_s = 0``;
    MindElec's ``Resistor``)."""

    def __init__(self, axis, start, stop=None, resistance=50.0, name="resistor"):
        super().__init__(axis, start, stop, resistance, None, 0.0, name)


class CurrentSource(Source):
    """An impressed current ``I(t) = amplitude * waveform(t)`` (A) along ``+axis`` on a block of
    edges, shared equally by the ``n_par`` parallel edges: ``J = I / (n_par A)`` in Ampere's law,
    ``E^{n+1} -= Cb J^{n+1/2}``.

    One edge in 3D is a Hertzian dipole of moment ``I d`` (A m); in 2D TMz (``axis="z"``) a line
    current ``I`` (A), the source of the 2D Green's function ``E_z = -(omega mu0 I / 4)
    H0^(2)(k rho)``. Args as ``LumpedElement`` (``amplitude`` in A).
    """

    def __init__(self, axis, start, waveform, stop=None, amplitude=1.0, name="current"):
        self.block = _EdgeBlock(axis, start, stop, name)
        self.waveform = waveform
        self.amplitude = amplitude
        self.name = name
        self._drive = None

    @property
    def component(self) -> str:
        return self.block.component

    def check(self, grid, boundaries) -> None:
        self.block.check_block(grid, boundaries)

    def prepare(self, coeffs, grid, boundaries):
        _n_ser, n_par = self.block.counts()
        ones = core.tensor(np.ones(grid.shape), dtype=grid.dtype)
        cb = coeffs[f"cb_{self.component}"] * ones
        self._drive = cb[self.block.slices] * (self.block.sign / (n_par * self.block.area(grid)))
        return coeffs

    def current(self, t):
        """``I(t)`` (A) at time ``t`` (s); the value injected at step n is ``I((n + 1/2) dt)``."""
        return self.amplitude * self.waveform(t)

    def inject(self, state, step, grid):
        if self._drive is None:
            raise RuntimeError(f"{self.name}: prepare() was not called (use it in a Simulation)")
        i = self.current(h_time(step, grid))
        if isinstance(i, core.Tensor) and i.dtype != grid.dtype:
            i = ops.astype(i, grid.dtype)
        field = state.get(self.component)
        return state.replace(**{self.component: field - _embed(self._drive * i, self.block, grid)})


def _embed(block_values, block, grid):
    """A ``grid.shape`` array, zero except ``block_values`` on ``block`` (differentiable)."""
    pad = [(a, n - b) for a, b, n in zip(block.start, block.stop, grid.shape)]
    return ops.pad(block_values, pad)


class VoltageMonitor(Monitor):
    """Port voltage ``V = -sum_series E d`` (V) across a block of ``e<axis>`` edges, the mean
    over its parallel columns, each step at ``t = (step + 1) dt``; result ``[steps]``.

    Args: ``axis`` (with its orientation), ``start``, ``stop`` as ``LumpedElement``; ``name``
    keys the result. MindElec's ``VoltageMonitor`` (``coef = -d / n_par``).
    """

    def __init__(self, axis, start, stop=None, name="voltage"):
        self.block = _EdgeBlock(axis, start, stop, name)
        self.name = name

    def check(self, grid, boundaries) -> None:
        self.block.check_block(grid, boundaries)
        self._d = self.block.length(grid)
        self._n_par = self.block.counts()[1]

    def record(self, state, step):
        e = state.get(self.block.component)[self.block.slices]
        return e.sum() * (-self.block.sign * self._d / self._n_par)


class CurrentMonitor(Monitor):
    """Port current ``I`` (A; A/m on 2D grids) through a block of ``e<axis>`` edges: the loop
    integral of H around each edge (right-handed about ``+axis``), summed over the parallel
    edges and averaged over the series levels, each step at ``t = (step + 1/2) dt``.

    The loop around edge ``p`` is ``sum_terms sign (H_k[p] - H_k[p - e_j]) A / d_j`` over the
    terms of ``curl_terms`` (the backward differences of the E update; ``A`` the edge cell's
    cross-section), i.e. ``A (curl H)_axis`` at the edge; the sum over parallel edges is the loop
    around the whole block (inner segments cancel; MindElec's ``CurrentMonitor`` loop). An
    axis ``"-z"``/``"zn"`` reverses the orientation. Result ``[steps]``.
    """

    def __init__(self, axis, start, stop=None, name="current"):
        self.block = _EdgeBlock(axis, start, stop, name)
        self.name = name

    def check(self, grid, boundaries) -> None:
        self.block.check_block(grid, boundaries)
        self._terms = curl_terms(self.block.component, grid)
        self._area = self.block.area(grid)
        self._grid = grid
        self._periodic = tuple(boundaries.periodic(a) for a in range(grid.ndim))
        self._n_ser = self.block.counts()[0]

    def _shifted(self, h, j):
        """``H[p - e_j]`` over the block (0 before the array, wrapped if periodic)."""
        b = self.block
        lo = b.start[j]
        sl = list(b.slices)
        if lo > 0:
            sl[j] = slice(lo - 1, b.stop[j] - 1)
            return h[tuple(sl)]
        sl[j] = slice(0, b.stop[j] - 1)
        inner = h[tuple(sl)]
        if self._periodic[j]:
            sl[j] = slice(h.shape[j] - 1, h.shape[j])
            first = h[tuple(sl)]
        else:
            shape = list(inner.shape)
            shape[j] = 1
            first = core.ops.zeros(tuple(shape), dtype=h.dtype)
        return ops.concatenate([first, inner], axis=j) if inner.shape[j] else first

    def record(self, state, step):
        total = None
        for j, k, sign in self._terms:
            h = state.get("h" + AXES[k])
            term = (h[self.block.slices] - self._shifted(h, j)) * (
                sign * self._area / self._grid.spacing[j]
            )
            total = term if total is None else total + term
        return total.sum() * (self.block.sign / self._n_ser)


def port_times(steps: int, dt: float, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Sample times (s) of ``VoltageMonitor`` (``(n + 1) dt``) and ``CurrentMonitor``
    (``(n + 1/2) dt``) for steps ``n = start .. start + steps - 1``: ``(t_v, t_i)``."""
    n = np.arange(start, start + int(steps), dtype=np.float64)
    return (n + 1.0) * dt, (n + 0.5) * dt
