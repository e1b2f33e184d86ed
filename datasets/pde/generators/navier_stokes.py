"""2D incompressible Navier-Stokes in vorticity form on the unit torus, the FNO paper's data
(Li et al., ICLR 2021, Section 5.3).

    w_t + u . grad w = nu Δw + f,   u = (psi_y, -psi_x),   -Δpsi = w,   (x, y) in [0, 1)^2

Pseudo-spectral in space (Fourier modes ``k = (k_x, k_y)``, ``|k|`` in cycles per unit length;
``psi_k = w_k / (4 pi^2 |k|^2)``, the mean mode of psi set to zero), the advection term formed
in physical space from dealiased fields and dealiased again (Orszag's 2/3 rule: modes with
``|k_x| >= n/3`` or ``|k_y| >= n/3`` zeroed). In time, Crank-Nicolson for the diffusion and
Heun's method (explicit trapezoidal) for advection and forcing, the scheme of FNO's data
generator (Canuto, Hussaini, Quarteroni & Zang, "Spectral Methods", 2006, Section 4.3 for the
mixed CN/explicit step)::

    w~   = [(1 - dt nu L/2) w + dt (f - A(w))] / (1 + dt nu L/2)
    w^+  = [(1 - dt nu L/2) w + dt f - dt/2 (A(w) + A(w~))] / (1 + dt nu L/2)

with ``L = 4 pi^2 |k|^2`` and ``A(w) = FFT(u . grad w)``: second order in time.

:func:`generate_navier_stokes` draws the initial vorticity from the FNO paper's Gaussian random
field N(0, 7^{3/2} (-Δ + 49 I)^-2.5) (mean zero, as a vorticity on the torus must be) and forces
with ``f = 0.1 (sin(2 pi (x + y)) + cos(2 pi (x + y)))``. FNO generates at 256 x 256 with
``dt = 1e-4`` and stores 64 x 64 every time unit up to T = 50 (nu = 1e-3), T = 30 (1e-4),
T = 20 (1e-5). FNO's code (``random_fields.py``) scales its field by ``sqrt(2) * 7^{3/2}`` in
standard deviation, i.e. a covariance prefactor ``2 * 7^3``: pass ``scale=2 * 7**3`` to match
its amplitude instead of the paper's formula.
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

__all__ = [
    "fno_forcing",
    "generate_navier_stokes",
    "solve_navier_stokes",
    "velocity_from_vorticity",
]


def fno_forcing(n: int) -> np.ndarray:
    """FNO's forcing ``0.1 (sin(2 pi (x + y)) + cos(2 pi (x + y)))`` at ``x_i = i/n, y_j = j/n``:
    float64 ``[n, n]`` (axis 0 is x)."""
    x = np.arange(n) / n
    s = 2 * np.pi * (x[:, None] + x[None, :])
    return 0.1 * (np.sin(s) + np.cos(s))


class _Spectral2D:
    """Wavenumbers, the Laplacian's symbol and the 2/3 mask on the rfft2 grid of n x n."""

    def __init__(self, n: int):
        self.n = n
        kx = np.fft.fftfreq(n, 1.0 / n)[:, None]  # [n, 1] cycles per unit length
        ky = np.fft.rfftfreq(n, 1.0 / n)[None, :]  # [1, n/2+1]
        self.ikx = 2j * np.pi * kx
        self.iky = 2j * np.pi * ky
        self.lap = 4 * np.pi**2 * (kx**2 + ky**2)  # symbol of -Δ, [n, n/2+1]
        inv = np.zeros_like(self.lap)
        inv[self.lap > 0] = 1.0 / self.lap[self.lap > 0]
        self.inv_lap = inv  # psi_k = w_k * inv_lap (mean mode 0)
        self.mask = (np.abs(kx) < n / 3) & (np.abs(ky) < n / 3)

    def irfft(self, z):
        return np.fft.irfft2(z, s=(self.n, self.n), axes=(-2, -1))

    def advection(self, wh: np.ndarray) -> np.ndarray:
        """FFT(u . grad w), dealiased; wh: [batch, n, n/2+1] complex128."""
        wh = wh * self.mask
        psih = wh * self.inv_lap
        u = self.irfft(self.iky * psih)  # psi_y
        v = self.irfft(-self.ikx * psih)  # -psi_x
        wx = self.irfft(self.ikx * wh)
        wy = self.irfft(self.iky * wh)
        return self.mask * np.fft.rfft2(u * wx + v * wy, axes=(-2, -1))


