"""``core.numpy``: MindSpore's ``mindspore.numpy`` (numpy's names and signatures over tensors).

    from core import numpy as mnp
    x = mnp.linspace(0.0, 1.0, 5); gx, gy = mnp.meshgrid(x, x)
    r = mnp.sqrt(gx ** 2 + gy ** 2); mnp.where(r < 1.0, r, mnp.zeros_like(r))

Every function is a thin layer over ``core.ops``, so it is differentiable, batches under
``vmap`` and compiles under ``jit``. Functions whose numpy signature equals the op's are the op
itself (the ``_SAME_AS_OPS`` table, resolved on first use); the others adapt numpy's arguments
(``sum(a, axis, dtype, keepdims)``, ``split`` into N sections, ``mnp.zeros`` as float32).
Results are tensors; creation functions default to float32 as MindSpore's do.
"""

import builtins as _builtins
import itertools as _itertools

import numpy as _np

from . import ops as _ops
from .dtypes import bool_ as bool_
from .dtypes import complex64 as complex64
from .dtypes import complex128 as complex128
from .dtypes import float16 as float16
from .dtypes import float32 as float32
from .dtypes import float64 as float64
from .dtypes import int8 as int8
from .dtypes import int16 as int16
from .dtypes import int32 as int32
from .dtypes import int64 as int64
from .dtypes import uint8 as uint8
from .ops._convert import as_tensor as _as_tensor
from .tensor import Tensor

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
newaxis = None

# numpy name -> core.ops name, for functions whose arguments are numpy's already.
_SAME_AS_OPS = {
    **{
        n: n
        for n in (
            "abs arccos arccosh arcsin arcsinh arctan arctan2 arctanh ceil cos cosh deg2rad exp "
            "exp2 expm1 floor isfinite isnan log log10 log1p log2 logaddexp logaddexp2 maximum "
            "minimum rad2deg reciprocal sign sin sinh sqrt square tan tanh equal not_equal less "
            "less_equal greater greater_equal logical_and logical_or logical_not logical_xor "
            "floor_divide matmul einsum outer inner dot tensordot moveaxis swapaxes "
            "expand_dims flip roll tile broadcast_to stack where cumprod"
        ).split()
    },
    "absolute": "abs",
    "add": "add",
    "subtract": "sub",
    "multiply": "mul",
    "divide": "div",
    "true_divide": "div",
    "power": "pow",
    "negative": "neg",
    "remainder": "mod",
    "mod": "mod",
    "concatenate": "concat",
}


def __getattr__(name):
    """The ops of ``_SAME_AS_OPS`` (resolved here so the table never goes stale)."""
    if name in _SAME_AS_OPS:
        return getattr(_ops, _SAME_AS_OPS[name])
    raise AttributeError(f"module 'core.numpy' has no attribute {name!r}")


def _no_out(name, out):
    if out is not None:
        raise TypeError(f"core.numpy.{name}: out= is not supported (tensors are immutable)")


# ---- creation ------------------------------------------------------------------------------------
def array(obj, dtype=None, copy=True, ndmin=0):
    """A tensor from nested lists, scalars, numpy arrays or tensors (float32 for Python floats)."""
    del copy  # tensors are immutable: a copy and a view cannot be told apart
    t = _ops.astype(obj, dtype) if isinstance(obj, Tensor) and dtype else _as_tensor(obj, dtype)
    while t.ndim < ndmin:
        t = _ops.expand_dims(t, 0)
    return t


def asarray(a, dtype=None):
    return array(a, dtype=dtype)


def zeros(shape, dtype=float32):
    return _ops.zeros(shape, dtype=dtype)


def ones(shape, dtype=float32):
    return _ops.ones(shape, dtype=dtype)


def empty(shape, dtype=float32):
    """Zeros (an uninitialized tensor has no use in a functional engine)."""
    return _ops.zeros(shape, dtype=dtype)


def full(shape, fill_value, dtype=None):
    if isinstance(fill_value, Tensor):
        return _ops.broadcast_to(fill_value if dtype is None else fill_value.astype(dtype), shape)
    return _ops.full(shape, fill_value, dtype=dtype)


def zeros_like(a, dtype=None):
    return _ops.zeros_like(a, dtype=dtype)


def ones_like(a, dtype=None):
    return _ops.ones_like(a, dtype=dtype)


def empty_like(a, dtype=None):
    return _ops.zeros_like(a, dtype=dtype)


def full_like(a, fill_value, dtype=None):
    return _ops.full_like(a, fill_value, dtype=dtype)


def eye(N, M=None, k=0, dtype=float32):
    return _ops.eye(N, M, k, dtype=dtype)


def identity(n, dtype=float32):
    return _ops.eye(n, dtype=dtype)


