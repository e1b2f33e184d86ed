"""OperatorTrainer on tiny data from datasets' generators (Burgers s=32, Navier-Stokes 16^2):
the loss falls, the rollout loss and the per-frame evaluation match numpy loops written here,
resume equals the uninterrupted run bit for bit, mismatched checkpoints and channels raise
errors naming both sides, and recompute per FNO block lowers the step's peak memory."""

import gc
import math
import tracemalloc

import numpy as np
import pytest

from diffsci import core
from diffsci.core import nn
from diffsci.datasets.pde.generators import generate_burgers, generate_darcy, generate_navier_stokes
from diffsci.mindflow.cell import FNO1D, FNO2D, FNO3D
from diffsci.mindflow.train import (
    OperatorTrainer,
    PairSource,
    SpaceTimeSource,
    TrajectorySource,
    WindowSource,
)


@pytest.fixture(scope="module")
def burgers_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("burgers") / "burgers.h5"
    generate_burgers(10, resolution=32, n_time=3, path=path, dtype=np.float32, progress=False)
    return path


@pytest.fixture(scope="module")
def ns_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("ns") / "ns.h5"
    generate_navier_stokes(
        6,
        resolution=16,
        subsample=1,
        t_final=2.0,
        n_time=7,
        dt=1e-2,
        path=path,
        dtype=np.float32,
        progress=False,
    )
    return path


def _ns(ns_file):
    train = TrajectorySource.from_pdebench(ns_file, indices=range(0, 4))
    test = TrajectorySource.from_pdebench(ns_file, indices=range(4, 6))
    return train, test


def _dense_trainer(train, test, t_in=2, t_out=3, **kw):
    core.set_seed(0)
    net = nn.Dense(t_in * train.n_channels, train.n_channels)
    kw = {"epochs": 4, "batch_size": 3, "lr": 1e-2, "progress": False, **kw}
    return net, OperatorTrainer(net, train, test, t_in=t_in, t_out=t_out, **kw)


def test_sources_read_the_file_lazily_in_trajectory_layout(burgers_file, ns_file):
    full = np.asarray(__import__("h5py").File(ns_file, "r")["tensor"])  # [N, T, X, Y]
    train, test = _ns(ns_file)
    assert (train.n_spatial, train.spatial_shape, train.n_time, train.fields) == (
        2,
        (16, 16),
        7,
        ("tensor",),
    )
    np.testing.assert_array_equal(test[1][..., 0], np.moveaxis(full[5], 0, -1))
    windows = WindowSource(train, t_in=2, t_out=3)
    assert len(windows) == 4 * 3
    x, y = windows[4]  # trajectory 1, window 1: frames 1, 2 -> 3, 4, 5
    np.testing.assert_array_equal(x[..., 0], np.moveaxis(full[1, 1:3], 0, -1))
    np.testing.assert_array_equal(y[..., 0], np.moveaxis(full[1, 3:6], 0, -1))
    b = TrajectorySource.from_pdebench(burgers_file, time_indices=[0, -1])
    assert b.n_time == 2 and b[0].shape == (32, 2, 1)
    with pytest.raises(ValueError, match="t_in=5 \\+ t_out=3 frames do not fit"):
        WindowSource(train, 5, 3)


def test_burgers_fno1d_loss_falls_and_evaluates(burgers_file, tmp_path):
    core.set_seed(0)
    train = TrajectorySource.from_pdebench(burgers_file, indices=range(8), time_indices=[0, -1])
    test = TrajectorySource.from_pdebench(burgers_file, indices=[8, 9], time_indices=[0, -1])
    net = FNO1D(
        1, 1, n_modes=6, resolutions=32, hidden_channels=8, projection_channels=16, n_layers=2
    )
    trainer = OperatorTrainer(
        net,
        train,
        test,
        epochs=12,
        batch_size=4,
        lr=5e-3,
        schedule="step",
        step_size=8,
        eval_every=6,
        progress=False,
    )
    before = trainer.evaluate()
    history = trainer.fit()
    after = trainer.last_report
    assert history["epoch_loss"][-1] < 0.5 * history["epoch_loss"][0]
    assert after.rollout_relative_l2[0] < 0.5 * before.rollout_relative_l2[0]
    # t_in=1, one predicted frame: one-step and rollout are the same prediction
    np.testing.assert_allclose(after.one_step_relative_l2, after.rollout_relative_l2)
    assert "relative L2" in str(after)
    # the step schedule: 2 batches per epoch, halved after epoch 8
    np.testing.assert_allclose(
        trainer.learning_rates[[0, 15, 16, 23]], [5e-3, 5e-3, 2.5e-3, 2.5e-3]
    )
    assert trainer.plot_history(tmp_path / "loss.png").exists()
    assert trainer.plot_sample(tmp_path / "sample.png").exists()


