"""Turning op arguments into tensors: weak Python scalars and dtype promotion."""

import numpy as np

from .. import backend as _backend
from .. import dtypes as _dt
from ..prims.elementwise import convert
from ..prims.shape import concatenate, reshape
from ..tensor import Tensor

_SCALARS = (bool, int, float, complex)
_const_cache = {}


def scalar_like(value, like_dtype):
    """A 0-d tensor for Python scalar ``value``, weakly typed: it takes ``like_dtype`` unless
    that would lose its kind (a float scalar with an integer tensor gives float32)."""
    kind = like_dtype.kind
    if isinstance(value, bool):
        dtype = like_dtype
    elif isinstance(value, int):
        dtype = like_dtype if kind != "b" else _dt.default_int
    elif isinstance(value, float):
        dtype = like_dtype if kind in "fc" or like_dtype == _dt.bfloat16 else _dt.default_float
    else:
        dtype = (
            like_dtype
            if kind == "c"
            else _dt.complex_dtype(like_dtype if kind == "f" else _dt.float32)
        )
    # 0.0 == -0.0 (same hash): the sign of a zero is part of the key (1 / (x * -0.0) is -inf)
    key = (value, dtype, type(value), value == 0 and str(value))
    t = _const_cache.get(key)
    if t is None:
        t = Tensor._wrap(np.asarray(value, dtype=dtype))
        if len(_const_cache) < 4096:
            _const_cache[key] = t
    return t


def const(array, like=None):
    """A Tensor from a host numpy array, on ``like``'s device (a tensor; default: the current
    device)."""
    if like is not None and type(like) is Tensor:
        return Tensor._wrap(_backend.backend_of(like._value).asarray(array))
    return Tensor._wrap(_backend.current().asarray(array))


def as_tensor(x, dtype=None):
    """``x`` as a Tensor; a list/tuple holding tensors is stacked (differentiably)."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (list, tuple)) and _holds_tensor(x):
        out = _stacked([as_tensor(e) for e in x])
        dtype = _dt.canonical(dtype)
        return out if dtype is None or dtype == out.dtype else convert(out, dtype=dtype)
    return Tensor(x, dtype=dtype)


def _stacked(ts):
    """Tensors of one shape stacked along a new leading axis, their dtypes promoted (what
    ``ops.stack`` does; written with primitives: this module is below the ops it serves)."""
    shapes = {tuple(t.shape) for t in ts}
    if len(shapes) > 1:
        raise ValueError(f"stack: all shapes must be equal, got {sorted(shapes)}")
    dtype = ts[0].dtype
    for t in ts[1:]:
        dtype = _dt.promote_types(dtype, t.dtype)
    ts = [
        reshape(t if t.dtype == dtype else convert(t, dtype=dtype), shape=(1, *t.shape)) for t in ts
    ]
    return ts[0] if len(ts) == 1 else concatenate(*ts, axis=0)


def _holds_tensor(seq):
    return any(
        isinstance(e, Tensor) or (isinstance(e, (list, tuple)) and _holds_tensor(e)) for e in seq
    )


_float_consts = {}  # (value, dtype) -> 0-d tensor, for the hot `tensor * 0.5` case


def _float_scalar(value, dtype):
    t = _float_consts.get((value, dtype))
    if t is None or value == 0:  # 0.0 and -0.0 share a key; let scalar_like keep the sign
        t = scalar_like(value, dtype)
        if value != 0 and len(_float_consts) < 4096:
            _float_consts[(value, dtype)] = t
    return t


def binary_args(x, y):
    """Both operands as tensors of one dtype (weak scalars adopt the tensor's dtype)."""
    tx, ty = type(x), type(y)
    # fast paths: two concrete tensors of one dtype, or a concrete float tensor and a float
    if tx is Tensor:
        if ty is Tensor:
            if x._value.dtype is y._value.dtype:
                return x, y
        elif ty is float and x._value.dtype.kind == "f":
            return x, _float_scalar(y, x._value.dtype)
    elif tx is float and ty is Tensor and y._value.dtype.kind == "f":
        return _float_scalar(x, y._value.dtype), y
    elif ty is float and isinstance(x, Tensor) and x.dtype.kind == "f":  # tracer * 0.5
        return x, _float_scalar(y, x.dtype)
    elif isinstance(x, Tensor) and isinstance(y, Tensor) and x.dtype == y.dtype:
        return x, y
    if tx in _SCALARS:
        if ty in _SCALARS:
            x = as_tensor(x)
            return x, scalar_like(y, x.dtype)
        y = y if isinstance(y, Tensor) else as_tensor(y)
        s = (
            _float_scalar(x, y.dtype)
            if tx is float and y.dtype.kind == "f"
            else scalar_like(x, y.dtype)
        )
        if s.dtype != y.dtype:
            y = convert(y, dtype=s.dtype)
        return s, y
    if ty in _SCALARS:
        x = x if isinstance(x, Tensor) else as_tensor(x)
        s = (
            _float_scalar(y, x.dtype)
            if ty is float and x.dtype.kind == "f"
            else scalar_like(y, x.dtype)
        )
        if s.dtype != x.dtype:
            x = convert(x, dtype=s.dtype)
        return x, s
    if not isinstance(x, Tensor):
        x = as_tensor(x)
    if not isinstance(y, Tensor):
        y = as_tensor(y)
    dx, dy = x.dtype, y.dtype
    if dx is not dy and dx != dy:
        d = _dt.promote_types(dx, dy)
        if dx != d:
            x = convert(x, dtype=d)
        if dy != d:
            y = convert(y, dtype=d)
    return x, y


def normalize_axes(axis, ndim, name):
    """A sorted tuple of non-negative axes (``None`` means all)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    out = []
    for a in axis:
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"{name}: axis {a} out of range for a tensor of rank {ndim}")
        out.append(a % max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: repeated axis in {axis}")
    return tuple(sorted(out))


def normalize_axis(axis, ndim, name):
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"{name}: axis {axis} out of range for a tensor of rank {ndim}")
    return int(axis) % max(ndim, 1)
