"""W4, AlphaFold's triangle updates on a pair tensor z [N, N, c_z = 128], forward only, N = 128
and 256 (N = 128 with ``--quick``):

  tri_attn: triangular gated self-attention around the starting node, Algorithm 14 of the
      AlphaFold 3 supplement (Algorithm 13 of AlphaFold 2's), 4 heads x 32.
  tri_mul: triangular multiplicative update using outgoing edges, Algorithm 12 of the
      AlphaFold 3 supplement (Algorithm 11 of AlphaFold 2's), hidden c = 128.

Written once over a small namespace ``F`` (layer_norm, linear, sigmoid, softmax, einsum,
permute) that each framework fills with its own ops: ``core.ops`` for ours, ``torch.nn.functional``
under ``torch.inference_mode()``, ``jax.nn``/``jnp`` under ``jax.jit``. Linear weights are
[out, in] (``F.linear(x, w) = x @ w.T``), LinearNoBias as in AF3.
"""

import math

import numpy as np

from .common import layer_norm, norm_source, randn, softmax
from .harness import Impl, Workload, available

C_Z, HEADS, C_HEAD, C_MUL = 128, 4, 32, 128


def _cases(quick):
    ns = (128,) if quick else (128, 256)
    return [{"task": t, "n": n} for t in ("tri_attn", "tri_mul") for n in ns]


def _case_name(cfg):
    return f"{cfg['task']} N={cfg['n']}"


def _data(cfg):
    rng = np.random.default_rng(3)
    n = cfg["n"]

    def lin(out, inp):
        return randn(rng, (out, inp), 1 / math.sqrt(inp))

    def ln():
        return (1.0 + randn(rng, (C_Z,), 0.1)).astype(np.float32), randn(rng, (C_Z,), 0.1)

    z = randn(rng, (n, n, C_Z))
    if cfg["task"] == "tri_attn":
        hc = HEADS * C_HEAD
        params = [
            *ln(),
            lin(hc, C_Z),
            lin(hc, C_Z),
            lin(hc, C_Z),
            lin(HEADS, C_Z),
            lin(hc, C_Z),
            lin(C_Z, hc),
        ]
    else:
        params = [
            *ln(),
            lin(C_MUL, C_Z),
            lin(C_MUL, C_Z),
            lin(C_MUL, C_Z),
            lin(C_MUL, C_Z),
            lin(C_Z, C_Z),
        ]
        params += [(1.0 + randn(rng, (C_MUL,), 0.1)).astype(np.float32), randn(rng, (C_MUL,), 0.1)]
        params += [lin(C_Z, C_MUL)]
    return {"z": z, "params": params}


def triangle_attention_starting(F, z, p):
    """AF3 supplement Algorithm 14. z: [N, N, c_z] -> [N, N, c_z]."""
    ln_w, ln_b, wq, wk, wv, wb, wg, wo = p
    n = z.shape[0]
    z = F.layer_norm(z, ln_w, ln_b)  # [i, j, c_z]
    q = F.linear(z, wq).reshape(n, n, HEADS, C_HEAD) * (1.0 / math.sqrt(C_HEAD))  # [i, j, h, c]
    k = F.linear(z, wk).reshape(n, n, HEADS, C_HEAD)  # [i, k, h, c]
    v = F.linear(z, wv).reshape(n, n, HEADS, C_HEAD)  # [i, k, h, c]
    b = F.permute(F.linear(z, wb), (2, 0, 1))  # [h, j, k]
    g = F.sigmoid(F.linear(z, wg)).reshape(n, n, HEADS, C_HEAD)  # [i, j, h, c]
    a = F.softmax(F.einsum("ijhc,ikhc->ihjk", q, k) + b, -1)  # [i, h, j, k]
    o = g * F.einsum("ihjk,ikhc->ijhc", a, v)  # [i, j, h, c]
    return F.linear(o.reshape(n, n, HEADS * C_HEAD), wo)  # [i, j, c_z]


