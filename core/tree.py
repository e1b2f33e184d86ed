"""Pytrees: nested containers whose leaves are tensors (or anything else).

A pytree is a leaf or a node. Nodes are tuples, lists, dicts, NamedTuples, None (a node with
no children) and the classes registered here (``register_dataclass``,
``register_pytree_node``); everything else is a leaf. ``flatten`` returns the leaves in a
fixed order plus a ``PyTreeDef`` that describes the rest; ``unflatten`` rebuilds the tree
around new leaves. This is how every transform (grad, vmap, jit, recompute, chunk_map, the
control-flow ops, checkpoints) walks its arguments, so a registered state class flows through
all of them.

Treedefs compare equal and hash equal for equal structures (``core.jit`` uses them in its
cache keys); a registered node's auxiliary data must therefore be hashable.

Example:
    >>> @core.tree.register_dataclass
    ... @dataclasses.dataclass
    ... class State:
    ...     u: core.Tensor
    ...     t: core.Tensor
    ...     dx: float = dataclasses.field(default=0.1, metadata={"static": True})
    >>> leaves, treedef = core.tree.flatten(State(core.ones(3), core.tensor(0.0)))
    >>> len(leaves), treedef
    (2, PyTreeDef(State(u=*, t=*, dx=0.1)))
"""

import dataclasses

__all__ = [
    "LEAF",
    "PyTreeDef",
    "axes_per_leaf",
    "broadcast_prefix",
    "flatten",
    "is_registered",
    "register_dataclass",
    "register_pytree_node",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_map",
    "tree_structure",
    "tree_unflatten",
    "unflatten",
]


class _Node:
    """How a registered class is taken apart and rebuilt."""

    __slots__ = ("flatten", "keys", "name", "unflatten")

    def __init__(self, flatten_fn, unflatten_fn, name=None, keys=None):
        self.flatten = flatten_fn  # obj -> (children, aux)
        self.unflatten = unflatten_fn  # (aux, children) -> obj
        self.name = name  # for repr: a function of (aux, children's reprs), or None
        self.keys = keys  # the children's names (a dataclass's data fields), or None: 0, 1, ...


# type -> _Node; read by flatten (exact type, as in JAX: a subclass is registered on its own)
_registry = {}


class PyTreeDef:
    """The structure of a pytree without its leaves.

    ``kind`` is the node's type (``tuple``, ``list``, ``dict``, a NamedTuple or registered
    class), ``type(None)`` for None, or None for a leaf; ``aux`` what the node keeps beside
    its children (a dict's keys, a dataclass's static fields); ``children`` the treedefs of
    its children; ``num_leaves`` how many leaves ``unflatten`` expects.
    """

    __slots__ = ("_hash", "aux", "children", "kind", "num_leaves")

    def __init__(self, kind, aux, children, num_leaves=None):
        self.kind = kind
        self.aux = aux
        self.children = children
        if num_leaves is None:
            num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)
        self.num_leaves = num_leaves
        self._hash = None

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return (
            self.kind is other.kind
            and self.num_leaves == other.num_leaves
            and self.aux == other.aux
            and self.children == other.children
        )

    def __hash__(self):
        # cached: jit hashes the treedef of every argument on every call
        if self._hash is None:
            try:
                self._hash = hash((self.kind, self.aux, self.children))
            except TypeError:
                raise TypeError(
                    f"pytree node {self.kind.__name__}: its static (aux) data {self.aux!r} is "
                    "not hashable; static fields must be hashable (use a tuple, not a list)"
                ) from None
        return self._hash

    def unflatten(self, leaves):
        """Rebuild the tree with ``leaves`` (a sequence of ``num_leaves`` items)."""
        return unflatten(self, leaves)

    def __repr__(self):
        return f"PyTreeDef({self._body()})"

    def _body(self):
        kind = self.kind
        if kind is None:
            return "*"
        if kind is type(None):
            return "None"
        parts = [c._body() for c in self.children]
        if kind is dict:
            return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(self.aux, parts)) + "}"
        if kind is list:
            return "[" + ", ".join(parts) + "]"
        if kind is tuple:
            return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        node = _registry.get(kind)
        if node is not None and node.name is not None:
            return f"{kind.__name__}({node.name(self.aux, parts)})"
        fields = getattr(kind, "_fields", None)
        if fields is not None and len(fields) == len(parts):
            return f"{kind.__name__}(" + ", ".join(f"{f}={p}" for f, p in zip(fields, parts)) + ")"
        aux = "" if self.aux is None else f"; {self.aux!r}"
        return f"{kind.__name__}({', '.join(parts)}{aux})"


