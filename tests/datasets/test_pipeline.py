"""The pipeline: mindspore.dataset's names and semantics, reproducible shuffles, prefetching,
worker pools, errors that name the sample, sharding."""

import gc
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci import datasets
from diffsci.datasets import GeneratorDataset, NumpySlicesDataset, PipelineError
from diffsci.datasets.pipeline import config as pconfig
from diffsci.datasets.pipeline import prefetch

from . import _pipeline_workers as workers

Pairs = workers.Pairs


def order(ds, column=0):
    """One epoch of a column as a flat list of ints."""
    out = []
    for row in ds.create_tuple_iterator(num_epochs=1, output_numpy=True):
        out.extend(np.ravel(row[column]).tolist())
    return out


def our_threads():
    names = ("datasets-",)
    return [t for t in threading.enumerate() if t.name.startswith(names) or "Executor" in t.name]


@pytest.fixture(autouse=True)
def _no_leaks():
    """Every test leaves no thread behind: no prefetch thread, no pool worker, no process
    pool's management threads."""
    before = set(threading.enumerate())

    def new_threads():
        return [t for t in threading.enumerate() if t not in before and t.is_alive()]

    yield
    if new_threads():
        gc.collect()  # an iterator in a reference cycle (a test's traceback) is released here
    deadline = time.monotonic() + 5
    while new_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not new_threads(), [t.name for t in new_threads()]


# ---- sources, columns, iterators --------------------------------------------------------------


def test_generator_dataset_random_access_columns_and_tensors():
    ds = GeneratorDataset(Pairs(5), ["x", "y"], shuffle=False)
    assert ds.get_col_names() == ["x", "y"]
    assert ds.get_dataset_size() == len(ds) == 5
    rows = list(ds)
    assert len(rows) == 5
    x, y = rows[3]
    assert isinstance(x, core.Tensor) and isinstance(y, core.Tensor)
    assert x.dtype == np.float32 and x.shape == (3,)
    np.testing.assert_array_equal(x.asnumpy(), [3, 3, 3])
    assert int(y.asnumpy()) == 3
    d = next(iter(ds.create_dict_iterator(num_epochs=1, output_numpy=True)))
    assert set(d) == {"x", "y"} and isinstance(d["x"], np.ndarray)
    assert ds.output_shapes() == [[3], []]
    assert ds.output_types() == [np.float32, np.int64]


def test_generator_dataset_iterable_and_callable_sources():
    def gen():
        for i in range(7):
            yield (np.arange(2) + i,)

    assert order(GeneratorDataset(gen, "a"))[:4] == [0, 1, 1, 2]
    assert GeneratorDataset(gen, "a").get_dataset_size() == 7  # counted by running an epoch
    listed = GeneratorDataset([1, 2, 3], "v", shuffle=False)  # bare values, one column
    assert order(listed) == [1, 2, 3]
    once = GeneratorDataset(gen(), "a")  # a generator object: one epoch only
    with pytest.raises(ValueError, match="counting it would consume it"):
        once.get_dataset_size()
    assert len(order(once)) == 14
    with pytest.raises(PipelineError, match="one-shot iterator"):
        order(once)
    with pytest.raises(ValueError, match="random-access"):
        GeneratorDataset(gen, "a", shuffle=True)
    with pytest.raises(ValueError, match="column_names is required"):
        GeneratorDataset(gen)


class ResettingIterator:
    """mindspore.dataset's tutorial source: __iter__ starts over and returns self."""

    def __init__(self, n, reset=True):
        self.n, self.reset, self.i = n, reset, 0

    def __iter__(self):
        if self.reset:
            self.i = 0
        return self

    def __next__(self):
        if self.i >= self.n:
            raise StopIteration
        self.i += 1
        return (np.int64(self.i - 1),)


def test_generator_dataset_source_whose_iter_resets_serves_every_epoch():
    ds = GeneratorDataset(ResettingIterator(5), "v")
    assert order(ds) == order(ds) == [0, 1, 2, 3, 4]
    assert ds.get_dataset_size() == 5
    stuck = GeneratorDataset(ResettingIterator(5, reset=False), "v")
    assert order(stuck) == [0, 1, 2, 3, 4]
    with pytest.raises(PipelineError, match=r"yielded 5 samples in an earlier epoch and none"):
        order(stuck)


