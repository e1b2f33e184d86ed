"""The pipeline's background work: the prefetch thread with its bounded queue, the worker pools
of ``map`` and of parallel sources, and :class:`PipelineError`.

Prefetch. One daemon thread per epoch runs the whole chain (source, maps, shuffles, batches) and
puts its chunks of rows into a ``queue.Queue(maxsize=prefetch_size)``; the consumer takes them out.
The thread holds no reference to the iterator that owns it, so an iterator dropped early (a
``break`` out of a ``for`` loop) is collected at once, and its ``__del__`` stops the thread:
it sets the stop event, the thread notices it at its next ``put`` (a ``put`` waits at most 50 ms
at a time), closes the generator chain (whose ``finally`` blocks cancel queued worker tasks) and
exits; the consumer joins it. Everything the thread raises is put into the queue and re-raised
by the consumer, so an error never ends as a hang or a silently short epoch.

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
import queue
import threading
import traceback

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
        self._executor.shutdown(wait=True, cancel_futures=True)


# ---- the prefetch thread --------------------------------------------------------------------

_END = object()
_POLL_S = 0.05


class _Failed:
    """What the thread raised, on its way to the consumer."""

    __slots__ = ("exc",)

    def __init__(self, exc):
        self.exc = exc


def _put(q, item, stop):
    """Put ``item`` unless ``stop`` is set first; False when stopped."""
    while not stop.is_set():
        try:
            q.put(item, timeout=_POLL_S)
            return True
        except queue.Full:
            pass
    return False


def _produce(make_chunks, q, stop):
    gen = None
    try:
        gen = make_chunks()
        for chunk in gen:
            if not _put(q, chunk, stop):
                return
        _put(q, _END, stop)
    except BaseException as exc:  # re-raised in the consumer, never swallowed
        _put(q, _Failed(exc), stop)
    finally:
        if gen is not None:
            try:
                gen.close()  # runs the chain's finally blocks (cancels queued worker tasks)
            except BaseException as exc:  # only reported when nothing else was
                _put(q, _Failed(exc), stop)


class Prefetcher:
    """Runs ``make_chunks()`` (a generator of chunks) in a daemon thread, ``size`` chunks ahead.

    ``next_chunk()`` returns the next chunk, None at the end of the stream, or raises what the
    thread raised. ``close()`` stops and joins the thread.
    """

    def __init__(self, make_chunks, size, name="datasets-prefetch"):
        self._queue = queue.Queue(maxsize=size)
        self._stop = threading.Event()
        self._done = False
        # the target gets only the queue, the event and the chain: no reference back to the
        # iterator that owns this object, so dropping the iterator stops the thread
        self._thread = threading.Thread(
            target=_produce, args=(make_chunks, self._queue, self._stop), name=name, daemon=True
        )
        self._thread.start()

    def next_chunk(self):
        if self._done:
            return None
        while True:
            try:
                item = self._queue.get(timeout=_POLL_S)
                break
            except queue.Empty:
                if not self._thread.is_alive() and self._queue.empty():
                    self._done = True
                    raise PipelineError(
                        "the prefetch thread ended without delivering the end of the epoch"
                    ) from None
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
        try:
            while True:
                self._queue.get_nowait()
        except queue.Empty:
            pass
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
