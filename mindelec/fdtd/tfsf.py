"""Total-field/scattered-field plane-wave injection and a 2D line source.

``PlaneWave`` splits the grid into a total-field box ``lo .. hi`` (E-node indices per axis,
faces included) and the scattered-field region outside it (Umashankar & Taflove 1982; Taflove &
Hagness, *Computational Electrodynamics*, 3rd ed., ch. 5). The incident wave is computed on an
auxiliary 1D Yee grid along the direction of propagation with the main grid's time step:

- grid-aligned incidence (``direction="+x"`` ...): the auxiliary cell is the main grid's
  along the axis and every main sample sits on an auxiliary node, so the incident field solves
  the main grid's own equations (its dispersion is matched exactly) and nothing leaks into the
  scattered-field region but round-off;
- oblique incidence (an angle or a vector, 2D or 3D): main samples are interpolated linearly
  between auxiliary nodes and the auxiliary medium is tuned so that its phase velocity equals
  the main grid's numerical phase velocity along the direction at ``f_match`` (Taflove & Hagness
  sec. 5.9 "matched numerical dispersion"; ``matched_wavenumber``); what leaks is the
  interpolation error, 1e-4 .. 1e-3 of the incident wave at 20 cells per wavelength.

Each update whose
stencil reaches across the TF/SF boundary uses a field of the other region; the correction
replaces that sample ``G[q]`` by ``G[q] + (m_F - m_G[q]) G_inc[q]`` (``m`` = 1 in the total
region): for the curl term ``sign d_j G_k`` of component ``F``,

    delta curl = (sign / d_j) (m_F D_j(G_inc) - D_j(m_G G_inc)),                          (1)

with ``D_j`` the difference the Yee update takes (forward for H, backward for E), and

    H^{n+1/2} -= Db delta curl(E_inc^n),          E^{n+1} += Cb delta curl(H_inc^{n+1/2})   (2)

(Taflove eqs. 5.50-5.57 in a form valid for every face, edge and corner). ``inject_h`` applies
the H half of (2) and advances the auxiliary H, ``inject`` the E half and advances the
auxiliary E; the auxiliary grid is the source's ``aux`` state in the loop.

The auxiliary grid spans every main sample's distance along the direction plus margins; its
upstream end is a hard source ``e = amplitude * waveform(t)`` and its downstream end a graded
matched absorber (``sigma_m = sigma mu / eps``), so the incident field is one travelling wave,
``margin`` auxiliary cells from the hard source to the grid's first sample.

Requirements: the total-field box lies at least one cell inside the PML-free interior (its
neighbours are updated with plain differences) and the medium on the box's faces is the
background ``eps_r`` the auxiliary grid uses.

``LineSource`` is a z-directed line current ``I(t)`` (A) on a 2D TMz grid
(``lumped.CurrentSource`` on ``ez``): the source of the 2D Green's function
``E_z = -(omega mu0 I / 4) H0^(2)(k rho)``.
"""

from __future__ import annotations

import math

import numpy as np

import core
from core import ops

from .constants import C0, ETA0
from .grid import AXES
from .lumped import CurrentSource
from .sources import Source, e_time
from .yee import curl_terms, diff_backward, diff_forward

__all__ = ["LineSource", "PlaneWave", "matched_wavenumber"]


def _axis(value, what) -> int:
    if isinstance(value, str):
        if value not in AXES:
            raise ValueError(f"{what} must be 'x', 'y' or 'z', got {value!r}")
        return AXES.index(value)
    return int(value)


def _unit(v, what) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64).reshape(-1)
    v = np.concatenate([v, np.zeros(3 - v.size)]) if v.size < 3 else v
    norm = np.linalg.norm(v)
    if v.shape != (3,) or not norm > 0:
        raise ValueError(f"{what} must be a nonzero vector of 2 or 3 entries, got {v.tolist()}")
    v = v / norm
    v[np.abs(v) < 1e-12] = 0.0
    return v


