"""CPU backend: numpy arrays, numpy's PCG64 generator, native C loops (or numexpr) for fused
elementwise code."""

import numpy as np

from .base import Backend

# ufuncs core.jit calls that have a threaded native loop (core.backend.cpu_kernels.arith)
_THREADED_UFUNCS = {"add": "add", "subtract": "sub", "multiply": "mul"}


class NumpyBackend(Backend):
    name = "CPU"
    xp = np
    array_type = np.ndarray

    def __init__(self):
        from .host_memory import reuse_freed_memory

        self.reuses_freed_memory = reuse_freed_memory()
        self._rng = np.random.default_rng(0)

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

    def fuse_elementwise(self, kernel):
        """``f(*arrays, out=None)`` for ``kernel`` (core.jit.fusion.FusedKernel): a native C loop
        when fusion chose one (``kernel.native``, see core.backend.cpu_fusion), else a numexpr
        program."""
        if kernel.native:
            from .cpu_fusion import NativeFused

            return NativeFused(kernel)
        import numexpr

        kinds = {
            np.dtype("float32"): float,
            np.dtype("float64"): np.float64,
            np.dtype("bool"): bool,
        }
        program = numexpr.NumExpr(
            kernel.numexpr_src,
            signature=[(n, kinds[d]) for n, d in zip(kernel.names, kernel.in_dtypes)],
        )

        def run(*arrays, out=None):
            return program(*arrays, out=out, ex_uses_vml=False, order="K", casting="safe")

        return run

    def ufunc_kernel(self, ufunc, out_shape, dtype):
        """For ``core.jit``'s codegen: ``f(x, y, out=None)`` computing ``xp.<ufunc>`` on
        several threads (the native arithmetic loop, falling back to numpy wherever that
        declines: one thread, a broadcast it does not cover, an ``out`` that aliases an
        operand's view), for outputs large enough to gain from it; None otherwise."""
        from . import cpu_kernels

        name = _THREADED_UFUNCS.get(ufunc)
        size = int(np.prod(out_shape, dtype=np.int64))
        if name is None or size < cpu_kernels.ARITH_MIN_SIZE or np.dtype(dtype) not in (
            np.float32,
            np.float64,
        ):
            return None
        fallback = getattr(np, ufunc)
        arith = cpu_kernels.arith

        def run(x, y, out=None):
            r = arith(name, x, y, out)
            return fallback(x, y, out=out) if r is None else r

        return run

    def prepare_fused(self, kernels_and_shapes):
        """Compile the native kernels of one graph together: ``[(FusedKernel, in_shapes)]``."""
        from .cpu_fusion import prepare

        native = [(k.compiled(self), shapes) for k, shapes in kernels_and_shapes if k.native]
        if native:
            prepare(native)