class Batched:
    """Random access with PyTorch's batched read: columns by one fancy-index each."""

    def __init__(self, n, as_columns=True):
        self.x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
        self.y = np.arange(n)
        self.as_columns = as_columns
        self.calls = 0

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        raise AssertionError("__getitems__ must be used")

    def __getitems__(self, idx):
        self.calls += 1
        if 13 in idx and self.as_columns is None:
            raise OSError("disk gone")
        if self.as_columns:
            return self.x[idx], self.y[idx]
        return [(self.x[i], self.y[i]) for i in idx]


@pytest.mark.parametrize("as_columns", [True, False])
@pytest.mark.parametrize("n_workers", [1, 2])
def test_batched_reads_with_getitems(as_columns, n_workers):
    src = Batched(50, as_columns)
    ds = GeneratorDataset(
        src, ["x", "y"], seed=3, num_parallel_workers=n_workers, python_multiprocessing=False
    )
    batches = list(ds.batch(8).create_tuple_iterator(output_numpy=True, num_epochs=1))
    assert [len(b[1]) for b in batches] == [8] * 6 + [2]
    labels = np.concatenate([b[1] for b in batches])
    assert sorted(labels.tolist()) == list(range(50))
    for bx, by in batches:
        np.testing.assert_array_equal(bx, src.x[by])
    assert src.calls <= 7 * n_workers
    with pytest.raises(
        PipelineError, match=r"__getitems__ of 8 indices .* raised OSError: disk gone"
    ):
        order(GeneratorDataset(Batched(50, None), ["x", "y"], shuffle=False).batch(8))


def test_numpy_slices_dataset_forms():
    x = np.arange(12.0).reshape(6, 2)
    y = np.arange(6)
    d = NumpySlicesDataset({"x": x, "y": y}, shuffle=False)
    assert d.get_col_names() == ["x", "y"]
    t = NumpySlicesDataset((x, y), shuffle=False)
    assert t.get_col_names() == ["column_0", "column_1"]
    rows = list(t.create_tuple_iterator(output_numpy=True, num_epochs=1))
    np.testing.assert_array_equal(rows[4][0], x[4])
    one = NumpySlicesDataset([[1, 2], [3, 4], [5, 6]], column_names="v", shuffle=False)
    assert one.get_dataset_size() == 3 and one.output_shapes() == [[2]]
    with pytest.raises(ValueError, match=r"different lengths.*'a': 3.*'b': 4"):
        NumpySlicesDataset({"a": np.zeros(3), "b": np.zeros(4)})
    with pytest.raises(ValueError, match="2 column_names"):
        NumpySlicesDataset((x, y, y), column_names=["a", "b"])


def test_iterator_epochs_and_copies():
    data = np.arange(10)
    ds = NumpySlicesDataset(data, "v", seed=3)
    it = ds.create_tuple_iterator(num_epochs=3, output_numpy=True)
    epochs = [[int(r[0]) for r in it] for _ in range(4)]
    assert [sorted(e) for e in epochs[:3]] == [list(range(10))] * 3
    assert epochs[3] == []  # num_epochs reached
    assert epochs[0] != epochs[1] != epochs[2]
    # values never alias the user's arrays (do_copy)
    src = [(np.zeros(2),)]
    got = next(
        iter(GeneratorDataset(src, "z", shuffle=False).create_tuple_iterator(output_numpy=True))
    )
    got[0][0] = 5.0
    assert src[0][0][0] == 0.0


def test_plain_iteration_advances_the_epoch():
    ds = NumpySlicesDataset(np.arange(20), "v", seed=11)
    a, b = order(ds), order(ds)
    assert sorted(a) == sorted(b) == list(range(20)) and a != b
    ds2 = NumpySlicesDataset(np.arange(20), "v", seed=11)
    assert order(ds2) == a and order(ds2) == b  # the same sequence of epochs again


# ---- map --------------------------------------------------------------------------------------


