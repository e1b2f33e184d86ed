"""Monitors: the interface every monitor implements, point probes and the Yee energy.

Interface (called by ``Simulation`` inside the time loop, after step ``n`` has produced
``E^{n+1}`` and ``H^{n+1/2}``; pure functions, so they run under jit, grad and scan):

- ``record(state, step) -> value``: a pytree of Tensors for this step; the simulation stacks
  the values of all steps on a new leading axis ``[steps, ...]``. Keep it small (points,
  sums): every step's value is kept (and, under grad, its cotangent).
- For running quantities (a DFT over a plane, the previous step's field), override
  ``init_carry(grid, state) -> carry`` and ``update(carry, state, step) -> (carry, value)``:
  the carry travels in the loop (memory independent of the step count); ``value`` may be None.
- ``finalize(carry, values) -> result``: what ``Simulation.run`` reports under ``name``
  (default: the stacked values, or the carry when there are no values).
- ``check(grid, boundaries)``: raise ``ValueError`` when it lies outside the grid or in a PML.

The time of ``record``'s E values is ``(step + 1) dt`` and of its H values ``(step + 1/2) dt``
(``sources.e_time``/``h_time``).
"""

from __future__ import annotations

import numpy as np

from .constants import EPS0, MU0

__all__ = ["EnergyMonitor", "Monitor", "PointProbe", "PointProbes", "yee_energy"]


class Monitor:
    """Base class: records nothing; subclasses override ``record`` or ``init_carry``/``update``."""

    name = "monitor"

    def check(self, grid, boundaries) -> None:
        """Raise ``ValueError`` when the monitor does not fit the grid (default: fits)."""

    def init_carry(self, grid, state):
        """Carry of a running monitor (default: None)."""
        return None

    def record(self, state, step):
        """The value at this step (default: None)."""
        return None

    def update(self, carry, state, step):
        """``(carry, value)`` after a step (default: ``(carry, record(state, step))``)."""
        return carry, self.record(state, step)

    def finalize(self, carry, values):
        """The result reported by ``Simulation.run`` (default: ``values``, else ``carry``)."""
        return values if values is not None else carry

    def points(self):
        """``(component, [index, ...], squeeze)`` when ``record`` returns exactly the values of
        one component at these grid indices (``[K]``, or a 0-d value for one index with
        ``squeeze``) and ``finalize`` is the default: ``Simulation.run`` may then sample them
        inside a native time loop (``native_run``). None (the default): the monitor runs as
        core ops in the loop."""
        return None


class PointProbe(Monitor):
    """The value of one field component at one grid index, every step.

    Args:
        component: ``"ez"``, ``"hy"`` ... (a component of the grid).
        index: grid index (``ndim`` ints).
        name: key of the result; the result is a Tensor ``[steps]`` (V/m or A/m).
        allow_pml: whether the index may lie inside a PML (the CPML tests probe there).
    """

    def __init__(self, component, index, name="probe", allow_pml=False):
        self.component = component
        self.index = tuple(int(i) for i in index)
        self.name = name
        self.allow_pml = allow_pml

    def check(self, grid, boundaries) -> None:
        if self.component not in grid.components:
            raise ValueError(
                f"{self.name}: component {self.component!r} is not in this grid ({grid.components})"
            )
        grid.check_index(self.index, what=self.name, pml=None if self.allow_pml else boundaries.pml)

    def record(self, state, step):
        return state.get(self.component)[self.index]

    def points(self):
        if type(self).record is not PointProbe.record:  # a subclass records something else
            return None
        return self.component, [self.index], True


class PointProbes(Monitor):
    """One field component at several grid indices, every step: result ``[steps, K]`` (V/m or
    A/m). One gather per step instead of ``K`` ``PointProbe``s (receivers of a scattering
    setup); a native time loop samples it in C (``points``).

    Args:
        component: ``"ez"`` ...; indices: ``K`` grid indices (``ndim`` ints each).
        name: key of the result; allow_pml: whether an index may lie inside a PML.
    """

    def __init__(self, component, indices, name="probes", allow_pml=False):
        self.component = component
        self.indices = [tuple(int(i) for i in index) for index in indices]
        if not self.indices:
            raise ValueError(f"{name}: PointProbes needs at least one index")
        self.name = name
        self.allow_pml = allow_pml
        self._axes = tuple(np.array(a) for a in zip(*self.indices, strict=True))

    def check(self, grid, boundaries) -> None:
        if self.component not in grid.components:
            raise ValueError(
                f"{self.name}: component {self.component!r} is not in this grid ({grid.components})"
            )
        for index in self.indices:
            grid.check_index(index, what=self.name, pml=None if self.allow_pml else boundaries.pml)

    def record(self, state, step):
        return state.get(self.component)[self._axes]  # [K]

    def points(self):
        if type(self).record is not PointProbes.record:
            return None
        return self.component, list(self.indices), False


def yee_energy(grid, materials, e, h_prev, h_next):
    """Discrete electromagnetic energy conserved by the lossless Yee scheme, J (3D; J/m in 2D,
    J/m^2 in 1D).

    ``W^n = 1/2 sum_cells (eps0 eps_r |E^n|^2 + mu0 mu_r H^{n-1/2} . H^{n+1/2}) dV``: the
    quadratic form that the leapfrog update keeps exactly constant in a closed lossless box
    (Taflove & Hagness sec. 4.7; the H term averages the two half steps around ``t = n dt``).

    Args:
        grid: the ``Grid``.
        materials: ``yee.Materials`` (numbers or ``grid.shape`` maps).
        e: dict of E components at step n, ``grid.shape`` each.
        h_prev, h_next: dicts of H components at ``n - 1/2`` and ``n + 1/2``.

    Returns:
        0-d Tensor.
    """
    we = sum((materials.eps_r * x * x).sum() for x in e.values())
    wh = sum((materials.mu_r * h_prev[k] * h_next[k]).sum() for k in h_prev)
    return 0.5 * grid.cell_volume * (EPS0 * we + MU0 * wh)


class EnergyMonitor(Monitor):
    """``yee_energy`` at every step ``n = 0 .. steps-1`` (a Tensor ``[steps]``).

    The carry keeps ``E^n`` and ``H^{n-1/2}`` from the previous step, so the value recorded
    after step ``n`` is ``W^n`` (the energy of the state the step started from).

    Args:
        grid: the ``Grid``; materials: ``yee.Materials`` of the run.
    """

    def __init__(self, grid, materials, name="energy"):
        self.grid = grid
        self.materials = materials.checked(grid)
        self.name = name

    def init_carry(self, grid, state):
        e = {k: state.get(k) for k in grid.e_components}
        h = {k: state.get(k) for k in grid.h_components}
        return (e, h)

    def update(self, carry, state, step):
        e_prev, h_prev = carry
        h_next = {k: state.get(k) for k in self.grid.h_components}
        value = yee_energy(self.grid, self.materials, e_prev, h_prev, h_next)
        e_next = {k: state.get(k) for k in self.grid.e_components}
        return (e_next, h_next), value

    def finalize(self, carry, values):
        return values
