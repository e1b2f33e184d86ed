"""``Tensor`` and ``Parameter``: the user-facing array types.

A Tensor holds one backend array (``numpy.ndarray`` on CPU, ``cupy.ndarray`` on GPU). Tensors
are immutable from the engine's point of view: ``x[idx] = v`` builds a new value and rebinds
``x`` to it, so values saved for a backward pass are never overwritten. Every method and
operator is a thin call into ``core.ops``.
"""

import numpy as np

from . import backend as _backend
from . import dtypes as _dt

# Bound by the layers above, which import this module (core/__init__.py binds them):
_ops = None  # core.ops: what Tensor's methods and operators call
_trace_stack = ()  # core.primitive's stack of active transformations (see _is_traced)
_initializer = None  # core.nn.init.initializer(init, shape, dtype): Tensor(shape=, init=)


def _array_from(data, dtype):
    """Backend array for user ``data`` with diffsci's default dtypes (float32, int64)."""
    backend = _backend.current()
    if isinstance(data, (np.ndarray, np.generic)) or hasattr(data, "__cuda_array_interface__"):
        arr = data
        if dtype is not None and arr.dtype != dtype:
            arr = arr.astype(dtype)
        return backend.asarray(arr)
    if dtype is None:
        probe = np.asarray(data)
        # Python floats are weak (float32, complex64); numpy's float64/complex128 values keep
        # their precision in a list too, as they do alone (Tensor(np.float64(1.0)) is float64)
        if probe.dtype == np.float64 and not _holds_double(data):
            dtype = _dt.default_float
        elif probe.dtype == np.complex128 and not _holds_double(data):
            dtype = _dt.complex64
        else:
            dtype = probe.dtype
        return backend.asarray(probe.astype(dtype, copy=False))
    return backend.asarray(np.asarray(data, dtype=dtype))


def _holds_double(data):
    """True if nested lists/tuples ``data`` hold a numpy float64 or complex128 value."""
    if not isinstance(data, (list, tuple)):
        return False
    for e in data:
        if isinstance(e, (np.ndarray, np.generic)):
            if e.dtype == np.float64 or e.dtype == np.complex128:
                return True
        elif isinstance(e, (list, tuple)) and _holds_double(e):
            return True
    return False


def _initialized(data, dtype, shape, init):
    """The backend array of ``Tensor(shape=, dtype=, init=)`` (MindSpore's initializer form)."""
    if data is not None:
        raise TypeError("Tensor(): give either data or shape=/init=, not both")
    if shape is None or init is None:
        raise TypeError(
            f"Tensor(): shape= and init= go together (got shape={shape!r}, init={init!r}); "
            "for zeros use core.zeros(shape)"
        )
    return _initializer(init, shape, dtype)._value


def _is_traced(t):
    """True for a tracer (or an alias of one) of a transformation that is still running, and for
    a Parameter that one is tracing. (A tracer that escaped its finished transformation holds a
    plain value: nothing differentiates it any more.)"""
    if type(t) is Tensor:
        return False
    if isinstance(t, Parameter):
        return bool(t._subs)
    trace = getattr(resolve(t), "_trace", None)
    return trace is None or (trace.level < len(_trace_stack) and _trace_stack[trace.level] is trace)


def _initial_value(tracer, name):
    """The concrete value of a traced initial value of Parameter ``name``; a symbolic one
    (under jit or vmap, where initializers draw symbolically) is an error that says why."""
    try:
        return tracer.asnumpy()
    except NotImplementedError:
        raise TypeError(
            f"Parameter {name!r}: its initial value is symbolic, because the Parameter (or the "
            "Cell that owns it, e.g. nn.Dense(...)) is being created inside core.jit, vmap or "
            "GRAPH_MODE, where initializers draw symbolic values. Create Cells and Parameters "
            "outside the compiled function (in __init__, or before the jitted step) and only "
            "call them inside it"
        ) from None