def arange(start, stop=None, step=None, dtype=None):
    """Values in [start, stop) by ``step``; int64 for integer arguments, else float32."""
    return _ops.arange(start, stop, 1 if step is None else step, dtype=dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` (``core.ops.linspace``; the new
    axis at ``axis``); with ``retstep`` also the spacing."""
    num = int(num)
    out = _ops.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    if axis != 0:
        out = _ops.moveaxis(out, 0, axis)
    if not retstep:
        return out
    div = (num - 1) if endpoint else num
    return out, ((stop - start) / div if div > 0 else _np.nan)


def meshgrid(*xi, sparse=False, indexing="xy"):
    """Coordinate grids from 1-D tensors (``indexing='xy'``: the first two outputs are
    ``[len(x1), len(x0), ...]``, as in numpy)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [_ops.reshape(_as_tensor(x), (-1,)) for x in xi]
    n = len(xs)
    shape = [x.shape[0] for x in xs]
    if indexing == "xy" and n > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        axis = i
        if indexing == "xy" and n > 1 and i < 2:
            axis = 1 - i
        view = [1] * n
        view[axis] = x.shape[0]
        g = _ops.reshape(x, tuple(view))
        out.append(g if sparse else _ops.broadcast_to(g, tuple(shape)))
    return tuple(out)


# ---- shapes --------------------------------------------------------------------------------------
def reshape(a, newshape):
    return _ops.reshape(a, newshape)


def ravel(a):
    return _ops.reshape(a, (-1,))


def squeeze(a, axis=None):
    return _ops.squeeze(a, axis)


def transpose(a, axes=None):
    return _ops.transpose(a) if axes is None else _ops.transpose(a, tuple(axes))


def broadcast_arrays(*args):
    shape = _ops.broadcast_shapes(*(tuple(_as_tensor(a).shape) for a in args))
    return [_ops.broadcast_to(_as_tensor(a), shape) for a in args]


def split(ary, indices_or_sections, axis=0):
    """numpy's split: an int is the number of equal sections; a list holds split indices."""
    ary = _as_tensor(ary)
    n = ary.shape[axis]
    if isinstance(indices_or_sections, int):
        if n % indices_or_sections:
            raise ValueError(
                f"split: axis {axis} of shape {tuple(ary.shape)} does not divide into "
                f"{indices_or_sections} equal sections"
            )
        return list(_ops.split(ary, n // indices_or_sections, axis))
    bounds = [0, *(_builtins.min(int(i), n) for i in indices_or_sections), n]
    return [
        _ops.slice_axis(ary, axis, lo, _builtins.max(lo, hi))
        for lo, hi in _itertools.pairwise(bounds)
    ]


def hstack(tup):
    tensors = [_as_tensor(t) for t in tup]
    return _ops.concat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tup):
    tensors = [_as_tensor(t) for t in tup]
    return _ops.concat([t if t.ndim > 1 else _ops.reshape(t, (1, -1)) for t in tensors], 0)


def append(arr, values, axis=None):
    if axis is None:
        return _ops.concat([ravel(_as_tensor(arr)), ravel(_as_tensor(values))], 0)
    return _ops.concat([_as_tensor(arr), _as_tensor(values)], axis)


def trace(a, offset=0, axis1=0, axis2=1):
    """Sum of the diagonal ``offset`` of the ``axis1``/``axis2`` planes."""
    a = _as_tensor(a)
    axis1, axis2 = axis1 % a.ndim, axis2 % a.ndim
    rest = [i for i in range(a.ndim) if i not in (axis1, axis2)]
    a = _ops.transpose(a, (*rest, axis1, axis2))
    mask = _ops.eye(a.shape[-2], a.shape[-1], offset, dtype=a.dtype)
    return _ops.sum(a * mask, axis=(-2, -1))


def clip(a, a_min, a_max):
    return _ops.clip(a, a_min, a_max)


# ---- reductions (numpy's argument order: axis, dtype, out, keepdims) -----------------------------
def sum(a, axis=None, dtype=None, out=None, keepdims=False):
    _no_out("sum", out)
    return _ops.sum(a, axis, keepdims, dtype=dtype)


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    _no_out("mean", out)
    a = _as_tensor(a) if dtype is None else _as_tensor(a).astype(dtype)
    return _ops.mean(a, axis, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False):
    _no_out("prod", out)
    a = _as_tensor(a) if dtype is None else _as_tensor(a).astype(dtype)
    return _ops.prod(a, axis, keepdims)


def amax(a, axis=None, out=None, keepdims=False):
    _no_out("amax", out)
    return _ops.amax(a, axis, keepdims)


def amin(a, axis=None, out=None, keepdims=False):
    _no_out("amin", out)
    return _ops.amin(a, axis, keepdims)


max = amax
min = amin


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    _no_out("var", out)
    return _ops.var(a, axis, keepdims, ddof=ddof, dtype=dtype)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    _no_out("std", out)
    return _ops.std(a, axis, keepdims, ddof=ddof, dtype=dtype)


def argmax(a, axis=None):
    return _ops.argmax(a, axis)


def argmin(a, axis=None):
    return _ops.argmin(a, axis)


def all(a, axis=None, keepdims=False):
    return _ops.all(a, axis, keepdims)


def any(a, axis=None, keepdims=False):
    return _ops.any(a, axis, keepdims)


def cumsum(a, axis=None, dtype=None):
    """Cumulative sum along ``axis`` (of the flattened tensor when None, as numpy)."""
    a = _as_tensor(a)
    if axis is None:
        a, axis = ravel(a), 0
    return _ops.cumsum(a, axis, dtype=dtype)


def norm(x, ord=None, axis=None, keepdims=False):
    return _ops.norm(x, ord, axis, keepdims)
