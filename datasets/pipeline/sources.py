"""Source datasets: ``GeneratorDataset`` (any Python data source) and ``NumpySlicesDataset``
(arrays sliced along their first axis), with MindSpore's arguments.

Order and shuffling. A random-access source reads, each epoch, the indices its sampler gives
(``sampler.py``): with ``shuffle=True`` (the default for random-access sources, as in MindSpore)
a fresh permutation of all indices per epoch, drawn from the seed (``seed=``, else
``datasets.config``/``core.set_seed``), so that the order is reproducible across runs and
processes. ``num_shards``/``shard_id`` keep every ``num_shards``-th index of that order.
"""

import functools
import inspect
import itertools

import numpy as np

from . import config
from .dataset import (
    Chunk,
    Columns,
    Dataset,
    _check_int,
    _check_seed,
    as_array,
    column_names,
    epoch_rng,
    gather,
    parallel_pieces,
    raise_failure,
)
from .prefetch import PipelineError, WorkerPool
from .sampler import DistributedSampler, as_sampler, check_shards, shard_size

__all__ = ["GeneratorDataset", "NumpySlicesDataset"]


def _check_order_args(where, num_samples, num_shards, shard_id, seed):
    """``(seed, num_shards, shard_id, num_samples)`` checked (in that order) for a source."""
    seed = _check_seed(seed, where)
    num_shards, shard_id = check_shards(num_shards, shard_id, where)
    if num_samples is not None:
        num_samples = _check_int(num_samples, "num_samples", where, 0)
    return seed, num_shards, shard_id, num_samples


class _IndexedSource(Dataset):
    """A source of ``n`` samples read by index; the sampler decides each epoch's indices."""

    def __init__(self, n, columns, num_samples, shuffle, sampler, num_shards, shard_id, seed):
        super().__init__((), columns)
        where = type(self).__name__
        self._n = n
        self.seed, num_shards, shard_id, num_samples = _check_order_args(
            where, num_samples, num_shards, shard_id, seed
        )
        if sampler is not None:
            if shuffle is not None or num_shards > 1 or num_samples is not None:
                raise ValueError(
                    f"{where}: give either sampler or shuffle/num_shards/num_samples, not both "
                    "(the sampler decides the order)"
                )
            self.sampler = as_sampler(sampler)
        else:
            shuffle = True if shuffle is None else bool(shuffle)
            self.sampler = DistributedSampler(num_shards, shard_id, shuffle, num_samples)

    def use_sampler(self, new_sampler):
        """Read with ``new_sampler`` from now on (``mindspore.dataset`` ``use_sampler``)."""
        self.sampler = as_sampler(new_sampler)

    def _size(self):
        return self.sampler.num_rows(self._n)

    def _epoch_indices(self, ctx):
        sampler = self.sampler
        rng = None
        if sampler.random:
            sharded = isinstance(sampler, DistributedSampler) and sampler.num_shards > 1
            if sharded and self.seed is None and config.get_seed() is None:
                raise ValueError(
                    f"{type(self).__name__}(num_shards={sampler.num_shards}, shard_id="
                    f"{sampler.shard_id}, shuffle=True): every shard must draw the same "
                    "permutation, so the pipeline needs a seed: pass seed=..., or call "
                    "core.set_seed(...) or datasets.config.set_seed(...) in every process"
                )
            rng = epoch_rng(self, self.seed, ctx)
        return sampler.epoch_indices(self._n, rng)

    def _describe_order(self):
        s = self.sampler
        if isinstance(s, DistributedSampler):
            parts = ["shuffle" if s.shuffle else "in order"]
            if s.num_shards > 1:
                parts.append(f"shard {s.shard_id}/{s.num_shards}")
            return ", ".join(parts)
        return repr(s)


