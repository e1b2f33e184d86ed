"""W3, FNO2D forward + backward (Li et al. 2021, "Fourier Neural Operator for Parametric PDEs",
Section 4 / their fourier_2d.py): batch 8, 64x64 grid, 3 input channels (a(x, y), x, y),
width 32, 12x12 modes, 4 spectral layers, projection 32 -> 128 -> 1, loss = MSE; the gradient
of the loss wrt every weight (complex spectral weights included).

Channels-last layout ``[B, X, Y, C]`` in every framework, so the 1x1 convolution is a matmul.
One spectral layer:

    h_ft = rfft2(h, axes=(1, 2))                                  # [B, 64, 33, C] complex
    top  = einsum("bxyi,ioxy->bxyo", h_ft[:, :12, :12], w1)       # [B, 12, 12, C]
    bot  = einsum("bxyi,ioxy->bxyo", h_ft[:, -12:, :12], w2)      # [B, 12, 12, C]
    spec = irfft2(concat([top, zeros, bot], x), s=(64, 64))       # the y bins 12..32 are
                                                                  # zero-padded by irfft2
    h    = gelu(spec + h @ W + b)                                 # (no gelu after the last)

Complex gradients follow JAX's convention (ours and JAX); the PyTorch row conjugates its
complex gradients for the check.
"""

import math

import numpy as np

from .common import randn
from .harness import Impl, Workload, available

EQ = "bxyi,ioxy->bxyo"


def _cases(quick):
    return [{"batch": 8, "grid": 64, "width": 32, "modes": 12, "layers": 4}]


def _case_name(cfg):
    return (
        f"B={cfg['batch']} {cfg['grid']}x{cfg['grid']} width {cfg['width']} "
        f"modes {cfg['modes']}x{cfg['modes']} {cfg['layers']} layers"
    )


def _data(cfg):
    """Seeded inputs/targets and weights: lift P [3, C], per layer (w1, w2 complex
    [C, C, m, m], W [C, C], b [C]), projection Q1 [C, 128], Q2 [128, 1] (+ biases)."""
    rng = np.random.default_rng(2)
    b, n, c, m = cfg["batch"], cfg["grid"], cfg["width"], cfg["modes"]
    xs = np.linspace(0, 1, n, dtype=np.float32)
    gx, gy = np.meshgrid(xs, xs, indexing="ij")
    a = randn(rng, (b, n, n, 1))
    inp = np.concatenate(
        [
            a,
            np.broadcast_to(gx[None, :, :, None], a.shape),
            np.broadcast_to(gy[None, :, :, None], a.shape),
        ],
        -1,
    )
    target = randn(rng, (b, n, n, 1), 0.5)

    def cplx(shape, scale):
        return (randn(rng, shape, scale) + 1j * randn(rng, shape, scale)).astype(np.complex64)

    params = [randn(rng, (3, c), 1 / math.sqrt(3)), randn(rng, (c,), 0.1)]
    for _ in range(cfg["layers"]):
        params += [cplx((c, c, m, m), 1 / c), cplx((c, c, m, m), 1 / c)]
        params += [randn(rng, (c, c), 1 / math.sqrt(c)), randn(rng, (c,), 0.1)]
    params += [randn(rng, (c, 128), 1 / math.sqrt(c)), randn(rng, (128,), 0.1)]
    params += [randn(rng, (128, 1), 1 / math.sqrt(128)), randn(rng, (1,), 0.1)]
    return {"x": np.ascontiguousarray(inp, dtype=np.float32), "y": target, "params": params}


def _fno(params, x, cfg, F):
    """The network with framework namespace ``F`` (einsum, rfft2, irfft2, concat, zeros, gelu)."""
    n, m, nl = cfg["grid"], cfg["modes"], cfg["layers"]
    h = x @ params[0] + params[1]  # [B, X, Y, C]
    for layer in range(nl):
        w1, w2, w, b = params[2 + 4 * layer : 6 + 4 * layer]
        h_ft = F.rfft2(h)  # [B, X, Y//2+1, C] complex
        top = F.einsum(EQ, h_ft[:, :m, :m], w1)  # [B, m, m, C]
        bot = F.einsum(EQ, h_ft[:, n - m :, :m], w2)  # [B, m, m, C]
        mid = F.zeros((h.shape[0], n - 2 * m, m, h.shape[3]), top)
        spec = F.irfft2(F.concat([top, mid, bot], 1), (n, n))  # [B, X, Y, C]
        h = spec + h @ w + b
        if layer < nl - 1:
            h = F.gelu(h)
    q1, c1, q2, c2 = params[-4:]
    return F.gelu(h @ q1 + c1) @ q2 + c2  # [B, X, Y, 1]


