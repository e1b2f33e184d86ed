"""Samplers: which source indices one epoch reads, in which order (``mindspore.dataset``'s
``SequentialSampler``, ``RandomSampler``, ``DistributedSampler``, ``SubsetSampler``,
``SubsetRandomSampler``).

A random-access source (``GeneratorDataset`` over an object with ``__getitem__``/``__len__``,
``NumpySlicesDataset``) asks its sampler once per epoch for an int64 index array. Random samplers
draw from the epoch's generator, which the dataset derives from its seed and the epoch number
(see ``dataset.py``), so an epoch's order is the same in every run and every process.

Sharding (``num_shards``, ``shard_id``) takes every ``num_shards``-th index of the epoch's order,
starting at ``shard_id``: all shards draw the same permutation (same seed, same epoch) and keep
disjoint strides of it, so across the shards every sample is read exactly once per epoch. Shard
sizes differ by at most one (``ceil`` for the first ``n % num_shards`` shards); MindSpore's
``DistributedSampler`` instead pads the short shards with repeated samples.
"""

import numpy as np

__all__ = [
    "DistributedSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "SubsetSampler",
]


def _check_count(value, name, where, minimum=0, allow_none=True):
    if value is None and allow_none:
        return None
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{where}: {name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def check_shards(num_shards, shard_id, where):
    """``(num_shards, shard_id)`` as ints (``(1, 0)`` when both are None), or ValueError naming
    ``where`` when only one is given or they are out of range."""
    if num_shards is None and shard_id is None:
        return 1, 0
    if num_shards is None or shard_id is None:
        raise ValueError(
            f"{where}: num_shards and shard_id go together, got num_shards={num_shards!r}, "
            f"shard_id={shard_id!r}"
        )
    num_shards = _check_count(num_shards, "num_shards", where, minimum=1, allow_none=False)
    shard_id = _check_count(shard_id, "shard_id", where, allow_none=False)
    if shard_id >= num_shards:
        raise ValueError(f"{where}: shard_id must be in [0, {num_shards}), got {shard_id}")
    return num_shards, shard_id


def shard_size(n, num_shards, shard_id):
    """Number of indices ``shard_id`` keeps out of ``n``: ``len(range(shard_id, n, num_shards))``."""
    return len(range(shard_id, n, num_shards))


class Sampler:
    """Base class: ``epoch_indices(n, rng)`` is the int64 array of source indices (each in
    ``[0, n)``) one epoch reads; ``num_rows(n)`` its length, known before the epoch runs.

    Args of subclasses follow MindSpore; ``num_samples`` caps the rows per epoch (per shard).
    """

    random = False  # True when epoch_indices draws from rng

    def __init__(self, num_samples=None):
        self.num_samples = _check_count(num_samples, "num_samples", type(self).__name__)

    def _cap(self, count):
        return count if self.num_samples is None else min(count, self.num_samples)

    def num_rows(self, n):
        return self._cap(n)

    def epoch_indices(self, n, rng):
        raise NotImplementedError

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


class SequentialSampler(Sampler):
    """Indices ``start_index, start_index + 1, ...`` in order."""

    def __init__(self, start_index=None, num_samples=None):
        super().__init__(num_samples)
        self.start_index = _check_count(start_index, "start_index", "SequentialSampler") or 0

    def num_rows(self, n):
        return self._cap(max(0, n - self.start_index))

    def epoch_indices(self, n, rng):
        return np.arange(self.start_index, self.start_index + self.num_rows(n), dtype=np.int64)


class RandomSampler(Sampler):
    """A fresh random permutation each epoch (or, with ``replacement=True``, ``num_samples``
    independent uniform draws)."""

    random = True

    def __init__(self, replacement=False, num_samples=None):
        super().__init__(num_samples)
        self.replacement = bool(replacement)

    def num_rows(self, n):
        if self.replacement and self.num_samples is not None:
            return self.num_samples
        return self._cap(n)

    def epoch_indices(self, n, rng):
        if self.replacement:
            if n == 0:
                raise ValueError("RandomSampler(replacement=True): the source is empty")
            return rng.integers(0, n, size=self.num_rows(n), dtype=np.int64)
        return rng.permutation(n)[: self.num_rows(n)].astype(np.int64, copy=False)


class DistributedSampler(Sampler):
    """One shard of the epoch's order (shuffled with ``shuffle=True``): indices
    ``order[shard_id::num_shards]``, so that the shards together read each index exactly once
    (no padding; see the module docstring)."""

    def __init__(self, num_shards, shard_id, shuffle=True, num_samples=None):
        super().__init__(num_samples)
        self.num_shards, self.shard_id = check_shards(num_shards, shard_id, "DistributedSampler")
        self.shuffle = bool(shuffle)
        self.random = self.shuffle

    def num_rows(self, n):
        return self._cap(shard_size(n, self.num_shards, self.shard_id))

    def epoch_indices(self, n, rng):
        order = rng.permutation(n) if self.shuffle else np.arange(n)
        mine = order[self.shard_id :: self.num_shards][: self.num_rows(n)]
        return mine.astype(np.int64, copy=False)


class SubsetSampler(Sampler):
    """The given indices, in the given order, every epoch."""

    def __init__(self, indices, num_samples=None):
        super().__init__(num_samples)
        idx = np.asarray(list(indices) if not hasattr(indices, "__array__") else indices)
        if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
            raise ValueError(
                f"{type(self).__name__}: indices must be a 1-D sequence of ints, got dtype "
                f"{idx.dtype} and shape {idx.shape}"
            )
        self.indices = idx.astype(np.int64)

    def num_rows(self, n):
        return self._cap(len(self.indices))

    def _checked(self, n):
        bad = (self.indices < 0) | (self.indices >= n)
        if bad.any():
            raise IndexError(
                f"{type(self).__name__}: index {int(self.indices[bad][0])} is out of range for "
                f"a source of {n} samples"
            )
        return self.indices

    def epoch_indices(self, n, rng):
        return self._checked(n)[: self.num_rows(n)]


class SubsetRandomSampler(SubsetSampler):
    """The given indices in a fresh random order each epoch."""

    random = True

    def epoch_indices(self, n, rng):
        return rng.permutation(self._checked(n))[: self.num_rows(n)]


def as_sampler(sampler):
    """``sampler`` itself when it is a Sampler; an iterable of indices becomes a SubsetSampler
    (MindSpore accepts both)."""
    if isinstance(sampler, Sampler):
        return sampler
    if hasattr(sampler, "__iter__"):
        return SubsetSampler(sampler)
    raise TypeError(
        f"sampler: expected a datasets Sampler or an iterable of indices, got {type(sampler)}"
    )
