"""core.communication on two MPI processes (``mpiexec -n 2``), checked from this process.

Each test launches a worker script under mpiexec and compares what the ranks wrote with a
serial reference computed here: the same function written with ordinary core ops on both
ranks' inputs stacked ([2, 4, 6]), its values, its gradient (``core.grad`` of the summed
per-rank losses), its JVP and its Hessian-vector product. Skipped, with the reason, only
where mpi4py or an mpiexec cannot be found.
"""

import importlib.util
import json
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops

from ... import _mpi

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SHAPE = (4, 6)


MPIEXEC, WHY = _mpi.MPIEXEC, _mpi.WHY
pytestmark = _mpi.needs_mpi


def mpirun(script, *args, n=2, comm_timeout=60, wall=120):
    return _mpi.mpirun(HERE / script, *args, n=n, comm_timeout=comm_timeout, wall=wall)


def _ok(proc):
    assert proc.returncode == 0, f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"


# ---- serial references: both ranks' outputs from the stacked inputs X [2, 4, 6] -------------
def _cat(parts, axis):
    return ops.concat(parts, axis)


def serial_outputs(name, X):
    a, b = X[0], X[1]
    s = a + b
    if name in ("sum", "ms_allreduce"):
        return [s, s]
    if name == "max":
        m = ops.maximum(a, b)
        return [m, m]
    if name == "min":
        m = ops.minimum(a, b)
        return [m, m]
    if name == "prod":
        return [a * b, a * b]
    if name in ("gather0", "ms_allgather"):
        return [_cat([a, b], 0)] * 2
    if name == "gather1":
        return [_cat([a, b], 1)] * 2
    if name == "rs0":
        return [s[0:2], s[2:4]]
    if name == "rs1":
        return [s[:, 0:3], s[:, 3:6]]
    if name == "bcast":
        return [b, b]
    if name == "reduce":
        return [s, ops.zeros_like(s)]
    if name == "a2a":  # split axis 0 (blocks of 2 rows), concat axis 1
        return [_cat([a[2 * r : 2 * r + 2], b[2 * r : 2 * r + 2]], 1) for r in range(2)]
    if name == "ms_alltoall":  # split axis 1 (blocks of 3 columns), concat axis 0
        return [_cat([a[:, 3 * r : 3 * r + 3], b[:, 3 * r : 3 * r + 3]], 0) for r in range(2)]
    raise KeyError(name)


CASES = [
    "sum", "max", "min", "prod", "gather0", "gather1", "rs0", "rs1", "bcast", "reduce", "a2a",
    "ms_allreduce", "ms_allgather", "ms_alltoall",
]  # fmt: skip
HVP = ["sum", "gather0", "rs1", "a2a", "bcast"]


def _inputs(seed0):
    return core.Tensor(
        np.stack([np.random.default_rng(seed0 + r).standard_normal(SHAPE) for r in range(2)])
    )


def _weights(name, X):
    outs = serial_outputs(name, X)
    return [
        core.Tensor(np.random.default_rng(100 + r).standard_normal(o.shape))
        for r, o in enumerate(outs)
    ]


