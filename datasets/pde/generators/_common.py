"""What every generator shares: per-sample random streams, batching with a progress bar, blow-ups
named by sample, the metadata card and writing through ``datasets.pde.write_pdebench``."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
from tqdm.auto import tqdm

from ..card import make_card
from ..writer import write_pdebench

GENERATOR_VERSION = "1"


def sample_rngs(seed: int, n_samples: int) -> list[np.random.Generator]:
    """One independent stream per sample, spawned from ``seed`` (``numpy.random.SeedSequence``).

    Sample i depends only on ``(seed, i)``: the first k samples of an n-sample set are the
    k-sample set, whatever the batch size.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    children = np.random.SeedSequence(int(seed)).spawn(int(n_samples))
    return [np.random.default_rng(child) for child in children]


def check_count(name: str, value, minimum: int = 1) -> int:
    """``value`` as an int, or a ValueError naming the argument."""
    if isinstance(value, bool) or int(value) != value or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def sample_batches(
    seed: int, n_samples: int, batch_size: int, desc: str, progress: bool
) -> Iterator[tuple[int, int, list[np.random.Generator]]]:
    """Yield ``(start, stop, rngs)`` over the samples in batches, ``rngs`` the batch's streams
    from :func:`sample_rngs`; the tqdm bar advances once the caller is done with a batch."""
    rngs = sample_rngs(seed, n_samples)
    batch_size = check_count("batch_size", batch_size)
    with tqdm(total=n_samples, desc=desc, unit="sample", disable=not progress) as bar:
        for start in range(0, n_samples, batch_size):
            stop = min(start + batch_size, n_samples)
            yield start, stop, rngs[start:stop]
            bar.update(stop - start)


def check_periodic_grid(
    where: str, n_samples, resolution, subsample, n_time
) -> tuple[int, int, int, int]:
    """The sizes of a pseudo-spectral generator on the periodic grid, as ints: ``n_samples >= 1``,
    ``resolution >= 4`` and even, ``subsample`` dividing it, ``n_time >= 2``."""
    n_samples = check_count("n_samples", n_samples)
    resolution = check_count("resolution", resolution, 4)
    subsample = check_count("subsample", subsample)
    n_time = check_count("n_time", n_time, 2)
    if resolution % 2 or resolution % subsample:
        raise ValueError(
            f"{where}: resolution must be even and divisible by subsample, got "
            f"resolution={resolution}, subsample={subsample}"
        )
    return n_samples, resolution, subsample, n_time


class BlowUpError(FloatingPointError):
    """A time integration produced non-finite values; ``rows`` are the batch rows that did."""

    def __init__(self, message: str, rows: list[int]):
        super().__init__(message)
        self.rows = rows


def check_finite(state: np.ndarray, where: str, t: float, dt: float) -> None:
    """Raise :class:`BlowUpError` naming the rows of ``state`` [batch, ...] that are not finite."""
    bad = ~np.isfinite(state.reshape(state.shape[0], -1)).all(axis=1)
    if bad.any():
        rows = np.flatnonzero(bad).tolist()
        raise BlowUpError(
            f"{where}: the solution of batch row(s) {rows} is not finite by t={t:g} with the "
            f"step {dt:g}; pass a smaller dt",
            rows,
        )


@contextmanager
def naming_samples(where: str, start: int, settings: str):
    """Re-raise a :class:`BlowUpError` of the batch that begins at sample ``start`` with the
    samples' numbers (its rows shifted by ``start``) and the ``settings`` to blame."""
    try:
        yield
    except BlowUpError as e:
        samples = [start + r for r in e.rows]
        raise BlowUpError(
            f"{where}: sample(s) {samples} blew up with {settings}; pass a smaller dt", samples
        ) from e


def check_solver_args(where: str, nu: float, dt: float, times) -> np.ndarray:
    """A time-stepping solver's ``nu > 0``, ``dt > 0`` and output ``times``: float64 ``[nt]``,
    increasing, ``>= 0``."""
    if not nu > 0 or not dt > 0:
        raise ValueError(f"{where}: need nu > 0 and dt > 0, got nu={nu}, dt={dt}")
    times = np.asarray(times, dtype=np.float64).reshape(-1)
    if times.size == 0 or times[0] < 0 or np.any(np.diff(times) <= 0):
        raise ValueError(f"{where}: times must be increasing and >= 0, got {times}")
    return times


def march(
    state: np.ndarray,
    times: np.ndarray,
    dt: float,
    stepper: Callable[[float], Callable[[np.ndarray], np.ndarray]],
    where: str,
) -> Iterator[np.ndarray]:
    """Yield the state ``[batch, ...]`` at each output time of ``times`` (from time 0).

    Each interval between outputs is cut into ``ceil(interval / dt)`` equal steps ``h``;
    ``stepper(h)`` gives the one-step map ``state -> state`` (built once per interval, outside
    the floating-point checks). Overflow in the steps is tolerated and checked at the output
    time: non-finite batch rows raise :class:`BlowUpError`.
    """
    t = 0.0
    for t_out in times:
        steps = math.ceil((t_out - t) / dt - 1e-9) if t_out > t else 0
        if steps:
            h = (t_out - t) / steps
            step = stepper(h)
            with np.errstate(over="ignore", invalid="ignore"):  # checked just below
                for _ in range(steps):
                    state = step(state)
            check_finite(state, where, t_out, h)
        t = t_out
        yield state


def card(pde: str, equation: str, parameters: dict, grid: dict, generator: str, seed: int) -> dict:
    """The metadata card stored with the file (``datasets.pde.card``: pde (a short id such as
    ``"burgers1d"``), parameters, grid, generator, seed, and diffsci's version), plus the
    ``equation`` in words and ``generator_version``, bumped whenever a generator's output for a
    given seed changes."""
    return make_card(
        pde,
        parameters,
        grid,
        generator=f"datasets.pde.generators.{generator}",
        seed=int(seed),
        equation=equation,
        generator_version=GENERATOR_VERSION,
    )


def save(
    arrays: dict,
    path,
    layout: str,
    overwrite: bool,
    dtype,
    *,
    pde: str,
    equation: str,
    parameters: dict,
    grid: dict,
    generator: str,
    seed: int,
) -> dict:
    """``arrays``, after writing them (cast to ``dtype``) with their :func:`card` through the
    PDEBench writer, atomically, to ``path`` in ``layout``; ``path=None`` writes nothing."""
    if path is not None:
        meta = card(pde, equation, parameters, grid, generator, seed)
        data = {k: np.asarray(v, dtype=dtype) for k, v in arrays.items()}
        write_pdebench(os.fspath(path), layout, data, card=meta, overwrite=overwrite)
    return arrays
