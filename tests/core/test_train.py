"""core.train.Model: training with callbacks, checkpoints, exact resume, early stopping."""

import io
import os

import numpy as np
import pytest

from diffsci import core
from diffsci.core import nn, ops
from diffsci.core.train import (
    Callback,
    CheckpointCallback,
    EarlyStopping,
    LossMonitor,
    Model,
    ProgressBar,
    TimeMonitor,
    restore_checkpoint,
)


def _net(seed=0):
    core.set_seed(seed)
    return nn.SequentialCell(
        nn.Dense(2, 16, dtype=core.float64), nn.Tanh(), nn.Dense(16, 1, dtype=core.float64)
    )


def _dataset(n_batches=4, batch=16, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_batches):
        x = rng.uniform(-1, 1, (batch, 2))
        out.append((x, np.sin(2 * x[:, :1]) + 0.5 * x[:, 1:]))
    return out


class StopAtStep(Callback):
    def __init__(self, step):
        self.step = step

    def on_train_step_end(self, run_context):
        if run_context.original_args().cur_step_num == self.step:
            run_context.request_stop()


def test_train_decreases_loss_and_monitors(capsys):
    net = _net()
    model = Model(net, nn.MSELoss(), nn.Adam(net.trainable_params(), learning_rate=1e-2))
    monitor = LossMonitor(per_print_times=4)
    history = model.train(10, _dataset(), callbacks=[monitor])
    assert len(history) == 10 and len(monitor.losses) == 40
    assert history[-1] < 0.3 * history[0]
    out = capsys.readouterr().out
    assert out.count("loss is") == 10 and "epoch: 10 step: 4" in out
    ev = model.eval(_dataset(seed=1))
    assert set(ev) == {"loss"} and ev["loss"] < history[0]


def test_plain_loop_equals_model_train():
    """Model.train is the plain loop: same parameters, bit for bit."""
    data = _dataset()
    net_a = _net()
    opt_a = nn.SGD(net_a.trainable_params(), learning_rate=0.1, momentum=0.9)
    Model(net_a, nn.MSELoss(), opt_a).train(3, data)
    net_b = _net()
    opt_b = nn.SGD(net_b.trainable_params(), learning_rate=0.1, momentum=0.9)
    loss_fn = nn.MSELoss()
    grad_fn = core.value_and_grad(lambda x, y: loss_fn(net_b(x), y), None, opt_b.parameters)
    for _ in range(3):
        for x, y in data:
            _, grads = grad_fn(core.tensor(x), core.tensor(y))
            opt_b(grads)
    for a, b in zip(net_a.trainable_params(), net_b.trainable_params(), strict=True):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_checkpoint_callback_writes_and_rotates_files(tmp_path):
    net = _net()
    opt = nn.Adam(net.trainable_params(), learning_rate=1e-2)
    ckpt = CheckpointCallback(every_n_steps=3, directory=tmp_path / "ck", prefix="run", keep_max=2)
    Model(net, nn.MSELoss(), opt).train(
        2, _dataset(), callbacks=[ckpt]
    )  # 8 steps: saves at 3, 6, end (8)
    files = sorted(os.listdir(tmp_path / "ck"))
    assert files == ["run-2_6.ckpt.h5", "run-2_8.ckpt.h5"]
    assert ckpt.latest == os.path.join(tmp_path / "ck", "run-2_8.ckpt.h5")
    params = core.load_checkpoint(ckpt.latest)
    assert int(params["step_num"]) == 8 and int(params["epoch_num"]) == 2
    assert int(params["global_step"]) == 8
    assert {"0.weight", "2.bias", "adam_m.0.weight", "adam_v.2.bias"} <= set(params)
    fresh = _net(seed=3)
    fresh_opt = nn.Adam(fresh.trainable_params(), learning_rate=1e-2)
    meta = restore_checkpoint(ckpt.latest, fresh, fresh_opt)
    assert meta == {"epoch_num": 2, "step_num": 8, "step_in_epoch": 0}
    for a, b in zip(net.trainable_params(), fresh.trainable_params(), strict=True):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


