"""Total-field/scattered-field plane-wave injection and a 2D line source.

``PlaneWave`` splits the grid into a total-field box ``lo .. hi`` (E-node indices per axis,
faces included) and the scattered-field region outside it (Umashankar & Taflove 1982; Taflove &
Hagness, *Computational Electrodynamics*, 3rd ed., ch. 5). A plane wave travelling along
``+axis`` or ``-axis`` (``direction``) with E along ``polarization`` is computed on an auxiliary
1D Yee grid that has the main grid's cell size and time step along the propagation axis, so its
numerical dispersion is exactly the main grid's for that direction (Taflove sec. 5.8: the
matched-dispersion condition is met trivially for grid-aligned incidence). Each update whose
stencil reaches across the TF/SF boundary uses a field of the other region; the correction
replaces that sample ``G[q]`` by ``G[q] + (m_F - m_G[q]) G_inc[q]`` (``m`` = 1 in the total
region): for the curl term ``sign d_j G_k`` of component ``F``,

    delta curl = (sign / d_j) (m_F D_j(G_inc) - D_j(m_G G_inc)),                          (1)

with ``D_j`` the difference the Yee update takes (forward for H, backward for E), and

    H^{n+1/2} -= Db delta curl(E_inc^n),          E^{n+1} += Cb delta curl(H_inc^{n+1/2})   (2)

(Taflove eqs. 5.50-5.57 in a form valid for every face, edge and corner). ``inject_h`` applies
the H half of (2) and advances the auxiliary H, ``inject`` the E half and advances the
auxiliary E; the auxiliary grid is the source's ``aux`` state in the loop.

The auxiliary grid spans the main axis plus margins; its upstream end is a hard source
``E_b = amplitude * waveform(t)`` and its downstream end a graded matched absorber
(``sigma_m = sigma mu0 / eps``), so the incident field is one travelling wave. The incident
wave reaches main-grid node ``i`` (``+x``) ``(i + margin) / v`` after the source.

Requirements: the total-field box lies at least one cell inside the PML-free interior (its
neighbours are updated with plain differences) and the medium on the box's faces is the
background ``eps_r`` the auxiliary grid uses.

``LineSource`` is a z-directed line current ``I(t)`` (A) on a 2D TMz grid
(``lumped.CurrentSource`` on ``ez``): the source of the 2D Green's function
``E_z = -(omega mu0 I / 4) H0^(2)(k rho)``.
"""

from __future__ import annotations

import numpy as np

import core
from core import ops

from .constants import C0, EPS0, ETA0, MU0
from .grid import AXES
from .lumped import CurrentSource
from .sources import Source, e_time
from .yee import curl_terms, diff_backward, diff_forward

__all__ = ["LineSource", "PlaneWave"]

_LEVI = {(0, 1, 2): 1, (1, 2, 0): 1, (2, 0, 1): 1, (0, 2, 1): -1, (2, 1, 0): -1, (1, 0, 2): -1}


def _axis(value, what) -> int:
    if isinstance(value, str):
        if value not in AXES:
            raise ValueError(f"{what} must be 'x', 'y' or 'z', got {value!r}")
        return AXES.index(value)
    return int(value)