def test_map_columns_placement_and_chain():
    ds = NumpySlicesDataset(
        {"a": np.arange(4), "b": np.arange(4) * 10, "c": -np.arange(4)}, shuffle=False
    )
    m = ds.map(lambda b: (b + 1, b * 2), input_columns="b", output_columns=["b1", "b2"])
    assert m.get_col_names() == ["a", "b1", "b2", "c"]
    row = next(iter(m.create_tuple_iterator(output_numpy=True)))
    assert [int(v) for v in row] == [0, 1, 0, 0]
    rows = list(m.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert [int(r["b2"]) for r in rows] == [0, 20, 40, 60]
    chained = ds.map([lambda a: a + 1, lambda a: a * 3], input_columns=["a"])
    assert order(chained) == [3, 6, 9, 12]
    with pytest.raises(ValueError, match=r"input column\(s\) \['q'\]"):
        ds.map(lambda q: q, input_columns="q")
    with pytest.raises(ValueError, match=r"output column\(s\) \['c'\] already"):
        ds.map(lambda a: a, input_columns="a", output_columns="c")


def test_map_output_checks_name_column_and_sample():
    ds = NumpySlicesDataset(np.arange(50), "v", shuffle=False)
    # wrong count
    two = ds.map(lambda v: (v, v), input_columns="v", output_columns="w")
    with pytest.raises(PipelineError, match=r"sample 0: the operation returned 2 values.*\['w'\]"):
        order(two)
    # dtype changes at sample 23
    flip = ds.map(lambda v: v.astype(np.float32) if v == 23 else v, input_columns="v")
    with pytest.raises(PipelineError, match=r"column 'v' of sample 23 is float32") as info:
        order(flip)
    assert info.value.index == 23
    # rank changes at sample 7
    rank = ds.map(lambda v: np.stack([v, v]) if v == 7 else v, input_columns="v")
    with pytest.raises(PipelineError, match=r"column 'v' of sample 7 is int64 with shape \(2,\)"):
        order(rank)
    # not an array
    obj = ds.map(lambda v: {"k": v} if v == 4 else v, input_columns="v")
    with pytest.raises(PipelineError, match=r"column 'v' of sample 4 is a dict"):
        order(obj)
    # a wrong shape (same rank) is caught by batch, naming the column and sample
    shape = ds.map(lambda v: np.zeros(3 if v == 9 else 2), input_columns="v").batch(8)
    with pytest.raises(PipelineError, match=r"column 'v' of sample 9 has shape \(3,\).*\(2,\)"):
        order(shape)


@pytest.mark.parametrize("num_workers", [1, 4])
def test_map_exception_names_sample_37(num_workers):
    ds = NumpySlicesDataset(np.arange(100), "v", shuffle=True, seed=0).map(
        workers.fail_at_37, num_parallel_workers=num_workers
    )
    with pytest.raises(
        PipelineError, match=r"map\(fail_at_37\): sample 37: ValueError: bad"
    ) as info:
        for _ in ds:
            pass
    assert info.value.index == 37
    assert isinstance(info.value.__cause__, ValueError)


def test_map_exception_in_process_worker_and_no_lambda():
    ds = NumpySlicesDataset(np.arange(100), "v", shuffle=False).map(
        workers.fail_at_37, num_parallel_workers=2, python_multiprocessing=True
    )
    with pytest.raises(PipelineError, match=r"sample 37: ValueError: bad sample value 37") as info:
        order(ds)
    assert "traceback in the worker process" in str(info.value)
    with pytest.raises(TypeError, match="cannot be pickled"):
        ds.map(lambda v: v, num_parallel_workers=2, python_multiprocessing=True)


def test_dead_worker_process_is_an_error_not_a_hang():
    ds = NumpySlicesDataset(np.arange(40), "v", shuffle=False).map(
        workers.die_at_5, num_parallel_workers=2, python_multiprocessing=True
    )
    with pytest.raises(
        PipelineError, match=r"map\(die_at_5\): a worker failed while processing samples 0\.\.\d+"
    ):
        order(ds)


class _BrokenPoolAsCPythonLeavesIt:
    """What CPython 3.11's ProcessPoolExecutor can be left as after a worker died (seen in the
    suite, under load): broken, its manager thread joining a worker that was started while the
    pool broke, was never terminated, and waits for work forever."""

    def __init__(self, straggler):
        self._broken = "A child process terminated abruptly"
        self._processes = {straggler.pid: straggler}
        self._executor_manager_thread = threading.Thread(target=straggler.join, daemon=True)
        self._executor_manager_thread.start()

    def shutdown(self, wait=True, cancel_futures=False):
        assert not wait  # wait=True would join the manager thread: the hang itself
        self._executor_manager_thread = self._processes = None


def test_close_of_a_broken_process_pool_ends_a_stranded_worker():
    import multiprocessing

    from diffsci.datasets.pipeline.prefetch import WorkerPool

    ctx = multiprocessing.get_context("spawn")
    straggler = ctx.Process(target=time.sleep, args=(600,), daemon=True)
    straggler.start()
    pool = WorkerPool(workers.fail_at_37, 1, processes=False, name="t")
    pool.processes, pool._executor = True, _BrokenPoolAsCPythonLeavesIt(straggler)
    closer = threading.Thread(target=pool.close, daemon=True)
    closer.start()
    closer.join(60)
    alive = closer.is_alive()
    if straggler.is_alive():
        straggler.kill()
    assert not alive, "WorkerPool.close hangs on a broken pool's stranded worker"
    assert straggler.exitcode is not None


def test_generator_exception_names_sample():
    def gen():
        for i in range(100):
            if i == 37:
                raise RuntimeError("source broke")
            yield (np.int64(i),)

    with pytest.raises(
        PipelineError, match=r"while producing sample 37: RuntimeError: source broke"
    ):
        order(GeneratorDataset(gen, "v").batch(8))

    class Broken(Pairs):
        def __getitem__(self, i):
            if i == 37:
                raise KeyError("no 37")
            return super().__getitem__(i)

    for n_workers in (1, 3):
        ds = GeneratorDataset(
            Broken(64), ["x", "y"], num_parallel_workers=n_workers, python_multiprocessing=False
        )
        with pytest.raises(PipelineError, match=r"GeneratorDataset: sample 37: KeyError") as info:
            order(ds.batch(10))
        assert info.value.index == 37


def test_parallel_map_keeps_order_and_matches_serial():
    ds = NumpySlicesDataset(np.arange(300), "v", seed=5)
    serial = order(ds.map(lambda v: v * 3))
    ds = NumpySlicesDataset(np.arange(300), "v", seed=5)
    threaded = order(ds.map(lambda v: v * 3, num_parallel_workers=4))
    assert serial == threaded and sorted(serial) == [3 * i for i in range(300)]


def test_process_pool_map_and_early_break_leaves_no_processes():
    ds = NumpySlicesDataset(np.arange(400.0), "v", shuffle=False).map(
        workers.double_with_pid,
        output_columns=["v", "pid"],
        num_parallel_workers=2,
        python_multiprocessing=True,
    )
    got, pids = [], set()
    for v, pid in ds.create_tuple_iterator(output_numpy=True, num_epochs=1):
        got.append(float(v))
        pids.add(int(pid))
        if len(got) == 150:
            break
    assert got == [2.0 * i for i in range(150)]
    assert pids and os.getpid() not in pids
    gc.collect()
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(_alive(p) for p in pids), "worker processes outlived the iterator"
    assert not _zombie_children()


def test_process_pool_source_reads():
    ds = GeneratorDataset(workers.Squares(40), ["i", "sq"], seed=2, num_parallel_workers=2)
    rows = list(ds.batch(6).create_tuple_iterator(output_numpy=True, num_epochs=1))
    i = np.concatenate([r[0] for r in rows])
    assert sorted(i.tolist()) == list(range(40))
    np.testing.assert_array_equal(np.concatenate([r[1] for r in rows]), i**2)

    class Local(workers.Squares):  # defined in a function: cannot be pickled
        pass

    with pytest.raises(TypeError, match=r"GeneratorDataset: python_multiprocessing=True .* pickl"):
        order(GeneratorDataset(Local(10), ["i", "sq"], num_parallel_workers=2))


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _zombie_children():
    me = os.getpid()
    zombies = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().split(")")[-1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if int(fields[1]) == me and fields[0] == "Z":
                zombies.append(int(entry))
    return zombies


# ---- prefetch and early exit ------------------------------------------------------------------


def test_early_break_stops_threads():
    before = set(threading.enumerate())
    ds = (
        GeneratorDataset(Pairs(10_000), ["x", "y"], seed=1)
        .map(lambda x: x + 1, input_columns="x", num_parallel_workers=3)
        .batch(16)
    )
    for i, _ in enumerate(ds):
        if i == 2:
            break
    gc.collect()
    deadline = time.monotonic() + 5
    while set(threading.enumerate()) - before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not set(threading.enumerate()) - before
    it = ds.create_tuple_iterator()
    next(it)
    assert our_threads()
    it.stop()
    assert not [t for t in our_threads() if t.is_alive()]


def test_prefetch_queue_is_bounded():
    src = Pairs(10_000)
    old = pconfig.get_prefetch_size()
    pconfig.set_prefetch_size(2)
    try:
        it = GeneratorDataset(src, ["x", "y"], shuffle=False).batch(4).create_tuple_iterator()
        next(it)
        time.sleep(0.2)
        # the thread read ahead while we slept, but only as far as the bound: the buffer (2),
        # the chunk waiting for room, and the (up to 2) chunks the consumer took
        assert 3 * 4 <= src.reads <= 5 * 4, src.reads
        it.stop()
    finally:
        pconfig.set_prefetch_size(old)


def test_inline_mode_without_prefetch_thread():
    old = pconfig.get_prefetch_size()
    pconfig.set_prefetch_size(0)
    try:
        ds = NumpySlicesDataset(np.arange(10), "v", shuffle=False).batch(3)
        it = ds.create_tuple_iterator(output_numpy=True)
        next(it)
        assert not our_threads()
        assert [len(b[0]) for b in ds.create_tuple_iterator(output_numpy=True, num_epochs=1)] == [
            3,
            3,
            3,
            1,
        ]
    finally:
        pconfig.set_prefetch_size(old)


# ---- shuffle ----------------------------------------------------------------------------------


def test_shuffle_buffer_semantics():
    n, k = 200, 10
    ds = NumpySlicesDataset(np.arange(n), "v", shuffle=False).shuffle(k, seed=4)
    for _ in range(3):
        out = order(ds)
        assert sorted(out) == list(range(n))
        # a row leaves the buffer only after it entered: output i comes from inputs [0, i + k)
        assert all(v < i + k for i, v in enumerate(out))
    with pytest.raises(ValueError, match="buffer_size must be an int >= 2"):
        ds.shuffle(1)


def test_full_buffer_shuffle_is_uniform():
    n, epochs = 6, 1200
    ds = NumpySlicesDataset(np.arange(n), "v", shuffle=False).shuffle(n, seed=1)
    it = ds.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    counts = np.zeros((n, n))
    for _ in range(epochs):
        for pos, row in enumerate(it):
            counts[pos, int(row[0])] += 1
    chi2 = ((counts - epochs / n) ** 2 / (epochs / n)).sum()
    assert chi2 < 70, chi2  # 25 dof: p ~ 1e-5 at 70


def test_shuffle_reproducible_across_processes():
    ds = GeneratorDataset(Pairs(50), ["x", "y"]).shuffle(7)
    core.set_seed(123)
    here = [order(ds, 1), order(ds, 1)]
    # another process (forked from the pipeline's forkserver, which has imported datasets)
    with ProcessPoolExecutor(1, mp_context=prefetch._mp_context()) as pool:
        there = pool.submit(workers.two_epochs_of_labels, 123).result()
    assert there == here and here[0] != here[1]


def test_seed_sources_and_precedence():
    core.set_seed(9)
    a = order(NumpySlicesDataset(np.arange(30), "v"))
    assert order(NumpySlicesDataset(np.arange(30), "v", seed=9)) == a
    assert order(NumpySlicesDataset(np.arange(30), "v", seed=10)) != a
    pconfig.set_seed(10)
    try:
        assert order(NumpySlicesDataset(np.arange(30), "v")) == order(
            NumpySlicesDataset(np.arange(30), "v", seed=10)
        )
    finally:
        pconfig.set_seed(None)


def test_repeat_reshuffles_each_repetition():
    ds = NumpySlicesDataset(np.arange(8), "v", seed=2).repeat(3)
    out = order(ds)
    parts = [out[0:8], out[8:16], out[16:24]]
    assert all(sorted(p) == list(range(8)) for p in parts)
    assert parts[0] != parts[1] != parts[2]
    assert ds.get_dataset_size() == 24 and ds.get_repeat_count() == 3


# ---- batch and the other operations ----------------------------------------------------------


@pytest.mark.parametrize("drop", [False, True])
def test_batch_columnar_and_row_paths_agree(drop):
    x = np.arange(46.0).reshape(23, 2).astype(np.float32)
    y = np.arange(23)
    fast = NumpySlicesDataset((x, y), ["x", "y"], seed=1).batch(5, drop_remainder=drop)
    slow = GeneratorDataset(list(zip(x, y)), ["x", "y"], seed=1).batch(5, drop_remainder=drop)
    expected = 4 if drop else 5
    assert fast.get_dataset_size() == slow.get_dataset_size() == expected
    fb = list(fast.create_tuple_iterator(output_numpy=True, num_epochs=1))
    sb = list(slow.create_tuple_iterator(output_numpy=True, num_epochs=1))
    assert len(fb) == len(sb) == expected
    assert fb[0][0].shape == (5, 2) and fb[0][0].dtype == np.float32 and fb[0][1].dtype == np.int64
    seen = np.concatenate([b[1] for b in fb])
    assert len(set(seen.tolist())) == len(seen)
    for (fx, fy), (sx, sy) in zip(fb, sb):
        np.testing.assert_array_equal(fx, x[fy])
        np.testing.assert_array_equal(sx, x[sy])
    assert fast.get_batch_size() == 5


def test_batch_refuses_mixed_dtypes_and_per_batch_map():
    src = [(np.float32(1.0),), (np.float32(2.0),), (np.float64(3.0),)]
    with pytest.raises(
        PipelineError, match=r"column 'a' of sample 2 has shape \(\) and dtype float64"
    ):
        order(GeneratorDataset(src, "a", shuffle=False).batch(3))

    def pbm(a, info):
        return ([v * 10 for v in a], [np.int64(info.get_batch_num())] * len(a))

    ds = NumpySlicesDataset(np.arange(7), "a", shuffle=False).batch(
        3, per_batch_map=pbm, output_columns=["a", "batch"]
    )
    rows = list(ds.create_tuple_iterator(output_numpy=True, num_epochs=1))
    assert [r[0].tolist() for r in rows] == [[0, 10, 20], [30, 40, 50], [60]]
    assert [r[1].tolist() for r in rows] == [[0, 0, 0], [1, 1, 1], [2]]


def test_take_skip_project_rename_and_sizes():
    base = NumpySlicesDataset({"a": np.arange(10), "b": np.arange(10) * 2}, shuffle=False)
    assert order(base.take(3)) == [0, 1, 2] and base.take(3).get_dataset_size() == 3
    assert order(base.skip(8)) == [8, 9] and base.skip(12).get_dataset_size() == 0
    p = base.project(["b"])
    assert p.get_col_names() == ["b"] and order(p)[:2] == [0, 2]
    r = base.rename(["a"], ["alpha"])
    assert r.get_col_names() == ["alpha", "b"]
    assert order(base.batch(4).take(2).repeat(2), 0) == [0, 1, 2, 3, 4, 5, 6, 7] * 2
    assert base.batch(4).get_dataset_size() == 3
    with pytest.raises(ValueError, match="repeats forever"):
        base.repeat().get_dataset_size()
    assert order(base.repeat().take(25))[20:] == [0, 1, 2, 3, 4]
    cols = base.create_tuple_iterator(columns=["b"], output_numpy=True, num_epochs=1)
    assert [int(r[0]) for r in cols][:3] == [0, 2, 4]
    assert "NumpySlicesDataset" in repr(base.batch(2)) and "batch(2)" in repr(base.batch(2))


def test_model_train_runs_on_a_pipeline():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 2)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0]], np.float32)).astype(np.float32)
    ds = NumpySlicesDataset((x, y), ["x", "y"], seed=0).batch(16)
    net = core.nn.Dense(2, 1)
    model = core.train.Model(net, core.nn.MSELoss(), core.nn.Adam(net.trainable_params(), 0.05))
    model.train(3, ds)
    loss = float(((net(core.tensor(x)) - core.tensor(y)) ** 2).mean().asnumpy())
    assert loss < float((y**2).mean())


