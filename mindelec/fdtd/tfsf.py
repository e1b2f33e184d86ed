"""Total-field/scattered-field plane-wave injection and a 2D line source.

``PlaneWave`` splits the grid into a total-field box ``lo .. hi`` (E-node indices per axis,
faces included) and the scattered-field region outside it (Umashankar & Taflove 1982; Taflove &
Hagness, *Computational Electrodynamics*, 3rd ed., ch. 5). The incident wave comes from:

- grid-aligned incidence (``direction="+x"`` ...): an auxiliary 1D Yee grid along the axis
  with the main grid's cell and time step; every main sample sits on an auxiliary node, so the
  incident field solves the main grid's own equations (its dispersion is matched exactly) and
  nothing leaks into the scattered-field region but round-off;
- oblique incidence (an angle or a vector, 2D or 3D), ``method="array"`` (the default for a
  waveform that decays): an incident-field array. The corrections (1)-(2) below are
  precomputed for every step at the cells next to the box's faces from a sum of the main
  grid's own discrete plane waves (one per FFT frequency of the waveform, wavenumber from the
  Yee dispersion relation along the direction, E perpendicular to the discrete wave vector and
  H from the discrete Faraday law; Taflove & Hagness sec. 4.6): E and H are both exact
  solutions of the main grid's equations, so the leakage is round-off (measured 1e-11 of the
  incident wave at 30, 45 and 60 degrees in TMz and TEz). Memory: (cells next to the faces)
  x (steps until the wave has left the box), and the waveform is sampled once (gradients
  reach ``amplitude``, not the waveform's parameters);
- oblique incidence with ``method="auxiliary"`` (and the fallback for a waveform that does
  not decay, a CW): an auxiliary 1D grid whose samples are interpolated linearly and whose
  medium is tuned so that its phase velocity equals the main grid's numerical phase velocity
  along the direction at ``f_match`` (Taflove & Hagness sec. 5.9 "matched numerical
  dispersion"; ``matched_wavenumber``); what leaks is the interpolation error, 2e-4 .. 2e-3
  of the incident wave at 20 cells per wavelength.

Each update whose
stencil reaches across the TF/SF boundary uses a field of the other region; the correction
replaces that sample ``G[q]`` by ``G[q] + (m_F - m_G[q]) G_inc[q]`` (``m`` = 1 in the total
region): for the curl term ``sign d_j G_k`` of component ``F``,

    delta curl = (sign / d_j) (m_F D_j(G_inc) - D_j(m_G G_inc)),                          (1)

with ``D_j`` the difference the Yee update takes (forward for H, backward for E), and

    H^{n+1/2} -= Db delta curl(E_inc^n),          E^{n+1} += Cb delta curl(H_inc^{n+1/2})   (2)

(Taflove eqs. 5.50-5.57 in a form valid for every face, edge and corner). ``inject_h`` applies
the H half of (2) and advances the auxiliary H, ``inject`` the E half and advances the
auxiliary E; the auxiliary grid is the source's ``aux`` state in the loop (the array method
reads row ``step`` of its tables instead).

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
import warnings

import numpy as np

from diffsci import core
from diffsci.core import ops

from .constants import C0, EPS0, ETA0, MU0
from .grid import AXES
from .lumped import CurrentSource
from .sources import Source, e_time
from .waveforms import ResolutionWarning
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
        method: oblique incidence only: ``"array"`` (incident-field array, exact),
            ``"auxiliary"`` (interpolated, matched 1D grid) or ``"auto"`` (``"array"`` when the
            waveform decays within 2^17 steps or ``steps`` is given, else ``"auxiliary"``).
        steps: length of the array method's tables (default: until the wave has left the
            box); after it the incident field is taken as zero (the source is switched off
            smoothly there). Give it for a CW to use the array over a run of that length.
        max_bytes: memory budget of the array method's tables (cells next to the box's faces
            x steps); over it ``"auto"`` falls back to ``"auxiliary"`` with a warning and
            ``"array"`` raises.

    ``prepare`` keeps the auxiliary grid and the boundary masks on the instance: give each
    ``Simulation`` its own ``PlaneWave``.

    The incident fields are ``E = e(xi) p`` and ``H = h(xi) (k x p)`` with ``xi`` the distance
    along ``k`` (auxiliary cells) and ``e``, ``h`` the auxiliary grid's (``h = e / eta`` in the
    continuum). Grid-aligned: the auxiliary cell is the grid's along the axis, every sample
    sits on an auxiliary node and the incident field solves the main grid's own equations, so
    nothing leaks (round-off). Oblique, ``method="array"``: the incident-field array of the
    module docstring (leakage at round-off). Oblique, ``method="auxiliary"`` (Taflove &
    Hagness sec. 5.9): the auxiliary cell is ``min(d)``, samples are interpolated linearly
    between auxiliary nodes, and the auxiliary medium (``eps`` and ``mu`` scaled together,
    impedance kept) is chosen so that its phase velocity at ``f_match`` equals the main grid's
    along ``k`` (``matched_wavenumber``); the leakage is then the interpolation error, a few
    1e-3 of the incident wave at 20 cells per wavelength.
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
        method="auto",
        steps=None,
        max_bytes=1 << 28,
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
        if method not in ("auto", "auxiliary", "array"):
            raise ValueError(
                f"{name}: method must be 'auto', 'auxiliary' or 'array', got {method!r}"
            )
        self.method = method
        self.steps = None if steps is None else int(steps)
        self.max_bytes = int(max_bytes)
        self._fix = None
        self._array = None
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
        self._array = None
        if not self.aligned and self.method != "auxiliary":
            self._array = self._incident_field_array(grid, coeffs, boundaries)
        return coeffs

    # ---- the incident-field array (oblique incidence) --------------------------------------
    def _table_length(self, grid, transit: float):
        """Steps after which the incident wave has left the box: the waveform's last sample
        above 1e-13 of its peak (searched over 2^17 steps) plus 1.5 transits and 200 steps;
        None when the waveform does not decay there (a CW)."""
        if self.steps is not None:
            return self.steps
        search = 1 << 17
        w = np.abs(np.asarray(self.waveform.sample(grid.dt, search), dtype=np.float64))
        above = np.flatnonzero(w > 1e-13 * w.max())
        if above.size == 0 or above[-1] > search - 200:
            return None
        return int(above[-1]) + int(1.5 * transit / (C0 / math.sqrt(self.eps_r) * grid.dt)) + 200

    def _incident_field_array(self, grid, coeffs, boundaries):
        """Precompute every TF/SF correction of eq. (1) for all steps (``None``: fall back to
        the auxiliary grid when the waveform does not decay and ``method="auto"``).

        The incident wave is a sum of the Yee grid's own discrete plane waves (Taflove & Hagness
        sec. 4.6): at each FFT frequency ``omega``, ``E = e(omega) p_w exp(j (omega t - K . r))``
        with ``|K|`` along ``k_hat`` solving the discrete dispersion relation
        ``|Kt|^2 = eps mu0 W^2`` (``Kt_a = (2/d_a) sin(K_a d_a/2)``, ``W = (2/dt) sin(omega
        dt/2)``), ``p_w`` the polarization made perpendicular to ``Kt`` (discrete Gauss law)
        and ``H = Kt x E / (mu0 W)`` (discrete Faraday law). Each term solves the main grid's
        update equations exactly, so E and H are consistent on both sides of the interface
        and the leakage is only the FFT's truncation (round-off for a decaying waveform).
        ``e(omega)`` is the spectrum of ``waveform`` sampled at ``n dt``, taken as the
        incident E along ``p`` at ``margin`` cells upstream of the box's first sample.
        """
        dt, ndim = grid.dt, grid.ndim
        entries = {"h": [], "e": []}
        self._coef = {"h": {}, "e": {}}
        for kind, names in (("h", grid.h_components), ("e", grid.e_components)):
            s = 1 if kind == "h" else -1  # forward (H update) / backward (E update) difference
            # every term, also of components whose continuum share is zero: the discrete wave
            # vector is not quite along k_hat, so E (made perpendicular to it) and H gain
            # O((k d)^2) components off the continuum polarization
            terms = [(name, j, k, sign) for name in names for j, k, sign in curl_terms(name, grid)]
            for name, j, k, sign in terms:
                self._coef[kind][name] = coeffs[("db_" if kind == "h" else "cb_") + name]
                inc = ("e" if kind == "h" else "h") + AXES[k]
                factor = (-1.0 if kind == "h" else 1.0) * sign / grid.spacing[j]
                periodic = boundaries.periodic(j)
                m_f = self._inside(grid, name)
                m_g = self._inside(grid, inc)
                if periodic:
                    m_g_s = np.roll(m_g, -s, axis=j)  # m_g[i + s]
                else:
                    pad = [(0, 0)] * ndim
                    pad[j] = (0, 1) if s > 0 else (1, 0)
                    sl = [slice(None)] * ndim
                    sl[j] = slice(1, None) if s > 0 else slice(0, -1)
                    m_g_s = np.pad(m_g[tuple(sl)], pad)
                # m_f D G - D (m_g G) = s ((m_f - m_g[i+s]) G[i+s] - (m_f - m_g) G[i])
                c0, c1 = m_f - m_g, m_f - m_g_s
                cells = np.flatnonzero((c0 != 0) | (c1 != 0))
                idx = np.unravel_index(cells, grid.shape)
                nb = list(idx)
                nb[j] = nb[j] + s  # unwrapped: only the positions matter
                xi0 = self._xi_of(grid, inc, idx)
                xi1 = self._xi_of(grid, inc, tuple(nb))
                entries[kind].append(
                    (
                        name,
                        inc,
                        cells,
                        c1.ravel()[cells] * s * factor,
                        c0.ravel()[cells] * s * factor,
                        xi1,
                        xi0,
                    )
                )
        xis = [x for es in entries.values() for e in es for x in e[5:]]
        lowest = min(float(x.min()) for x in xis)
        highest = max(float(x.max()) for x in xis)
        self._xi_ref = lowest - self.margin * min(grid.spacing)
        length = self._table_length(grid, highest - self._xi_ref)
        if length is None:
            if self.method == "array":
                raise ValueError(
                    f"{self.name}: method='array' needs a waveform that decays (or steps=...); "
                    "use method='auxiliary' for a continuous wave"
                )
            return None
        cells = sum(
            np.unique(np.concatenate([e[2] for e in es if e[0] == name])).size
            for es in entries.values()
            for name in {e[0] for e in es}
        )
        size = cells * (length + 1) * np.dtype(grid.dtype).itemsize
        if size > self.max_bytes:
            message = (
                f"{self.name}: the incident-field array needs {size / 2**20:.0f} MiB "
                f"({cells} cells x {length + 1} steps), over max_bytes = "
                f"{self.max_bytes / 2**20:.0f} MiB"
            )
            if self.method == "array":
                raise ValueError(message + "; raise max_bytes or use method='auxiliary'")
            warnings.warn(
                message + "; falling back to the auxiliary grid (leakage ~1e-3)", stacklevel=3
            )
            return None
        spectrum = self._discrete_spectrum(grid, length)
        tables = {"h": {}, "e": {}}
        for kind in ("h", "e"):
            tau = 0.0 if kind == "h" else 0.5 * dt  # E_inc^n for H, H_inc^{n+1/2} for E
            per_name = {}
            for name, inc, cells, w1, w0, xi1, xi0 in entries[kind]:
                g1 = self._series(spectrum, inc, xi1 - self._xi_ref, tau, length)
                g0 = self._series(spectrum, inc, xi0 - self._xi_ref, tau, length)
                per_name.setdefault(name, []).append((cells, w1 * g1 - w0 * g0))
            for name, parts in per_name.items():
                cols = np.unique(np.concatenate([c for c, _ in parts]))
                table = np.zeros((length + 1, cols.size))  # the last row: after the wave
                for cells, values in parts:
                    np.add.at(table, (slice(None, length), np.searchsorted(cols, cells)), values)
                tables[kind][name] = (
                    np.unravel_index(cols, grid.shape),
                    core.tensor(table, dtype=grid.dtype),
                )
        self._array_length = length
        return tables

    def _xi_of(self, grid, component, index) -> np.ndarray:
        """Distance (m) along ``k_hat`` of ``component``'s samples at integer ``index``."""
        off = grid.staggered(component)
        xi = 0.0
        for a in range(grid.ndim):
            if self.k_hat[a] != 0.0:
                xi = xi + self.k_hat[a] * (np.asarray(index[a]) + off[a]) * grid.spacing[a]
        return np.asarray(xi, dtype=np.float64) * np.ones(np.shape(index[0]))

    def _discrete_spectrum(self, grid, length):
        """FFT of the waveform and, per frequency, the grid's wavenumber along ``k_hat`` and
        the E and H vectors of its discrete plane wave (see ``_incident_field_array``)."""
        dt, ndim = grid.dt, grid.ndim
        size = 1 << math.ceil(math.log2(2 * length + 256))
        w = np.asarray(self.waveform.sample(dt, size), dtype=np.float64)
        # after the table the source is switched off smoothly (a Gaussian over 16 steps: no
        # content near the grid's cutoff), so a CW given ``steps`` does not wrap around
        after = np.arange(size - length, dtype=np.float64)
        w[length:] *= np.where(after < 128, np.exp(-((after / 16.0) ** 2)), 0.0)
        spec = np.fft.rfft(w)
        omega = 2 * math.pi * np.fft.rfftfreq(size, dt)
        keep = np.abs(spec) > 1e-14 * np.abs(spec).max()
        eps = EPS0 * self.eps_r
        c = 1.0 / math.sqrt(eps * MU0)
        rhs = (np.sin(omega * dt / 2) / (c * dt)) ** 2
        kd = [(self.k_hat[a], grid.spacing[a]) for a in range(ndim) if self.k_hat[a] != 0.0]

        def lhs(k):
            return sum((np.sin(k * ka * d / 2) / d) ** 2 for ka, d in kd)

        k_cap = math.pi / max(abs(ka) * d for ka, d in kd)
        beyond = rhs > lhs(np.array(k_cap)) * (1 - 1e-12)
        if np.any(keep & beyond):
            worst = np.abs(spec[keep & beyond]).max() / np.abs(spec).max()
            if worst > 1e-5:  # below: a sampled start or ramp; leaks at that level at most
                warnings.warn(
                    f"{self.name}: the waveform has content ({worst:.2g} of its peak) above "
                    f"the grid's cutoff along the direction "
                    f"({omega[keep & beyond].min() / (2 * math.pi):.4g} Hz), which no grid "
                    "wave carries; it is left out of the incident field (use a smoother "
                    "waveform or a finer grid)",
                    ResolutionWarning,
                    stacklevel=4,
                )
        keep &= ~beyond
        lo, hi = np.zeros_like(omega), np.full_like(omega, k_cap)
        for _ in range(60):  # bisection: lhs is increasing on [0, k_cap]
            mid = 0.5 * (lo + hi)
            low = lhs(mid) < rhs
            lo, hi = np.where(low, mid, lo), np.where(low, hi, mid)
        k = 0.5 * (lo + hi)
        for _ in range(3):  # Newton polish
            der = sum(ka * np.sin(k * ka * d) / (2 * d) for ka, d in kd)
            ok = der > 0
            k = np.where(ok, k - (lhs(k) - rhs) / np.where(ok, der, 1.0), k)
        kt = np.zeros((omega.size, 3))
        for a in range(ndim):
            kt[:, a] = 2 / grid.spacing[a] * np.sin(k * self.k_hat[a] * grid.spacing[a] / 2)
        w_t = 2 / dt * np.sin(omega * dt / 2)
        norm = np.linalg.norm(kt, axis=1, keepdims=True)
        k_unit = np.where(norm > 0, kt / np.where(norm > 0, norm, 1.0), self.k_hat)
        p_w = self.p_hat - (k_unit @ self.p_hat)[:, None] * k_unit
        e_vec = p_w / (p_w @ self.p_hat)[:, None]
        h_vec = np.cross(kt, e_vec) / (MU0 * np.where(w_t > 0, w_t, 1.0))[:, None]
        h_vec[w_t == 0] = math.sqrt(eps / MU0) * np.cross(self.k_hat, self.p_hat)
        spec = np.where(keep, spec, 0.0)
        return {"size": size, "spec": spec, "omega": omega, "k": k, "e": e_vec, "h": h_vec}

    def _series(self, spectrum, component, dist, tau, length):
        """Incident ``component`` at distances ``dist`` (m, downstream of the reference) and
        times ``n dt + tau``, ``n < length``: ``[length, len(dist)]``."""
        vec = spectrum["e" if component[0] == "e" else "h"][:, AXES.index(component[1])]
        base = spectrum["spec"] * vec * np.exp(1j * spectrum["omega"] * tau)
        out = np.empty((length, dist.size))
        for at in range(0, dist.size, 256):
            d = dist[at : at + 256]
            spec = base[None, :] * np.exp(-1j * np.outer(d, spectrum["k"]))
            out[:, at : at + 256] = np.fft.irfft(spec, n=spectrum["size"], axis=1)[:, :length].T
        return out

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

    def _apply_array(self, state, kind, step, grid):
        """Add the precomputed corrections of step ``step`` (zero after the table)."""
        row = (
            ops.minimum(step, self._array_length)
            if isinstance(step, core.Tensor)
            else min(int(step), self._array_length)
        )
        amplitude = self.amplitude
        if isinstance(amplitude, core.Tensor) and amplitude.dtype != grid.dtype:
            amplitude = ops.astype(amplitude, grid.dtype)
        changes = {}
        for name, (idx, table) in self._array[kind].items():
            coef = self._coef[kind][name]
            if isinstance(coef, core.Tensor) and coef.ndim > 0:
                coef = coef[idx]
            values = table[row] * coef
            if not (isinstance(amplitude, float) and amplitude == 1.0):
                values = values * amplitude
            changes[name] = ops.index_add(state.get(name), idx, values)
        return state.replace(**changes)

    def inject_h(self, state, step, grid):
        if self._array is not None:
            return self._apply_array(state, "h", step, grid)
        aux = state.aux[self.name]
        e, h = aux["e"], aux["h"]
        state = self._apply(state, "h", e, grid)
        c = self._aux_c
        h = c["da"] * h + c["db"] * diff_forward(e, 0, False)
        return state.replace(aux={**state.aux, self.name: {"e": e, "h": h}})

    def inject(self, state, step, grid):
        if self._array is not None:
            return self._apply_array(state, "e", step, grid)
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
