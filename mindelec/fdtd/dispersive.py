"""Drude and Lorentz media by auxiliary differential equations (ADE).

The medium's permittivity is ``eps_inf`` (``Materials.eps_r``) plus a sum of poles, each with
its own polarization current ``J_p`` carried per E component in the state (Taflove &
Hagness, *Computational Electrodynamics*, 3rd ed., ch. 9, the auxiliary differential
equation method). Ampere's law, centred at
``t = (n + 1/2) dt``, becomes

    eps0 eps_inf (E^{n+1} - E^n) / dt + sigma (E^{n+1} + E^n) / 2 + sum_p J_p^{n+1/2}
        = curl H^{n+1/2}.                                                                  (1)

Drude pole ``(omega_p, gamma)``, ``chi(omega) = -omega_p^2 / (omega^2 - j omega gamma)``
(``exp(+j omega t)`` convention): ``dJ/dt + gamma J = eps0 omega_p^2 E``, with ``J`` at integer
steps, centred at ``n + 1/2`` (the ADE Drude update of Taflove & Hagness ch. 9):

    J^{n+1} = k J^n + beta (E^{n+1} + E^n),   k = (1 - gamma dt/2) / (1 + gamma dt/2),
    beta = (eps0 omega_p^2 dt / 2) / (1 + gamma dt/2),
    J^{n+1/2} = (J^{n+1} + J^n) / 2 = ((1 + k) J^n + beta (E^{n+1} + E^n)) / 2.

The ``beta`` term of ``J^{n+1/2}`` is a conductivity ``beta`` (S/m) in (1): it goes into the
update coefficients ``Ca``, ``Cb`` (``sigma_extra``), and the E update gains
``- Cb (1 + k) J^n / 2`` (semi-implicit: no extra stability limit). The leapfrog energy
(``monitors.yee_energy``) plus the carriers' ``sum |J^n|^2 / (2 eps0 omega_p^2) dV`` is
conserved exactly without collisions and decreases by ``gamma dt^2 sum |J^{n+1/2}|^2 /
(eps0 omega_p^2) dV`` per step with them (tested to 1e-13).

Lorentz pole ``(delta_eps, omega_0, delta)``,
``chi(omega) = delta_eps omega_0^2 / (omega_0^2 + 2 j omega delta - omega^2)``: the
polarization ``P`` (``J = dP/dt``) obeys ``P'' + 2 delta P' + omega_0^2 P = eps0 delta_eps
omega_0^2 E``, centred at step ``n`` with the field averaged over ``n +- 1`` (the semi-implicit
choice of the Lorentz ADE in Taflove & Hagness ch. 9, written here for ``P``):

    P^{n+1} = A^n + g E^{n+1},   g = eps0 delta_eps omega_0^2 dt^2 / (2 (1 + delta dt)),
    A^n = ((2 - omega_0^2 dt^2) P^n + (delta dt - 1) P^{n-1}) / (1 + delta dt) + g E^{n-1},
    J^{n+1/2} = (P^{n+1} - P^n) / dt.

The ``g E^{n+1} / dt`` part of ``J^{n+1/2}`` is a permittivity ``g / eps0`` added to
``eps_inf`` in ``Ca``, ``Cb`` (``eps_extra``), and the E update gains
``- Cb (A^n + g E^n - P^n) / dt`` (the ``g E^n`` restores ``Ca``'s true ``eps_inf``). Unlike
the explicit form (``E^n`` on the right, as in Meep), which lowers the effective permittivity
near the Nyquist frequency by ``delta_eps (omega_0 dt)^2 / 4`` and so the Courant limit, this
one keeps the grid's limit (the tests run at 0.99 of it).

Discrete permittivity (what the scheme realises at a real frequency ``omega``; used by the
tests against the analytic Fresnel coefficient): with ``W = (2/dt) sin(omega dt/2)``,
``T = (2/dt) tan(omega dt/2)`` and ``S = sin(omega dt) / dt``,

    eps_d = eps_inf + sigma / (j eps0 T) - sum_Drude omega_p^2 / (T^2 - j gamma T)
            + sum_Lorentz delta_eps omega_0^2 cos(omega dt) / (omega_0^2 - W^2 + 2 j delta S),  (2)

which tends to the continuum ``eps(omega)`` as ``omega dt -> 0`` (``discrete_permittivity``).

Per-cell maps: every pole parameter and a material's ``region`` is a number or a map of the
grid's shape (numpy array or core Tensor; Tensors carry gradients through the coefficients).
A pole acts where ``region * strength`` is nonzero (``strength`` = ``omega_p^2`` or
``delta_eps``); map entry ``[i, j, k]`` is seen by every E component stored at ``[i, j, k]``
(the ``Materials`` convention).
"""

from __future__ import annotations

import numpy as np