def velocity_from_vorticity(w) -> tuple[np.ndarray, np.ndarray]:
    """The divergence-free velocity ``(psi_y, -psi_x)`` with ``-Δpsi = w`` on the torus.

    Args:
        w: vorticity, float64 ``[..., n, n]`` (axis -2 is x), mean zero.

    Returns:
        ``(u, v)``, each float64 shaped like ``w``.
    """
    w = np.asarray(w, dtype=np.float64)
    s = _Spectral2D(w.shape[-1])
    psih = np.fft.rfft2(w, axes=(-2, -1)) * s.inv_lap
    return s.irfft(s.iky * psih), s.irfft(-s.ikx * psih)


def solve_navier_stokes(w0, nu: float, times, dt: float, forcing=None) -> np.ndarray:
    """Integrate the vorticity equation (module doc) from ``w0`` at time 0.

    Args:
        w0: initial vorticity at ``(i/n, j/n)``, float64 ``[n, n]`` or ``[batch, n, n]`` (n even).
        nu: viscosity (> 0). dt: the largest time step (each output interval is cut into
            ``ceil(interval / dt)`` equal steps).
        times: increasing output times ``[nt]``, ``>= 0``.
        forcing: f at the grid points, float64 ``[n, n]`` (time independent), or None for none.

    Returns:
        float64 ``[batch, nt, n, n]`` (``[nt, n, n]`` for a 2-D ``w0``).

    Raises:
        BlowUpError: (a ``FloatingPointError``) naming the batch rows that are not finite at an
            output time.
    """
    w0 = np.asarray(w0, dtype=np.float64)
    single = w0.ndim == 2
    w0 = w0[None] if single else w0
    n = w0.shape[-1]
    if w0.ndim != 3 or w0.shape[-2] != n or n % 2 or n < 4:
        raise ValueError(
            f"solve_navier_stokes: w0 must be [n, n] or [batch, n, n] with n even >= 4, got {w0.shape}"
        )
    times = check_solver_args("solve_navier_stokes", nu, dt, times)
    sp = _Spectral2D(n)
    if forcing is None:
        fh = 0.0
    else:
        forcing = np.asarray(forcing, dtype=np.float64)
        if forcing.shape != (n, n):
            raise ValueError(
                f"solve_navier_stokes: forcing must be [{n}, {n}], got {forcing.shape}"
            )
        fh = np.fft.rfft2(forcing)

    def stepper(h):
        explicit = 1.0 - 0.5 * h * nu * sp.lap  # CN's explicit half
        implicit = 1.0 / (1.0 + 0.5 * h * nu * sp.lap)  # CN's implicit half

        def step(wh):
            adv = sp.advection(wh)
            base = explicit * wh + h * fh
            w_pred = (base - h * adv) * implicit  # Euler predictor
            return (base - 0.5 * h * (adv + sp.advection(w_pred))) * implicit  # trapezoid

        return step

    states = march(np.fft.rfft2(w0, axes=(-2, -1)), times, dt, stepper, "solve_navier_stokes")
    out = np.empty((w0.shape[0], times.size, n, n))
    for j, (t_out, wh) in enumerate(zip(times, states)):
        out[:, j] = w0 if j == 0 and t_out == 0 else sp.irfft(wh)
    return out[0] if single else out


