"""W1, dispatch overhead: a chain of 200 small elementwise ops (add, mul, tanh, exp in turn) on
a 16x16 float32 tensor, forward and backward (gradient of the sum wrt the input). The arrays
are tiny, so this measures what the framework spends per op, not arithmetic.

The cycle x -> x + c -> (.) * c -> tanh -> exp keeps values bounded (exp of a tanh) for any
chain length.
"""

import numpy as np

from .common import randn
from .harness import Impl, Workload, available


def _cases(quick):
    return [{"n": 16, "n_ops": 200}]


def _case_name(cfg):
    return f"{cfg['n_ops']} ops on {cfg['n']}x{cfg['n']}"


def _data(cfg):
    rng = np.random.default_rng(0)
    n = cfg["n"]
    return {"x": randn(rng, (n, n)), "c": (0.5 + 0.1 * randn(rng, (n, n))).astype(np.float32)}


def _chain(x, c, n_ops, tanh, exp):
    for i in range(n_ops):
        k = i % 4
        if k == 0:
            x = x + c
        elif k == 1:
            x = x * c
        elif k == 2:
            x = tanh(x)
        else:
            x = exp(x)
    return x


def make_ours(cfg, data, jit=False):
    from diffsci import core
    from diffsci.core import ops

    c = core.tensor(data["c"])
    x = core.tensor(data["x"])
    n_ops = cfg["n_ops"]

    def loss(x):
        return _chain(x, c, n_ops, ops.tanh, ops.exp).sum()

    fn = core.value_and_grad(loss)
    if jit:
        fn = core.jit(fn)

    def step():
        return fn(x)

    return step


def make_torch(cfg, data):
    import torch

    c = torch.from_numpy(data["c"])
    x0 = torch.from_numpy(data["x"])
    n_ops = cfg["n_ops"]

    def step():
        x = x0.detach().requires_grad_(True)
        y = _chain(x, c, n_ops, torch.tanh, torch.exp).sum()
        (g,) = torch.autograd.grad(y, x)
        return y.detach(), g

    return step


def make_jax(cfg, data, jit=False):
    import jax
    import jax.numpy as jnp

    c = jnp.asarray(data["c"])
    x = jnp.asarray(data["x"])
    n_ops = cfg["n_ops"]

    def loss(x):
        return _chain(x, c, n_ops, jnp.tanh, jnp.exp).sum()

    fn = jax.value_and_grad(loss)
    if jit:
        fn = jax.jit(fn)

    def step():
        return jax.block_until_ready(fn(x))

    return step


def _impls():
    return available(
        Impl("ours", "ours", make_ours),
        Impl("ours jit", "ours jit", lambda cfg, d: make_ours(cfg, d, jit=True)),
        Impl("torch (autograd)", "torch", make_torch),
        Impl("jax (grad, op by op)", "jax", make_jax),
        Impl("jax.jit (grad)", "jax.jit", lambda cfg, d: make_jax(cfg, d, jit=True)),
    )


WORKLOAD = Workload(
    key="W1",
    title="dispatch: 200 elementwise ops (add, mul, tanh, exp) on 16x16 float32, forward + backward",
    cases=_cases,
    case_name=_case_name,
    data=_data,
    impls=_impls,
    reference="torch",
    target=1.0,
    tiny=[{"n": 4, "n_ops": 12}],
    rtol=1e-4,
)
