"""Quickstart: derivatives with core.grad, a compiled training step, and a checkpoint round trip.

Fits y = sin(3x) on [-1, 1] with a small tanh network (nn.SequentialCell of nn.Dense + nn.Tanh)
trained by Adam inside one ``core.jit``-compiled step, saves a checkpoint in a temporary
directory, reloads it into a freshly built network and checks that both predict the same.

Run with ``make demo``; ``main(steps=...)`` lets tests run it tiny.
"""

import math
import os
import tempfile

import numpy as np

from diffsci import core
from diffsci.core import nn, ops


def build_net(seed):
    core.set_seed(seed)
    return nn.SequentialCell(nn.Dense(1, 32), nn.Tanh(), nn.Dense(32, 1))


def main(steps=1500, lr=1e-2, seed=0, verbose=True):
    say = print if verbose else (lambda *a, **k: None)

    # 1. derivatives: d/dx [x sin x] = sin x + x cos x, and the second derivative by nesting
    f = lambda x: (x * ops.sin(x)).sum()  # noqa: E731
    x0 = core.tensor([0.5, 1.0, 2.0])
    df = core.grad(f)(x0)
    d2f = core.grad(lambda x: core.grad(f)(x).sum())(x0)
    exact = np.sin(x0.asnumpy()) + x0.asnumpy() * np.cos(x0.asnumpy())
    say(f"core.grad of x sin x: {np.round(df.asnumpy(), 5)} (exact {np.round(exact, 5)})")
    say(f"second derivative:    {np.round(d2f.asnumpy(), 5)}")

    # 2. data and network
    x = core.linspace(-1.0, 1.0, 128).reshape(-1, 1)  # [128, 1]
    y = ops.sin(3.0 * x)  # [128, 1]
    net = build_net(seed)
    opt = nn.Adam(net.trainable_params(), learning_rate=lr)
    loss_fn = nn.MSELoss()
    grad_fn = core.value_and_grad(lambda x, y: loss_fn(net(x), y), None, opt.parameters)

    @core.jit
    def train_step(x, y):  # forward, backward and Adam update: one compiled graph
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss

    # 3. training
    every = max(steps // 5, 1)
    loss = loss_fn(net(x), y)
    initial = float(loss)
    for step in range(steps):
        loss = train_step(x, y)
        if step % every == 0:
            say(f"step {step:5d}  loss {float(loss):.6f}")
    final = float(loss_fn(net(x), y))

    # 4. checkpoint round trip (in a temporary directory, never in the repository)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "quickstart.ckpt.h5")
        core.save_checkpoint(net, path)
        fresh = build_net(seed + 1)
        not_loaded, unused = core.load_param_into_net(fresh, core.load_checkpoint(path))
        if not_loaded or unused:
            raise RuntimeError(f"checkpoint mismatch: missing {not_loaded}, unused {unused}")
        same = np.array_equal(fresh(x).asnumpy(), net(x).asnumpy())
    if not same:
        raise RuntimeError("the reloaded network predicts differently")
    say(f"checkpoint reloaded into a fresh network: predictions match ({same})")
    say(f"final loss {final:.6f}")
    if not math.isfinite(final):
        raise RuntimeError(f"training diverged: final loss {final}")
    return {"initial_loss": initial, "final_loss": final, "grad": df.asnumpy(), "exact_grad": exact}


if __name__ == "__main__":
    main()
