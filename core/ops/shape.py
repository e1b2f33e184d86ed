"""Shape ops. reshape/transpose/broadcast_to/concat/pad are primitives; the rest compose them."""

import numpy as np

from ..prims import shape as prims_shape
from ._convert import as_tensor, const, normalize_axes, normalize_axis


def _resolve_shape(shape, size, name="reshape", from_shape=None):
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = [int(s) for s in shape]
    if shape.count(-1) > 1:
        raise ValueError(f"{name}: only one dimension can be -1, got {tuple(shape)}")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or size % known:
            raise ValueError(
                f"{name}: cannot reshape {_what(size, from_shape)} into {tuple(shape)}"
            )
        shape[shape.index(-1)] = size // known
    n = 1
    for s in shape:
        n *= s
    if n != size:
        raise ValueError(f"{name}: cannot reshape {_what(size, from_shape)} into {tuple(shape)}")
    return tuple(shape)


def _what(size, from_shape):
    if from_shape is None:
        return f"a tensor of {size} elements"
    return f"a tensor of shape {from_shape} ({size} elements)"


def reshape(x, *shape):
    """``x`` with a new shape (one entry may be -1); ``x.reshape(2, 3)`` also works."""
    x = as_tensor(x)
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    shape = _resolve_shape(shape, x.size, from_shape=tuple(x.shape))
    if tuple(x.shape) == shape:
        return x
    return prims_shape.reshape(x, shape=shape)


view = reshape


def flatten(x, start_dim=0, end_dim=-1):
    x = as_tensor(x)
    if x.ndim == 0:
        return reshape(x, (1,))
    s, e = normalize_axis(start_dim, x.ndim, "flatten"), normalize_axis(end_dim, x.ndim, "flatten")
    return reshape(x, tuple(x.shape[:s]) + (-1,) + tuple(x.shape[e + 1 :]))


def transpose(x, *axes):
    """Permute axes (reverse them when no axes are given)."""
    x = as_tensor(x)
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = axes[0]
    if not axes:
        perm = tuple(range(x.ndim))[::-1]
    else:
        perm = tuple(normalize_axis(a, x.ndim, "transpose") for a in axes)
    if perm == tuple(range(x.ndim)):
        return x
    return prims_shape.transpose(x, perm=perm)


permute = transpose


def swapaxes(x, a, b):
    x = as_tensor(x)
    a, b = normalize_axis(a, x.ndim, "swapaxes"), normalize_axis(b, x.ndim, "swapaxes")
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def moveaxis(x, source, destination):
    x = as_tensor(x)
    src = normalize_axis(source, x.ndim, "moveaxis")
    dst = normalize_axis(destination, x.ndim, "moveaxis")
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    return transpose(x, perm)


def expand_dims(x, axis):
    x = as_tensor(x)
    axis = (axis,) if isinstance(axis, int) else tuple(axis)
    nd = x.ndim + len(axis)
    for a in axis:
        if not -nd <= a < nd:
            raise ValueError(
                f"expand_dims: axis {a} out of range for a result of rank {nd} (input shape {tuple(x.shape)})"
            )
    axes = sorted(a % nd for a in axis)
    if len(set(axes)) != len(axes):
        raise ValueError(f"expand_dims: repeated axis in {axis}")
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return prims_shape.reshape(x, shape=tuple(shape))


unsqueeze = expand_dims


def squeeze(x, axis=None):
    x = as_tensor(x)
    if axis is None:
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = normalize_axes(axis, x.ndim, "squeeze")
        for a in axes:
            if x.shape[a] != 1:
                raise ValueError(
                    f"squeeze: axis {a} of shape {tuple(x.shape)} has size {x.shape[a]}, not 1"
                )
    if not axes:
        return x
    return prims_shape.reshape(x, shape=tuple(d for i, d in enumerate(x.shape) if i not in axes))


def broadcast_to(x, shape):
    x = as_tensor(x)
    shape = tuple(int(s) for s in shape)
    if tuple(x.shape) == shape:
        return x
    return prims_shape.broadcast_to(x, shape=shape)


def broadcast_shapes(*shapes):
    return tuple(np.broadcast_shapes(*shapes))


