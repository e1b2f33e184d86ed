"""Dtypes of diffsci tensors.

Dtypes are numpy dtype objects, so they compare equal to what numpy and cupy use;
``bfloat16`` comes from ``ml_dtypes``. Promotion follows the rules of MindSpore/JAX, not
numpy's: mixing an integer tensor with a float tensor gives that float dtype (not float64),
and Python scalars are *weak* (``float32_tensor * 2.0`` stays float32).
"""

import ml_dtypes
import numpy as np

bool_ = np.dtype("bool")
int8 = np.dtype("int8")
uint8 = np.dtype("uint8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
float16 = np.dtype("float16")
bfloat16 = np.dtype(ml_dtypes.bfloat16)
float32 = np.dtype("float32")
float64 = np.dtype("float64")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")

default_float = float32
default_int = int64

# MindSpore's other spellings (``from diffsci.core import dtype as mstype``: ``mstype.half`` ...).
half = float16
single = float32
double = float64
float_ = float32
int_ = int64
# MindSpore's annotation type: ``compute_dtype (mstype.dtype)``; isinstance(core.float32, dtype).
dtype = np.dtype


def dtype_to_nptype(type_):
    """The numpy scalar type of a dtype (MindSpore's ``mstype.dtype_to_nptype``)."""
    return canonical(type_).type


def pytype_to_dtype(obj):
    """The dtype of a Python type or numpy dtype (MindSpore's ``mstype.pytype_to_dtype``)."""
    return canonical(obj)


_FLOATS = (float16, bfloat16, float32, float64)
_COMPLEX = (complex64, complex128)
_REAL_OF = {complex64: float32, complex128: float64}
_COMPLEX_OF = {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128}


def is_floating(dtype):
    """True for real floating dtypes (including bfloat16)."""
    return dtype in _FLOATS


def is_complex(dtype):
    return dtype in _COMPLEX


def is_inexact(dtype):
    """True for dtypes that carry derivatives: real floating and complex."""
    return dtype.kind in "fc" or dtype == bfloat16  # bfloat16's numpy kind is 'V'


def real_dtype(dtype):
    """float32 for complex64, float64 for complex128, the dtype itself otherwise."""
    return _REAL_OF.get(dtype, dtype)


def complex_dtype(dtype):
    """The complex dtype that holds values of ``dtype``."""
    return _COMPLEX_OF.get(dtype, dtype) if dtype not in _COMPLEX else dtype


def _float_rank(dtype):
    return {float16: 1, bfloat16: 1, float32: 2, float64: 3}[dtype]


def promote_types(a, b):
    """Result dtype of a binary op between tensors of dtypes ``a`` and ``b``."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    ca, cb = is_complex(a), is_complex(b)
    if ca or cb:
        ra = real_dtype(a) if is_inexact(a) else float32
        rb = real_dtype(b) if is_inexact(b) else float32
        return complex128 if float64 in (ra, rb) else complex64
    fa, fb = is_floating(a), is_floating(b)
    if fa and fb:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if _float_rank(a) >= _float_rank(b) else b
    if fa:
        return a
    if fb:
        return b
    return np.promote_types(a, b)


def canonical(dtype):
    """Turn a user dtype spelling (``'float32'``, ``np.float32``, ``core.float32``) into a dtype."""
    if dtype is None:
        return None
    if dtype is float:
        return default_float
    if dtype is int:
        return default_int
    if dtype is bool:
        return bool_
    if dtype is complex:
        return complex64
    if isinstance(dtype, str) and dtype == "bfloat16":
        return bfloat16
    return np.dtype(dtype)


def dtype_of_python_scalar(value):
    """Default dtype of a Python scalar that is not combined with a tensor."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return default_int
    if isinstance(value, float):
        return default_float
    if isinstance(value, complex):
        return complex64
    raise TypeError(f"not a Python scalar: {value!r}")