LEAF = PyTreeDef(None, None, ())
_NONE = PyTreeDef(type(None), None, ())


def flatten(tree):
    """Return ``(leaves, treedef)``; ``unflatten(treedef, leaves)`` rebuilds the tree.

    Leaves come depth first, children in order (dicts in insertion order, dataclasses in field
    order).
    """
    leaves = []
    treedef = _flatten(tree, leaves)
    return leaves, treedef


def _flatten(tree, leaves):
    kind = type(tree)
    # exact builtin types first: they are most of what transforms see
    if kind is tuple or kind is list:
        n = len(leaves)
        children = tuple([_flatten(t, leaves) for t in tree])
        return PyTreeDef(kind, None, children, len(leaves) - n)
    if kind is dict:
        n = len(leaves)
        keys = tuple(tree)
        children = tuple([_flatten(tree[k], leaves) for k in keys])
        return PyTreeDef(dict, keys, children, len(leaves) - n)
    if tree is None:
        return _NONE
    node = _registry.get(kind)
    if node is not None:
        n = len(leaves)
        items, aux = node.flatten(tree)
        children = tuple([_flatten(c, leaves) for c in items])
        return PyTreeDef(kind, aux, children, len(leaves) - n)
    if isinstance(tree, (tuple, list)):  # NamedTuples and other list/tuple subclasses
        n = len(leaves)
        children = tuple([_flatten(t, leaves) for t in tree])
        return PyTreeDef(kind, None, children, len(leaves) - n)
    if isinstance(tree, dict):  # dict subclasses are rebuilt as plain dicts
        n = len(leaves)
        keys = tuple(tree)
        children = tuple([_flatten(tree[k], leaves) for k in keys])
        return PyTreeDef(dict, keys, children, len(leaves) - n)
    leaves.append(tree)
    return LEAF


def unflatten(treedef, leaves):
    """Rebuild the tree that ``treedef`` describes with ``leaves`` in flatten's order.

    Registered classes are rebuilt by their ``unflatten_fn``; dataclasses registered with
    ``register_dataclass`` without calling ``__init__``/``__post_init__`` (their leaves may be
    tracers or gradients).
    """
    if not isinstance(treedef, PyTreeDef):
        raise TypeError(f"unflatten: expected a PyTreeDef, got {type(treedef).__name__}")
    if hasattr(leaves, "__len__") and len(leaves) != treedef.num_leaves:
        raise ValueError(
            f"unflatten: {treedef} takes {treedef.num_leaves} leaves, got {len(leaves)}"
        )
    it = iter(leaves)
    return _unflatten(treedef, it)


def _unflatten(treedef, it):
    kind = treedef.kind
    if kind is None:
        return next(it)
    items = [_unflatten(c, it) for c in treedef.children]
    if kind is tuple or kind is list:
        return kind(items)
    if kind is dict:
        return dict(zip(treedef.aux, items))
    if kind is type(None):
        return None
    node = _registry.get(kind)
    if node is not None:
        return node.unflatten(treedef.aux, items)
    if hasattr(kind, "_fields"):
        return kind(*items)  # NamedTuple
    return kind(items)  # another tuple/list subclass


def tree_structure(tree):
    """The ``PyTreeDef`` of ``tree``."""
    return flatten(tree)[1]


def tree_leaves(tree):
    """The leaves of ``tree`` in flatten's order."""
    return flatten(tree)[0]


def tree_flatten_with_path(tree):
    """``([(path, leaf)], treedef)``: each leaf with the keys that lead to it from the root, a
    tuple of dict keys, sequence indices and field names (dataclass, NamedTuple). Checkpoints
    name a state's tensors ``".".join(map(str, path))``: ``"flux.rho"``."""
    leaves, treedef = flatten(tree)
    paths = []
    _paths(tree, (), paths)
    return list(zip(paths, leaves, strict=True)), treedef


