"""Lowering a Graph to Python source that calls the backend directly.

One line per equation, ``del`` after a value's last use, and buffer reuse: an elementwise
equation writes into a dead buffer of its shape and dtype (``out=``) instead of allocating.
"""

import re

from .. import backend as _backend
from .fusion import fused
from .lowering import lowering_of

# How each primitive is written (an ``xp`` ufunc that takes ``out=``, a method call, or a call
# of its implementation) and whether its result is a fresh buffer: its lowering record
# (core/jit/lowering.py).


class Lowered:
    """A compiled graph: ``fn(*input_arrays) -> tuple of output arrays``, and its source."""

    def __init__(self, graph, source, fn):
        self.graph = graph
        self.source = source
        self.fn = fn

    def as_text(self):
        """The optimized IR as text (see :meth:`core.jit.ir.Graph.as_text`)."""
        return self.graph.as_text()

    def __repr__(self):
        return f"<subgraph of {len(self.graph.eqns)} equations>"


def lower(graph, backend=None):
    backend = backend or _backend.current()
    env = {"xp": backend.xp}
    names = {}
    for k, v in enumerate(graph.inputs):
        names[v.id] = f"a{k}"
    for c in graph.consts():
        names[c.id] = f"c{c.id}"
        # constants traced on the host join the graph's device once, at compile time (on the
        # CPU, asarray returns the array itself)
        env[f"c{c.id}"] = backend.asarray(c.const)

    # last use of each var (index of eqn; outputs count as use at the end)
    n = len(graph.eqns)
    last = {}
    for i, e in enumerate(graph.eqns):
        for v in e.inputs:
            last[v.id] = i
    for v in graph.outputs:
        last[v.id] = n
    # alias roots: a view shares its input's buffer
    root = {}
    fresh = set()
    for e in graph.eqns:
        if lowering_of(e.prim).fresh:
            root[e.out.id] = e.out.id
            fresh.add(e.out.id)
        elif e.inputs:
            root[e.out.id] = root.get(e.inputs[0].id, e.inputs[0].id)
        else:
            root[e.out.id] = e.out.id
    members = {}
    for vid, r in root.items():
        members.setdefault(r, []).append(vid)
    root_last = {r: max(last.get(m, -1) for m in ms) for r, ms in members.items()}
    out_roots = {root.get(v.id, v.id) for v in graph.outputs}

    def key_of(v):
        return (v.aval.shape, v.aval.dtype)

    def dying_input(i, e):
        """An input that dies at equation i, owns its buffer and fits the output (or None)."""
        for v in e.inputs:
            r = root.get(v.id)
            if (
                r == v.id
                and v.id in fresh
                and r not in out_roots
                and root_last.get(r) == i
                and key_of(v) == key_of(e.out)
                and _no_broadcast(e, v)
                # a view of the same buffer read by this equation (x * x.T) would be
                # overwritten while it is read: numexpr kernels do not guard against that
                and all(w.id == v.id or root.get(w.id) != r for w in e.inputs)
            ):
                return v
        return None

    in_place = {i: dying_input(i, e) for i, e in enumerate(graph.eqns) if _can_out(e)}
    # buffers are pooled only for equations that would otherwise allocate: counting the ones
    # that write into a dying input would hoard dead buffers and raise the peak
    demand = {}
    for i, e in enumerate(graph.eqns):
        if _can_out(e) and in_place[i] is None:
            demand[key_of(e.out)] = demand.get(key_of(e.out), 0) + 1
    prepare = getattr(backend, "prepare_fused", None)
    if prepare is not None:  # e.g. one compiler call for all native CPU kernels of the graph
        prepare(
            [
                (e.params["kernel"], [v.aval.shape for v in e.inputs])
                for e in graph.eqns
                if e.prim is fused
            ]
        )
    pool = {}  # key -> [names of dead buffers kept for reuse]
    var_of = {}
    lines = [f"def compiled({', '.join(names[v.id] for v in graph.inputs)}):"]
    for i, e in enumerate(graph.eqns):
        out_name = f"v{e.out.id}"
        names[e.out.id] = out_name
        var_of[e.out.id] = e.out
        args = [names[v.id] for v in e.inputs]
        target = None
        if _can_out(e):
            v = in_place[i]
            if v is not None:
                # 1) an input that dies here, owns its buffer, and has the output's shape/dtype
                target = names[v.id]
                root_last[v.id] = -1  # consumed
            else:
                # 2) a dead buffer from the pool
                demand[key_of(e.out)] -= 1
                if pool.get(key_of(e.out)):
                    target = pool[key_of(e.out)].pop()
        out_kw = f", out={target}" if target else ""
        call = _call(e, args, env, i, out_kw, backend)
        if e.out.aval.shape == ():
            # numpy ufuncs and full reductions return numpy scalars for 0-d results; later
            # equations (e.g. item assignment) need arrays, as eager mode gives them
            call = f"xp.asarray({call})"
        lines.append(f"    {out_name} = {call}")
        if target is not None:
            # the buffer lives on under the output's name only (an input that died here
            # keeps no second name, or its buffer would never be freed)
            lines.append(f"    del {target}")
        # release values whose buffers die here
        dead = []
        for v in e.inputs:
            if last.get(v.id) == i and v.id in names and names[v.id] not in dead:
                if v.const is not None or names[v.id].startswith("a"):
                    if names[v.id].startswith("a"):
                        dead.append(names[v.id])
                    continue
                dead.append(names[v.id])
        for d in dead:
            if d == target:
                continue
            vid = _id_of(d)
            if vid is not None:
                r = root.get(vid)
                v = var_of.get(vid)
                if (
                    v is not None
                    and r == vid
                    and vid in fresh
                    and r not in out_roots
                    and root_last.get(r) == i
                    and demand.get(key_of(v), 0) > len(pool.get(key_of(v), []))
                ):
                    pool.setdefault(key_of(v), []).append(d)
                    continue
            lines.append(f"    del {d}")
    outs = ", ".join(names[v.id] for v in graph.outputs)
    lines.append(f"    return ({outs}{',' if len(graph.outputs) == 1 else ''})")
    source = "\n".join(lines) + "\n"
    code = compile(source, f"<core.jit {id(graph):x}>", "exec")
    exec(code, env)
    return Lowered(graph, source, env["compiled"])