def test_rollout_loss_and_evaluation_match_numpy_loops(ns_file):
    train, test = _ns(ns_file)
    net, trainer = _dense_trainer(train, test, schedule="constant", eval_every=0)
    w, b = net.weight.asnumpy().astype(np.float64), net.bias.asnumpy().astype(np.float64)

    def step(window):  # [B, X, Y, t_in, 1] -> [B, X, Y, 1]
        return window.reshape(*window.shape[:-2], -1) @ w.T + b

    def rel(p, t):
        p, t = p.reshape(len(p), -1), t.reshape(len(t), -1)
        return np.linalg.norm(p - t, axis=1) / np.linalg.norm(t, axis=1)

    # the first training loss: mean over the 3 rolled-out frames of the batch-mean relative L2
    inputs, labels = next(trainer._batches(trainer.windows, 0, 3, True, False))
    window, want = inputs.astype(np.float64), 0.0
    for k in range(3):
        pred = step(window)
        want += rel(pred, labels[..., k, :]).mean() / 3
        window = np.concatenate([window[..., 1:, :], pred[..., None, :]], axis=-2)
    loss = trainer._train_step(core.Tensor(inputs), core.Tensor(labels))
    assert float(loss.asnumpy()) == pytest.approx(want, rel=1e-5)

    w, b = net.weight.asnumpy().astype(np.float64), net.bias.asnumpy().astype(np.float64)
    report = trainer.evaluate(batch_size=1)  # batches of 1 and of 2 must agree
    assert report.n_samples == 2
    u = np.stack([test[i] for i in range(2)]).astype(np.float64)  # [2, 16, 16, 7, 1]
    roll, one = [], []
    window = u[..., :2, :]
    for k in range(2, 7):
        pred = step(window)
        roll.append(pred)
        one.append(step(u[..., k - 2 : k, :]))
        window = np.concatenate([window[..., 1:, :], pred[..., None, :]], axis=-2)
    for name, preds in (("rollout", roll), ("one_step", one)):
        rel_l2 = [rel(p, u[..., 2 + k, :]).mean() for k, p in enumerate(preds)]
        np.testing.assert_allclose(getattr(report, f"{name}_relative_l2"), rel_l2, rtol=1e-4)
        nr = [
            np.mean(
                np.sqrt(((p - u[..., 2 + k, :]) ** 2).mean(axis=(1, 2, 3)))
                / np.sqrt((u[..., 2 + k, :] ** 2).mean(axis=(1, 2, 3)))
            )
            for k, p in enumerate(preds)
        ]
        np.testing.assert_allclose(getattr(report, f"{name}_nrmse"), nr, rtol=1e-4)
    assert report.one_step_relative_l2[0] == pytest.approx(report.rollout_relative_l2[0])
    assert report.rollout_relative_l2[-1] != pytest.approx(report.one_step_relative_l2[-1])
    report2 = trainer.evaluate(batch_size=2)
    np.testing.assert_allclose(report2.rollout_relative_l2, report.rollout_relative_l2, rtol=1e-6)


