"""Elementwise ops: primitives wrapped with scalar handling, plus composites."""

import math

from .. import dtypes as _dt
from ..prims import elementwise as prims_elementwise
from ..tensor import Tensor
from ._convert import as_tensor, binary_args

# ---- arithmetic -------------------------------------------------------------------------------


def add(x, y):
    x, y = binary_args(x, y)
    return prims_elementwise.add(x, y)


def sub(x, y):
    x, y = binary_args(x, y)
    return prims_elementwise.sub(x, y)


def mul(x, y):
    x, y = binary_args(x, y)
    return prims_elementwise.mul(x, y)


def div(x, y):
    """True division; integer inputs give float32."""
    x, y = binary_args(x, y)
    if not _dt.is_inexact(x.dtype):
        x, y = astype(x, _dt.default_float), astype(y, _dt.default_float)
    return prims_elementwise.div(x, y)


def floor_divide(x, y):
    x, y = binary_args(x, y)
    return prims_elementwise.floor_divide(x, y)


def mod(x, y):
    """Remainder with the sign of the divisor (Python's ``%``)."""
    x, y = binary_args(x, y)
    return prims_elementwise.rem(x, y)


def pow(x, y):
    """``x ** y``. A Python-number exponent is a static power (integer powers stay exact)."""
    if isinstance(y, (int, float)) and not isinstance(y, bool):
        x = as_tensor(x)
        if y == 2:
            return prims_elementwise.mul(x, x)
        if y == 1:
            return x
        if y == 0.5 and _dt.is_inexact(x.dtype):
            return prims_elementwise.sqrt(x)
        if isinstance(y, float) and not _dt.is_inexact(x.dtype):
            x = astype(x, _dt.default_float)
    x, y = binary_args(x, y)
    return prims_elementwise.pow(x, y)


def maximum(x, y):
    x, y = binary_args(x, y)
    return prims_elementwise.maximum(x, y)


def minimum(x, y):
    x, y = binary_args(x, y)
    return prims_elementwise.minimum(x, y)


def arctan2(y, x):
    y, x = binary_args(y, x)
    return prims_elementwise.atan2(y, x)


def neg(x):
    return prims_elementwise.neg(as_tensor(x))


def _float_unary(prim):
    def op(x):
        if not isinstance(x, Tensor):
            x = as_tensor(x)
        if x.dtype.kind not in "fc" and x.dtype != _dt.bfloat16:
            x = astype(x, _dt.default_float)
        return prim(x)

    op.__name__ = prim.name
    op.__doc__ = f"Elementwise {prim.name} (integer inputs are computed in float32)."
    return op


exp = _float_unary(prims_elementwise.exp)
expm1 = _float_unary(prims_elementwise.expm1)
log = _float_unary(prims_elementwise.log)
log1p = _float_unary(prims_elementwise.log1p)
sqrt = _float_unary(prims_elementwise.sqrt)
sin = _float_unary(prims_elementwise.sin)
cos = _float_unary(prims_elementwise.cos)
tanh = _float_unary(prims_elementwise.tanh)
sigmoid = _float_unary(prims_elementwise.logistic)
erf = _float_unary(prims_elementwise.erf)


def abs(x):
    return prims_elementwise.abs(as_tensor(x))


def sign(x):
    return prims_elementwise.sign(as_tensor(x))


def floor(x):
    return prims_elementwise.floor(as_tensor(x))


def ceil(x):
    return prims_elementwise.ceil(as_tensor(x))


def round(x):
    """Round half to even, as numpy does."""
    return prims_elementwise.round(as_tensor(x))


def square(x):
    x = as_tensor(x)
    return prims_elementwise.mul(x, x)


def rsqrt(x):
    return 1.0 / sqrt(x)


def reciprocal(x):
    return 1.0 / as_tensor(x)


def tan(x):
    return sin(x) / cos(x)


def sinh(x):
    # (e^x - e^-x)/2 through expm1 keeps accuracy near 0
    return 0.5 * (expm1(x) - expm1(neg(x)))


def cosh(x):
    return 0.5 * (exp(x) + exp(neg(x)))


def arctan(x):
    x = as_tensor(x)
    return arctan2(x, 1.0)


def arcsin(x):
    x = as_tensor(x)
    return arctan2(x, sqrt((1.0 - x) * (1.0 + x)))


def arccos(x):
    x = as_tensor(x)
    return arctan2(sqrt((1.0 - x) * (1.0 + x)), x)


def relu(x):
    x = as_tensor(x)
    return where(greater(x, 0), x, 0.0)