class PlaneWave(Source):
    """A TF/SF plane wave along a grid axis.

    Args:
        lo, hi: corner E nodes of the total-field box (``ndim`` ints each, ``lo < hi``).
        waveform: ``w(t)`` (``waveforms``); the incident ``E`` at the source is
            ``amplitude * w(t)`` (V/m).
        direction: ``"+x"``, ``"-x"``, ``"+y"``, ``"-y"`` (``"+z"``/``"-z"`` on 3D grids).
        polarization: the axis of E (perpendicular to the propagation axis; its component
            must be in the grid: ``"z"`` on TMz, ``"x"``/``"y"`` on TEz).
        amplitude: V/m (a number or 0-d Tensor).
        eps_r: background relative permittivity of the auxiliary grid (the medium around the
            box's faces).
        margin: auxiliary cells between the hard source and the main grid's first node.
        absorber: auxiliary absorber cells at the downstream end.
        name: key of the auxiliary state.

    The incident H is ``H_c = s eps_{p b c} E_b / eta`` (``s = +-1`` the direction, ``p`` the
    propagation axis, ``b`` the polarisation) in the continuum; the auxiliary grid gives the
    discrete one.
    """

    def __init__(
        self,
        lo,
        hi,
        waveform,
        direction="+x",
        polarization="z",
        amplitude=1.0,
        eps_r=1.0,
        margin=4,
        absorber=40,
        name="plane_wave",
    ):
        direction = str(direction)
        if len(direction) != 2 or direction[0] not in "+-":
            raise ValueError(f"direction must look like '+x' or '-y', got {direction!r}")
        self.sign = 1 if direction[0] == "+" else -1
        self.axis = _axis(direction[1], "direction axis")
        self.pol = _axis(polarization, "polarization")
        if self.pol == self.axis:
            raise ValueError(
                f"polarization {AXES[self.pol]!r} must be perpendicular to the direction "
                f"{direction!r}"
            )
        self.h_axis = 3 - self.axis - self.pol
        self.e_name = "e" + AXES[self.pol]
        self.h_name = "h" + AXES[self.h_axis]
        self.lo = tuple(int(i) for i in lo)
        self.hi = tuple(int(i) for i in hi)
        self.waveform = waveform
        self.amplitude = amplitude
        self.eps_r = float(eps_r)
        self.margin = int(margin)
        self.absorber = int(absorber)
        self.name = name
        self._fix = None

    # ---- setup ----------------------------------------------------------------------------
    def check(self, grid, boundaries) -> None:
        n = grid.ndim
        if self.axis >= n:
            raise ValueError(f"{self.name}: direction axis {AXES[self.axis]} is not in a {n}D grid")
        if self.e_name not in grid.e_components or self.h_name not in grid.h_components:
            raise ValueError(
                f"{self.name}: a wave along {AXES[self.axis]} polarised along {AXES[self.pol]} "
                f"needs {self.e_name} and {self.h_name}; this grid has {grid.components}"
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

    def prepare(self, coeffs, grid, boundaries):
        d = grid.spacing[self.axis]
        n = grid.shape[self.axis]
        # auxiliary grid: q = 0 .. Q-1, main node i at q = i + lo_pad
        up, down = self.margin, self.absorber
        self._pad = up if self.sign > 0 else down
        q_len = n + up + down
        eps = EPS0 * self.eps_r
        sigma = np.zeros(q_len)
        depth = (np.arange(down) + 1.0) / down
        sigma_max = 0.8 * 4 / (ETA0 / np.sqrt(self.eps_r) * d)  # Taflove eq. 7.67, m = 3
        prof = sigma_max * depth**3
        sigma_h = np.zeros(q_len)
        prof_h = sigma_max * ((np.arange(down) + 0.5) / down) ** 3
        if self.sign > 0:
            sigma[q_len - down :] = prof
            sigma_h[q_len - down - 1 : q_len - 1] = prof_h
            self._src = 0
        else:
            sigma[:down] = prof[::-1]
            sigma_h[:down] = prof_h[::-1]
            self._src = q_len - 1
        dt = grid.dt
        s_e = sigma * dt / (2 * eps)
        s_h = sigma_h * dt / (2 * eps)  # sigma_m dt / (2 mu) with sigma_m = sigma mu / eps
        ce = _LEVI[(self.pol, self.axis, self.h_axis)]  # eps dE_b/dt = ce d_p H_c
        ch = _LEVI[(self.h_axis, self.axis, self.pol)]  # mu dH_c/dt = -ch d_p E_b
        dtype = grid.dtype
        self._aux_c = {
            "ca": core.tensor((1 - s_e) / (1 + s_e), dtype=dtype),
            "cb": core.tensor(ce * dt / (eps * d) / (1 + s_e), dtype=dtype),
            "da": core.tensor((1 - s_h) / (1 + s_h), dtype=dtype),
            "db": core.tensor(-ch * dt / (MU0 * d) / (1 + s_h), dtype=dtype),
            "src": core.tensor(np.eye(q_len)[self._src], dtype=dtype),
        }
        self._q_len = q_len
        # corrections (1)-(2): every component whose curl reads an incident component
        self._fix = {"h": [], "e": []}
        for kind, names, inc in (
            ("h", grid.h_components, self.e_name),
            ("e", grid.e_components, self.h_name),
        ):
            m_g = self._inside(grid, inc)
            for name in names:
                m_f = self._inside(grid, name)
                coef = coeffs[("db_" if kind == "h" else "cb_") + name]
                for j, k, sign in curl_terms(name, grid):
                    if ("e" if kind == "h" else "h") + AXES[k] != inc:
                        continue  # this term reads a component the plane wave lacks
                    factor = (-1.0 if kind == "h" else 1.0) * sign / grid.spacing[j]
                    self._fix[kind].append(
                        (
                            name,
                            j,
                            boundaries.periodic(j),
                            coef,
                            factor,
                            core.tensor(m_f, dtype=dtype),
                            core.tensor(m_g, dtype=dtype),
                        )
                    )
        return coeffs

    def init_aux(self, grid):
        zeros = core.ops.zeros((self._q_len,), dtype=grid.dtype) if self._fix else None
        if zeros is None:
            raise RuntimeError(f"{self.name}: prepare() was not called (use it in a Simulation)")
        return {"e": zeros, "h": zeros}

    # ---- the loop -------------------------------------------------------------------------
    def _incident(self, values, grid):
        """The auxiliary values on the main axis, broadcast to a full ``grid.shape`` map."""
        n = grid.shape[self.axis]
        line = values[self._pad : self._pad + n]
        shape = [1] * grid.ndim
        shape[self.axis] = n
        return line.reshape(tuple(shape)) * core.ops.ones(grid.shape, dtype=grid.dtype)

    def _apply(self, state, kind, inc, grid):
        diff = diff_forward if kind == "h" else diff_backward
        changes = {}
        for name, j, periodic, coef, factor, m_f, m_g in self._fix[kind]:
            delta = m_f * diff(inc, j, periodic) - diff(m_g * inc, j, periodic)
            field = changes.get(name, state.get(name))
            changes[name] = field + coef * (delta * factor)
        return state.replace(**changes)

    def inject_h(self, state, step, grid):
        aux = state.aux[self.name]
        e, h = aux["e"], aux["h"]
        state = self._apply(state, "h", self._incident(e, grid), grid)
        c = self._aux_c
        h = c["da"] * h + c["db"] * diff_forward(e, 0, False)
        return state.replace(aux={**state.aux, self.name: {"e": e, "h": h}})

    def inject(self, state, step, grid):
        aux = state.aux[self.name]
        e, h = aux["e"], aux["h"]
        state = self._apply(state, "e", self._incident(h, grid), grid)
        c = self._aux_c
        e = c["ca"] * e + c["cb"] * diff_backward(h, 0, False)
        value = self.amplitude * self.waveform(e_time(step, grid))
        if isinstance(value, core.Tensor) and value.dtype != grid.dtype:
            value = ops.astype(value, grid.dtype)
        e = e * (1.0 - c["src"]) + c["src"] * value  # the hard source
        return state.replace(aux={**state.aux, self.name: {"e": e, "h": h}})

    def incident_delay(self, grid, index: int) -> float:
        """Travel time (s) of the continuum wave from the hard source to main node ``index``
        along the propagation axis (for comparisons; the grid's phase velocity differs by
        its dispersion)."""
        q = index + self._pad
        return abs(q - self._src) * grid.spacing[self.axis] * np.sqrt(self.eps_r) / C0


class LineSource(CurrentSource):
    """A z-directed line current ``I(t) = amplitude * waveform(t)`` (A) at ``index`` of a 2D
    TMz grid (``lumped.CurrentSource`` on ``ez``)."""

    def __init__(self, index, waveform, amplitude=1.0, name="line_source"):
        super().__init__("z", index, waveform, amplitude=amplitude, name=name)

    def check(self, grid, boundaries) -> None:
        if grid.ndim != 2 or grid.mode != "TMz":
            raise ValueError(f"{self.name}: a LineSource needs a 2D TMz grid, got {grid!r}")
        super().check(grid, boundaries)