def _holds_traced(seq):
    for e in seq:
        if isinstance(e, Tensor) and type(e) is not Tensor and not isinstance(e, Parameter):
            return True
        if isinstance(e, (list, tuple)) and _holds_traced(e):
            return True
    return False


class Tensor:
    """An n-dimensional array that takes part in differentiation and compilation.

    Args:
        data: nested lists, a Python scalar, a numpy array or another Tensor.
        dtype: target dtype; default float32 for Python floats, int64 for Python ints,
            and the array's own dtype for numpy arrays.
        shape, init: MindSpore's initializer form, instead of ``data``:
            ``Tensor(shape=(2, 3), dtype=core.float32, init=One())`` (``init``: an
            Initializer, its name such as ``'normal'``, or a number). The values are drawn at
            construction; ``init_data()`` returns the tensor, as MindSpore's does once drawn.
    """

    __slots__ = ("__weakref__", "_value")
    __array_priority__ = 1000  # numpy defers `ndarray + Tensor` to Tensor.__radd__
    _alias_of = None  # set on alias classes (see _become): the class they were made from

    def __init__(self, data=None, dtype=None, shape=None, init=None):
        if init is not None or shape is not None:
            data, dtype = _initialized(data, dtype, shape, init), None
        dtype = _dt.canonical(dtype)
        if isinstance(data, Tensor):
            if _is_traced(data):
                raise TypeError(
                    f"Tensor(): the data is a traced tensor of shape {tuple(data.shape)} (inside "
                    "grad/vmap/jit); a new Tensor would drop its derivative. Use it directly "
                    "(core.ops.astype to change the dtype), or core.ops.stop_gradient"
                )
            data = data.asnumpy() if type(data) is not Tensor else data._value
        elif isinstance(data, (list, tuple)) and _holds_traced(data):
            raise TypeError(
                "Tensor(): the data holds traced tensors (inside grad/vmap/jit); building a "
                "Tensor from them would drop their derivatives. Use core.ops.stack or core.tensor"
            )
        self._value = _array_from(data, dtype)

    # ---- metadata -------------------------------------------------------------------
    @property
    def shape(self):
        return self._value.shape

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def device(self):
        return _backend.backend_of(self._value).name

    @property
    def real(self):
        """The real part (``x`` itself for a real tensor), a property as in numpy."""
        return _ops.real(self)

    @property
    def imag(self):
        """The imaginary part (zeros for a real tensor), a property as in numpy."""
        return _ops.imag(self)

    def conjugate(self):
        """The complex conjugate (numpy's name for ``conj``)."""
        return _ops.conj(self)

    @property
    def T(self):
        return _ops.transpose(self)

    @property
    def mT(self):
        return _ops.swapaxes(self, -1, -2)

    def ravel(self):
        """The elements in a 1-D tensor of shape [size] (a reshape: differentiable)."""
        return _ops.reshape(self, (-1,))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # ---- data -----------------------------------------------------------------------
    def init_data(self, slice_index=None, shape=None, opt_shard_group=None):
        """This tensor (MindSpore draws an ``init=`` tensor here; diffsci did at construction)."""
        del slice_index, shape, opt_shard_group  # MindSpore's sharding options
        return self

    def asnumpy(self):
        """A host numpy array with this tensor's data (a copy for GPU tensors)."""
        return _backend.backend_of(self._value).to_numpy(self._value)

    def numpy(self):
        return self.asnumpy()

    def item(self):
        return self.asnumpy().item()

    def tolist(self):
        return self.asnumpy().tolist()

    def to(self, device):
        """This tensor's data on ``device`` ("CPU", "GPU")."""
        target = _backend.get_backend(device)
        return Tensor._wrap(target.asarray(self.asnumpy()))

    @staticmethod
    def _wrap(array):
        t = Tensor.__new__(Tensor)
        t._value = array
        return t

    def _become(self, other):
        """Rebind this tensor to the value of ``other`` (used by ``__setitem__``).

        When ``other`` has another type (``x[idx] = v`` with a traced ``v`` inside grad/vmap/
        jit, while ``x`` is a plain tensor or another transformation's tracer), this object
        becomes an alias of ``other`` (same Python object; ``bind`` resolves it).
        """
        other = resolve(other)
        if type(self) is type(other):
            for cls in type(other).__mro__:
                for slot in getattr(cls, "__slots__", ()):
                    if slot != "__weakref__" and hasattr(other, slot):
                        object.__setattr__(self, slot, getattr(other, slot))
            return
        if isinstance(self, Parameter):
            if type(other) is not Tensor:
                raise TypeError(
                    f"Parameter {self.name!r}: `p[index] = value` inside core.grad/vmap/jit; "
                    "assign into a copy (`x = p * 1.0; x[index] = value`) or use set_data"
                )
            self._value = other._value
            return
        base = type(self)._alias_of or type(self)
        if type(other) is Tensor and base is Tensor:
            self.__class__ = Tensor
            self._value = other._value
            return
        self.__class__ = _alias_class(base)
        self._value = other

    def __bool__(self):
        if self.size != 1:
            raise ValueError(
                f"the truth value of a tensor of shape {self.shape} is ambiguous; use .any() or .all()"
            )
        return bool(self.asnumpy())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype.kind not in "iu":
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype}")
        return int(self.asnumpy())

    def __complex__(self):
        return complex(self.item())

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """``np.exp(tensor)`` and friends run the matching core op, so derivatives survive;
        a ufunc without one raises instead of silently dropping to numpy."""
        name = _UFUNC_OPS.get(ufunc.__name__)
        if method != "__call__" or kwargs or name is None:
            raise TypeError(
                f"numpy.{ufunc.__name__}{'' if method == '__call__' else '.' + method} on a diffsci "
                "Tensor: use the core.ops function (it keeps derivatives and the device), or "
                "convert explicitly with .asnumpy()"
            )
        op = _ops
        for part in name.split("."):  # "special.gammaln" for scipy.special's ufuncs
            op = getattr(op, part)
        return op(*inputs)

    def __array__(self, dtype=None, copy=None):
        # numpy would get a traced tensor's value and silently drop its derivative (or bake a
        # symbolic value into a graph), as np.asarray(x) or np.linspace(x, ...) did: raise, as
        # JAX and PyTorch do. An explicit .asnumpy() still gives the value, and so does a
        # conversion to integers or bools (np.int64(x)): those have no derivative to drop.
        if _is_traced(self) and (dtype is None or np.dtype(dtype).kind not in "biu"):
            raise TypeError(
                f"numpy conversion (np.asarray / np.array / a numpy function) of a traced tensor "
                f"of shape {tuple(self.shape)} inside core.grad/jvp/vmap/jit: numpy would drop "
                "its derivative. Use the core.ops functions instead, or call .asnumpy() for the "
                "value without derivatives (not available under jit or vmap)"
            )
        arr = self.asnumpy()
        return arr if dtype is None else arr.astype(dtype)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        body = np.array2string(self.asnumpy(), separator=", ", prefix="Tensor(")
        return f"Tensor({body}, dtype={self.dtype.name})"

    def __hash__(self):
        return id(self)

    # ---- operators ----------------------------------------------------------------------
    def __add__(self, o):
        return _ops.add(self, o)

    def __radd__(self, o):
        return _ops.add(o, self)

    def __sub__(self, o):
        return _ops.sub(self, o)

    def __rsub__(self, o):
        return _ops.sub(o, self)

    def __mul__(self, o):
        return _ops.mul(self, o)

    def __rmul__(self, o):
        return _ops.mul(o, self)

    def __truediv__(self, o):
        return _ops.div(self, o)

    def __rtruediv__(self, o):
        return _ops.div(o, self)

    def __floordiv__(self, o):
        return _ops.floor_divide(self, o)

    def __rfloordiv__(self, o):
        return _ops.floor_divide(o, self)

    def __mod__(self, o):
        return _ops.mod(self, o)

    def __rmod__(self, o):
        return _ops.mod(o, self)

    def __pow__(self, o):
        return _ops.pow(self, o)

    def __rpow__(self, o):
        return _ops.pow(o, self)

    def __matmul__(self, o):
        return _ops.matmul(self, o)

    def __rmatmul__(self, o):
        return _ops.matmul(o, self)

    def __neg__(self):
        return _ops.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ops.abs(self)

    def __invert__(self):
        return _ops.logical_not(self) if self.dtype == _dt.bool_ else _ops.bitwise_not(self)

    def __and__(self, o):
        return _ops.logical_and(self, o)

    def __rand__(self, o):
        return _ops.logical_and(o, self)

    def __or__(self, o):
        return _ops.logical_or(self, o)

    def __ror__(self, o):
        return _ops.logical_or(o, self)

    def __xor__(self, o):
        return _ops.logical_xor(self, o)

    def __rxor__(self, o):
        return _ops.logical_xor(o, self)

    def __eq__(self, o):
        return _ops.equal(self, o)

    def __ne__(self, o):
        return _ops.not_equal(self, o)

    def __lt__(self, o):
        return _ops.less(self, o)

    def __le__(self, o):
        return _ops.less_equal(self, o)

    def __gt__(self, o):
        return _ops.greater(self, o)

    def __ge__(self, o):
        return _ops.greater_equal(self, o)

    def __getitem__(self, index):
        return _ops.getitem(self, index)

    def __setitem__(self, index, value):
        self._become(_ops.index_update(self, index, value))


