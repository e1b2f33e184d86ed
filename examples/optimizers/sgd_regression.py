"""SGD with momentum through ``core.train.Model``: regression of a noisy 2-D surface.

Shows a per-step learning-rate list (``nn.cosine_decay_lr``), the training helper with
``LossMonitor`` and ``CheckpointCallback`` (files in a temporary directory), and resuming a
run from its last checkpoint.

    python examples/optimizers/sgd_regression.py
"""

import math
import tempfile

import numpy as np

from diffsci import core
from diffsci.core import nn
from diffsci.core.train import CheckpointCallback, LossMonitor, Model


def make_batches(n_batches, batch_size, seed):
    """``[(x [B, 2], y [B, 1])]`` with ``y = x0^2 - x0 x1 + 0.5 sin(3 x1) + noise``."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_batches):
        x = rng.uniform(-1.0, 1.0, (batch_size, 2)).astype(np.float32)
        y = x[:, :1] ** 2 - x[:, :1] * x[:, 1:] + 0.5 * np.sin(3.0 * x[:, 1:])
        out.append((x, (y + 0.01 * rng.standard_normal(y.shape)).astype(np.float32)))
    return out


def build(seed):
    core.set_seed(seed)
    return nn.SequentialCell(
        nn.Dense(2, 32), nn.Tanh(), nn.Dense(32, 32), nn.Tanh(), nn.Dense(32, 1)
    )


def main(steps=1200, n_batches=8, batch_size=64, seed=0, verbose=True):
    train = make_batches(n_batches, batch_size, seed)
    valid = make_batches(2, 256, seed + 1)
    epochs = max(math.ceil(steps / n_batches), 2)
    lrs = nn.cosine_decay_lr(
        0.005, 0.1, total_step=epochs * n_batches, step_per_epoch=n_batches, decay_epoch=epochs
    )
    net = build(seed)
    opt = nn.SGD(net.trainable_params(), learning_rate=lrs, momentum=0.9, nesterov=True)
    model = Model(net, nn.MSELoss(), opt)
    initial = model.eval(valid)["loss"]
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = CheckpointCallback(
            every_n_steps=n_batches * 5, directory=tmp, prefix="sgd", keep_max=2
        )
        monitor = LossMonitor(per_print_times=n_batches * max(epochs // 4, 1) if verbose else 0)
        half = epochs // 2
        model.train(half, train, callbacks=[monitor, ckpt])  # first half, then "crash"
        # resume into fresh objects from the last checkpoint and finish the run
        net2 = build(seed + 100)
        opt2 = nn.SGD(net2.trainable_params(), learning_rate=lrs, momentum=0.9, nesterov=True)
        model2 = Model(net2, nn.MSELoss(), opt2)
        model2.train(epochs, train, callbacks=[monitor], resume_from=ckpt.latest)
        saved = len(ckpt.saved)
    final = model2.eval(valid)["loss"]
    if verbose:
        print(
            f"validation MSE: {initial:.5f} -> {final:.5f} ({epochs} epochs, resumed after {half})"
        )
    return {"initial_loss": initial, "final_loss": final, "checkpoints": saved}


if __name__ == "__main__":
    main()
