"""Tensor creation on the current device: zeros ones full arange linspace eye and *_like."""

import numpy as np

from .. import backend as _backend
from .. import dtypes as _dt
from ..tensor import Tensor
from ._convert import const as _const


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def _is_dtype(v):
    """True for a dtype spelling (``core.float32``, ``np.float32``, ``float``, ``'int32'``)."""
    if isinstance(v, (np.dtype, str)):
        return True
    return isinstance(v, type) and issubclass(v, (np.generic, bool, int, float, complex))


def _shape_and_dtype(op, shape, dtype):
    """Split ``zeros(2, 3, dtype)`` / ``zeros((2, 3), dtype)`` (MindSpore passes the dtype
    positionally) into the shape tuple and the dtype."""
    if shape and _is_dtype(shape[-1]):
        if dtype is not None:
            raise TypeError(f"{op}: dtype given twice ({shape[-1]!r} and dtype={dtype!r})")
        shape, dtype = shape[:-1], shape[-1]
    if not shape:
        raise TypeError(f"{op}: missing the shape")
    return _shape(shape), dtype


def _backend_for(like):
    if like is not None and type(like) is Tensor:
        return _backend.backend_of(like._value)
    return _backend.current()


def tensor(data, dtype=None):
    """A new Tensor from nested lists, scalars or arrays (float32 for Python floats); a list of
    tensors is stacked, so it stays differentiable."""
    from ._convert import as_tensor

    if isinstance(data, (list, tuple)):
        return as_tensor(data, dtype)
    return Tensor(data, dtype=dtype)


def zeros(*shape, dtype=None):
    """Zeros of ``shape`` (``zeros(2, 3)``, ``zeros((2, 3))``, ``zeros((2, 3), core.int32)``);
    float32 by default."""
    shape, dtype = _shape_and_dtype("zeros", shape, dtype)
    b = _backend.current()
    return Tensor._wrap(b.xp.zeros(shape, dtype=_dt.canonical(dtype) or _dt.default_float))


def ones(*shape, dtype=None):
    """Ones of ``shape``; the dtype may be positional, as in MindSpore (``ones(5, float32)``)."""
    shape, dtype = _shape_and_dtype("ones", shape, dtype)
    b = _backend.current()
    return Tensor._wrap(b.xp.ones(shape, dtype=_dt.canonical(dtype) or _dt.default_float))


def full(shape, fill_value, dtype=None):
    if isinstance(fill_value, Tensor):  # a broadcast: differentiable in the fill value
        from .elementwise import astype
        from .shape import broadcast_to

        return broadcast_to(astype(fill_value, dtype or fill_value.dtype), _shape(shape))
    b = _backend.current()
    if dtype is None:
        dtype = (
            _dt.dtype_of_python_scalar(fill_value)
            if isinstance(fill_value, (bool, int, float, complex))
            else None
        )
    return Tensor._wrap(b.xp.full(_shape(shape), fill_value, dtype=_dt.canonical(dtype)))


def _like(x, fill, dtype):
    dtype = _dt.canonical(dtype) or x.dtype
    b = _backend_for(x)
    return Tensor._wrap(b.xp.full(tuple(x.shape), fill, dtype=dtype))


def zeros_like(x, dtype=None):
    return _like(x, 0, dtype)


def ones_like(x, dtype=None):
    return _like(x, 1, dtype)


def full_like(x, fill_value, dtype=None):
    return _like(x, fill_value, dtype)


def arange(start, stop=None, step=1, dtype=None):
    """Evenly spaced values in [start, stop); int64 for integer arguments, else float32."""
    if stop is None:
        start, stop = 0, start
    if any(isinstance(v, Tensor) for v in (start, stop, step)):
        return _arange_of_tensors(start, stop, step, dtype)
    if dtype is None:
        dtype = (
            _dt.default_int
            if all(isinstance(v, (int, np.integer)) for v in (start, stop, step))
            else _dt.default_float
        )
    b = _backend.current()
    return Tensor._wrap(b.xp.arange(start, stop, step, dtype=_dt.canonical(dtype)))


