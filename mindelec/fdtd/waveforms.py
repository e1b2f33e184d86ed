"""Source waveforms for FDTD: Gaussian, modulated Gaussian, Ricker and ramped CW.

Each waveform is a callable ``w(t)``: ``t`` in seconds, a float, a numpy array or a
``core.Tensor`` of any shape, and the value has the same shape (dimensionless; a source scales
it by its amplitude in V, A or V/m). With a Tensor time, or Tensor parameters, the value is
computed with core ops and is differentiable with respect to both (a source parameter may carry
a gradient). ``spectrum(f)`` is the continuous Fourier transform
``W(f) = integral w(t) exp(-i 2 pi f t) dt`` (s, complex) in closed form where one exists;
``numerical_spectrum`` evaluates the same integral from samples (the running DFT of the
monitors), and ``max_frequency(level)`` is the highest frequency whose amplitude is still
``level`` times the spectral peak (default 0.1, i.e. -20 dB): the frequency that
``check_resolution`` holds against the grid (at least 10 cells per wavelength, Taflove &
Hagness, *Computational Electrodynamics*, 3rd ed., sec. 4.6: the numerical phase-velocity
error is then below about 1%).

The Gaussian and the modulated Gaussian use MindElec's parametrisation
(``MindElec/examples/AD_FDTD/fdtd_forward/src/waveforms.py``: ``Gaussian(fmax)`` with
``tau = 0.5 / fmax``, ``t0 = 4.5 tau``; ``CosineGaussian(fc, df)`` with
``tau = 2 sqrt(2.3) / (pi df)``, ``t0 = sqrt(20) tau``), so a case ported from MindElec excites
the same pulse.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from diffsci import core
from diffsci.core import ops

from .constants import C0

__all__ = [
    "C0",
    "ContinuousWave",
    "CosineGaussian",
    "Gaussian",
    "ModulatedGaussian",
    "NormDGaussian",
    "ResolutionWarning",
    "Ricker",
    "Waveform",
    "check_resolution",
    "numerical_spectrum",
]


class ResolutionWarning(UserWarning):
    """The grid has fewer cells per wavelength than asked at the highest significant frequency."""


def _namespace(*values):
    """``core.ops`` if any value is a core Tensor (differentiable path), else numpy."""
    return ops if any(isinstance(v, core.Tensor) for v in values) else np


class Waveform:
    """Base class: a scalar function of time ``t`` (s) with a Fourier transform.

    Subclasses implement ``_value(t, xp)`` with ``xp`` numpy or ``core.ops`` and
    ``spectrum(f)``; ``_fmax_search`` bounds the search of ``max_frequency``.
    """

    def __call__(self, t):
        """Value at time ``t`` (s; float, numpy array or Tensor, any shape), same shape."""
        xp = _namespace(t, *self._params())
        if xp is np:
            t = np.asarray(t, dtype=np.float64)
        return self._value(t, xp)

    def value(self, t):
        """Same as calling the waveform: ``w(t)`` with the shape of ``t``."""
        return self(t)

    def sample(self, dt: float, steps: int, offset: float = 0.0) -> np.ndarray:
        """Values at ``t_n = (n + offset) dt``, ``n = 0 .. steps-1``: float64 array ``[steps]``.

        Use ``offset=0.5`` for a source applied at the half step (an electric current
        ``J^{n+1/2}`` in the E update).
        """
        return np.asarray(self((np.arange(steps) + offset) * dt), dtype=np.float64)

    def spectrum(self, f):
        """Fourier transform ``W(f)`` (s, complex128) at frequencies ``f`` (Hz, any shape)."""
        raise NotImplementedError(f"{type(self).__name__} has no closed-form spectrum")

    def max_frequency(self, level: float = 0.1) -> float:
        """Highest frequency (Hz) where ``|W(f)| >= level * max |W|`` (``level`` in (0, 1))."""
        if not 0.0 < level < 1.0:
            raise ValueError(f"max_frequency: level must be in (0, 1), got {level}")
        f = np.linspace(0.0, self._fmax_search(), 200_001)
        amp = np.abs(self.spectrum(f))
        above = np.nonzero(amp >= level * amp.max())[0]
        i = int(above[-1])
        if i + 1 >= f.size:
            return float(f[-1])
        # linear interpolation of the crossing between f[i] (above) and f[i + 1] (below)
        a0, a1 = amp[i] - level * amp.max(), amp[i + 1] - level * amp.max()
        return float(f[i] + (f[i + 1] - f[i]) * a0 / (a0 - a1))

    def _params(self):
        return ()

    def _fmax_search(self) -> float:
        raise NotImplementedError

    def _value(self, t, xp):
        raise NotImplementedError


class Gaussian(Waveform):
    """Gaussian pulse ``w(t) = exp(-((t - t0) / tau)^2)`` (MindElec's ``Gaussian``).

    Args:
        fmax: the frequency (Hz) the pulse is meant to cover; ``tau = 0.5 / fmax`` and
            ``t0 = 4.5 tau`` unless given (``w(0) = exp(-20.25)``, a clean start).
        tau: width (s), overrides ``fmax``.
        t0: delay (s).

    Spectrum: ``W(f) = sqrt(pi) tau exp(-(pi f tau)^2) exp(-i 2 pi f t0)``; its amplitude at
    ``fmax`` is ``exp(-pi^2 / 4) = 0.085`` of the peak (-21.4 dB).
    """

    def __init__(self, fmax: float | None = None, *, tau=None, t0=None):
        if tau is None:
            if fmax is None or not fmax > 0:
                raise ValueError(f"Gaussian: give fmax > 0 (Hz) or tau > 0 (s), got fmax={fmax}")
            tau = 0.5 / fmax
        self.tau = tau
        self.t0 = 4.5 * tau if t0 is None else t0

    def _params(self):
        return (self.tau, self.t0)

    def _value(self, t, xp):
        return xp.exp(-(((t - self.t0) / self.tau) ** 2))

    def spectrum(self, f):
        f = np.asarray(f, dtype=np.float64)
        tau, t0 = float(self.tau), float(self.t0)
        return (
            math.sqrt(math.pi) * tau * np.exp(-((math.pi * f * tau) ** 2) - 2j * math.pi * f * t0)
        )

    def _fmax_search(self):
        return 4.0 / float(self.tau)


class NormDGaussian(Waveform):
    """Normalised derivative of a Gaussian (MindElec's ``NormDGaussian``), no DC content.

    ``w(t) = -sqrt(2 e) (t - t0) / tau exp(-((t - t0) / tau)^2)``, peak value 1 at
    ``t0 -+ tau / sqrt(2)``; ``tau = 0.5 / fmax`` and ``t0 = 4.5 tau`` as in ``Gaussian``.

    Spectrum: ``w = (sqrt(2 e) tau / 2) dg/dt`` for the Gaussian ``g``, so
    ``W(f) = (sqrt(2 e) tau / 2) (i 2 pi f) sqrt(pi) tau exp(-(pi f tau)^2) exp(-i 2 pi f t0)``.
    """

    def __init__(self, fmax: float | None = None, *, tau=None, t0=None):
        self._g = Gaussian(fmax, tau=tau, t0=t0)
        self.tau, self.t0 = self._g.tau, self._g.t0

    def _params(self):
        return (self.tau, self.t0)

    def _value(self, t, xp):
        s = (t - self.t0) / self.tau
        return -math.sqrt(2.0 * math.e) * s * xp.exp(-(s**2))

    def spectrum(self, f):
        f = np.asarray(f, dtype=np.float64)
        scale = 0.5 * math.sqrt(2.0 * math.e) * float(self.tau)
        return scale * 2j * math.pi * f * self._g.spectrum(f)

    def _fmax_search(self):
        return 5.0 / float(self.tau)


class ModulatedGaussian(Waveform):
    """Cosine-modulated Gaussian ``w(t) = cos(2 pi fc (t - t0)) exp(-((t - t0) / tau)^2)``.

    MindElec's ``CosineGaussian(fc, df)``: ``tau = 2 sqrt(2.3) / (pi df)`` (the band
    ``fc +- df / 2`` lies within -20 dB of the peak) and ``t0 = sqrt(20) tau``.

    Args:
        fc: centre frequency (Hz).
        df: bandwidth (Hz) between the -20 dB points; ignored if ``tau`` is given.
        tau: Gaussian width (s).
        t0: delay (s).

    Spectrum: ``W(f) = (sqrt(pi) tau / 2) [g(f - fc) + g(f + fc)] exp(-i 2 pi f t0)`` with
    ``g(nu) = exp(-(pi nu tau)^2)``.
    """

    def __init__(self, fc: float, df: float | None = None, *, tau=None, t0=None):
        if tau is None:
            if df is None or not df > 0:
                raise ValueError(f"ModulatedGaussian: give df > 0 (Hz) or tau (s), got df={df}")
            tau = 2.0 * math.sqrt(2.3) / (math.pi * df)
        self.fc = fc
        self.tau = tau
        self.t0 = math.sqrt(20.0) * tau if t0 is None else t0

    def _params(self):
        return (self.fc, self.tau, self.t0)

    def _value(self, t, xp):
        s = t - self.t0
        return xp.cos(2.0 * math.pi * self.fc * s) * xp.exp(-((s / self.tau) ** 2))

    def spectrum(self, f):
        f = np.asarray(f, dtype=np.float64)
        tau, t0, fc = float(self.tau), float(self.t0), float(self.fc)
        g = np.exp(-((math.pi * (f - fc) * tau) ** 2)) + np.exp(-((math.pi * (f + fc) * tau) ** 2))
        return 0.5 * math.sqrt(math.pi) * tau * g * np.exp(-2j * math.pi * f * t0)

    def _fmax_search(self):
        return float(self.fc) + 4.0 / float(self.tau)


CosineGaussian = ModulatedGaussian
"""MindElec's name for the cosine-modulated Gaussian (same arguments ``fc, df``)."""


class Ricker(Waveform):
    """Ricker wavelet (negative normalised second derivative of a Gaussian).

    ``w(t) = (1 - 2 a) exp(-a)`` with ``a = (pi fp (t - t0))^2``; peak spectrum at ``fp``.

    Args:
        fp: peak frequency (Hz).
        t0: delay (s); default ``1.5 / fp`` (``w(0)`` about ``-1e-8``, i.e. a clean start).

    Spectrum: ``W(f) = (2 / sqrt(pi)) (f^2 / fp^3) exp(-(f / fp)^2) exp(-i 2 pi f t0)``.
    """

    def __init__(self, fp: float, t0=None):
        if not float(fp) > 0:
            raise ValueError(f"Ricker: fp must be > 0 (Hz), got {fp}")
        self.fp = fp
        self.t0 = 1.5 / fp if t0 is None else t0

    def _params(self):
        return (self.fp, self.t0)

    def _value(self, t, xp):
        a = (math.pi * self.fp * (t - self.t0)) ** 2
        return (1.0 - 2.0 * a) * xp.exp(-a)

    def spectrum(self, f):
        f = np.asarray(f, dtype=np.float64)
        fp, t0 = float(self.fp), float(self.t0)
        amp = 2.0 / math.sqrt(math.pi) * f**2 / fp**3 * np.exp(-((f / fp) ** 2))
        return amp * np.exp(-2j * math.pi * f * t0)

    def _fmax_search(self):
        return 5.0 * float(self.fp)


class ContinuousWave(Waveform):
    """Sinusoid switched on smoothly: ``w(t) = r(t) sin(2 pi f (t - t0))``.

    The ramp ``r(t)`` rises from 0 at ``t0`` to 1 at ``t0 + ramp`` as
    ``(1 - cos(pi (t - t0) / ramp)) / 2`` (raised cosine: continuous with a continuous first
    derivative, so the start excites little out of band), 0 before ``t0`` and 1 after.

    Args:
        f: frequency (Hz).
        ramp_periods: ramp duration in periods (``ramp = ramp_periods / f``).
        t0: switch-on time (s).

    ``max_frequency`` returns ``f``: the steady state has a single line.
    """

    def __init__(self, f: float, ramp_periods: float = 5.0, t0=0.0):
        if not float(f) > 0:
            raise ValueError(f"ContinuousWave: f must be > 0 (Hz), got {f}")
        if not ramp_periods > 0:
            raise ValueError(f"ContinuousWave: ramp_periods must be > 0, got {ramp_periods}")
        self.f = f
        self.ramp = ramp_periods / f
        self.t0 = t0

    def _params(self):
        return (self.f, self.ramp, self.t0)

    def _value(self, t, xp):
        s = t - self.t0
        x = xp.clip(s / self.ramp, 0.0, 1.0)
        r = 0.5 * (1.0 - xp.cos(math.pi * x))
        return r * xp.sin(2.0 * math.pi * self.f * s)

    def max_frequency(self, level: float = 0.1) -> float:
        return float(self.f)


def numerical_spectrum(values, t, freqs) -> np.ndarray:
    """Fourier transform from samples: ``sum_n w(t_n) exp(-i 2 pi f t_n) dt`` (s, complex).

    Args:
        values: samples ``[nt]`` (or ``[nt, ...]``), uniformly spaced in time.
        t: sample times ``[nt]`` (s).
        freqs: frequencies ``[nf]`` (Hz).

    Returns:
        complex128 ``[nf, ...]``. It approximates the continuous transform to the aliasing
        error of the samples (spectrally small for a smooth pulse sampled at the FDTD step).
    """
    values = np.asarray(values, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    freqs = np.atleast_1d(np.asarray(freqs, dtype=np.float64))
    if t.ndim != 1 or values.shape[0] != t.shape[0]:
        raise ValueError(f"numerical_spectrum: values {values.shape} and t {t.shape} disagree")
    dt = float(t[1] - t[0]) if t.size > 1 else 1.0
    kernel = np.exp(-2j * np.pi * freqs[:, None] * t[None, :]) * dt  # [nf, nt]
    return np.tensordot(kernel, values, axes=(1, 0))


def check_resolution(
    source,
    spacing,
    eps_r_max: float = 1.0,
    mu_r_max: float = 1.0,
    min_cells: float = 10.0,
    level: float = 0.1,
) -> float:
    """Cells per wavelength at the highest significant frequency; warns below ``min_cells``.

    Args:
        source: a ``Waveform`` (its ``max_frequency(level)`` is used) or a frequency in Hz.
        spacing: cell size (m), a float or one per axis (the largest is used).
        eps_r_max, mu_r_max: largest relative permittivity/permeability on the grid (the
            shortest wavelength is ``c0 / (f sqrt(eps_r mu_r))``).
        min_cells: the required number of cells per wavelength (10 by default).
        level: spectral level that defines "significant" for a waveform (0.1 = -20 dB).

    Returns:
        ``lambda_min / max(spacing)``. Emits a ``ResolutionWarning`` naming that number, the
        frequency and the cell size when it is below ``min_cells``.
    """
    fmax = source.max_frequency(level) if isinstance(source, Waveform) else float(source)
    d = float(np.max(np.asarray(spacing, dtype=np.float64)))
    if not (fmax > 0 and d > 0):
        raise ValueError(
            f"check_resolution: need a positive frequency and spacing, got {fmax}, {d}"
        )
    wavelength = C0 / (fmax * math.sqrt(eps_r_max * mu_r_max))
    cells = wavelength / d
    if cells < min_cells:
        warnings.warn(
            f"grid under-resolves the source: {cells:.3g} cells per wavelength at "
            f"{fmax:.6g} Hz (highest significant frequency, eps_r={eps_r_max}, mu_r={mu_r_max},"
            f" cell {d:.6g} m); at least {min_cells:g} are needed for ~1% phase error: refine "
            f"the cells to <= {wavelength / min_cells:.6g} m or lower the source bandwidth",
            ResolutionWarning,
            stacklevel=2,
        )
    return cells