# numpy ufunc name -> core.ops function, for Tensor.__array_ufunc__
_UFUNC_OPS = {
    "add": "add", "subtract": "sub", "multiply": "mul", "true_divide": "div", "divide": "div",
    "floor_divide": "floor_divide", "remainder": "mod", "power": "pow", "negative": "neg",
    "absolute": "abs", "sign": "sign", "exp": "exp", "expm1": "expm1", "log": "log",
    "log1p": "log1p", "sqrt": "sqrt", "square": "square", "reciprocal": "reciprocal",
    "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "arcsin", "arccos": "arccos",
    "arctan": "arctan", "arctan2": "arctan2", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
    "floor": "floor", "ceil": "ceil", "rint": "round", "conjugate": "conj", "maximum": "maximum",
    "minimum": "minimum", "equal": "equal", "not_equal": "not_equal", "less": "less",
    "less_equal": "less_equal", "greater": "greater", "greater_equal": "greater_equal",
    "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
    "logical_not": "logical_not", "isfinite": "isfinite", "isnan": "isnan", "matmul": "matmul",
    "arcsinh": "arcsinh", "arccosh": "arccosh", "arctanh": "arctanh", "exp2": "exp2",
    "log2": "log2", "log10": "log10", "logaddexp": "logaddexp", "logaddexp2": "logaddexp2",
    "deg2rad": "deg2rad", "rad2deg": "rad2deg", "radians": "radians", "degrees": "degrees",
    # scipy.special's functions are numpy ufuncs too
    "erf": "erf", "erfc": "special.erfc", "erfcx": "special.erfcx", "erfinv": "special.erfinv",
    "erfcinv": "special.erfcinv", "gammaln": "special.gammaln", "psi": "special.digamma",
    "i0": "special.i0", "i1": "special.i1", "i0e": "special.i0e", "i1e": "special.i1e",
    "ndtr": "special.ndtr", "ndtri": "special.ndtri", "log_ndtr": "special.log_ndtr",
    "logit": "special.logit", "expit": "sigmoid", "log_expit": "special.log_expit",
    "xlogy": "special.xlogy", "xlog1py": "special.xlog1py", "entr": "special.entr",
    "rel_entr": "special.rel_entr",
}  # fmt: skip

