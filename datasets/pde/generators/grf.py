"""Gaussian random fields N(0, scale * (-Laplacian + tau^2 I)^(-alpha)), the initial conditions
and coefficients of the FNO paper's data (Li et al., "Fourier Neural Operator for Parametric
Partial Differential Equations", ICLR 2021, Section 5: Burgers, Darcy, Navier-Stokes).

A centred Gaussian measure with covariance operator ``C = scale * (-Δ + tau^2 I)^(-alpha)`` has
the Karhunen-Loève expansion ``u = sum_k sqrt(lambda_k) xi_k phi_k`` over the orthonormal
eigenfunctions ``phi_k`` of ``-Δ`` (eigenvalue ``mu_k``), with ``xi_k ~ N(0, 1)`` independent
and ``lambda_k = scale * (mu_k + tau^2)^(-alpha)`` (Lord, Powell & Shardlow, "An Introduction
to Computational Stochastic PDEs", 2014, Section 7.2). Both samplers truncate the expansion to
the modes a grid resolves:

- :func:`periodic_grf` on the unit torus [0, 1)^d (``phi_k = exp(2 pi i k.x)``,
  ``mu_k = 4 pi^2 |k|^2``), by spectral synthesis of white noise (circulant embedding): the
  sampled grid values have exactly the covariance ``sum_k lambda_k cos(2 pi k.(x - y))`` summed
  over the grid's FFT modes (Nyquist included);
- :func:`neumann_grf` on the unit cube [0, 1]^d with zero-flux boundaries (``phi_k`` = products
  of ``1`` and ``sqrt(2) cos(pi k x)``, ``mu_k = pi^2 |k|^2``), evaluated at the grid's nodes
  (boundary included), as FNO's Darcy data does.

The FNO paper's settings: Burgers ``scale=625, tau=5, alpha=2``; Darcy ``scale=1, tau=3,
alpha=2`` (then thresholded at 0, where the scale does not matter); Navier-Stokes
``scale=7**1.5, tau=7, alpha=2.5``. FNO's generators fix the mean mode (k = 0) to zero
(``zero_mean=True`` here, the default).

Every function draws from a ``numpy.random.Generator`` it is given, in float64, so a seed
fixes the samples bit for bit.
"""

from __future__ import annotations

import numpy as np

__all__ = ["grf_mode_std", "neumann_grf", "periodic_grf"]


