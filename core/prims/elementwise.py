"""Elementwise primitives: unary math, binary arithmetic, comparisons, select, dtype casts.

Each primitive is declared here by its reference implementation (against the array namespace
``xp``) and its shape rule; its derivatives, batching rule and jit lowering are in
``core/rules/elementwise.py``, and the CPU's faster kernels (native C loops, threaded
arithmetic) in ``core/backend/cpu_impls/elementwise.py``.

Inputs of binary primitives already share one dtype (``core.ops`` promotes them); shapes
broadcast as in numpy, and the autodiff engine undoes broadcasting of cotangents.
Composites (tan, sinh, arcsin, softplus, ...) live in ``core/ops``.
"""

import math

import numpy as np

from .. import dtypes as _dt
from ..backend.special import special_functions
from ..primitive import ShapedArray
from ._define import defprim, elementwise_aval, same_aval

_BOOL = _dt.bool_
_LOW_PRECISION = (np.dtype("float16"), _dt.bfloat16)  # computed in float32 where scipy lacks them


def _unary(name, impl, differentiable=True):
    return defprim(name, impl, same_aval, differentiable)


def _binary(name, impl, out_dtype=None, differentiable=True):
    return defprim(name, impl, elementwise_aval(name, out_dtype), differentiable)


def _real_aval(x, **params):
    return ShapedArray(x.shape, _dt.real_dtype(x.dtype))


# ---- unary ------------------------------------------------------------------------------
neg = _unary("neg", lambda xp, x: xp.negative(x))
exp = _unary("exp", lambda xp, x: xp.exp(x))
expm1 = _unary("expm1", lambda xp, x: xp.expm1(x))  # accurate near 0, where exp(x) - 1 cancels
log = _unary("log", lambda xp, x: xp.log(x))
log1p = _unary("log1p", lambda xp, x: xp.log1p(x))  # accurate near 0
# log2/log10 as primitives, not log(x) / log(b): exact at powers of the base (log(1000) /
# log(10) is 2.9999999999999996), as numpy's own ufuncs are
log2 = _unary("log2", lambda xp, x: xp.log2(x))
log10 = _unary("log10", lambda xp, x: xp.log10(x))
sqrt = _unary("sqrt", lambda xp, x: xp.sqrt(x))
sin = _unary("sin", lambda xp, x: xp.sin(x))
cos = _unary("cos", lambda xp, x: xp.cos(x))
tanh = _unary("tanh", lambda xp, x: xp.tanh(x))  # one fused libm call, stable for large |x|


def _logistic(xp, x):
    """The logistic sigmoid 1 / (1 + exp(-x)), stable for every x."""
    if x.dtype.kind == "c":
        half = x.dtype.type(0.5)
        return half * xp.tanh(half * x) + half
    # 1 / (1 + exp(-x)) overflows for very negative x, and 0.5 tanh(x / 2) + 0.5 rounds tiny
    # values to 0; exp(min(x, 0)) / (1 + exp(-|x|)) keeps full relative precision everywhere
    zero, one = x.dtype.type(0), x.dtype.type(1)
    return xp.exp(xp.minimum(x, zero)) / (xp.exp(-xp.abs(x)) + one)


logistic = _unary("logistic", _logistic)


def _erf(xp, x):
    arg = x.astype(np.float32) if x.dtype in _LOW_PRECISION else x
    return special_functions(xp).erf(arg).astype(x.dtype, copy=False)


erf = _unary("erf", _erf)
abs = defprim("abs", lambda xp, x: xp.abs(x), _real_aval)
sign = _unary("sign", lambda xp, x: xp.sign(x), differentiable=False)
floor = _unary("floor", lambda xp, x: xp.floor(x), differentiable=False)
ceil = _unary("ceil", lambda xp, x: xp.ceil(x), differentiable=False)
round = _unary("round", lambda xp, x: xp.round(x), differentiable=False)
logical_not = _unary("logical_not", lambda xp, x: xp.logical_not(x), differentiable=False)
bitwise_not = _unary("bitwise_not", lambda xp, x: xp.invert(x), differentiable=False)
isfinite = defprim(
    "isfinite", lambda xp, x: xp.isfinite(x), lambda x: ShapedArray(x.shape, _BOOL), False
)
stop_gradient = _unary("stop_gradient", lambda xp, x: x, differentiable=False)