@pytest.mark.parametrize("stop_at", [5, 8])
def test_resume_mid_epoch_is_bit_identical(tmp_path, stop_at):
    """4 epochs straight == stop after `stop_at` steps (mid-epoch or at an epoch end), then
    resume into fresh objects from the checkpoint."""
    data = _dataset()
    make_opt = lambda net: nn.AdamW(  # noqa: E731
        net.trainable_params(), learning_rate=nn.CosineDecayLR(1e-4, 1e-2, 16), weight_decay=0.05
    )
    ref = _net()
    Model(ref, nn.MSELoss(), make_opt(ref)).train(4, data)

    net = _net()
    ckpt = CheckpointCallback(every_n_steps=100, directory=tmp_path, prefix="r")
    Model(net, nn.MSELoss(), make_opt(net)).train(4, data, callbacks=[ckpt, StopAtStep(stop_at)])
    assert ckpt.latest.endswith(f"_{stop_at}.ckpt.h5")  # saved at the end of the stopped run

    fresh = _net(seed=11)
    monitor = LossMonitor(per_print_times=0)
    history = Model(fresh, nn.MSELoss(), make_opt(fresh)).train(
        4, data, callbacks=[monitor], resume_from=ckpt.latest
    )
    assert len(monitor.losses) == 16 - stop_at
    assert len(history) == 4 - stop_at // 4
    for a, b in zip(ref.trainable_params(), fresh.trainable_params(), strict=True):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_early_stopping_stops():
    net = _net()
    opt = nn.SGD(net.trainable_params(), learning_rate=0.0)  # the loss cannot improve
    stop = EarlyStopping(monitor="loss", patience=2)
    history = Model(net, nn.MSELoss(), opt).train(100, _dataset(), callbacks=[stop])
    assert len(history) == 4  # best at epoch 1, then 3 epochs without improvement > patience 2
    assert stop.stopped_epoch == 4


def test_early_stopping_on_eval_loss_with_min_delta():
    net = _net()
    opt = nn.Adam(net.trainable_params(), learning_rate=1e-3)
    stop = EarlyStopping(monitor="eval_loss", patience=0, min_delta=10.0)  # nothing improves by 10
    history = Model(net, nn.MSELoss(), opt).train(
        50, _dataset(), callbacks=[stop], valid_dataset=_dataset(seed=2)
    )
    assert len(history) == 2 and stop.stopped_epoch == 2
    with pytest.raises(KeyError, match="eval_loss"):
        Model(net, nn.MSELoss(), opt).train(
            1, _dataset(), callbacks=[EarlyStopping(monitor="eval_loss")]
        )


def test_reduce_lr_on_plateau_as_callback():
    net = _net()
    opt = nn.SGD(net.trainable_params(), learning_rate=1e-12)  # the loss is flat
    sched = nn.ReduceLROnPlateau(opt, factor=0.5, patience=1)
    Model(net, nn.MSELoss(), opt).train(5, _dataset(), callbacks=[sched])
    # epoch 1 sets the best; epochs 2, 3 are flat -> reduce at epoch 3; epochs 4, 5 -> reduce at 5
    assert float(opt.get_lr()) == pytest.approx(1e-12 / 4)


def test_progress_bar_and_time_monitor(capsys):
    net = _net()
    buf = io.StringIO()
    tm = TimeMonitor()
    Model(net, nn.MSELoss(), nn.Adam(net.trainable_params())).train(
        2, _dataset(), callbacks=[ProgressBar(leave=True, file=buf), tm]
    )
    text = buf.getvalue()
    assert "epoch 1/2" in text and "epoch 2/2" in text and "4/4" in text
    assert len(tm.epoch_times) == 2 and all(t > 0 for t in tm.epoch_times)
    assert capsys.readouterr().out.count("ms/step") == 2


def test_network_with_loss_and_metrics_and_predict():
    class WithLoss(nn.Cell):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def construct(self, x, y):
            return ((self.net(x) - y) ** 2).mean()

    net = _net()
    model = Model(WithLoss(net), optimizer=nn.Adam(net.trainable_params(), learning_rate=1e-2))
    history = model.train(5, _dataset())
    assert history[-1] < history[0]
    ev = Model(net, nn.MSELoss(), metrics={"mae": lambda p, y: ops.abs(p - y).mean()}).eval(
        _dataset(seed=3)
    )
    assert set(ev) == {"loss", "mae"} and ev["mae"] > 0
    pred = Model(net).predict(np.zeros((3, 2)))
    assert pred.shape == (3, 1)
    assert net.training is False


def test_jit_model_matches_eager():
    data = _dataset()
    nets = []
    for use_jit in (False, True):
        net = _net()
        Model(
            net, nn.MSELoss(), nn.Adam(net.trainable_params(), learning_rate=1e-2), jit=use_jit
        ).train(2, data)
        nets.append(net)
    for a, b in zip(nets[0].trainable_params(), nets[1].trainable_params(), strict=True):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-12, atol=1e-14)


def test_bad_batches_and_missing_optimizer():
    net = _net()
    with pytest.raises(TypeError, match="batch must be a tuple"):
        Model(net, nn.MSELoss(), nn.SGD(net.trainable_params())).train(1, [np.zeros((2, 2))])
    with pytest.raises(ValueError, match="no optimizer"):
        Model(net, nn.MSELoss()).train(1, _dataset())
