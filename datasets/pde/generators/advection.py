"""1D linear advection u_t + beta u_x = 0 on the periodic unit interval, PDEBench's data
(Takamoto et al., "PDEBench", NeurIPS 2022 Datasets and Benchmarks, Section 3 and Appendix D.1).

The solution is exact: ``u(x, t) = u0((x - beta t) mod 1)``, the initial condition evaluated at
the characteristic's foot, with no discretisation at all (PDEBench solves it with a
finite-volume scheme; the exact values here are what that scheme approximates).

Initial conditions follow PDEBench's family (its ``init_multi`` in ``data_gen_NLE/utils.py``):
a sum of ``n_waves`` sines ``sum_i A_i sin(2 pi k_i x + phi_i)`` with integer wavenumbers
``k_i`` drawn from 1..k_max, amplitudes ``A_i ~ U(0, 1)`` and phases ``phi_i ~ U(0, 2 pi)``;
then with probability 0.1 the absolute value is taken, the sign is flipped with probability
0.5, and with probability 0.1 the profile is multiplied by the window
``(tanh((x - x_L) / 0.01) - tanh((x - x_R) / 0.01)) / 2`` with ``x_L ~ U(0.1, 0.45)``,
``x_R ~ U(0.55, 0.9)``. (PDEBench divides ``2 pi k`` by ``x_last - x_first``, one cell short
of the period; here the sines are exactly 1-periodic.) The grid is PDEBench's: ``nx`` cell
centres ``(i + 1/2) / nx``, times ``0, dt_save, ..., t_final`` (PDEBench: nx = 1024,
dt_save = 0.01, t_final = 2, beta in {0.1, 0.2, 0.4, 1, 2, 4}).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._common import check_count, sample_batches, save

__all__ = ["AdvectionInitialCondition", "generate_advection", "sample_initial_condition"]


@dataclass(frozen=True)
class AdvectionInitialCondition:
    """One initial condition of PDEBench's family, as a function of x (see the module doc).

    Attributes:
        wavenumbers: integer k_i, ``[n_waves]``. amplitudes: A_i ``[n_waves]``. phases: phi_i
            ``[n_waves]`` (radians). absolute: take |.| of the sum. sign: +1 or -1.
        window: ``(x_L, x_R)`` of the tanh window, or None. width: the window's transition (0.01).
    """

    wavenumbers: np.ndarray
    amplitudes: np.ndarray
    phases: np.ndarray
    absolute: bool
    sign: float
    window: tuple[float, float] | None
    width: float = 0.01

    def __call__(self, x) -> np.ndarray:
        """u0 at ``x`` (float64, any shape; taken mod 1 for the window, the sines are periodic)."""
        x = np.asarray(x, dtype=np.float64)
        arg = 2 * np.pi * self.wavenumbers[:, None] * x.reshape(-1)[None, :] + self.phases[:, None]
        u = (self.amplitudes[:, None] * np.sin(arg)).sum(axis=0).reshape(x.shape)
        if self.absolute:
            u = np.abs(u)
        u = self.sign * u
        if self.window is not None:
            xl, xr = self.window
            xm = np.mod(x, 1.0)
            u = u * 0.5 * (np.tanh((xm - xl) / self.width) - np.tanh((xm - xr) / self.width))
        return u


def sample_initial_condition(
    rng: np.random.Generator, k_max: int = 8, n_waves: int = 2
) -> AdvectionInitialCondition:
    """Draw one initial condition of PDEBench's family (module doc) from ``rng``."""
    k_max = check_count("k_max", k_max)
    n_waves = check_count("n_waves", n_waves)
    k = rng.integers(1, k_max + 1, size=n_waves)
    amp = rng.uniform(0.0, 1.0, size=n_waves)
    phase = rng.uniform(0.0, 2 * np.pi, size=n_waves)
    absolute = bool(rng.uniform() < 0.1)
    sign = 1.0 if rng.uniform() < 0.5 else -1.0
    windowed = bool(rng.uniform() < 0.1)
    xl, xr = rng.uniform(0.1, 0.45), rng.uniform(0.55, 0.9)
    return AdvectionInitialCondition(
        k.astype(np.float64), amp, phase, absolute, sign, (xl, xr) if windowed else None
    )


def generate_advection(
    n_samples: int,
    *,
    beta: float = 1.0,
    nx: int = 1024,
    t_final: float = 2.0,
    dt_save: float = 0.01,
    k_max: int = 8,
    n_waves: int = 2,
    seed: int = 0,
    path=None,
    overwrite: bool = False,
    dtype=np.float64,
    batch_size: int = 64,
    progress: bool = True,
) -> dict[str, np.ndarray]:
    """Generate a 1D advection data set in PDEBench's setting, exactly.

    Args:
        n_samples: number of samples N.
        beta: advection speed (any sign; length / time).
        nx: cells on [0, 1]; values at the centres ``(i + 1/2) / nx``.
        t_final, dt_save: stored times ``0, dt_save, ..., t_final``
            (``round(t_final / dt_save) + 1`` of them; t_final must be a multiple of dt_save).
        k_max, n_waves: the initial conditions' wavenumber range and number of sines.
        seed: sample i is drawn from ``SeedSequence(seed).spawn(N)[i]``: same seed, same data.
        path: where to write the PDEBench "single" file; None writes nothing.
        overwrite: replace an existing file. dtype: the dtype written (values are float64).
        batch_size: samples per progress-bar step. progress: show a tqdm bar.

    Returns:
        ``{"tensor": [N, Nt, nx], "x-coordinate": [nx], "t-coordinate": [Nt]}``, float64.
    """
    n_samples = check_count("n_samples", n_samples)
    nx = check_count("nx", nx, 2)
    if not (t_final > 0 and dt_save > 0):
        raise ValueError(
            f"generate_advection: need t_final > 0 and dt_save > 0, got {t_final}, {dt_save}"
        )
    n_steps = round(t_final / dt_save)
    if abs(n_steps * dt_save - t_final) > 1e-9 * t_final:
        raise ValueError(
            f"generate_advection: t_final={t_final} must be a multiple of dt_save={dt_save}"
        )
    if not np.isfinite(beta):
        raise ValueError(f"generate_advection: beta must be finite, got {beta}")
    x = (np.arange(nx) + 0.5) / nx
    times = np.arange(n_steps + 1) * dt_save
    feet = x[None, :] - beta * times[:, None]  # characteristic feet [Nt, nx]
    tensor = np.empty((n_samples, times.size, nx))
    for start, _stop, rngs in sample_batches(seed, n_samples, batch_size, "advection", progress):
        for i, rng in enumerate(rngs, start):
            tensor[i] = sample_initial_condition(rng, k_max, n_waves)(feet)
    return save(
        {"tensor": tensor, "x-coordinate": x, "t-coordinate": times},
        path,
        "single",
        overwrite,
        dtype,
        pde="advection1d",
        equation="1D advection u_t + beta u_x = 0, periodic x in [0, 1)",
        parameters={
            "beta": beta,
            "t_final": t_final,
            "dt_save": dt_save,
            "initial_condition": f"PDEBench init_multi: {n_waves} sines, k in 1..{k_max}, "
            "U(0,1) amplitudes, U(0,2pi) phases, p=0.1 abs, random sign, p=0.1 tanh window",
            "method": "exact: u0((x - beta t) mod 1)",
        },
        grid={"nx": nx, "nt": times.size, "x": "cell centres (i + 1/2) / nx"},
        generator="generate_advection",
        seed=seed,
    )