class _OursF:
    def __init__(self):
        from diffsci.core import ops

        self.ops = ops
        self.einsum, self.gelu = ops.einsum, ops.gelu

    def rfft2(self, h):
        return self.ops.fft.rfft2(h, axes=(1, 2))

    def irfft2(self, h, s):
        return self.ops.fft.irfft2(h, s=s, axes=(1, 2))

    def concat(self, ts, axis):
        return self.ops.concat(ts, axis=axis)

    def zeros(self, shape, like):
        return self.ops.zeros(shape, dtype=like.dtype)


class _TorchF:
    def __init__(self):
        import torch

        self.t = torch
        self.einsum, self.gelu = torch.einsum, torch.nn.functional.gelu

    def rfft2(self, h):
        return self.t.fft.rfft2(h, dim=(1, 2))

    def irfft2(self, h, s):
        return self.t.fft.irfft2(h, s=s, dim=(1, 2))

    def concat(self, ts, axis):
        return self.t.cat(ts, dim=axis)

    def zeros(self, shape, like):
        return self.t.zeros(shape, dtype=like.dtype)


class _JaxF:
    def __init__(self):
        import jax
        import jax.numpy as jnp

        self.jnp = jnp
        self.einsum = jnp.einsum
        self.gelu = lambda h: jax.nn.gelu(h, approximate=False)

    def rfft2(self, h):
        return self.jnp.fft.rfft2(h, axes=(1, 2))

    def irfft2(self, h, s):
        return self.jnp.fft.irfft2(h, s=s, axes=(1, 2))

    def concat(self, ts, axis):
        return self.jnp.concatenate(ts, axis=axis)

    def zeros(self, shape, like):
        return self.jnp.zeros(shape, dtype=like.dtype)


def make_ours(cfg, data, jit=False):
    from diffsci import core
    from diffsci.core import ops

    F = _OursF()
    params = [core.Parameter(p.copy(), name=f"p{i}") for i, p in enumerate(data["params"])]
    x, y = core.tensor(data["x"]), core.tensor(data["y"])

    def loss_fn(x, y):
        d = _fno(params, x, cfg, F) - y
        return ops.mean(d * d)

    fn = core.value_and_grad(loss_fn, None, params)
    if jit:
        fn = core.jit(fn)

    def step():
        loss, grads = fn(x, y)
        return (loss, *grads)

    return step


def make_torch(cfg, data):
    import torch

    F = _TorchF()
    params = [torch.tensor(p, requires_grad=True) for p in data["params"]]
    x, y = torch.from_numpy(data["x"]), torch.from_numpy(data["y"])

    def step():
        d = _fno(params, x, cfg, F) - y
        loss = (d * d).mean()
        grads = torch.autograd.grad(loss, params)
        # PyTorch's complex gradient is the conjugate of JAX's (and ours).
        return (loss.detach(), *(g.conj() if g.is_complex() else g for g in grads))

    return step


def make_jax(cfg, data):
    import jax
    import jax.numpy as jnp

    F = _JaxF()
    params = [jnp.asarray(p) for p in data["params"]]
    x, y = jnp.asarray(data["x"]), jnp.asarray(data["y"])

    @jax.jit
    def fn(params, x, y):
        def loss_fn(params):
            d = _fno(params, x, cfg, F) - y
            return jnp.mean(d * d)

        return jax.value_and_grad(loss_fn)(params)

    def step():
        loss, grads = jax.block_until_ready(fn(params, x, y))
        return (loss, *grads)

    return step


def _impls():
    return available(
        Impl("ours", "ours", make_ours),
        Impl("ours jit", "ours jit", lambda c, d: make_ours(c, d, jit=True)),
        Impl("torch (autograd)", "torch", make_torch),
        Impl("jax.jit (value_and_grad)", "jax.jit", make_jax),
    )


WORKLOAD = Workload(
    key="W3",
    title="FNO2D: 64x64 grid, batch 8, width 32, 12x12 modes, 4 spectral layers, forward + backward",
    cases=_cases,
    case_name=_case_name,
    data=_data,
    impls=_impls,
    reference="torch",
    target=1.5,
    tiny=[{"batch": 2, "grid": 8, "width": 4, "modes": 2, "layers": 2}],
    rtol=1e-3,
)