# ---- sharding ---------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(0, 60),
    num_shards=st.integers(1, 7),
    shuffle=st.booleans(),
    kind=st.sampled_from(["numpy", "random", "iterable"]),
)
def test_shards_cover_every_sample_once_per_epoch(n, num_shards, shuffle, kind):
    if kind == "iterable":
        shuffle = False
    old = pconfig.get_prefetch_size()
    pconfig.set_prefetch_size(0)  # many tiny pipelines: keep them in this thread
    try:
        iterators = []
        for shard in range(num_shards):
            if kind == "numpy":
                ds = NumpySlicesDataset(
                    np.arange(n),
                    "v",
                    shuffle=shuffle,
                    num_shards=num_shards,
                    shard_id=shard,
                    seed=5,
                )
            elif kind == "random":
                ds = GeneratorDataset(
                    list(range(n)),
                    "v",
                    shuffle=shuffle,
                    num_shards=num_shards,
                    shard_id=shard,
                    seed=5,
                )
            else:
                ds = GeneratorDataset(
                    lambda: iter(range(n)), "v", num_shards=num_shards, shard_id=shard
                )
            assert ds.get_dataset_size() == len(range(shard, n, num_shards))
            iterators.append(ds.create_tuple_iterator(num_epochs=2, output_numpy=True))
        epoch_orders = []
        for _ in range(2):
            seen = [int(r[0]) for it in iterators for r in it]
            assert sorted(seen) == list(range(n))
            epoch_orders.append(seen)
        if shuffle and n > 6:
            assert epoch_orders[0] != epoch_orders[1]
    finally:
        pconfig.set_prefetch_size(old)


