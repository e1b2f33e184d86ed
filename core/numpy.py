"""``core.numpy``: MindSpore's ``mindspore.numpy`` (numpy's names and signatures over tensors).

    from diffsci.core import numpy as mnp
    x = mnp.linspace(0.0, 1.0, 5); gx, gy = mnp.meshgrid(x, x)
    r = mnp.sqrt(gx ** 2 + gy ** 2); mnp.where(r < 1.0, r, mnp.zeros_like(r))

Every function is a thin layer over ``core.ops``, so it is differentiable, batches under
``vmap`` and compiles under ``jit``. Functions whose numpy signature equals the op's are the op
itself (the ``_SAME_AS_OPS`` table, resolved on first use); the others adapt numpy's arguments
(``sum(a, axis, dtype, keepdims)``, ``split`` into N sections, ``mnp.zeros`` as float32).
Results are tensors; creation functions default to float32 as MindSpore's do, and Python floats
in lists are float32 (numpy's own float64 values stay float64). Beyond MindSpore's list, numpy's
``diag diagonal rot90 pad select partition r_ c_ hypot fmax nan_to_num array_split``... follow
numpy's semantics (``tests/core/test_numpy_compat.py``; HIPS/autograd's tests run on them with
``python -m bench.peer_autograd``). A few depend on values and so need concrete tensors (not
under ``jit``/``vmap``): ``nonzero``, one-argument ``where``, ``real_if_close``, ``allclose``.
"""

import builtins as _builtins
import itertools as _itertools

import numpy as _np

from . import dtypes as _dt
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
from .ops._convert import binary_args as _binary_args
from .ops._convert import normalize_axis as _normalize_axis
from .ops._convert import scalar_like as _scalar_like
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
            "floor_divide matmul einsum outer inner dot tensordot moveaxis "
            "expand_dims flip roll tile broadcast_to stack cumprod real imag conj"
        ).split()
    },
    "conjugate": "conj",
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


def swapaxes(a, axis1, axis2):
    return _ops.swapaxes(a, axis1, axis2)


def rollaxis(a, axis, start=0):
    """Move ``axis`` to just before position ``start`` (numpy's older ``moveaxis``)."""
    a = _as_tensor(a)
    n = a.ndim
    axis = _normalize_axis(axis, n, "rollaxis")
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise ValueError(f"rollaxis: start {start} out of range for a tensor of rank {n}")
    if axis < start:
        start -= 1
    if axis == start:
        return a
    axes = [i for i in range(n) if i != axis]
    axes.insert(start, axis)
    return _ops.transpose(a, axes)


def atleast_1d(*arys):
    """Each input with at least one axis (0-d becomes ``[1]``); one tensor for one input, else
    a tuple."""
    out = tuple(_ops.reshape(t, (1,)) if t.ndim == 0 else t for t in map(_as_tensor, arys))
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    """Each input with at least two axes: ``[]`` -> ``[1, 1]``, ``[N]`` -> ``[1, N]``."""
    out = tuple(
        t if t.ndim >= 2 else _ops.reshape(t, (1, -1) if t.ndim else (1, 1))
        for t in map(_as_tensor, arys)
    )
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    """Each input with at least three axes: ``[]`` -> ``[1, 1, 1]``, ``[N]`` -> ``[1, N, 1]``,
    ``[M, N]`` -> ``[M, N, 1]``."""

    def lift(t):
        if t.ndim == 0:
            return _ops.reshape(t, (1, 1, 1))
        if t.ndim == 1:
            return _ops.reshape(t, (1, -1, 1))
        if t.ndim == 2:
            return _ops.expand_dims(t, -1)
        return t

    out = tuple(lift(_as_tensor(t)) for t in arys)
    return out[0] if len(out) == 1 else out


