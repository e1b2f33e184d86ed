"""Tracing a Python function with symbolic tensors into a :class:`~core.jit.ir.Graph`."""

import contextlib

from .. import primitive as _primitive
from .. import tensor as _tensor
from ..primitive import ShapedArray, Trace, Tracer
from ..tensor import Parameter, resolve
from .ir import Eqn, Var


class JitTracer(Tracer):
    """A symbolic tensor: only its shape and dtype are known while tracing."""

    __slots__ = ("var",)

    def __init__(self, trace, var):
        self._trace = trace
        self.var = var

    @property
    def aval(self):
        return self.var.aval

    @property
    def shape(self):
        return self.var.aval.shape

    @property
    def dtype(self):
        return self.var.aval.dtype

    def __repr__(self):
        return f"JitTracer({self.var}: {self.var.aval})"


class JitTrace(Trace):
    """Records every primitive applied to its tracers as an equation.

    Concrete tensors that meet tracers become constants; Parameters become extra graph inputs
    the first time they are read, and ``Parameter.set_data`` inside the function becomes an
    extra graph output written back after each call.
    """

    tracer_type = JitTracer

    def __init__(self):
        self.eqns = []
        self.inputs = []
        self.consts = {}  # id(array) -> Var
        self.param_inputs = []  # [(Parameter, Var)]
        self.param_updates = {}  # id(Parameter) -> (Parameter, JitTracer)
        self.pushed = []  # Parameters whose _subs got our tracer
        self.tag = None  # set while tracing recomputed work

    def new_input(self, aval):
        v = Var(aval)
        self.inputs.append(v)
        return JitTracer(self, v)

    def const(self, tensor):
        arr = tensor._value
        v = self.consts.get(id(arr))
        if v is None:
            v = Var(ShapedArray(arr.shape, arr.dtype), const=arr)
            self.consts[id(arr)] = v
        return v

    def to_var(self, x):
        x = resolve(x)  # a plain tensor rebound to a traced value by `y[i] = v`
        if type(x) is JitTracer and x._trace is self:
            return x.var
        if isinstance(x, Parameter):
            return self.read_param(x).var
        if isinstance(x, Tracer):
            raise RuntimeError(
                f"core.jit: found a tracer of another transformation ({type(x).__name__}) "
                "inside a compiled function; apply jit outermost (jit(grad(f)), jit(vmap(f)))"
            )
        return self.const(x)

    def process(self, prim, args, params):
        in_vars = [self.to_var(a) for a in args]
        try:
            aval = prim.abstract(*[v.aval for v in in_vars], **params)
        except (ValueError, IndexError, TypeError) as err:
            shapes = ", ".join(str(v.aval) for v in in_vars)
            raise type(err)(f"{prim.name}({shapes}): {err}") from None
        out = Var(aval)
        self.eqns.append(Eqn(prim, in_vars, params, out, self.tag))
        return JitTracer(self, out)

    def process_nullary(self, prim, params):
        """Stage a primitive with no inputs (random draws): the result is computed per call."""
        out = Var(prim.abstract(**params))
        self.eqns.append(Eqn(prim, [], params, out, self.tag))
        return JitTracer(self, out)

    # ---- parameters ----------------------------------------------------------------------
    def read_param(self, p):
        if p._subs:
            return p._subs[-1]
        v = Var(ShapedArray(p.shape, p.dtype))
        self.param_inputs.append((p, v))
        t = JitTracer(self, v)
        p._subs.append(t)
        self.pushed.append(p)
        return t

    def assign_param(self, p, value):
        if not p._subs:
            self.read_param(p)
        top = p._subs[-1]
        if not (type(top) is JitTracer and top._trace is self):
            raise RuntimeError(
                f"core.jit: Parameter {p.name!r} is assigned inside core.grad; update "
                "parameters after the gradient is computed"
            )
        if type(value) is not JitTracer:
            if isinstance(value, Tracer):
                raise RuntimeError(
                    f"core.jit: cannot assign a {type(value).__name__} to Parameter {p.name!r}"
                )
            value = JitTracer(self, self.const(value))
        if value.dtype != p.dtype:
            from ..ops.elementwise import astype

            value = astype(value, p.dtype)
        p._subs[-1] = value
        self.param_updates[id(p)] = (p, value)

    def __enter__(self):
        _primitive.push_trace(self)
        self._saved = (_primitive.param_reader[0], _tensor._assign_hook[0])
        _primitive.param_reader[0] = self.read_param
        _tensor._assign_hook[0] = self.assign_param
        return self

    def __exit__(self, *exc):
        _primitive.param_reader[0], _tensor._assign_hook[0] = self._saved
        for p in self.pushed:
            p._subs.clear()
        _primitive.pop_trace(self)
        return False


@contextlib.contextmanager
def tagging(tag):
    """Inside this block every active jit trace (loop bodies' too) tags the equations it
    records with ``tag``: ``core.recompute`` marks the re-run of its forward pass so, so that
    common-subexpression elimination never merges it with the forward pass it recomputes."""
    traces = [t for t in _primitive.trace_stack() if isinstance(t, JitTrace)]
    saved = [t.tag for t in traces]
    for t in traces:
        t.tag = tag
    try:
        yield
    finally:
        for t, old in zip(traces, saved, strict=True):
            t.tag = old