from diffsci import core
from diffsci.core import ops

from .constants import EPS0

__all__ = [
    "DispersiveMaterial",
    "DrudePole",
    "LorentzPole",
    "discrete_permittivity",
]

AUX_KEY = "dispersive"


def _as_value(value, grid, what):
    """A float, or a Tensor of ``grid.dtype`` of shape ``()`` or ``grid.shape``."""
    if isinstance(value, (int, float, np.floating, np.integer)):
        return float(value)
    if not isinstance(value, core.Tensor):
        value = core.tensor(np.asarray(value, dtype=np.float64), dtype=grid.dtype)
    if tuple(value.shape) not in ((), grid.shape):
        raise ValueError(
            f"dispersive {what} has shape {tuple(value.shape)}; the grid needs {grid.shape} "
            "(or a number)"
        )
    if value.dtype != grid.dtype:
        value = ops.astype(value, grid.dtype)
    return value


def _concrete(value):
    try:
        return value.asnumpy() if isinstance(value, core.Tensor) else np.asarray(value)
    except Exception:  # a tracer under jit/grad
        return None


class DrudePole:
    """A Drude pole: ``chi(omega) = -omega_p^2 / (omega^2 - j omega gamma)``.

    Args:
        omega_p: plasma frequency, rad/s (number, ``grid.shape`` map or Tensor; >= 0).
        gamma: collision rate, 1/s (number, map or Tensor; >= 0).
    """

    def __init__(self, omega_p, gamma=0.0):
        self.omega_p = omega_p
        self.gamma = gamma

    def susceptibility(self, omega):
        """Continuum ``chi(omega)`` (complex numpy, ``omega`` in rad/s, any shape)."""
        w = np.asarray(omega, dtype=np.complex128)
        wp, g = float(_scalar(self.omega_p)), float(_scalar(self.gamma))
        return -(wp**2) / (w * w - 1j * w * g)

    def discrete_susceptibility(self, omega, dt):
        """The ADE's ``chi`` at ``omega``: ``-omega_p^2 / (T^2 - j gamma T)``, eq. (2)."""
        t = 2.0 / dt * np.tan(np.asarray(omega, dtype=np.float64) * dt / 2)
        wp, g = float(_scalar(self.omega_p)), float(_scalar(self.gamma))
        return -(wp**2) / (t * t - 1j * g * t)

    def __repr__(self):
        return f"DrudePole(omega_p={self.omega_p!r}, gamma={self.gamma!r})"


class LorentzPole:
    """A Lorentz pole: ``chi(omega) = delta_eps omega_0^2 / (omega_0^2 + 2 j omega delta -
    omega^2)``.

    Args:
        delta_eps: pole strength (static permittivity change), dimensionless (>= 0).
        omega_0: resonance, rad/s (> 0; ``omega_0 dt < 2`` for stability).
        delta: damping, 1/s (>= 0).
    """

    def __init__(self, delta_eps, omega_0, delta=0.0):
        self.delta_eps = delta_eps
        self.omega_0 = omega_0
        self.delta = delta

    def susceptibility(self, omega):
        """Continuum ``chi(omega)`` (complex numpy)."""
        w = np.asarray(omega, dtype=np.complex128)
        de, w0, d = (float(_scalar(v)) for v in (self.delta_eps, self.omega_0, self.delta))
        return de * w0**2 / (w0**2 + 2j * w * d - w * w)

    def discrete_susceptibility(self, omega, dt):
        """The ADE's ``chi``: ``delta_eps omega_0^2 cos(omega dt) / (omega_0^2 - W^2 + 2 j
        delta S)``, eq. (2)."""
        w = np.asarray(omega, dtype=np.float64)
        big_w = 2.0 / dt * np.sin(w * dt / 2)
        s = np.sin(w * dt) / dt
        de, w0, d = (float(_scalar(v)) for v in (self.delta_eps, self.omega_0, self.delta))
        return de * w0**2 * np.cos(w * dt) / (w0**2 - big_w**2 + 2j * d * s)

    def __repr__(self):
        return (
            f"LorentzPole(delta_eps={self.delta_eps!r}, omega_0={self.omega_0!r}, "
            f"delta={self.delta!r})"
        )


def _scalar(value):
    """A uniform parameter as a float (for the analytic formulas); maps must be uniform."""
    array = _concrete(value)
    if array is None:
        raise TypeError("the analytic permittivity needs concrete pole parameters")
    flat = np.ravel(array)
    if flat.size > 1 and not np.all(flat == flat[0]):
        raise ValueError("the analytic permittivity needs uniform pole parameters, got a map")
    return flat[0]


