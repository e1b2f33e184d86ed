"""Shapes onto the Yee grid, and differentiable design maps for inverse design.

Rasterising (``fill_fraction``, ``paint``, ``rasterize``, ``inside_mask``): a shape from
``datasets.geometry`` (any primitive or CSG tree with ``contains`` and ``sdf``) is sampled at
the positions of one field component (``grid.staggered(component)``: Ez at ``(i, j, k+1/2)``,
Hx at ``(i, j+1/2, k+1/2)``..., see ``grid``) or at the cell centres. Each sample stands for
the cell-sized box centred on it; its *fill fraction* is the share of ``s^D`` sub-sample points
(midpoints of an ``s x ... x s`` split of the box) inside the shape. Boxes whose centre lies
farther from the boundary than their half-diagonal (``|sdf| > h``; the sdf of a CSG tree is a
lower bound of the distance, so the test stays safe) are full or empty without sub-sampling,
so the cost grows with the boundary, not the volume. The midpoint rule's error is at most the
area of the sub-cells the boundary crosses, about ``2 L d / s`` for a boundary of length ``L``
in 2D (tests: a disc against ``pi r^2``).

A fraction ``f`` mixes two materials (``average``): ``"arithmetic"``
``f e_in + (1 - f) e_out`` (exact for a field parallel to the interface) or ``"harmonic"``
``1 / (f / e_in + (1 - f) / e_out)`` (exact for a field normal to it); Farjadpour et al., "Improving
accuracy by subpixel smoothing in the finite-difference time domain", Opt. Lett. 31, 2972 (2006)
(which also combines both with the interface normal, not done here).

Design maps (core ops, differentiable; ``rho`` a Tensor):

- ``elu`` and ``design_permittivity``: MindElec's inverse-scattering map
  ``eps_r = eps_min + elu(rho, alpha)`` (``fdtd_inverse/solve.py``: ``alpha = 1e-2``), which
  keeps ``eps_r > eps_min - alpha`` for any ``rho`` with a non-vanishing gradient;
- ``density_filter``: the cone (hat) filter of topology optimisation (Bruns & Tortorelli 2001,
  Bourdin 2001): ``rho~_i = sum_j w_ij rho_j / sum_j w_ij``, ``w_ij = max(0, r - |x_i - x_j|)``
  (``r`` in cells), a convolution normalised by the weights that fall inside the grid;
- ``tanh_projection``: Wang, Lazarov & Sigmund, "On projection methods, convergence and robust
  formulations in topology optimization", Struct. Multidisc. Optim. 43, 767 (2011), eq. 9:
  ``(tanh(beta eta) + tanh(beta (rho - eta))) / (tanh(beta eta) + tanh(beta (1 - eta)))``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from diffsci import core
from diffsci.core import ops

__all__ = [
    "average",
    "density_filter",
    "design_permittivity",
    "elu",
    "fill_fraction",
    "inside_mask",
    "paint",
    "rasterize",
    "sample_points",
    "tanh_projection",
]

_CHUNK = 1 << 20  # sub-sample points per membership call


def _layout(grid, shape, spacing, component, offset):
    """(shape, spacing, offset in cells) from a Grid-like object or explicit values."""
    if grid is not None:
        shape, spacing = tuple(grid.shape), tuple(float(d) for d in grid.spacing)
    if shape is None or spacing is None:
        raise ValueError("give a grid, or both shape and spacing")
    shape = tuple(int(n) for n in shape)
    ndim = len(shape)
    spacing = tuple(np.broadcast_to(np.asarray(spacing, dtype=np.float64), (ndim,)).tolist())
    if offset is None:
        if component in (None, "center", "centre"):
            offset = (0.5,) * ndim
        else:
            if len(component) != 2 or component[0] not in "eh" or component[1] not in "xyz":
                raise ValueError(
                    f"component must be 'center' or one of ex ey ez hx hy hz, got {component!r}"
                )
            axis = "xyz".index(component[1])
            off = [0.5] * 3 if component[0] == "h" else [0.0] * 3
            off[axis] = 0.5 if component[0] == "e" else 0.0
            offset = tuple(off[:ndim])
    offset = tuple(np.broadcast_to(np.asarray(offset, dtype=np.float64), (ndim,)).tolist())
    return shape, spacing, offset


def sample_points(
    grid=None, component="center", *, shape=None, spacing=None, offset=None, origin=None
) -> np.ndarray:
    """Coordinates (m) of a component's samples: ``[*shape, D]`` float64.

    Args:
        grid: a ``Grid`` (or anything with ``shape`` and ``spacing``); or give ``shape`` and
            ``spacing`` (m, one per axis or one for all).
        component: ``"center"`` (cell centres) or a field name (``"ez"``, ``"hx"``...).
        offset: explicit offsets in cells (overrides ``component``).
        origin: coordinates of grid node ``(0, ..., 0)`` (m), default zeros.
    """
    shape, spacing, offset = _layout(grid, shape, spacing, component, offset)
    origin = np.zeros(len(shape)) if origin is None else np.asarray(origin, dtype=np.float64)
    axes = [origin[a] + (np.arange(n) + offset[a]) * spacing[a] for a, n in enumerate(shape)]
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)


def _check_dim(geometry, ndim):
    gdim = getattr(geometry, "dim", ndim)
    if gdim != ndim:
        raise ValueError(
            f"geometry {getattr(geometry, 'name', geometry)!r} is {gdim}-D but the grid is {ndim}-D"
        )


def fill_fraction(
    geometry,
    grid=None,
    component="center",
    *,
    subsamples: int = 4,
    shape=None,
    spacing=None,
    offset=None,
    origin=None,
) -> np.ndarray:
    """Share of each sample's cell-sized box inside ``geometry``: float64 ``[*shape]`` in [0, 1].

    Args:
        geometry: a ``datasets.geometry`` shape of the grid's dimension (``contains``, ``sdf``).
        grid, component, shape, spacing, offset, origin: where the samples are (``sample_points``).
        subsamples: ``s``, sub-sample points per axis in each box (``s^D`` per boundary box).
    """
    s = int(subsamples)
    if s < 1:
        raise ValueError(f"subsamples must be >= 1, got {subsamples}")
    centres = sample_points(
        grid, component, shape=shape, spacing=spacing, offset=offset, origin=origin
    )
    out_shape, ndim = centres.shape[:-1], centres.shape[-1]
    _check_dim(geometry, ndim)
    d = np.asarray(_layout(grid, shape, spacing, component, offset)[1])
    pts = centres.reshape(-1, ndim)
    frac = np.empty(pts.shape[0], dtype=np.float64)
    half_diag = 0.5 * float(np.linalg.norm(d))
    try:
        sdf = np.asarray(geometry.sdf(pts), dtype=np.float64).reshape(-1)
        full, empty = sdf < -half_diag, sdf > half_diag
    except NotImplementedError:
        full = empty = np.zeros(pts.shape[0], dtype=bool)
    frac[full], frac[empty] = 1.0, 0.0
    todo = np.nonzero(~(full | empty))[0]
    # sub-sample offsets: midpoints of s equal parts of [-d/2, d/2] per axis -> [s^D, D]
    sub1 = (np.arange(s) + 0.5) / s - 0.5
    sub = np.array(list(itertools.product(sub1, repeat=ndim))) * d
    per = max(1, _CHUNK // sub.shape[0])
    for lo in range(0, todo.size, per):
        idx = todo[lo : lo + per]
        cloud = (pts[idx, None, :] + sub[None, :, :]).reshape(-1, ndim)
        inside = np.asarray(geometry.contains(cloud), dtype=bool).reshape(idx.size, -1)
        frac[idx] = inside.mean(axis=1)
    return frac.reshape(out_shape)


def inside_mask(
    geometry, grid=None, component="center", *, shape=None, spacing=None, offset=None, origin=None
) -> np.ndarray:
    """Whether each sample point itself is inside ``geometry`` (bool ``[*shape]``; PEC masks)."""
    pts = sample_points(grid, component, shape=shape, spacing=spacing, offset=offset, origin=origin)
    _check_dim(geometry, pts.shape[-1])
    flat = pts.reshape(-1, pts.shape[-1])
    return np.asarray(geometry.contains(flat), dtype=bool).reshape(pts.shape[:-1])


def average(fraction, value_in, value_out, mode: str = "arithmetic"):
    """Mix two material values by fill fraction (core ops; differentiable in every argument).

    Args:
        fraction: ``[*shape]`` in [0, 1] (array or Tensor).
        value_in, value_out: the material inside and outside (float, ``[*shape]`` array or
            Tensor), e.g. relative permittivities.
        mode: ``"arithmetic"`` or ``"harmonic"`` (see the module doc).

    Returns:
        Tensor ``[*shape]``.
    """
    f = fraction if isinstance(fraction, core.Tensor) else core.tensor(np.asarray(fraction))
    if mode == "arithmetic":
        return f * value_in + (1.0 - f) * value_out
    if mode == "harmonic":
        return 1.0 / (f / value_in + (1.0 - f) / value_out)
    raise ValueError(f"average: mode must be 'arithmetic' or 'harmonic', got {mode!r}")


def paint(
    material,
    geometry,
    value,
    grid=None,
    component="center",
    *,
    mode="arithmetic",
    subsamples: int = 4,
    origin=None,
):
    """Put ``geometry`` filled with ``value`` over an existing material map.

    Args:
        material: the current map ``[*grid.shape]`` (Tensor or array), e.g. eps_r.
        geometry: the shape to add (drawn over what is there).
        value: its material value (float or Tensor, may carry a gradient).
        grid, component, subsamples, origin: as in ``fill_fraction``.
        mode: ``"arithmetic"`` or ``"harmonic"`` mixing in the boundary cells.

    Returns:
        Tensor ``[*grid.shape]``: the new map (``material`` where the fraction is 0).
    """
    if not isinstance(material, core.Tensor):
        material = core.tensor(np.asarray(material, dtype=np.float64))
    shape = tuple(grid.shape)
    if tuple(material.shape) != shape:
        raise ValueError(f"paint: material map {tuple(material.shape)} is not the grid {shape}")
    f = fill_fraction(geometry, grid, component, subsamples=subsamples, origin=origin)
    return average(core.tensor(f, dtype=material.dtype), value, material, mode)


def rasterize(
    geometry,
    grid,
    value_in,
    value_out=1.0,
    component="center",
    *,
    mode="arithmetic",
    subsamples: int = 4,
    origin=None,
    dtype=core.float64,
):
    """A material map ``[*grid.shape]``: ``value_in`` inside ``geometry``, ``value_out`` outside,
    sub-cell averaged on the boundary (a Tensor of ``dtype``)."""
    base = core.full(tuple(grid.shape), float(value_out), dtype=dtype)
    return paint(
        base, geometry, value_in, grid, component, mode=mode, subsamples=subsamples, origin=origin
    )


# ---- design maps ------------------------------------------------------------------------


def elu(x, alpha: float = 1.0):
    """``x`` for ``x > 0``, ``alpha (exp(x) - 1)`` otherwise (core ops).

    ``expm1`` of ``min(x, 0)`` keeps the unused branch finite, so the gradient is clean.
    """
    neg = alpha * ops.expm1(ops.minimum(x, 0.0))
    return ops.where(x > 0, x, neg)


def design_permittivity(rho, eps_min: float = 1.0, alpha: float = 1e-2):
    """MindElec's map ``eps_r = eps_min + elu(rho, alpha)`` (``[*shape]``, same as ``rho``)."""
    return eps_min + elu(rho, alpha)


