"""Residual-based adaptive resampling of collocation points during training.

A :class:`Resampler` is a trainer hook: every ``every`` Adam steps it evaluates the current PDE
residual on candidate points of a ``datasets.geometry`` geometry and refines the collocation
set with ``datasets.geometry.rar`` (RAR-G: add the ``n_add`` candidates of largest residual,
Lu et al. 2021) or ``datasets.geometry.rad`` (RAD: redraw the set from the density
``|r|^k / E|r|^k + c``; RAR-D: append those draws), following Wu, Zhu, Tan, Kartha & Lu 2023,
CMAME 403, 115671.
"""

import numpy as np

from diffsci import core
from diffsci.datasets.geometry import rad, rar

__all__ = ["Resampler"]

_METHODS = ("rar", "rad", "rar-d")


class Resampler:
    """Refine one entry of the training batch from the residual.

    Args:
        geometry: a ``datasets.geometry`` geometry (``GeometryWithTime`` for space-time).
        residual_fn: ``residual_fn(x)`` with ``x`` a ``core.Tensor`` ``[m, dim]`` returns the
            residual ``[m]``, ``[m, 1]`` or ``[m, q]`` (components' magnitudes are summed).
        key: where the collocation points sit in the batch: a dict key, or an index into a
            tuple/list batch; None when the batch is the points tensor itself.
        every: resample before every ``every``-th Adam step (never at step 0).
        method: ``"rar"`` (append the worst ``n_add`` of ``n_candidates``), ``"rad"`` (replace
            the points by as many drawn from the RAD density) or ``"rar-d"`` (append ``n_add``
            RAD draws).
        n_candidates: candidate points per resampling.
        n_add: points added by ``"rar"``/``"rar-d"``.
        k, c: RAD's exponent and uniform share.
        max_points: stop appending once the set holds this many points.
        sampler: the candidates' sampler ("uniform", "lhs", "sobol", "halton").
        seed: base seed; resampling at step ``s`` uses ``seed + s`` (repeatable, and resumed
            runs draw the same points).
        batch_size: evaluate the residual on at most this many candidates at a time.
    """

    def __init__(
        self,
        geometry,
        residual_fn,
        key=None,
        every=1000,
        method="rar",
        n_candidates=10000,
        n_add=100,
        k=1.0,
        c=1.0,
        max_points=None,
        sampler="uniform",
        seed=0,
        batch_size=None,
    ):
        if method not in _METHODS:
            raise ValueError(f"Resampler: method must be one of {_METHODS}, got {method!r}")
        if int(every) < 1:
            raise ValueError(f"Resampler: every must be >= 1, got {every}")
        self.geometry = geometry
        self.residual_fn = residual_fn
        self.key = key
        self.every = int(every)
        self.method = method
        self.n_candidates = int(n_candidates)
        self.n_add = int(n_add)
        self.k, self.c = float(k), float(c)
        self.max_points = max_points
        self.sampler = sampler
        self.seed = int(seed)
        self.batch_size = batch_size
        self.history = []  # (step, number of points after resampling)

    def _get(self, batch):
        if self.key is None:
            return batch
        try:
            return batch[self.key]
        except (KeyError, IndexError, TypeError):
            raise KeyError(f"Resampler: the batch has no entry {self.key!r}") from None

    def _set(self, batch, points):
        if self.key is None:
            return points
        if isinstance(batch, dict):
            out = dict(batch)
            out[self.key] = points
            return out
        out = list(batch)
        out[self.key] = points
        return type(batch)(out) if isinstance(batch, tuple) else out

    def __call__(self, trainer, step, batch):
        """Return the batch with refined collocation points (or unchanged between updates)."""
        if step == 0 or step % self.every:
            return batch
        old = self._get(batch)
        if not isinstance(old, core.Tensor) or old.ndim != 2:
            raise TypeError(
                f"Resampler: batch entry {self.key!r} must be a core.Tensor [N, dim], got "
                f"{type(old).__name__} {getattr(old, 'shape', '')}"
            )
        n_old = int(old.shape[0])
        fn = trainer.compile(self.residual_fn)
        seed = self.seed + int(step)
        if self.method == "rad":
            new = rad(
                self.geometry, fn, n_old, k=self.k, c=self.c, n_candidates=self.n_candidates,
                sampler=self.sampler, seed=seed, batch_size=self.batch_size, tensor_input=True,
            )  # fmt: skip
            points = np.asarray(new)
        else:
            room = self.n_add
            if self.max_points is not None:
                room = max(0, min(room, int(self.max_points) - n_old))
            if room == 0:
                return batch
            if self.method == "rar":
                new = rar(
                    self.geometry, fn, self.n_candidates, room, sampler=self.sampler, seed=seed,
                    batch_size=self.batch_size, tensor_input=True,
                )  # fmt: skip
            else:
                new = rad(
                    self.geometry, fn, room, k=self.k, c=self.c, n_candidates=self.n_candidates,
                    sampler=self.sampler, seed=seed, batch_size=self.batch_size,
                    tensor_input=True,
                )  # fmt: skip
            points = np.concatenate([old.asnumpy(), np.asarray(new, dtype=old.asnumpy().dtype)])
        self.history.append((int(step), len(points)))
        return self._set(batch, core.tensor(points.astype(old.asnumpy().dtype), dtype=old.dtype))
