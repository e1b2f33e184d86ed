"""core.communication in a plain process (a world of one, no MPI): every collective is the
identity (and so are its derivatives); the launcher, the parallel context and the gradient
reducer's bucketing; clear errors where MPI is missing."""

import sys

import numpy as np
import pytest

from diffsci import core
from diffsci.core import communication as comm
from diffsci.core import nn, ops
from diffsci.core.communication import management


@pytest.fixture(autouse=True)
def _clean_context():
    core.reset_auto_parallel_context()
    yield
    core.reset_auto_parallel_context()


def _x():
    return core.Tensor(np.random.default_rng(0).standard_normal((4, 6)))


COLLECTIVES = {
    "all_reduce_sum": lambda x: comm.all_reduce(x),
    "all_reduce_max": lambda x: comm.all_reduce(x, "max"),
    "all_reduce_prod": lambda x: comm.all_reduce(x, comm.ReduceOp.PROD),
    "all_gather": lambda x: comm.all_gather(x, axis=1),
    "reduce_scatter": lambda x: comm.reduce_scatter(x, axis=-1),
    "broadcast": lambda x: comm.broadcast(x, 0),
    "reduce": lambda x: comm.reduce(x, 0),
    "all_to_all": lambda x: comm.all_to_all(x, 0, 1),
    "ops.AllReduce": lambda x: ops.AllReduce()(x),
    "ops.Broadcast": lambda x: ops.Broadcast(0)((x,))[0],
}


def test_world_is_one_without_a_launcher():
    assert comm.get_rank() == 0 and comm.get_group_size() == 1
    assert comm.get_local_rank() == 0 and comm.get_local_rank_size() == 1
    assert comm.GlobalComm.WORLD_COMM_GROUP == comm.HCCL_WORLD_COMM_GROUP


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_collectives_are_identity_with_identity_derivatives(name):
    f, x = COLLECTIVES[name], _x()
    np.testing.assert_array_equal(f(x).asnumpy(), x.asnumpy())
    np.testing.assert_array_equal(core.jit(f)(x).asnumpy(), x.asnumpy())
    w = core.Tensor(np.random.default_rng(1).standard_normal((4, 6)))
    g = core.grad(lambda x: (w * ops.sin(f(x))).sum())(x)
    np.testing.assert_allclose(g.asnumpy(), w.asnumpy() * np.cos(x.asnumpy()), rtol=1e-14)
    _, t = core.jvp(f, (x,), (w,))
    np.testing.assert_allclose(t.asnumpy(), w.asnumpy(), rtol=1e-14)


def test_jit_keeps_the_collective_as_one_equation():
    text = core.jit(lambda x: comm.all_reduce(x) * 2.0).lower(_x()).as_text()
    assert "all_reduce [op='sum', group='hccl_world_group']" in text


def test_bad_arguments_are_named():
    x = _x()
    with pytest.raises(ValueError, match="op must be"):
        comm.all_reduce(x, "mean")
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        comm.all_gather(x, axis=2)
    with pytest.raises(ValueError, match="no group named 'nope'"):
        comm.all_reduce(x, group="nope")
    with pytest.raises(ValueError, match="root 1 is outside"):
        comm.broadcast(x, 1)
    with pytest.raises(ValueError, match="split_count=2 but the group has 1"):
        ops.AlltoAll(2, 0, 0)(x)
    with pytest.raises(ValueError, match="nobody to send to"):
        comm.send(x, 1)


def test_groups_in_a_world_of_one():
    comm.create_group("solo", [0])
    try:
        assert comm.get_group_size("solo") == 1 and comm.get_rank("solo") == 0
        assert comm.get_world_rank_from_group_rank("solo", 0) == 0
        np.testing.assert_array_equal(comm.all_reduce(_x(), group="solo").asnumpy(), _x().asnumpy())
        with pytest.raises(ValueError, match="exists already"):
            comm.create_group("solo", [0])
        with pytest.raises(ValueError, match=r"ranks \[3\] are outside the world of 1"):
            comm.create_group("big", [0, 3])
    finally:
        comm.destroy_group("solo")


