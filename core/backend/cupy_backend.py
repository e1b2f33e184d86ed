"""GPU backend: cupy arrays; imported only when ``core.set_device("GPU")`` asks for it."""

import numpy as np

from .base import Backend


class CupyBackend(Backend):
    name = "GPU"
    fuses_everything = True  # one ElementwiseKernel launch instead of one per operation

    def __init__(self):
        try:
            import cupy
        except ImportError as err:
            raise RuntimeError(
                "core.set_device('GPU') needs cupy: install the wheel matching your CUDA, "
                "e.g. `pip install cupy-cuda12x`"
            ) from err
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as err:  # the CUDA runtime reports a missing driver or device
            raise RuntimeError(f"core.set_device('GPU'): cupy found no usable GPU ({err})") from err
        if count == 0:
            raise RuntimeError("core.set_device('GPU'): cupy is installed but CUDA reports no GPU")
        self.xp = cupy
        self.array_type = cupy.ndarray
        self._rng = cupy.random.default_rng(0)

    def asarray(self, data, dtype=None):
        return self.xp.asarray(data, dtype=dtype)

    def to_numpy(self, array):
        return self.xp.asnumpy(array)

    def seed(self, seed):
        self._rng = self.xp.random.default_rng(seed)

    def normal(self, shape, dtype):
        return self._rng.standard_normal(shape, dtype=np.float64).astype(dtype, copy=False)

    def uniform(self, shape, low, high, dtype):
        out = self._rng.random(shape, dtype=np.float64) * (high - low) + low
        return out.astype(dtype, copy=False)

    def randint(self, low, high, shape, dtype):
        return self._rng.integers(low, high, size=shape).astype(dtype)

    def permutation(self, n):
        return self._rng.permutation(n)

    def fuse_elementwise(self, kernel):
        """A cupy ElementwiseKernel for ``kernel`` (core.jit.fusion.FusedKernel)."""
        cp = self.xp
        ctype = {
            np.dtype("float32"): "float32",
            np.dtype("float64"): "float64",
            np.dtype("bool"): "bool",
        }
        in_params = ", ".join(f"{ctype[d]} {n}" for n, d in zip(kernel.names, kernel.in_dtypes))
        out_params = f"{ctype[np.dtype(kernel.out_dtype)]} out"
        elementwise = cp.ElementwiseKernel(
            in_params, out_params, f"out = {kernel.c_src};", "diffsci_fused"
        )

        def run(*arrays, out=None):
            return elementwise(*arrays, out) if out is not None else elementwise(*arrays)

        return run
