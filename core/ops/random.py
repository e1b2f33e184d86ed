"""MindSpore's functional random ops: ``ops.rand randn randint *_like normal uniform
standard_normal randperm``, and below them the draws from the device's generator that
``core.random`` exports (``draw_normal`` ...: seeded by ``core.set_seed``; under ``core.jit``
every call draws anew, under ``core.recompute`` the re-run replays the forward's draws).

``seed=`` (MindSpore's per-op seed) gives a repeatable sequence of eager draws from a generator
of its own, as in MindSpore: the n-th call with ``seed=s`` returns the same values in every run.
Inside ``core.jit`` the graph's draws come from the device's generator instead (a per-op seed
would otherwise bake one draw into the compiled graph).
"""

import numpy as np

from .. import dtypes as _dt
from .. import random_state
from ..primitive import trace_stack
from ..tensor import Tensor
from .creation import _const, _shape, _shape_and_dtype

# ---- draws from the device's generator (core.random) ------------------------------------------


def draw_normal(shape, mean=0.0, stddev=1.0, dtype=None):
    """Samples of N(mean, stddev^2) of the given shape (float32 by default)."""
    dtype = _dt.canonical(dtype) or _dt.default_float
    staged = random_state.staged_draw("normal", _shape(shape), dtype)
    if staged is not None:
        return staged * stddev + mean if (stddev != 1.0 or mean != 0.0) else staged
    out = random_state.eager_draw("normal", _shape(shape), dtype)
    if stddev != 1.0:
        out = out * out.dtype.type(stddev) if hasattr(out.dtype, "type") else out * stddev
    if mean != 0.0:
        out = out + (out.dtype.type(mean) if hasattr(out.dtype, "type") else mean)
    return Tensor._wrap(out)


def _draw(kind, shape, dtype, **params):
    staged = random_state.staged_draw(kind, shape, dtype, **params)
    if staged is not None:
        return staged
    return Tensor._wrap(random_state.eager_draw(kind, shape, dtype, **params))


def draw_uniform(shape, minval=0.0, maxval=1.0, dtype=None):
    """Samples of U[minval, maxval)."""
    dtype = _dt.canonical(dtype) or _dt.default_float
    return _draw("uniform", _shape(shape), dtype, low=float(minval), high=float(maxval))


def draw_randint(low, high, shape, dtype=None):
    """Integers in [low, high)."""
    dtype = _dt.canonical(dtype) or _dt.default_int
    return _draw("randint", _shape(shape), dtype, low=int(low), high=int(high))


def draw_permutation(n):
    """A random permutation of ``range(n)`` as an int64 tensor."""
    return _draw("permutation", (int(n),), _dt.int64)


def draw_bernoulli(shape, p=0.5, dtype=None):
    """1 with probability p, else 0 (float32 by default)."""
    dtype = _dt.canonical(dtype) or _dt.default_float
    staged = random_state.staged_draw("uniform", _shape(shape), _dt.float32, low=0.0, high=1.0)
    if staged is not None:
        from .elementwise import astype, less

        return astype(less(staged, p), dtype)
    u = random_state.eager_draw("uniform", _shape(shape), _dt.float32, low=0.0, high=1.0)
    return Tensor._wrap((u < p).astype(dtype))


# ---- MindSpore's functional random ops -------------------------------------------------------

_SEEDED = {}  # (op, seed) -> numpy Generator: one repeatable stream per op and seed


def _seeded(op, seed):
    """The numpy Generator of ``op`` for ``seed``, or None when the device generator draws."""
    if seed is None or trace_stack():
        return None
    key = (op, int(seed))
    if key not in _SEEDED:
        _SEEDED[key] = np.random.default_rng(int(seed))
    return _SEEDED[key]


def _float(dtype):
    dtype = _dt.canonical(dtype) or _dt.default_float
    if not _dt.is_floating(dtype):
        raise TypeError(f"random op: dtype must be floating, got {dtype}")
    return dtype