def _section_bounds(shape, axis, indices_or_sections, name, equal):
    """numpy's split points along ``axis``: ``k`` sections (sizes differ by at most one, the
    longer first; all equal when ``equal``) or a list of split indices."""
    n = shape[axis]
    if isinstance(indices_or_sections, (int, _np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError(f"{name}: the number of sections must be larger than 0, got {k}")
        if equal and n % k:
            raise ValueError(
                f"{name}: axis {axis} of shape {tuple(shape)} does not divide into {k} equal "
                "sections (array_split allows unequal ones)"
            )
        each, extra = divmod(n, k)
        sizes = [each + 1] * extra + [each] * (k - extra)
        return list(_itertools.accumulate([0, *sizes]))
    return [0, *(int(i) for i in indices_or_sections), n]


def _split_at(ary, bounds, axis):
    n = ary.shape[axis]

    def clamp(i):  # numpy's slicing of the bounds (negative counts from the end, clipped)
        return _builtins.min(_builtins.max(i + n if i < 0 else i, 0), n)

    out = []
    for lo, hi in _itertools.pairwise(bounds):
        lo, hi = clamp(lo), clamp(hi)
        out.append(_ops.slice_axis(ary, axis, lo, _builtins.max(lo, hi)))
    return out


def split(ary, indices_or_sections, axis=0):
    """numpy's split: an int is the number of equal sections; a list holds split indices."""
    ary = _as_tensor(ary)
    axis = _normalize_axis(axis, ary.ndim, "split")
    bounds = _section_bounds(ary.shape, axis, indices_or_sections, "split", equal=True)
    return _split_at(ary, bounds, axis)


def array_split(ary, indices_or_sections, axis=0):
    """numpy's array_split: as ``split``, but ``k`` sections need not be equal (the first
    ``n % k`` are one longer)."""
    ary = _as_tensor(ary)
    axis = _normalize_axis(axis, ary.ndim, "array_split")
    bounds = _section_bounds(ary.shape, axis, indices_or_sections, "array_split", equal=False)
    return _split_at(ary, bounds, axis)


def vsplit(ary, indices_or_sections):
    """``split`` along axis 0 of a tensor of rank >= 2."""
    ary = _as_tensor(ary)
    if ary.ndim < 2:
        raise ValueError(f"vsplit: needs a tensor of rank >= 2, got shape {tuple(ary.shape)}")
    return split(ary, indices_or_sections, 0)


def hsplit(ary, indices_or_sections):
    """``split`` along axis 1 (axis 0 for a 1-D tensor)."""
    ary = _as_tensor(ary)
    if ary.ndim == 0:
        raise ValueError("hsplit: needs a tensor of rank >= 1, got a 0-d tensor")
    return split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0)


def dsplit(ary, indices_or_sections):
    """``split`` along axis 2 of a tensor of rank >= 3."""
    ary = _as_tensor(ary)
    if ary.ndim < 3:
        raise ValueError(f"dsplit: needs a tensor of rank >= 3, got shape {tuple(ary.shape)}")
    return split(ary, indices_or_sections, 2)


def _seq(tup, name):
    """The tensors of a sequence argument (a tensor is the sequence of its rows, as in numpy)."""
    tensors = [_as_tensor(t) for t in tup]
    if not tensors:
        raise ValueError(f"{name}: needs at least one array to concatenate")
    return tensors


def hstack(tup):
    """Concatenate along axis 1 (axis 0 when the inputs are 1-D; 0-d inputs count as 1-D)."""
    tensors = atleast_1d(*_seq(tup, "hstack"))
    tensors = tensors if isinstance(tensors, tuple) else (tensors,)
    return _ops.concat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tup):
    """Concatenate along axis 0 after ``atleast_2d`` (a 1-D ``[N]`` is a row ``[1, N]``)."""
    tensors = atleast_2d(*_seq(tup, "vstack"))
    return _ops.concat(tensors if isinstance(tensors, tuple) else (tensors,), 0)


row_stack = vstack