def test_resume_equals_uninterrupted_run(ns_file, tmp_path):
    train, test = _ns(ns_file)
    net_a, full = _dense_trainer(train, test, checkpoint_dir=tmp_path / "a", checkpoint_every=1)
    full.fit()
    assert full.steps_per_epoch == 4 and len(full.history["loss"]) == 16
    # stopped at an epoch boundary (epoch 2) and inside an epoch (step 6: epoch 1, batch 2)
    for name, stop in (("epoch", {"until": 2}), ("step", {"max_steps": 6})):
        ckpt = tmp_path / name
        _, first = _dense_trainer(train, test, checkpoint_dir=ckpt, checkpoint_every=1)
        first.fit(**stop)
        net_c, second = _dense_trainer(train, test, checkpoint_dir=ckpt, checkpoint_every=1)
        assert second.resume() == (2 if name == "epoch" else 1)
        second.fit()
        pairs = zip(net_a.parameters_and_names(), net_c.parameters_and_names(), strict=True)
        for (pname, p), (_, q) in pairs:
            np.testing.assert_array_equal(p.asnumpy(), q.asnumpy(), err_msg=f"{name}: {pname}")
        assert second.history == full.history, name
    # a different seed draws other batches: the check above could fail
    net_d, other = _dense_trainer(train, test, seed=1)
    other.fit()
    assert not np.array_equal(net_d.weight.asnumpy(), net_a.weight.asnumpy())


def test_checkpoint_of_another_architecture_names_the_parameter(ns_file, tmp_path):
    train, test = _ns(ns_file)
    _, small = _dense_trainer(train, test, t_in=2, epochs=1)
    small.fit()
    path = small.save(tmp_path / "small.ckpt.h5")
    big = FNO2D(
        2, 1, n_modes=4, resolutions=16, hidden_channels=4, projection_channels=8, n_layers=1
    )
    other = OperatorTrainer(big, train, test, t_in=2, epochs=1, progress=False, jit=False)
    with pytest.raises(ValueError, match="parameters missing from the checkpoint"):
        other.resume(path)
    net3 = nn.Dense(2, 1, has_bias=True)
    _, same_names = _dense_trainer(train, test, t_in=2, epochs=1)
    same_names.model.weight.set_data(core.Tensor(np.zeros((1, 2), np.float32)))
    core.save_checkpoint(
        {"weight": np.zeros((3, 2), np.float32), "bias": np.zeros(1, np.float32)},
        str(tmp_path / "wrong.ckpt.h5"),
    )
    with pytest.raises(
        ValueError, match=r"'weight' has shape \(3, 2\) in the checkpoint but \(1, 2\)"
    ):
        same_names.load_weights(tmp_path / "wrong.ckpt.h5")
    # a model-only checkpoint (MindFlow's save_checkpoint(model)) loads by name
    core.save_checkpoint(net3, str(tmp_path / "model.ckpt.h5"))
    same_names.load_weights(tmp_path / "model.ckpt.h5")
    np.testing.assert_array_equal(same_names.model.weight.asnumpy(), net3.weight.asnumpy())


def test_channels_that_do_not_fit_the_model_are_named(ns_file):
    train, test = _ns(ns_file)
    fno = FNO2D(
        3, 1, n_modes=4, resolutions=16, hidden_channels=4, projection_channels=8, n_layers=1
    )
    with pytest.raises(
        ValueError, match=r"C=1 channel\(s\) \['tensor'\] x t_in=2.*in_channels=2.*in_channels=3"
    ):
        OperatorTrainer(fno, train, test, t_in=2, progress=False)
    # a model without channel attributes: found by its output shape
    with pytest.raises(
        ValueError, match=r"maps an input of shape \(1, 16, 16, 2\) to \(1, 16, 16, 2\)"
    ):
        OperatorTrainer(nn.SequentialCell(nn.Dense(2, 2)), train, t_in=2, progress=False)
    with pytest.raises(ValueError, match=r"fails on an input of shape \(1, 16, 16, 2\)"):
        OperatorTrainer(nn.SequentialCell(nn.Dense(5, 1)), train, t_in=2, progress=False)
    pairs = PairSource(np.ones((4, 8, 8, 2)), np.ones((4, 8, 8)), n_spatial=2)
    with pytest.raises(ValueError, match=r"C_in=2.*in_channels=2, but it has in_channels=3"):
        OperatorTrainer(nn.Dense(3, 1), pairs, progress=False)


