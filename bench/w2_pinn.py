"""W2, one PINN training step for viscous Burgers: MLP 2-[64]x4-1 with tanh, on 4096 collocation
points (x, t), residual ``r = u_t + u u_x - (0.01/pi) u_xx``, loss = mean(r^2), gradient wrt the
weights, one Adam step (lr 1e-3, torch.optim.Adam's formula).

Input derivatives need the network's derivative wrt its input, up to second order in x; the
points are independent, so per-point derivatives are directional derivatives of the batched
network. Two formulations, each timed in every framework (the target compares the fastest):

  fwd-over-fwd: ``(u, u_x), (u_x, u_xx) = jvp(x -> jvp(net, x, e_x), x, e_x)`` and
      ``u_t = jvp(net, x, e_t)``: nested forward mode (Taylor-like), no tape for the inner levels.
  rev-over-rev: ``du = vjp(net)(1)`` gives (u_x, u_t); ``d2 = vjp(du)(e_x)`` gives u_xx (the
      usual torch.autograd.grad(create_graph=True) PINN).

The weight gradient is always reverse mode over whichever formulation.
"""

import itertools
import math
import warnings

import numpy as np

from .common import Adam, adam_source, jax_adam, randn
from .harness import Impl, Workload, available

NU = 0.01 / math.pi
LR = 1e-3


def _cases(quick):
    return [{"n_points": 4096, "width": 64, "depth": 4}]


def _case_name(cfg):
    return f"{cfg['n_points']} points, MLP 2-[{cfg['width']}]x{cfg['depth']}-1"


def _data(cfg):
    """Seeded points in [-1, 1] x [0, 1] and Glorot-normal weights [in, out] with small biases."""
    rng = np.random.default_rng(1)
    n = cfg["n_points"]
    pts = np.stack([rng.uniform(-1, 1, n), rng.uniform(0, 1, n)], axis=1).astype(np.float32)
    sizes = [2] + [cfg["width"]] * cfg["depth"] + [1]
    params = []
    for fan_in, fan_out in itertools.pairwise(sizes):
        params.append(randn(rng, (fan_in, fan_out), math.sqrt(2.0 / (fan_in + fan_out))))
        params.append(randn(rng, (fan_out,), 0.1))
    return {"x": pts, "params": params}


def _mlp(params, x, tanh):
    """[N, 2] -> [N, 1]; params = [W0, b0, W1, b1, ...], W [in, out]."""
    n = len(params) // 2
    for i in range(n):
        x = x @ params[2 * i] + params[2 * i + 1]
        if i < n - 1:
            x = tanh(x)
    return x


def _directions(n):
    ex = np.zeros((n, 2), np.float32)
    ex[:, 0] = 1.0
    et = np.zeros((n, 2), np.float32)
    et[:, 1] = 1.0
    return ex, et


# ---- ours --------------------------------------------------------------------------------------


def make_ours(cfg, data, mode="fwd", jit=False):
    from diffsci import core
    from diffsci.core import ops

    params = [core.Parameter(p.copy(), name=f"p{i}") for i, p in enumerate(data["params"])]
    x = core.tensor(data["x"])
    ex_np, et_np = _directions(cfg["n_points"])
    ex, et = core.tensor(ex_np), core.tensor(et_np)

    def net(x):
        return _mlp(params, x, ops.tanh)

    def residual_fwd(x):
        (u, u_x), (_, u_xx) = core.jvp(lambda y: core.jvp(net, (y,), (ex,)), (x,), (ex,))
        _, u_t = core.jvp(net, (x,), (et,))
        return u_t + u * u_x - NU * u_xx

    def residual_rev(x):
        def first(y):
            u, pull = core.vjp(net, y)
            (du,) = pull(ops.ones_like(u))
            return du, u

        du, pull2, (u,) = core.vjp(first, x, has_aux=True)  # core's aux is the tuple out[1:]
        (d2,) = pull2(ex)
        return du[:, 1:2] + u * du[:, 0:1] - NU * d2[:, 0:1]

    residual = residual_fwd if mode == "fwd" else residual_rev

    def loss_fn(x):
        r = residual(x)
        return ops.mean(r * r)

    grad_fn = core.value_and_grad(loss_fn, None, params)
    opt = Adam(params, learning_rate=LR)

    def train_step(x):
        loss, grads = grad_fn(x)
        opt(grads)
        return (loss, *grads)

    if jit:
        train_step = core.jit(train_step)

    def step():
        return (*train_step(x), *params)

    return step


# ---- torch -------------------------------------------------------------------------------------