def _cone_kernel(radius: float, ndim: int) -> np.ndarray:
    r = float(radius)
    if not r > 0:
        raise ValueError(f"density_filter: radius must be > 0 cells, got {radius}")
    half = max(0, math.ceil(r) - 1)
    ax = np.arange(-half, half + 1, dtype=np.float64)
    dist = np.sqrt(sum(g**2 for g in np.meshgrid(*([ax] * ndim), indexing="ij")))
    return np.maximum(0.0, r - dist)


_CONV = {1: "conv1d", 2: "conv2d", 3: "conv3d"}


def density_filter(rho, radius: float):
    """Cone-filtered density (Bruns & Tortorelli 2001): ``[*shape]`` -> ``[*shape]``.

    Args:
        rho: design density, Tensor ``[n1, ..., nD]`` (D = 1, 2, 3).
        radius: filter radius ``r`` in cells (weights ``max(0, r - |i - j|)``; ``r <= 1`` is
            the identity).

    Returns:
        Tensor of ``rho``'s shape and dtype: the weighted mean over the cells within ``r``,
        normalised by the weights inside the grid (a constant density stays constant).
    """
    if not isinstance(rho, core.Tensor):
        rho = core.tensor(np.asarray(rho, dtype=np.float64))
    shape = tuple(rho.shape)
    ndim = len(shape)
    if ndim not in _CONV:
        raise ValueError(f"density_filter: rho must be 1-, 2- or 3-D, got shape {shape}")
    w = _cone_kernel(radius, ndim)
    pad = w.shape[0] // 2
    conv = getattr(ops, _CONV[ndim])
    # the normalisation depends on the shape only: computed once, in numpy, as a constant
    ones = np.pad(np.ones(shape), pad)
    norm = np.zeros(shape)
    for off in itertools.product(range(w.shape[0]), repeat=ndim):
        norm += w[off] * ones[tuple(slice(o, o + n) for o, n in zip(off, shape))]
    kernel = core.tensor(w[None, None], dtype=rho.dtype)  # [1, 1, k, ..., k]
    x = ops.reshape(rho, (1, 1, *shape))
    out = ops.reshape(conv(x, kernel, padding=pad), shape)
    return out / core.tensor(norm, dtype=rho.dtype)


def tanh_projection(rho, beta: float, eta: float = 0.5):
    """Smoothed Heaviside projection (Wang, Lazarov & Sigmund 2011, eq. 9).

    Args:
        rho: filtered density in [0, 1] (Tensor, any shape).
        beta: sharpness (-> infinity: a step at ``eta``).
        eta: threshold in [0, 1].

    Returns:
        Tensor of ``rho``'s shape; 0 and 1 are fixed points.
    """
    a = math.tanh(beta * eta)
    return (a + ops.tanh(beta * (rho - eta))) / (a + math.tanh(beta * (1.0 - eta)))
