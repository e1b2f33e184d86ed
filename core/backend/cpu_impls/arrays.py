"""CPU kernels for the array primitives: shape, linalg, fft (see ``core.backend.kernels``).

- ``reshape`` and ``matmul``: a transposed view is copied in tiles (``cpu_layout``) instead of
  numpy's element order, which is many times slower for large arrays (einsum's operands,
  gradients of broadcasts); on several threads, large products run as panels on our pool over
  one-thread BLAS calls (``cpu_gemm``).
- ``real``, ``imag``: of a permuted complex array, copied in tiles (``cpu_layout``) too.
- ``triangular_solve``: LAPACK's triangular solver through scipy where it beats the
  reference's batched LU solve (large matrices, few of them).
- ``fft``, ``rfft``, ``irfft``: scipy.fft, which keeps float32/complex64 in single precision,
  runs 3-5x faster than numpy.fft and splits the work over ``core.get_num_threads()``.

Where a kernel only swaps a routine inside the reference implementation (the copy of
``matmul``, the FFT module), it runs the reference against :class:`_Namespace`, numpy with
that routine replaced, so the primitive's code is written once.
"""

import numpy as np

from .. import cpu_gemm, cpu_layout, kernels
from ..linalg import lapack_call
from ..threads import get_num_threads


class _Namespace:
    """numpy with some of its attributes replaced (keyword arguments)."""

    def __init__(self, **replaced):
        self.__dict__.update(replaced)

    def __getattr__(self, name):  # the first read of a numpy name caches it on the instance
        value = getattr(np, name)
        setattr(self, name, value)
        return value


# ---- layout: tiled copies of transposed views --------------------------------------------------
@kernels.register("reshape")
def _reshape(reference):
    def impl(xp, x, shape):
        if xp is np and x.size >= cpu_layout.MIN_SIZE and not x.flags.c_contiguous:
            try:
                return np.reshape(x, shape, copy=False)  # a view where the strides allow one
            except ValueError:
                # numpy would copy a transposed view in its slow order (einsum's operands)
                return cpu_layout.ascontiguousarray(x).reshape(shape)
            except TypeError:  # numpy < 2.1: no copy argument
                pass
        return reference(xp, x, shape)

    return impl


_TILED_COPY = _Namespace(ascontiguousarray=cpu_layout.ascontiguousarray)


def _complex_part(part):
    # the real or imaginary part of a permuted complex array (an einsum's weight gradient
    # comes back as a transposed view) copied in tiles: numpy's copy walks it 5x slower
    @kernels.register(part)
    def factory(reference):
        def impl(xp, x):
            if (
                xp is np
                and x.dtype.kind == "c"
                and x.size >= cpu_layout.MIN_SIZE
                and not x.flags.c_contiguous
            ):
                # a part of a complex array is never contiguous: this is always a copy
                return cpu_layout.ascontiguousarray(getattr(np, part)(x))
            return reference(xp, x)

        return impl


_complex_part("real")
_complex_part("imag")


@kernels.register("matmul")
def _matmul(reference):
    # several threads: panels of the product on our pool over one-thread BLAS (cpu_gemm: no
    # spinning BLAS threads left to starve the FFTs and kernels that follow); otherwise the
    # reference, which copies operands BLAS cannot read (neither rows nor columns contiguous)
    def impl(xp, x, y):
        if xp is np:
            out = cpu_gemm.matmul(x, y)
            if out is not None:
                return out
        return reference(_TILED_COPY if xp is np else xp, x, y)

    return impl


# ---- triangular solve --------------------------------------------------------------------------
# scipy.linalg batches triangular solves with a Python loop (~20 us a matrix); for many small
# matrices the reference's one batched LU solve in C is faster, although it ignores the
# triangular structure.
_TRI_LOOP_MIN_N = 32
_TRI_LOOP_MAX_BATCH = 4


@kernels.register("triangular_solve")
def _triangular_solve(reference):
    def impl(xp, a, b, lower):
        if xp is np:
            nbatch = int(np.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2])))
            if a.shape[-1] >= _TRI_LOOP_MIN_N or nbatch <= _TRI_LOOP_MAX_BATCH:
                import scipy.linalg

                def solve(a_, b_):  # reads only the `lower` (or upper) triangle of a_
                    return scipy.linalg.solve_triangular(a_, b_, lower=lower, check_finite=False)

                out = lapack_call("triangular_solve", solve, a, b)
                return out if out.dtype == a.dtype else out.astype(a.dtype)
        return reference(xp, a, b, lower)

    return impl


# ---- FFT ---------------------------------------------------------------------------------------
class _ScipyFFT:
    """scipy.fft's n-d transforms with ``workers=core.get_num_threads()``, read at each call
    (as BLAS follows the same setting for matmul; see core.backend.threads)."""

    def __getattr__(self, name):
        import scipy.fft

        def call(*args, **kwargs):
            return getattr(scipy.fft, name)(*args, workers=get_num_threads(), **kwargs)

        setattr(self, name, call)
        return call


_SCIPY_FFT = _Namespace(fft=_ScipyFFT())


def _with_scipy_fft(reference):
    def impl(xp, *args, **params):
        return reference(_SCIPY_FFT if xp is np else xp, *args, **params)

    return impl


for _name in ("fft", "rfft", "irfft"):
    kernels.register(_name)(_with_scipy_fft)
