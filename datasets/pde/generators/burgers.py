"""1D viscous Burgers' equation on the periodic unit interval, the FNO paper's data.

    u_t + (u^2 / 2)_x = nu u_xx,   x in [0, 1) periodic,   u(x, 0) = u0(x)

Solved pseudo-spectrally: u is held by its Fourier coefficients ``v_m`` (``m = 0..n/2``, real
FFT), the linear part ``L_m = -nu (2 pi m)^2`` is integrated exactly and the nonlinear part
``N(v) = -(i 2 pi m / 2) FFT(u^2)`` (products dealiased by Orszag's 2/3 rule: modes
``|m| >= n/3`` are zeroed before and after squaring) by the fourth-order exponential time
differencing Runge-Kutta scheme ETDRK4 (Cox & Matthews, J. Comput. Phys. 176, 2002), with the
phi-function coefficients evaluated by contour integrals (Kassam & Trefethen, "Fourth-order
time-stepping for stiff PDEs", SIAM J. Sci. Comput. 26, 2005, Section 3): cancellation-free for
every ``h L_m``, including ``L_0 = 0`` and the very stiff high modes.

:func:`generate_burgers` draws initial conditions from the FNO paper's Gaussian random field
N(0, 625 (-Δ + 25 I)^-2) (Li et al., ICLR 2021, Section 5.1), solves at a fine resolution
(FNO: 8192 points) and keeps every ``subsample``-th point (FNO trains at 8192 / 8 = 1024).
:func:`cole_hopf_solution` is the exact solution the tests check it against.
"""

from __future__ import annotations

import numpy as np

from ._common import (
    check_periodic_grid,
    check_solver_args,
    march,
    naming_samples,
    sample_batches,
    save,
)
from .grf import periodic_grf

__all__ = ["cole_hopf_solution", "etdrk4_coefficients", "generate_burgers", "solve_burgers"]


def etdrk4_coefficients(hl: np.ndarray, n_contour: int = 32) -> dict[str, np.ndarray]:
    """ETDRK4's coefficients for the diagonal linear operator ``h L`` (Kassam & Trefethen, eq. 2.5
    with the phi functions by contour integral, their Section 3 and Figure 3.1's code).

    Each phi function ``f(z)`` is the mean of ``f`` over ``n_contour`` points on the upper half
    of the unit circle around ``z = h L`` (real ``L``: the real part of the half-circle mean is the
    full-circle mean), which avoids the cancellation of the closed forms near ``z = 0``.

    Args:
        hl: ``h * L``, real float64, any shape (here [n/2 + 1]).
        n_contour: quadrature points on the half circle.

    Returns:
        ``{"E": e^{hL}, "E2": e^{hL/2}, "Q", "f1", "f2", "f3"}``, float64 arrays shaped like
        ``hl``; ``Q`` and ``f1..f3`` lack Kassam & Trefethen's factor ``h``, which
        :func:`_etdrk4_step` applies.
    """
    hl = np.asarray(hl, dtype=np.float64)
    roots = np.exp(1j * np.pi * (np.arange(1, n_contour + 1) - 0.5) / n_contour)
    z = hl[..., None] + roots  # [..., n_contour] points around each h L
    ez = np.exp(z)
    return {
        "E": np.exp(hl),
        "E2": np.exp(hl / 2),
        "Q": np.mean((np.exp(z / 2) - 1) / z, axis=-1).real,
        "f1": np.mean((-4 - z + ez * (4 - 3 * z + z**2)) / z**3, axis=-1).real,
        "f2": np.mean((2 + z + ez * (z - 2)) / z**3, axis=-1).real,
        "f3": np.mean((-4 - 3 * z - z**2 + ez * (4 - z)) / z**3, axis=-1).real,
    }