# ---- fused backward passes ----------------------------------------------------------------
# tanh is the activation of most PINNs: its backward g * (1 - t^2) is one primitive instead of
# three (speed: a third of the backward dispatches of a tanh network), itself differentiable.
# Its own derivatives are linear in g (tanh_backward again) and c * (-2 g t) in t, also one
# primitive (a PINN's second derivatives run it once per layer and point). These
# implementations are the only place the formulas are written: the derivative rules and the
# engine's array path call them.
def _tanh_backward(xp, g, t):
    """g (1 - t^2): the cotangent of x in t = tanh(x)."""
    return g * (1 - t * t)  # Python int 1 is weak: the dtype stays t's


def _tanh_backward_t(xp, c, g, t):
    """-2 c g t: the cotangent that tanh_backward(g, t) passes to t."""
    return (-2 * c) * g * t  # -2 is weak; the native kernel keeps this order of operations


tanh_backward = _binary("tanh_backward", _tanh_backward)
tanh_backward_t = _binary("tanh_backward_t", _tanh_backward_t)

_SQRT_HALF = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


# GELU (exact form) x Phi(x): a primitive for speed, since the composite 0.5 x (1 + erf(x/sqrt 2))
# makes five passes over activations (and its derivative nine) where this makes three.
def _gelu(xp, x):
    """x Phi(x), Phi the standard normal CDF; in place after one erf."""
    out = erf.impl(xp, x * x.dtype.type(_SQRT_HALF))
    out += x.dtype.type(1)
    out *= x
    out *= x.dtype.type(0.5)
    return out


def _gelu_backward(xp, g, x):
    """g * (Phi(x) + x phi(x)), the derivative of x Phi(x), in place after one erf."""
    out = erf.impl(xp, x * x.dtype.type(_SQRT_HALF))
    out += x.dtype.type(1)
    out *= x.dtype.type(0.5)
    x_phi = x * x
    x_phi *= x.dtype.type(-0.5)
    x_phi = xp.exp(x_phi, out=x_phi) if isinstance(x_phi, xp.ndarray) else xp.exp(x_phi)
    x_phi *= x.dtype.type(_INV_SQRT_2PI)
    x_phi *= x
    out += x_phi
    return g * out


gelu = _unary("gelu", _gelu)
# the backward of gelu as one primitive (speed, like tanh_backward), itself differentiable
gelu_backward = _binary("gelu_backward", _gelu_backward)

# GELU, tanh form (Hendrycks & Gimpel 2016; MindSpore's nn.GELU default, so MindFlow's FNO
# activation): 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3). One primitive with a
# one-primitive backward for the same reason as gelu: the composite makes six passes forward,
# and under grad every intermediate is kept for the backward, so fusion cannot merge them.
_GELU_K = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715


def _gelu_tanh_arg(x):
    """u = sqrt(2/pi) (x + 0.044715 x^3), as x (k + k c x^2) (a fresh array)."""
    u = x * x
    u *= x.dtype.type(_GELU_K * _GELU_C)
    u += x.dtype.type(_GELU_K)
    u *= x
    return u