def dstack(tup):
    """Concatenate along axis 2 after ``atleast_3d``."""
    tensors = atleast_3d(*_seq(tup, "dstack"))
    return _ops.concat(tensors if isinstance(tensors, tuple) else (tensors,), 2)


def column_stack(tup):
    """1-D inputs as columns ``[N, 1]``, the rest as they are, concatenated along axis 1."""
    tensors = [_ops.reshape(t, (-1, 1)) if t.ndim < 2 else t for t in _seq(tup, "column_stack")]
    return _ops.concat(tensors, 1)


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


def where(condition, x=None, y=None):
    """``x`` where ``condition`` holds, else ``y`` (all three broadcast; differentiable in ``x``
    and ``y``). With ``condition`` alone, numpy's ``nonzero(condition)``."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither (then it is nonzero(condition))")
    return _ops.where(condition, x, y)


def nonzero(a):
    """The indices of the non-zero entries: a tuple of int64 tensors, one per axis. Their
    number depends on the values, so this needs concrete values (not inside ``jit``/``vmap``)."""
    a = _as_tensor(a)
    if a.ndim == 0:
        raise ValueError("nonzero: a 0-d tensor has no indices; use atleast_1d(a) first")
    mask = _np.asarray(a if a.dtype == bool_ else _ops.not_equal(a, 0), dtype=bool)
    return tuple(Tensor(i.astype(_np.int64)) for i in _np.nonzero(mask))


def select(condlist, choicelist, default=0):
    """The entry of the first ``choicelist[i]`` whose ``condlist[i]`` holds, else ``default``
    (all broadcast together; differentiable in the choices and in ``default``)."""
    if len(condlist) != len(choicelist):
        raise ValueError(
            f"select: {len(condlist)} conditions for {len(choicelist)} choices; they must match"
        )
    if not condlist:
        raise ValueError("select: an empty condition list is not possible")
    out = default
    for i in range(len(condlist) - 1, -1, -1):
        cond = _as_tensor(condlist[i])
        if cond.dtype != bool_:
            raise TypeError(f"select: condlist[{i}] is {cond.dtype}, it must be a bool tensor")
        out = _ops.where(cond, choicelist[i], out)
    return _as_tensor(out)


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


def sort(a, axis=-1, kind=None, order=None):
    """Sorted values along ``axis`` (flattened when None); differentiable (the cotangent goes
    back to where each value came from). ``kind`` is ignored: the sort is always stable."""
    del kind
    if order is not None:
        raise NotImplementedError("sort: order= (structured arrays) is not supported")
    a = _as_tensor(a)
    if axis is None:
        a, axis = ravel(a), 0
    return _ops.sort(a, axis)[0]


def argsort(a, axis=-1, kind=None, order=None):
    """Indices that sort ``a`` along ``axis`` (stable; flattened when None)."""
    del kind
    if order is not None:
        raise NotImplementedError("argsort: order= (structured arrays) is not supported")
    a = _as_tensor(a)
    if axis is None:
        a, axis = ravel(a), 0
    return _ops.argsort(a, axis)


def _check_kth(kth, n, name):
    for k in _np.atleast_1d(_np.asarray(kth)).tolist():
        if not -n <= int(k) < n:
            raise ValueError(f"{name}: kth(={k}) out of bounds ({n})")


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``a`` with the entry that would be ``kth`` in sorted order in its place, smaller ones
    before it and larger ones after it (along ``axis``; flattened when None).

    numpy leaves the order within each part unspecified; here each part comes out sorted (the
    result is a full sort, which satisfies the contract for every ``kth`` at once, and runs
    under ``jit`` and ``vmap``). Differentiable: the cotangent goes back to where each value
    came from.
    """
    del kind
    a = _as_tensor(a)
    if axis is None:
        a, axis = ravel(a), 0
    _check_kth(kth, a.shape[_normalize_axis(axis, a.ndim, "partition")], "partition")
    return sort(a, axis, order=order)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """Indices that partition ``a`` (see :func:`partition`: they sort it fully)."""
    del kind
    a = _as_tensor(a)
    if axis is None:
        a, axis = ravel(a), 0
    _check_kth(kth, a.shape[_normalize_axis(axis, a.ndim, "argpartition")], "argpartition")
    return argsort(a, axis, order=order)


