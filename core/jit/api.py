"""``core.jit``: trace once per input signature, optimize, lower to Python, run compiled."""

import functools

import numpy as np

from .. import backend as _backend
from .. import tree as _tree
from ..primitive import ShapedArray, trace_stack
from ..tensor import Tensor
from .codegen import lower
from .passes import run_passes
from .trace import JitTrace, JitTracer


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

    def params_still_match(self):
        return tuple((tuple(p._value.shape), p._value.dtype) for p in self.params_read) == self.param_sig

    def run(self, arrays):
        arrays = list(arrays) + [p._value for p in self.params_read]
        results = self.lowered.fn(*arrays)
        outs = results[: self.n_out]
        for p, value in zip(self.params_written, results[self.n_out :]):
            p._value = value if isinstance(value, np.ndarray) or type(value) is not np.generic else np.asarray(value)
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

    Tensor arguments (and numpy arrays) are dynamic: one compilation per combination of
    shapes, dtypes and devices. Other arguments (Python numbers, strings, tuples) and the
    arguments named in ``static_argnums``/``static_argnames`` are static: part of the cache
    key, baked into the graph.
    """

    def __init__(self, fn, static_argnums=(), static_argnames=(), passes=None):
        self.fn = fn
        self.static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        self.static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        self.passes = passes
        self._cache = {}
        self.trace_count = 0
        functools.update_wrapper(self, fn, updated=())

    def _split(self, args, kwargs):
        """(cache key, dynamic tensor leaves, a function rebuilding args from tracers)."""
        dyn, key = [], []
        rebuild = []
        for i, a in enumerate(args):
            if i in self.static_argnums:
                key.append(("static", _hashable(a)))
                rebuild.append(("static", a))
                continue
            leaves, treedef = _tree.flatten(a)
            spec = []
            for leaf in leaves:
                if isinstance(leaf, np.ndarray):
                    leaf = Tensor(leaf)
                if isinstance(leaf, Tensor):
                    if type(leaf).__mro__[0] is not Tensor and not hasattr(leaf, "_value"):
                        raise TypeError("core.jit: traced tensors cannot be passed to a compiled function")
                    dyn.append(leaf)
                    spec.append(("t", tuple(leaf.shape), leaf.dtype, _device(leaf)))
                else:
                    spec.append(("s", _hashable(leaf)))
            key.append((treedef_key(treedef), tuple(spec)))
            rebuild.append(("tree", treedef, leaves))
        kw_items = []
        for name in sorted(kwargs):
            v = kwargs[name]
            if isinstance(v, Tensor) and name not in self.static_argnames:
                dyn.append(v)
                kw_items.append((name, ("t", tuple(v.shape), v.dtype, _device(v))))
            else:
                kw_items.append((name, ("s", _hashable(v))))
        key.append(tuple(kw_items))
        return tuple(key), dyn, rebuild

    def __call__(self, *args, **kwargs):
        if trace_stack():
            # inside another transformation (grad of jit, vmap of jit): trace through inline
            return self.fn(*args, **kwargs)
        key, dyn, rebuild = self._split(args, kwargs)
        entry = self._cache.get(key)
        if entry is None or not entry.params_still_match():
            entry = self._compile(key, args, kwargs, dyn, rebuild)
        return entry.run([t._value for t in dyn])

    def lower(self, *args, **kwargs):
        """Trace and compile for these arguments; ``.as_text()`` prints the optimized IR and
        ``.source`` the generated Python."""
        key, dyn, rebuild = self._split(args, kwargs)
        entry = self._cache.get(key) or self._compile(key, args, kwargs, dyn, rebuild)
        return entry.lowered

    def _compile(self, key, args, kwargs, dyn, rebuild):
        self.trace_count += 1
        with JitTrace() as trace:
            tracers = [trace.new_input(ShapedArray(t.shape, t.dtype)) for t in dyn]
            it = iter(tracers)
            new_args = []
            for kind, *rest in rebuild:
                if kind == "static":
                    new_args.append(rest[0])
                else:
                    treedef, leaves = rest
                    new_leaves = [next(it) if isinstance(leaf, (Tensor, np.ndarray)) else leaf for leaf in leaves]
                    new_args.append(_tree.unflatten(treedef, new_leaves))
            new_kwargs = {}
            for name in sorted(kwargs):
                v = kwargs[name]
                new_kwargs[name] = next(it) if isinstance(v, Tensor) and name not in self.static_argnames else v
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
        graph = run_passes(graph, self.passes)
        backend = _backend.backend_of(dyn[0]._value) if dyn else _backend.current()
        lowered = lower(graph, backend)
        entry = _Entry(lowered, params_read, [p for p, _ in written], out_treedef, out_static, len(out_vars))
        self._cache[key] = entry
        return entry


def _device(t):
    return type(t._value)


def _hashable(v):
    try:
        hash(v)
        return v
    except TypeError:
        raise TypeError(
            f"core.jit: argument of type {type(v).__name__} is neither a Tensor nor hashable; "
            "pass tensors, Python numbers/strings/tuples, or mark it static with a hashable value"
        ) from None


def treedef_key(treedef):
    return repr(treedef)


def jit(fn=None, *, static_argnums=(), static_argnames=(), passes=None):
    """Compile ``fn`` (a function or a Cell) into a graph; usable as ``@core.jit`` too.

    Example:
        >>> f = core.jit(lambda x: core.ops.tanh(x) * 2.0)
        >>> print(f.lower(core.ones((3,))).as_text())
    """
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames, passes=passes)
    if isinstance(fn, JitFunction):
        return fn
    from ..nn.cell import Cell

    if isinstance(fn, Cell):
        cell = fn
        jf = JitFunction(lambda *a, **k: cell(*a, **k), static_argnums, static_argnames, passes)
        jf.__name__ = type(cell).__name__
        return jf
    return JitFunction(fn, static_argnums, static_argnames, passes)


__all__ = ["JitFunction", "JitTracer", "jit"]