# Methods that forward to the op of the same name in core.ops (x.sum(axis) == ops.sum(x, axis)).
_METHODS = (
    "abs all any argmax argmin argsort astype broadcast_to clip conj cos cumprod cumsum exp "
    "expand_dims flatten flip log logsumexp matmul max maximum mean min minimum norm "
    "permute pow prod repeat reshape round sigmoid sin sort sqrt square squeeze std "
    "sum swapaxes tanh tile transpose var view"
).split()


def _forward(name):
    def method(self, *args, out=None, **kwargs):
        # numpy's functions call these methods with out=None (np.sum(x) is x.sum(axis=None,
        # dtype=None, out=None))
        if out is not None:
            raise TypeError(
                f"Tensor.{name}: out= is not supported (tensors are immutable); use the result"
            )
        return getattr(_ops, name)(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"Same as ``core.ops.{name}(self, ...)``."
    return method


for _name in _METHODS:
    setattr(Tensor, _name, _forward(_name))


class Parameter(Tensor):
    """A trainable Tensor owned by a Cell or an optimizer.

    Args:
        data: initial value (Tensor, numpy array, nested lists).
        name: the parameter's name in checkpoints.
        requires_grad: False freezes it (``trainable_params()`` skips it).
    """

    __slots__ = ("_subs", "name", "requires_grad")

    def __init__(self, data, name=None, requires_grad=True, dtype=None):
        if isinstance(data, Tensor):
            data = (
                _initial_value(data, name)
                if type(data) is not Tensor and type(data) is not Parameter
                else data._value
            )
        super().__init__(data, dtype)
        self.name = name
        self.requires_grad = requires_grad
        self._subs = []  # tracers standing in for this parameter inside grad/jit (innermost last)

    def set_data(self, value):
        """Replace the value in place (shape and dtype must match); used by optimizers."""
        _ops_assign(self, value)
        return self

    def assign_value(self, value):
        return self.set_data(value)

    @property
    def data(self):
        return self

    def __repr__(self):
        return f"Parameter(name={self.name!r}, shape={self.shape}, dtype={self.dtype.name})"


def _ops_assign(param, value):
    if not isinstance(value, Tensor):
        value = Tensor(value, dtype=param.dtype)
    if tuple(value.shape) != tuple(param.shape):
        raise ValueError(
            f"Parameter {param.name!r}: cannot assign a value of shape {tuple(value.shape)} "
            f"to a parameter of shape {tuple(param.shape)}"
        )
    hook = _assign_hook[0]
    if hook is not None:
        hook(param, value)
        return
    if type(value) is not Tensor and type(value) is not Parameter:
        value = value.concrete() if hasattr(value, "concrete") else value
        if type(value) is not Tensor:
            raise RuntimeError(
                f"Parameter {param.name!r}: cannot store a traced value outside core.jit; "
                "call the optimizer outside core.grad"
            )
    if value.dtype != param.dtype:
        value = _ops.astype(value, param.dtype)
    param._value = value._value


class _AliasMixin:
    """Mixed into the class of a tensor that ``x[idx] = v`` rebound to a value of another type;
    ``_value`` holds that value and metadata is read from it."""

    __slots__ = ()

    @property
    def shape(self):
        return self._value.shape

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def aval(self):
        return self._value.aval

    def concrete(self):
        target = resolve(self._value)
        return target.concrete() if hasattr(target, "concrete") else target

    def asnumpy(self):
        return self._value.asnumpy()

    def __repr__(self):
        return repr(self._value)


_ALIAS_CLASSES = {}


def _alias_class(cls):
    """A subclass of ``cls`` with its memory layout (so that ``__class__`` can be assigned)."""
    alias = _ALIAS_CLASSES.get(cls)
    if alias is None:
        alias = type(
            cls.__name__ + "Alias", (_AliasMixin, cls), {"__slots__": (), "_alias_of": cls}
        )
        _ALIAS_CLASSES[cls] = alias
    return alias


def resolve(x):
    """The value an alias made by ``x[idx] = v`` stands for (``x`` itself otherwise)."""
    while getattr(type(x), "_alias_of", None) is not None:
        x = x._value
    return x


# core.jit installs a hook here so that parameter updates inside a compiled function become
# graph outputs instead of eager writes.
_assign_hook = [None]
