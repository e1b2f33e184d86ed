"""Primitives, the trace stack and ``bind``: the dispatch at the heart of the engine.

Every operation is a :class:`Primitive`. Calling one goes through :func:`bind`, which looks
at its arguments: if none is a tracer of an active transformation, the primitive runs
eagerly on the backend arrays (the fast path); otherwise the argument with the highest
trace level decides which transformation processes it (reverse-mode, forward-mode, vmap,
jit). A transformation unwraps its own tracers and binds the primitive again, one level
down, so transformations nest to any depth and never confuse each other's perturbations.
"""

import numpy as np

from . import backend as _backend
from .tensor import Parameter, Tensor
from .tensor import resolve as _resolve

__all__ = ["Primitive", "PrimalTracer", "ShapedArray", "Trace", "Tracer", "bind", "set_debug_nans"]


class ShapedArray:
    """Abstract value: what tracing knows about a tensor without its data."""

    __slots__ = ("dtype", "shape")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"{self.dtype.name}{list(self.shape)}"

    def __eq__(self, other):
        return isinstance(other, ShapedArray) and (self.shape, self.dtype) == (
            other.shape,
            other.dtype,
        )

    def __hash__(self):
        return hash((self.shape, self.dtype))


class Primitive:
    """One operation of the engine.

    Attributes:
        name: the name printed in the IR and in error messages.
        impl: ``impl(xp, *arrays, **params) -> array`` against the backend namespace ``xp``:
            the reference implementation specialized by any backend kernel registered for
            ``name`` (``core.backend.kernels``).
        reference: the reference implementation alone (equivalence tests compare the two).
        abstract: ``abstract(*avals, **params) -> ShapedArray``: the shape/dtype rule.
        differentiable: False for ops with zero derivative everywhere (comparisons, argmax);
            their outputs never carry tangents or cotangents.
    """

    __slots__ = ("abstract", "differentiable", "impl", "name", "reference")

    def __init__(self, name, impl, abstract, differentiable=True):
        self.name = name
        self.impl = impl
        self.reference = impl  # the backend-neutral implementation (see core.backend.kernels)
        self.abstract = abstract
        self.differentiable = differentiable

    def __call__(self, *args, **params):
        return bind(self, args, params)

    def __repr__(self):
        return self.name


class Trace:
    """One active transformation; ``level`` is its depth in the trace stack."""

    level = -1
    tracer_type = None  # the Tracer class it makes, for bind's fast path (None: no fast path)

    def process(self, prim, args, params):
        raise NotImplementedError


class Tracer(Tensor):
    """A tensor that stands for a value inside a transformation (``_trace``)."""

    __slots__ = ("_trace",)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("_alias_of") is None:
            _PLAIN_TRACER_TYPES.add(cls)  # bind's fast check (alias classes take the slow path)

    @property
    def aval(self):
        raise NotImplementedError

    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    def asnumpy(self):
        return self.concrete().asnumpy()

    def concrete(self):
        """The concrete Tensor behind this tracer (for printing and Python control flow)."""
        raise NotImplementedError(
            f"{type(self).__name__} has no concrete value: this tensor is symbolic "
            "(inside core.jit or core.vmap). Use core.ops.cond/while_loop/scan for control flow "
            "that depends on tensor values, or mark the argument static."
        )


_PLAIN_TRACER_TYPES = set()


class PrimalTracer(Tracer):
    """A tracer that carries the value it stands for one level down, ``primal`` (a Tensor or
    an outer transformation's tracer): the base of reverse- and forward-mode tracers."""

    __slots__ = ("primal",)

    @property
    def shape(self):
        return self.primal.shape

    @property
    def dtype(self):
        return self.primal.dtype

    @property
    def aval(self):
        p = self.primal
        return p.aval if isinstance(p, Tracer) else ShapedArray(p.shape, p.dtype)

    def concrete(self):
        p = self.primal
        return p.concrete() if isinstance(p, Tracer) else p


_trace_stack = []
_debug_nans = False
# core.jit installs a function here while it traces: it turns the first read of a Parameter
# into a graph input (pushed on the Parameter's ``_subs``) so that values are not baked in.
param_reader = [None]
# core.recompute sets a list here while it runs a function, to learn which Parameters it reads.
param_log = [None]


def read_param(p):
    """The value that stands for Parameter ``p`` right now (a tracer inside transforms)."""
    if p._subs:
        return p._subs[-1]
    if param_reader[0] is not None:
        return param_reader[0](p)
    return Tensor._wrap(p._value)


def split_operands(trace, args, first, second):
    """Unwrap the operands ``args`` of a primitive as ``trace`` sees them: a tracer of
    ``trace`` gives its attributes ``first`` and ``second`` (reverse mode: primal and the
    tracer itself, ``second="self"``; forward mode: primal and tangent; vmap: value and batch
    axis), any other value itself and None. Returns two tuples."""
    own = trace.tracer_type
    firsts, seconds = [], []
    for a in args:
        if type(a) is own and a._trace is trace:
            firsts.append(getattr(a, first))
            seconds.append(a if second == "self" else getattr(a, second))
        else:
            firsts.append(a)
            seconds.append(None)
    return tuple(firsts), tuple(seconds)


def push_trace(trace):
    trace.level = len(_trace_stack)
    _trace_stack.append(trace)
    return trace


def pop_trace(trace):
    top = _trace_stack.pop()
    if top is not trace:
        raise RuntimeError(f"trace stack corrupted: popped {top}, expected {trace}")


def trace_stack():
    return _trace_stack


