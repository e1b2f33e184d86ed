"""The pipeline's background work: the prefetch thread with its bounded queue, the worker pools
of ``map`` and of parallel sources, and :class:`PipelineError`.

Prefetch. One daemon thread per epoch runs the whole chain (source, maps, shuffles, batches) and
puts its chunks of rows into a bounded buffer of ``prefetch_size`` chunks (``_Channel``); the
consumer takes them out, several at a time when they come fast. The thread holds no reference
to the iterator that owns it, so an iterator dropped early (a ``break`` out of a ``for`` loop)
is collected at once, and its ``__del__`` stops the thread: it sets the stop event, the thread
notices it when it next hands over a chunk (it waits for room at most 50 ms at a time), closes
the generator chain (whose ``finally`` blocks cancel queued worker tasks) and exits; the
consumer joins it. Everything the thread raises is handed over and re-raised by the consumer,
so an error never ends as a hang or a silently short epoch.

Workers. ``map(..., num_parallel_workers=k)`` runs its function on a ``ThreadPoolExecutor`` (numpy
releases the GIL, so array-heavy maps run in parallel) or, with ``python_multiprocessing=True``,
on a ``ProcessPoolExecutor`` started with the ``forkserver`` method (``spawn`` where that is
missing): never ``fork``, which copies locks held by other threads of this process (BLAS pools,
the prefetch thread) into the child. The function travels to each worker process once, pickled
by reference, so it must be importable (a module-level ``def``, not a lambda or closure); the
error says so at ``map()`` time. Pools live as long as the iterator that created them and are
shut down (pending tasks cancelled, workers joined, so no zombie processes) when it stops.
"""

import concurrent.futures as _cf
import itertools
import multiprocessing as _mp
import pickle
import threading
import time
import traceback
from collections import deque

__all__ = ["PipelineError", "Prefetcher", "WorkerPool", "check_picklable"]


class PipelineError(RuntimeError):
    """An error inside the pipeline, re-raised in the consumer's thread.

    Attributes:
        stage: the operation that failed, e.g. ``"map(normalize)"`` or ``"GeneratorDataset"``.
        index: the sample index (the source index of the row; for operations after ``batch``,
            the batch number in the epoch), or None when no single row is to blame.

    The original exception is chained as ``__cause__`` (for process workers, its traceback
    text is part of the message, since the traceback itself stays in the worker).
    """

    def __init__(self, message, stage=None, index=None):
        super().__init__(message)
        self.stage = stage
        self.index = index


# ---- worker pools ---------------------------------------------------------------------------

_WORKER_STATE = {}  # in a worker process: pool key -> the runner installed by _install
_KEYS = itertools.count()


def _install(key, runner):
    _WORKER_STATE[key] = runner


def _portable(failure):
    """A failure tuple ``(position, exc, text, tb)`` that survives pickling: the exception
    object is kept only when it pickles, the traceback travels as text."""
    position, exc, text, _ = failure
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)) if exc else None
    if exc is not None:
        try:
            pickle.dumps(exc)
        except Exception:
            text = text or f"{type(exc).__name__}: {exc}"
            exc = None
    return position, exc, text, tb


def _run_in_process(key, args):
    result, failure = _WORKER_STATE[key](*args)
    return result, (None if failure is None else _portable(failure))


def _mp_context():
    """forkserver (its server imports this package once, and every worker forks from it
    with the import done), else spawn."""
    if "forkserver" in _mp.get_all_start_methods():
        ctx = _mp.get_context("forkserver")
        ctx.set_forkserver_preload([__name__])
        return ctx
    return _mp.get_context("spawn")


def check_picklable(obj, what):
    """Raise TypeError naming ``what`` when ``obj`` cannot be sent to a worker process."""
    try:
        pickle.dumps(obj)
    except Exception as exc:
        raise TypeError(
            f"{what}: python_multiprocessing=True sends the function (or source) to worker "
            f"processes by pickling, and {obj!r} cannot be pickled ({type(exc).__name__}: {exc}). "
            "Use a module-level function or a picklable object, or python_multiprocessing=False "
            "for threads"
        ) from exc


class WorkerPool:
    """``num_workers`` threads or processes running one ``runner(*args) -> (result, failure)``.

    Args:
        runner: the work function; for processes it is pickled once per worker.
        num_workers: int >= 1.
        processes: True for a process pool, False for threads.
        name: used in thread names (``datasets-<name>``) and error messages.
    """

    def __init__(self, runner, num_workers, processes, name):
        self.name = name
        self.processes = processes
        if processes:
            check_picklable(runner, name)
            self._key = next(_KEYS)
            self._executor = _cf.ProcessPoolExecutor(
                num_workers,
                mp_context=_mp_context(),
                initializer=_install,
                initargs=(self._key, runner),
            )
        else:
            self._runner = runner
            self._executor = _cf.ThreadPoolExecutor(
                num_workers, thread_name_prefix=f"datasets-{name}"
            )

    def submit(self, *args):
        """A future of ``runner(*args)``."""
        if self.processes:
            return self._executor.submit(_run_in_process, self._key, args)
        return self._executor.submit(self._runner, *args)

    def close(self):
        """Cancel queued tasks, wait for running ones, join the workers."""
        executor = self._executor
        if not self.processes:
            executor.shutdown(wait=True, cancel_futures=True)
            return
        # shutdown(wait=False) drops these references: keep them to finish the join here
        manager = getattr(executor, "_executor_manager_thread", None)
        processes = getattr(executor, "_processes", None) or {}
        executor.shutdown(wait=False, cancel_futures=True)
        while manager is not None and manager.is_alive():
            if getattr(executor, "_broken", False):
                # A worker died. CPython (3.11) terminates the other workers and joins them,
                # but one started while the pool broke is missed, waits for work forever,
                # and the join with it: end every worker still alive.
                for process in list(processes.values()):
                    if process.is_alive():
                        process.terminate()
            manager.join(_POLL_S)