def make_torch(cfg, data, mode="rev"):
    import torch

    params = [torch.tensor(p, requires_grad=True) for p in data["params"]]
    x = torch.from_numpy(data["x"])
    ex_np, et_np = _directions(cfg["n_points"])
    ex, et = torch.from_numpy(ex_np), torch.from_numpy(et_np)
    opt = torch.optim.Adam(params, lr=LR)

    def net(y):
        return _mlp(params, y, torch.tanh)

    def residual_rev():
        y = x.detach().requires_grad_(True)
        u = net(y)
        (du,) = torch.autograd.grad(u, y, torch.ones_like(u), create_graph=True)
        u_x, u_t = du[:, 0:1], du[:, 1:2]
        (d2,) = torch.autograd.grad(u_x, y, torch.ones_like(u_x), create_graph=True)
        return u_t + u * u_x - NU * d2[:, 0:1]

    def residual_fwd():
        from torch.func import jvp

        (u, u_x), (_, u_xx) = jvp(lambda y: jvp(net, (y,), (ex,)), (x,), (ex,))
        _, u_t = jvp(net, (x,), (et,))
        return u_t + u * u_x - NU * u_xx

    residual = residual_rev if mode == "rev" else residual_fwd
    if mode == "fwd":
        # torch.func.jvp imports this lazily on first use, and that import emits torch's own
        # DeprecationWarning about torch.jit.script (an error under the test suite's filters).
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", ".*torch.jit.script.*", DeprecationWarning)
            import torch._decomp.decompositions_for_jvp

    def step():
        r = residual()
        loss = (r * r).mean()
        grads = torch.autograd.grad(loss, params)
        for p, g in zip(params, grads, strict=True):
            p.grad = g
        opt.step()
        return (loss.detach(), *grads, *(p.detach() for p in params))

    return step


# ---- jax ---------------------------------------------------------------------------------------


def make_jax(cfg, data, mode="fwd"):
    import jax
    import jax.numpy as jnp

    params = [jnp.asarray(p) for p in data["params"]]
    x = jnp.asarray(data["x"])
    ex_np, et_np = _directions(cfg["n_points"])
    ex, et = jnp.asarray(ex_np), jnp.asarray(et_np)
    init, update = jax_adam(lr=LR)

    def loss_fn(params, x):
        def net(y):
            return _mlp(params, y, jnp.tanh)

        if mode == "fwd":
            (u, u_x), (_, u_xx) = jax.jvp(lambda y: jax.jvp(net, (y,), (ex,)), (x,), (ex,))
            _, u_t = jax.jvp(net, (x,), (et,))
            r = u_t + u * u_x - NU * u_xx
        else:

            def first(y):
                u, pull = jax.vjp(net, y)
                return pull(jnp.ones_like(u))[0], u

            du, pull2, u = jax.vjp(first, x, has_aux=True)
            d2 = pull2(ex)[0]
            r = du[:, 1:2] + u * du[:, 0:1] - NU * d2[:, 0:1]
        return jnp.mean(r * r)

    @jax.jit
    def train_step(params, state, x):
        loss, grads = jax.value_and_grad(loss_fn)(params, x)
        params, state = update(params, grads, state)
        return loss, grads, params, state

    box = {"params": params, "state": init(params)}

    def step():
        loss, grads, box["params"], box["state"] = train_step(box["params"], box["state"], x)
        return jax.block_until_ready((loss, *grads, *box["params"]))

    return step


def _impls():
    return available(
        Impl("ours (fwd-over-fwd)", "ours", make_ours),
        Impl("ours (rev-over-rev)", "ours", lambda c, d: make_ours(c, d, mode="rev")),
        Impl("ours jit (fwd-over-fwd)", "ours jit", lambda c, d: make_ours(c, d, jit=True)),
        Impl("ours jit (rev-over-rev)", "ours jit", lambda c, d: make_ours(c, d, "rev", True)),
        Impl("torch (rev-over-rev, autograd)", "torch", make_torch),
        Impl("torch (fwd-over-fwd, torch.func)", "torch", lambda c, d: make_torch(c, d, "fwd")),
        Impl("jax.jit (fwd-over-fwd)", "jax.jit", make_jax),
        Impl("jax.jit (rev-over-rev)", "jax.jit", lambda c, d: make_jax(c, d, "rev")),
    )


WORKLOAD = Workload(
    key="W2",
    title="PINN step: Burgers residual, MLP 2-[64]x4-1 tanh, 4096 points, loss + weight grads + Adam",
    cases=_cases,
    case_name=_case_name,
    data=_data,
    impls=_impls,
    reference="torch",
    target=1.5,
    tiny=[{"n_points": 16, "width": 8, "depth": 2}],
    rtol=1e-3,
    notes=lambda: (
        f"Adam: {adam_source()}; outputs checked: loss, weight grads, weights after the step"
    ),
)