def softplus(x, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, computed without overflow (exact for every x, so
    ``threshold`` is accepted for MindSpore/PyTorch compatibility and not needed)."""
    x = as_tensor(x)
    bx = x * beta if beta != 1.0 else x
    positive = greater(bx, 0)
    # max(z, 0) + log1p(exp(-|z|)), with -|z| written as a select so that the derivative at
    # z == 0 is sigmoid(0) = 1/2 (abs and max would each pick a one-sided subgradient there)
    out = where(positive, bx, 0.0) + log1p(exp(where(positive, neg(bx), bx)))
    return out / beta if beta != 1.0 else out


def silu(x):
    x = as_tensor(x)
    return x * sigmoid(x)


def gelu(x, approximate="none"):
    """GELU; ``approximate='tanh'`` uses the tanh form of Hendrycks & Gimpel (2016)."""
    x = as_tensor(x)
    if approximate == "tanh":
        if not _dt.is_inexact(x.dtype) or _dt.is_complex(x.dtype):
            c = math.sqrt(2.0 / math.pi)
            return 0.5 * x * (1.0 + tanh(c * (x + 0.044715 * x * x * x)))
        return prims_elementwise.gelu_tanh(x)
    if approximate != "none":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    if not _dt.is_inexact(x.dtype) or _dt.is_complex(x.dtype):
        return 0.5 * x * (1.0 + erf(x * (1.0 / math.sqrt(2.0))))
    return prims_elementwise.gelu(x)


def leaky_relu(x, alpha=0.01):
    x = as_tensor(x)
    return where(greater(x, 0), x, x * alpha)


def clip(x, min=None, max=None):
    """Clamp to ``[min, max]``; either bound may be None."""
    x = as_tensor(x)
    if min is not None:
        x = maximum(x, min)
    if max is not None:
        x = minimum(x, max)
    return x


clamp = clip

# ---- comparisons and logic ---------------------------------------------------------------------


def _cmp(prim):
    def op(x, y):
        x, y = binary_args(x, y)
        return prim(x, y)

    op.__name__ = prim.name
    return op


equal = _cmp(prims_elementwise.equal)
not_equal = _cmp(prims_elementwise.not_equal)
less = _cmp(prims_elementwise.less)
less_equal = _cmp(prims_elementwise.less_equal)
greater = _cmp(prims_elementwise.greater)
greater_equal = _cmp(prims_elementwise.greater_equal)


def _logic(prim, bitwise):
    def op(x, y):
        x, y = binary_args(x, y)
        if x.dtype == _dt.bool_:
            return prim(x, y)
        if x.dtype.kind in "iu":
            return bitwise(x, y)
        raise TypeError(f"{prim.name}: needs bool or integer tensors, got {x.dtype}")

    op.__name__ = prim.name
    return op


logical_and = _logic(prims_elementwise.logical_and, prims_elementwise.bitwise_and)
logical_or = _logic(prims_elementwise.logical_or, prims_elementwise.bitwise_or)
logical_xor = _logic(prims_elementwise.logical_xor, prims_elementwise.bitwise_xor)


def logical_not(x):
    return prims_elementwise.logical_not(as_tensor(x))


def bitwise_not(x):
    return prims_elementwise.bitwise_not(as_tensor(x))


def isfinite(x):
    return prims_elementwise.isfinite(as_tensor(x))


def isnan(x):
    x = as_tensor(x)
    return not_equal(x, x)


def where(condition, x, y):
    """``x`` where ``condition`` is true, else ``y`` (all three broadcast)."""
    condition = as_tensor(condition)
    if condition.dtype != _dt.bool_:
        condition = not_equal(condition, 0)
    x, y = binary_args(x, y)
    return prims_elementwise.select(condition, x, y)


def stop_gradient(x):
    """``x`` as a constant: no derivative flows through it."""
    return prims_elementwise.stop_gradient(as_tensor(x))


# ---- complex and dtype --------------------------------------------------------------------------


def real(x):
    return prims_elementwise.real(as_tensor(x))


def imag(x):
    return prims_elementwise.imag(as_tensor(x))


def conj(x):
    x = as_tensor(x)
    return prims_elementwise.conj(x) if _dt.is_complex(x.dtype) else x


def complex(re, im):
    """``re + 1j * im`` from two real tensors."""
    re, im = binary_args(re, im)
    if not _dt.is_floating(re.dtype):
        re, im = astype(re, _dt.float32), astype(im, _dt.float32)
    return prims_elementwise.complex(re, im)


def astype(x, dtype):
    """``x`` converted to ``dtype`` (complex to real keeps the real part)."""
    x = as_tensor(x)
    dtype = _dt.canonical(dtype)
    if x.dtype == dtype:
        return x
    return prims_elementwise.convert(x, dtype=dtype)


def angle(x):
    return arctan2(imag(x), real(x))


# ---- logarithms, exponentials, inverse hyperbolic functions (numpy names) -----------------------
log2 = _float_unary(prims_elementwise.log2)
log10 = _float_unary(prims_elementwise.log10)


def _inexact(x):
    """``x`` as a tensor with a floating (or complex) dtype: integers become float32."""
    x = as_tensor(x)
    if not _dt.is_inexact(x.dtype):
        x = astype(x, _dt.default_float)
    return x


def exp2(x):
    """2 ** x (a power, not exp(x ln 2): exact at integers, as numpy's exp2)."""
    x = _inexact(x)
    return pow(2.0, x)


# Above this |x|, 1 + x^2 rounds to x^2 (float64) and acosh/asinh(x) = log(2 x) to 1e-17; below,
# the log1p forms keep full precision near 0 (asinh) and near 1 (acosh) where log(x + ...)
# cancels. The large branch also keeps x^2 from overflowing.
_HUGE = 1e8


def _split(cond, x):
    """``x`` where ``cond`` holds and ``x`` where it does not, each with harmless fillers (1.0)
    elsewhere: both branches of a select stay finite, so neither poisons the derivative."""
    return where(cond, x, 1.0), where(cond, 1.0, x)


def arcsinh(x):
    """Inverse hyperbolic sine, accurate near 0 and finite for every finite x."""
    x = _inexact(x)
    if _dt.is_complex(x.dtype):
        return log(x + sqrt(x * x + 1.0))
    negative = less(x, 0)
    a = where(negative, neg(x), x)  # |x| as a select: derivative 1 at 0 (abs's would be 0)
    big = greater(a, _HUGE)
    a_big, a_small = _split(big, a)
    near = log1p(a_small + a_small * a_small / (1.0 + sqrt(1.0 + a_small * a_small)))
    out = where(big, log(a_big) + math.log(2.0), near)
    return where(negative, neg(out), out)


def arccosh(x):
    """Inverse hyperbolic cosine (nan below 1), accurate near 1 and for huge x."""
    x = _inexact(x)
    if _dt.is_complex(x.dtype):
        return log(x + sqrt(x + 1.0) * sqrt(x - 1.0))
    big = greater(x, _HUGE)
    x_big, x_small = _split(big, x)
    t = x_small - 1.0  # exact near 1
    near = log1p(t + sqrt(t * (t + 2.0)))
    return where(big, log(x_big) + math.log(2.0), near)


def arctanh(x):
    """Inverse hyperbolic tangent: (log1p(x) - log1p(-x)) / 2, accurate near 0 and near +-1."""
    x = _inexact(x)
    return 0.5 * (log1p(x) - log1p(neg(x)))


def deg2rad(x):
    return _inexact(x) * (math.pi / 180.0)


def rad2deg(x):
    return _inexact(x) * (180.0 / math.pi)


radians = deg2rad
degrees = rad2deg


def _inexact_pair(x, y):
    x, y = binary_args(x, y)
    if not _dt.is_inexact(x.dtype):
        x, y = astype(x, _dt.default_float), astype(y, _dt.default_float)
    return x, y


def _log_add_parts(x, y):
    """(m, w) with log(e^x + e^y) = m + log(1 + e^w) and w <= 0, written with selects so that
    the first and second derivatives are exact also at ties (x == y), and w = 0 where x and y
    are the same infinity (inf - inf would be nan and warn)."""
    same_inf = logical_and(equal(x, y), logical_not(isfinite(x)))
    d = where(same_inf, 0.0, x) - where(same_inf, 0.0, y)
    first = greater(d, 0)
    return where(first, x, y), where(first, neg(d), d)


def logaddexp(x, y):
    """log(exp(x) + exp(y)) without overflow or underflow (numpy.logaddexp)."""
    x, y = _inexact_pair(x, y)
    m, w = _log_add_parts(x, y)
    return m + log1p(exp(w))


def logaddexp2(x, y):
    """log2(2**x + 2**y) without overflow or underflow (numpy.logaddexp2)."""
    x, y = _inexact_pair(x, y)
    m, w = _log_add_parts(x, y)
    return m + log1p(exp2(w)) * (1.0 / math.log(2.0))
