"""MindSpore's Primitive classes (``ops.Concat(axis)(tensors)``, ``P.ReduceMean(keep_dims)(x,
axis)``), generated from one table over ``core.ops``.

A MindSpore Primitive takes its attributes at construction and its tensors at the call. Each
row of ``_TABLE`` says which core op a class runs and which constructor arguments it has (with
MindSpore's defaults); the class is made by :func:`_make_class`, so a class is one line, never a
hand-written wrapper. Call arguments go positionally to the row's function, followed by the
constructor attributes as keywords. Also here: the ``Primitive`` base (for user subclasses) and
``constexpr``.
"""

from .. import dtypes as _dt
from . import activation as _activation
from . import creation as _creation
from . import elementwise as _ew
from . import indexing as _ix
from . import interpolate as _interp
from . import linalg as _la
from . import random as _rand
from . import reduction as _red
from . import shape as _sh
from . import sort as _sort


class Primitive:
    """Base of MindSpore-style operator classes: attributes fixed at construction, tensors at
    the call. ``prim.attrs`` holds the attributes; ``add_prim_attr`` sets one more (MindSpore's
    API for user-defined Primitives, which subclass this and define ``__call__``)."""

    def __init__(self, name=None):
        self.name = name or type(self).__name__
        self.attrs = {}

    def add_prim_attr(self, name, value):
        self.attrs[name] = value
        return self

    def __call__(self, *args):
        raise NotImplementedError(f"{self.name} does not define __call__")

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.attrs.items())
        return f"Prim[{self.name}]({args})"


def constexpr(fn=None, *, get_instance=True, reuse_result=True, check=True):
    """MindSpore's ``@constexpr``: a function of Python values evaluated while compiling.

    ``core.jit`` runs Python code as it traces, so such a function already runs at compile time
    and the decorator returns it unchanged (usable bare or as ``@constexpr(reuse_result=...)``).
    """
    del get_instance, reuse_result, check  # MindSpore compiler options with no meaning here
    if fn is None:
        return constexpr
    return fn


# ---- adapters for rows whose call does not map one to one ---------------------------------------
def _reduce(op):
    def reduce(x, axis=(), keep_dims=False):
        # MindSpore: axis () means every axis
        return op(x, axis=None if axis == () else axis, keepdims=keep_dims)

    reduce.__module__, reduce.__name__ = op.__module__, op.__name__  # named in the class doc
    return reduce


def _matmul(a, b, transpose_a=False, transpose_b=False):
    a = _sh.swapaxes(a, -1, -2) if transpose_a else a
    b = _sh.swapaxes(b, -1, -2) if transpose_b else b
    return _la.matmul(a, b)


