"""Boundaries of the Yee grid: PEC, PMC, periodic and the CFS-CPML absorber.

Each face of the grid (low and high side of every axis) gets one boundary. Given a grid of
``n`` cells along an axis (see ``grid``: E-tangential nodes ``0 .. n-1`` are stored):

- ``PEC`` (perfect electric conductor): the tangential E vanishes on the wall. The low wall is
  node 0 (the stored tangential E there is held at zero), the high wall is node ``n`` (the
  forward difference of the H update reads zero beyond the array). A PEC box of ``n`` cells is
  ``n d`` long.
- ``PMC`` (perfect magnetic conductor): the tangential H vanishes on the wall. The low wall is
  at ``-1/2`` (the backward difference of the E update reads zero before the array), the high
  wall at ``n - 1/2`` (the stored tangential H there is held at zero).
- ``Periodic`` (both sides of an axis): differences wrap around, period ``n d``.
- ``Mur``: Mur's first-order absorbing boundary, for comparison (see ``Mur``).
- ``CPML``: the convolutional PML with complex frequency-shifted stretching
  ``s = kappa + sigma / (alpha + j omega eps0)`` (Roden & Gedney, *Microwave Opt. Technol.
  Lett.* 27, 334 (2000); Taflove & Hagness sec. 7.9), occupying the outermost ``thickness``
  cells of the side and backed by PEC. Each derivative ``d/du`` in the PML becomes
  ``(1 / kappa) d/du + psi`` with ``psi^{n} = b psi^{n-1} + a d/du`` and (Taflove eq. 7.102)

      b = exp(-(sigma / kappa + alpha) dt / eps0),
      a = sigma / (sigma kappa + kappa^2 alpha) (b - 1).

  The grading over the depth ``rho`` (0 at the PML's inner face, 1 at the outer wall) follows
  MindElec's ``CFSParameters`` (``MindElec/examples/AD_FDTD/fdtd_forward/src/cfs_pml.py``):
  ``sigma = sigma_max rho^m``, ``kappa = 1 + (kappa_max - 1) rho^m``,
  ``alpha = alpha_min + (alpha_max - alpha_min) (1 - rho)``, with
  ``sigma_max = sigma_factor * sigma_opt`` and ``sigma_opt = (m + 1) / (150 pi d sqrt(eps_r))``
  (S/m; Taflove eq. 7.67 with ``eta ~ 150 pi``). The same profile (in units of electric
  conductivity, normalised by ``eps0``) serves the magnetic terms, sampled at the H positions
  half a cell away, which makes the PML reflectionless in the continuum.

Boundaries are given to ``Simulation`` as one ``Boundary`` for every face, a dict
``{"x": b, "y": (b_low, b_high)}`` (missing axes are PEC), or a sequence with one entry
(a boundary or a ``(low, high)`` pair) per axis.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from diffsci.core import ops

from .constants import C0, EPS0
from .grid import AXES

__all__ = ["CPML", "PEC", "PMC", "Boundaries", "Boundary", "Mur", "Periodic"]


class Boundary:
    """Base class of the boundary kinds; ``kind`` names it."""

    kind = "boundary"

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class PEC(Boundary):
    """Perfect electric conductor: tangential E = 0 on the wall."""

    kind = "pec"


class PMC(Boundary):
    """Perfect magnetic conductor: tangential H = 0 on the wall."""

    kind = "pmc"


class Periodic(Boundary):
    """Periodic: the field repeats with the grid's length along the axis (both sides)."""

    kind = "periodic"


class Mur(Boundary):
    """Mur's first-order absorbing boundary (Mur, IEEE Trans. EMC 23, 377 (1981); Taflove &
    Hagness eq. 6.35), for comparison with the CPML: the tangential E on the outermost stored
    node (index 0, or ``n - 1`` on the high side) is set after each E update to

        E_b^{n+1} = E_{b1}^n + (c dt - d) / (c dt + d) (E_{b1}^{n+1} - E_b^n),

    ``b1`` the node next to it inside; the box is ``n - 1`` cells long. The stored tangential H
    row at ``n - 1/2``, half a cell outside the high wall, does not feed the interior; it
    follows the same one-way wave equation (set after each H update from the row at
    ``n - 3/2``), so it holds the outgoing wave. (Updated by the curl against the implicit zero
    E at node ``n`` instead, it would integrate the static wake of a 2D pulse and drift.)
    Exact for normal incidence in 1D at ``c dt = d`` (-92 dB at ``c dt = 0.99 d``), but it
    reflects grazing waves: a 2D point source seen 12 cells from a Mur box wall gets -18 dB of
    echo where a 10-cell CPML gives -87 dB (``tests/mindelec/fdtd/test_cpml.py``).
    """

    kind = "mur"


