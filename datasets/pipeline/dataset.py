"""The pipeline's chain: ``Dataset`` (the base of every node) and its operations ``map``,
``shuffle``, ``batch``, ``repeat``, ``take``, ``skip``, ``project``, ``rename``, with the
iterators that run it. Names, arguments and semantics follow ``mindspore.dataset``.

How a chain runs. Each node is a generator of *chunks*: runs of consecutive rows of one epoch,
either a list of row tuples or, straight from an array source, one array per column (a source
that can fancy-index, ``NumpySlicesDataset``, reads a whole batch with one numpy call per column,
and ``batch`` then slices instead of stacking). Chunks amortise the per-row Python overhead:
a ``map`` applies its function to a chunk in one loop (or hands pieces of it to its workers), a
``batch`` stacks each column of ``batch_size`` rows with one ``np.array`` call. Every row carries its
*origin*, the index of the sample in its source (after ``batch``, the batch number), which
errors name.

Epochs and seeds. Every epoch started on a dataset object (by ``for x in ds``, or an iterator
of ``create_tuple_iterator(num_epochs=...)``) takes the next number of that object's epoch
counter: 0, 1, 2, ... A node that draws (a shuffling source, ``shuffle``) seeds a fresh numpy
generator from ``SeedSequence([seed, node depth, epoch, repetition...])``, where ``seed`` is the
node's ``seed=`` argument, else ``datasets.config.get_seed()`` (which falls back on
``core.set_seed``'s value). So every epoch has its own order, and the same program with the same
seed draws the same orders in every run and every process (what sharding relies on).
"""

import functools
import itertools
import math
import operator
from collections import deque

import numpy as np

from diffsci.core import Tensor

from . import config
from .prefetch import Inline, PipelineError, Prefetcher, WorkerPool, check_picklable

__all__ = [
    "BatchDataset",
    "BatchInfo",
    "Dataset",
    "DictIterator",
    "MapDataset",
    "ProjectDataset",
    "RenameDataset",
    "RepeatDataset",
    "ShuffleDataset",
    "SkipDataset",
    "TakeDataset",
    "TupleIterator",
]

_ROWS_PER_CHUNK = 64  # chunk length when no batch asks for another
_COUNT_KEY = 2**32  # epoch key of get_dataset_size's counting pass (never a real epoch)
_PEEK_KEY = 2**32 + 1  # epoch key of output_shapes / output_types


# ---- chunks ---------------------------------------------------------------------------------


class Chunk:
    """Consecutive rows of one epoch's stream.

    Attributes:
        origins: one int per row: its index in the source, or its batch number after ``batch``.
        rows: list of row tuples, one value per column (a numpy array or scalar; a source's
            own values until a map or batch converts them), or None while only ``cols`` is set.
        cols: tuple of arrays, one per column, each [n_rows, ...], or None.
        private: True when no value aliases memory the user holds (fresh arrays from
            fancy-indexing or stacking): the iterators copy only values that are not private.
    """

    __slots__ = ("cols", "origins", "private", "rows")

    def __init__(self, origins, rows=None, cols=None, private=False):
        self.origins = origins
        self.rows = rows
        self.cols = cols
        self.private = private

    def __len__(self):
        return len(self.origins)

    def as_rows(self):
        if self.rows is None:
            self.rows = list(zip(*self.cols))
        return self.rows

    def slice(self, start, stop):
        if self.cols is not None:
            cols = tuple(c[start:stop] for c in self.cols)
            return Chunk(self.origins[start:stop], cols=cols, private=self.private)
        return Chunk(self.origins[start:stop], rows=self.rows[start:stop], private=self.private)


class Columns(tuple):
    """A work result holding one array per column instead of a list of rows."""


def as_array(value):
    """``value`` as a numpy array (no copy for arrays), or None when numpy can only make an
    object array of it."""
    if type(value) is np.ndarray:
        return value
    arr = np.asarray(value)
    return None if arr.dtype.kind == "O" else arr


def column_names(value, what):
    """A list of column names from a str or a sequence of str (None stays None)."""
    if value is None:
        return None
    names = [value] if isinstance(value, str) else list(value)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"{what}: expected a column name or a list of names, got {value!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"{what}: duplicate column names in {names}")
    return names


