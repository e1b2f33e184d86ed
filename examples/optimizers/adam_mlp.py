"""Adam / AdamW in a plain compiled loop: fit u(x, y) = sin(pi x) cos(pi y) on [-1, 1]^2.

Shows the MindSpore 2.x training step under ``core.jit`` (forward, backward, gradient
clipping and the optimizer update in one graph), a warm-up + cosine learning-rate schedule,
and decoupled weight decay (AdamW) on the weights only, through parameter groups.

    python examples/optimizers/adam_mlp.py [adam|adamw]
"""

import sys

import numpy as np

from diffsci import core
from diffsci.core import nn, ops


def target(x):
    """``[N, 2] -> [N, 1]``: sin(pi x) cos(pi y)."""
    return ops.sin(np.pi * x[:, :1]) * ops.cos(np.pi * x[:, 1:])


def main(steps=1000, optimizer="adamw", batch_size=128, seed=0, verbose=True):
    core.set_seed(seed)
    net = nn.SequentialCell(
        nn.Dense(2, 64), nn.Tanh(), nn.Dense(64, 64), nn.Tanh(), nn.Dense(64, 1)
    )
    schedule = nn.WarmupCosineDecayLR(
        min_lr=1e-4,
        max_lr=1e-2,
        warmup_steps=max(steps // 20, 1),
        decay_steps=max(steps - steps // 20, 1),
    )
    if optimizer == "adamw":
        weights = [p for p in net.trainable_params() if p.name.endswith("weight")]
        biases = [p for p in net.trainable_params() if not p.name.endswith("weight")]
        groups = [
            {"params": weights, "weight_decay": 1e-4},
            {"params": biases, "weight_decay": 0.0},
        ]
        opt = nn.AdamW(groups, learning_rate=schedule)
    elif optimizer == "adam":
        opt = nn.Adam(net.trainable_params(), learning_rate=schedule)
    else:
        raise ValueError(f"optimizer must be 'adam' or 'adamw', got {optimizer!r}")

    loss_fn = nn.MSELoss()
    grad_fn = core.value_and_grad(lambda x, y: loss_fn(net(x), y), None, opt.parameters)

    @core.jit
    def train_step(x, y):
        loss, grads = grad_fn(x, y)
        opt(nn.clip_by_global_norm(grads, clip_norm=1.0))
        return loss

    grid = np.stack(np.meshgrid(np.linspace(-1, 1, 41), np.linspace(-1, 1, 41)), -1).reshape(-1, 2)
    x_test = core.tensor(grid.astype(np.float32))  # [1681, 2]
    y_test = target(x_test)

    def rel_l2():
        return float(ops.norm(net(x_test) - y_test) / ops.norm(y_test))

    initial = rel_l2()
    every = max(steps // 5, 1)
    for step in range(steps):
        x = core.random.uniform((batch_size, 2), -1.0, 1.0)
        loss = train_step(x, target(x))
        if verbose and step % every == 0:
            print(f"step {step:5d}  loss {float(loss):.2e}  lr {float(opt.get_lr()):.2e}")
    final = rel_l2()
    if verbose:
        print(f"{optimizer}: relative L2 error on a 41x41 grid {initial:.3f} -> {final:.4f}")
    return {"initial_error": initial, "final_error": final}


if __name__ == "__main__":
    main(optimizer=sys.argv[1] if len(sys.argv) > 1 else "adamw")
