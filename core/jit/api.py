"""``core.jit``: trace once per input signature, optimize, lower to Python, run compiled."""

import dataclasses
import functools
import inspect

import numpy as np

from .. import backend as _backend
from .. import tree as _tree
from ..primitive import ShapedArray, Tracer, trace_stack
from ..tensor import Parameter, Tensor
from .codegen import lower
from .passes import run_passes
from .trace import JitTrace, JitTracer

_graph_mode = [False]  # set_context(mode=GRAPH_MODE) turns it on (core.context)


def set_graph_mode(on):
    """MindSpore's GRAPH_MODE: Cells and grad functions called from outside any
    transformation compile through ``core.jit`` (see :func:`graph_mode_dispatch`)."""
    _graph_mode[0] = bool(on)


def graph_mode():
    """True while GRAPH_MODE is on (``set_context(mode=GRAPH_MODE)``)."""
    return _graph_mode[0]


def graph_mode_dispatch(fn):
    """``fn`` that, in GRAPH_MODE and called from outside any transformation, runs compiled by
    ``core.jit`` (once per input signature); otherwise, and inside jit/grad/vmap, as is."""
    compiled = []

    def dispatch(*args):
        if _graph_mode[0] and not trace_stack():
            if not compiled:
                compiled.append(jit(fn))
            return compiled[0](*args)
        return fn(*args)

    dispatch.__wrapped__ = fn
    return dispatch


class _Entry:
    """One compiled specialization: the lowered graph plus how to feed and unpack it."""

    def __init__(self, lowered, params_read, params_written, out_treedef, out_static, n_out):
        self.lowered = lowered
        self.params_read = params_read
        self.params_written = params_written
        self.out_treedef = out_treedef
        self.out_static = out_static  # per output leaf: None (tensor) or a static Python value
        self.n_out = n_out
        self.param_sig = tuple((tuple(p.shape), p.dtype) for p in params_read)
        self.cells, self.cell_state = (), ()
        self.bindings = ()

    def still_valid(self):
        """False when a Parameter changed shape/dtype, a Cell the function reaches changed
        training mode or had a Parameter or sub-cell replaced, or a global or closure variable
        the function reads was rebound (``net = Net()`` again, ``scale = 3.0``)."""
        if (
            tuple((tuple(p._value.shape), p._value.dtype) for p in self.params_read)
            != self.param_sig
        ):
            return False
        return _bindings_hold(self.bindings) and _cell_state(self.cells) == self.cell_state

    def run(self, arrays):
        arrays = list(arrays) + [p._value for p in self.params_read]
        results = self.lowered.fn(*arrays)
        outs = results[: self.n_out]
        for p, value in zip(self.params_written, results[self.n_out :], strict=True):
            p._value = (
                value
                if isinstance(value, np.ndarray) or type(value) is not np.generic
                else np.asarray(value)
            )
            if not hasattr(p._value, "shape") or isinstance(p._value, np.generic):
                p._value = np.asarray(p._value)
        leaves, k = [], 0
        for s in self.out_static:
            if s is None:
                v = outs[k]
                k += 1
                if isinstance(v, np.generic):
                    v = np.asarray(v)
                leaves.append(Tensor._wrap(v))
            else:
                leaves.append(s[0])
        return _tree.unflatten(self.out_treedef, leaves)