def set_debug_nans(flag=True):
    """When on, the first primitive that produces NaN or Inf from finite inputs raises."""
    global _debug_nans
    _debug_nans = bool(flag)


def bind(prim, args, params):
    """Apply ``prim`` to tensors ``args``: eagerly, or through the highest active trace."""
    for a in args:  # fast path: only concrete tensors
        if type(a) is not Tensor:
            break
    else:
        return eager(prim, args, params)
    if _trace_stack:
        # fast path: only tensors and tracers of the innermost transformation, which is then
        # the highest level present (the general search below finds the same trace)
        top = _trace_stack[-1]
        own = top.tracer_type
        for a in args:
            t = type(a)
            if t is not Tensor and (t is not own or a._trace is not top):
                break
        else:
            return top.process(prim, args, params)
    top = None
    level = -1
    plain = _PLAIN_TRACER_TYPES
    for i, a in enumerate(args):
        t = type(a)
        if t is Tensor:
            continue
        if t in plain:
            trace = a._trace
            if trace.level > level:
                top, level = trace, trace.level
            continue
        if isinstance(a, Tracer) and getattr(t, "_alias_of", None) is None:
            if a._trace.level > level:
                top, level = a._trace, a._trace.level
            continue
        if t is Parameter:
            if param_log[0] is not None:
                param_log[0].append(a)
            if a._subs:
                sub = a._subs[-1]
            elif param_reader[0] is not None:
                sub = param_reader[0](a)
            else:
                continue
            args = args[:i] + (sub,) + args[i + 1 :]
            a = sub
        elif getattr(t, "_alias_of", None) is not None:  # `x[idx] = v` rebound x to a traced value
            a = _resolve(a)
            args = args[:i] + (a,) + args[i + 1 :]
        elif not isinstance(a, Tensor):
            raise TypeError(f"{prim.name}: argument {i} is {type(a).__name__}, expected a Tensor")
        if isinstance(a, Tracer) and a._trace.level > level:
            top, level = a._trace, a._trace.level
    if top is None:
        return eager(prim, args, params)
    if top.level >= len(_trace_stack) or _trace_stack[top.level] is not top:
        raise RuntimeError(
            f"{prim.name}: a tracer escaped the transformation that made it (a value computed "
            "inside core.grad/jvp/vmap/jit was kept and used after it returned); return it "
            "from the function instead"
        )
    return top.process(prim, args, params)


def eager(prim, args, params):
    """Run ``prim`` on concrete tensors and wrap the result."""
    n = len(args)
    if n == 2:  # the common cases, without building a list through a comprehension frame
        vals = (args[0]._value, args[1]._value)
        same = type(vals[0]) is type(vals[1])
    elif n == 1:
        vals = (args[0]._value,)
        same = True
    else:
        vals = [a._value for a in args]
        same = all(type(v) is type(vals[0]) for v in vals)
    if vals:
        if not same:
            vals = _check_same_device(prim, vals)
        xp = np if type(vals[0]) is np.ndarray else _backend.backend_of(vals[0]).xp
    else:
        xp = _backend.current().xp
    try:
        out = prim.impl(xp, *vals, **params) if params else prim.impl(xp, *vals)
    except (ValueError, IndexError, TypeError, np.linalg.LinAlgError) as err:
        raise op_error(prim, vals, params, err) from err
    if type(out) is not np.ndarray and not isinstance(out, np.ndarray):
        # numpy returns scalars for 0-d results; cupy arrays pass through
        out = xp.asarray(out) if not hasattr(out, "__cuda_array_interface__") else out
    if _debug_nans:
        _check_finite(prim, vals, out, xp, params)
    res = Tensor.__new__(Tensor)
    res._value = out
    return res


def op_error(prim, vals, params, err):
    """``err`` raised by ``prim``'s implementation, retold with the op and its input shapes."""
    shapes = ", ".join(f"{v.dtype}{list(v.shape)}" for v in vals)
    return type(err)(f"{prim.name}({shapes}{_fmt_params(params)}): {err}")


def _check_same_device(prim, vals):
    """The inputs on one device, or an error. Host 0-d arrays (Python scalars made tensors,
    e.g. ``gpu_tensor * 2.0``) follow the device of the other inputs: a scalar, not a copy of
    data."""
    devices = [_backend.backend_of(v).name for v in vals]
    data_devices = {d for d, v in zip(devices, vals) if not (type(v) is np.ndarray and v.ndim == 0)}
    if len(data_devices) > 1:
        raise RuntimeError(
            f"{prim.name}: inputs live on different devices {devices}; move them with "
            "Tensor.to(device) first (diffsci never copies between devices silently)"
        )
    if len(data_devices) == 1:
        target = _backend.get_backend(data_devices.pop())
        vals = [
            target.asarray(v)
            if type(v) is np.ndarray and v.ndim == 0 and target.array_type is not np.ndarray
            else v
            for v in vals
        ]
    return vals


def _check_finite(prim, vals, out, xp, params):
    if out.dtype.kind not in "fc":
        return
    if bool(xp.isfinite(out).all()):
        return
    inputs_finite = all(v.dtype.kind not in "fc" or bool(xp.isfinite(v).all()) for v in vals)
    if inputs_finite:
        shapes = ", ".join(f"{v.dtype}{list(v.shape)}" for v in vals)
        raise FloatingPointError(
            f"debug_nans: primitive {prim.name}({shapes}{_fmt_params(params)}) produced "
            "NaN/Inf from finite inputs"
        )


def _fmt_params(params):
    if not params:
        return ""
    return ", " + ", ".join(f"{k}={v!r}" for k, v in params.items())