# ---- flips, rotations, diagonals -----------------------------------------------------------------
def flipud(m):
    """Reverse axis 0 (rank >= 1)."""
    m = _as_tensor(m)
    if m.ndim < 1:
        raise ValueError("flipud: needs a tensor of rank >= 1, got a 0-d tensor")
    return _ops.flip(m, 0)


def fliplr(m):
    """Reverse axis 1 (rank >= 2)."""
    m = _as_tensor(m)
    if m.ndim < 2:
        raise ValueError(f"fliplr: needs a tensor of rank >= 2, got shape {tuple(m.shape)}")
    return _ops.flip(m, 1)


def rot90(m, k=1, axes=(0, 1)):
    """Rotate by ``k`` quarter turns in the plane of ``axes``, from the first axis towards the
    second (numpy's rot90)."""
    m = _as_tensor(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError(f"rot90: axes must be two axes, got {axes}")
    a0, a1 = (_normalize_axis(a, m.ndim, "rot90") for a in axes)
    if a0 == a1:
        raise ValueError(f"rot90: the two axes must differ, got {axes}")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return _ops.flip(m, (a0, a1))
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return _ops.transpose(_ops.flip(m, a1), perm)
    return _ops.flip(_ops.transpose(m, perm), a1)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal ``offset`` of the ``axis1``/``axis2`` planes, as a last axis: shape
    ``[*rest, L]`` (a strided slice of the flattened planes, so it is differentiable, batches
    and compiles with no rule of its own)."""
    a = _as_tensor(a)
    if a.ndim < 2:
        raise ValueError(f"diagonal: needs a tensor of rank >= 2, got shape {tuple(a.shape)}")
    ax1, ax2 = (
        _normalize_axis(axis1, a.ndim, "diagonal"),
        _normalize_axis(axis2, a.ndim, "diagonal"),
    )
    if ax1 == ax2:
        raise ValueError(f"diagonal: axis1 and axis2 must differ, got {axis1} and {axis2}")
    rest = [i for i in range(a.ndim) if i not in (ax1, ax2)]
    a = _ops.transpose(a, (*rest, ax1, ax2))  # [*rest, n, m]
    n, m = a.shape[-2], a.shape[-1]
    offset = int(offset)
    length = _builtins.max(
        0, _builtins.min(n, m - offset) if offset >= 0 else _builtins.min(n + offset, m)
    )
    flat = _ops.reshape(a, (*a.shape[:-2], n * m))
    if length == 0:
        return _ops.slice_axis(flat, -1, 0, 0)
    start = offset if offset >= 0 else -offset * m
    return _ops.slice_axis(flat, -1, start, start + (length - 1) * (m + 1) + 1, m + 1)


def diag_embed(v, offset=0, axis1=-2, axis2=-1):
    """The inverse of :func:`diagonal`: the last axis of ``v`` ``[..., N]`` on the diagonal
    ``offset`` of a new ``[N + |offset|, N + |offset|]`` plane at ``axis1``/``axis2`` of the
    result, zeros elsewhere (``torch.diag_embed``, ``mindspore.ops.diag_embed``; autograd's
    ``make_diagonal``)."""
    v = _as_tensor(v)
    if v.ndim == 0:
        raise ValueError("diag_embed: needs a tensor of rank >= 1, got a 0-d tensor")
    n, k = v.shape[-1], int(offset)
    mask = _ops.eye(n, dtype=bool_)
    out = _ops.where(mask, _ops.expand_dims(v, -1), _scalar_like(0, v.dtype))  # [..., n, n]
    if k:
        lo, hi = (0, k) if k > 0 else (-k, 0)  # rows: below; columns: before (k > 0)
        pads = [(0, 0)] * (out.ndim - 2) + [(lo, hi), (hi, lo)]
        out = _ops.pad(out, pads)
    nd = out.ndim
    ax1, ax2 = _normalize_axis(axis1, nd, "diag_embed"), _normalize_axis(axis2, nd, "diag_embed")
    if ax1 == ax2:
        raise ValueError(f"diag_embed: axis1 and axis2 must differ, got {axis1} and {axis2}")
    return _place_plane(out, ax1, ax2)


def _place_plane(out, ax1, ax2):
    """Move the last two axes of ``out`` to positions ``ax1`` (rows) and ``ax2`` (columns)."""
    nd = out.ndim
    rest = iter(range(nd - 2))
    perm = [nd - 2 if i == ax1 else nd - 1 if i == ax2 else next(rest) for i in range(nd)]
    return _ops.transpose(out, perm)


def diag(v, k=0):
    """A 1-D ``v``: the square matrix with ``v`` on diagonal ``k``; a 2-D ``v``: its diagonal
    ``k``."""
    v = _as_tensor(v)
    if v.ndim == 1:
        return diag_embed(v, k, 0, 1)
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError(f"diag: input must be 1-D or 2-D, got shape {tuple(v.shape)}")


def diagflat(v, k=0):
    """The square matrix with the flattened ``v`` on diagonal ``k``."""
    return diag_embed(ravel(_as_tensor(v)), k, 0, 1)


# ---- padding -------------------------------------------------------------------------------------
def _as_pairs(width, ndim, name):
    """numpy's forms of a pad width (``n``, ``(n,)``, ``(before, after)``, ``((before,
    after),)`` or one pair per axis) as one ``(before, after)`` pair per axis."""
    w = _np.asarray(width)
    if w.dtype.kind not in "iu":
        raise TypeError(f"{name}: pad widths must be integers, got {width!r}")
    try:
        pairs = _np.broadcast_to(w, (ndim, 2)) if w.ndim <= 2 else None
    except ValueError:
        pairs = None
    if pairs is None:
        raise ValueError(f"{name}: pad width {width!r} does not fit a tensor of rank {ndim}")
    if (pairs < 0).any():
        raise ValueError(f"{name}: pad widths must be non-negative, got {width!r}")
    return [(int(lo), int(hi)) for lo, hi in pairs]


# numpy's mode name -> core.ops.pad's
_PAD_MODES = {"constant": "constant", "empty": "constant", "edge": "edge", "reflect": "reflect",
              "symmetric": "symmetric", "wrap": "wrap"}  # fmt: skip


def pad(array, pad_width, mode="constant", **kwargs):
    """numpy's pad: ``pad_width`` is ``n``, ``(before, after)`` or one pair per axis; modes
    'constant' (``constant_values``: one value, a ``(before, after)`` pair, or one pair per
    axis), 'edge', 'reflect', 'symmetric', 'wrap', 'empty' (zeros). Differentiable in
    ``array``."""
    a = _as_tensor(array)
    pairs = _as_pairs(pad_width, a.ndim, "pad")
    if mode not in _PAD_MODES:
        raise NotImplementedError(
            f"pad: mode {mode!r} is not supported ({', '.join(_PAD_MODES)} are)"
        )
    values = kwargs.pop("constant_values", 0)
    if kwargs.pop("reflect_type", "even") != "even":
        raise NotImplementedError("pad: only reflect_type='even' is supported")
    if kwargs:
        raise TypeError(f"pad: unexpected keyword arguments {sorted(kwargs)} for mode {mode!r}")
    if mode != "constant" or _np.ndim(values) == 0:
        value = values if mode == "constant" else 0
        return _ops.pad(a, pairs, mode=_PAD_MODES[mode], value=value)
    # one value per side: pad axis by axis, so (as in numpy) corners take the later axis' value
    vals = _np.broadcast_to(_np.asarray(values), (a.ndim, 2))
    for axis, ((lo, hi), (vlo, vhi)) in enumerate(zip(pairs, vals.tolist())):
        for side, (width, v) in enumerate(((lo, vlo), (hi, vhi))):
            if width:
                one = [(0, 0)] * a.ndim
                one[axis] = (width, 0) if side == 0 else (0, width)
                a = _ops.pad(a, one, value=v)
    return a


# ---- elementwise (numpy's ufuncs that core.ops does not name) ------------------------------------
def _inexact(x):
    x = _as_tensor(x)
    return x if _dt.is_inexact(x.dtype) else _ops.astype(x, _dt.default_float)


def hypot(x1, x2):
    """``sqrt(x1**2 + x2**2)`` without overflow or underflow in between (both are scaled by
    the larger magnitude first); inf where either is infinite (even with a NaN), as numpy.
    The derivatives are those of the formula, of every order; at ``(0, 0)``, where they do
    not exist, they are 0 (as ``norm``'s at the zero vector)."""
    x1, x2 = _binary_args(_inexact(x1), _inexact(x2))
    # the scale is a constant: hypot(x1, x2) = s * hypot(x1 / s, x2 / s) for every s > 0
    s = _ops.stop_gradient(_ops.maximum(_ops.abs(x1), _ops.abs(x2)))
    inf, nan = _ops.logical_or(isinf(x1), isinf(x2)), _ops.isnan(s)
    # entries that are not finite, and (0, 0), take their value below; here they compute
    # hypot(0, 0) with s = 1 under a guarded sqrt, so no derivative there is inf or NaN
    skip = _ops.logical_or(_ops.logical_or(inf, nan), s == 0)
    s = _ops.where(skip, 1.0, s)
    x1, x2 = _ops.where(skip, 0.0, x1), _ops.where(skip, 0.0, x2)
    r = s * _ops.sqrt(_ops.where(skip, 1.0, _ops.square(x1 / s) + _ops.square(x2 / s)))
    r = _ops.where(skip, 0.0, r)
    return _ops.where(inf, _np.inf, _ops.where(nan, _np.nan, r))


def fabs(x):
    """``|x|`` of a real tensor, as a float (numpy's fabs refuses complex input)."""
    x = _as_tensor(x)
    if _dt.is_complex(x.dtype):
        raise TypeError("fabs: complex input is not supported (numpy's fabs neither); use abs")
    return _ops.abs(_inexact(x))


def fmax(x1, x2):
    """The elementwise maximum, ignoring NaN: where one entry is NaN the other is returned
    (NaN only where both are). The derivative follows the entry returned (half to each at
    a tie, as ``maximum``)."""
    x1, x2 = _binary_args(x1, x2)
    if not _dt.is_inexact(x1.dtype):
        return _ops.maximum(x1, x2)
    return _ops.where(_ops.isnan(x2), x1, _ops.where(_ops.isnan(x1), x2, _ops.maximum(x1, x2)))


def fmin(x1, x2):
    """The elementwise minimum, ignoring NaN (see :func:`fmax`)."""
    x1, x2 = _binary_args(x1, x2)
    if not _dt.is_inexact(x1.dtype):
        return _ops.minimum(x1, x2)
    return _ops.where(_ops.isnan(x2), x1, _ops.where(_ops.isnan(x1), x2, _ops.minimum(x1, x2)))


def _finfo(dtype):
    import ml_dtypes

    return ml_dtypes.finfo(dtype)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN -> ``nan``, +inf -> ``posinf`` (the dtype's largest finite value by default),
    -inf -> ``neginf`` (the most negative); complex: the real and imaginary parts each. The
    derivative passes where ``x`` is finite and is 0 elsewhere."""
    del copy  # tensors are immutable
    x = _as_tensor(x)
    if _dt.is_complex(x.dtype):
        return _ops.complex(
            nan_to_num(_ops.real(x), nan=nan, posinf=posinf, neginf=neginf),
            nan_to_num(_ops.imag(x), nan=nan, posinf=posinf, neginf=neginf),
        )
    if not _dt.is_inexact(x.dtype):
        return x
    info = _finfo(x.dtype)
    big = float(info.max) if posinf is None else posinf
    small = float(info.min) if neginf is None else neginf
    out = _ops.where(_ops.isnan(x), nan, x)
    out = _ops.where(x == _np.inf, big, out)
    return _ops.where(x == -_np.inf, small, out)


def real_if_close(a, tol=100):
    """The real part of a complex ``a`` whose imaginary parts are all below ``tol`` (in units
    of the dtype's epsilon when ``tol > 1``), else ``a``. The result's dtype depends on the
    values, so this needs concrete values (not inside ``jit``/``vmap``)."""
    a = _as_tensor(a)
    if not _dt.is_complex(a.dtype):
        return a
    if tol > 1:
        tol = tol * float(_finfo(_dt.real_dtype(a.dtype)).eps)
    small = _ops.all(_ops.abs(_ops.imag(a)) < tol)
    return _ops.real(a) if bool(_np.asarray(small, dtype=bool)) else a


# ---- tests on values (bool results, no derivatives) ----------------------------------------------
def isinf(x):
    """True where ``x`` is +inf or -inf (either part, for complex ``x``)."""
    x = _as_tensor(x)
    if not _dt.is_inexact(x.dtype):
        return _ops.zeros(tuple(x.shape), dtype=bool_)
    if _dt.is_complex(x.dtype):
        return _ops.logical_or(isinf(_ops.real(x)), isinf(_ops.imag(x)))
    return _ops.abs(x) == _np.inf


def isposinf(x):
    return _as_tensor(x) == _np.inf


def isneginf(x):
    return _as_tensor(x) == -_np.inf


def iscomplex(x):
    """True where the imaginary part is non-zero (all False for a real tensor)."""
    return _ops.imag(_as_tensor(x)) != 0


def isreal(x):
    """True where the imaginary part is zero (all True for a real tensor)."""
    return _ops.imag(_as_tensor(x)) == 0


def iscomplexobj(x):
    """Whether ``x`` has a complex dtype (whatever its values)."""
    return _dt.is_complex(_as_tensor(x).dtype)


def isrealobj(x):
    return not iscomplexobj(x)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|a - b| <= atol + rtol * |b|`` elementwise (infinities close only to themselves;
    NaN close to NaN with ``equal_nan``), as numpy's isclose."""
    a, b = _binary_args(a, b)
    if not _dt.is_inexact(a.dtype):
        a, b = _ops.astype(a, _dt.default_float), _ops.astype(b, _dt.default_float)
    finite = _ops.logical_and(_ops.isfinite(a), _ops.isfinite(b))
    fa, fb = _ops.where(finite, a, 0), _ops.where(finite, b, 0)  # no inf - inf evaluated
    near = _ops.logical_and(_ops.abs(fa - fb) <= atol + rtol * _ops.abs(fb), finite)
    out = _ops.logical_or(near, a == b)
    if equal_nan:
        out = _ops.logical_or(out, _ops.logical_and(_ops.isnan(a), _ops.isnan(b)))
    return out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether ``isclose`` holds everywhere: a Python bool (needs concrete values, not inside
    ``jit``/``vmap``)."""
    return bool(_np.asarray(_ops.all(isclose(a, b, rtol, atol, equal_nan)), dtype=bool))


def array_equal(a1, a2, equal_nan=False):
    """Whether the shapes and all elements agree: a Python bool (needs concrete values)."""
    a1, a2 = _as_tensor(a1), _as_tensor(a2)
    if tuple(a1.shape) != tuple(a2.shape):
        return False
    same = a1 == a2
    if equal_nan and _dt.is_inexact(a1.dtype):
        same = _ops.logical_or(same, _ops.logical_and(_ops.isnan(a1), _ops.isnan(a2)))
    return bool(_np.asarray(_ops.all(same), dtype=bool))


# ---- index tricks --------------------------------------------------------------------------------
class _AxisConcatenator:
    """numpy's ``r_`` / ``c_``: ``r_[a, b, 0:5, 1.0]`` concatenates tensors, slices (as
    ``arange``, or ``linspace`` for a complex step ``0:1:5j``) and scalars along ``axis``.
    A leading string sets the axis (``'1'``), or axis, minimum rank and where 1-D inputs go
    (``'0,2,0'``); the matrix directives ``'r'``/``'c'`` are not supported (no matrix type).
    Differentiable in the tensors."""

    def __init__(self, axis=0, ndmin=1, trans1d=-1):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        key = key if isinstance(key, tuple) else (key,)
        objs, is_scalar = [], []
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k != 0:
                    raise ValueError("r_/c_: a string directive must be the first entry")
                axis, ndmin, trans1d = self._directive(item, axis, ndmin, trans1d)
                continue
            if isinstance(item, slice):
                start = 0 if item.start is None else item.start
                step = 1 if item.step is None else item.step
                if isinstance(step, (complex, _np.complexfloating)):
                    obj = Tensor(_np.linspace(start, item.stop, int(abs(step))))
                else:
                    obj = Tensor(_np.arange(start, item.stop, step))
                obj = self._lift(obj, ndmin, trans1d)
            elif isinstance(item, (bool, int, float, complex, _np.generic)):
                objs.append(item)
                is_scalar.append(True)
                continue
            else:
                obj = self._lift(_as_tensor(item), ndmin, trans1d)
            objs.append(obj)
            is_scalar.append(False)
        strong = [o.dtype for o, sc in zip(objs, is_scalar) if not sc]
        dtype = None
        for d in strong:
            dtype = d if dtype is None else _dt.promote_types(dtype, d)
        tensors = []
        for o, sc in zip(objs, is_scalar):
            if sc:
                weak = dtype is not None and not isinstance(o, _np.generic)
                t = _scalar_like(o, dtype) if weak else _as_tensor(o)
                o = _ops.reshape(t, (1,) * _builtins.max(ndmin, 1))
            tensors.append(o)
        if not tensors:
            return Tensor(_np.zeros(0))
        return _ops.concat(tensors, axis)

    @staticmethod
    def _directive(item, axis, ndmin, trans1d):
        if item in ("r", "c"):
            raise NotImplementedError(
                f"r_/c_: the matrix directive {item!r} is not supported (diffsci has no matrix type)"
            )
        try:
            parts = [int(p) for p in item.split(",")]
        except ValueError:
            raise ValueError(f"r_/c_: unknown special directive {item!r}") from None
        if len(parts) == 1:
            return parts[0], ndmin, trans1d
        if len(parts) in (2, 3):
            return parts[0], parts[1], (parts[2] if len(parts) == 3 else trans1d)
        raise ValueError(f"r_/c_: unknown special directive {item!r}")

    @staticmethod
    def _lift(t, ndmin, trans1d):
        """numpy's ``array(item, ndmin=ndmin)`` and the move of the original axes to
        ``trans1d``."""
        item_ndim = t.ndim
        while t.ndim < ndmin:
            t = _ops.expand_dims(t, 0)
        if trans1d != -1 and item_ndim < ndmin:
            k2, k1 = ndmin - item_ndim, trans1d
            if k1 < 0:
                k1 += k2 + 1
            axes = list(range(ndmin))
            t = _ops.transpose(t, axes[:k1] + axes[k2:] + axes[k1:k2])
        return t


r_ = _AxisConcatenator(0)
c_ = _AxisConcatenator(-1, ndmin=2, trans1d=0)