class JitFunction:
    """A function compiled by ``core.jit``; call it like the original.

    Tensor arguments (and numpy arrays), also inside pytrees (tuples/lists/dicts, NamedTuples,
    classes registered with ``core.tree.register_dataclass``) and keyword arguments, are
    dynamic: one compilation per combination of tree structures, shapes, dtypes and devices.
    Other arguments (Python numbers, strings, tuples) and the arguments named in
    ``static_argnums``/``static_argnames`` are static: part of the cache key (with their
    type: ``2`` and ``2.0`` compile separately), baked into the graph. A static value must be
    hashable and hold no Tensor (that would bake the tensor in and retrace on every new one):
    either is an error that names the argument. The Cells the function
    reaches (itself, ``self``, closures, globals it names) are watched too: a new training
    mode (``set_train``) or a replaced Parameter or sub-cell retraces. So does rebinding a
    global or closure variable that the function (or a function it calls by name) reads:
    ``net = Net()`` again, ``scale = 3.0``; mutating a list or dict in place is not seen.
    ``trace_count`` counts the compilations.
    """

    def __init__(self, fn, static_argnums=(), static_argnames=(), passes=None):
        self.fn = fn
        self.static_argnums = (
            (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        )
        self.static_argnames = (
            (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        )
        self.passes = passes
        self._cache = {}  # key -> [_Entry] (several when Parameter shapes or Cell modes differ)
        self.trace_count = 0
        self._names, self._positions = _static_maps(fn, self.static_argnums, self.static_argnames)
        functools.update_wrapper(self, fn, updated=())

    def __get__(self, instance, owner=None):
        """As a method (``@core.jit`` on a Cell method): ``self`` is a static argument."""
        if instance is None:
            return self
        return functools.partial(self, instance)

    def _is_static_pos(self, i, n):
        return i in self._positions or (i - n) in self.static_argnums

    def _split(self, args, kwargs):
        """(cache key, dynamic tensor leaves, a function rebuilding args from tracers)."""
        dyn, key = [], []
        rebuild = []
        n = len(args)
        for i, a in enumerate(args):
            if self._is_static_pos(i, n):
                key.append(("static", _hashable(a, self, i)))
                rebuild.append(("static", a))
                continue
            key.append(self._dynamic(a, dyn, rebuild, i))
        for name in sorted(kwargs):
            v = kwargs[name]
            if name in self._names:
                key.append((name, "static", _hashable(v, self, name)))
                rebuild.append(("static", v))
                continue
            key.append((name, self._dynamic(v, dyn, rebuild, name)))
        return tuple(key), dyn, rebuild

    def _dynamic(self, a, dyn, rebuild, where):
        leaves, treedef = _tree.flatten(a)
        spec = []
        for leaf in leaves:
            if isinstance(leaf, np.ndarray):
                leaf = Tensor(leaf)
            if isinstance(leaf, Tensor):
                if isinstance(leaf, Tracer):
                    raise TypeError(
                        "core.jit: a traced tensor was passed to a compiled function outside of "
                        "the transformation that made it"
                    )
                dyn.append(leaf)
                spec.append(("t", tuple(leaf.shape), leaf.dtype, _device(leaf)))
            else:
                spec.append(("s", _hashable(leaf, self, where)))
        rebuild.append(("tree", treedef, leaves))
        return (treedef, tuple(spec))

    def _lookup(self, key):
        for entry in self._cache.get(key, ()):
            if entry.still_valid():
                return entry
        return None

    def __call__(self, *args, **kwargs):
        if trace_stack():
            # inside another transformation (grad of jit, vmap of jit): trace through inline
            return self.fn(*args, **kwargs)
        key, dyn, rebuild = self._split(args, kwargs)
        entry = self._lookup(key)
        if entry is None:
            entry = self._compile(key, args, kwargs, dyn, rebuild)
        return entry.run([t._value for t in dyn])

    def lower(self, *args, **kwargs):
        """Trace and compile for these arguments; ``.as_text()`` prints the optimized IR and
        ``.source`` the generated Python."""
        key, dyn, rebuild = self._split(args, kwargs)
        entry = self._lookup(key) or self._compile(key, args, kwargs, dyn, rebuild)
        return entry.lowered

    def _compile(self, key, args, kwargs, dyn, rebuild):
        # only here, once per cache key: a key that compiled holds no Tensor in its statics
        self._check_static_tensors(args, kwargs)
        cells, bindings = _reach(self.fn)
        self.trace_count += 1
        with JitTrace() as trace:
            tracers = [trace.new_input(ShapedArray(t.shape, t.dtype)) for t in dyn]
            it = iter(tracers)
            new_parts = []
            for kind, *rest in rebuild:
                if kind == "static":
                    new_parts.append(rest[0])
                else:
                    treedef, leaves = rest
                    new_leaves = [
                        next(it) if isinstance(leaf, (Tensor, np.ndarray)) else leaf
                        for leaf in leaves
                    ]
                    new_parts.append(_tree.unflatten(treedef, new_leaves))
            new_args = new_parts[: len(args)]
            new_kwargs = dict(zip(sorted(kwargs), new_parts[len(args) :], strict=True))
            out = self.fn(*new_args, **new_kwargs)
            out_leaves, out_treedef = _tree.flatten(out)
            out_vars, out_static = [], []
            for leaf in out_leaves:
                if isinstance(leaf, Tensor):
                    out_vars.append(trace.to_var(leaf))
                    out_static.append(None)
                else:
                    out_static.append((leaf,))
            written = list(trace.param_updates.values())
            update_vars = [t.var for _, t in written]
            params_read = [p for p, _ in trace.param_inputs]
            inputs = list(trace.inputs) + [v for _, v in trace.param_inputs]
            eqns = trace.eqns
        from .ir import Graph

        graph = Graph(inputs, eqns, out_vars + update_vars).verify()
        backend = _backend.backend_of(dyn[0]._value) if dyn else _backend.current()
        graph = run_passes(graph, self.passes, backend)
        lowered = lower(graph, backend)
        entry = _Entry(
            lowered, params_read, [p for p, _ in written], out_treedef, out_static, len(out_vars)
        )
        entry.cells = cells
        entry.cell_state = _cell_state(cells)
        entry.bindings = bindings
        self._cache.setdefault(key, []).append(entry)
        return entry

    def _check_static_tensors(self, args, kwargs):
        """Raise when a static value (a static argument, or a non-pytree leaf of a dynamic
        one) holds a Tensor: the graph would bake in its value and retrace for every new one."""
        n = len(args)
        parts = [(i, a, self._is_static_pos(i, n)) for i, a in enumerate(args)]
        parts += [(k, v, k in self._names) for k, v in sorted(kwargs.items())]
        for where, value, static in parts:
            statics = [value] if static else _tree.flatten(value)[0]
            for v in statics:
                if static or not isinstance(v, (Tensor, np.ndarray)):
                    path = _tensor_path(v)
                    if path is not None:
                        raise TypeError(_static_tensor_message(self, where, v, path, static))

    def _describe(self, where):
        """'argument 0 (state)' or 'argument 'state'' for error messages."""
        if isinstance(where, str):
            return f"argument {where!r}"
        try:
            names = [
                p.name
                for p in inspect.signature(self.fn).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
        except (TypeError, ValueError):
            names = []
        return f"argument {where} ({names[where]})" if where < len(names) else f"argument {where}"


def _tensor_path(v, depth=0, seen=None):
    """Where a Tensor (not a Parameter: jit reads those as graph inputs) sits inside ``v``:
    '' for ``v`` itself, '.u' or '[0]' inside it; None if there is none. Looks through
    containers and dataclasses, not into Cells (their plain attributes are graph constants by
    design) or other objects."""
    if isinstance(v, Tensor):
        return None if isinstance(v, Parameter) else ""
    if v is None or depth > 8 or _watched(v):
        return None
    if isinstance(v, (type, str, bytes, int, float, complex)):
        return None
    seen = set() if seen is None else seen
    if id(v) in seen:
        return None
    seen.add(id(v))
    if isinstance(v, dict):
        items = [(f"[{k!r}]", x) for k, x in v.items()]
    elif isinstance(v, (tuple, list, set, frozenset)):
        items = [(f"[{k}]", x) for k, x in enumerate(v)]
    elif dataclasses.is_dataclass(v):
        items = [(f".{f.name}", getattr(v, f.name, None)) for f in dataclasses.fields(v)]
    else:
        return None
    for label, x in items:
        sub = _tensor_path(x, depth + 1, seen)
        if sub is not None:
            return label + sub
    return None


def _static_tensor_message(jf, where, value, path, static):
    head = f"core.jit({getattr(jf.fn, '__name__', 'fn')}): {jf._describe(where)}"
    inside = f" (at {type(value).__name__}{path})" if path else ""
    bake = "static values are baked into the graph, and every new tensor would retrace"
    if static:
        return (
            f"{head} is static (static_argnums/static_argnames) but contains a Tensor{inside}; "
            f"{bake}. Pass it as a traced argument: take it out of static_argnums/"
            "static_argnames (a class holding tensors must be registered with "
            "core.tree.register_dataclass)"
        )
    return (
        f"{head} holds an instance of {type(value).__name__}, which is not a registered "
        f"pytree, so jit treats it as a static value, but it contains a Tensor{inside}; {bake}. "
        "Pass it as a traced argument: register the class with core.tree.register_dataclass "
        "(or core.tree.register_pytree_node) so its tensor fields become traced leaves"
    )


def _static_maps(fn, nums, names):
    """(names of static arguments, positions of static arguments), each completed from the
    other through ``fn``'s signature when it has one."""
    names, positions = set(names), {i for i in nums if i >= 0}
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return names, positions
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for i in nums:
        if -len(positional) <= i < len(positional):
            names.add(positional[i])
            positions.add(i % len(positional))
    for k, name in enumerate(positional):
        if name in names:
            positions.add(k)
    return names, positions


def _reach(fn, limit=2000):
    """What a trace of ``fn`` depends on besides its arguments: ``(cells, bindings)``.

    cells: the Cells reachable from ``fn``: itself, bound ``self``, closure variables and the
    globals it names, recursively through functions, partials, Cells and their sub-cells.
    bindings: ``(namespace, name, value)`` for every global (namespace a dict) and closure
    variable (namespace a closure cell, name None) those functions read, modules aside. The
    graph baked their values in (a constant tensor, a Python number) or reached Parameters
    through them (a Cell), so rebinding one must retrace.
    """
    found, bindings, seen, stack = [], [], set(), [fn]
    while stack and len(seen) < limit:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if _watched(obj):
            found.append(obj)
            stack.extend(obj.__dict__.values())
        elif isinstance(obj, (list, tuple)):
            stack.extend(o for o in obj if callable(o) or isinstance(o, (list, tuple)))
        elif isinstance(obj, functools.partial):
            stack.extend((obj.func, *obj.args, *obj.keywords.values()))
        elif isinstance(obj, JitFunction):
            stack.append(obj.fn)
        elif inspect.ismethod(obj):
            stack.extend((obj.__self__, obj.__func__))
        elif inspect.isfunction(obj):
            for c in obj.__closure__ or ():
                try:
                    value = c.cell_contents
                except ValueError:  # an empty cell
                    continue
                bindings.append((c, None, value))
                stack.append(value)
            g = obj.__globals__
            for n in _code_names(obj.__code__):
                if n in g:
                    value = g[n]
                    if not inspect.ismodule(value):
                        bindings.append((g, n, value))
                    stack.append(value)
            if hasattr(obj, "__wrapped__"):
                stack.append(obj.__wrapped__)
        elif callable(obj) and hasattr(obj, "__dict__") and not isinstance(obj, type):
            stack.extend(v for v in vars(obj).values() if callable(v))
    return found, tuple(bindings)


_UNBOUND = object()
_VALUE_TYPES = (bool, int, float, complex, str, bytes)  # equal values are the same constant


def _bindings_hold(bindings):
    """Whether every recorded global/closure variable still holds its value (the same object,
    or an equal number or string)."""
    for namespace, name, value in bindings:
        if name is None:
            try:
                now = namespace.cell_contents
            except ValueError:
                return False
        else:
            now = namespace.get(name, _UNBOUND)
        if now is not value and not (
            type(now) is type(value) and type(value) in _VALUE_TYPES and now == value
        ):
            return False
    return True


def _code_names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if inspect.iscode(c):
            names |= _code_names(c)
    return names


def _watched(obj):
    """True for an object whose state a compiled graph depends on beyond its inputs: a
    ``core.nn.Cell``, or any object whose class defines ``__jit_state__()`` (what must stay
    equal for the graph to stay valid, e.g. a Cell's training mode and which Parameter and
    sub-cell objects it holds). jit watches it, searches its attributes for Parameters and
    more such objects, and never reads it as a static value that holds tensors."""
    return hasattr(type(obj), "__jit_state__")


def _cell_state(cells):
    """The ``__jit_state__()`` of each watched object (Cells) a graph depends on."""
    return tuple(c.__jit_state__() for c in cells)


def _device(t):
    return type(t._value)


def _hashable(v, jf, where):
    """``v`` as part of a cache key: ``(type, value)``, so ``2`` and ``2.0`` differ."""
    t = type(v)
    if t in _VALUE_TYPES or v is None:
        return (t, v)
    try:
        hash(v)
    except TypeError:
        raise TypeError(_unhashable_message(v, jf, where)) from None
    return (t, v)


def _unhashable_message(v, jf, where):
    head = f"core.jit({getattr(jf.fn, '__name__', 'fn')}): {jf._describe(where)}"
    name = type(v).__name__
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return (
            f"{head} holds an instance of the dataclass {name}, which is not a registered "
            "pytree, so jit would treat it as a static value, and it is not hashable (a mutable "
            "dataclass). Pass it as a traced argument: register the class with "
            "core.tree.register_dataclass "
            "(fields holding tensors become traced leaves; mark the others static with "
            'dataclasses.field(metadata={"static": True}))'
        )
    return (
        f"{head} holds a value of type {name}, which is neither a Tensor nor hashable (nor a "
        "pytree); pass tensors, Python numbers/strings/tuples, a class registered with "
        "core.tree.register_dataclass, or mark it static with a hashable value"
    )


def jit(fn=None, *, static_argnums=(), static_argnames=(), passes=None):
    """Compile ``fn`` (a function or a Cell) into a graph; usable as ``@core.jit`` too.

    Example:
        >>> f = core.jit(lambda x: core.ops.tanh(x) * 2.0)
        >>> print(f.lower(core.ones((3,))).as_text())
    """
    if fn is None:
        return functools.partial(
            jit, static_argnums=static_argnums, static_argnames=static_argnames, passes=passes
        )
    if isinstance(fn, JitFunction):
        return fn
    if _watched(fn):  # a Cell: compiled through its __call__, named after its class
        cell = fn
        jf = JitFunction(lambda *a, **k: cell(*a, **k), static_argnums, static_argnames, passes)
        jf.__name__ = type(cell).__name__
        return jf
    return JitFunction(fn, static_argnums, static_argnames, passes)


__all__ = ["JitFunction", "JitTracer", "jit"]