def sum_to_shape(x, shape):
    """Sum ``x`` over the axes that broadcasting added to reach its shape from ``shape``."""
    from ..prims.reduction import reduce_sum

    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    if x.ndim < len(
        shape
    ):  # shape has extra leading 1s (a value numpy assigned after dropping them)
        x = prims_shape.reshape(x, shape=(1,) * (len(shape) - x.ndim) + tuple(x.shape))
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and x.shape[lead + i] != 1
    )
    y = reduce_sum(x, axes=axes, keepdims=False) if axes else x
    return prims_shape.reshape(y, shape=shape) if tuple(y.shape) != shape else y


def concat(tensors, axis=0):
    """Join tensors along an existing axis (dtypes are promoted)."""
    from .. import dtypes as _dt
    from .elementwise import astype

    ts = [as_tensor(t) for t in tensors]
    if not ts:
        raise ValueError("concat: needs at least one tensor")
    dtype = ts[0].dtype
    for t in ts[1:]:
        dtype = _dt.promote_types(dtype, t.dtype)
    ts = [astype(t, dtype) for t in ts]
    if any(t.ndim == 0 for t in ts):
        raise ValueError("concat: zero-dimensional tensors cannot be concatenated; use stack")
    axis = normalize_axis(axis, ts[0].ndim, "concat")
    if len(ts) == 1:
        return ts[0]
    return prims_shape.concatenate(*ts, axis=axis)


cat = concat
concatenate = concat


def stack(tensors, axis=0):
    ts = [as_tensor(t) for t in tensors]
    if not ts:
        raise ValueError("stack: needs at least one tensor")
    shapes = {tuple(t.shape) for t in ts}
    if len(shapes) > 1:
        raise ValueError(f"stack: all shapes must be equal, got {sorted(shapes)}")
    axis = normalize_axis(axis, ts[0].ndim + 1, "stack")
    return concat([expand_dims(t, axis) for t in ts], axis=axis)


def slice_axis(x, axis, start, stop, step=1):
    """``x[..., start:stop:step, ...]`` along ``axis``."""
    from .indexing import getitem

    x = as_tensor(x)
    axis = normalize_axis(axis, x.ndim, "slice_axis")
    return getitem(x, (slice(None),) * axis + (slice(start, stop, step),))


def split(x, split_size_or_sections, axis=0):
    """Split into pieces of ``split_size_or_sections`` (an int: equal chunks of that size; a list:
    the sizes of the pieces), as in MindSpore/PyTorch."""
    x = as_tensor(x)
    axis = normalize_axis(axis, x.ndim, "split")
    n = x.shape[axis]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        sizes = [size] * (n // size) + ([n % size] if n % size else [])
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise ValueError(
                f"split: sizes {sizes} do not add up to {n} (axis {axis} of {tuple(x.shape)})"
            )
    out, start = [], 0
    for s in sizes:
        out.append(slice_axis(x, axis, start, start + s))
        start += s
    return tuple(out)


def chunk(x, chunks, axis=0):
    x = as_tensor(x)
    n = x.shape[normalize_axis(axis, x.ndim, "chunk")]
    return split(x, -(-n // chunks), axis)


def tile(x, reps):
    """Repeat the whole tensor ``reps[i]`` times along axis i (numpy.tile)."""
    x = as_tensor(x)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    nd = max(x.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    x = reshape(x, (1,) * (nd - x.ndim) + tuple(x.shape))
    # [r0, d0, r1, d1, ...] by broadcasting, then merge the pairs
    inter = []
    for d in x.shape:
        inter += [1, d]
    y = reshape(x, inter)
    target = []
    for r, d in zip(reps, x.shape):
        target += [r, d]
    y = broadcast_to(y, target)
    return reshape(y, tuple(r * d for r, d in zip(reps, x.shape)))


def repeat(x, repeats, axis=None):
    """Repeat each element ``repeats`` times along ``axis`` (numpy.repeat; int repeats)."""
    x = as_tensor(x)
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    axis = normalize_axis(axis, x.ndim, "repeat")
    if not isinstance(repeats, int):
        from .indexing import take

        idx = np.repeat(np.arange(x.shape[axis]), np.asarray(repeats))
        return take(x, idx, axis=axis)
    y = expand_dims(x, axis + 1)
    shape = list(y.shape)
    shape[axis + 1] = repeats
    y = broadcast_to(y, shape)
    new = list(x.shape)
    new[axis] *= repeats
    return reshape(y, new)


def flip(x, axis=None):
    from .indexing import getitem

    x = as_tensor(x)
    axes = normalize_axes(axis, x.ndim, "flip")
    return getitem(
        x, tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim))
    )


def roll(x, shifts, axis=None):
    """Circular shift by ``shifts`` along ``axis`` (flattened when None)."""
    x = as_tensor(x)
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), shifts, 0), x.shape)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for s, a in zip(shifts, axes):
        a = normalize_axis(a, x.ndim, "roll")
        n = x.shape[a]
        s %= max(n, 1)
        if s:
            x = concat([slice_axis(x, a, n - s, n), slice_axis(x, a, 0, n - s)], axis=a)
    return x