def _paths(tree, prefix, out):
    parts = _node_parts(tree)
    if parts is None:
        out.append(prefix)
        return
    kind, aux, children = parts
    node = _registry.get(kind)
    if kind is dict:
        keys = aux
    elif node is not None and node.keys is not None:
        keys = node.keys
    else:
        keys = getattr(kind, "_fields", None) or range(len(children))
    for k, child in zip(keys, children, strict=True):
        _paths(child, (*prefix, k), out)


def tree_map(fn, tree, *rest):
    """``fn`` applied leaf-wise: ``fn(leaf, *matching leaves of rest)``, in ``tree``'s structure.

    Every tree in ``rest`` must have the same structure as ``tree``.
    """
    leaves, treedef = flatten(tree)
    if not rest:
        return unflatten(treedef, [fn(x) for x in leaves])
    others = []
    for k, r in enumerate(rest):
        r_leaves, r_def = flatten(r)
        if r_def != treedef:
            raise ValueError(
                f"tree_map: tree {k + 1} has structure {r_def}, the first tree has {treedef}"
            )
        others.append(r_leaves)
    return unflatten(treedef, [fn(x, *ys) for x, *ys in zip(leaves, *others)])


def broadcast_prefix(prefix, tree, is_leaf=None):
    """One value per leaf of ``tree``, read from ``prefix``, a tree whose structure is a
    prefix of ``tree``'s: each leaf of ``prefix`` is repeated for every leaf of the subtree it
    stands for (how ``vmap`` reads ``in_axes=(0, None)`` or an axis per dataclass field).

    ``is_leaf(x)`` True marks a node of ``prefix`` as a leaf (``vmap`` passes ``x is None``,
    since None there means "not mapped"). A tuple or list in ``prefix`` matches any tuple or
    list (NamedTuples too) of the same length. Raises ValueError when the structures disagree.
    """
    out = []
    _broadcast(prefix, tree, is_leaf, out, "")
    return out


def axes_per_leaf(spec, tree, what):
    """One axis (an int or None) per leaf of ``tree``, for ``vmap``'s and ``chunk_map``'s
    ``in_axes``/``out_axes``: ``spec`` is an int or None for every leaf, a pytree matching a
    prefix of ``tree``'s structure (None in it means "not mapped"), or a flat tuple with one
    entry per leaf. ``what`` (e.g. "vmap: in_axes") starts the error message."""
    try:
        return broadcast_prefix(spec, tree, is_leaf=lambda s: s is None)
    except ValueError as e:
        treedef = tree_structure(tree)
        if isinstance(spec, (list, tuple)) and len(spec) == treedef.num_leaves:
            if all(s is None or isinstance(s, int) for s in spec):
                return list(spec)
        raise ValueError(f"{what} {spec} does not match the structure {treedef}: {e}") from None


def _broadcast(prefix, tree, is_leaf, out, path):
    p_node = None if is_leaf is not None and is_leaf(prefix) else _node_parts(prefix)
    if p_node is None:
        out.extend([prefix] * flatten(tree)[1].num_leaves)
        return
    t_node = _node_parts(tree)
    if t_node is None or not _same_node(p_node, t_node):
        raise ValueError(
            f"the prefix {_short(prefix)} at {path or 'the root'} does not match the tree's "
            f"structure there: {flatten(tree)[1]}"
        )
    for k, (p, t) in enumerate(zip(p_node[2], t_node[2], strict=True)):
        _broadcast(p, t, is_leaf, out, f"{path}[{k}]")


def _same_node(p_node, t_node):
    # a tuple or list prefix matches any tuple or list (NamedTuples too) of its length:
    # in_axes=(0, None) for a list argument
    if p_node[0] in (tuple, list) and issubclass(t_node[0], (tuple, list)):
        return len(p_node[2]) == len(t_node[2])
    return t_node[0] is p_node[0] and t_node[1] == p_node[1]


def _node_parts(x):
    """``(kind, aux, children)`` of ``x``'s top node, or None when ``x`` is a leaf."""
    kind = type(x)
    node = _registry.get(kind)
    if node is not None:
        children, aux = node.flatten(x)
        return kind, aux, list(children)
    if isinstance(x, (tuple, list)):
        return kind, None, list(x)
    if isinstance(x, dict):
        return dict, tuple(x), [x[k] for k in x]
    if x is None:
        return type(None), None, []
    return None


def _short(x):
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


tree_flatten = flatten
tree_unflatten = unflatten


# ---- registration ----------------------------------------------------------------------------


