"""``core.vmap``: vectorizing map by batching rules, never by a Python loop over the batch.

A :class:`BatchTracer` holds a value with one extra axis (``bdim``, or None when the value is
the same for every batch element). Each primitive has a batching rule
``rule(args, bdims, **params) -> (out, out_bdim)`` that applies the primitive once to the
whole batch.
"""

from . import tree as _tree
from .primitive import ShapedArray, Trace, Tracer, bind, pop_trace, push_trace, split_operands
from .tensor import Tensor, resolve

batch_rules = {}  # Primitive -> rule(args, bdims, **params) -> (out, out_bdim)


class BatchTracer(Tracer):
    __slots__ = ("bdim", "val")

    def __init__(self, trace, val, bdim):
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self):
        shape = list(self.val.shape)
        if self.bdim is not None:
            del shape[self.bdim]
        return ShapedArray(shape, self.val.dtype)

    @property
    def shape(self):
        shape = self.val.shape
        if self.bdim is None:
            return shape
        return shape[: self.bdim] + shape[self.bdim + 1 :]

    @property
    def dtype(self):
        return self.val.dtype


class BatchTrace(Trace):
    tracer_type = BatchTracer

    def __init__(self, size):
        self.size = size

    def process(self, prim, args, params):
        vals, bdims = split_batched(self, args)
        if all(b is None for b in bdims):
            return bind(prim, vals, params)
        rule = batch_rules.get(prim)
        if rule is None:
            raise NotImplementedError(f"vmap: primitive {prim.name} has no batching rule")
        try:
            out, out_bdim = rule(vals, bdims, **params)
        except (ValueError, IndexError, TypeError) as err:
            if type(err) not in (ValueError, IndexError, TypeError):
                raise
            shapes = ", ".join(str(tuple(a.shape)) for a in args)
            raise type(err)(
                f"{err} [inside core.vmap: {prim.name} of per-example shapes {shapes}]"
            ) from err
        if out_bdim is None:
            return out
        return BatchTracer(self, out, out_bdim)


def split_batched(trace, args):
    """``(values, batch axes)`` of ``args`` as ``trace`` sees them (see ``split_operands``)."""
    return split_operands(trace, args, "val", "bdim")


# ---- helpers for writing batching rules -------------------------------------------------------


def moveaxis(x, src, dst):
    from .ops import shape as ops_shape

    if src == dst:
        return x
    return ops_shape.moveaxis(x, src, dst)


def to_front(x, bdim):
    """``x`` with its batch axis first (None stays None: unbatched)."""
    return x if bdim is None or bdim == 0 else moveaxis(x, bdim, 0)


def axis_rule(prim, axis_names=("axis",), out_keeps_batch=True):
    """Rule for a unary primitive whose params name axes of the input: batch goes first and
    every axis param (int or tuple of non-negative ints) shifts by one."""

    def shift(v):
        if v is None:
            return None
        if isinstance(v, tuple):
            return tuple(a + 1 for a in v)
        return v + 1

    def rule(args, bdims, **params):
        x = to_front(args[0], bdims[0])
        new = dict(params)
        for name in axis_names:
            if name in new:
                new[name] = shift(new[name])
        return bind(prim, (x,) + tuple(args[1:]), new), 0 if out_keeps_batch else None

    return rule


def broadcast_batch(x, bdim, size):
    """``x`` with a leading batch axis of ``size`` (materialized by broadcasting if absent)."""
    from .ops.shape import broadcast_to, expand_dims

    if bdim is None:
        return broadcast_to(expand_dims(x, 0), (size,) + tuple(x.shape))
    return to_front(x, bdim)


# ---- the transform ---------------------------------------------------------------------------


def _normalize_axes(spec, n, name):
    if isinstance(spec, (list, tuple)):
        if len(spec) != n:
            raise ValueError(f"vmap: {name} has {len(spec)} entries for {n} arguments")
        return list(spec)
    return [spec] * n


def _leaf_axes(spec, tree, name):
    """One axis per leaf of ``tree`` (see ``core.tree.axes_per_leaf``)."""
    return _tree.axes_per_leaf(spec, tree, f"vmap: {name}")


def vmap(fn, in_axes=0, out_axes=0):
    """Vectorize ``fn`` over axis ``in_axes`` of its arguments.

    Args:
        fn: function of tensors (pytrees allowed) returning tensors (pytrees allowed).
        in_axes: int, None (argument not mapped) or a tuple with one entry per argument (an
            entry may itself be a pytree matching a prefix of that argument's: a tuple, a dict,
            a registered dataclass with an axis per field).
        out_axes: where the batch axis goes in the outputs: int, None (output not batched:
            returned as is) or a tuple matching a prefix of the output structure.
    """

    def wrapper(*args):
        axes = _normalize_axes(in_axes, len(args), "in_axes")
        size = None
        flat = []  # per argument: (leaves as tensors, treedef, axis per leaf)
        for a, ax in zip(args, axes):
            leaves, treedef = _tree.flatten(a)
            leaf_axes = _leaf_axes(ax, a, "in_axes")
            tensors = []
            for leaf, lax in zip(leaves, leaf_axes):
                if lax is None:
                    tensors.append(leaf)
                    continue
                leaf = leaf if isinstance(leaf, Tensor) else Tensor(leaf)
                shape = tuple(leaf.shape)
                if not -len(shape) <= lax < len(shape):
                    raise ValueError(
                        f"vmap: in_axes {lax} is out of range for an argument of shape {shape}"
                    )
                n = shape[lax]
                if size is not None and n != size:
                    raise ValueError(f"vmap: mapped axes have different sizes {size} and {n}")
                size = n
                tensors.append(leaf)
            flat.append((tensors, treedef, leaf_axes))
        if size is None:
            raise ValueError("vmap: in_axes maps no argument")
        trace = push_trace(BatchTrace(size))
        try:
            wrapped = []
            for a, (tensors, treedef, leaf_axes) in zip(args, flat):
                if all(lax is None for lax in leaf_axes):
                    wrapped.append(a)
                    continue
                tr = [
                    t if lax is None else BatchTracer(trace, t, lax % t.ndim)
                    for t, lax in zip(tensors, leaf_axes)
                ]
                wrapped.append(_tree.unflatten(treedef, tr))
            out = _tree.tree_map(resolve, fn(*wrapped))
        finally:
            pop_trace(trace)
        leaves, treedef = _tree.flatten(out)
        oaxes = _leaf_axes(out_axes, out, "out_axes")
        res = []
        for o, oax in zip(leaves, oaxes):
            if type(o) is BatchTracer and o._trace is trace:
                val, b = o.val, o.bdim
            else:
                val, b = o, None
            if oax is None:
                if b is not None:
                    raise ValueError(
                        f"vmap: out_axes None for an output that depends on the mapped axis (shape {tuple(o.shape)})"
                    )
                res.append(val)
                continue
            val = broadcast_batch(val if isinstance(val, Tensor) else Tensor(val), b, size)
            res.append(moveaxis(val, 0, oax % val.ndim))
        return _tree.unflatten(treedef, res)

    return wrapper
