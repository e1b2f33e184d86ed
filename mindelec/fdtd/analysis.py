"""Post-processing of FDTD signals: resonance frequencies, the Yee dispersion relation, and
reflection spectra against a reference run.

- ``yee_omega(grid, k)``: the angular frequency (rad/s) of a plane wave / cavity mode of
  wavevector ``k`` (rad/m) on the Yee grid (Taflove & Hagness, *Computational
  Electrodynamics*, 3rd ed., eq. 4.12),

      sin(omega dt / 2) / (c dt) = sqrt(sum_i (sin(k_i d_i / 2) / d_i)^2).              (1)

- ``fit_frequencies(y, dt, guesses)``: the angular frequencies ``w_k`` of
  ``y_n = C + sum_k (A_k cos(w_k t_n) + B_k sin(w_k t_n))`` by nonlinear least squares with
  the amplitudes projected out (variable projection, Golub & Pereyra 1973; the same model as
  Harminv's, without damping), started from ``guesses``: exact for a sum of undamped
  sinusoids up to round-off, whatever the record length, where a periodogram peak is off by a
  fraction of its bin ``2 pi / T``.
- ``reflection_spectrum(field, reference, dt, freqs)``: ``|F(field - reference)| /
  |F(reference)|`` in dB at ``freqs`` (Hz), the spectrum of what an absorbing boundary sends
  back, measured against a domain large enough that nothing returns within the record.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import least_squares

from .constants import C0

__all__ = [
    "cavity_omegas",
    "fit_frequencies",
    "reflection_spectrum",
    "spectral_peaks",
    "yee_omega",
]


def yee_omega(grid, k, eps_r: float = 1.0):
    """Angular frequency (rad/s) of wavevector ``k`` (rad/m, one entry per grid axis, arrays
    broadcast) on ``grid``'s Yee scheme, eq. (1) with ``c = C0 / sqrt(eps_r)``.

    Raises:
        ValueError: ``k`` has the wrong length, or lies beyond the grid's cutoff (no real
            frequency: the right side of (1) exceeds ``1 / (c dt)``).
    """
    k = [np.asarray(ki, dtype=float) for ki in k]
    if len(k) != grid.ndim:
        raise ValueError(f"k needs {grid.ndim} components (one per axis), got {len(k)}")
    c = C0 / np.sqrt(eps_r)
    rhs = np.sqrt(sum((np.sin(ki * d / 2) / d) ** 2 for ki, d in zip(k, grid.spacing)))
    arg = c * grid.dt * rhs
    if np.any(arg > 1):
        raise ValueError("k lies beyond the Yee grid's cutoff (eq. (1) has no real root)")
    return 2 / grid.dt * np.arcsin(arg)


def cavity_omegas(grid, f_max: float, eps_r: float = 1.0):
    """Resonances of a PEC box the size of ``grid`` (TMz in 2D: modes ``(m, n)``, m, n >= 1;
    3D: ``(m, n, p)`` with at most one index 0) below ``f_max`` (Hz), by eq. (1).

    Returns:
        ``(indices [K, ndim] int, omega [K] rad/s, omega_continuum [K] rad/s)``, sorted by
        ``omega``; ``omega_continuum = c |k|``.
    """
    lengths = [n * d for n, d in zip(grid.shape, grid.spacing)]
    c = C0 / np.sqrt(eps_r)
    top = [int(np.ceil(2 * f_max * L / c)) + 1 for L in lengths]
    mesh = np.meshgrid(*(np.arange(t + 1) for t in top), indexing="ij")
    idx = np.stack([m.ravel() for m in mesh], axis=1)
    zeros = (idx == 0).sum(axis=1)
    keep = zeros == 0 if grid.ndim == 2 else zeros <= 1
    idx = idx[keep]
    k = [idx[:, a] * np.pi / lengths[a] for a in range(grid.ndim)]
    cont = c * np.sqrt(sum(ka**2 for ka in k))
    inside = cont < 2 * np.pi * f_max * 1.05  # the grid lowers frequencies: keep a margin
    idx, k, cont = idx[inside], [ka[inside] for ka in k], cont[inside]
    w = yee_omega(grid, k, eps_r)
    sel = w < 2 * np.pi * f_max
    order = np.argsort(w[sel])
    return idx[sel][order], w[sel][order], cont[sel][order]


def _basis(w, t):
    return np.concatenate([np.cos(np.outer(t, w)), np.sin(np.outer(t, w)), np.ones((len(t), 1))], 1)


def spectral_peaks(y, dt: float, near, bins: float = 1.0, pad: int = 16):
    """Periodogram peaks of ``y`` near given angular frequencies: starting points for
    ``fit_frequencies`` that do not presume the answer.

    For each ``near[k]`` (rad/s) the maximum of the ``pad``-times zero-padded ``|FFT(y - mean)|``
    (Hann window) within ``+- bins`` resolution bins ``2 pi / T`` (``T = len(y) dt``).

    Returns:
        ``[K]`` angular frequencies (rad/s).
    """
    y = np.asarray(y, dtype=float)
    n = pad * len(y)
    spec = np.abs(np.fft.rfft((y - y.mean()) * np.hanning(len(y)), n))
    w = 2 * np.pi * np.fft.rfftfreq(n, dt)
    half = bins * 2 * np.pi / (len(y) * dt)
    out = []
    for c in np.atleast_1d(np.asarray(near, dtype=float)):
        idx = np.flatnonzero(np.abs(w - c) <= half)
        out.append(w[idx[np.argmax(spec[idx])]] if idx.size else c)
    return np.array(out)


def fit_frequencies(y, dt: float, guesses, t0: float = 0.0):
    """Least-squares angular frequencies of a sum of sinusoids plus a constant.

    Args:
        y: samples ``[nt]`` at ``t_n = t0 + n dt`` (s).
        dt: sample spacing (s).
        guesses: starting angular frequencies ``[K]`` (rad/s), e.g. ``yee_omega`` predictions
            or periodogram peaks; each must lie within about ``2 pi / T`` of its mode.
        t0: time of the first sample (s).

    Returns:
        ``(omega [K] rad/s, amplitude [K])``: the fitted frequencies and the amplitudes
        ``sqrt(A_k^2 + B_k^2)`` of the best linear fit at them.
    """
    y = np.asarray(y, dtype=float)
    guesses = np.asarray(guesses, dtype=float)
    t = t0 + np.arange(len(y)) * dt
    scale = np.abs(guesses).max()

    def residual(u):
        basis = _basis(u * scale, t)
        coef, *_ = np.linalg.lstsq(basis, y, rcond=None)
        return basis @ coef - y

    # xtol: frequencies to about 1e-12 relative (they are scaled to u ~ 1)
    res = least_squares(residual, guesses / scale, xtol=1e-12, ftol=1e-14, gtol=1e-14)
    w = res.x * scale
    coef, *_ = np.linalg.lstsq(_basis(w, t), y, rcond=None)
    n = len(w)
    return w, np.hypot(coef[:n], coef[n : 2 * n])


def reflection_spectrum(field, reference, dt: float, freqs, pad: int = 4):
    """``20 log10(|F(field - reference)| / |F(reference)|)`` (dB) at ``freqs`` (Hz).

    Args:
        field: the probe signal ``[nt]`` next to the absorber.
        reference: the same probe in a domain whose walls are out of reach within ``nt``.
        dt: sample spacing (s).
        freqs: frequencies ``[nf]`` (Hz) where ``reference`` has spectral content.
        pad: zero padding factor of the FFT (the values are interpolated linearly from it).
    """
    field, reference = np.asarray(field, float), np.asarray(reference, float)
    n = pad * len(field)
    grid_f = np.fft.rfftfreq(n, dt)
    err = np.abs(np.fft.rfft(field - reference, n))
    ref = np.abs(np.fft.rfft(reference, n))
    ratio = np.interp(freqs, grid_f, err) / np.interp(freqs, grid_f, ref)
    return 20 * np.log10(ratio)