def register_pytree_node(cls, flatten_fn, unflatten_fn):
    """Make instances of ``cls`` pytree nodes (JAX's contract).

    Args:
        cls: the class (exact type: subclasses are registered separately).
        flatten_fn: ``obj -> (children, aux_data)``; children an iterable of subtrees, aux_data
            hashable and comparable (it is part of the treedef).
        unflatten_fn: ``(aux_data, children) -> obj``; children a list in flatten_fn's order,
            whose leaves may be tracers, gradients or placeholders.
    """
    _check_registrable(cls, "register_pytree_node")
    _registry[cls] = _Node(flatten_fn, unflatten_fn)
    return cls


def register_dataclass(cls=None, data_fields=None, meta_fields=None):
    """Make a dataclass a pytree node: its data fields are children, its meta fields static.

    Usable as ``register_dataclass(cls, ...)`` and as a decorator placed above
    ``@dataclasses.dataclass`` (frozen or not). By default every field is data except those
    declared with ``dataclasses.field(metadata={"static": True})`` or named in
    ``meta_fields``; giving ``data_fields`` makes every other field static. Static fields
    become part of the treedef (so ``core.jit`` retraces when they change) and must be
    hashable. Instances are rebuilt without calling ``__init__``/``__post_init__``.

    Args:
        cls: a dataclass (or None, to return a decorator).
        data_fields: names of the fields that hold tensors (or None: inferred).
        meta_fields: names of static fields (Python numbers, strings, tuples...).
    """
    if cls is None:
        return lambda c: register_dataclass(c, data_fields, meta_fields)
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(
            f"register_dataclass: {getattr(cls, '__name__', cls)!r} is not a dataclass class; "
            "put @register_dataclass above @dataclasses.dataclass, or use register_pytree_node"
        )
    _check_registrable(cls, "register_dataclass")
    data, meta = _split_fields(cls, data_fields, meta_fields)

    def flatten_fn(obj):
        return [getattr(obj, n) for n in data], tuple(getattr(obj, n) for n in meta)

    def unflatten_fn(aux, children):
        obj = object.__new__(cls)
        # object.__setattr__: frozen dataclasses refuse setattr, and __init__ may validate or
        # convert what it gets (a tracer, a gradient) in ways that do not hold for them
        for n, v in zip(data, children, strict=True):
            object.__setattr__(obj, n, v)
        for n, v in zip(meta, aux, strict=True):
            object.__setattr__(obj, n, v)
        return obj

    def name(aux, parts):
        items = [f"{n}={p}" for n, p in zip(data, parts)]
        items += [f"{n}={v!r}" for n, v in zip(meta, aux)]
        return ", ".join(items)

    _registry[cls] = _Node(flatten_fn, unflatten_fn, name, data)
    return cls


def _split_fields(cls, data_fields, meta_fields):
    names = [f.name for f in dataclasses.fields(cls)]
    marked = {f.name for f in dataclasses.fields(cls) if f.metadata.get("static", False)}
    for arg, given in (("data_fields", data_fields), ("meta_fields", meta_fields)):
        if isinstance(given, str):
            raise TypeError(f"register_dataclass({cls.__name__}): {arg} must be a list of names")
        unknown = [n for n in given or () if n not in names]
        if unknown:
            raise ValueError(
                f"register_dataclass({cls.__name__}): {arg} names {unknown}, which are not "
                f"fields (fields: {names})"
            )
    if data_fields is not None:
        data = [n for n in names if n in set(data_fields)]
        meta = [n for n in names if n not in set(data_fields)]
        clash = sorted(set(data) & (set(meta_fields or ()) | marked))
        if clash:
            raise ValueError(
                f"register_dataclass({cls.__name__}): fields {clash} are both data and static"
            )
    else:
        static = set(meta_fields or ()) | marked
        data = [n for n in names if n not in static]
        meta = [n for n in names if n in static]
    return tuple(data), tuple(meta)


def _check_registrable(cls, who):
    if not isinstance(cls, type):
        raise TypeError(f"{who}: expected a class, got {type(cls).__name__}")
    if cls in (tuple, list, dict, type(None)):
        raise ValueError(f"{who}: {cls.__name__} is a built-in pytree node already")
    if cls in _registry:
        raise ValueError(f"{who}: {cls.__name__} is registered already")


def is_registered(cls):
    """Whether ``cls`` is a registered pytree node class."""
    return cls in _registry
