"""In-place updates of eager tensors (MindSpore's ``ops.assign`` / ``ops.assign_add``).

Tensors are values: every op returns a new tensor, which is what autodiff, ``vmap`` and ``jit``
rely on. Memory-bound inference is the exception. A Pairformer block at N = 3072 holds a 4.5 GiB
pair tensor, and a ``z = z + update`` per row block keeps the old and the new pair tensor alive
together, because the caller still references the old one. Protenix's ``inplace_safe`` path
(PyTorch ``add_``) overwrites z instead. These ops give that for eager tensors:

    z = ops.writable(z)                 # z itself, or a private copy when z cannot be written
    for rows in row_views_of(z):        # views share z's memory
        ops.assign_add(rows, update(rows))

The write goes through the buffer: every tensor sharing the memory (views from slicing,
``swapaxes``, ``reshape``) sees it, as with torch's in-place ops. The ops refuse tracers: inside
``grad``, ``jit`` or ``vmap`` a tensor stands for a value that later code may still need, so
mutating it would silently corrupt gradients or compiled graphs. Use them only on tensors
whose old value nothing needs any more.
"""

import numpy as np

from .. import backend as _backend
from ..tensor import Tensor, _is_traced

__all__ = ["assign", "assign_add", "writable"]


def _destination(op, x):
    """The backend array of the eager tensor ``x`` (errors for tracers and read-only buffers)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: the destination must be a core Tensor, got {type(x).__name__}")
    if _is_traced(x):
        raise TypeError(
            f"{op}: cannot write in place into a traced tensor (inside grad, jit or vmap); "
            "use the out-of-place op (x + y)"
        )
    arr = x._value
    if not _can_write(arr):
        raise ValueError(
            f"{op}: the destination of shape {tuple(arr.shape)} is read-only or a broadcast "
            "view (a stride of 0); pass ops.writable(x) instead"
        )
    return arr


def _source(op, arr, value):
    """``value`` as an array on ``arr``'s backend with ``arr``'s dtype, broadcastable to it."""
    if isinstance(value, Tensor):
        if _is_traced(value):
            raise TypeError(f"{op}: the value is a traced tensor (inside grad, jit or vmap)")
        value = value._value
    src = _backend.backend_of(arr).asarray(value)
    try:
        shape = np.broadcast_shapes(tuple(src.shape), tuple(arr.shape))
    except ValueError:
        raise ValueError(
            f"{op}: a value of shape {tuple(src.shape)} does not broadcast to the destination's "
            f"shape {tuple(arr.shape)}"
        ) from None
    if shape != tuple(arr.shape):
        raise ValueError(
            f"{op}: a value of shape {tuple(src.shape)} would grow the destination's shape "
            f"{tuple(arr.shape)}"
        )
    return src if src.dtype == arr.dtype else src.astype(arr.dtype)


def _can_write(arr):
    flags = getattr(arr, "flags", None)
    if flags is not None and not getattr(flags, "writeable", True):
        return False
    # a broadcast view (stride 0 over an axis longer than 1) would write one cell many times
    return all(s != 0 or n <= 1 for s, n in zip(arr.strides, arr.shape, strict=True))


def assign_add(x, value):
    """``x += value`` in x's memory (eager tensors only; see the module docstring).

    Args:
        x: the destination, an eager Tensor whose buffer can be written (``writable``).
        value: a Tensor or array broadcastable to ``x.shape``; cast to ``x.dtype``.

    Returns:
        ``x`` (the same object, its values updated).
    """
    arr = _destination("assign_add", x)
    arr += _source("assign_add", arr, value)
    return x


def assign(x, value):
    """``x[...] = value`` in x's memory (eager tensors only; see the module docstring).

    Args:
        x: the destination, an eager Tensor whose buffer can be written (``writable``).
        value: a Tensor or array broadcastable to ``x.shape``; cast to ``x.dtype``.

    Returns:
        ``x``.
    """
    arr = _destination("assign", x)
    arr[...] = _source("assign", arr, value)
    return x


def writable(x):
    """``x`` when ``assign``/``assign_add`` can write into it, else a private copy: a
    read-only or broadcast buffer (``ops.ones`` may return one) is copied once. Tracers are
    returned as they are (the in-place ops will refuse them)."""
    if not isinstance(x, Tensor) or _is_traced(x) or _can_write(x._value):
        return x
    arr = x._value
    return Tensor(_backend.backend_of(arr).asarray(arr).copy())