def test_steady_pairs_train(ns_file):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(12, 8, 8, 2))
    y = a @ np.array([[0.5], [-1.0]]) + 0.25
    train, test = PairSource(a[:8], y[:8], 2), PairSource(a[8:], y[8:], 2)
    core.set_seed(0)
    trainer = OperatorTrainer(
        nn.Dense(2, 1),
        train,
        test,
        epochs=40,
        batch_size=4,
        lr=5e-2,
        schedule="constant",
        progress=False,
    )
    before = trainer.evaluate().relative_l2
    trainer.fit()
    assert trainer.last_report.relative_l2 < 0.2 * before
    pred = trainer.predict(a[8:])
    rel = np.linalg.norm((pred - y[8:]).reshape(4, -1), axis=1) / np.linalg.norm(
        y[8:].reshape(4, -1), axis=1
    )
    assert trainer.last_report.relative_l2 == pytest.approx(rel.mean(), rel=1e-4)


def _peak(fn):
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_recompute_per_fno_block_cuts_peak_memory_of_a_rollout_step(ns_file):
    train, _ = _ns(ns_file)
    peaks, losses = {}, {}
    for rec in (None, "block"):
        core.set_seed(0)
        net = FNO2D(
            2, 1, n_modes=4, resolutions=16, hidden_channels=16, projection_channels=16, n_layers=4
        )
        trainer = OperatorTrainer(
            net,
            train,
            t_in=2,
            t_out=4,
            batch_size=4,
            epochs=1,
            recompute=rec,
            jit=True,
            progress=False,
        )
        inputs, labels = next(trainer._batches(trainer.windows, 0, 4, False, False))
        x, y = core.Tensor(inputs), core.Tensor(labels)
        trainer._train_step(x, y)  # compile
        peaks[rec] = _peak(lambda t=trainer, x=x, y=y: t._train_step(x, y))
        losses[rec] = float(trainer._train_step(x, y).asnumpy())
    assert losses["block"] == pytest.approx(losses[None], rel=1e-5)
    assert peaks["block"] < 0.75 * peaks[None], peaks


def test_darcy_pairs_from_pdebench_and_fno2d_loss_falls(tmp_path):
    path = tmp_path / "darcy.h5"
    d = generate_darcy(6, resolution=16, path=path, dtype=np.float32, progress=False)
    train = PairSource.from_pdebench(path, indices=range(4))
    test = PairSource.from_pdebench(path, indices=[4, 5])
    assert (train.in_channels, train.out_channels, train.spatial_shape) == (1, 1, (16, 16))
    x, y = test[1]
    np.testing.assert_array_equal(x[..., 0], d["nu"][5].astype(np.float32))
    np.testing.assert_array_equal(y[..., 0], d["tensor"][5, 0].astype(np.float32))
    core.set_seed(0)
    net = FNO2D(
        1, 1, n_modes=4, resolutions=16, hidden_channels=6, projection_channels=8, n_layers=1
    )
    trainer = OperatorTrainer(
        net, train, test, epochs=8, batch_size=2, lr=1e-2, eval_every=3, progress=True
    )
    trainer.fit()
    assert trainer.history["epoch_loss"][-1] < 0.5 * trainer.history["epoch_loss"][0]
    assert trainer.history["test_epoch"] == [3, 6, 8]  # every 3 epochs and the last
    assert "relative L2" in str(trainer.last_report)


def test_jit_step_equals_eager_step(ns_file):
    train, test = _ns(ns_file)
    runs = {}
    for jit in (True, False):
        net, trainer = _dense_trainer(train, test, jit=jit, epochs=2, eval_every=0)
        trainer.fit()
        runs[jit] = (trainer.history["loss"], net.weight.asnumpy())
    np.testing.assert_allclose(runs[True][0], runs[False][0], rtol=1e-5)
    np.testing.assert_allclose(runs[True][1], runs[False][1], rtol=1e-5, atol=1e-7)