def _parse_direction(direction) -> tuple[np.ndarray, bool]:
    """``(unit k, grid-aligned?)`` from ``"+x"``-style text, an angle (degrees, 2D: from +x
    toward +y) or a vector."""
    if isinstance(direction, str):
        if len(direction) != 2 or direction[0] not in "+-":
            raise ValueError(f"direction must look like '+x' or '-y', got {direction!r}")
        k = np.zeros(3)
        k[_axis(direction[1], "direction axis")] = 1.0 if direction[0] == "+" else -1.0
        return k, True
    if np.ndim(direction) == 0:
        phi = math.radians(float(direction))
        k = _unit([math.cos(phi), math.sin(phi)], "direction")
    else:
        k = _unit(direction, "direction")
    return k, int(np.count_nonzero(k)) == 1


def matched_wavenumber(grid, k_hat, f: float, eps_r: float = 1.0) -> float:
    """The Yee grid's numerical wavenumber (rad/m) along ``k_hat`` at ``f`` (Hz): the root of

        sum_a (sin(k k_a d_a / 2) / d_a)^2 = (sin(omega dt / 2) / (c dt))^2

    (Taflove & Hagness eq. 4.10-4.12, ``c = c0 / sqrt(eps_r)``), by Newton from the continuum
    ``omega / c``."""
    c = C0 / math.sqrt(eps_r)
    w = 2 * math.pi * f
    rhs = (math.sin(w * grid.dt / 2) / (c * grid.dt)) ** 2
    comps = [(k_hat[a], grid.spacing[a]) for a in range(grid.ndim) if k_hat[a] != 0.0]
    k = w / c
    for _ in range(50):
        val = sum((math.sin(k * ka * d / 2) / d) ** 2 for ka, d in comps) - rhs
        der = sum(ka * math.sin(k * ka * d) / (2 * d) for ka, d in comps)
        step = val / der
        k -= step
        if abs(step) < 1e-15 * k:
            break
    return k