def fetch_rows(source, names, indices):
    """``source[i]`` for each ``i`` of ``indices`` as row tuples.

    Returns ``(rows, failure)`` like ``apply_functions``: ``failure`` names the position of the
    first index whose read raised or returned the wrong number of columns or a non-array. A
    sample that is already a tuple of the right length is kept as it is (its values are turned
    into arrays where they are used: stacked by ``batch``, returned by an iterator), which keeps
    the per-sample cost to the ``__getitem__`` call."""
    getitems = getattr(source, "__getitems__", None)
    if getitems is not None:
        return fetch_many(getitems, names, indices)
    rows = []
    append = rows.append
    get = source.__getitem__
    n = len(names)
    for i in indices:
        try:
            item = get(i)
        except Exception as exc:
            return rows, (len(rows), exc, None, None)
        if type(item) is tuple and len(item) == n:
            append(item)
            continue
        row, text = normalize_row(item, names)
        if text is not None:
            return rows, (len(rows), None, text, None)
        append(row)
    return rows, None


def fetch_many(getitems, names, indices):
    """One ``source.__getitems__(indices)`` call (PyTorch's batched-read protocol): it returns
    a list of samples, or a tuple of arrays with one column each (``[len(indices), ...]``), which
    the chunk keeps as columns. Returns ``(rows or Columns, failure)`` as :func:`fetch_rows`."""
    try:
        res = getitems(indices)
    except Exception as exc:
        text = f"__getitems__ of {len(indices)} indices from this one raised {type(exc).__name__}: {exc}"
        return [], (0, exc, text, None)
    if isinstance(res, tuple):
        if len(res) != len(names):
            return [], (0, None, f"__getitems__ gave {len(res)} columns for {names}", None)
        cols = []
        for name, col in zip(names, res):
            arr = np.asarray(col)
            if arr.ndim == 0 or len(arr) != len(indices) or arr.dtype.kind == "O":
                text = (
                    f"__getitems__ gave column {name!r} with shape {arr.shape} and dtype "
                    f"{arr.dtype} for {len(indices)} indices"
                )
                return [], (0, None, text, None)
            cols.append(arr)
        return Columns(cols), None
    rows = list(res)
    if len(rows) != len(indices):
        return [], (
            0,
            None,
            f"__getitems__ gave {len(rows)} samples for {len(indices)} indices",
            None,
        )
    for j, item in enumerate(rows):
        if not (type(item) is tuple and len(item) == len(names)):
            row, text = normalize_row(item, names)
            if text is not None:
                return [], (j, None, text, None)
            rows[j] = row
    return rows, None


def normalize_row(item, names):
    """``(row, None)`` with ``row`` a tuple with one value per column of ``names``, or
    ``(None, error text)``. A tuple (or, for several columns, a list) holds one value per column;
    any other value is the single column of a one-column dataset (converted to an array)."""
    n = len(names)
    if isinstance(item, tuple) or (n > 1 and isinstance(item, list)):
        if len(item) != n:
            return None, f"the source gave {len(item)} values for the {n} columns {names}"
        return tuple(item), None
    if n != 1:
        return None, f"the source gave one {type(item).__name__} for the {n} columns {names}"
    arr = as_array(item)
    if arr is None:
        return None, f"column {names[0]!r} is a {type(item).__name__}, not an array"
    return (arr,), None


