"""Printed-circuit structures on the Yee grid: a per-cell medium averaged onto each E edge, and
zero-thickness PEC sheets (strips, ground planes) on E-component planes.

Both are ``Source`` objects that act only through ``prepare``: they rewrite the E update
coefficients ``ca_<e>``/``cb_<e>`` of ``yee.update_coefficients`` before the loop (so they run
in the native C update unchanged). List them *before* the lumped ports of a ``Simulation``:
a port's ``prepare`` adds its conductance to the coefficients it finds.

``CellMedium``: a relative permittivity (and conductivity) per *cell* -- cell ``[i, j, k]`` is
the box between nodes ``i..i+1``, ``j..j+1``, ``k..k+1`` -- seen by each E edge as the mean over
the cells that share the edge (four in 3D, two for a 2D TEz edge):

    eps_x[i, j, k] = (eps[i, j, k] + eps[i, j-1, k] + eps[i, j, k-1] + eps[i, j-1, k-1]) / 4   (1)

and cyclically for ``y`` and ``z`` (a cell index ``-1`` reads cell 0). An edge on a dielectric
interface so gets ``(eps_1 + eps_2) / 2``, the effective permittivity of Zhang & Mei and of
Sheen, Ali, Abouzahra & Kong, "Application of the three-dimensional finite-difference
time-domain method to the analysis of planar microstrip circuits", IEEE T-MTT 38(7), 849-857
(1990), sec. II, for the substrate-air interface; an edge inside a uniform region gets that
region's value. The coefficients are Taflove & Hagness eqs. 3.29-3.30 with it:
``Ca = (1 - s) / (1 + s)``, ``Cb = (dt / (eps0 eps)) / (1 + s)``, ``s = sigma dt / (2 eps0 eps)``.
``CellMedium`` replaces what ``Materials`` gave the E components (H keeps ``Materials``' mu_r);
a Tensor ``eps_r`` keeps its gradient.

``PECEdges``: E held at zero on chosen edges (``Ca = Cb = 0``: a field that starts at zero
stays there), the Yee model of a perfect conductor. ``PECPlate`` builds it for a sheet of zero
thickness normal to one axis (MindElec's ``PECPlate``): the tangential edges of a rectangle of
grid *nodes*, boundary included.
"""

from __future__ import annotations

import numpy as np

from diffsci import core
from diffsci.core import ops

from .constants import EPS0
from .grid import AXES
from .sources import Source

__all__ = ["CellMedium", "PECEdges", "PECPlate", "edge_average"]


def _shift_back(x, axis):
    """``x[p - e_axis]`` with index -1 reading index 0 (core ops)."""
    n = x.shape[axis]
    if n == 1:
        return x
    first = [slice(None)] * len(x.shape)
    first[axis] = slice(0, 1)
    rest = [slice(None)] * len(x.shape)
    rest[axis] = slice(0, n - 1)
    return ops.concatenate([x[tuple(first)], x[tuple(rest)]], axis=axis)


def edge_average(cells, component: str, ndim: int | None = None):
    """The mean of a per-cell map over the cells sharing each ``component`` edge, eq. (1).

    Args:
        cells: ``[nx(, ny(, nz))]`` per-cell values (numpy array or core Tensor).
        component: ``"ex"``, ``"ey"`` or ``"ez"``.
        ndim: grid dimension (default ``cells.ndim``).

    Returns:
        Tensor of ``cells``' shape: the value at each edge of that component's array.
    """
    x = cells if isinstance(cells, core.Tensor) else core.tensor(np.asarray(cells, np.float64))
    ndim = len(x.shape) if ndim is None else ndim
    if component not in ("ex", "ey", "ez"):
        raise ValueError(f"edge_average: component must be ex, ey or ez, got {component!r}")
    axis = AXES.index(component[1])
    for b in range(ndim):
        if b != axis:
            x = 0.5 * (x + _shift_back(x, b))
    return x


def _full(value, grid):
    """``value`` (float, 0-d or map Tensor) as a ``grid.shape`` Tensor of ``grid.dtype``."""
    ones = core.tensor(np.ones(grid.shape), dtype=grid.dtype)
    return value * ones