def _gelu_tanh(xp, x):
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in place after one tanh."""
    t = _gelu_tanh_arg(x)
    t = xp.tanh(t, out=t) if isinstance(t, xp.ndarray) else xp.tanh(t)
    t += x.dtype.type(1)
    t *= x
    t *= x.dtype.type(0.5)
    return t


def _gelu_tanh_backward(xp, g, x):
    """g * (0.5 (1 + t) + 0.5 x (1 - t^2) u'), t = tanh(u), u' = sqrt(2/pi) (1 + 3 c x^2): the
    derivative of the tanh-form GELU."""
    t = _gelu_tanh_arg(x)
    t = xp.tanh(t, out=t) if isinstance(t, xp.ndarray) else xp.tanh(t)
    du = x * x
    du *= x.dtype.type(3 * _GELU_K * _GELU_C)
    du += x.dtype.type(_GELU_K)
    du *= x
    du *= x.dtype.type(0.5)  # 0.5 x u'
    out = t * t
    out -= x.dtype.type(1)
    out *= du  # -(1 - t^2) 0.5 x u'
    t += x.dtype.type(1)
    t *= x.dtype.type(0.5)
    t -= out
    return g * t


gelu_tanh = _unary("gelu_tanh", _gelu_tanh)
gelu_tanh_backward = _binary("gelu_tanh_backward", _gelu_tanh_backward)

# ---- binary -----------------------------------------------------------------------------
add = _binary("add", lambda xp, x, y: xp.add(x, y))
sub = _binary("sub", lambda xp, x, y: xp.subtract(x, y))
mul = _binary("mul", lambda xp, x, y: xp.multiply(x, y))
div = _binary("div", lambda xp, x, y: xp.true_divide(x, y))
pow = _binary("pow", lambda xp, x, y: xp.power(x, y))
maximum = _binary("maximum", lambda xp, x, y: xp.maximum(x, y))
minimum = _binary("minimum", lambda xp, x, y: xp.minimum(x, y))
atan2 = _binary("atan2", lambda xp, y, x: xp.arctan2(y, x))
rem = _binary("rem", lambda xp, x, y: xp.mod(x, y))  # Python semantics: sign of the divisor
floor_divide = _binary("floor_divide", lambda xp, x, y: xp.floor_divide(x, y), differentiable=False)

# ---- comparisons and logic (no derivatives) ---------------------------------------------
equal = _binary("equal", lambda xp, x, y: xp.equal(x, y), _BOOL, False)
not_equal = _binary("not_equal", lambda xp, x, y: xp.not_equal(x, y), _BOOL, False)
less = _binary("less", lambda xp, x, y: xp.less(x, y), _BOOL, False)
less_equal = _binary("less_equal", lambda xp, x, y: xp.less_equal(x, y), _BOOL, False)
greater = _binary("greater", lambda xp, x, y: xp.greater(x, y), _BOOL, False)
greater_equal = _binary("greater_equal", lambda xp, x, y: xp.greater_equal(x, y), _BOOL, False)
logical_and = _binary("logical_and", lambda xp, x, y: xp.logical_and(x, y), _BOOL, False)
logical_or = _binary("logical_or", lambda xp, x, y: xp.logical_or(x, y), _BOOL, False)
logical_xor = _binary("logical_xor", lambda xp, x, y: xp.logical_xor(x, y), _BOOL, False)
bitwise_and = _binary("bitwise_and", lambda xp, x, y: xp.bitwise_and(x, y), None, False)
bitwise_or = _binary("bitwise_or", lambda xp, x, y: xp.bitwise_or(x, y), None, False)
bitwise_xor = _binary("bitwise_xor", lambda xp, x, y: xp.bitwise_xor(x, y), None, False)

# ---- select -------------------------------------------------------------------------------
select = defprim("select", lambda xp, c, x, y: xp.where(c, x, y), elementwise_aval("select"))

# ---- complex parts and casts (linear) -----------------------------------------------------
real = defprim("real", lambda xp, x: xp.real(x).copy() if x.dtype.kind == "c" else x, _real_aval)
imag = defprim(
    "imag", lambda xp, x: xp.imag(x).copy() if x.dtype.kind == "c" else xp.zeros_like(x), _real_aval
)
conj = _unary("conj", lambda xp, x: xp.conj(x))


def _complex(xp, re, im):
    unit = 1j if re.dtype == np.float64 else np.complex64(1j)  # keeps complex64 for float32
    return xp.asarray(re + unit * im, dtype=_dt.complex_dtype(re.dtype))


complex = defprim(
    "complex",
    _complex,
    lambda re, im: ShapedArray(
        np.broadcast_shapes(re.shape, im.shape), _dt.complex_dtype(re.dtype)
    ),
)


def _convert(xp, x, dtype):
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        x = x.real
    return x.astype(dtype)


convert = defprim("convert", _convert, lambda x, dtype: ShapedArray(x.shape, dtype))