def test_launched_world_without_mpi4py_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("PMI_SIZE", "2")
    monkeypatch.setenv("PMI_RANK", "1")
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # import fails
    comm.release()
    try:
        with pytest.raises(RuntimeError, match=r"world of 2 processes but mpi4py cannot"):
            comm.init()
    finally:
        monkeypatch.undo()
        comm.release()
        comm.init()
    assert comm.get_group_size() == 1


def test_timeout_setting_is_checked(monkeypatch):
    monkeypatch.setenv("DIFFSCI_COMM_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="DIFFSCI_COMM_TIMEOUT must be a number"):
        management.timeout()


# ---- launcher ------------------------------------------------------------------------------------
def test_launcher_finds_mpiexec_next_to_python_or_says_what_to_install(tmp_path):
    from diffsci.core.launch import build_command, find_mpiexec

    fake_python = tmp_path / "bin" / "python"
    with pytest.raises(FileNotFoundError, match=r"pip install -e '\.\[distributed\]'"):
        find_mpiexec(fake_python, path=str(tmp_path))
    (tmp_path / "bin").mkdir()
    exe = tmp_path / "bin" / "mpiexec"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert find_mpiexec(fake_python, path="") == str(exe)
    cmd = build_command(4, "train.py", ["--tiny"], mpiexec="mpiexec", python="py")
    assert cmd == ["mpiexec", "-n", "4", "py", "-m", "mpi4py", "train.py", "--tiny"]
    with pytest.raises(ValueError, match="-n must be >= 1"):
        build_command(0, "train.py", [], mpiexec="mpiexec")


# ---- parallel context and the gradient reducer --------------------------------------------------
def test_parallel_context():
    assert core.get_auto_parallel_context("parallel_mode") == "stand_alone"
    core.set_auto_parallel_context(parallel_mode="data_parallel", gradients_mean=True)
    assert core.get_auto_parallel_context("gradients_mean") is True
    assert core.get_auto_parallel_context("device_num") == 1
    with pytest.raises(NotImplementedError, match="semi_auto_parallel"):
        core.set_auto_parallel_context(parallel_mode="semi_auto_parallel")
    with pytest.raises(ValueError, match="device_num=4 but the world has 1"):
        core.set_auto_parallel_context(device_num=4)
    with pytest.raises(ValueError, match="unknown key 'paralel_mode'"):
        core.set_auto_parallel_context(paralel_mode="data_parallel")
    with pytest.raises(ValueError, match="comm_fusion"):
        core.set_auto_parallel_context(comm_fusion={"allreduce": {"mode": "index"}})


def test_grad_reducer_buckets_by_dtype_and_size_and_averages():
    f64, f32 = core.float64, core.float32
    shapes = [((3, 4), f64), ((5,), f32), ((2, 2), f64), ((7,), f64)]
    params = [core.Parameter(core.zeros(s, d), name=f"p{i}") for i, (s, d) in enumerate(shapes)]
    rng = np.random.default_rng(2)
    grads = tuple(core.Tensor(rng.standard_normal(s).astype(np.dtype(d))) for s, d in shapes)
    # 100 bytes per bucket: float64 grads of 96, 32 and 56 bytes cannot share beyond that
    red = nn.DistributedGradReducer(params, mean=True, degree=2, bucket_mb=100 / 2**20)
    assert red.buckets(grads) == [[3, 2], [1], [0]]
    out = red(grads)
    for g, o in zip(grads, out):
        assert o.dtype == g.dtype and o.shape == g.shape
        np.testing.assert_allclose(o.asnumpy(), g.asnumpy() / 2, rtol=1e-6)
    jitted = core.jit(lambda *gs: red(gs))(*grads)
    for a, b in zip(out, jitted):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    assert nn.DistributedGradReducer(params)(grads) == grads  # world of one, mean: identity
    with pytest.raises(ValueError, match="got 2 gradients for 4 parameters"):
        red(grads[:2])


def test_train_one_step_cell_uses_the_reducer_in_data_parallel_mode():
    core.set_seed(0)
    net = nn.Dense(3, 1, dtype=core.float64)
    opt = nn.SGD(net.trainable_params(), learning_rate=0.1)
    plain = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    assert not isinstance(plain.grad_reducer, nn.DistributedGradReducer)
    core.set_auto_parallel_context(parallel_mode="data_parallel", gradients_mean=True)
    dp = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    assert isinstance(dp.grad_reducer, nn.DistributedGradReducer) and dp.grad_reducer.mean
    x = core.Tensor(np.ones((2, 3)))
    assert np.isfinite(dp(x, core.Tensor(np.zeros((2, 1)))).asnumpy())


def test_bench_runs_tiny(capsys):
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[3] / "bench" / "distributed_comm.py"
    spec = importlib.util.spec_from_file_location("bench_distributed_comm", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tiny=True)
    out = capsys.readouterr().out
    assert "core.communication on 1 processes" in out and "DistributedGradReducer" in out


def test_model_train_uses_the_reducer_in_data_parallel_mode(monkeypatch):
    from diffsci.core.nn import grad_reducer
    from diffsci.core.train import Model

    calls = []
    original = grad_reducer.DistributedGradReducer.construct
    monkeypatch.setattr(
        grad_reducer.DistributedGradReducer,
        "construct",
        lambda self, grads: calls.append(len(grads)) or original(self, grads),
    )
    core.set_seed(0)
    net = nn.Dense(3, 1, dtype=core.float64)
    opt = nn.SGD(net.trainable_params(), learning_rate=0.1)
    batches = [(core.Tensor(np.ones((2, 3))), core.Tensor(np.zeros((2, 1))))] * 3
    Model(net, nn.MSELoss(), opt).train(1, batches)
    assert calls == []  # stand-alone: no reducer
    core.set_auto_parallel_context(parallel_mode="data_parallel")
    Model(net, nn.MSELoss(), opt).train(1, batches)
    assert calls == [2, 2, 2]  # weight and bias, every step


def test_launcher_main(monkeypatch, capsys):
    from diffsci.core import launch

    seen = []
    monkeypatch.setattr(launch.subprocess, "call", lambda cmd, env: seen.append((cmd, env)) or 0)

    def no_mpiexec(python=None, path=None):
        raise FileNotFoundError("core.launch: no mpiexec or mpirun ...")

    monkeypatch.setattr(launch, "find_mpiexec", no_mpiexec)
    assert launch.main(["-n", "1", "train.py", "--tiny"]) == 0  # one process: plain python
    assert seen[-1][0] == [sys.executable, "train.py", "--tiny"]
    assert launch.main(["-n", "2", "train.py"]) == 2  # two need mpiexec: the error says so
    assert "no mpiexec" in capsys.readouterr().err
    monkeypatch.setattr(launch, "find_mpiexec", lambda python=None, path=None: "/x/mpiexec")
    monkeypatch.delenv("DIFFSCI_NUM_THREADS", raising=False)
    if launch.importlib.util.find_spec("mpi4py") is not None:
        assert launch.main(["-n", "2", "-m", "pkg.train", "--steps", "3"]) == 0
        cmd, env = seen[-1]
        assert cmd[:4] == ["/x/mpiexec", "-n", "2", sys.executable]
        assert cmd[4:] == ["-m", "mpi4py", "-m", "pkg.train", "--steps", "3"]
        assert int(env["DIFFSCI_NUM_THREADS"]) >= 1


def test_halo_exchange_under_vmap_in_a_world_of_one():
    """No neighbours: zero halos; vmap batches both slabs (an unbatched one broadcast), equal to
    the per-example loop."""
    x = core.tensor(np.arange(12.0).reshape(3, 4))

    def f(a, b):
        return comm.halo_exchange(a, 2 * b, prev=None, next=None)

    per_example = np.stack([f(x[i], x[i]).asnumpy() for i in range(3)])
    np.testing.assert_array_equal(core.vmap(f)(x, x).asnumpy(), per_example)
    assert core.vmap(f, in_axes=(0, None))(x, x[0]).shape == (3, 2, 4)