def _split(x, axis=0, output_num=1):
    n = x.shape[axis]
    if n % output_num:
        raise ValueError(
            f"Split: axis {axis} of shape {tuple(x.shape)} does not split into {output_num}"
        )
    return _sh.split(x, n // output_num, axis)


def _squeeze(x, axis=()):
    return _sh.squeeze(x, None if axis == () else axis)


def _pad(x, paddings):
    return _sh.pad(x, tuple(tuple(p) for p in paddings))


def _flatten(x):
    # MindSpore's Flatten keeps the first (batch) axis
    return _sh.reshape(x, (x.shape[0], -1))


def _argmax(x, axis=-1, output_type=_dt.int32):
    return _red.argmax(x, axis).astype(output_type)


def _argmax_with_value(x, axis=0, keep_dims=False):
    return _red.argmax(x, axis, keep_dims).astype(_dt.int32), _red.max(x, axis, keep_dims)


def _topk(x, k, sorted=True):
    return _sort.topk(x, k, axis=-1, largest=True, sorted=sorted)


def _cumsum(x, axis, exclusive=False, reverse=False):
    out = _red.cumsum(x, axis, reverse=reverse)
    return out - x if exclusive else out


def _l2_normalize(x, axis=0, epsilon=1e-4):
    sq = _red.sum(x * x, axis=axis, keepdims=True)
    return x * _ew.rsqrt(_ew.maximum(sq, epsilon))


def _resize_nearest(x, size, align_corners=False):
    h_in, w_in = x.shape[-2:]
    h_out, w_out = size
    for axis, (n_in, n_out) in ((-2, (h_in, h_out)), (-1, (w_in, w_out))):
        idx = _interp.nearest_indices(n_in, n_out, n_in / n_out, align_corners=align_corners)
        x = _ix.take(x, _creation._const(idx, x), x.ndim + axis)
    return x


def _print(*args):
    print(*(a.asnumpy() if hasattr(a, "asnumpy") else a for a in args))


def _shape_of(x):
    return tuple(x.shape)


# name -> (function(call args..., **attrs), {constructor argument: MindSpore default}).
# A row with no constructor arguments is a class whose instance calls the function as is.
_TABLE = {
    # elementwise
    "Abs": (_ew.abs, {}),
    "Add": (_ew.add, {}),
    "Ceil": (_ew.ceil, {}),
    "Complex": (_ew.complex, {}),
    "Cos": (_ew.cos, {}),
    "Cosh": (_ew.cosh, {}),
    "Div": (_ew.div, {}),
    "Equal": (_ew.equal, {}),
    "Erf": (_ew.erf, {}),
    "Exp": (_ew.exp, {}),
    "Floor": (_ew.floor, {}),
    "GeLU": (_ew.gelu, {}),
    "Greater": (_ew.greater, {}),
    "GreaterEqual": (_ew.greater_equal, {}),
    "Imag": (_ew.imag, {}),
    "Less": (_ew.less, {}),
    "LessEqual": (_ew.less_equal, {}),
    "Log": (_ew.log, {}),
    "LogicalAnd": (_ew.logical_and, {}),
    "LogicalNot": (_ew.logical_not, {}),
    "LogicalOr": (_ew.logical_or, {}),
    "Maximum": (_ew.maximum, {}),
    "Minimum": (_ew.minimum, {}),
    "Mul": (_ew.mul, {}),
    "Neg": (_ew.neg, {}),
    "NotEqual": (_ew.not_equal, {}),
    "Pow": (_ew.pow, {}),
    "Real": (_ew.real, {}),
    "RealDiv": (_ew.div, {}),
    "Reciprocal": (_ew.reciprocal, {}),
    "ReLU": (_ew.relu, {}),
    "Rsqrt": (_ew.rsqrt, {}),
    "Select": (_ew.where, {}),
    "Sigmoid": (_ew.sigmoid, {}),
    "Sign": (_ew.sign, {}),
    "Sin": (_ew.sin, {}),
    "Sinh": (_ew.sinh, {}),
    "Softplus": (_ew.softplus, {}),
    "Sqrt": (_ew.sqrt, {}),
    "Square": (_ew.square, {}),
    "Sub": (_ew.sub, {}),
    "Tan": (_ew.tan, {}),
    "Tanh": (_ew.tanh, {}),
    "Cast": (_ew.astype, {}),
    "Identity": (lambda x: x * 1, {}),
    "OnesLike": (_creation.ones_like, {}),
    "ZerosLike": (_creation.zeros_like, {}),
    # reductions
    "ReduceMean": (_reduce(_red.mean), {"keep_dims": False}),
    "ReduceSum": (_reduce(_red.sum), {"keep_dims": False}),
    "ReduceMax": (_reduce(_red.max), {"keep_dims": False}),
    "ReduceMin": (_reduce(_red.min), {"keep_dims": False}),
    "ReduceProd": (_reduce(_red.prod), {"keep_dims": False}),
    "Argmax": (_argmax, {"axis": -1, "output_type": _dt.int32}),
    "ArgMaxWithValue": (_argmax_with_value, {"axis": 0, "keep_dims": False}),
    "CumSum": (_cumsum, {"exclusive": False, "reverse": False}),
    "L2Normalize": (_l2_normalize, {"axis": 0, "epsilon": 1e-4}),
    # shapes
    "BroadcastTo": (_sh.broadcast_to, {"shape": None}),
    "Concat": (_sh.concat, {"axis": 0}),
    "ExpandDims": (_sh.expand_dims, {}),
    "Flatten": (_flatten, {}),
    "Gather": (_ix.gather, {}),
    "Pad": (_pad, {"paddings": None}),
    "Reshape": (_sh.reshape, {}),
    "Split": (_split, {"axis": 0, "output_num": 1}),
    "Squeeze": (_squeeze, {"axis": ()}),
    "Stack": (_sh.stack, {"axis": 0}),
    "Tile": (_sh.tile, {}),
    "Transpose": (_sh.transpose, {}),
    "Shape": (_shape_of, {}),
    "DType": (lambda x: x.dtype, {}),
    "Rank": (lambda x: x.ndim, {}),
    "Size": (lambda x: x.size, {}),
    "TopK": (_topk, {"sorted": True}),
    # linear algebra and networks
    "MatMul": (_matmul, {"transpose_a": False, "transpose_b": False}),
    "BatchMatMul": (_matmul, {"transpose_a": False, "transpose_b": False}),
    "Einsum": (lambda operands, equation: _la.einsum(equation, *operands), {"equation": None}),
    "Softmax": (_activation.softmax, {"axis": -1}),
    "LogSoftmax": (_activation.log_softmax, {"axis": -1}),
    "ResizeNearestNeighbor": (_resize_nearest, {"size": None, "align_corners": False}),
    # creation and random
    "Eye": (lambda n, m, t: _creation.eye(n, m, dtype=t), {}),
    "Fill": (lambda type_, shape, value: _creation.full(shape, value, dtype=type_), {}),
    "Ones": (lambda shape, type_=None: _creation.ones(shape, dtype=type_), {}),
    "Zeros": (lambda shape, type_=None: _creation.zeros(shape, dtype=type_), {}),
    "StandardNormal": (
        lambda shape, seed, seed2: _rand.normal(shape, seed=seed or None),
        {"seed": 0, "seed2": 0},
    ),
    "UniformReal": (
        lambda shape, seed, seed2: _rand.uniform(shape, seed=seed or None),
        {"seed": 0, "seed2": 0},
    ),
    "UniformInt": (
        lambda shape, minval, maxval, seed, seed2: _rand.randint(
            int(minval), int(maxval), shape, seed or None, dtype=_dt.int32
        ),
        {"seed": 0, "seed2": 0},
    ),
    "Print": (_print, {}),
}


def _make_class(name, fn, defaults):
    """A Primitive subclass ``name`` whose constructor takes ``defaults``' arguments (by
    position or keyword) and whose call runs ``fn(*inputs, **attributes)``."""
    arg_names = tuple(defaults)

    def __init__(self, *args, **kwargs):
        Primitive.__init__(self, name)
        if len(args) > len(arg_names):
            raise TypeError(
                f"{name}() takes {len(arg_names)} constructor arguments {arg_names}, got {len(args)}"
            )
        attrs = dict(zip(arg_names, args))
        for key, value in kwargs.items():
            if key not in defaults:
                raise TypeError(f"{name}(): unexpected argument {key!r}; it takes {arg_names}")
            if key in attrs:
                raise TypeError(f"{name}(): argument {key!r} given twice")
            attrs[key] = value
        for key in arg_names:
            attrs.setdefault(key, defaults[key])
            if attrs[key] is None:
                raise TypeError(f"{name}(): missing the constructor argument {key!r}")
        self.attrs = attrs

    def __call__(self, *inputs):
        return fn(*inputs, **self.attrs)

    target = f"{fn.__module__}.{fn.__name__}"
    if fn.__name__ == "<lambda>":
        target = f"the {name!r} row of {__name__}._TABLE"
    doc = (
        f"MindSpore's ``ops.{name}({', '.join(f'{k}={v!r}' for k, v in defaults.items())})``: "
        f"calls ``{target}`` with the call's tensors and these attributes."
    )
    return type(name, (Primitive,), {"__init__": __init__, "__call__": __call__, "__doc__": doc})


PRIMITIVE_CLASSES = {name: _make_class(name, fn, dict(d)) for name, (fn, d) in _TABLE.items()}

__all__ = ["PRIMITIVE_CLASSES", "Primitive", "constexpr"]
