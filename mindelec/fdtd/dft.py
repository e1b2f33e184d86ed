"""Running discrete Fourier transform of a field during the time loop.

At chosen frequencies ``f_k`` the accumulator keeps

    F_k = sum_n  u(t_n) exp(-i 2 pi f_k t_n) dt                                   (1)

(Taflove & Hagness, *Computational Electrodynamics*, 3rd ed., sec. 5.6; the same sum as
MindElec's ``compute_dft``), updated once per step from the field ``u`` at its own time
``t_n`` (E at ``n dt``, H at ``(n + 1/2) dt``): memory ``[nf, *field_shape]`` instead of the
whole history. The sum is the exact value of (1) for the samples given, so for a sampled
sinusoid it equals the closed-form geometric series (tests), and it approximates the
continuous transform ``integral u(t) exp(-i w t) dt`` to the aliasing error of the samples.

Real and imaginary parts are kept as two real tensors (``DFTState.re``, ``DFTState.im``) of
the field's dtype, updated with core ops: the update is differentiable with respect to the
field (and to ``t`` when it is a tensor), and runs inside ``core.jit`` and ``ops.scan`` bodies.
``dft_update`` is the pure function for a loop body; ``RunningDFT`` wraps it for eager use;
``DFTMonitor`` is the ``Simulation`` monitor (the carry of the time loop is the accumulator).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from diffsci import core
from diffsci.core import ops

from .monitors import Monitor

__all__ = ["DFTMonitor", "DFTState", "RunningDFT", "dft_init", "dft_update", "dft_value"]


@core.tree.register_dataclass
@dataclasses.dataclass
class DFTState:
    """Accumulated transform (1): ``re`` and ``im``, each ``[nf, *field_shape]`` (field unit x s)."""

    re: core.Tensor
    im: core.Tensor


def dft_init(n_freqs: int, field_shape, dtype=core.float64) -> DFTState:
    """A zero accumulator for ``n_freqs`` frequencies and fields of ``field_shape``."""
    shape = (int(n_freqs), *tuple(int(n) for n in field_shape))
    return DFTState(core.zeros(shape, dtype=dtype), core.zeros(shape, dtype=dtype))


def _as_freqs(freqs) -> np.ndarray:
    f = np.atleast_1d(np.asarray(freqs, dtype=np.float64))
    if f.ndim != 1 or not np.all(np.isfinite(f)) or np.any(f < 0):
        raise ValueError(f"DFT frequencies must be a 1-D array of finite values >= 0 Hz, got {f}")
    return f


def dft_update(state: DFTState, field, t, freqs, dt: float) -> DFTState:
    """One term of (1): ``F_k += u exp(-i 2 pi f_k t) dt``.

    Args:
        state: the accumulator, ``[nf, *S]``.
        field: ``u(t)``, a Tensor ``[*S]`` (or anything ``core.tensor`` takes).
        t: the field's time (s): a Python float or a 0-d Tensor (inside a traced loop). The
            phase ``2 pi f t`` is formed in float64 and reduced modulo ``2 pi`` before the cosine
            and sine, so the weights stay accurate late in long runs of float32 fields.
        freqs: ``[nf]`` frequencies (Hz).
        dt: the time step (s), the quadrature weight.

    Returns:
        The new ``DFTState`` (inputs are not modified).
    """
    freqs = _as_freqs(freqs)
    if not isinstance(field, core.Tensor):
        field = core.tensor(np.asarray(field), dtype=state.re.dtype)
    nf = freqs.shape[0]
    if tuple(state.re.shape) != (nf, *tuple(field.shape)):
        raise ValueError(
            f"dft_update: accumulator shape {tuple(state.re.shape)} does not match "
            f"[{nf} frequencies, *field {tuple(field.shape)}]"
        )
    bshape = (nf,) + (1,) * len(field.shape)
    if isinstance(t, core.Tensor):
        w = core.tensor((2.0 * math.pi * freqs).reshape(bshape), dtype=core.float64)
        phase = ops.mod(w * ops.astype(t, core.float64), 2.0 * math.pi)
        c = ops.astype(ops.cos(phase) * dt, field.dtype)
        s = ops.astype(ops.sin(phase) * dt, field.dtype)
    else:
        # float64 phase and a reduction of w t modulo 2 pi keep the weights exact for late t
        phase = np.mod(2.0 * math.pi * freqs * float(t), 2.0 * math.pi).reshape(bshape)
        c = core.tensor(np.cos(phase) * dt, dtype=field.dtype)
        s = core.tensor(np.sin(phase) * dt, dtype=field.dtype)
    u = ops.expand_dims(field, 0)  # [1, *S]
    return DFTState(state.re + u * c, state.im - u * s)


def dft_value(state: DFTState) -> core.Tensor:
    """The accumulated transform as one complex Tensor ``[nf, *S]`` (``re + i im``)."""
    return ops.complex(state.re, state.im)


class RunningDFT:
    """Running DFT (1) of one field at frequencies ``freqs``: the eager, stateful wrapper.

    Args:
        freqs: frequencies (Hz), ``[nf]``.
        dt: time step (s).
        field_shape: the shape ``S`` of the monitored field (a point probe: ``()``).
        dtype: accumulator dtype (float64 default; float32 accumulates rounding ~ 1e-7 N).

    ``update(field, t)`` adds one term, ``value()`` returns the complex ``[nf, *S]`` Tensor
    (differentiable with respect to every field passed in), ``state`` is the ``DFTState`` to
    carry through a loop with ``step(state, field, t)``.
    """

    def __init__(self, freqs, dt: float, field_shape=(), dtype=core.float64):
        self.freqs = _as_freqs(freqs)
        if not dt > 0:
            raise ValueError(f"RunningDFT: dt must be > 0 s, got {dt}")
        self.dt = float(dt)
        self.field_shape = tuple(int(n) for n in field_shape)
        self.dtype = dtype
        self.state = self.init()

    def init(self) -> DFTState:
        """A zero accumulator ``[nf, *S]``."""
        return dft_init(self.freqs.shape[0], self.field_shape, self.dtype)

    def step(self, state: DFTState, field, t) -> DFTState:
        """Pure update for loop bodies: ``dft_update(state, field, t, freqs, dt)``."""
        return dft_update(state, field, t, self.freqs, self.dt)

    def update(self, field, t) -> None:
        """Add ``field(t) exp(-i 2 pi f t) dt`` to the kept state."""
        self.state = self.step(self.state, field, t)

    def value(self, state: DFTState | None = None) -> core.Tensor:
        """Complex transform ``[nf, *S]`` of the kept (or given) state."""
        return dft_value(self.state if state is None else state)

    def reset(self) -> None:
        """Start again from zero."""
        self.state = self.init()


class DFTMonitor(Monitor):
    """Running DFT (1) of one field component over a region, as a ``Simulation`` monitor.

    The accumulator is the loop's carry (memory ``2 nf`` region-sized arrays whatever the step
    count); E samples are taken at ``t = (step + 1) dt`` and H samples at ``(step + 1/2) dt``,
    the times ``Simulation`` gives them (``sources.e_time``/``h_time``).

    Args:
        component: ``"ez"``, ``"hy"`` ... (a component of the grid).
        freqs: ``[nf]`` frequencies (Hz).
        region: ``None`` (the whole array) or one entry per axis, each an int index or a
            ``slice`` (a plane: ``(slice(None), 12)``).
        name: key of the result: a complex Tensor ``[nf, *region_shape]`` (field unit x s).
        allow_pml: whether the region may reach into a PML.
    """

    def __init__(self, component, freqs, region=None, name="dft", allow_pml=False):
        self.component = component
        self.freqs = _as_freqs(freqs)
        self.region = region
        self.name = name
        self.allow_pml = allow_pml
        self._dt = None

    def _index(self, ndim):
        if self.region is None:
            return (slice(None),) * ndim
        region = tuple(self.region)
        if len(region) != ndim:
            raise ValueError(f"{self.name}: region {self.region} needs {ndim} entries")
        return tuple(r if isinstance(r, slice) else int(r) for r in region)

    def check(self, grid, boundaries) -> None:
        if self.component not in grid.components:
            raise ValueError(
                f"{self.name}: component {self.component!r} is not in this grid ({grid.components})"
            )
        index = self._index(grid.ndim)
        corners = []
        for r, n in zip(index, grid.shape):
            if isinstance(r, slice):
                idx = np.arange(n)[r]
                if idx.size == 0:
                    raise ValueError(f"{self.name}: region {self.region} is empty on {grid.shape}")
                corners.append((int(idx.min()), int(idx.max())))
            else:
                corners.append((r, r))
        pml = None if self.allow_pml else boundaries.pml
        for corner in zip(*corners):
            grid.check_index(corner, what=f"{self.name} region {self.region}", pml=pml)

    def init_carry(self, grid, state):
        self._dt = float(grid.dt)
        self._h = self.component.startswith("h")
        field = state.get(self.component)[self._index(grid.ndim)]
        return dft_init(self.freqs.shape[0], tuple(field.shape), field.dtype)

    def update(self, carry, state, step):
        field = state.get(self.component)[self._index(len(state.get(self.component).shape))]
        shift = 0.5 if self._h else 1.0
        if isinstance(step, core.Tensor):
            t = (ops.astype(step, core.float64) + shift) * self._dt
        else:
            t = (step + shift) * self._dt
        return dft_update(carry, field, t, self.freqs, self._dt), None

    def finalize(self, carry, values):
        return dft_value(carry)