def _can_out(e):
    # 0-d results are numpy scalars (not arrays) after a ufunc: they cannot be ``out=`` targets
    return (e.prim is fused or lowering_of(e.prim).ufunc is not None) and e.out.aval.shape != ()


def _id_of(name):
    if name.startswith("v"):
        return int(name[1:])
    return None


def _no_broadcast(e, v):
    return tuple(v.aval.shape) == tuple(e.out.aval.shape)


def _call(e, args, env, i, out_kw, backend):
    p = e.prim
    rec = lowering_of(p)
    if rec.ufunc is not None:
        # a backend's threaded loop for a large elementwise op (CPU: add, subtract, multiply)
        threaded = getattr(backend, "ufunc_kernel", None)
        kernel = threaded(rec.ufunc, e.out.aval.shape, e.out.aval.dtype) if threaded else None
        if kernel is not None:
            env[f"u{i}"] = kernel
            return f"u{i}({', '.join(args)}{out_kw})"
        return f"xp.{rec.ufunc}({', '.join(args)}{out_kw})"
    if p is fused:
        env[f"k{i}"] = e.params["kernel"].compiled(backend)
        return f"k{i}({', '.join(args)}{out_kw})"
    if rec.emit is not None:
        return rec.emit(args, e.params)
    # generic: the primitive's own implementation with its params bound, named after it
    name = f"{re.sub(r'[^0-9a-zA-Z_]', '_', p.name)}_{i}"
    env[name] = _bind_impl(p.impl, env["xp"], e.params)
    return f"{name}({', '.join(args)})"


def _bind_impl(impl, xp, params):
    if not params:
        return lambda *arrays: impl(xp, *arrays)
    return lambda *arrays: impl(xp, *arrays, **params)