class PlaneWave(Source):
    """A TF/SF plane wave, grid-aligned (exact) or oblique (phase-velocity matched).

    Args:
        lo, hi: corner E nodes of the total-field box (``ndim`` ints each, ``lo < hi``).
        waveform: ``w(t)`` (``waveforms``); the incident ``E`` at the source is
            ``amplitude * w(t)`` (V/m).
        direction: ``"+x"``, ``"-x"``, ``"+y"``, ``"-y"`` (``"+z"``/``"-z"`` on 3D grids), or
            an angle in degrees in the xy-plane (from +x toward +y), or a 2/3-vector.
        polarization: the direction of E: an axis (``"z"`` on TMz, ``"x"``/``"y"`` on TEz) or
            a vector; it is made perpendicular to the direction. Default: ``z`` on TMz and 1D,
            ``z x k`` on TEz.
        amplitude: V/m (a number or 0-d Tensor).
        eps_r: background relative permittivity (the medium around the box's faces).
        f_match: frequency (Hz) at which an oblique wave's auxiliary phase velocity equals the
            grid's along the direction (default: half the waveform's ``max_frequency()``).
        margin: auxiliary cells between the hard source and the grid's first sample.
        absorber: auxiliary absorber cells at the downstream end.
        name: key of the auxiliary state.

    ``prepare`` keeps the auxiliary grid and the boundary masks on the instance: give each
    ``Simulation`` its own ``PlaneWave``.

    The incident fields are ``E = e(xi) p`` and ``H = h(xi) (k x p)`` with ``xi`` the distance
    along ``k`` (auxiliary cells) and ``e``, ``h`` the auxiliary grid's (``h = e / eta`` in the
    continuum). Grid-aligned: the auxiliary cell is the grid's along the axis, every sample
    sits on an auxiliary node and the incident field solves the main grid's own equations, so
    nothing leaks (round-off). Oblique (Taflove & Hagness sec. 5.9): the auxiliary cell is
    ``min(d)``, samples are interpolated linearly between auxiliary nodes, and the auxiliary
    medium (``eps`` and ``mu`` scaled together, impedance kept) is chosen so that its phase
    velocity at ``f_match`` equals the main grid's along ``k`` (``matched_wavenumber``); the
    leakage is then the interpolation error, a few 1e-3 of the incident wave at 20 cells per
    wavelength.
    """

    def __init__(
        self,
        lo,
        hi,
        waveform,
        direction="+x",
        polarization=None,
        amplitude=1.0,
        eps_r=1.0,
        f_match=None,
        margin=4,
        absorber=40,
        name="plane_wave",
    ):
        self.k_hat, self.aligned = _parse_direction(direction)
        self._pol_spec = polarization
        if polarization is not None:
            pol = np.zeros(3)
            if isinstance(polarization, str):
                pol[_axis(polarization, "polarization")] = 1.0
            else:
                pol = _unit(polarization, "polarization")
            if abs(float(pol @ self.k_hat)) > 1e-12 and isinstance(polarization, str):
                raise ValueError(
                    f"polarization {polarization!r} must be perpendicular to the direction "
                    f"{direction!r}"
                )
            pol = pol - (pol @ self.k_hat) * self.k_hat
            self.p_hat = _unit(pol, "polarization (perpendicular to the direction)")
        else:
            self.p_hat = None
        self.direction = direction
        self.lo = tuple(int(i) for i in lo)
        self.hi = tuple(int(i) for i in hi)
        self.waveform = waveform
        self.amplitude = amplitude
        self.eps_r = float(eps_r)
        self.f_match = f_match
        self.margin = int(margin)
        self.absorber = int(absorber)
        self.name = name
        self._fix = None
        self._set_names()

    def _set_names(self):
        """``e_name``/``h_name``: the incident components for a grid-aligned wave."""
        self.e_name = self.h_name = None
        if self.p_hat is not None and self.aligned and np.count_nonzero(self.p_hat) == 1:
            h_hat = np.cross(self.k_hat, self.p_hat)
            self.e_name = "e" + AXES[int(np.flatnonzero(self.p_hat)[0])]
            self.h_name = "h" + AXES[int(np.flatnonzero(h_hat)[0])]

    # ---- setup ----------------------------------------------------------------------------
    def check(self, grid, boundaries) -> None:
        n = grid.ndim
        if np.any(self.k_hat[n:] != 0.0):
            raise ValueError(
                f"{self.name}: direction {self.direction!r} leaves the axes of a {n}D grid"
            )
        if self.p_hat is None:  # defaults: E along z (TMz, 1D), or z x k (TEz)
            if n == 2 and grid.mode == "TEz":
                self.p_hat = _unit(np.cross([0.0, 0.0, 1.0], self.k_hat), "polarization")
            else:
                self.p_hat = np.array([0.0, 0.0, 1.0])
            self._set_names()
        h_hat = np.cross(self.k_hat, self.p_hat)
        for kind, vec, have in (
            ("e", self.p_hat, grid.e_components),
            ("h", h_hat, grid.h_components),
        ):
            for a in np.flatnonzero(vec):
                if kind + AXES[a] not in have:
                    raise ValueError(
                        f"{self.name}: a wave along {self.k_hat.tolist()} with E along "
                        f"{self.p_hat.tolist()} needs {kind}{AXES[a]}; this grid has "
                        f"{grid.components}"
                    )
        if len(self.lo) != n or len(self.hi) != n:
            raise ValueError(f"{self.name}: lo {self.lo} and hi {self.hi} need {n} entries")
        if any(h <= lo for lo, h in zip(self.lo, self.hi)):
            raise ValueError(f"{self.name}: the total-field box needs lo < hi")
        for corner in (tuple(i - 1 for i in self.lo), tuple(i + 1 for i in self.hi)):
            grid.check_index(
                corner, what=f"{self.name} total-field box (with its border)", pml=boundaries.pml
            )

    def _inside(self, grid, component) -> np.ndarray:
        """0/1 map: the component's samples inside the total-field box (faces included)."""
        off = grid.staggered(component)
        mask = np.ones(grid.shape)
        for a in range(grid.ndim):
            pos = np.arange(grid.shape[a]) + off[a]
            inside = ((pos >= self.lo[a]) & (pos <= self.hi[a])).astype(float)
            shape = [1] * grid.ndim
            shape[a] = -1
            mask = mask * inside.reshape(shape)
        return mask

    def _xi(self, grid, component) -> np.ndarray:
        """Distance along k (auxiliary cells, before the margin) of every sample of
        ``component``, measured from the box corner the wave enters first."""
        off = grid.staggered(component)
        xi = np.zeros(grid.shape)
        for a in range(grid.ndim):
            if self.k_hat[a] == 0.0:
                continue
            corner = self.lo[a] if self.k_hat[a] > 0 else self.hi[a]
            pos = (np.arange(grid.shape[a]) + off[a] - corner) * grid.spacing[a]
            shape = [1] * grid.ndim
            shape[a] = -1
            xi = xi + (self.k_hat[a] * pos).reshape(shape)
        return xi / self._delta

    def prepare(self, coeffs, grid, boundaries):
        dt, dtype = grid.dt, grid.dtype
        h_hat = np.cross(self.k_hat, self.p_hat)
        if self.aligned:
            self._delta = grid.spacing[int(np.flatnonzero(self.k_hat)[0])]
            speed = C0 / math.sqrt(self.eps_r)
        else:
            self._delta = min(grid.spacing)
            f = self.f_match
            if f is None:
                f = 0.5 * float(self.waveform.max_frequency())
            k_num = matched_wavenumber(grid, self.k_hat, float(f), self.eps_r)
            w = 2 * math.pi * float(f)
            speed = self._delta * math.sin(w * dt / 2) / (dt * math.sin(k_num * self._delta / 2))
        self.aux_speed = speed
        eta = ETA0 / math.sqrt(self.eps_r)
        eps_a, mu_a = 1.0 / (speed * eta), eta / speed
        # incident samples: every component with a nonzero share of E or H
        self._samples = {}
        lows = []
        for kind, vec, names in (
            ("e", self.p_hat, grid.e_components),
            ("h", h_hat, grid.h_components),
        ):
            for name in names:
                share = vec[AXES.index(name[1])]
                if share != 0.0:
                    xi = self._xi(grid, name) - (0.5 if kind == "h" else 0.0)
                    self._samples[name] = (kind, float(share), xi)
                    lows.append(xi.min())
        shift = self.margin - math.floor(min(lows))
        highs = []
        for name, (kind, share, xi) in self._samples.items():
            xi = xi + shift
            idx = np.floor(xi).astype(np.int64)
            frac = xi - idx
            exact = np.abs(frac) < 1e-9
            frac[exact] = 0.0
            self._samples[name] = (
                kind,
                share,
                idx,
                core.tensor(frac, dtype=dtype),
            )
            highs.append(int(idx.max()) + 2)
        down = self.absorber
        q_len = max(highs) + down + 1
        sigma_max = 0.8 * 4 / (eta * self._delta)  # Taflove eq. 7.67, m = 3
        sig_e, sig_h = np.zeros(q_len), np.zeros(q_len)
        sig_e[q_len - down :] = sigma_max * ((np.arange(down) + 1.0) / down) ** 3
        sig_h[q_len - down - 1 : q_len - 1] = sigma_max * ((np.arange(down) + 0.5) / down) ** 3
        s_e = sig_e * dt / (2 * eps_a)
        s_h = sig_h * dt / (2 * eps_a)  # sigma_m dt / (2 mu) with sigma_m = sigma mu / eps
        # eps de/dt = -dh/dxi, mu dh/dt = -de/dxi: a +xi wave has h = e / eta
        self._aux_c = {
            "ca": core.tensor((1 - s_e) / (1 + s_e), dtype=dtype),
            "cb": core.tensor(-dt / (eps_a * self._delta) / (1 + s_e), dtype=dtype),
            "da": core.tensor((1 - s_h) / (1 + s_h), dtype=dtype),
            "db": core.tensor(-dt / (mu_a * self._delta) / (1 + s_h), dtype=dtype),
            "src": core.tensor(np.eye(q_len)[0], dtype=dtype),
        }
        self._q_len = q_len
        # corrections (1)-(2): every component whose curl reads an incident component
        self._fix = {"h": [], "e": []}
        for kind, names in (("h", grid.h_components), ("e", grid.e_components)):
            other = "e" if kind == "h" else "h"
            for name in names:
                m_f = core.tensor(self._inside(grid, name), dtype=dtype)
                coef = coeffs[("db_" if kind == "h" else "cb_") + name]
                for j, k, sign in curl_terms(name, grid):
                    inc = other + AXES[k]
                    if inc not in self._samples:
                        continue  # this term reads a component the plane wave lacks
                    factor = (-1.0 if kind == "h" else 1.0) * sign / grid.spacing[j]
                    m_g = core.tensor(self._inside(grid, inc), dtype=dtype)
                    self._fix[kind].append(
                        (name, inc, j, boundaries.periodic(j), coef, factor, m_f, m_g)
                    )
        return coeffs

    def init_aux(self, grid):
        if self._fix is None:
            raise RuntimeError(f"{self.name}: prepare() was not called (use it in a Simulation)")
        zeros = core.ops.zeros((self._q_len,), dtype=grid.dtype)
        return {"e": zeros, "h": zeros}

    # ---- the loop -------------------------------------------------------------------------
    def _incident(self, name, values):
        """The incident ``name`` on the whole grid from the auxiliary ``values`` (linear
        interpolation; exact on the nodes)."""
        _kind, share, idx, frac = self._samples[name]
        lower = values[idx]
        if self.aligned:
            return lower * share
        return (lower + frac * (values[idx + 1] - lower)) * share

    def _apply(self, state, kind, values, grid):
        diff = diff_forward if kind == "h" else diff_backward
        changes, cache = {}, {}
        for name, inc_name, j, periodic, coef, factor, m_f, m_g in self._fix[kind]:
            if inc_name not in cache:
                cache[inc_name] = self._incident(inc_name, values)
            inc = cache[inc_name]
            delta = m_f * diff(inc, j, periodic) - diff(m_g * inc, j, periodic)
            field = changes.get(name, state.get(name))
            changes[name] = field + coef * (delta * factor)
        return state.replace(**changes)

    def inject_h(self, state, step, grid):
        aux = state.aux[self.name]
        e, h = aux["e"], aux["h"]
        state = self._apply(state, "h", e, grid)
        c = self._aux_c
        h = c["da"] * h + c["db"] * diff_forward(e, 0, False)
        return state.replace(aux={**state.aux, self.name: {"e": e, "h": h}})

    def inject(self, state, step, grid):
        aux = state.aux[self.name]
        e, h = aux["e"], aux["h"]
        state = self._apply(state, "e", h, grid)
        c = self._aux_c
        e = c["ca"] * e + c["cb"] * diff_backward(h, 0, False)
        value = self.amplitude * self.waveform(e_time(step, grid))
        if isinstance(value, core.Tensor) and value.dtype != grid.dtype:
            value = ops.astype(value, grid.dtype)
        e = e * (1.0 - c["src"]) + c["src"] * value  # the hard source
        return state.replace(aux={**state.aux, self.name: {"e": e, "h": h}})


class LineSource(CurrentSource):
    """A z-directed line current ``I(t) = amplitude * waveform(t)`` (A) at ``index`` of a 2D
    TMz grid (``lumped.CurrentSource`` on ``ez``)."""

    def __init__(self, index, waveform, amplitude=1.0, name="line_source"):
        super().__init__("z", index, waveform, amplitude=amplitude, name=name)

    def check(self, grid, boundaries) -> None:
        if grid.ndim != 2 or grid.mode != "TMz":
            raise ValueError(f"{self.name}: a LineSource needs a 2D TMz grid, got {grid!r}")
        super().check(grid, boundaries)
