"""MM, one large float32 matmul (2048 x 2048 @ 2048 x 2048; 1024 with ``--quick``): our
``core.ops.matmul`` against the raw numpy call it wraps (same BLAS), so the ratio is the
engine's per-call overhead; PyTorch and JAX rows show other BLAS libraries for context.
"""

import numpy as np

from .common import randn
from .harness import Impl, Workload, available


def _cases(quick):
    return [{"n": 1024 if quick else 2048}]


def _case_name(cfg):
    return f"{cfg['n']}x{cfg['n']} @ {cfg['n']}x{cfg['n']} float32"


def _data(cfg):
    rng = np.random.default_rng(4)
    n = cfg["n"]
    return {"a": randn(rng, (n, n)), "b": randn(rng, (n, n))}


def make_ours(cfg, data, jit=False):
    from diffsci import core
    from diffsci.core import ops

    a, b = core.tensor(data["a"]), core.tensor(data["b"])
    fn = core.jit(ops.matmul) if jit else ops.matmul

    def step():
        return (fn(a, b),)

    return step


def make_numpy(cfg, data):
    a, b = data["a"], data["b"]

    def step():
        return (np.matmul(a, b),)

    return step


def make_torch(cfg, data):
    import torch

    a, b = torch.from_numpy(data["a"]), torch.from_numpy(data["b"])

    def step():
        return (torch.matmul(a, b),)

    return step


def make_jax(cfg, data):
    import jax
    import jax.numpy as jnp

    a, b = jnp.asarray(data["a"]), jnp.asarray(data["b"])
    fn = jax.jit(jnp.matmul)

    def step():
        return (jax.block_until_ready(fn(a, b)),)

    return step


def _impls():
    return available(
        Impl("ours (core.ops.matmul)", "ours", make_ours),
        Impl("ours jit", "ours jit", lambda c, d: make_ours(c, d, jit=True)),
        Impl("numpy (np.matmul)", "numpy", make_numpy),
        Impl("torch (torch.matmul)", "torch", make_torch),
        Impl("jax.jit (jnp.matmul)", "jax.jit", make_jax),
    )


WORKLOAD = Workload(
    key="MM",
    title="large matmul: 2048x2048 float32, ours vs the numpy call it wraps",
    cases=_cases,
    case_name=_case_name,
    data=_data,
    impls=_impls,
    reference="numpy",
    target=1.05,
    tiny=[{"n": 8}],
    rtol=1e-5,
)
