"""Random tensors from the current device's generator; ``core.set_seed`` makes them repeatable."""

from . import backend as _backend
from . import dtypes as _dt
from .ops.creation import _shape
from .tensor import Tensor


def set_seed(seed):
    """Seed the generators of every loaded backend (CPU always, GPU once selected)."""
    _backend._SEED[0] = seed
    for name in list(_backend._LOADED):
        _backend.get_backend(name).seed(seed)


def _staged(kind, shape, dtype, **params):
    """Inside core.jit a random draw is an equation of the graph (drawn at every call);
    elsewhere None, and the caller draws eagerly."""
    from .jit.random import staged_draw

    return staged_draw(kind, shape, dtype, **params)


def normal(shape, mean=0.0, stddev=1.0, dtype=None):
    """Samples of N(mean, stddev^2) of the given shape (float32 by default)."""
    dtype = _dt.canonical(dtype) or _dt.default_float
    staged = _staged("normal", _shape(shape), dtype)
    if staged is not None:
        return staged * stddev + mean if (stddev != 1.0 or mean != 0.0) else staged
    out = _backend.current().normal(_shape(shape), dtype)
    if stddev != 1.0:
        out = out * out.dtype.type(stddev) if hasattr(out.dtype, "type") else out * stddev
    if mean != 0.0:
        out = out + (out.dtype.type(mean) if hasattr(out.dtype, "type") else mean)
    return Tensor._wrap(out)


def uniform(shape, minval=0.0, maxval=1.0, dtype=None):
    """Samples of U[minval, maxval)."""
    dtype = _dt.canonical(dtype) or _dt.default_float
    staged = _staged("uniform", _shape(shape), dtype, low=float(minval), high=float(maxval))
    if staged is not None:
        return staged
    return Tensor._wrap(_backend.current().uniform(_shape(shape), minval, maxval, dtype))


def randint(low, high, shape, dtype=None):
    """Integers in [low, high)."""
    dtype = _dt.canonical(dtype) or _dt.default_int
    staged = _staged("randint", _shape(shape), dtype, low=int(low), high=int(high))
    if staged is not None:
        return staged
    return Tensor._wrap(_backend.current().randint(low, high, _shape(shape), dtype))


def permutation(n):
    """A random permutation of ``range(n)`` as an int64 tensor."""
    n = int(n)
    staged = _staged("permutation", (n,), _dt.int64)
    if staged is not None:
        return staged
    return Tensor._wrap(_backend.current().permutation(n).astype("int64"))


def bernoulli(shape, p=0.5, dtype=None):
    """1 with probability p, else 0."""
    staged = _staged("uniform", _shape(shape), _dt.float32, low=0.0, high=1.0)
    if staged is not None:
        from . import ops

        return ops.astype(ops.less(staged, p), _dt.canonical(dtype) or _dt.default_float)
    u = _backend.current().uniform(_shape(shape), 0.0, 1.0, _dt.float32)
    return Tensor._wrap((u < p).astype(_dt.canonical(dtype) or _dt.default_float))
