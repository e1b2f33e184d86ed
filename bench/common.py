"""Helpers shared by the workloads: seeded inputs, output conversion, and the core ops that
other parts of the engine are still growing (each has a local fallback written with core ops,
used only until the engine's own version exists; the table says which one ran).

PyTorch and JAX are imported lazily, inside the functions that need them, so that
``python -m bench`` still runs (our rows only) where they are not installed.
"""

import importlib.util
import math

import numpy as np

__all__ = [
    "Adam",
    "adam_source",
    "have",
    "jax_adam",
    "layer_norm",
    "norm_source",
    "randn",
    "softmax",
    "to_numpy",
]


def have(module):
    """True when ``module`` can be imported (without importing it)."""
    return importlib.util.find_spec(module) is not None


def randn(rng, shape, scale=1.0, dtype=np.float32):
    """Seeded N(0, scale^2) samples as a numpy array of ``dtype``."""
    return (rng.standard_normal(shape) * scale).astype(dtype)


def to_numpy(x):
    """A numpy array for a core Tensor, torch tensor, jax array or numpy array."""
    if hasattr(x, "asnumpy"):
        return np.asarray(x.asnumpy())
    if type(x).__module__.startswith("torch"):
        return x.detach().cpu().resolve_conj().numpy()
    return np.asarray(x)


# ---- core ops with fallbacks ------------------------------------------------------------------


def _core_ops():
    from diffsci.core import ops

    return ops


def norm_source():
    """'core' when core.ops has softmax and layer_norm, else 'bench fallback'."""
    ops = _core_ops()
    both = hasattr(ops, "softmax") and hasattr(ops, "layer_norm")
    return "core" if both else "bench fallback"


def softmax(x, axis=-1):
    """core.ops.softmax when it exists, else max-shifted exp / sum with core ops."""
    ops = _core_ops()
    if hasattr(ops, "softmax"):
        return ops.softmax(x, axis)
    e = ops.exp(x - ops.stop_gradient(ops.max(x, axis=axis, keepdims=True)))
    return e / ops.sum(e, axis=axis, keepdims=True)


def layer_norm(x, normalized_shape, weight, bias, eps=1e-5):
    """core.ops.layer_norm when it exists, else mean/var over the trailing axes with core ops."""
    ops = _core_ops()
    if hasattr(ops, "layer_norm"):
        return ops.layer_norm(x, normalized_shape, weight, bias, eps)
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mu = ops.mean(x, axis=axes, keepdims=True)
    xc = x - mu
    var = ops.mean(xc * xc, axis=axes, keepdims=True)
    return xc * ops.rsqrt(var + eps) * weight + bias


def adam_source():
    """'core.nn.Adam' when it exists, else 'bench fallback'."""
    from diffsci.core import nn

    return "core.nn.Adam" if hasattr(nn, "Adam") else "bench fallback"


class _FallbackAdam:
    """Adam (Kingma & Ba 2015, Algorithm 1) with core ops, same formula as torch.optim.Adam:
    ``p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)``."""

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
        from diffsci import core

        self.parameters = list(params)
        self.lr, self.b1, self.b2, self.eps = learning_rate, beta1, beta2, eps
        self.m = [core.zeros_like(p) for p in self.parameters]
        self.v = [core.zeros_like(p) for p in self.parameters]
        self.t = 0

    def __call__(self, grads):
        from diffsci.core import ops

        self.t += 1
        bc1 = 1.0 - self.b1**self.t
        bc2 = math.sqrt(1.0 - self.b2**self.t)
        for i, (p, g) in enumerate(zip(self.parameters, grads, strict=True)):
            self.m[i] = self.b1 * self.m[i] + (1.0 - self.b1) * g
            self.v[i] = self.b2 * self.v[i] + (1.0 - self.b2) * (g * g)
            p.set_data(p - (self.lr / bc1) * self.m[i] / (ops.sqrt(self.v[i]) / bc2 + self.eps))
        return True


def Adam(params, learning_rate=1e-3):
    """core.nn.Adam when it exists (the engine's own optimizer), else the bench fallback."""
    from diffsci.core import nn

    if hasattr(nn, "Adam"):
        return nn.Adam(params, learning_rate=learning_rate)
    return _FallbackAdam(params, learning_rate=learning_rate)


def jax_adam(lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    """(init, update) of Adam for a list of jax arrays, the torch.optim.Adam formula."""
    import jax.numpy as jnp

    def init(params):
        return [jnp.zeros_like(p) for p in params], [jnp.zeros_like(p) for p in params], 0

    def update(params, grads, state):
        m, v, t = state
        t = t + 1
        bc1 = 1.0 - b1**t
        bc2 = jnp.sqrt(1.0 - b2**t)
        m = [b1 * mi + (1.0 - b1) * g for mi, g in zip(m, grads, strict=True)]
        v = [b2 * vi + (1.0 - b2) * g * g for vi, g in zip(v, grads, strict=True)]
        new = [
            p - (lr / bc1) * mi / (jnp.sqrt(vi) / bc2 + eps)
            for p, mi, vi in zip(params, m, v, strict=True)
        ]
        return new, (m, v, t)

    return init, update