def grf_mode_std(mu, scale: float, tau: float, alpha: float) -> np.ndarray:
    """sqrt(lambda_k): the standard deviation of each Karhunen-Loève coefficient.

    Args:
        mu: eigenvalues of -Δ (any shape, float64; units 1/length^2).
        scale: the covariance operator's prefactor (``scale > 0``; the field's units squared).
        tau: inverse length scale (``tau >= 0``; ``tau = 0`` needs ``mu > 0`` everywhere).
        alpha: smoothness exponent (``alpha > d/2`` for a field with finite variance).

    Returns:
        ``sqrt(scale) * (mu + tau^2)^(-alpha/2)``, float64, the shape of ``mu``.
    """
    mu = np.asarray(mu, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.sqrt(scale) * (mu + tau**2) ** (-alpha / 2)


def _check(shape, scale, tau, alpha, size, where):
    shape = (shape,) if np.isscalar(shape) else tuple(shape)
    if not shape or any(int(n) != n or n < 2 for n in shape):
        raise ValueError(f"{where}: shape must be grid sizes >= 2 per axis, got {shape}")
    if not scale > 0 or not tau >= 0 or not alpha > 0:
        raise ValueError(
            f"{where}: need scale > 0, tau >= 0, alpha > 0; got scale={scale}, tau={tau}, "
            f"alpha={alpha}"
        )
    if int(size) != size or size < 1:
        raise ValueError(f"{where}: size (number of samples) must be an integer >= 1, got {size}")
    return tuple(int(n) for n in shape)


def _mode_std(mu, scale, tau, alpha, zero_mean, where) -> np.ndarray:
    """:func:`grf_mode_std` of the eigenvalues ``mu`` (the mean mode first, ``mu.flat[0] = 0``),
    with the mean mode dropped (``zero_mean``) or refused when its variance is infinite."""
    std = grf_mode_std(mu, scale, tau, alpha)
    if zero_mean:
        std.flat[0] = 0.0
    elif not np.isfinite(std.flat[0]):
        raise ValueError(
            f"{where}: tau = 0 gives the mean mode infinite variance; pass zero_mean=True"
        )
    return std


def _periodic_mu(shape: tuple[int, ...]) -> np.ndarray:
    """4 pi^2 |k|^2 on the rfftn grid of ``shape`` (last axis halved), float64."""
    ks = [np.fft.fftfreq(n, 1.0 / n) for n in shape[:-1]] + [
        np.fft.rfftfreq(shape[-1], 1.0 / shape[-1])
    ]
    grids = np.meshgrid(*ks, indexing="ij")
    return 4 * np.pi**2 * sum(k**2 for k in grids)


def periodic_grf(
    rng: np.random.Generator,
    shape,
    *,
    scale: float,
    tau: float,
    alpha: float,
    size: int = 1,
    zero_mean: bool = True,
) -> np.ndarray:
    """Samples of N(0, scale (-Δ + tau^2)^(-alpha)) on the periodic unit cube [0, 1)^d.

    Spectral synthesis: white noise ``w`` (one N(0, 1) per grid point) is transformed,
    each mode is multiplied by ``sqrt(n_points) * sqrt(lambda_k)`` and transformed back. Since
    ``E |FFT(w)_k|^2 = n_points``, the result has covariance ``sum_k lambda_k exp(2 pi i k.(x-y))``
    over every mode of the grid: the truncated Karhunen-Loève expansion, real by construction.

    Args:
        rng: the random stream (``numpy.random.default_rng(seed)``).
        shape: grid points per axis, ``(n,)`` or ``(nx, ny)``...; the points are ``j / n``.
        scale, tau, alpha: the covariance operator's parameters (see :func:`grf_mode_std`).
        size: number of independent samples.
        zero_mean: drop the k = 0 mode (FNO's generators do; a vorticity on the torus must).

    Returns:
        float64 array ``[size, *shape]``.
    """
    shape = _check(shape, scale, tau, alpha, size, "periodic_grf")
    axes = tuple(range(1, len(shape) + 1))
    noise = rng.standard_normal((int(size), *shape))  # [size, *shape]
    mu = _periodic_mu(shape)
    std = _mode_std(mu, scale, tau, alpha, zero_mean, "periodic_grf")  # [*rfft shape]
    coef = np.fft.rfftn(noise, axes=axes) * (np.sqrt(np.prod(shape)) * std)
    return np.fft.irfftn(coef, s=shape, axes=axes)


def _neumann_basis(n: int) -> np.ndarray:
    """[n nodes, n modes]: 1 and sqrt(2) cos(pi k x) at x_j = j / (n - 1), k = 0..n-1."""
    x = np.linspace(0.0, 1.0, n)
    basis = np.sqrt(2.0) * np.cos(np.pi * np.outer(x, np.arange(n)))
    basis[:, 0] = 1.0
    return basis


def neumann_grf(
    rng: np.random.Generator,
    shape,
    *,
    scale: float,
    tau: float,
    alpha: float,
    size: int = 1,
    zero_mean: bool = True,
) -> np.ndarray:
    """Samples of N(0, scale (-Δ + tau^2)^(-alpha)) on [0, 1]^d with zero-flux boundaries.

    The Karhunen-Loève expansion over ``prod_i c_{k_i}(x_i)`` (``c_0 = 1``,
    ``c_k = sqrt(2) cos(pi k x)``, eigenvalue ``pi^2 |k|^2``), truncated to ``k_i < n_i``, is
    evaluated at the nodes ``x_j = j / (n - 1)`` (both ends included) by one matrix product per
    axis. This is the field FNO thresholds for its Darcy coefficients.

    Args:
        rng: the random stream.
        shape: nodes per axis (``n_i >= 2``).
        scale, tau, alpha: the covariance operator's parameters (see :func:`grf_mode_std`).
        size: number of independent samples.
        zero_mean: drop the k = 0 mode (FNO's Darcy generator does).

    Returns:
        float64 array ``[size, *shape]``.
    """
    shape = _check(shape, scale, tau, alpha, size, "neumann_grf")
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    mu = np.pi**2 * sum(k**2 for k in grids)
    std = _mode_std(mu, scale, tau, alpha, zero_mean, "neumann_grf")  # [*shape]
    field = rng.standard_normal((int(size), *shape)) * std  # coefficients [size, *modes]
    for axis, n in enumerate(shape, start=1):
        # contract the mode axis with the basis: [..., k_i, ...] -> [..., x_i, ...]
        field = np.moveaxis(np.tensordot(field, _neumann_basis(n), axes=([axis], [1])), -1, axis)
    return field