def uniform(shape, minval=0.0, maxval=1.0, seed=None, dtype=None):
    """Samples of U[minval, maxval) of ``shape`` (float32 by default).

    Args:
        shape: tuple of ints.
        minval, maxval: Python numbers (the bounds).
        seed: MindSpore's per-op seed (see the module docstring).
        dtype: a floating dtype.
    """
    dtype = _float(dtype)
    gen = _seeded("uniform", seed)
    if gen is None:
        return draw_uniform(shape, float(minval), float(maxval), dtype=dtype)
    values = gen.uniform(
        float(minval), float(maxval), _shape_and_dtype("uniform", (shape,), None)[0]
    )
    return _const(values.astype(dtype))


def normal(shape, mean=0.0, stddev=1.0, seed=None, dtype=None):
    """Samples of N(mean, stddev^2) of ``shape`` (float32 by default); ``mean`` and ``stddev``
    may be tensors that broadcast against ``shape`` (then the result is differentiable in
    them)."""
    if isinstance(mean, Tensor) or isinstance(stddev, Tensor):
        dtype = dtype or next(t.dtype for t in (mean, stddev) if isinstance(t, Tensor))
        return normal(shape, seed=seed, dtype=dtype) * stddev + mean
    dtype = _float(dtype)
    gen = _seeded("normal", seed)
    if gen is None:
        return draw_normal(shape, float(mean), float(stddev), dtype=dtype)
    values = gen.normal(float(mean), float(stddev), _shape_and_dtype("normal", (shape,), None)[0])
    return _const(values.astype(dtype))


def standard_normal(shape, seed=None):
    """Samples of N(0, 1), float32."""
    return normal(shape, seed=seed)


def rand(*size, dtype=None, seed=None):
    """U[0, 1) samples of shape ``size`` (``rand(2, 3)`` or ``rand((2, 3))``)."""
    shape, dtype = _shape_and_dtype("rand", size, dtype)
    return uniform(shape, 0.0, 1.0, seed=seed, dtype=dtype)


def randn(*size, dtype=None, seed=None):
    """N(0, 1) samples of shape ``size``."""
    shape, dtype = _shape_and_dtype("randn", size, dtype)
    return normal(shape, seed=seed, dtype=dtype)


def randint(low, high, size, seed=None, *, dtype=None):
    """Integers in [low, high) of shape ``size`` (int64 by default)."""
    shape = _shape_and_dtype("randint", (size,), None)[0]
    if int(high) <= int(low):
        raise ValueError(f"randint: high ({high}) must be greater than low ({low})")
    dtype = _dt.canonical(dtype) or _dt.default_int
    gen = _seeded("randint", seed)
    if gen is None:
        return draw_randint(int(low), int(high), shape, dtype=dtype)
    return _const(gen.integers(int(low), int(high), shape).astype(dtype))


def rand_like(input, seed=None, *, dtype=None):
    """U[0, 1) samples of ``input``'s shape (and dtype, unless ``dtype`` is given)."""
    return uniform(tuple(input.shape), seed=seed, dtype=dtype or input.dtype)


def randn_like(input, seed=None, *, dtype=None):
    """N(0, 1) samples of ``input``'s shape and dtype."""
    return normal(tuple(input.shape), seed=seed, dtype=dtype or input.dtype)


def randint_like(input, low, high, seed=None, *, dtype=None):
    """Integers in [low, high) of ``input``'s shape (``input``'s dtype unless given)."""
    return randint(low, high, tuple(input.shape), seed, dtype=dtype or input.dtype)


def randperm(n, seed=0, offset=0, dtype=None):
    """A random permutation of ``range(n)`` (int64 by default). As in MindSpore, ``seed=0``
    means unseeded (the device's generator); another seed gives a repeatable stream, and
    ``offset`` skips that many permutations of it."""
    n = int(n)
    fresh = bool(seed) and (("randperm", int(offset)), int(seed)) not in _SEEDED
    gen = _seeded(("randperm", int(offset)), seed or None)
    if gen is None:
        out = draw_permutation(n)
    else:
        for _ in range(int(offset) if fresh else 0):
            gen.permutation(n)
        out = _const(gen.permutation(n).astype(np.int64))
    dtype = _dt.canonical(dtype)
    return out if dtype is None or dtype == out.dtype else out.astype(dtype)