def serial_loss(name, W):
    def total(X):
        outs = serial_outputs(name, X)
        return sum((w * ops.sin(o)).sum() for w, o in zip(W, outs))

    return total


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    # through the launcher: python -m diffsci.core.launch -n 2 script args
    out = tmp_path_factory.mktemp("collectives")
    script = str(HERE / "_collectives_worker.py")
    cmd = [sys.executable, "-m", "diffsci.core.launch", "-n", "2", script, str(out)]
    proc = subprocess.run(
        cmd, env=_mpi.mpi_env(20), capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    _ok(proc)
    return proc, [dict(np.load(out / f"rank{r}.npz")) for r in range(2)]


@pytest.fixture(scope="module")
def ranks(launched):
    return launched[1]


def test_world(ranks):
    for r in range(2):
        np.testing.assert_array_equal(ranks[r]["world"], [r, 2, r, 2])  # one node


@pytest.mark.parametrize("name", CASES)
def test_values_match_serial(ranks, name):
    X = _inputs(0)
    for r, ref in enumerate(serial_outputs(name, X)):
        np.testing.assert_allclose(ranks[r][f"{name}/out"], ref.asnumpy(), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("name", CASES)
def test_gradients_match_serial(ranks, name):
    X = _inputs(0)
    total = serial_loss(name, _weights(name, X))
    want = core.grad(total)(X).asnumpy()
    for r in range(2):
        np.testing.assert_allclose(ranks[r][f"{name}/grad"], want[r], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(ranks[r][f"{name}/jit_grad"], want[r], rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name", CASES)
def test_jvp_matches_serial(ranks, name):
    X, V = _inputs(0), _inputs(200)
    for r in range(2):
        _, t = core.jvp(lambda X, r=r: serial_outputs(name, X)[r], (X,), (V,))
        np.testing.assert_allclose(ranks[r][f"{name}/jvp"], t.asnumpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name", HVP)
def test_second_order_matches_serial(ranks, name):
    X, V = _inputs(0), _inputs(200)
    total = serial_loss(name, _weights(name, X))
    want = core.grad(lambda X: (core.grad(total)(X) * V).sum())(X).asnumpy()
    for r in range(2):
        np.testing.assert_allclose(ranks[r][f"{name}/hvp"], want[r], rtol=1e-12, atol=1e-13)


def test_serial_reference_gradient_vs_finite_differences():
    # the reference itself: float64 central differences of the summed losses (all_to_all case)
    X = _inputs(0)
    total = serial_loss("a2a", _weights("a2a", X))
    g = core.grad(total)(X).asnumpy()
    x = X.asnumpy()
    h = 1e-6
    for idx in [(0, 0, 0), (1, 3, 5), (0, 2, 4)]:
        e = np.zeros_like(x)
        e[idx] = h
        fd = (total(core.Tensor(x + e)).asnumpy() - total(core.Tensor(x - e)).asnumpy()) / (2 * h)
        np.testing.assert_allclose(g[idx], fd, rtol=1e-7, atol=1e-9)


def test_vmap(ranks):
    xb = np.stack([np.random.default_rng(300 + r).standard_normal((3, *SHAPE)) for r in range(2)])
    for r in range(2):
        want = np.concatenate([xb[0], xb[1]], axis=2)  # per example [4, 6] gathered on axis 1
        np.testing.assert_array_equal(ranks[r]["vmap_gather1"], want)
        # in_axes=2: examples xb[s][:, :, i] of shape [3, 4]; split axis 1, concat axis 0
        blocks = [xb[s][:, 2 * r : 2 * r + 2, :] for s in range(2)]  # [3, 2, 6] each
        want = np.concatenate(blocks, axis=0).transpose(2, 0, 1)  # [6, 6, 2]: batch first
        np.testing.assert_array_equal(ranks[r]["vmap_a2a"], want)


@pytest.mark.parametrize("dt", ["float32", "float16", "bfloat16", "int32", "complex128", "bool"])
def test_dtypes(ranks, dt):
    x = _inputs(0).asnumpy()
    if dt == "bool":
        want = (x[0] > 0) | (x[1] > 0)
    else:
        wide = np.complex128 if dt == "complex128" else np.float64
        parts = [ops.astype(core.Tensor(x[r] * 4.0), dt).asnumpy().astype(wide) for r in range(2)]
        want = ops.astype(core.Tensor(parts[0] + parts[1]), dt).asnumpy().astype(wide)
    for r in range(2):
        np.testing.assert_array_equal(ranks[r][f"dtype/{dt}"], want)


def test_group_and_point_to_point(ranks):
    x = _inputs(0).asnumpy()
    for r in range(2):
        assert int(ranks[r]["group_rank"]) == 1 - r
        np.testing.assert_array_equal(ranks[r]["group_gather"], np.concatenate([x[1], x[0]]))
    np.testing.assert_array_equal(ranks[1]["recv"], 3.0 * x[0])
    np.testing.assert_array_equal(ranks[1]["only1"], x[1])
    assert "only1" not in ranks[0]


# ---- data parallel: 2 ranks equal 1 rank with the global batch ------------------------------
def _example():
    path = ROOT / "examples" / "distributed" / "data_parallel.py"
    spec = importlib.util.spec_from_file_location("example_data_parallel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_data_parallel_two_ranks_equal_one_rank(tmp_path):
    steps = 12
    _ok(mpirun("_dp_worker.py", tmp_path, steps))
    one = _example().main(steps=steps, ckpt=str(tmp_path / "one.ckpt.h5"))
    assert one["world"] == 1
    for mode in ("eager", "graph"):
        two = json.loads((tmp_path / f"{mode}.json").read_text())
        assert two["world"] == 2
        np.testing.assert_allclose(two["losses"], one["losses"], rtol=1e-6, atol=0)
    # rank 0's checkpoint (written atomically, no temp file left) loads here, in a world of one
    assert not list(tmp_path.glob("*.tmp"))
    loaded, want = (
        core.load_checkpoint(str(tmp_path / "dp.ckpt.h5")),
        core.load_checkpoint(str(tmp_path / "one.ckpt.h5")),
    )
    assert sorted(loaded) == sorted(want)
    for k in want:
        np.testing.assert_allclose(loaded[k].asnumpy(), want[k].asnumpy(), rtol=1e-10, atol=1e-12)


# ---- errors: a message on every rank, never a silent hang -------------------------------------
def test_mismatched_collectives_raise_on_every_rank(launched):
    stdout = launched[0].stdout
    for r in range(2):
        assert f"rank {r} caught: core.communication: ranks called different collectives" in stdout
    assert "rank 0: all_reduce(float64[4, 6]" in stdout
    assert "rank 1: all_gather(float64[4, 6]" in stdout


def test_uncaught_error_on_one_rank_aborts_every_rank():
    start = time.monotonic()
    proc = mpirun("_bad_worker.py", "raise", comm_timeout=60)
    assert proc.returncode != 0
    assert "[rank 1] uncaught exception, aborting every rank" in proc.stderr
    assert "boom on rank 1" in proc.stderr
    assert time.monotonic() - start < 30  # the abort ended rank 0, not its 60 s timeout


def test_rank_that_never_arrives_times_out():
    start = time.monotonic()
    proc = mpirun("_bad_worker.py", "timeout", comm_timeout=1)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "rank 0 of 2: the signature exchange before barrier() did not complete" in out, out
    assert "within 1 s (DIFFSCI_COMM_TIMEOUT)" in out
    assert time.monotonic() - start < 25  # rank 1 sleeps 30 s: the abort ended it


def test_gradient_buckets_reduce_during_the_backward_sweep(tmp_path):
    """Overlap: bucket all-reduces start while the sweep still reports earlier layers'
    gradients, and the result equals the blocking reduction bitwise."""
    _ok(mpirun("_overlap_worker.py", tmp_path))
    r = json.loads((tmp_path / "overlap.json").read_text())
    assert r["same"] and r["changed"]
    assert r["n_buckets"] > 2
    assert len(r["started_at_report"]) == r["n_params"]
    # every bucket started inside the sweep, the first ones while later reports still came
    assert r["n_started_in_sweep"] == r["n_buckets"]
    assert r["started_at_report"][len(r["started_at_report"]) // 2] >= 1
