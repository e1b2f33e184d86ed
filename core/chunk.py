"""``core.chunk_map``: block-wise evaluation along one axis, to bound peak memory."""

from . import tree as _tree


def chunk_map(fn, chunk_size, in_axes=0, out_axes=0):
    """Evaluate ``fn`` on slices of ``chunk_size`` along ``in_axes`` and join the results.

    Unlike ``vmap``, ``fn`` sees the sliced axis (of length ``chunk_size``, the last chunk may
    be shorter) and must treat its entries independently; then
    ``chunk_map(fn, c)(x) == fn(x)`` while only one chunk's intermediates are alive at a time.
    Differentiable; under ``core.jit`` the chunks appear as separate equations in the IR.

    Args:
        fn: function of tensors returning a tensor or a pytree of tensors.
        chunk_size: slice length (int >= 1).
        in_axes: axis of each argument to slice (int, or a tuple with None for unsliced args).
        out_axes: axis of each output along which the chunks are concatenated.
    """
    from . import ops

    if int(chunk_size) < 1:
        raise ValueError(f"chunk_map: chunk_size must be >= 1, got {chunk_size}")
    chunk_size = int(chunk_size)

    def wrapper(*args):
        axes = list(in_axes) if isinstance(in_axes, (tuple, list)) else [in_axes] * len(args)
        if len(axes) != len(args):
            raise ValueError(
                f"chunk_map: in_axes has {len(axes)} entries for {len(args)} arguments"
            )
        sizes = {a.shape[ax] for a, ax in zip(args, axes, strict=True) if ax is not None}
        if not sizes:
            raise ValueError("chunk_map: in_axes slices no argument")
        if len(sizes) != 1:
            raise ValueError(f"chunk_map: sliced axes have sizes {sorted(sizes)}; they must agree")
        n = sizes.pop()
        if n <= chunk_size:
            return fn(*args)  # one chunk (or an empty axis): nothing to split
        pieces = []
        for start in range(0, n, chunk_size):
            stop = min(start + chunk_size, n)
            sliced = [
                a if ax is None else ops.slice_axis(a, ax, start, stop)
                for a, ax in zip(args, axes, strict=True)
            ]
            pieces.append(_tree.flatten(fn(*sliced)))
        treedef = pieces[0][1]
        n_leaves = len(pieces[0][0])
        oaxes = list(out_axes) if isinstance(out_axes, (tuple, list)) else [out_axes] * n_leaves
        joined = [ops.concat([p[0][k] for p in pieces], axis=oaxes[k]) for k in range(n_leaves)]
        return _tree.unflatten(treedef, joined)

    return wrapper
