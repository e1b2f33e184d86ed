"""Yee update equations in 1D, 2D (TMz, TEz) and 3D with per-cell materials and CPML.

Maxwell's curl equations with electric and magnetic conductivity (Taflove & Hagness eqs.
3.1-3.2),

    eps0 eps_r dE/dt = curl H - sigma E,        mu0 mu_r dH/dt = -curl E - sigma_m H,

are advanced leapfrog on the staggered grid of ``grid`` (Taflove & Hagness eqs. 3.29-3.32):

    H^{n+1/2} = Da H^{n-1/2} - Db curl+ E^n,       E^{n+1} = Ca E^n + Cb curl- H^{n+1/2},

    Ca = (1 - sigma dt / (2 eps)) / (1 + sigma dt / (2 eps)),   Cb = (dt / eps) / (1 + sigma dt / (2 eps)),
    Da = (1 - sigma_m dt / (2 mu)) / (1 + sigma_m dt / (2 mu)), Db = (dt / mu) / (1 + sigma_m dt / (2 mu)),

with ``eps = eps0 eps_r`` and ``mu = mu0 mu_r``. ``curl+`` takes forward differences
``(F[i+1] - F[i]) / d`` (H sits half a cell after E), ``curl-`` backward differences
``(F[i] - F[i-1]) / d``; component ``i`` of a curl is ``sum_jk eps_ijk d_j F_k`` over the axes
the grid has. Derivatives along a CPML axis are stretched (see ``boundaries``).

Materials: ``eps_r``, ``mu_r``, ``sigma`` (S/m) and ``sigma_m`` (ohm/m) are each a number or a
map of the grid's shape (numpy array or core Tensor; a Tensor carries gradients through the
coefficients into every field). Map entry ``[i, j, k]`` is the material seen by every
component stored at index ``[i, j, k]`` (so ``ex[i, j, k]`` at ``(i+1/2, j, k)`` reads it half a
cell from ``ez[i, j, k]``); averaging over the cells a component touches belongs to the
rasteriser that builds the map.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from diffsci import core
from diffsci.core import ops

from .constants import EPS0, MU0
from .grid import AXES

__all__ = [
    "Materials",
    "cpml_embed",
    "cpml_slab",
    "curl_terms",
    "diff_backward",
    "diff_forward",
    "psi_keys",
    "psi_shapes",
    "update_coefficients",
    "update_e",
    "update_h",
]

_LEVI_CIVITA = {
    (0, 1, 2): 1,
    (1, 2, 0): 1,
    (2, 0, 1): 1,
    (0, 2, 1): -1,
    (2, 1, 0): -1,
    (1, 0, 2): -1,
}


@dataclasses.dataclass
class Materials:
    """Per-cell materials (see the module docstring for where each entry acts).

    Args:
        eps_r: relative permittivity, a number or a ``grid.shape`` map (> 0).
        mu_r: relative permeability, a number or a ``grid.shape`` map (> 0).
        sigma: electric conductivity, S/m, a number or a ``grid.shape`` map (>= 0).
        sigma_m: magnetic conductivity, ohm/m, a number or a ``grid.shape`` map (>= 0).
    """

    eps_r: object = 1.0
    mu_r: object = 1.0
    sigma: object = 0.0
    sigma_m: object = 0.0

    def checked(self, grid) -> Materials:
        """A copy whose maps are Tensors of ``grid.dtype`` (numbers stay numbers).

        Raises:
            ValueError: a map whose shape is not ``grid.shape``, or a non-positive eps_r/mu_r,
                or a negative conductivity (checked where the values are concrete).
        """
        out = {}
        for field in dataclasses.fields(self):
            name, value = field.name, getattr(self, field.name)
            if isinstance(value, (int, float, np.floating, np.integer)):
                value = float(value)
                _check_values(name, np.asarray(value))
            else:
                if not isinstance(value, core.Tensor):
                    value = core.tensor(np.asarray(value), dtype=grid.dtype)
                if tuple(value.shape) not in ((), grid.shape):
                    raise ValueError(
                        f"material map {name} has shape {tuple(value.shape)}; the grid needs "
                        f"{grid.shape} (or a number)"
                    )
                if value.dtype != grid.dtype:
                    value = ops.astype(value, grid.dtype)
                _check_values(name, value)
            out[name] = value
        return Materials(**out)


def _check_values(name, value):
    try:
        array = value.asnumpy() if isinstance(value, core.Tensor) else np.asarray(value)
    except Exception:  # a tracer under jit/grad: no concrete values to check
        return
    lowest = 0.0 if name in ("sigma", "sigma_m") else None
    if not np.all(np.isfinite(array)):
        raise ValueError(f"material {name} has non-finite entries")
    if lowest is None and np.any(array <= 0):
        raise ValueError(f"material {name} must be positive, min is {array.min()}")
    if lowest is not None and np.any(array < lowest):
        raise ValueError(f"material {name} must be >= 0, min is {array.min()}")


def _loss_pair(sigma, eps, dt):
    """``((1 - s) / (1 + s), (dt / eps) / (1 + s))`` with ``s = sigma dt / (2 eps)``.

    A lossless medium (``sigma`` the number 0) gives the number 1.0 and ``dt / eps``, so the
    update skips the multiplication.
    """
    if isinstance(sigma, float) and sigma == 0.0:
        return 1.0, dt / eps
    s = sigma * (dt / 2) / eps
    return (1 - s) / (1 + s), (dt / eps) / (1 + s)


def _as_coefficient(value, mask, grid):
    """Apply a 0/1 mask (numpy or None) and return a Tensor (or a float when uniform)."""
    if mask is not None:
        value = value * core.tensor(mask, dtype=grid.dtype)
    if isinstance(value, core.Tensor) and value.dtype != grid.dtype:
        value = ops.astype(value, grid.dtype)
    return value


def update_coefficients(grid, materials: Materials, boundaries) -> dict:
    """Update coefficients of every component and the CPML profiles (a pytree of Tensors).

    Args:
        grid: the ``Grid``.
        materials: ``Materials`` (maps ``grid.shape`` or numbers).
        boundaries: a ``Boundaries`` (PEC/PMC walls are folded in as zero coefficients).

    Returns:
        dict with ``"ca_<e>"``, ``"cb_<e>"`` (dimensionless, s m/F) for each E component,
        ``"da_<h>"``, ``"db_<h>"`` (dimensionless, s m/H) for each H component, maps of
        ``grid.shape``, 0-d Tensors or Python floats (uniform; broadcast one before writing
        single cells); ``cb``/``db`` are zero on PEC/PMC walls; and for every
        CPML axis ``u``: ``"pml_<kind>_<u>"`` with ``kind`` in ``b, a, dk`` (``a`` divided by
        ``d``; ``dk = 1/(kappa d) - 1/d``) for ``e`` and ``h``, on the PML slabs only: length
        ``low + high`` cells along ``u`` (see ``cpml_slab``), 1 along the other axes.
    """
    m = materials.checked(grid)
    ca, cb = _loss_pair(m.sigma, EPS0 * m.eps_r, grid.dt)
    da, db = _loss_pair(m.sigma_m, MU0 * m.mu_r, grid.dt)
    coeffs = {}
    # walls: only Cb (Db) is masked; the field there starts at zero (``initial_state``) and
    # Ca (Da) keeps it there, so a lossless Ca stays the number 1.0
    for name in grid.e_components:
        coeffs[f"ca_{name}"] = _as_coefficient(ca, None, grid)
        coeffs[f"cb_{name}"] = _as_coefficient(cb, boundaries.mask(name), grid)
    for name in grid.h_components:
        coeffs[f"da_{name}"] = _as_coefficient(da, None, grid)
        coeffs[f"db_{name}"] = _as_coefficient(db, boundaries.mask(name), grid)
    for axis in range(grid.ndim):
        profiles = boundaries.cpml_profiles(axis)
        if profiles is None:
            continue
        d = grid.spacing[axis]
        lo, hi = boundaries.pml_cells(axis)
        n = grid.shape[axis]
        cells = np.r_[0:lo, n - hi : n]
        shape = [1] * grid.ndim
        shape[axis] = lo + hi
        for kind, (b, a, kappa) in profiles.items():
            for key, value in (("b", b), ("a", a / d), ("dk", 1.0 / (kappa * d) - 1.0 / d)):
                coeffs[f"pml_{key}{kind}_{AXES[axis]}"] = core.tensor(
                    value[cells].reshape(shape), dtype=grid.dtype
                )
    return coeffs


def psi_shapes(grid, boundaries) -> dict[str, tuple[int, ...]]:
    """Shape of every CPML ``psi`` term: the grid's, with ``low + high`` PML cells along its
    axis (the slabs, low first)."""
    shapes = {}
    for key in psi_keys(grid, boundaries):
        axis = AXES.index(key.split("_")[1])
        shape = list(grid.shape)
        shape[axis] = sum(boundaries.pml_cells(axis))
        shapes[key] = tuple(shape)
    return shapes


def cpml_slab(x, axis: int, lo: int, hi: int):
    """The PML slabs of ``x`` along ``axis``: its first ``lo`` and last ``hi`` cells, joined."""
    n = x.shape[axis]
    if hi == 0:
        return x[_axis_slice(x.ndim, axis, slice(0, lo))]
    if lo == 0:
        return x[_axis_slice(x.ndim, axis, slice(n - hi, n))]
    return ops.concatenate(
        [
            x[_axis_slice(x.ndim, axis, slice(0, lo))],
            x[_axis_slice(x.ndim, axis, slice(n - hi, n))],
        ],
        axis=axis,
    )


def cpml_embed(x, axis: int, lo: int, hi: int, n: int):
    """Inverse of ``cpml_slab``: the slabs put back in an ``n``-cell axis, zero between."""
    pad = [(0, 0)] * x.ndim
    if hi == 0 or lo == 0:
        pad[axis] = (0, n - lo) if hi == 0 else (n - hi, 0)
        return ops.pad(x, pad)
    pad[axis] = (0, n - lo - hi)
    low = ops.pad(x[_axis_slice(x.ndim, axis, slice(0, lo))], pad)
    return ops.concatenate([low, x[_axis_slice(x.ndim, axis, slice(lo, lo + hi))]], axis=axis)


def psi_keys(grid, boundaries) -> tuple[str, ...]:
    """Names of the CPML ``psi`` terms the state carries: ``"<component>_<axis>"``."""
    keys = []
    for name in grid.components:
        for j, _k, _s in curl_terms(name, grid):
            if boundaries.has_cpml(j):
                keys.append(f"{name}_{AXES[j]}")
    return tuple(keys)


def curl_terms(name: str, grid):
    """``(j, k, sign)``: the curl of the other field feeding ``name`` is sum sign d_j F_k."""
    i = AXES.index(name[1])
    other = grid.h_components if name[0] == "e" else grid.e_components
    terms = []
    for j in range(grid.ndim):
        for k in range(3):
            sign = _LEVI_CIVITA.get((i, j, k))
            if sign and ("h" if name[0] == "e" else "e") + AXES[k] in other:
                terms.append((j, k, sign))
    return terms


def _axis_slice(ndim, axis, sl):
    index = [slice(None)] * ndim
    index[axis] = sl
    return tuple(index)


def diff_forward(f: core.Tensor, axis: int, periodic: bool) -> core.Tensor:
    """``F[i+1] - F[i]`` along ``axis`` (same shape); ``F[n]`` is 0, or ``F[0]`` if periodic."""
    if periodic:
        return ops.roll(f, -1, axis) - f
    pad = [(0, 0)] * f.ndim
    pad[axis] = (0, 1)
    return ops.pad(f[_axis_slice(f.ndim, axis, slice(1, None))], pad) - f


def diff_backward(f: core.Tensor, axis: int, periodic: bool) -> core.Tensor:
    """``F[i] - F[i-1]`` along ``axis`` (same shape); ``F[-1]`` is 0, or ``F[n-1]`` if periodic."""
    if periodic:
        return f - ops.roll(f, 1, axis)
    pad = [(0, 0)] * f.ndim
    pad[axis] = (1, 0)
    return f - ops.pad(f[_axis_slice(f.ndim, axis, slice(0, -1))], pad)


def _curl(name, state, coeffs, grid, boundaries, psi, kind):
    """``sum sign (stretched d_j F_k)`` for component ``name``; updates ``psi`` in place."""
    diff = diff_forward if kind == "h" else diff_backward
    total = None
    for j, k, sign in curl_terms(name, grid):
        source = state.get(("e" if kind == "h" else "h") + AXES[k])
        delta = diff(source, j, boundaries.periodic(j))
        term = stretched_difference(delta, name, j, kind, coeffs, psi, boundaries, grid)
        term = term if sign > 0 else -term
        total = term if total is None else total + term
    return total


def stretched_difference(delta, name, j, kind, coeffs, psi, boundaries, grid):
    """``delta / d_j`` (the difference ``delta`` of a field along axis ``j``), with the CFS-CPML
    stretching where ``psi`` holds a term for ``name`` along ``j``: in the PML slabs
    ``psi = b psi + a delta / d`` and the term gains ``(1/(kappa d) - 1/d) delta + psi``
    (Roden & Gedney eqs. 9-10). Updates ``psi`` in place."""
    key = f"{name}_{AXES[j]}"
    term = delta * (1.0 / grid.spacing[j])
    if key in psi:
        axis = AXES[j]
        lo, hi = boundaries.pml_cells(j)
        slab = cpml_slab(delta, j, lo, hi)
        new_psi = coeffs[f"pml_b{kind}_{axis}"] * psi[key] + coeffs[f"pml_a{kind}_{axis}"] * slab
        psi[key] = new_psi
        extra = coeffs[f"pml_dk{kind}_{axis}"] * slab + new_psi
        term = term + cpml_embed(extra, j, lo, hi, grid.shape[j])
    return term


def _scaled(coefficient, field):
    """``coefficient * field``, skipped for the number 1.0 (lossless)."""
    if isinstance(coefficient, float) and coefficient == 1.0:
        return field
    return coefficient * field


def update_h(state, coeffs: dict, grid, boundaries):
    """One H half step: ``H^{n-1/2} -> H^{n+1/2}`` from ``E^n`` (with CPML psi terms).

    Args:
        state: ``FieldState`` holding ``E^n``, ``H^{n-1/2}``.
        coeffs: ``update_coefficients(grid, materials, boundaries)``.

    Returns:
        ``FieldState`` with ``H^{n+1/2}`` (and the H-side psi advanced).
    """
    psi = dict(state.psi)
    new = {}
    for name in grid.h_components:
        curl = _curl(name, state, coeffs, grid, boundaries, psi, "h")
        new[name] = _scaled(coeffs[f"da_{name}"], state.get(name)) - coeffs[f"db_{name}"] * curl
    return state.replace(psi=psi, **new)


def update_e(state, coeffs: dict, grid, boundaries):
    """One E step: ``E^n -> E^{n+1}`` from ``H^{n+1/2}`` (with CPML psi terms).

    Args:
        state: ``FieldState`` holding ``E^n``, ``H^{n+1/2}``.
        coeffs: ``update_coefficients(grid, materials, boundaries)``.

    Returns:
        ``FieldState`` with ``E^{n+1}`` (and the E-side psi advanced).
    """
    psi = dict(state.psi)
    new = {}
    for name in grid.e_components:
        curl = _curl(name, state, coeffs, grid, boundaries, psi, "e")
        new[name] = _scaled(coeffs[f"ca_{name}"], state.get(name)) + coeffs[f"cb_{name}"] * curl
    return state.replace(psi=psi, **new)