def test_recompute_per_rollout_step_keeps_the_loss_and_gradients(ns_file):
    train, _ = _ns(ns_file)
    out = {}
    for rec in (None, "step"):
        core.set_seed(0)
        net = FNO2D(
            2, 1, n_modes=4, resolutions=16, hidden_channels=8, projection_channels=8, n_layers=2
        )
        trainer = OperatorTrainer(
            net, train, t_in=2, t_out=3, batch_size=4, epochs=1, recompute=rec, progress=False
        )
        inputs, labels = next(trainer._batches(trainer.windows, 0, 4, False, False))
        loss = trainer._train_step(core.Tensor(inputs), core.Tensor(labels))
        out[rec] = (float(loss.asnumpy()), [p.asnumpy() for p in net.trainable_params()])
    assert out["step"][0] == pytest.approx(out[None][0], rel=1e-6)
    for a, b in zip(out["step"][1], out[None][1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="found no FNOBlocks"):
        OperatorTrainer(nn.Dense(2, 1), train, t_in=2, recompute="block", progress=False)


def test_cfd_fields_become_channels_in_order_and_train_a_rollout(tmp_path):
    rng = np.random.default_rng(4)
    n, t, x = 3, 5, 8
    fields = {
        k: rng.normal(size=(n, t, x)).astype(np.float32) for k in ("density", "pressure", "Vx")
    }
    path = tmp_path / "cfd.h5"
    from diffsci.datasets.pde import write_pdebench

    coords = {"x-coordinate": np.arange(x) / x, "t-coordinate": np.arange(t, dtype=float)}
    write_pdebench(path, "cfd", {**fields, **coords})
    src = TrajectorySource.from_pdebench(path, fields=["Vx", "density"])
    assert src.fields == ("Vx", "density") and src[2].shape == (x, t, 2)
    np.testing.assert_array_equal(src[2][..., 0], fields["Vx"][2].T)
    np.testing.assert_array_equal(src[2][..., 1], fields["density"][2].T)
    # two channels, two frames in: frame-major channels [f0c0, f0c1, f1c0, f1c1]
    core.set_seed(0)
    net = nn.Dense(4, 2)
    trainer = OperatorTrainer(
        net, src, src, t_in=2, t_out=2, batch_size=2, epochs=1, eval_every=0, progress=False
    )
    w, b = net.weight.asnumpy().astype(np.float64), net.bias.asnumpy().astype(np.float64)
    u = src[0][None].astype(np.float64)  # [1, x, T, 2]
    window = u[..., :2, :]
    for _ in range(2, t):
        pred = window.reshape(1, x, 4) @ w.T + b  # [1, x, 2]
        window = np.concatenate([window[..., 1:, :], pred[..., None, :]], axis=-2)
    np.testing.assert_allclose(trainer.rollout(u[..., :2, :], t - 2)[..., -1, :], pred, rtol=1e-5)
    trainer.fit()
    assert len(trainer.history["loss"]) == math.ceil(3 * 2 / 2)


def test_space_time_pairs_fno3d_style_report_per_frame(ns_file, tmp_path):
    train, test = _ns(ns_file)
    st_train, st_test = SpaceTimeSource(train, 2, 4), SpaceTimeSource(test, 2, 4)
    x, y = st_test[1]
    u = test[1]  # [16, 16, 7, 1]
    assert x.shape == (16, 16, 4, 2) and y.shape == (16, 16, 4, 1)
    for k in range(4):  # the first two frames at every output time; labels frames 2..5
        np.testing.assert_array_equal(x[..., k, :], u[..., :2, 0])
    np.testing.assert_array_equal(y, u[..., 2:6, :])
    core.set_seed(0)
    net = nn.Dense(2, 1)
    trainer = OperatorTrainer(
        net, st_train, st_test, epochs=3, batch_size=2, lr=1e-2, progress=False
    )
    w, b = net.weight.asnumpy().astype(np.float64), net.bias.asnumpy().astype(np.float64)
    report = trainer.evaluate(batch_size=1)
    xs = np.stack([st_test[i][0] for i in range(2)]).astype(np.float64)
    ys = np.stack([st_test[i][1] for i in range(2)]).astype(np.float64)
    pred = xs @ w.T + b  # [2, 16, 16, 4, 1]
    per = [
        np.mean(
            np.linalg.norm((pred[..., k, :] - ys[..., k, :]).reshape(2, -1), axis=1)
            / np.linalg.norm(ys[..., k, :].reshape(2, -1), axis=1)
        )
        for k in range(4)
    ]
    np.testing.assert_allclose(report.relative_l2_per_step, per, rtol=1e-4)
    whole = np.linalg.norm((pred - ys).reshape(2, -1), axis=1) / np.linalg.norm(
        ys.reshape(2, -1), axis=1
    )
    assert report.relative_l2 == pytest.approx(whole.mean(), rel=1e-4)
    assert "frame" in str(report) and len(report.as_dict()["relative_l2_per_step"]) == 4
    trainer.fit()
    assert trainer.history["epoch_loss"][-1] < trainer.history["epoch_loss"][0]
    assert trainer.plot_sample(tmp_path / "st.png", max_frames=1).exists()
    # FNO3D over (x, y, t) takes the same pairs
    fno = FNO3D(
        2,
        1,
        n_modes=[4, 4, 2],
        resolutions=[16, 16, 4],
        hidden_channels=4,
        projection_channels=8,
        n_layers=1,
    )
    fno_trainer = OperatorTrainer(fno, st_train, epochs=1, batch_size=2, progress=False)
    fno_trainer.fit()
    assert len(fno_trainer.history["loss"]) == 2


def test_normalized_pairs_learn_in_scaled_units_and_report_in_original_ones(ns_file, tmp_path):
    rng = np.random.default_rng(5)
    a = 3.0 + 2.0 * rng.normal(size=(10, 6, 6, 1))
    y = 100.0 + 10.0 * rng.normal(size=(10, 6, 6, 1))
    train, test = PairSource(a[:8], y[:8], 2), PairSource(a[8:], y[8:], 2)
    core.set_seed(0)
    net = nn.Dense(1, 1)
    kw = {"epochs": 2, "batch_size": 4, "normalize": True, "progress": False}
    trainer = OperatorTrainer(net, train, test, checkpoint_dir=tmp_path, **kw)
    xa, ya = (
        a[:8].astype(np.float32).astype(np.float64),
        y[:8].astype(np.float32).astype(np.float64),
    )
    np.testing.assert_allclose(trainer.x_normalizer.mean_np, xa.mean(0), rtol=1e-5)
    np.testing.assert_allclose(trainer.y_normalizer.std_np, ya.std(0, ddof=1), rtol=1e-4)
    w, b = float(net.weight.asnumpy()[0, 0]), float(net.bias.asnumpy()[0])
    xs, ys = a[8:], y[8:]
    z = (xs - xa.mean(0)) / (xa.std(0, ddof=1) + 1e-5)
    pred = (w * z + b) * (ya.std(0, ddof=1) + 1e-5) + ya.mean(0)
    np.testing.assert_allclose(trainer.predict(xs), pred, rtol=1e-4)
    rel = np.linalg.norm((pred - ys).reshape(2, -1), axis=1) / np.linalg.norm(
        ys.reshape(2, -1), axis=1
    )
    assert trainer.evaluate().relative_l2 == pytest.approx(rel.mean(), rel=1e-4)
    trainer.fit()
    core.set_seed(0)
    again = OperatorTrainer(nn.Dense(1, 1), train, test, **kw)
    again.resume(tmp_path / "operator.ckpt.h5")
    np.testing.assert_array_equal(again.predict(xs), trainer.predict(xs))
    with pytest.raises(ValueError, match="normalize=True is for pairs"):
        OperatorTrainer(nn.Dense(2, 1), _ns(ns_file)[0], t_in=2, normalize=True, progress=False)