class CellMedium(Source):
    """A per-cell medium averaged onto the E edges, eq. (1).

    Args:
        eps_r: relative permittivity per cell, ``grid.shape`` (numpy or Tensor, > 0).
        sigma: electric conductivity per cell (S/m), a number or ``grid.shape`` map (>= 0).
        name: the source name.
    """

    def __init__(self, eps_r, sigma=0.0, name="medium"):
        self.eps_r, self.sigma, self.name = eps_r, sigma, name

    def check(self, grid, boundaries) -> None:
        for key, value in (("eps_r", self.eps_r), ("sigma", self.sigma)):
            if isinstance(value, (int, float)) and key == "sigma":
                if value < 0:
                    raise ValueError(f"{self.name}: sigma must be >= 0 S/m, got {value}")
                continue
            shape = tuple(value.shape) if hasattr(value, "shape") else ()
            if shape != grid.shape:
                raise ValueError(
                    f"{self.name}: {key} map has shape {shape}; the grid needs {grid.shape}"
                )
        if not isinstance(self.eps_r, core.Tensor) and np.min(self.eps_r) <= 0:
            raise ValueError(f"{self.name}: eps_r must be > 0, min is {np.min(self.eps_r)}")

    def edge_maps(self, grid):
        """``{component: (eps_r, sigma)}`` Tensors at the edges of each E component."""
        eps = self.eps_r
        if not isinstance(eps, core.Tensor):
            eps = core.tensor(np.asarray(eps, np.float64), dtype=grid.dtype)
        sigma = self.sigma
        if not isinstance(sigma, (int, float)) and not isinstance(sigma, core.Tensor):
            sigma = core.tensor(np.asarray(sigma, np.float64), dtype=grid.dtype)
        out = {}
        for name in grid.e_components:
            e = edge_average(eps, name, grid.ndim)
            s = sigma if isinstance(sigma, (int, float)) else edge_average(sigma, name, grid.ndim)
            out[name] = (e, s)
        return out

    def prepare(self, coeffs, grid, boundaries):
        coeffs = dict(coeffs)
        for name, (eps, sigma) in self.edge_maps(grid).items():
            eps_abs = EPS0 * eps
            s = sigma * grid.dt / (2.0 * eps_abs)
            ca = _full((1.0 - s) / (1.0 + s), grid)
            cb = (grid.dt / eps_abs) / (1.0 + s)
            mask = boundaries.mask(name)
            if mask is not None:
                cb = cb * core.tensor(mask, dtype=grid.dtype)
            coeffs[f"ca_{name}"], coeffs[f"cb_{name}"] = ca, _full(cb, grid)
        return coeffs


class PECEdges(Source):
    """Perfect conductor on chosen E edges: ``Ca = Cb = 0`` there.

    Args:
        masks: ``{component: bool array of grid.shape}``, True on the conducting edges.
        name: the source name.
    """

    def __init__(self, masks, name="pec"):
        self.masks = {k: np.asarray(v, dtype=bool) for k, v in masks.items()}
        self.name = name

    def check(self, grid, boundaries) -> None:
        for comp, mask in self.masks.items():
            if comp not in grid.e_components:
                raise ValueError(
                    f"{self.name}: {comp!r} is not an E component of this grid "
                    f"({grid.e_components})"
                )
            if mask.shape != grid.shape:
                raise ValueError(
                    f"{self.name}: mask for {comp} has shape {mask.shape}; the grid is {grid.shape}"
                )

    def prepare(self, coeffs, grid, boundaries):
        coeffs = dict(coeffs)
        for comp, mask in self.masks.items():
            keep = core.tensor(1.0 - mask.astype(np.float64), dtype=grid.dtype)
            coeffs[f"ca_{comp}"] = _full(coeffs[f"ca_{comp}"], grid) * keep
            coeffs[f"cb_{comp}"] = _full(coeffs[f"cb_{comp}"], grid) * keep
        return coeffs

    def __add__(self, other: PECEdges) -> PECEdges:
        """The union of two conductors (one ``Source`` for several plates)."""
        masks = dict(self.masks)
        for comp, mask in other.masks.items():
            masks[comp] = masks[comp] | mask if comp in masks else mask
        return PECEdges(masks, name=self.name)


class PECPlate(PECEdges):
    """A zero-thickness PEC sheet normal to ``normal`` on the node rectangle ``lo..hi``.

    Args:
        shape: the grid's shape (3D).
        normal: ``"x"``, ``"y"`` or ``"z"``.
        lo, hi: node indices of two opposite corners (3 ints each, ``lo <= hi``, equal along
            ``normal``: the plane). The sheet covers every tangential edge inside the
            rectangle and on its border: for a ``z`` plate at ``k``, ``ex[lo_x:hi_x,
            lo_y:hi_y+1, k]`` and ``ey[lo_x:hi_x+1, lo_y:hi_y, k]``.
        name: the source name.
    """

    def __init__(self, shape, normal, lo, hi, name="pec"):
        shape = tuple(int(n) for n in shape)
        if len(shape) != 3:
            raise ValueError(f"{name}: PECPlate needs a 3D grid shape, got {shape}")
        if normal not in AXES:
            raise ValueError(f"{name}: normal must be 'x', 'y' or 'z', got {normal!r}")
        lo, hi = tuple(int(i) for i in lo), tuple(int(i) for i in hi)
        n = AXES.index(normal)
        if len(lo) != 3 or len(hi) != 3 or lo[n] != hi[n] or any(a > b for a, b in zip(lo, hi)):
            raise ValueError(
                f"{name}: corners lo={lo}, hi={hi} must be 3 node indices with lo <= hi and "
                f"lo[{normal}] == hi[{normal}] (the plane)"
            )
        for a in range(3):
            if lo[a] < 0 or (hi[a] >= shape[a] and not (a != n and hi[a] == shape[a])):
                raise ValueError(
                    f"{name}: corners lo={lo}, hi={hi} leave the grid {shape} along {AXES[a]}"
                )
        masks = {}
        for t in range(3):
            if t == n:
                continue
            sl = []
            for a in range(3):
                if a == n:
                    sl.append(slice(lo[a], lo[a] + 1))
                elif a == t:
                    sl.append(slice(lo[a], hi[a]))
                else:
                    sl.append(slice(lo[a], min(hi[a] + 1, shape[a])))
            mask = np.zeros(shape, dtype=bool)
            mask[tuple(sl)] = True
            masks["e" + AXES[t]] = mask
        super().__init__(masks, name=name)
        self.normal, self.lo, self.hi = normal, lo, hi