class _BurgersSpectral:
    """The pieces of the pseudo-spectral discretisation on n points (n even)."""

    def __init__(self, n: int, nu: float):
        self.n = n
        m = np.arange(n // 2 + 1)  # rfft mode numbers
        self.ik = 2j * np.pi * m  # d/dx
        self.lin = -nu * (2 * np.pi * m) ** 2  # L_m, float64 [n/2+1]
        self.mask = m < n / 3  # Orszag's 2/3 rule

    def nonlinear(self, v: np.ndarray) -> np.ndarray:
        """N(v) = -(1/2) d/dx FFT(u^2), dealiased; v: [batch, n/2+1] complex128."""
        u = np.fft.irfft(v * self.mask, n=self.n, axis=-1)
        return -0.5 * self.ik * self.mask * np.fft.rfft(u * u, axis=-1)


def _etdrk4_step(sp: _BurgersSpectral, c: dict, h: float, v: np.ndarray) -> np.ndarray:
    """One ETDRK4 step of size h (Cox & Matthews eq. 26-29; Kassam & Trefethen eq. 2.5)."""
    nv = sp.nonlinear(v)
    a = c["E2"] * v + h * c["Q"] * nv
    na = sp.nonlinear(a)
    b = c["E2"] * v + h * c["Q"] * na
    nb = sp.nonlinear(b)
    cc = c["E2"] * a + h * c["Q"] * (2 * nb - nv)
    nc = sp.nonlinear(cc)
    return c["E"] * v + h * (c["f1"] * nv + 2 * c["f2"] * (na + nb) + c["f3"] * nc)


def solve_burgers(u0, nu: float, times, dt: float) -> np.ndarray:
    """Solve u_t + (u^2/2)_x = nu u_xx on [0, 1) periodic, pseudo-spectral + ETDRK4.

    Args:
        u0: initial values at ``x_j = j / n``, float64 ``[n]`` or ``[batch, n]`` (n even, >= 4).
        nu: viscosity (> 0; units length^2 / time).
        times: increasing output times ``[nt]`` with ``times[0] >= 0`` measured from u0's time 0;
            a time 0 returns u0 itself.
        dt: the largest time step; each interval between outputs is cut into
            ``ceil(interval / dt)`` equal steps.

    Returns:
        float64 ``[batch, nt, n]`` (``[nt, n]`` for a 1-D ``u0``).

    Raises:
        BlowUpError: (a ``FloatingPointError``) naming the batch rows whose solution is not
            finite at an output time.
    """
    u0 = np.asarray(u0, dtype=np.float64)
    single = u0.ndim == 1
    u0 = np.atleast_2d(u0)
    n = u0.shape[-1]
    if u0.ndim != 2 or n % 2 or n < 4:
        raise ValueError(
            f"solve_burgers: u0 must be [n] or [batch, n] with n even >= 4, got {u0.shape}"
        )
    times = check_solver_args("solve_burgers", nu, dt, times)
    sp = _BurgersSpectral(n, nu)
    coef_cache: dict[float, dict] = {}

    def stepper(h):
        c = coef_cache.get(h)
        if c is None:
            c = coef_cache.setdefault(h, etdrk4_coefficients(h * sp.lin))
        return lambda v: _etdrk4_step(sp, c, h, v)

    states = march(np.fft.rfft(u0, axis=-1), times, dt, stepper, "solve_burgers")
    out = np.empty((u0.shape[0], times.size, n))
    for j, (t_out, v) in enumerate(zip(times, states)):
        out[:, j] = u0 if j == 0 and t_out == 0 else np.fft.irfft(v, n=n, axis=-1)
    return out[0] if single else out


def cole_hopf_solution(x, t, nu: float, a: float, modes) -> np.ndarray:
    """An exact solution of viscous Burgers by the Cole-Hopf transform (Hopf 1950; Cole 1951).

    With ``phi(x, t) = a + sum_m b_m exp(-4 pi^2 m^2 nu t) cos(2 pi m x + theta_m)``, a positive
    solution of the heat equation ``phi_t = nu phi_xx`` (``a > sum |b_m|``),
    ``u = -2 nu phi_x / phi`` solves ``u_t + u u_x = nu u_xx`` exactly, periodic on [0, 1).

    Args:
        x: points, float64, any shape; ``t``: a time (broadcasts against ``x``).
        nu: viscosity. a: the constant of phi.
        modes: ``[(m, b_m, theta_m), ...]`` with integer ``m >= 1``.

    Returns:
        u(x, t), float64, the broadcast shape of x and t.
    """
    x = np.asarray(x, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    if not a > sum(abs(b) for _, b, _ in modes):
        raise ValueError(f"cole_hopf_solution: need a > sum |b_m| so that phi > 0, got a={a}")
    phi = a + 0 * x * t
    phi_x = 0 * phi
    for m, b, theta in modes:
        decay = b * np.exp(-4 * np.pi**2 * m**2 * nu * t)
        phi = phi + decay * np.cos(2 * np.pi * m * x + theta)
        phi_x = phi_x - 2 * np.pi * m * decay * np.sin(2 * np.pi * m * x + theta)
    return -2 * nu * phi_x / phi


def generate_burgers(
    n_samples: int,
    *,
    resolution: int = 1024,
    subsample: int = 1,
    nu: float = 0.1,
    t_final: float = 1.0,
    n_time: int = 11,
    dt: float = 1e-3,
    scale: float = 625.0,
    tau: float = 5.0,
    alpha: float = 2.0,
    seed: int = 0,
    path=None,
    overwrite: bool = False,
    dtype=np.float64,
    batch_size: int = 16,
    progress: bool = True,
) -> dict[str, np.ndarray]:
    """Generate a Burgers data set as in the FNO paper (Li et al. 2021, Section 5.1).

    Each sample: ``u0 ~ N(0, scale (-Δ + tau^2 I)^(-alpha))`` (mean mode zero, as FNO's
    generator) on ``resolution`` points, solved with :func:`solve_burgers` and stored at
    ``n_time`` equally spaced times in [0, t_final] on every ``subsample``-th point. FNO's own
    setting is ``resolution=8192, subsample=8`` (or 1, 2, 4...), ``nu=0.1, t_final=1``.

    Args:
        n_samples: number of samples N.
        resolution: solver grid points on [0, 1) (even); x_j = j / resolution.
        subsample: keep every subsample-th point (must divide resolution).
        nu: viscosity. t_final: last stored time. n_time: stored times (>= 2, t = 0 included).
        dt: largest solver step. ETDRK4 integrates the stiff viscous part exactly, so the step
            is bounded by accuracy and the advective time scale only: with FNO's GRF, 1e-3 is
            stable for nu from 0.1 down to 1e-3 at 1024 and 8192 points, with a time error about
            5e-11 at nu = 0.1 (a run that blows up raises ``BlowUpError`` naming the samples).
        scale, tau, alpha: the GRF of the initial conditions (see ``grf.periodic_grf``).
        seed: sample i is drawn from ``SeedSequence(seed).spawn(N)[i]``: same seed, same data.
        path: where to write the PDEBench "single" file (``.h5``/``.hdf5``); None writes nothing.
        overwrite: replace an existing file at ``path``.
        dtype: the dtype written to the file (the numerics are float64 either way).
        batch_size: samples solved together (vectorised); the progress bar advances per batch.
        progress: show a tqdm bar over the samples.

    Returns:
        ``{"tensor": [N, n_time, resolution / subsample], "x-coordinate": [Nx],
        "t-coordinate": [n_time]}``, float64: the same arrays the file holds.
    """
    n_samples, resolution, subsample, n_time = check_periodic_grid(
        "generate_burgers", n_samples, resolution, subsample, n_time
    )
    if not t_final > 0:
        raise ValueError(f"generate_burgers: t_final must be > 0, got {t_final}")
    times = np.linspace(0.0, t_final, n_time)
    x = np.arange(resolution) / resolution
    tensor = np.empty((n_samples, n_time, resolution // subsample))
    settings = f"dt={dt}, nu={nu}, resolution={resolution}"
    for start, stop, rngs in sample_batches(seed, n_samples, batch_size, "burgers", progress):
        u0 = np.concatenate(
            [periodic_grf(r, resolution, scale=scale, tau=tau, alpha=alpha) for r in rngs]
        )  # [batch, resolution]
        with naming_samples("generate_burgers", start, settings):
            u = solve_burgers(u0, nu, times, dt)  # [batch, n_time, resolution]
        tensor[start:stop] = u[..., ::subsample]
    return save(
        {"tensor": tensor, "x-coordinate": x[::subsample], "t-coordinate": times},
        path,
        "single",
        overwrite,
        dtype,
        pde="burgers1d",
        equation="1D Burgers u_t + (u^2/2)_x = nu u_xx, periodic x in [0, 1)",
        parameters={
            "nu": nu,
            "t_final": t_final,
            "initial_condition": f"GRF N(0, {scale} (-Laplacian + {tau}^2 I)^-{alpha}), zero mean",
            "dt": dt,
            "method": "pseudo-spectral, 2/3 dealiasing, ETDRK4 (Kassam & Trefethen 2005)",
        },
        grid={
            "resolution": resolution,
            "subsample": subsample,
            "nx": resolution // subsample,
            "nt": n_time,
        },
        generator="generate_burgers",
        seed=seed,
    )