# ---- the prefetch thread --------------------------------------------------------------------

_END = object()
_POLL_S = 0.05  # how often blocked threads look at the stop event / the producer's life
_GROUP = 8  # a waiting consumer is woken once this many chunks are ready...
_GATHER_S = 1e-3  # ...or once it has waited this long (its latency bound)


class _Failed:
    """What the thread raised, on its way to the consumer."""

    __slots__ = ("exc",)

    def __init__(self, exc):
        self.exc = exc


class _Channel:
    """A bounded buffer of chunks from the prefetch thread to the consumer.

    The consumer takes everything buffered at once. When it finds the buffer empty it waits,
    and the producer wakes it only once ``_GROUP`` chunks are ready, the buffer is full, the
    stream ended, or it has waited ``_GATHER_S``: waking a thread costs a context switch and a
    GIL hand-over (~20 us), more than a small chunk's work, so a fast pipeline hands over
    chunks in groups instead of one by one. A chunk waits at most ``_GATHER_S`` for the
    consumer to notice it.
    """

    def __init__(self, capacity):
        self._items = deque()
        self._capacity = capacity
        self._cond = threading.Condition(threading.Lock())
        self._waiting_since = None  # when the consumer began to wait, while it waits

    def put(self, item, stop):
        """Append ``item`` once there is room; False when ``stop`` is set first."""
        with self._cond:
            while len(self._items) >= self._capacity:
                if stop.is_set():
                    return False
                self._cond.notify_all()
                self._cond.wait(_POLL_S)
            if stop.is_set():
                return False
            self._items.append(item)
            since = self._waiting_since
            if since is not None and (
                len(self._items) >= min(_GROUP, self._capacity)
                or item is _END
                or type(item) is _Failed
                or time.monotonic() - since >= _GATHER_S
            ):
                self._cond.notify_all()
        return True

    def take_all(self, producer):
        """Everything buffered (waiting for at least one item); PipelineError when the
        producer thread died without a word."""
        with self._cond:
            if not self._items:
                self._waiting_since = time.monotonic()
                self._cond.wait(_GATHER_S)
                while not self._items:
                    if not producer.is_alive():
                        self._waiting_since = None
                        raise PipelineError(
                            "the prefetch thread ended without delivering the end of the epoch"
                        )
                    self._cond.wait(_POLL_S)
                self._waiting_since = None
            items = list(self._items)
            self._items.clear()
            self._cond.notify_all()  # a producer waiting for room
            return items

    def wake(self):
        """Drop what is buffered and wake a producer waiting for room (after stop is set)."""
        with self._cond:
            self._items.clear()
            self._cond.notify_all()


def _produce(make_chunks, channel, stop):
    gen = None
    try:
        gen = make_chunks()
        for chunk in gen:
            if not channel.put(chunk, stop):
                return
        channel.put(_END, stop)
    except BaseException as exc:  # re-raised in the consumer, never swallowed
        channel.put(_Failed(exc), stop)
    finally:
        if gen is not None:
            try:
                gen.close()  # runs the chain's finally blocks (cancels queued worker tasks)
            except BaseException as exc:  # only reported when nothing else was
                channel.put(_Failed(exc), stop)


class Prefetcher:
    """Runs ``make_chunks()`` (a generator of chunks) in a daemon thread, at most ``size``
    chunks ahead of the consumer (see :class:`_Channel`).

    ``next_chunk()`` returns the next chunk, None at the end of the stream, or raises what the
    thread raised. ``close()`` stops and joins the thread.
    """

    def __init__(self, make_chunks, size, name="datasets-prefetch"):
        self._channel = _Channel(size)
        self._stop = threading.Event()
        self._ready = deque()
        self._done = False
        # the target gets only the channel, the event and the chain: no reference back to the
        # iterator that owns this object, so dropping the iterator stops the thread
        self._thread = threading.Thread(
            target=_produce, args=(make_chunks, self._channel, self._stop), name=name, daemon=True
        )
        self._thread.start()

    def next_chunk(self):
        if self._done:
            return None
        if not self._ready:
            try:
                self._ready.extend(self._channel.take_all(self._thread))
            except PipelineError:
                self._done = True
                raise
        item = self._ready.popleft()
        if item is _END:
            self._done = True
            self._thread.join()
            return None
        if type(item) is _Failed:
            self._done = True
            self._thread.join()
            raise item.exc
        return item

    def close(self, timeout=60.0):
        """Stop the thread (after the chunk it is working on) and join it."""
        self._stop.set()
        self._channel.wake()
        self._ready.clear()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)
        self._done = True


class Inline:
    """The same interface as :class:`Prefetcher`, running the chain in the caller's thread
    (``prefetch_size=0``)."""

    def __init__(self, make_chunks):
        self._gen = make_chunks()

    def next_chunk(self):
        if self._gen is None:
            return None
        try:
            return next(self._gen)
        except StopIteration:
            self._gen = None
            return None
        except BaseException:
            self._gen = None
            raise

    def close(self, timeout=None):
        if self._gen is not None:
            self._gen.close()
            self._gen = None
