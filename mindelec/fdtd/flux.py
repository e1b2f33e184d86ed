"""Poynting flux through a closed box: frequency-domain power and time-domain energy flux.

The box's faces lie on E nodes: along each axis ``a`` the box spans nodes ``lo[a]`` to
``hi[a]`` (``x = lo[a] d_a .. hi[a] d_a``). On the face normal to ``a`` the outward normal
component of the Poynting vector ``S = E x H`` is, with ``(a, b, c)`` cyclic,

    S_a = E_b H_c - E_c H_b                                                               (1)

(Taflove & Hagness, *Computational Electrodynamics*, 3rd ed., sec. 5.10 and 8.x; the same
co-location as MEEP's flux planes). On the Yee grid ``E_b`` on the face and ``H_c`` averaged
over the two samples half a cell before and after the face (``[node - 1]`` and ``[node]`` along
``a``) sit at the same transverse points ``(b + 1/2, c)``, so every product in (1) is formed
without transverse interpolation; the face integral is the sum over those points with weight
``d_b`` along the staggered axis and the trapezoid rule (half weight at the two end nodes) along
the other. On a 2D grid the missing axis ``z`` has weight 1: the flux is per metre of ``z``; on
a 1D grid the faces are points and the flux is a density (W/m^2).

``FluxMonitor(lo, hi, freqs)`` keeps the running DFT (``dft``) of every sample (E at
``(n + 1) dt``, H at ``(n + 1/2) dt``) and reports

    P(f) = 1/2 Re sum_faces sum_points (E(f) x H(f)^*) . n  w,                             (2)

the time-averaged power for phasors (W; W/m in 2D). With running-DFT spectra in place of
phasors ``P`` is a spectral quantity (W s^2): compare it with other quantities built from the
same DFTs (a dipole's ``|I(f)|^2``), or divide by ``|DFT of the source waveform|^2``.

``FluxMonitor(lo, hi)`` (no frequencies) reports the instantaneous outward flux at
``t = (n + 1/2) dt``, ``P^{n+1/2} = sum (E^{n+1/2} x H^{n+1/2}) . n w`` with
``E^{n+1/2} = (E^n + E^{n+1}) / 2`` (the carry keeps the previous E on the faces): ``sum P dt``
is the energy that left the box (J; J/m in 2D).
"""

from __future__ import annotations

import numpy as np

from diffsci import core
from diffsci.core import ops

from .dft import _as_freqs, dft_init, dft_update, dft_value
from .grid import AXES
from .monitors import Monitor

__all__ = ["FluxMonitor", "dipole_power", "line_source_power"]


def _terms(grid):
    """``(a, e_name, h_name, sign)`` of (1) present in the grid, for every normal axis ``a``."""
    out = []
    for a in range(grid.ndim):
        b, c = (a + 1) % 3, (a + 2) % 3
        for e_ax, h_ax, sign in ((b, c, 1.0), (c, b, -1.0)):
            e, h = "e" + AXES[e_ax], "h" + AXES[h_ax]
            if e in grid.e_components and h in grid.h_components:
                out.append((a, e, h, sign))
    return out