class GeneratorDataset(_IndexedSource):
    """A dataset read from a Python source (``mindspore.dataset.GeneratorDataset``).

    Args:
        source: a random-access object (``__getitem__(int)`` and ``__len__``, e.g. a list or a
            PDEBench reader), an iterable (iterated anew each epoch), or a callable returning an
            iterator each epoch (a generator function). Each sample is a tuple with one value per
            column (numpy arrays or anything ``np.asarray`` takes); a one-column dataset may
            give the bare value. A random-access source that also has ``__getitems__(indices)``
            (PyTorch's batched read) is read with one call per chunk of indices; it returns a
            list of samples, or a tuple of arrays, one per column, ``[len(indices), ...]`` (one
            fancy-index per column: ``batch`` then slices instead of stacking).
        column_names: a name or a list of names, one per column (required).
        column_types: optional list of numpy/core dtypes; a sample whose column has another
            dtype raises.
        schema: not supported (give ``column_names``).
        num_samples: rows per epoch (per shard) at most; default all.
        num_parallel_workers: workers reading a random-access source in parallel (threads, or
            processes with ``python_multiprocessing=True``, MindSpore's default: the source is
            then pickled to each worker once). Iterables are read in order, by one reader.
        shuffle: random order each epoch (random-access sources only). None (default) means
            True for random-access sources and False for iterables, as in MindSpore.
        sampler: a ``datasets`` Sampler or an iterable of indices (random-access sources),
            instead of ``shuffle``/``num_shards``/``num_samples``.
        num_shards, shard_id: read only shard ``shard_id`` of ``num_shards`` (together every
            sample exactly once per epoch; an iterable source must yield the same sequence in
            every process). Shuffled shards need a seed.
        python_multiprocessing: see ``num_parallel_workers``.
        max_rowsize: accepted for compatibility, unused.
        seed: our addition: seeds this source's shuffle (default: ``datasets.config.get_seed()``,
            which falls back on ``core.set_seed``).

    Errors raised by the source are re-raised in the consumer as :class:`PipelineError` naming
    the sample index.
    """

    def __init__(
        self,
        source,
        column_names=None,
        column_types=None,
        schema=None,
        num_samples=None,
        num_parallel_workers=1,
        shuffle=None,
        sampler=None,
        num_shards=None,
        shard_id=None,
        python_multiprocessing=True,
        max_rowsize=None,
        seed=None,
    ):
        del max_rowsize
        if schema is not None:
            raise TypeError("GeneratorDataset: schema is not supported; give column_names")
        names = _names(column_names, "GeneratorDataset")
        if hasattr(source, "__getitem__") and hasattr(source, "__len__"):
            self._kind = "random"
            n = len(source)
        elif hasattr(source, "__iter__"):
            self._kind = "iterable"
            n = len(source) if hasattr(source, "__len__") else None
        elif callable(source):
            self._kind = "callable"
            n = None
        else:
            raise TypeError(
                "GeneratorDataset: source must be random-access (__getitem__ and __len__), "
                f"iterable, or a callable returning an iterator; got {type(source).__name__}"
            )
        if self._kind == "random":
            super().__init__(n, names, num_samples, shuffle, sampler, num_shards, shard_id, seed)
        else:
            if shuffle or sampler is not None:
                raise ValueError(
                    "GeneratorDataset: shuffle=True and sampler need a random-access source "
                    f"(__getitem__ and __len__); {type(source).__name__} is only iterable. "
                    "Shuffle with .shuffle(buffer_size) instead"
                )
            Dataset.__init__(self, (), names)
            self._n = n
            self.seed, self._num_shards, self._shard_id, self._num_samples = _check_order_args(
                "GeneratorDataset", num_samples, num_shards, shard_id, seed
            )
            # An iterator is its own iterable. A generator object or a built-in iterator is
            # then one-shot; a class whose own __iter__ returns self may reset there (as
            # mindspore.dataset's tutorials write it), so it is re-opened every epoch, and an
            # epoch that then yields nothing after one that did is an error (_stream_chunks).
            self._self_iterating = self._kind == "iterable" and iter(source) is source
            self._one_shot = self._self_iterating and not _defines_iter(source)
            self._consumed = False
            self._yielded = 0  # rows of the last epoch of a self-iterating source
        self.source = source
        self.column_types = None
        if column_types is not None:
            self.column_types = [np.dtype(t) for t in column_types]
            if len(self.column_types) != len(names):
                raise ValueError(
                    f"GeneratorDataset: {len(self.column_types)} column_types for the "
                    f"{len(names)} columns {names}"
                )
        self.num_parallel_workers = _check_int(
            num_parallel_workers, "num_parallel_workers", "GeneratorDataset", 1
        )
        self.python_multiprocessing = bool(python_multiprocessing)
        self._fetch = functools.partial(fetch_rows, source, tuple(names))

    def _describe(self):
        order = self._describe_order() if self._kind == "random" else "in order"
        return f"GeneratorDataset({self._columns}, {type(self.source).__name__}, {order})"

    def use_sampler(self, new_sampler):
        """Read with ``new_sampler`` from now on (random-access sources only)."""
        if self._kind != "random":
            raise ValueError(
                "GeneratorDataset.use_sampler: a sampler needs a random-access source "
                f"(__getitem__ and __len__); {type(self.source).__name__} is only iterable"
            )
        super().use_sampler(new_sampler)

    def _countable(self):
        return not (self._kind == "iterable" and self._one_shot)

    def _size(self):
        if self._kind == "random":
            return super()._size()
        if self._n is None:
            return None
        n = shard_size(self._n, self._num_shards, self._shard_id)
        return n if self._num_samples is None else min(n, self._num_samples)

    def _chunks(self, ctx, hint):
        if self._kind == "random":
            chunks = self._random_chunks(ctx, hint)
        else:
            chunks = self._stream_chunks(hint)
        if self.column_types is None:
            return chunks
        return self._checked(chunks)

    def _random_chunks(self, ctx, hint):
        indices = self._epoch_indices(ctx)
        pieces = (indices[s : s + hint] for s in range(0, len(indices), hint))
        if self.num_parallel_workers == 1:
            for piece in pieces:
                rows, failure = self._fetch(piece.tolist())
                if failure is not None:
                    raise_failure("GeneratorDataset", "sample", piece, failure[0], failure)
                if type(rows) is Columns:
                    yield Chunk(piece, cols=tuple(rows))
                else:
                    yield Chunk(piece, rows=rows)
            return
        pool = ctx.run.pool(
            self,
            lambda: WorkerPool(
                self._fetch,
                self.num_parallel_workers,
                self.python_multiprocessing,
                "GeneratorDataset",
            ),
        )
        jobs = ((piece, piece.tolist()) for piece in pieces)
        for piece, futures in parallel_pieces(pool, jobs, self.num_parallel_workers):
            yield Chunk(piece, rows=gather(futures, "GeneratorDataset", "sample", piece))

    def _open(self):
        if self._kind == "callable":
            return iter(self.source())
        if self._one_shot:
            if self._consumed:
                raise PipelineError(
                    "GeneratorDataset: the source is a one-shot iterator (e.g. a generator "
                    "object) and an earlier epoch consumed it; pass the generator function "
                    "itself (a callable) so that each epoch can start a new one",
                    stage="GeneratorDataset",
                )
            self._consumed = True
        return iter(self.source)

    def _stream_chunks(self, hint):
        names = self._columns
        shards, mine = self._num_shards, self._shard_id
        cap = self._num_samples
        iterator = self._open()
        rows, origins = [], []
        kept = 0
        for pos in itertools.count():
            if cap is not None and kept >= cap:
                break
            try:
                item = next(iterator)
            except StopIteration:
                break
            except Exception as exc:
                raise PipelineError(
                    f"GeneratorDataset: the source raised while producing sample {pos}: "
                    f"{type(exc).__name__}: {exc}",
                    stage="GeneratorDataset",
                    index=pos,
                ) from exc
            if pos % shards != mine:
                continue
            row, text = normalize_row(item, names)
            if text is not None:
                raise PipelineError(
                    f"GeneratorDataset: sample {pos}: {text}", stage="GeneratorDataset", index=pos
                )
            rows.append(row)
            origins.append(pos)
            kept += 1
            if len(rows) == hint:
                yield Chunk(origins, rows=rows)
                rows, origins = [], []
        if rows:
            yield Chunk(origins, rows=rows)
        if self._self_iterating:
            if pos == 0 and self._yielded > 0:
                raise PipelineError(
                    f"GeneratorDataset: the source {type(self.source).__name__} yielded "
                    f"{self._yielded} samples in an earlier epoch and none in this one: its "
                    "__iter__ returns self without starting over (reset its position in "
                    "__iter__, or pass a callable that returns a new iterator)",
                    stage="GeneratorDataset",
                )
            self._yielded = pos

    def _checked(self, chunks):
        names, types = self._columns, self.column_types
        for chunk in chunks:
            for c, dtype in enumerate(types):
                rows = chunk.as_rows()
                found = [np.asarray(r[c]).dtype for r in rows]
                if any(d != dtype for d in found):
                    j = next(j for j, d in enumerate(found) if d != dtype)
                    origin = int(chunk.origins[j])
                    raise PipelineError(
                        f"GeneratorDataset: column {names[c]!r} of sample {origin} is "
                        f"{found[j]}, but column_types says {dtype}",
                        stage="GeneratorDataset",
                        index=origin,
                    )
            yield chunk