class DispersiveMaterial:
    """Poles acting where ``region`` is nonzero (``Simulation(..., dispersive=...)``).

    Args:
        poles: a ``DrudePole``/``LorentzPole`` or a list of them.
        region: a number or ``grid.shape`` map scaling every pole's strength (1 inside the
            material, 0 outside; fractions for sub-cell fill; a Tensor carries gradients).
        name: used in error messages.

    The background ``eps_inf`` and ``sigma`` are the ``Materials`` of the simulation.
    """

    def __init__(self, poles, region=1.0, name="dispersive"):
        poles = list(poles) if isinstance(poles, (list, tuple)) else [poles]
        for p in poles:
            if not isinstance(p, (DrudePole, LorentzPole)):
                raise TypeError(f"{name}: poles must be DrudePole or LorentzPole, got {p!r}")
        if not poles:
            raise ValueError(f"{name}: needs at least one pole")
        self.poles = poles
        self.region = region
        self.name = name

    def susceptibility(self, omega):
        """Continuum ``sum_p chi_p(omega)`` (uniform parameters, region taken as 1)."""
        return sum(p.susceptibility(omega) for p in self.poles)

    def permittivity(self, omega, eps_inf=1.0, sigma=0.0):
        """Continuum relative permittivity ``eps_inf + sigma / (j omega eps0) + sum chi``."""
        w = np.asarray(omega, dtype=np.float64)
        return eps_inf + sigma / (1j * w * EPS0) + self.susceptibility(w)

    def discrete_permittivity(self, omega, dt, eps_inf=1.0, sigma=0.0):
        """The permittivity the ADE scheme realises, eq. (2) of the module docstring."""
        return discrete_permittivity(self.poles, omega, dt, eps_inf, sigma)


def discrete_permittivity(poles, omega, dt, eps_inf=1.0, sigma=0.0):
    """Eq. (2): ``eps_inf + sigma / (j eps0 T) + sum_p chi_p^discrete(omega)`` (complex numpy;
    ``poles`` a list of poles or a ``DispersiveMaterial``; ``omega`` rad/s, ``dt`` s)."""
    if isinstance(poles, DispersiveMaterial):
        poles = poles.poles
    w = np.asarray(omega, dtype=np.float64)
    t = 2.0 / dt * np.tan(w * dt / 2)
    out = eps_inf + sigma / (1j * EPS0 * t) + 0j * w
    for p in poles:
        out = out + p.discrete_susceptibility(w, dt)
    return out