def _check_int(value, name, where, minimum):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{where}: {name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def _check_seed(seed, where):
    if seed is None:
        return None
    return _check_int(seed, "seed", where, 0)


def _tuple_getter(positions):
    """A function row -> tuple of row[p] for p in positions."""
    if len(positions) == 1:
        p = positions[0]
        return lambda row: (row[p],)
    return operator.itemgetter(*positions)


class EpochContext:
    """What a node needs to run one epoch: the epoch number, the key its random draws are
    seeded from (the epoch number, then one repetition number per enclosing ``repeat``), and
    the run that owns the worker pools."""

    __slots__ = ("epoch", "key", "run")

    def __init__(self, epoch, key, run):
        self.epoch = epoch
        self.key = key
        self.run = run

    def sub(self, repetition):
        return EpochContext(self.epoch, (*self.key, repetition), self.run)


class Run:
    """Resources of one iterator, shared by its epochs: worker pools and per-node state."""

    def __init__(self):
        self._pools = {}
        self.state = {}

    def pool(self, owner, make):
        pool = self._pools.get(owner)
        if pool is None:
            pool = self._pools[owner] = make()
        return pool

    def close(self):
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close()


def epoch_rng(node, seed, ctx):
    """The numpy Generator ``node`` draws from in the epoch of ``ctx`` (see the module
    docstring)."""
    base = seed if seed is not None else config.get_seed()
    if base is None:
        base = node._entropy
    return np.random.default_rng(np.random.SeedSequence([int(base), node._depth, *ctx.key]))


def parallel_pieces(pool, jobs, num_workers, in_flight=2):
    """Run ``jobs`` (pairs ``(tag, work_list)``) on ``pool``: each work list is cut into
    ``num_workers`` pieces, each piece one task. Yields ``(tag, [(start, future), ...])`` in job
    order while ``in_flight`` jobs more are running; cancels queued tasks when closed early."""
    pending = deque()
    try:
        for tag, work in jobs:
            step = max(1, -(-len(work) // num_workers))
            futures = [(s, pool.submit(work[s : s + step])) for s in range(0, len(work), step)]
            pending.append((tag, futures))
            if len(pending) > in_flight:
                yield pending.popleft()
        while pending:
            yield pending.popleft()
    finally:
        for _, futures in pending:
            for _, f in futures:
                f.cancel()


def gather(futures, stage, what, origins):
    """Concatenate the results of ``[(start, future)]`` pieces; a failure in a piece becomes a
    PipelineError naming the row's origin."""
    out = []
    for start, future in futures:
        try:
            result, failure = future.result()
        except Exception as exc:  # a dead worker process, a cancelled task
            lo, hi = int(origins[start]), int(origins[-1])
            raise PipelineError(
                f"{stage}: a worker failed while processing {what}s {lo}..{hi}: "
                f"{type(exc).__name__}: {exc}",
                stage=stage,
            ) from exc
        if failure is not None:
            raise_failure(stage, what, origins, start + failure[0], failure)
        out.extend(zip(*result) if type(result) is Columns else result)
    return out


def raise_failure(stage, what, origins, position, failure):
    """Raise the PipelineError for ``failure = (position, exc, text, traceback_text)``."""
    _, exc, text, tb = failure
    origin = int(origins[position])
    message = f"{stage}: {what} {origin}: " + (text or f"{type(exc).__name__}: {exc}")
    if tb:
        message += "\n--- traceback in the worker process ---\n" + tb.rstrip()
    raise PipelineError(message, stage=stage, index=origin) from exc


# ---- the base class -------------------------------------------------------------------------


class Dataset:
    """Base of every pipeline node (sources and operations); ``mindspore.dataset.Dataset``.

    A node has ``children`` (the nodes it reads), its output column names, and
    ``_chunks(ctx, hint)``: a generator of :class:`Chunk` for one epoch (``hint``: the chunk
    length the consumer prefers, e.g. a batch size). ``_size()`` is its rows per epoch:
    an int, None when unknown before running, or ``math.inf``.
    """

    _batched = False  # True when rows are batches (after a batch node)

    def __init__(self, children=(), columns=()):
        self.children = list(children)
        self._columns = list(columns)
        self._depth = 1 + max((c._depth for c in self.children), default=-1)
        self._epochs = itertools.count()
        self._counted = None
        self._entropy = np.random.SeedSequence().entropy  # seed when none is set anywhere

    # -- to implement ------------------------------------------------------------------------
    def _size(self):
        raise NotImplementedError

    def _chunks(self, ctx, hint):
        raise NotImplementedError

    def _describe(self):
        return type(self).__name__

    def _countable(self):
        """False when running an epoch to count the rows would use up the source."""
        return all(c._countable() for c in self.children)

    # -- operations --------------------------------------------------------------------------
    def map(
        self,
        operations,
        input_columns=None,
        output_columns=None,
        num_parallel_workers=None,
        python_multiprocessing=False,
        max_rowsize=None,
    ):
        """Apply ``operations`` to every row (``mindspore.dataset.Dataset.map``).

        Args:
            operations: a callable, or a list of callables applied in turn (each one's outputs
                are the next one's arguments). Each gets the ``input_columns`` of one row (numpy
                arrays or numpy scalars, as the source gave them; after ``batch``, the stacked
                batch arrays) and returns one value per output column (a tuple for several).
            input_columns: column name(s) passed to the first operation (default: all columns).
            output_columns: names of the last operation's outputs (default: ``input_columns``).
                The outputs replace the input columns, placed where the first input column was.
            num_parallel_workers: workers applying the operations (default
                ``datasets.config.get_num_parallel_workers()``, 1); threads unless
                ``python_multiprocessing``.
            python_multiprocessing: use worker processes (the operations must be picklable:
                module-level functions).
            max_rowsize: accepted for MindSpore compatibility; unused (rows travel to worker
                processes by pickling, with no size limit).

        Every output is checked: the count against ``output_columns``, numpy convertibility,
        and dtype and number of dimensions against the first row's (wrong ones raise a
        :class:`PipelineError` naming the column and the sample index); a ``batch`` after the
        map checks the full shapes.
        """
        del max_rowsize
        return MapDataset(
            self, operations, input_columns, output_columns, num_parallel_workers,
            python_multiprocessing,
        )  # fmt: skip

    def shuffle(self, buffer_size, seed=None):
        """Shuffle with a buffer of ``buffer_size`` rows (``mindspore.dataset.Dataset.shuffle``):
        fill the buffer with the first rows, then repeatedly emit a uniformly chosen buffered row
        and put the next input row in its place; at the end, emit the rest in random order.
        ``buffer_size`` >= the dataset size is a full uniform shuffle. Each epoch draws anew.
        ``seed`` (our addition) overrides the pipeline's seed for this shuffle."""
        return ShuffleDataset(self, buffer_size, seed)

    def batch(
        self,
        batch_size,
        drop_remainder=False,
        num_parallel_workers=None,
        per_batch_map=None,
        input_columns=None,
        output_columns=None,
        python_multiprocessing=False,
        max_rowsize=None,
    ):
        """Stack ``batch_size`` consecutive rows into one (``mindspore.dataset.Dataset.batch``).

        Each column becomes one array [batch_size, *sample_shape] (every sample of a column
        must have the same shape and dtype; a mismatch raises naming the column and sample).
        The last, shorter batch is kept unless ``drop_remainder``.

        ``per_batch_map(*column_lists, batch_info)``, when given, receives for each of
        ``input_columns`` (default: all) the list of that column's sample arrays, and a
        :class:`BatchInfo`; it returns one list (or array) per ``output_columns`` entry
        (default: ``input_columns``), which are stacked. ``num_parallel_workers``,
        ``python_multiprocessing`` and ``max_rowsize`` are accepted for compatibility; stacking
        is one numpy call per column and runs in the pipeline's thread.
        """
        del num_parallel_workers, python_multiprocessing, max_rowsize
        return BatchDataset(
            self, batch_size, drop_remainder, per_batch_map, input_columns, output_columns
        )

    def repeat(self, count=None):
        """Repeat the dataset ``count`` times per epoch (None or -1: forever). Random nodes
        below draw a new order for each repetition."""
        return RepeatDataset(self, count)

    def take(self, count=-1):
        """The first ``count`` rows of each epoch (-1: all)."""
        return TakeDataset(self, count)

    def skip(self, count):
        """Each epoch without its first ``count`` rows."""
        return SkipDataset(self, count)

    def project(self, columns):
        """Keep only ``columns``, in that order."""
        return ProjectDataset(self, columns)

    def rename(self, input_columns, output_columns):
        """Rename columns ``input_columns[i]`` to ``output_columns[i]``."""
        return RenameDataset(self, input_columns, output_columns)

    # -- attributes --------------------------------------------------------------------------
    def get_col_names(self):
        """The output column names, in order."""
        return list(self._columns)

    def get_dataset_size(self):
        """Rows per epoch (batches after ``batch``). Computed from the sizes of the source and
        the operations; when a source has no ``len()`` (a generator), one epoch is run to count
        it (once: the count is cached). Raises ValueError for a dataset that repeats forever."""
        size = self._size()
        if size is None:
            if not self._countable():
                raise ValueError(
                    f"get_dataset_size: {self!r} reads a one-shot iterator of unknown length; "
                    "counting it would consume it. Give GeneratorDataset the generator function "
                    "(a callable) or an object with __len__"
                )
            if self._counted is None:
                self._counted = sum(len(c) for c in _run_once(self, _COUNT_KEY, _ROWS_PER_CHUNK))
            size = self._counted
        if size == math.inf:
            raise ValueError(
                f"get_dataset_size: {self!r} repeats forever (repeat() with count None or -1)"
            )
        return int(size)

    def __len__(self):
        try:
            return self.get_dataset_size()
        except ValueError as exc:
            raise TypeError(str(exc)) from None

    def get_batch_size(self):
        """The batch size of the last ``batch`` in the chain (1 without one)."""
        node = self
        while node.children:
            if isinstance(node, BatchDataset):
                return node.batch_size
            node = node.children[0]
        return 1

    def get_repeat_count(self):
        """The count of the last ``repeat`` in the chain (1 without one; -1 for forever)."""
        node = self
        while node.children:
            if isinstance(node, RepeatDataset):
                return -1 if node.count == math.inf else node.count
            node = node.children[0]
        return 1

    def output_shapes(self):
        """Shapes of the first row's columns (runs the pipeline for one chunk)."""
        return [list(np.shape(v)) for v in self._first_row()]

    def output_types(self):
        """numpy dtypes of the first row's columns."""
        return [np.asarray(v).dtype for v in self._first_row()]

    def _first_row(self):
        for chunk in _run_once(self, _PEEK_KEY, 1):
            if len(chunk):
                return chunk.as_rows()[0]
        raise ValueError(f"{self!r}: the dataset is empty")

    # -- iteration ---------------------------------------------------------------------------
    def create_tuple_iterator(self, columns=None, num_epochs=-1, output_numpy=False, do_copy=True):
        """An iterator of rows as lists of ``core.Tensor`` (numpy arrays with
        ``output_numpy=True``; string columns stay numpy). Each ``for`` loop over it runs one
        epoch, for at most ``num_epochs`` epochs (-1: no limit); ``columns`` selects and orders
        the columns. The rows are prepared by a background thread (see ``prefetch.py``);
        ``stop()`` (or dropping the iterator) ends it early. ``do_copy``: copy values that
        could alias memory the source holds."""
        return TupleIterator(self, columns, num_epochs, output_numpy, do_copy)

    def create_dict_iterator(self, num_epochs=-1, output_numpy=False, do_copy=True):
        """As :meth:`create_tuple_iterator`, with rows as ``{column name: value}`` dicts."""
        return DictIterator(self, None, num_epochs, output_numpy, do_copy)

    def __iter__(self):
        """One epoch of rows as lists of ``core.Tensor`` (``create_tuple_iterator(num_epochs=1)``);
        each new ``for`` loop is the next epoch of this dataset."""
        return self.create_tuple_iterator(num_epochs=1)

    def __repr__(self):
        parts, node = [], self
        while True:
            parts.append(node._describe())
            if not node.children:
                break
            node = node.children[0]
        return " -> ".join(reversed(parts))


def _run_once(dataset, key, hint):
    """The chunks of one epoch of ``dataset`` run in this thread under ``key`` (not counted
    as an epoch), with its own pools, closed at the end."""
    run = Run()
    gen = dataset._chunks(EpochContext(0, (key,), run), hint)
    try:
        yield from gen
    finally:
        gen.close()
        run.close()


# ---- operations -----------------------------------------------------------------------------


def _fn_name(fn):
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def apply_functions(fns, out_names, rows):
    """Apply the chain ``fns`` to each argument tuple of ``rows``.

    Returns ``(outputs, failure)``: ``outputs`` a list with one tuple of ``len(out_names)``
    values per row done; ``failure`` None, or ``(position, exc, text, None)`` for the first row
    that raised or returned the wrong number of values. Runs in the pipeline's thread or in a
    worker; the values are checked (dtype, rank, convertibility) by the map node afterwards.
    """
    n_out = len(out_names)
    out = []
    append = out.append
    j = 0
    try:
        if len(fns) == 1:
            fn = fns[0]
            for j, args in enumerate(rows):
                res = fn(*args)
                if type(res) is not tuple:
                    res = tuple(res) if isinstance(res, tuple) else (res,)
                if len(res) != n_out:
                    return out, (j, None, _count_text(len(res), out_names), None)
                append(res)
        else:
            for j, args in enumerate(rows):
                for fn in fns:
                    res = fn(*args)
                    args = tuple(res) if isinstance(res, tuple) else (res,)
                if len(args) != n_out:
                    return out, (j, None, _count_text(len(args), out_names), None)
                append(args)
    except Exception as exc:
        return out, (j, exc, None, None)
    return out, None


def _count_text(got, out_names):
    return (
        f"the operation returned {got} values, but output_columns {list(out_names)} "
        f"expects {len(out_names)}"
    )


def _placement(names, inputs, outputs, where):
    """Column names after replacing ``inputs`` by ``outputs`` (at the first input's place), and
    the positions of each new column in ``row + outputs``."""
    missing = [c for c in inputs if c not in names]
    if missing:
        raise ValueError(f"{where}: input column(s) {missing} not in the dataset's columns {names}")
    first = min(names.index(c) for c in inputs)
    remaining = [c for c in names if c not in inputs]
    clash = [c for c in outputs if c in remaining]
    if clash:
        raise ValueError(
            f"{where}: output column(s) {clash} already name other columns of {names}; "
            "rename or project first"
        )
    new_names = remaining[:first] + list(outputs) + remaining[first:]
    positions = [
        len(names) + outputs.index(c) if c in outputs else names.index(c) for c in new_names
    ]
    return new_names, positions


class _OneChild(Dataset):
    """A node that reads one child: its rows are batches when the child's are, and it has the
    child's number of rows per epoch unless it says otherwise (``_size``)."""

    def __init__(self, child, columns):
        super().__init__([child], columns)
        self._batched = child._batched

    def _size(self):
        return self.children[0]._size()


class MapDataset(_OneChild):
    """``dataset.map(...)``; see :meth:`Dataset.map`."""

    def __init__(
        self, child, operations, input_columns, output_columns, num_parallel_workers,
        python_multiprocessing,
    ):  # fmt: skip
        fns = list(operations) if isinstance(operations, (list, tuple)) else [operations]
        if not fns or not all(callable(f) for f in fns):
            raise TypeError(
                f"map: operations must be a callable or a list of them, got {operations!r}"
            )
        self.label = f"map({', '.join(_fn_name(f) for f in fns)})"
        names = child.get_col_names()
        inputs = column_names(input_columns, f"{self.label} input_columns") or list(names)
        outputs = column_names(output_columns, f"{self.label} output_columns") or list(inputs)
        new_names, positions = _placement(names, inputs, outputs, self.label)
        super().__init__(child, new_names)
        in_positions = [names.index(c) for c in inputs]
        self._all_inputs = in_positions == list(range(len(names)))
        self._get_inputs = _tuple_getter(in_positions)
        self._outputs_are_row = self._all_inputs and new_names == outputs
        self._assemble = _tuple_getter(positions)
        self.output_columns = outputs
        workers = num_parallel_workers or config.get_num_parallel_workers()
        self.num_parallel_workers = _check_int(workers, "num_parallel_workers", self.label, 1)
        self.python_multiprocessing = bool(python_multiprocessing)
        self._runner = functools.partial(apply_functions, tuple(fns), tuple(outputs))
        if self.python_multiprocessing and self.num_parallel_workers > 1:
            check_picklable(self._runner, self.label)

    def _describe(self):
        return self.label

    def _chunks(self, ctx, hint):
        spec = ctx.run.state.setdefault((id(self), "spec"), {})
        what = "batch" if self._batched else "sample"
        upstream = self.children[0]._chunks(ctx, hint)
        if self.num_parallel_workers == 1:
            for chunk in upstream:
                out, failure = self._runner(self._inputs(chunk))
                if failure is not None:
                    raise_failure(self.label, what, chunk.origins, failure[0], failure)
                yield self._output(chunk, out, spec, what)
            return
        pool = ctx.run.pool(
            self,
            lambda: WorkerPool(
                self._runner, self.num_parallel_workers, self.python_multiprocessing, "map"
            ),
        )
        jobs = ((chunk, self._inputs(chunk)) for chunk in upstream)
        for chunk, futures in parallel_pieces(pool, jobs, self.num_parallel_workers):
            out = gather(futures, self.label, what, chunk.origins)
            yield self._output(chunk, out, spec, what)

    def _inputs(self, chunk):
        rows = chunk.as_rows()
        return rows if self._all_inputs else [self._get_inputs(r) for r in rows]

    def _output(self, chunk, out, spec, what):
        """The output chunk, after checking that every output column holds arrays (numpy
        scalars count; other values are converted, and a value numpy can only store as an
        object is refused) with the dtype and rank of the first row this map produced."""
        if not out:
            return Chunk(chunk.origins, rows=[], private=False)
        converted = False
        columns = list(zip(*out))
        for c, name in enumerate(self.output_columns):
            col = columns[c]
            try:
                kinds = {(v.dtype, v.ndim) for v in col}
            except AttributeError:  # Python numbers or lists among the outputs
                col = columns[c] = self._as_arrays(col, name, chunk.origins, what)
                kinds = {(v.dtype, v.ndim) for v in col}
                converted = True
            if c not in spec:
                v0 = col[0]
                if v0.dtype.kind == "O":
                    self._refuse(name, what, chunk.origins[0], v0)
                spec[c] = (v0.dtype, v0.ndim, int(chunk.origins[0]))
            dtype, ndim, origin0 = spec[c]
            if len(kinds) > 1 or (dtype, ndim) not in kinds:
                for j, v in enumerate(col):
                    if v.dtype != dtype or v.ndim != ndim:
                        origin = int(chunk.origins[j])
                        raise PipelineError(
                            f"{self.label}: output column {name!r} of {what} {origin} is "
                            f"{v.dtype} with shape {np.shape(v)}, but {what} {origin0} gave "
                            f"{dtype} with {ndim} dimension(s); every row of a column must "
                            "have one dtype and rank",
                            stage=self.label,
                            index=origin,
                        )
        if converted:
            out = list(zip(*columns))
        if self._outputs_are_row:
            rows = out
        else:
            assemble = self._assemble
            rows = [assemble(r + o) for r, o in zip(chunk.as_rows(), out)]
        return Chunk(chunk.origins, rows=rows, private=False)

    def _as_arrays(self, col, name, origins, what):
        arrays = []
        for j, v in enumerate(col):
            arr = as_array(v)
            if arr is None:
                self._refuse(name, what, origins[j], v)
            arrays.append(arr)
        return arrays

    def _refuse(self, name, what, origin, value):
        raise PipelineError(
            f"{self.label}: output column {name!r} of {what} {int(origin)} is a "
            f"{type(value).__name__} that numpy can only hold as an object, not an array",
            stage=self.label,
            index=int(origin),
        )


class ShuffleDataset(_OneChild):
    """``dataset.shuffle(buffer_size)``; see :meth:`Dataset.shuffle`."""

    def __init__(self, child, buffer_size, seed=None):
        self.buffer_size = _check_int(buffer_size, "buffer_size", "shuffle", 2)
        self.seed = _check_seed(seed, "shuffle")
        super().__init__(child, child.get_col_names())

    def _describe(self):
        return f"shuffle({self.buffer_size})"

    def _chunks(self, ctx, hint):
        rng = epoch_rng(self, self.seed, ctx)
        size = self.buffer_size
        uniforms = iter(())

        def pick(n):  # a uniform int in [0, n), from blocks of doubles
            nonlocal uniforms
            u = next(uniforms, None)
            if u is None:
                uniforms = iter(rng.random(4096).tolist())
                u = next(uniforms)
            return int(u * n)

        buf_rows, buf_origins, out_rows, out_origins = [], [], [], []
        for chunk in self.children[0]._chunks(ctx, hint):
            for row, origin in zip(chunk.as_rows(), chunk.origins):
                if len(buf_rows) < size:
                    buf_rows.append(row)
                    buf_origins.append(origin)
                    continue
                j = pick(size)
                out_rows.append(buf_rows[j])
                out_origins.append(buf_origins[j])
                buf_rows[j] = row
                buf_origins[j] = origin
            if len(out_rows) >= hint:
                yield Chunk(out_origins, rows=out_rows)
                out_rows, out_origins = [], []
        while buf_rows:  # drain: a uniform pick each time, the last row fills the hole
            j = pick(len(buf_rows))
            out_rows.append(buf_rows[j])
            out_origins.append(buf_origins[j])
            buf_rows[j], buf_origins[j] = buf_rows[-1], buf_origins[-1]
            buf_rows.pop()
            buf_origins.pop()
            if len(out_rows) >= hint:
                yield Chunk(out_origins, rows=out_rows)
                out_rows, out_origins = [], []
        if out_rows:
            yield Chunk(out_origins, rows=out_rows)


class BatchInfo:
    """What ``per_batch_map`` learns about the batch (``mindspore.dataset.BatchInfo``)."""

    def __init__(self, batch_num, epoch_num):
        self._batch_num = batch_num
        self._epoch_num = epoch_num

    def get_batch_num(self):
        """The batch's number within the epoch, from 0."""
        return self._batch_num

    def get_epoch_num(self):
        """The epoch's number, from 0."""
        return self._epoch_num


class BatchDataset(Dataset):
    """``dataset.batch(...)``; see :meth:`Dataset.batch`."""

    def __init__(
        self, child, batch_size, drop_remainder, per_batch_map, input_columns, output_columns
    ):
        self.batch_size = _check_int(batch_size, "batch_size", "batch", 1)
        self.drop_remainder = bool(drop_remainder)
        self.label = f"batch({self.batch_size})"
        names = child.get_col_names()
        self.per_batch_map = per_batch_map
        if per_batch_map is not None:
            if not callable(per_batch_map):
                raise TypeError(
                    f"{self.label}: per_batch_map must be callable, got {per_batch_map!r}"
                )
            inputs = column_names(input_columns, f"{self.label} input_columns") or list(names)
            outputs = column_names(output_columns, f"{self.label} output_columns") or list(inputs)
            new_names, positions = _placement(names, inputs, outputs, self.label)
            self._in_positions = [names.index(c) for c in inputs]
            self._kept = [i for i, c in enumerate(names) if c not in inputs]
            self._outputs = outputs
            self._assemble = _tuple_getter(positions)
        elif input_columns is not None or output_columns is not None:
            raise ValueError(f"{self.label}: input_columns/output_columns need a per_batch_map")
        else:
            new_names = names
        super().__init__([child], new_names)
        self._batched = True
        self._in_names = names

    def _describe(self):
        return self.label + (", drop_remainder" if self.drop_remainder else "")

    def _size(self):
        n = self.children[0]._size()
        if n is None or n == math.inf:
            return n
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)

    def _chunks(self, ctx, hint):
        bs = self.batch_size
        pending = deque()  # [chunk, offset of its first unused row]
        count = 0
        number = 0
        for chunk in self.children[0]._chunks(ctx, bs):
            if not len(chunk):
                continue
            pending.append([chunk, 0])
            count += len(chunk)
            batches = []
            while count >= bs:
                batches.append(self._assemble_batch(_pop_rows(pending, bs), ctx, number))
                count -= bs
                number += 1
            if batches:
                yield Chunk(list(range(number - len(batches), number)), rows=batches, private=True)
        if count and not self.drop_remainder:
            yield Chunk(
                [number],
                rows=[self._assemble_batch(_pop_rows(pending, count), ctx, number)],
                private=True,
            )

    def _assemble_batch(self, pieces, ctx, number):
        if self.per_batch_map is None and all(p.cols is not None for p in pieces):
            if len(pieces) == 1:
                return pieces[0].cols
            return tuple(np.concatenate(cs) for cs in zip(*(p.cols for p in pieces)))
        rows, origins = [], []
        for p in pieces:
            rows.extend(p.as_rows())
            origins.extend(p.origins)
        if self.per_batch_map is None:
            return tuple(
                self._stack(rows, origins, c, name) for c, name in enumerate(self._in_names)
            )
        return self._per_batch(rows, origins, ctx, number)

    def _stack(self, rows, origins, c, name, values=None):
        """Column ``c`` of ``rows`` as one array [len(rows), *sample_shape]; every sample must
        have the first one's shape and dtype (numpy would otherwise promote silently)."""
        vals = [r[c] for r in rows] if values is None else values
        try:
            arr = np.array(vals)  # faster than np.stack for many small arrays
            uniform = arr.dtype.kind != "O" and len({v.dtype for v in vals}) == 1
        except (ValueError, TypeError, AttributeError):  # ragged; or Python scalars (no dtype)
            uniform = False
        if uniform:
            return arr
        arrays = [np.asarray(v) for v in vals]
        v0 = arrays[0]
        for j, v in enumerate(arrays):
            if v.shape != v0.shape or not _same_dtype(v.dtype, v0.dtype) or v.dtype.kind == "O":
                raise PipelineError(
                    f"{self.label}: column {name!r} of sample {int(origins[j])} has shape "
                    f"{v.shape} and dtype {v.dtype}, but sample {int(origins[0])} of the "
                    f"same batch has shape {v0.shape} and dtype {v0.dtype}; the samples of "
                    "a batch must match (pad, crop or cast them in a map first)",
                    stage=self.label,
                    index=int(origins[j]),
                )
        return np.array(arrays)  # Python scalars of one type: one dtype after asarray

    def _per_batch(self, rows, origins, ctx, number):
        lists = [[r[i] for r in rows] for i in self._in_positions]
        try:
            res = self.per_batch_map(*lists, BatchInfo(number, ctx.epoch))
        except Exception as exc:
            raise PipelineError(
                f"{self.label}: per_batch_map raised on batch {number}: {type(exc).__name__}: {exc}",
                stage=self.label,
                index=number,
            ) from exc
        res = res if isinstance(res, tuple) else (res,)
        if len(res) != len(self._outputs):
            raise PipelineError(
                f"{self.label}: per_batch_map returned {len(res)} values on batch {number}, but "
                f"output_columns {self._outputs} expects {len(self._outputs)}",
                stage=self.label,
                index=number,
            )
        names = self._in_names
        kept = tuple(self._stack(rows, origins, c, names[c]) for c in self._kept)
        made = []
        for name, value in zip(self._outputs, res):
            if isinstance(value, np.ndarray):
                made.append(value)
            else:
                made.append(self._stack(None, origins, None, name, values=list(value)))
        # _assemble indexes ``row + outputs`` by the old column positions: rebuild that row
        full = [None] * len(names)
        for c, arr in zip(self._kept, kept):
            full[c] = arr
        return self._assemble(tuple(full) + tuple(made))


def _same_dtype(a, b):
    """Equal dtypes; strings of different lengths count as one dtype."""
    return a == b or (a.kind == b.kind and a.kind in "US")


def _pop_rows(pending, n):
    """Take the next ``n`` rows from ``pending`` (a deque of [chunk, offset]) as chunk pieces."""
    pieces = []
    while n:
        entry = pending[0]
        chunk, offset = entry
        left = len(chunk) - offset
        if left <= n:
            pieces.append(chunk if offset == 0 else chunk.slice(offset, len(chunk)))
            pending.popleft()
            n -= left
        else:
            pieces.append(chunk.slice(offset, offset + n))
            entry[1] = offset + n
            n = 0
    return pieces


class RepeatDataset(_OneChild):
    """``dataset.repeat(count)``; see :meth:`Dataset.repeat`."""

    def __init__(self, child, count=None):
        if count is None or count == -1:
            self.count = math.inf
        else:
            self.count = _check_int(count, "count", "repeat (None or -1 for forever)", 1)
        super().__init__(child, child.get_col_names())

    def _describe(self):
        return f"repeat({'forever' if self.count == math.inf else self.count})"

    def _size(self):
        n = self.children[0]._size()
        if n is None:
            return None
        if self.count == math.inf:
            return 0 if n == 0 else math.inf
        return n * self.count

    def _chunks(self, ctx, hint):
        r = 0
        while r < self.count:
            produced = 0
            for chunk in self.children[0]._chunks(ctx.sub(r), hint):
                produced += len(chunk)
                yield chunk
            if not produced and self.count == math.inf:
                raise PipelineError(
                    f"{self._describe()}: the dataset below yields no rows, so repeating it "
                    "forever would never yield one",
                    stage="repeat",
                )
            r += 1


class TakeDataset(_OneChild):
    """``dataset.take(count)``; see :meth:`Dataset.take`."""

    def __init__(self, child, count=-1):
        self.count = math.inf if count == -1 else _check_int(count, "count", "take (or -1)", 0)
        super().__init__(child, child.get_col_names())

    def _describe(self):
        return f"take({self.count})"

    def _size(self):
        n = self.children[0]._size()
        return None if n is None else min(n, self.count)

    def _chunks(self, ctx, hint):
        left = self.count
        if left == 0:
            return
        for chunk in self.children[0]._chunks(ctx, hint):
            if len(chunk) >= left:
                yield chunk if len(chunk) == left else chunk.slice(0, left)
                return
            left -= len(chunk)
            yield chunk


class SkipDataset(_OneChild):
    """``dataset.skip(count)``; see :meth:`Dataset.skip`."""

    def __init__(self, child, count):
        self.count = _check_int(count, "count", "skip", 0)
        super().__init__(child, child.get_col_names())

    def _describe(self):
        return f"skip({self.count})"

    def _size(self):
        n = self.children[0]._size()
        return None if n is None else max(0, n - self.count)

    def _chunks(self, ctx, hint):
        left = self.count
        for chunk in self.children[0]._chunks(ctx, hint):
            if left >= len(chunk):
                left -= len(chunk)
                continue
            yield chunk if left == 0 else chunk.slice(left, len(chunk))
            left = 0


class ProjectDataset(_OneChild):
    """``dataset.project(columns)``; see :meth:`Dataset.project`."""

    def __init__(self, child, columns):
        names = child.get_col_names()
        cols = column_names(columns, "project")
        missing = [c for c in cols if c not in names]
        if missing:
            raise ValueError(f"project: column(s) {missing} not in the dataset's columns {names}")
        super().__init__(child, cols)
        self._positions = [names.index(c) for c in cols]
        self._get = _tuple_getter(self._positions)

    def _describe(self):
        return f"project({self._columns})"

    def _chunks(self, ctx, hint):
        get = self._get
        for chunk in self.children[0]._chunks(ctx, hint):
            if chunk.cols is not None:
                cols = tuple(chunk.cols[p] for p in self._positions)
                yield Chunk(chunk.origins, cols=cols, private=chunk.private)
            else:
                yield Chunk(chunk.origins, rows=[get(r) for r in chunk.rows], private=chunk.private)


class RenameDataset(_OneChild):
    """``dataset.rename(input_columns, output_columns)``; see :meth:`Dataset.rename`."""

    def __init__(self, child, input_columns, output_columns):
        names = child.get_col_names()
        old = column_names(input_columns, "rename input_columns")
        new = column_names(output_columns, "rename output_columns")
        if len(old) != len(new):
            raise ValueError(f"rename: {len(old)} input_columns but {len(new)} output_columns")
        missing = [c for c in old if c not in names]
        if missing:
            raise ValueError(f"rename: column(s) {missing} not in the dataset's columns {names}")
        renamed = [new[old.index(c)] if c in old else c for c in names]
        if len(set(renamed)) != len(renamed):
            raise ValueError(f"rename: the result {renamed} has duplicate column names")
        super().__init__(child, renamed)

    def _describe(self):
        return f"rename({self._columns})"

    def _chunks(self, ctx, hint):
        return self.children[0]._chunks(ctx, hint)


# ---- iterators ------------------------------------------------------------------------------


class _Iterator:
    """Runs epochs of a dataset and hands out its rows (see create_tuple_iterator)."""

    def __init__(self, dataset, columns, num_epochs, output_numpy, do_copy):
        if num_epochs != -1:
            _check_int(num_epochs, "num_epochs", "create_*_iterator (or -1)", 1)
        self._owner = dataset  # whose epoch counter numbers the epochs
        self._top = dataset if columns is None else ProjectDataset(dataset, columns)
        self._names = self._top.get_col_names()
        self._epochs_left = num_epochs
        self._output_numpy = bool(output_numpy)
        self._do_copy = bool(do_copy)
        self._run = Run()
        self._feed = None
        self._rows = ()
        self._pos = 0
        self._private = True
        self._stopped = False

    def __iter__(self):
        return self

    def __next__(self):
        while self._pos >= len(self._rows):
            if self._feed is None:
                if self._stopped or self._epochs_left == 0:
                    raise StopIteration
                self._start_epoch()
            try:
                chunk = self._feed.next_chunk()
            except BaseException:
                self.stop()
                raise
            if chunk is None:
                self._end_epoch()
                raise StopIteration
            self._rows = chunk.as_rows()
            self._pos = 0
            self._private = chunk.private
        row = self._rows[self._pos]
        self._pos += 1
        return self._emit([self._convert(v) for v in row])

    def _start_epoch(self):
        epoch = next(self._owner._epochs)
        ctx = EpochContext(epoch, (epoch,), self._run)
        make = functools.partial(self._top._chunks, ctx, _ROWS_PER_CHUNK)
        size = config.get_prefetch_size()
        self._feed = Prefetcher(make, size) if size > 0 else Inline(make)

    def _end_epoch(self):
        feed, self._feed = self._feed, None
        feed.close()
        self._rows, self._pos = (), 0
        if self._epochs_left > 0:
            self._epochs_left -= 1
            if self._epochs_left == 0:
                self.stop()

    def _convert(self, v):
        if type(v) is not np.ndarray:
            v = np.asarray(v)
        if self._do_copy and not self._private:
            v = v.copy()
        if self._output_numpy or v.dtype.kind in "USO":
            return v
        return Tensor(v)

    def _emit(self, values):
        raise NotImplementedError

    def stop(self):
        """End the iterator: stop the prefetch thread and shut the worker pools down."""
        self._stopped = True
        feed, self._feed = self._feed, None
        if feed is not None:
            feed.close()
        self._rows, self._pos = (), 0
        self._run.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def __del__(self):
        try:
            self.stop()
        except Exception:  # interpreter shutdown: nothing left to release
            pass

    def get_col_names(self):
        return list(self._names)


class TupleIterator(_Iterator):
    """Rows as lists of values in column order (``Dataset.create_tuple_iterator``)."""

    def _emit(self, values):
        return values


class DictIterator(_Iterator):
    """Rows as ``{column name: value}`` (``Dataset.create_dict_iterator``)."""

    def _emit(self, values):
        return dict(zip(self._names, values))
