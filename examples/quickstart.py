"""Quickstart: fit y = sin(3x) with a small tanh network written with core ops and core.grad.

Run with ``make demo``; ``main(steps=...)`` lets tests run it tiny.
"""

import numpy as np

import core
from core import ops


def main(steps=500, lr=0.05, seed=0):
    core.set_seed(seed)
    x = core.linspace(-1.0, 1.0, 128).reshape(-1, 1)
    y = ops.sin(3.0 * x)
    w1 = core.random.normal((1, 32), stddev=1.0)
    b1 = core.zeros(32)
    w2 = core.random.normal((32, 1), stddev=0.2)
    b2 = core.zeros(1)
    params = [w1, b1, w2, b2]

    def loss_fn(w1, b1, w2, b2):
        h = ops.tanh(x @ w1 + b1)
        return ((h @ w2 + b2 - y) ** 2).mean()

    value_and_grad = core.value_and_grad(loss_fn, grad_position=(0, 1, 2, 3))
    for step in range(steps):
        loss, grads = value_and_grad(*params)
        params = [p - lr * g for p, g in zip(params, grads)]
        if step % 100 == 0:
            print(f"step {step:4d}  loss {float(loss):.5f}")
    loss = float(loss_fn(*params))
    print(f"final loss {loss:.5f}")
    return loss


if __name__ == "__main__":
    main()
