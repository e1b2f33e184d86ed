"""Sources: the interface every source implements, and a soft/hard point source.

Interface (what ``Simulation`` calls; all methods are pure functions of their arguments, so a
source runs under ``core.jit``, ``core.grad`` and inside the ``core.ops.scan`` of the time
loop). One step ``n`` (``n = 0, 1, ...``; ``step`` is a 0-d int64 Tensor inside the loop) is

    1. H^{n-1/2} -> H^{n+1/2}          (yee.update_h)
    2. state = source.inject_h(state, step, grid)   for every source  (H at t = (n + 1/2) dt)
    3. E^n -> E^{n+1}                  (yee.update_e)
    4. state = source.inject(state, step, grid)     for every source  (E at t = (n + 1) dt)
    5. monitors see (E^{n+1}, H^{n+1/2})

- ``inject(state, step, grid) -> state``: change E after its update (soft: add; hard: set).
- ``inject_h(state, step, grid) -> state``: the same for H (default: no change); a
  total-field/scattered-field source uses both.
- ``prepare(coeffs, grid, boundaries) -> coeffs``: optional, called once before the loop with
  the dict of ``yee.update_coefficients``; a lumped element (voltage source with internal
  resistance, resistor) rewrites ``ca_*``/``cb_*`` at its cells here (Taflove sec. 15.9).
- ``init_aux(grid) -> pytree | None``: optional state of its own, stored in
  ``state.aux[source.name]`` and carried through the loop.
- ``check(grid, boundaries)``: raise ``ValueError`` if it lies outside the grid or in a PML.

Time of a step: E-side injections happen at ``t = (step + 1) dt``, H-side at
``t = (step + 1/2) dt`` (``e_time`` and ``h_time`` below).
"""

from __future__ import annotations

import numpy as np

from diffsci import core
from diffsci.core import ops

__all__ = ["PointSource", "Source", "e_time", "h_time"]


def e_time(step, grid):
    """Time (s) of ``E^{step+1}``: ``(step + 1) dt``; Tensor of ``grid.dtype`` for a Tensor step."""
    if isinstance(step, core.Tensor):
        return (ops.astype(step, grid.dtype) + 1.0) * grid.dt
    return (step + 1) * grid.dt


def h_time(step, grid):
    """Time (s) of ``H^{step+1/2}``: ``(step + 1/2) dt``."""
    if isinstance(step, core.Tensor):
        return (ops.astype(step, grid.dtype) + 0.5) * grid.dt
    return (step + 0.5) * grid.dt


class Source:
    """Base class: a source that does nothing; subclasses override what they need."""

    name = "source"

    def check(self, grid, boundaries) -> None:
        """Raise ``ValueError`` when the source does not fit the grid (default: fits)."""

    def prepare(self, coeffs: dict, grid, boundaries) -> dict:
        """Rewrite update coefficients before the loop (default: unchanged)."""
        return coeffs

    def init_aux(self, grid):
        """State of the source's own carried in ``state.aux[self.name]`` (default: none)."""
        return None

    def inject_h(self, state, step, grid):
        """Change H after its half step (default: unchanged)."""
        return state

    def inject(self, state, step, grid):
        """Change E after its step (default: unchanged)."""
        return state


class PointSource(Source):
    """A point source on one E component: soft (adds) or hard (sets).

    A soft source adds ``amplitude * waveform(t)`` (V/m) to ``component`` at ``index`` after each
    E update, at ``t = (n + 1) dt``; a hard source overwrites the value (it reflects what comes
    back to it). ``amplitude`` and the waveform's parameters may be Tensors with gradients.

    Args:
        component: ``"ez"``, ``"ex"`` ... (an E component of the grid).
        index: grid index (``ndim`` ints) of the component's sample.
        waveform: callable ``w(t)``, ``t`` a 0-d Tensor in seconds (``waveforms.Gaussian`` ...).
        amplitude: V/m, a number or a 0-d Tensor.
        hard: overwrite instead of add.
        name: key under which ``Simulation`` reports it.
    """

    def __init__(self, component, index, waveform, amplitude=1.0, hard=False, name="point_source"):
        self.component = component
        self.index = tuple(int(i) for i in index)
        self.waveform = waveform
        self.amplitude = amplitude
        self.hard = bool(hard)
        self.name = name

    def check(self, grid, boundaries) -> None:
        if self.component not in grid.e_components:
            raise ValueError(
                f"{self.name}: component {self.component!r} is not an E component of this grid "
                f"({grid.e_components})"
            )
        grid.check_index(self.index, what=self.name, pml=boundaries.pml)

    def value(self, step, grid):
        """The amplitude added (or set) at ``E^{step+1}``: ``amplitude * waveform(t)`` (V/m),
        a 0-d Tensor of ``grid.dtype`` where it is a Tensor."""
        value = self.amplitude * self.waveform(e_time(step, grid))
        if isinstance(value, core.Tensor) and value.dtype != grid.dtype:
            value = ops.astype(value, grid.dtype)
        return value

    def inject(self, state, step, grid):
        value = self.value(step, grid)
        field = state.get(self.component)
        if self.hard:
            field = _set(field, self.index, value)
        else:
            field = _add(field, self.index, value)
        return state.replace(**{self.component: field})


def _one_hot(field, index):
    mask = np.zeros(tuple(field.shape))
    mask[index] = 1.0
    return core.tensor(mask, dtype=field.dtype)


def _add(field, index, value):
    """``field`` with ``value`` added at ``index`` (differentiable in both; only that cell is
    touched, so a NaN value stays at the source's cell where the NaN check finds it)."""
    return ops.index_add(field, tuple(index), value)


def _set(field, index, value):
    """``field`` with the entry at ``index`` replaced by ``value`` (differentiable in both)."""
    return ops.index_update(field, tuple(index), value)