class DispersiveUpdate:
    """The ADE terms of a ``Simulation``: coefficients, state and the two hooks of a step.

    Built by ``Simulation`` from its ``dispersive`` materials; per pole ``p`` (numbered over
    all materials in order) and E component ``c`` the state ``aux["dispersive"]`` holds
    ``"j<p>_<c>"`` (Drude ``J^n``, A/m^2) or ``"p<p>_<c>"`` and ``"q<p>_<c>"`` (Lorentz
    ``P^n`` and ``P^{n-1}``, C/m^2), each ``grid.shape``.
    """

    def __init__(self, materials, grid):
        if isinstance(materials, DispersiveMaterial):
            materials = [materials]
        self.materials = list(materials)
        for m in self.materials:
            if not isinstance(m, DispersiveMaterial):
                raise TypeError(f"dispersive: expected DispersiveMaterial, got {m!r}")
        self.grid = grid
        self.kinds = []  # per pole: "drude" / "lorentz"
        for m in self.materials:
            for p in m.poles:
                self.kinds.append("drude" if isinstance(p, DrudePole) else "lorentz")

    def coefficients(self):
        """``(sigma_extra, eps_extra, coeffs)``: the Drude conductivity ``sum beta`` (S/m) and
        the Lorentz permittivity ``sum g / eps0`` (numbers or maps) that go into ``Ca``/``Cb``,
        and per pole its update coefficients (Tensors/floats)."""
        grid, dt = self.grid, self.grid.dt
        sigma_extra = 0.0
        eps_extra = 0.0
        coeffs = {}
        index = 0
        for m in self.materials:
            region = _as_value(m.region, grid, f"{m.name} region")
            _check_nonnegative(region, f"{m.name} region")
            for p in m.poles:
                if isinstance(p, DrudePole):
                    wp = _as_value(p.omega_p, grid, f"{m.name} omega_p")
                    g = _as_value(p.gamma, grid, f"{m.name} gamma")
                    _check_nonnegative(g, f"{m.name} gamma")
                    den = 1.0 + g * (dt / 2)
                    beta = region * (EPS0 * dt / 2) * wp * wp / den
                    k = (1.0 - g * (dt / 2)) / den
                    sigma_extra = sigma_extra + beta
                    coeffs[f"k{index}"] = k
                    coeffs[f"b{index}"] = beta
                else:
                    de = _as_value(p.delta_eps, grid, f"{m.name} delta_eps")
                    w0 = _as_value(p.omega_0, grid, f"{m.name} omega_0")
                    d = _as_value(p.delta, grid, f"{m.name} delta")
                    _check_nonnegative(d, f"{m.name} delta")
                    w0_np = _concrete(w0)
                    if w0_np is not None and np.any(np.asarray(w0_np) * dt >= 2.0):
                        raise ValueError(
                            f"{m.name}: Lorentz omega_0 dt = {float(np.max(w0_np)) * dt:.3g} "
                            ">= 2 is unstable; use a smaller dt"
                        )
                    den = 1.0 + d * dt
                    g_rel = region * de * w0 * w0 * (dt * dt / 2) / den  # g / eps0
                    coeffs[f"a{index}"] = (2.0 - w0 * w0 * (dt * dt)) / den
                    coeffs[f"c{index}"] = (d * dt - 1.0) / den
                    coeffs[f"g{index}"] = g_rel * EPS0
                    eps_extra = eps_extra + g_rel
                index += 1
        return sigma_extra, eps_extra, coeffs

    def static_eps_peak(self):
        """Largest per-cell sum of the Lorentz ``delta_eps * region`` (the static permittivity
        above ``eps_inf``, for the resolution check), or 0."""
        total = np.zeros(self.grid.shape)
        for m in self.materials:
            region = _concrete(m.region)
            for p in m.poles:
                if isinstance(p, LorentzPole):
                    de = _concrete(p.delta_eps)
                    if de is None or region is None:
                        return 0.0
                    total = total + np.asarray(de, dtype=np.float64) * np.asarray(
                        region, dtype=np.float64
                    )
        return float(np.max(total))

    def init_aux(self):
        grid = self.grid
        aux = {}
        for index, kind in enumerate(self.kinds):
            for c in grid.e_components:
                if kind == "drude":
                    aux[f"j{index}_{c}"] = grid.zeros()
                else:
                    aux[f"p{index}_{c}"] = grid.zeros()
                    aux[f"q{index}_{c}"] = grid.zeros()
        if "lorentz" in self.kinds:
            for c in grid.e_components:
                aux[f"e_{c}"] = grid.zeros()  # E^{n-1}
        return aux

    def _lorentz_a(self, aux, dc, index, c):
        """``A^n`` of pole ``index`` for component ``c`` (from ``P^n``, ``P^{n-1}``,
        ``E^{n-1}``)."""
        return (
            dc[f"a{index}"] * aux[f"p{index}_{c}"]
            + dc[f"c{index}"] * aux[f"q{index}_{c}"]
            + dc[f"g{index}"] * aux[f"e_{c}"]
        )

    def before_e(self, state, coeffs):
        """Per E component the explicit part of ``sum_p J_p^{n+1/2}`` (A/m^2) that the E update
        subtracts (times ``Cb``): ``(1 + k) J^n / 2`` (Drude), ``(A^n + g E^n - P^n) / dt``
        (Lorentz)."""
        aux = state.aux[AUX_KEY]
        dc = coeffs[AUX_KEY]
        inv_dt = 1.0 / self.grid.dt
        current = {}
        for c in self.grid.e_components:
            total = None
            e = state.get(c)
            for index, kind in enumerate(self.kinds):
                if kind == "drude":
                    term = (1.0 + dc[f"k{index}"]) * 0.5 * aux[f"j{index}_{c}"]
                else:
                    a = self._lorentz_a(aux, dc, index, c)
                    term = (a + dc[f"g{index}"] * e - aux[f"p{index}_{c}"]) * inv_dt
                total = term if total is None else total + term
            current[c] = total
        return current

    def after_e(self, aux, coeffs, e_old, state):
        """The aux advanced with the final ``E^{n+1}``: Drude ``J^{n+1} = k J^n + beta
        (E^{n+1} + E^n)``; Lorentz ``P^{n+1} = A^n + g E^{n+1}`` (``P^n`` to ``q``, ``E^n`` to
        ``e``)."""
        new = dict(aux)
        dc = coeffs[AUX_KEY]
        for c in self.grid.e_components:
            e_new = state.get(c)
            for index, kind in enumerate(self.kinds):
                if kind == "drude":
                    key = f"j{index}_{c}"
                    new[key] = dc[f"k{index}"] * aux[key] + dc[f"b{index}"] * (e_old[c] + e_new)
                else:
                    a = self._lorentz_a(aux, dc, index, c)
                    new[f"p{index}_{c}"] = a + dc[f"g{index}"] * e_new
                    new[f"q{index}_{c}"] = aux[f"p{index}_{c}"]
            if f"e_{c}" in aux:
                new[f"e_{c}"] = e_old[c]
        return new


def _check_nonnegative(value, what):
    array = _concrete(value)
    if array is None:
        return
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{what} has non-finite entries")
    if np.any(array < 0):
        raise ValueError(f"{what} must be >= 0, min is {float(np.min(array))}")