@dataclasses.dataclass(frozen=True)
class CPML(Boundary):
    """Convolutional PML with complex frequency-shifted stretching (Roden & Gedney 2000).

    Args (MindElec's ``CFSParameters`` names and defaults, with ``thickness`` for ``npml``):
        thickness: PML cells on this side (>= 1).
        order: polynomial grading order ``m``.
        sigma_factor: ``sigma_max / sigma_opt``.
        kappa_max: coordinate stretching at the outer wall (>= 1).
        alpha_max, alpha_min: frequency shift at the inner face / the outer wall, S/m.
        eps_r: relative permittivity of the medium next to the PML (enters ``sigma_opt``).
    """

    thickness: int = 10
    order: float = 4.0
    sigma_factor: float = 1.5
    kappa_max: float = 11.0
    alpha_max: float = 0.0
    alpha_min: float = 0.0
    eps_r: float = 1.0
    kind = "cpml"

    def __post_init__(self):
        if int(self.thickness) != self.thickness or self.thickness < 1:
            raise ValueError(
                f"CPML thickness must be a positive number of cells, got {self.thickness}"
            )
        if self.kappa_max < 1 or self.order < 0 or self.sigma_factor < 0:
            raise ValueError(
                f"CPML needs kappa_max >= 1, order >= 0, sigma_factor >= 0; got {self}"
            )

    def sigma_opt(self, d: float) -> float:
        """``(m + 1) / (150 pi d sqrt(eps_r))``, S/m, for cell size ``d`` (m)."""
        return (self.order + 1) / (150 * math.pi * d * math.sqrt(self.eps_r))

    def profile(self, rho: np.ndarray, d: float, dt: float):
        """``(b, a, kappa)`` at depths ``rho`` in [0, 1] (0 outside the PML): float64 arrays."""
        inside = rho > 0
        sigma = self.sigma_factor * self.sigma_opt(d) * rho**self.order
        kappa = 1 + (self.kappa_max - 1) * rho**self.order
        alpha = np.where(inside, self.alpha_min + (self.alpha_max - self.alpha_min) * (1 - rho), 0)
        b = np.exp(-(sigma / kappa + alpha) * dt / EPS0)
        denom = sigma * kappa + kappa**2 * alpha
        a = np.where(sigma > 0, sigma / np.where(denom > 0, denom, 1) * (b - 1), 0.0)
        return np.where(inside, b, 0.0), a, np.where(inside, kappa, 1.0)


def _as_boundary(b, where):
    if isinstance(b, Boundary):
        return b
    if isinstance(b, type) and issubclass(b, Boundary):
        return b()
    if isinstance(b, str):
        kinds = {"pec": PEC, "pmc": PMC, "periodic": Periodic, "cpml": CPML, "mur": Mur}
        if b.lower() in kinds:
            return kinds[b.lower()]()
    raise TypeError(f"boundary for {where} must be PEC, PMC, Periodic, CPML or Mur, got {b!r}")