def triangle_multiplication_outgoing(F, z, p):
    """AF3 supplement Algorithm 12. z: [N, N, c_z] -> [N, N, c_z]."""
    ln_w, ln_b, wa_g, wa_p, wb_g, wb_p, wg, ln2_w, ln2_b, wo = p
    z = F.layer_norm(z, ln_w, ln_b)  # [i, j, c_z]
    a = F.sigmoid(F.linear(z, wa_g)) * F.linear(z, wa_p)  # [i, k, c]
    b = F.sigmoid(F.linear(z, wb_g)) * F.linear(z, wb_p)  # [j, k, c]
    g = F.sigmoid(F.linear(z, wg))  # [i, j, c_z]
    x = F.einsum("ikc,jkc->ijc", a, b)  # [i, j, c]
    return g * F.linear(F.layer_norm(x, ln2_w, ln2_b), wo)  # [i, j, c_z]


def _algorithm(cfg):
    return (
        triangle_attention_starting
        if cfg["task"] == "tri_attn"
        else triangle_multiplication_outgoing
    )


class _OursF:
    def __init__(self):
        from diffsci.core import ops

        self.ops = ops
        self.einsum, self.sigmoid = ops.einsum, ops.sigmoid

    def layer_norm(self, x, w, b):
        return layer_norm(x, (x.shape[-1],), w, b, 1e-5)

    def linear(self, x, w):
        if hasattr(self.ops, "linear"):
            return self.ops.linear(x, w)
        lead = tuple(x.shape[:-1])
        return self.ops.matmul(x.reshape(-1, x.shape[-1]), w.T).reshape(*lead, w.shape[0])

    def softmax(self, x, axis):
        return softmax(x, axis)

    def permute(self, x, axes):
        return self.ops.transpose(x, axes)


class _TorchF:
    def __init__(self):
        import torch

        self.F = torch.nn.functional
        self.einsum, self.sigmoid, self.linear = torch.einsum, torch.sigmoid, self.F.linear

    def layer_norm(self, x, w, b):
        return self.F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)

    def softmax(self, x, axis):
        return self.F.softmax(x, axis)

    def permute(self, x, axes):
        return x.permute(*axes)


class _JaxF:
    def __init__(self):
        import jax
        import jax.numpy as jnp

        self.jax, self.jnp = jax, jnp
        self.einsum, self.sigmoid = jnp.einsum, jax.nn.sigmoid

    def layer_norm(self, x, w, b):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) * self.jax.lax.rsqrt(var + 1e-5) * w + b

    def linear(self, x, w):
        return x @ w.T

    def softmax(self, x, axis):
        return self.jax.nn.softmax(x, axis=axis)

    def permute(self, x, axes):
        return x.transpose(axes)


def make_ours(cfg, data, jit=False):
    from diffsci import core

    F = _OursF()
    z = core.tensor(data["z"])
    params = [core.tensor(p) for p in data["params"]]
    alg = _algorithm(cfg)

    def fn(z, *params):
        return alg(F, z, params)

    if jit:
        fn = core.jit(fn)

    def step():
        return (fn(z, *params),)

    return step


def make_torch(cfg, data):
    import torch

    F = _TorchF()
    z = torch.from_numpy(data["z"])
    params = [torch.from_numpy(p) for p in data["params"]]
    alg = _algorithm(cfg)

    def step():
        with torch.inference_mode():
            return (alg(F, z, params),)

    return step


def make_jax(cfg, data):
    import jax
    import jax.numpy as jnp

    F = _JaxF()
    z = jnp.asarray(data["z"])
    params = [jnp.asarray(p) for p in data["params"]]
    alg = _algorithm(cfg)
    fn = jax.jit(lambda z, params: alg(F, z, params))

    def step():
        return (jax.block_until_ready(fn(z, params)),)

    return step


def _impls():
    return available(
        Impl("ours", "ours", make_ours),
        Impl("ours jit", "ours jit", lambda c, d: make_ours(c, d, jit=True)),
        Impl("torch (inference_mode)", "torch", make_torch),
        Impl("jax.jit", "jax.jit", make_jax),
    )


WORKLOAD = Workload(
    key="W4",
    title="AlphaFold triangle attention (starting node) / multiplication (outgoing), forward",
    cases=_cases,
    case_name=_case_name,
    data=_data,
    impls=_impls,
    reference="torch",
    target=1.3,
    tiny=[{"task": "tri_attn", "n": 6}, {"task": "tri_mul", "n": 6}],
    rtol=1e-4,
    notes=lambda: f"softmax/layer_norm: {norm_source()}",
)
