"""CPU backend: numpy arrays, numpy's PCG64 generator, numexpr for fused elementwise code."""

import numpy as np

from .base import Backend


class NumpyBackend(Backend):
    name = "CPU"
    xp = np
    array_type = np.ndarray

    def __init__(self):
        self._rng = np.random.default_rng(0)
        self._fused_cache = {}

    def asarray(self, data, dtype=None):
        return np.asarray(data, dtype=dtype)

    def to_numpy(self, array):
        return array

    def seed(self, seed):
        self._rng = np.random.default_rng(seed)

    def normal(self, shape, dtype):
        if np.dtype(dtype).itemsize <= 4 and np.dtype(dtype) in (np.float32,):
            return self._rng.standard_normal(shape, dtype=np.float32)
        return self._rng.standard_normal(shape).astype(dtype, copy=False)

    def uniform(self, shape, low, high, dtype):
        if np.dtype(dtype) == np.float32:
            out = self._rng.random(shape, dtype=np.float32)
        else:
            out = self._rng.random(shape).astype(dtype, copy=False)
        if low != 0.0 or high != 1.0:
            out = out * np.asarray(high - low, dtype=out.dtype) + np.asarray(low, dtype=out.dtype)
        return out

    def randint(self, low, high, shape, dtype):
        return self._rng.integers(low, high, size=shape, dtype=dtype)

    def permutation(self, n):
        return self._rng.permutation(n)

    def fuse_elementwise(self, expression, names):
        key = (expression, tuple(names))
        fn = self._fused_cache.get(key)
        if fn is None:
            import numexpr

            def fn(*arrays, _expr=expression, _names=tuple(names)):
                return numexpr.evaluate(_expr, local_dict=dict(zip(_names, arrays)))

            self._fused_cache[key] = fn
        return fn