def pad(x, pad_width, mode="constant", value=0.0):
    """Pad with ``pad_width`` = ((lo, hi), ...) per axis (or one int / (lo, hi) for all axes).

    Modes: 'constant' (``value``), 'reflect' (mirror without the edge), 'symmetric' (mirror
    with the edge), 'edge' (repeat the edge), 'periodic' / 'wrap' (wrap around).
    """
    x = as_tensor(x)
    if isinstance(pad_width, int):
        pads = ((pad_width, pad_width),) * x.ndim
    elif len(pad_width) == 2 and all(isinstance(p, int) for p in pad_width):
        pads = (tuple(pad_width),) * x.ndim
    else:
        pads = tuple((int(lo), int(hi)) for lo, hi in pad_width)
    if len(pads) != x.ndim:
        raise ValueError(f"pad: {len(pads)} (lo, hi) pairs for a tensor of shape {tuple(x.shape)}")
    if mode == "constant":
        if all(lo == 0 and hi == 0 for lo, hi in pads):
            return x
        return prims_shape.pad(
            x, pads=pads, value=float(value) if not isinstance(value, complex) else value
        )
    for a, (lo, hi) in enumerate(pads):
        if lo == 0 and hi == 0:
            continue
        n = x.shape[a]
        if mode == "reflect":
            if lo >= n or hi >= n:
                raise ValueError(
                    f"pad: reflect padding ({lo}, {hi}) needs axis {a} longer than that, got {n}"
                )
            left = flip(slice_axis(x, a, 1, lo + 1), a)
            right = flip(slice_axis(x, a, n - 1 - hi, n - 1), a)
        elif mode == "symmetric":
            if lo > n or hi > n:
                raise ValueError(
                    f"pad: symmetric padding ({lo}, {hi}) longer than axis {a} of size {n}"
                )
            left = flip(slice_axis(x, a, 0, lo), a)
            right = flip(slice_axis(x, a, n - hi, n), a)
        elif mode in ("edge", "replicate"):
            left = repeat(slice_axis(x, a, 0, 1), lo, axis=a) if lo else None
            right = repeat(slice_axis(x, a, n - 1, n), hi, axis=a) if hi else None
        elif mode in ("periodic", "wrap", "circular"):
            if lo > n or hi > n:
                raise ValueError(
                    f"pad: periodic padding ({lo}, {hi}) longer than axis {a} of size {n}"
                )
            left = slice_axis(x, a, n - lo, n)
            right = slice_axis(x, a, 0, hi)
        else:
            raise ValueError(
                f"pad: unknown mode {mode!r} (constant, reflect, symmetric, edge, periodic)"
            )
        parts = [p for p in (left if lo else None, x, right if hi else None) if p is not None]
        x = concat(parts, axis=a)
    return x


def tril(x, k=0):
    """Lower triangle of the last two axes (entries above diagonal ``k`` are zero)."""
    from .elementwise import where

    x = as_tensor(x)
    n, m = x.shape[-2], x.shape[-1]
    mask = const(np.tri(n, m, k, dtype=bool))
    return where(mask, x, 0)


def triu(x, k=0):
    from .elementwise import where

    x = as_tensor(x)
    n, m = x.shape[-2], x.shape[-1]
    mask = const(~np.tri(n, m, k - 1, dtype=bool))
    return where(mask, x, 0)
