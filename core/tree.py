"""Minimal pytrees: nested tuples, lists and dicts whose leaves are tensors (or anything)."""


class _Leaf:
    pass


LEAF = _Leaf()


def flatten(tree):
    """Return ``(leaves, treedef)``; ``unflatten(treedef, leaves)`` rebuilds the tree."""
    leaves = []
    treedef = _flatten(tree, leaves)
    return leaves, treedef


def _flatten(tree, leaves):
    if isinstance(tree, (tuple, list)) and not hasattr(tree, "_fields"):
        return (type(tree), tuple(_flatten(t, leaves) for t in tree))
    if isinstance(tree, tuple):  # namedtuple
        return (type(tree), tuple(_flatten(t, leaves) for t in tree))
    if isinstance(tree, dict):
        keys = tuple(tree.keys())
        return (dict, keys, tuple(_flatten(tree[k], leaves) for k in keys))
    if tree is None:
        return (None,)
    leaves.append(tree)
    return LEAF


def unflatten(treedef, leaves):
    it = iter(leaves)
    out = _unflatten(treedef, it)
    return out


def _unflatten(treedef, it):
    if treedef is LEAF:
        return next(it)
    kind = treedef[0]
    if kind is None:
        return None
    if kind is dict:
        return {k: _unflatten(d, it) for k, d in zip(treedef[1], treedef[2])}
    items = [_unflatten(d, it) for d in treedef[1]]
    if kind is tuple or kind is list:
        return kind(items)
    return kind(*items)  # namedtuple


def tree_map(fn, tree, *rest):
    leaves, treedef = flatten(tree)
    others = [flatten(r)[0] for r in rest]
    return unflatten(treedef, [fn(x, *ys) for x, *ys in zip(leaves, *others)])
