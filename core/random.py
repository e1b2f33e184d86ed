"""Random tensors from the current device's generator; ``core.set_seed`` makes them repeatable."""

from . import backend as _backend
from . import dtypes as _dt
from .ops.creation import _shape
from .tensor import Tensor


def set_seed(seed):
    """Seed the generators of every loaded backend (CPU always, GPU once selected)."""
    for name in list(_backend._LOADED):
        _backend.get_backend(name).seed(seed)


def normal(shape, mean=0.0, stddev=1.0, dtype=None):
    """Samples of N(mean, stddev^2) of the given shape (float32 by default)."""
    dtype = _dt.canonical(dtype) or _dt.default_float
    out = _backend.current().normal(_shape(shape), dtype)
    if stddev != 1.0:
        out = out * out.dtype.type(stddev) if hasattr(out.dtype, "type") else out * stddev
    if mean != 0.0:
        out = out + (out.dtype.type(mean) if hasattr(out.dtype, "type") else mean)
    return Tensor._wrap(out)


def uniform(shape, minval=0.0, maxval=1.0, dtype=None):
    """Samples of U[minval, maxval)."""
    dtype = _dt.canonical(dtype) or _dt.default_float
    return Tensor._wrap(_backend.current().uniform(_shape(shape), minval, maxval, dtype))


def randint(low, high, shape, dtype=None):
    """Integers in [low, high)."""
    dtype = _dt.canonical(dtype) or _dt.default_int
    return Tensor._wrap(_backend.current().randint(low, high, _shape(shape), dtype))


def permutation(n):
    """A random permutation of ``range(n)`` as an int64 tensor."""
    return Tensor._wrap(_backend.current().permutation(n).astype("int64"))


def bernoulli(shape, p=0.5, dtype=None):
    """1 with probability p, else 0."""
    u = _backend.current().uniform(_shape(shape), 0.0, 1.0, _dt.float32)
    return Tensor._wrap((u < p).astype(_dt.canonical(dtype) or _dt.default_float))