def _defines_iter(source):
    """True when ``__iter__`` of ``source``'s class is a Python function (it may reset the
    iteration), False for generators and built-in iterators (their ``__iter__`` is C's)."""
    for klass in type(source).__mro__:
        if "__iter__" in klass.__dict__:
            return inspect.isfunction(klass.__dict__["__iter__"])
    return False


def _names(value, where):
    names = column_names(value, f"{where}: column_names")
    if names is None:
        raise ValueError(f"{where}: column_names is required (a name or a list of names)")
    return names


class NumpySlicesDataset(_IndexedSource):
    """Rows sliced along the first axis of arrays (``mindspore.dataset.NumpySlicesDataset``).

    Args:
        data: a dict ``{name: array}`` (one column each, named by the keys unless
            ``column_names`` is given), a tuple of arrays (one column each), or a list or array
            (one column: ``np.asarray(data)`` sliced along axis 0, as in MindSpore). All columns
            must have the same length along axis 0.
        column_names: names of the columns (default: the dict's keys, else ``column_0``,
            ``column_1``, ...).
        num_samples, shuffle, sampler, num_shards, shard_id, seed: as for
            :class:`GeneratorDataset` (shuffled by default).
        num_parallel_workers: accepted for compatibility; reads are one numpy fancy-index
            per column and chunk, in the pipeline's thread.

    A chunk of rows is read with one ``array[indices]`` per column, and a ``batch`` directly
    above (or above ``take``/``skip``/``project``/``rename``/``repeat``) slices those arrays
    instead of stacking rows one by one.
    """

    def __init__(
        self,
        data,
        column_names=None,
        num_samples=None,
        num_parallel_workers=1,
        shuffle=None,
        sampler=None,
        num_shards=None,
        shard_id=None,
        seed=None,
    ):
        del num_parallel_workers
        if isinstance(data, dict):
            default = [str(k) for k in data]
            values = list(data.values())
        elif isinstance(data, tuple):
            values = list(data)
            default = [f"column_{i}" for i in range(len(values))]
        else:
            values = [data]
            default = ["column_0"]
        if not values:
            raise ValueError("NumpySlicesDataset: data has no columns")
        names = _names(column_names, "NumpySlicesDataset") if column_names is not None else default
        if len(names) != len(values):
            raise ValueError(
                f"NumpySlicesDataset: {len(names)} column_names {names} for {len(values)} columns"
            )
        arrays = []
        for name, v in zip(names, values):
            arr = np.asarray(v)
            if arr.ndim == 0 or arr.dtype.kind == "O":
                raise ValueError(
                    f"NumpySlicesDataset: column {name!r} must be an array of at least one "
                    f"dimension with a numeric, bool or string dtype; got shape {arr.shape}, "
                    f"dtype {arr.dtype}"
                )
            arrays.append(arr)
        lengths = {name: len(a) for name, a in zip(names, arrays)}
        if len(set(lengths.values())) > 1:
            raise ValueError(
                f"NumpySlicesDataset: the columns have different lengths along axis 0: {lengths}"
            )
        self.arrays = tuple(arrays)
        super().__init__(
            len(arrays[0]), names, num_samples, shuffle, sampler, num_shards, shard_id, seed
        )

    def _describe(self):
        return f"NumpySlicesDataset({self._columns}, n={self._n}, {self._describe_order()})"

    def _chunks(self, ctx, hint):
        indices = self._epoch_indices(ctx)
        arrays = self.arrays
        for s in range(0, len(indices), hint):
            piece = indices[s : s + hint]
            yield Chunk(piece, cols=tuple(a[piece] for a in arrays), private=True)