class FluxMonitor(Monitor):
    """Outward Poynting flux through the box ``lo .. hi`` (E-node indices per axis).

    Args:
        lo, hi: the box's corner nodes (``ndim`` ints each, ``lo < hi``); every face needs
            the H samples on both sides, so ``1 <= lo`` and ``hi <= n - 1``, outside any PML.
        freqs: frequencies (Hz) for (2); None for the time-domain flux.
        name: key of the result: ``[nf]`` float64 Tensor (W, see the module doc) for
            frequencies, else ``[steps]`` (W) at ``t = (step + 1/2) dt``.
        faces: which faces count, a subset of ``("x-", "x+", "y-", "y+", "z-", "z+")``
            (default all the grid has: a closed box).
    """

    def __init__(self, lo, hi, freqs=None, name="flux", faces=None):
        self.lo = tuple(int(i) for i in lo)
        self.hi = tuple(int(i) for i in hi)
        self.freqs = None if freqs is None else _as_freqs(freqs)
        self.name = name
        self.faces = None if faces is None else tuple(faces)

    # ---- geometry -------------------------------------------------------------------------
    def check(self, grid, boundaries) -> None:
        n = grid.ndim
        if len(self.lo) != n or len(self.hi) != n:
            raise ValueError(f"{self.name}: lo {self.lo} and hi {self.hi} need {n} entries")
        if any(h <= lo for lo, h in zip(self.lo, self.hi)):
            raise ValueError(f"{self.name}: the box needs lo < hi, got {self.lo}, {self.hi}")
        for a in range(n):
            if self.lo[a] < 1 or self.hi[a] > grid.shape[a] - 1:
                raise ValueError(
                    f"{self.name}: box {self.lo}..{self.hi} must have 1 <= lo and hi <= n - 1 "
                    f"along {AXES[a]} (n = {grid.shape[a]}): its faces read H on both sides"
                )
        for corner in (tuple(i - 1 for i in self.lo), self.hi):
            grid.check_index(corner, what=f"{self.name} box", pml=boundaries.pml)
        allowed = [f"{AXES[a]}{s}" for a in range(n) for s in "-+"]
        if self.faces is not None and not set(self.faces) <= set(allowed):
            raise ValueError(f"{self.name}: faces must be among {allowed}, got {self.faces}")
        self._grid = grid
        self._plan = self._make_plan(grid)

    def _make_plan(self, grid):
        """Per face term: (E index, H index low/high, outward sign, weights [*face shape])."""
        plan = []
        for a, e, h, sign in _terms(grid):
            for side, node in (("-", self.lo[a]), ("+", self.hi[a])):
                if self.faces is not None and f"{AXES[a]}{side}" not in self.faces:
                    continue
                index, weights = [], []
                for ax in range(grid.ndim):
                    if ax == a:
                        index.append(node)
                        continue
                    d = grid.spacing[ax]
                    if grid.staggered(e)[ax] == 0.5:  # samples at j + 1/2, j = lo .. hi - 1
                        index.append(slice(self.lo[ax], self.hi[ax]))
                        w = np.full(self.hi[ax] - self.lo[ax], d)
                    else:  # nodes lo .. hi: trapezoid rule
                        index.append(slice(self.lo[ax], self.hi[ax] + 1))
                        w = np.full(self.hi[ax] - self.lo[ax] + 1, d)
                        w[0] = w[-1] = 0.5 * d
                    weights.append(w)
                h_lo = list(index)
                h_lo[a] = node - 1
                weight = np.array(1.0)  # 1D: the faces are points (flux in W/m^2)
                for w in weights:
                    weight = np.multiply.outer(weight, w)
                outward = sign * (1.0 if side == "+" else -1.0)
                plan.append((e, h, tuple(index), tuple(h_lo), outward * weight))
        return plan

    def _samples(self, state):
        """``[(E samples, H samples averaged across the face)]``, one pair per plan entry."""
        out = []
        for e, h, index, h_lo, _w in self._plan:
            hf = state.get(h)
            out.append((state.get(e)[index], (hf[index] + hf[h_lo]) * 0.5))
        return out

    # ---- the loop -------------------------------------------------------------------------
    def init_carry(self, grid, state):
        samples = self._samples(state)
        if self.freqs is None:
            return [e for e, _h in samples]
        nf = self.freqs.shape[0]
        return [
            (dft_init(nf, tuple(e.shape), core.float64), dft_init(nf, tuple(h.shape), core.float64))
            for e, h in samples
        ]

    def update(self, carry, state, step):
        samples = self._samples(state)
        dt = self._grid.dt
        if self.freqs is None:
            power = None
            for (e_prev, (e, h)), (*_, w) in zip(zip(carry, samples), self._plan):
                term = ((e_prev + e) * 0.5 * h * core.tensor(w, dtype=e.dtype)).sum()
                power = term if power is None else power + term
            return [e for e, _h in samples], power
        if isinstance(step, core.Tensor):
            n = ops.astype(step, core.float64)
        else:
            n = float(step)
        t_e, t_h = (n + 1.0) * dt, (n + 0.5) * dt
        new = []
        for (de, dh), (e, h) in zip(carry, samples):
            e64 = ops.astype(e, core.float64) if e.dtype != core.float64 else e
            h64 = ops.astype(h, core.float64) if h.dtype != core.float64 else h
            new.append(
                (dft_update(de, e64, t_e, self.freqs, dt), dft_update(dh, h64, t_h, self.freqs, dt))
            )
        return new, None

    def finalize(self, carry, values):
        if self.freqs is None:
            return values
        power = None
        for (de, dh), (*_, w) in zip(carry, self._plan):
            wt = core.tensor(w, dtype=core.float64)
            # Re(E H^*) = Re E Re H + Im E Im H
            term = ((de.re * dh.re + de.im * dh.im) * wt).reshape((de.re.shape[0], -1)).sum(axis=1)
            power = term if power is None else power + term
        return power * 0.5

    def spectra(self, carry):
        """The complex E and H spectra of every face term (for inspection): a list of pairs."""
        return [(dft_value(de), dft_value(dh)) for de, dh in carry]


def dipole_power(freqs, current_moment, eps_r: float = 1.0):
    """Power radiated by a Hertzian dipole of moment ``I l`` (A m, phasor amplitude) in a
    homogeneous medium: ``P = eta (k |I l|)^2 / (12 pi)`` (W; Balanis, *Antenna Theory*, eq.
    4-16), ``k = 2 pi f sqrt(eps_r) / c0``, ``eta = eta0 / sqrt(eps_r)``."""
    from .constants import C0, ETA0

    f = np.asarray(freqs, dtype=np.float64)
    k = 2 * np.pi * f * np.sqrt(eps_r) / C0
    return ETA0 / np.sqrt(eps_r) * (k * np.abs(current_moment)) ** 2 / (12 * np.pi)


def line_source_power(freqs, current, eps_r: float = 1.0):
    """Power per metre radiated by an infinite line current ``I`` (A, phasor amplitude):
    ``P' = eta k |I|^2 / 8`` (W/m; from ``E_z = -(omega mu I / 4) H0^(2)(k rho)`` and the far
    field of the Hankel function), ``k``, ``eta`` as in ``dipole_power``."""
    from .constants import C0, ETA0

    f = np.asarray(freqs, dtype=np.float64)
    k = 2 * np.pi * f * np.sqrt(eps_r) / C0
    return ETA0 / np.sqrt(eps_r) * k * np.abs(current) ** 2 / 8.0
