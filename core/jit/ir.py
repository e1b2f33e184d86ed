"""The graph IR of ``core.jit``: a list of primitive applications over named values.

``Var`` is a value with an abstract shape/dtype; ``Eqn`` applies one primitive to Vars and
defines one new Var; ``Graph`` holds inputs, constants, equations in execution order and
outputs. ``verify()`` runs after every pass; ``as_text()`` prints one line per equation.
"""

import itertools

import numpy as np

_ids = itertools.count()


class Var:
    """A value in the graph. ``const`` holds the array of a constant (else None)."""

    __slots__ = ("aval", "const", "id")

    def __init__(self, aval, const=None):
        self.aval = aval
        self.const = const
        self.id = next(_ids)

    def __repr__(self):
        return f"%{self.id}"


class Eqn:
    """``out = prim(*inputs, **params)``; ``tag`` marks recomputed work (never merged by CSE)."""

    __slots__ = ("inputs", "out", "params", "prim", "tag")

    def __init__(self, prim, inputs, params, out, tag=None):
        self.prim = prim
        self.inputs = list(inputs)
        self.params = params
        self.out = out
        self.tag = tag

    def __repr__(self):
        return f"{self.out} = {self.prim.name}({', '.join(map(repr, self.inputs))})"


class Graph:
    """A traced function: ``inputs`` (Vars), ``eqns`` in order, ``outputs`` (Vars)."""

    def __init__(self, inputs, eqns, outputs):
        self.inputs = list(inputs)
        self.eqns = list(eqns)
        self.outputs = list(outputs)

    def consts(self):
        seen = {}
        for e in self.eqns:
            for v in e.inputs:
                if v.const is not None:
                    seen[v.id] = v
        for v in self.outputs:
            if v.const is not None:
                seen[v.id] = v
        return list(seen.values())

    def verify(self):
        """Check that every Var is defined before use, once, and that each equation's output
        has the shape and dtype its primitive's shape rule gives for its inputs."""
        defined = {v.id for v in self.inputs}
        if len(defined) != len(self.inputs):
            raise AssertionError("graph: an input appears twice")
        for e in self.eqns:
            for v in e.inputs:
                if v.const is None and v.id not in defined:
                    raise AssertionError(f"graph: {v} used before it is defined in {e}")
            if e.out.id in defined:
                raise AssertionError(f"graph: {e.out} defined twice")
            defined.add(e.out.id)
            _check_aval(e)
        for v in self.outputs:
            if v.const is None and v.id not in defined:
                raise AssertionError(f"graph: output {v} is never defined")
        return self

    def as_text(self, indent=""):
        """The IR, one line per primitive: ``%7: float32[4096,64] = tanh %6``. Sub-graphs of an
        equation (the condition and body of a ``while``) follow it, indented."""
        # Vars are numbered per graph, in order of definition (their ids are global counters)
        number = {}
        for v in [*self.inputs, *self.consts(), *(e.out for e in self.eqns)]:
            number.setdefault(v.id, len(number))

        def name(v):
            return f"%{number[v.id]}" if v.id in number else repr(v)

        lines = []
        ins = ", ".join(f"{name(v)}: {v.aval}" for v in self.inputs)
        lines.append(f"graph({ins}) {{")
        for c in self.consts():
            lines.append(f"  {name(c)}: {c.aval} = const {_fmt_const(c.const)}")
        for e in self.eqns:
            params, subs = "", []
            if e.params:
                items = []
                for k, v in e.params.items():
                    sub = getattr(v, "graph", None)
                    if isinstance(sub, Graph):
                        subs.append((k, sub))
                        items.append(f"{k}=<graph below>")
                    else:
                        items.append(f"{k}={_fmt_param(v)}")
                params = " [" + ", ".join(items) + "]"
            tag = f"  # {e.tag}" if e.tag else ""
            args = ", ".join(map(name, e.inputs))
            lines.append(f"  {name(e.out)}: {e.out.aval} = {e.prim.name}{params} {args}{tag}")
            for k, sub in subs:
                # one entry per line, so that every line of a nested sub-graph is indented
                lines.extend((f"    {k} = " + sub.as_text("    ").lstrip()).split("\n"))
        lines.append(f"  return {', '.join(map(name, self.outputs))}")
        lines.append("}")
        return "\n".join(indent + line for line in lines)

    def __str__(self):
        return self.as_text()


def _check_aval(e):
    """``e.out``'s shape and dtype against the shape rule of ``e.prim`` (one array output)."""
    expected = e.prim.abstract(*[v.aval for v in e.inputs], **e.params)
    got = e.out.aval
    if not hasattr(expected, "shape") or expected.shape is None:
        return  # several outputs (a loop): the tuple's entries are read by tuple_index
    if tuple(expected.shape) != tuple(got.shape) or expected.dtype != got.dtype:
        raise AssertionError(f"graph: {e} gives {got}, its shape rule says {expected}")


def _fmt_const(a):
    a = np.asarray(a) if not hasattr(a, "__cuda_array_interface__") else a
    if a.size <= 4:
        return np.array2string(np.asarray(a), separator=",").replace("\n", "")
    return f"<{a.dtype}{list(a.shape)}>"


def _fmt_param(v):
    if hasattr(v, "name") and not isinstance(v, (str, tuple)):
        return v.name
    s = repr(v)
    return s if len(s) < 60 else s[:57] + "..."