def generate_navier_stokes(
    n_samples: int,
    *,
    resolution: int = 256,
    subsample: int = 4,
    nu: float = 1e-3,
    t_final: float = 50.0,
    n_time: int = 51,
    dt: float = 1e-3,
    forcing: str = "fno",
    scale: float = 7.0**1.5,
    tau: float = 7.0,
    alpha: float = 2.5,
    seed: int = 0,
    path=None,
    overwrite: bool = False,
    dtype=np.float64,
    batch_size: int = 8,
    progress: bool = True,
) -> dict[str, np.ndarray]:
    """Generate a Navier-Stokes vorticity data set as in the FNO paper (Section 5.3).

    Each sample: ``w0 ~ N(0, scale (-Δ + tau^2 I)^(-alpha))`` (mean zero) on ``resolution^2``
    points, :func:`solve_navier_stokes` with FNO's forcing, stored at ``n_time`` equally spaced
    times in [0, t_final] on every ``subsample``-th point per axis.

    Args:
        n_samples: number of samples N.
        resolution: solver points per side (even); ``x_i = i / resolution``.
        subsample: keep every subsample-th point (must divide resolution).
        nu: viscosity. t_final: last stored time. n_time: stored times (>= 2, t = 0 included).
        dt: largest solver step. FNO uses 1e-4 at 256^2; with 1e-3 the advective CFL number
            ``max|u| k_max dt`` stays near 0.1 at 256^2 (|u| grows to about 0.2 as the forcing
            builds the flow, nu = 1e-3) and the time error is about 1e-9 at T = 5 (measured
            against dt / 2 at 64^2).
        forcing: ``"fno"`` (FNO's f) or ``"none"``.
        scale, tau, alpha: the GRF of the initial vorticity (see ``grf.periodic_grf``).
        seed: sample i is drawn from ``SeedSequence(seed).spawn(N)[i]``: same seed, same data.
        path: where to write the PDEBench "single" file (2D: x-, y- and t-coordinate); None
            writes nothing. overwrite: replace an existing file. dtype: the dtype written.
        batch_size: samples integrated together (vectorised). progress: show a tqdm bar.

    Returns:
        ``{"tensor": w [N, n_time, Nx, Ny], "x-coordinate": [Nx], "y-coordinate": [Ny],
        "t-coordinate": [n_time]}`` float64, ``Nx = Ny = resolution / subsample``.
    """
    n_samples, resolution, subsample, n_time = check_periodic_grid(
        "generate_navier_stokes", n_samples, resolution, subsample, n_time
    )
    if forcing not in ("fno", "none"):
        raise ValueError(
            f"generate_navier_stokes: forcing must be 'fno' or 'none', got {forcing!r}"
        )
    if not t_final > 0:
        raise ValueError(f"generate_navier_stokes: t_final must be > 0, got {t_final}")
    f = fno_forcing(resolution) if forcing == "fno" else None
    times = np.linspace(0.0, t_final, n_time)
    x = np.arange(resolution)[::subsample] / resolution
    tensor = np.empty((n_samples, n_time, x.size, x.size))
    settings = f"dt={dt}, nu={nu}, resolution={resolution}"
    batches = sample_batches(seed, n_samples, batch_size, "navier-stokes", progress)
    for start, stop, rngs in batches:
        w0 = np.concatenate(
            [
                periodic_grf(r, (resolution, resolution), scale=scale, tau=tau, alpha=alpha)
                for r in rngs
            ]
        )  # [batch, resolution, resolution]
        with naming_samples("generate_navier_stokes", start, settings):
            w = solve_navier_stokes(w0, nu, times, dt, f)  # [batch, n_time, n, n]
        tensor[start:stop] = w[..., ::subsample, ::subsample]
    return save(
        {"tensor": tensor, "x-coordinate": x, "y-coordinate": x.copy(), "t-coordinate": times},
        path,
        "single",
        overwrite,
        dtype,
        pde="navier_stokes2d_vorticity",
        equation="2D incompressible Navier-Stokes, vorticity form w_t + u.grad w = nu Lap w + f, "
        "unit torus",
        parameters={
            "nu": nu,
            "t_final": t_final,
            "dt": dt,
            "forcing": "0.1 (sin(2 pi (x+y)) + cos(2 pi (x+y)))" if forcing == "fno" else "0",
            "initial_condition": f"GRF N(0, {scale} (-Laplacian + {tau}^2 I)^-{alpha}), zero mean",
            "method": "pseudo-spectral, 2/3 dealiasing, Crank-Nicolson diffusion + Heun advection",
        },
        grid={
            "resolution": resolution,
            "subsample": subsample,
            "nx": x.size,
            "ny": x.size,
            "nt": n_time,
        },
        generator="generate_navier_stokes",
        seed=seed,
    )