class Boundaries:
    """The boundary of every face of a grid, resolved from ``Simulation``'s ``boundaries``.

    Attributes:
        sides: per axis ``(low, high)`` Boundary objects.
    """

    def __init__(self, grid, spec=None):
        self.grid = grid
        ndim = grid.ndim
        if spec is None:
            spec = PEC()
        if isinstance(spec, (Boundary, str)) or (isinstance(spec, type)):
            per_axis = [spec] * ndim
        elif isinstance(spec, dict):
            unknown = set(spec) - set(AXES[:ndim])
            if unknown:
                raise ValueError(
                    f"boundaries has axes {sorted(unknown)} that a {ndim}D grid lacks "
                    f"(it has {AXES[:ndim]})"
                )
            per_axis = [spec.get(a, PEC()) for a in AXES[:ndim]]
        else:
            per_axis = list(spec)
            if len(per_axis) != ndim:
                raise ValueError(
                    f"boundaries needs one entry per axis ({ndim}), got {len(per_axis)}; "
                    "give a (low, high) pair of one axis as {'x': (low, high)}"
                )
        self.sides = []
        for a, entry in enumerate(per_axis):
            pair = entry if isinstance(entry, (tuple, list)) else (entry, entry)
            if len(pair) != 2:
                raise ValueError(f"boundary of axis {AXES[a]} must be one or a (low, high) pair")
            low = _as_boundary(pair[0], f"{AXES[a]} low")
            high = _as_boundary(pair[1], f"{AXES[a]} high")
            if (low.kind == "periodic") != (high.kind == "periodic"):
                raise ValueError(f"Periodic on axis {AXES[a]} must be on both sides")
            self.sides.append((low, high))
        for a, n in enumerate(grid.shape):
            lo, hi = self.pml_cells(a)
            if lo + hi > n - 1:
                raise ValueError(
                    f"CPML along {AXES[a]} takes {lo} + {hi} cells of the {n} the grid has; "
                    "leave at least one interior cell"
                )

    def periodic(self, axis: int) -> bool:
        """Whether ``axis`` wraps around."""
        return self.sides[axis][0].kind == "periodic"

    def pml_cells(self, axis: int) -> tuple[int, int]:
        """CPML thickness (cells) at the low and high side of ``axis`` (0 where none)."""
        return tuple(int(b.thickness) if b.kind == "cpml" else 0 for b in self.sides[axis])

    @property
    def pml(self) -> tuple[tuple[int, int], ...]:
        """``pml_cells`` of every axis."""
        return tuple(self.pml_cells(a) for a in range(self.grid.ndim))

    def has_cpml(self, axis: int) -> bool:
        """Whether either side of ``axis`` is a CPML."""
        return any(b.kind == "cpml" for b in self.sides[axis])

    def mask(self, component: str) -> np.ndarray | None:
        """0/1 float64 mask of the cells where ``component`` is held at zero, None if none.

        Tangential E on a PEC (or PEC-backed CPML) low wall: index 0 along that axis. Tangential
        H on a PMC high wall: index ``n - 1``.
        """
        kind, comp_axis = component[0], AXES.index(component[1])
        mask = None
        for a, (low, high) in enumerate(self.sides):
            if a == comp_axis:
                continue
            sel = None
            if kind == "e" and low.kind in ("pec", "cpml"):
                sel = 0
            elif kind == "h" and high.kind == "pmc":
                sel = self.grid.shape[a] - 1
            if sel is None:
                continue
            if mask is None:
                mask = np.ones(self.grid.shape)
            index = [slice(None)] * self.grid.ndim
            index[a] = sel
            mask[tuple(index)] = 0.0
        return mask

    def cpml_profiles(self, axis: int):
        """CPML coefficients along ``axis`` (None if it has no CPML), float64 ``[n]`` arrays.

        Returns ``{"e": (b, a, kappa), "h": (b, a, kappa)}``: ``"e"`` at the integer nodes
        ``i`` (the derivatives of the E update), ``"h"`` at ``i + 1/2`` (the H update).
        """
        if not self.has_cpml(axis):
            return None
        n, d, dt = self.grid.shape[axis], self.grid.spacing[axis], self.grid.dt
        out = {}
        for kind, offset in (("e", 0.0), ("h", 0.5)):
            x = np.arange(n) + offset
            b, a, kappa = np.zeros(n), np.zeros(n), np.ones(n)
            low, high = self.sides[axis]
            for side, pml in (("low", low), ("high", high)):
                if pml.kind != "cpml":
                    continue
                cells = pml.thickness
                depth = (cells - x) / cells if side == "low" else (x - (n - cells)) / cells
                rho = np.clip(depth, 0.0, 1.0)
                pb, pa, pk = pml.profile(rho, d, dt)
                sel = rho > 0
                b[sel], a[sel], kappa[sel] = pb[sel], pa[sel], pk[sel]
            out[kind] = (b, a, kappa)
        return out

    @property
    def has_mur(self) -> bool:
        """Whether any face is a Mur boundary."""
        return any(b.kind == "mur" for side in self.sides for b in side)

    def apply_mur(self, new, old, kind="e"):
        """Mur's one-way update on every Mur face (see ``Mur``): ``kind="e"`` the tangential
        E of the low and high faces (after the E update),
        ``kind="h"`` the tangential H row outside the high faces (after the H update).

        Args:
            new: ``FieldState`` after the update (``E^{n+1}`` or ``H^{n+1/2}``).
            old: ``FieldState`` before it (``E^n`` or ``H^{n-1/2}``).
            kind: ``"e"`` or ``"h"``.

        Returns:
            ``new`` with the boundary nodes replaced.
        """
        grid = self.grid
        components = grid.e_components if kind == "e" else grid.h_components
        which = (0, 1) if kind == "e" else (1,)
        changes = {}
        for name in components:
            comp_axis = AXES.index(name[1])
            field = new.get(name)
            before = old.get(name)
            changed = False
            for a, sides in enumerate(self.sides):
                if a == comp_axis:
                    continue  # the normal component
                n = grid.shape[a]
                k = (C0 * grid.dt - grid.spacing[a]) / (C0 * grid.dt + grid.spacing[a])
                for side in which:
                    if sides[side].kind != "mur":
                        continue
                    edge, inner = (0, 1) if side == 0 else (n - 1, n - 2)
                    take = lambda x, i, a=a: x[_index(x.ndim, a, slice(i, i + 1))]  # noqa: E731
                    value = take(before, inner) + k * (take(field, inner) - take(before, edge))
                    rest = field[
                        _index(field.ndim, a, slice(1, n) if side == 0 else slice(0, n - 1))
                    ]
                    field = ops.concatenate([value, rest] if side == 0 else [rest, value], axis=a)
                    changed = True
            if changed:
                changes[name] = field
        return new.replace(**changes)

    def __repr__(self) -> str:
        return f"Boundaries({dict(zip(AXES, self.sides))})"


def _index(ndim, axis, sl):
    index = [slice(None)] * ndim
    index[axis] = sl
    return tuple(index)