def _arange_of_tensors(start, stop, step, dtype):
    """``start + i * step``: differentiable in tensor ``start`` and ``step`` (their values must
    be concrete, since they set the length; ``stop`` only does that)."""
    values = [v.item() if isinstance(v, Tensor) else v for v in (start, stop, step)]
    if dtype is None and all(isinstance(v, int) for v in values):
        dtype = _dt.default_int
    dtype = _dt.canonical(dtype) or _inexact_dtype_of(start, stop, step)
    if not _dt.is_inexact(dtype):  # integers carry no derivative
        return arange(*values, dtype=dtype)
    n = len(np.arange(*values))
    from .elementwise import astype

    like = start if isinstance(start, Tensor) else step
    i = _const(np.arange(n, dtype=dtype), like)
    return astype(start, dtype) + i * astype(step, dtype)


def linspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` (excluded unless ``endpoint``);
    float32 by default. Tensor endpoints (of shapes that broadcast) give a result of shape
    ``[num, *shape]`` (the new axis at ``axis``) that is differentiable in them. The default
    dtype is that of floating tensor or numpy endpoints, else float32."""
    if isinstance(start, Tensor) or isinstance(stop, Tensor):
        return _linspace_of_tensors(start, stop, int(num), endpoint, dtype, axis)
    b = _backend.current()
    return Tensor._wrap(
        b.xp.linspace(
            start,
            stop,
            num,
            endpoint=endpoint,
            dtype=_dt.canonical(dtype) or _inexact_dtype_of(start, stop),
            axis=axis,
        )
    )


def _inexact_dtype_of(*values):
    """The dtype of the first floating tensor or numpy value among ``values`` (float32 when
    none: Python numbers are weak)."""
    for v in values:
        dtype = getattr(v, "dtype", None)
        if dtype is not None and _dt.is_inexact(np.dtype(dtype)):
            return np.dtype(dtype)
    return _dt.default_float


def _linspace_of_tensors(start, stop, num, endpoint, dtype, axis):
    """numpy's formula with core ops: ``start + i * (stop - start) / div``, the last value
    exactly ``stop`` when ``endpoint``."""
    from ._convert import binary_args
    from .elementwise import astype, floor
    from .shape import concat, expand_dims, moveaxis

    dtype = _dt.canonical(dtype)
    work = _inexact_dtype_of(start, stop) if dtype is None or not _dt.is_inexact(dtype) else dtype
    start, stop = binary_args(start, stop)
    start, stop = astype(start, work), astype(stop, work)
    if start.shape != stop.shape:
        start, stop = start + stop * 0.0, stop + start * 0.0  # broadcast, keeping derivatives
    div = num - 1 if endpoint else num
    i = _const(np.arange(num, dtype=work).reshape((num,) + (1,) * start.ndim), start)
    first, last = expand_dims(start, 0), expand_dims(stop, 0)
    y = first + i * ((last - first) / div) if div > 0 else first + i * (last - first)
    if endpoint and num > 1:
        y = concat([y[:-1], last], axis=0)
    if dtype is not None and not _dt.is_inexact(dtype):
        y = astype(floor(y), dtype)  # numpy floors for integer dtypes
    return moveaxis(y, 0, axis) if axis != 0 else y


def eye(n, m=None, k=0, dtype=None):
    """``[n, m]`` identity (ones on diagonal ``k``); ``eye(n, m, dtype)`` as in MindSpore's
    ``ops.eye(n, m, t)``, whose third argument is the dtype."""
    if _is_dtype(k):
        if dtype is not None:
            raise TypeError(f"eye: dtype given twice ({k!r} and dtype={dtype!r})")
        k, dtype = 0, k
    if _is_dtype(m):
        m, dtype = None, m
    b = _backend.current()
    return Tensor._wrap(b.xp.eye(n, m, k, dtype=_dt.canonical(dtype) or _dt.default_float))


def one_hot_vector(i, n, dtype):
    """The i-th standard basis vector of length n."""
    v = np.zeros((n,), dtype=dtype)
    v[i] = 1
    return _const(v)
