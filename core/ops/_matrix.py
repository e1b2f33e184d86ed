"""Helpers of the matrix functions in ``linalg.py`` and ``decomp.py`` (and of their derivative
rules): argument checks, the dtype LAPACK computes in, matrix transposes."""

from .. import dtypes as _dt
from ._convert import as_tensor
from .elementwise import astype, conj
from .shape import swapaxes


def matrix_arg(x, name, square=True):
    """``x`` as a float/complex tensor [..., m, n] (square matrices when ``square``), and the
    dtype to cast results back to (LAPACK has no half precision: float16/bfloat16 compute in
    float32 and return in their own dtype; integers and bools compute and return in float32)."""
    x = as_tensor(x)
    if square and (x.ndim < 2 or x.shape[-1] != x.shape[-2]):
        raise ValueError(
            f"{name}: expected a square matrix or a batch of them [..., n, n], got shape {tuple(x.shape)}"
        )
    if x.ndim < 2:
        raise ValueError(
            f"{name}: expected a matrix or a batch of them [..., m, n], got shape {tuple(x.shape)}"
        )
    if x.dtype in (_dt.float32, _dt.float64, _dt.complex64, _dt.complex128):
        return x, None
    if _dt.is_floating(x.dtype):
        return astype(x, _dt.float32), x.dtype
    if x.dtype.kind in "biu":
        return astype(x, _dt.float32), None
    raise TypeError(f"{name}: unsupported dtype {x.dtype} (shape {tuple(x.shape)})")


def cast_back(x, dtype):
    """``x`` in ``dtype`` (the second value of :func:`matrix_arg`; None keeps x's dtype)."""
    return x if dtype is None else astype(x, dtype)


def mT(x):
    """[..., m, n] -> [..., n, m]: the transposed matrices."""
    return swapaxes(x, -1, -2)


def mH(x):
    """[..., m, n] -> [..., n, m]: the conjugate-transposed matrices (``mT`` for real x)."""
    return conj(mT(x)) if _dt.is_complex(x.dtype) else mT(x)