def test_sharded_shuffle_needs_a_seed(monkeypatch):
    monkeypatch.setattr(pconfig, "get_seed", lambda: None)  # no seed anywhere
    ds = NumpySlicesDataset(np.arange(10), "v", num_shards=2, shard_id=0)
    with pytest.raises(ValueError, match="every shard must draw the same permutation"):
        order(ds)
    with pytest.raises(ValueError, match="num_shards and shard_id go together"):
        NumpySlicesDataset(np.arange(10), "v", num_shards=2)
    with pytest.raises(ValueError, match=r"shard_id must be in \[0, 2\)"):
        NumpySlicesDataset(np.arange(10), "v", num_shards=2, shard_id=2)


def test_samplers():
    x = np.arange(10)
    assert order(NumpySlicesDataset(x, "v", sampler=datasets.SequentialSampler(2, 3))) == [2, 3, 4]
    assert order(NumpySlicesDataset(x, "v", sampler=[9, 1, 4])) == [9, 1, 4]
    sub = order(NumpySlicesDataset(x, "v", sampler=datasets.SubsetRandomSampler([1, 3, 5, 7])))
    assert sorted(sub) == [1, 3, 5, 7]
    rs = NumpySlicesDataset(
        x, "v", sampler=datasets.RandomSampler(replacement=True, num_samples=25)
    )
    assert len(order(rs)) == 25 and rs.get_dataset_size() == 25
    with pytest.raises(IndexError, match="index 12 is out of range for a source of 10"):
        order(NumpySlicesDataset(x, "v", sampler=[12]))
    with pytest.raises(ValueError, match="either sampler or shuffle"):
        NumpySlicesDataset(x, "v", sampler=[1], shuffle=True)
    ds = GeneratorDataset(list(range(10)), "v")
    ds.use_sampler(datasets.SequentialSampler(num_samples=4))
    assert order(ds) == [0, 1, 2, 3] and ds.get_dataset_size() == 4
    with pytest.raises(ValueError, match="use_sampler: a sampler needs a random-access source"):
        GeneratorDataset(lambda: iter(range(3)), "v").use_sampler([0])
