"""``core.chunk_map``: block-wise evaluation along one axis, to bound peak memory."""

from . import tree as _tree


def chunk_map(fn, chunk_size, in_axes=0, out_axes=0):
    """Evaluate ``fn`` on slices of ``chunk_size`` along ``in_axes`` and join the results.

    Unlike ``vmap``, ``fn`` sees the sliced axis (of length ``chunk_size``, the last chunk may
    be shorter) and must treat its entries independently; then
    ``chunk_map(fn, c)(x) == fn(x)`` while only one chunk's intermediates are alive at a time.
    Differentiable; under ``core.jit`` the chunks appear as separate equations in the IR.

    Args:
        fn: function of pytrees of tensors (tuples, dicts, NamedTuples, registered dataclasses)
            returning a tensor or a pytree of tensors.
        chunk_size: slice length (int >= 1).
        in_axes: axis of each argument to slice: an int for all, or a tuple with one entry per
            argument; an entry is an int, None (not sliced) or a pytree matching a prefix of
            that argument's structure (an axis per dataclass field, say).
        out_axes: axis along which the chunks of each output leaf are concatenated: an int, or
            a pytree matching a prefix of the output's structure (or one entry per leaf).
    """
    from .ops.shape import concat, slice_axis

    if int(chunk_size) < 1:
        raise ValueError(f"chunk_map: chunk_size must be >= 1, got {chunk_size}")
    chunk_size = int(chunk_size)

    def wrapper(*args):
        axes = list(in_axes) if isinstance(in_axes, (tuple, list)) else [in_axes] * len(args)
        if len(axes) != len(args):
            raise ValueError(
                f"chunk_map: in_axes has {len(axes)} entries for {len(args)} arguments"
            )
        leaves, args_def = _tree.flatten(args)
        leaf_axes = []
        for a, ax in zip(args, axes, strict=True):
            leaf_axes += _tree.axes_per_leaf(ax, a, "chunk_map: in_axes")
        sizes = {x.shape[ax] for x, ax in zip(leaves, leaf_axes, strict=True) if ax is not None}
        if not sizes:
            raise ValueError("chunk_map: in_axes slices no argument")
        if len(sizes) != 1:
            raise ValueError(f"chunk_map: sliced axes have sizes {sorted(sizes)}; they must agree")
        n = sizes.pop()
        if n <= chunk_size:
            return fn(*args)  # one chunk (or an empty axis): nothing to split
        pieces, first = [], None
        for start in range(0, n, chunk_size):
            stop = min(start + chunk_size, n)
            sliced = [
                x if ax is None else slice_axis(x, ax, start, stop)
                for x, ax in zip(leaves, leaf_axes, strict=True)
            ]
            out = fn(*_tree.unflatten(args_def, sliced))
            first = out if first is None else first
            pieces.append(_tree.flatten(out))
        treedef = pieces[0][1]
        for _, d in pieces[1:]:
            if d != treedef:
                raise ValueError(f"chunk_map: chunks returned structures {treedef} and {d}")
        oaxes = _tree.axes_per_leaf(out_axes, first, "chunk_map: out_axes")
        joined = [concat([p[0][k] for p in pieces], axis=ax) for k, ax in enumerate(oaxes)]
        return _tree.unflatten(treedef, joined)

    return wrapper
