"""The Yee grid: shape, cell size, time step and the field components of each dimension.

Layout (Yee 1966; Taflove & Hagness, *Computational Electrodynamics*, 3rd ed., sec. 3.6). Every
field component is stored as an array of the grid's shape ``[nx]``, ``[nx, ny]`` or
``[nx, ny, nz]``; index ``(i, j, k)`` of a component sits at

    ex (i+1/2, j, k)        hx (i, j+1/2, k+1/2)
    ey (i, j+1/2, k)        hy (i+1/2, j, k+1/2)
    ez (i, j, k+1/2)        hz (i+1/2, j+1/2, k)

in units of the cell size (positions along an axis the grid lacks are irrelevant). A grid of
``n`` cells along an axis spans ``[0, n d]``: E nodes ``0 .. n-1`` are stored, the node ``n``
is the closing wall (see ``boundaries``). Time: E lives at integer steps ``t = n dt``, H at
half steps ``(n + 1/2) dt``.

Components per dimension: 1D carries ``ez`` and ``hy`` (a wave along x); 2D ``"TMz"`` carries
``ez, hx, hy`` and 2D ``"TEz"`` carries ``hz, ex, ey``; 3D carries all six.

Stability: the Courant number ``S = c0 dt / min(d)``; the explicit Yee scheme is stable for
``c0 dt <= 1 / sqrt(sum_i 1 / d_i^2)`` (Taflove & Hagness eq. 4.52), which is ``S <= 1/sqrt(D)``
for cubic cells in ``D`` dimensions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from diffsci import core

from .constants import C0

__all__ = ["AXES", "Grid"]

AXES = ("x", "y", "z")
_MODES = {
    1: {None: (("ez",), ("hy",))},
    2: {"TMz": (("ez",), ("hx", "hy")), "TEz": (("ex", "ey"), ("hz",))},
    3: {None: (("ex", "ey", "ez"), ("hx", "hy", "hz"))},
}
_DTYPES = {"float32": core.float32, "float64": core.float64}


class Grid:
    """A uniform Yee grid in 1, 2 or 3 dimensions.

    Args:
        shape: cells per axis, ``(nx,)``, ``(nx, ny)`` or ``(nx, ny, nz)`` (ints >= 1).
        spacing: cell size in metres, one float for all axes or one per axis.
        courant: Courant number ``S = c0 dt / min(spacing)``; default 0.99 of the limit
            ``1 / sqrt(sum_i (min(d) / d_i)^2)`` (``1/sqrt(D)`` for cubic cells). A value above
            the limit is a ``ValueError`` naming the limit.
        dt: the time step in seconds instead of ``courant`` (same check).
        dtype: ``"float32"``/``"float64"`` or a core dtype: the dtype of every field.
        mode: for 2D, ``"TMz"`` (default: ez, hx, hy) or ``"TEz"`` (hz, ex, ey).

    Attributes:
        shape (tuple[int, ...]), spacing (tuple[float, ...], m), ndim, dt (s), courant,
        courant_limit, dtype (core dtype), mode, e_components, h_components (field names).
    """

    def __init__(
        self,
        shape: Sequence[int],
        spacing: float | Sequence[float],
        *,
        courant: float | None = None,
        dt: float | None = None,
        dtype="float32",
        mode: str | None = None,
    ):
        shape = tuple(int(n) for n in np.atleast_1d(shape))
        if not 1 <= len(shape) <= 3 or min(shape) < 1:
            raise ValueError(f"Grid shape must have 1 to 3 positive entries, got {shape}")
        ndim = len(shape)
        spacing = np.broadcast_to(np.asarray(spacing, dtype=np.float64), (ndim,))
        if not np.all(spacing > 0) or not np.all(np.isfinite(spacing)):
            raise ValueError(f"Grid spacing must be positive and finite, got {tuple(spacing)}")
        if ndim == 2:
            mode = "TMz" if mode is None else mode
            if mode not in _MODES[2]:
                raise ValueError(f"2D mode must be 'TMz' or 'TEz', got {mode!r}")
        elif mode is not None:
            raise ValueError(f"mode is only for 2D grids, got mode={mode!r} for a {ndim}D grid")
        self.shape = shape
        self.ndim = ndim
        self.spacing = tuple(float(d) for d in spacing)
        self.mode = mode
        self.e_components, self.h_components = _MODES[ndim][mode]
        self.dtype = _DTYPES.get(dtype, dtype) if isinstance(dtype, str) else dtype
        if self.dtype not in (core.float32, core.float64):
            raise ValueError(f"Grid dtype must be float32 or float64, got {dtype!r}")
        d_min = min(self.spacing)
        self.courant_limit = 1.0 / math.sqrt(sum((d_min / d) ** 2 for d in self.spacing))
        if dt is not None and courant is not None:
            raise ValueError("give either courant or dt, not both")
        if dt is not None:
            courant = C0 * float(dt) / d_min
        elif courant is None:
            courant = 0.99 * self.courant_limit
        courant = float(courant)
        if not courant > 0:
            raise ValueError(f"Courant number must be positive, got {courant}")
        if courant > self.courant_limit * (1 + 1e-12):
            raise ValueError(
                f"Courant number {courant:.6g} is above the stability limit "
                f"{self.courant_limit:.6g} of this {ndim}D grid (c0 dt <= 1/sqrt(sum 1/d_i^2), "
                f"i.e. dt <= {self.courant_limit * d_min / C0:.6g} s)"
            )
        self.courant = courant
        self.dt = float(dt) if dt is not None else courant * d_min / C0

    # ---- geometry -------------------------------------------------------------------------
    @property
    def size(self) -> tuple[float, ...]:
        """Physical extent per axis, m: ``n_i d_i``."""
        return tuple(n * d for n, d in zip(self.shape, self.spacing, strict=True))

    @property
    def cell_volume(self) -> float:
        """Cell length (1D, m), area (2D, m^2) or volume (3D, m^3)."""
        return float(np.prod(self.spacing))

    @property
    def components(self) -> tuple[str, ...]:
        """Every field component this grid carries, E first."""
        return self.e_components + self.h_components

    @staticmethod
    def staggered(component: str) -> tuple[float, float, float]:
        """Half-cell offsets of ``component`` along x, y, z (0 or 0.5; see the module doc)."""
        kind, axis = component[0], AXES.index(component[1])
        off = [0.0, 0.0, 0.0]
        if kind == "e":
            off[axis] = 0.5
        else:
            off = [0.5, 0.5, 0.5]
            off[axis] = 0.0
        return tuple(off)

    def positions(self, component: str) -> tuple[np.ndarray, ...]:
        """Coordinates (m) of ``component``'s samples along each grid axis: ``ndim`` arrays."""
        off = self.staggered(component)
        return tuple(
            (np.arange(n) + off[a]) * d for a, (n, d) in enumerate(zip(self.shape, self.spacing))
        )

    def index_of(self, point: Sequence[float], component: str = "ez") -> tuple[int, ...]:
        """Nearest stored index of ``component`` to a point given in metres (ndim floats)."""
        point = np.atleast_1d(np.asarray(point, dtype=np.float64))
        if point.shape != (self.ndim,):
            raise ValueError(f"point must have {self.ndim} coordinates, got {point.tolist()}")
        off = self.staggered(component)
        idx = tuple(
            int(np.rint(p / d - off[a])) for a, (p, d) in enumerate(zip(point, self.spacing))
        )
        self.check_index(idx, what=f"point {point.tolist()} ({component})")
        return idx

    def check_index(self, index: Sequence[int], what: str = "index", pml=None) -> None:
        """``ValueError`` if ``index`` lies outside the grid, or inside a PML when ``pml`` is
        given (per axis ``(cells_low, cells_high)``)."""
        index = tuple(int(i) for i in index)
        if len(index) != self.ndim:
            raise ValueError(f"{what}: index {index} must have {self.ndim} entries")
        for a, (i, n) in enumerate(zip(index, self.shape)):
            if not 0 <= i < n:
                raise ValueError(
                    f"{what}: index {index} is outside the grid {self.shape} along {AXES[a]}"
                )
            if pml is not None:
                lo, hi = pml[a]
                if i < lo or i >= n - hi:
                    raise ValueError(
                        f"{what}: index {index} is inside the PML along {AXES[a]} "
                        f"(cells {lo} low and {hi} high of {n}); move it to {lo} <= i < {n - hi}"
                    )

    def max_frequency(self, cells_per_wavelength: float = 10.0, eps_r: float = 1.0) -> float:
        """Highest frequency (Hz) resolved with ``cells_per_wavelength`` cells of ``max(d)``."""
        return C0 / math.sqrt(eps_r) / (cells_per_wavelength * max(self.spacing))

    def zeros(self) -> core.Tensor:
        """A field array of the grid's shape and dtype, all zero."""
        return core.ops.zeros(self.shape, dtype=self.dtype)

    def __repr__(self) -> str:
        mode = f", mode={self.mode!r}" if self.mode else ""
        return (
            f"Grid(shape={self.shape}, spacing={self.spacing}, dt={self.dt:.6g}, "
            f"courant={self.courant:.6g}, dtype={self.dtype}{mode})"
        )
