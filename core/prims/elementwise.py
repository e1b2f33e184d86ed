"""Elementwise primitives: unary math, binary arithmetic, comparisons, select, dtype casts.

Inputs of binary primitives already share one dtype (``core.ops`` promotes them); shapes
broadcast as in numpy, and the autodiff engine undoes broadcasting of cotangents.
Composites (tan, sinh, arcsin, softplus, gelu, ...) live in ``core/ops``.
"""

import math

import numpy as np
import scipy.special as _sp

from .. import dtypes as _dt
from ..rules._define import def_linear_unary, def_partials, defjvp, defvjp
from ..backend import cpu_kernels as _native
from ..primitive import ShapedArray
from ..vmap import batch_rules, elementwise_rule
from ._define import defprim, elementwise_aval, same_aval

_BOOL = _dt.bool_
# elements: below this a ctypes call (~1 us) gains nothing over numpy
_NATIVE_MIN = 256


def _unary(name, impl, differentiable=True):
    p = defprim(name, impl, same_aval, differentiable)
    batch_rules[p] = elementwise_rule(p)
    return p


def _binary(name, impl, out_dtype=None, differentiable=True):
    p = defprim(name, impl, elementwise_aval(name, out_dtype), differentiable)
    batch_rules[p] = elementwise_rule(p)
    return p


def _erf(xp, x):
    if xp is not np:
        import cupyx.scipy.special as csp

        return csp.erf(x)
    if x.dtype in (np.float32, np.float64) and x.size >= _NATIVE_MIN:
        out = _native.erf(x)
        if out is not None:
            return out
    if x.dtype in (np.float32, np.float16) or x.dtype == _dt.bfloat16:
        # scipy's erf runs 8 ns per float32 element: 25x slower than a SIMD loop, and the
        # hot spot of every exact-GELU network. A rational approximation is exact to a few
        # float32 ulps (max |error| 4e-7, tested against scipy in float64).
        return _erf_float32(x.astype(np.float32, copy=False)).astype(x.dtype, copy=False)
    return _sp.erf(x).astype(x.dtype, copy=False)


# erf(x) = x P(x^2) / Q(x^2) on [-4, 4] (|erf| rounds to 1 in float32 beyond), the float32
# minimax fit used by Eigen and XLA; coefficients from the highest power down.
_ERF_P = [np.float32(c) for c in (-2.72614225801306e-10, 2.77068142495902e-08,
          -2.10102402082508e-06, -5.69250639462346e-05, -7.34990630326855e-04,
          -2.95459980854025e-03, -1.60960333262415e-02)]  # fmt: skip
_ERF_Q = [np.float32(c) for c in (-1.45660718464996e-05, -2.13374055278905e-04,
          -1.68282697438203e-03, -7.37332916720468e-03, -1.42647390514189e-02)]  # fmt: skip
_ERF_BLOCK = 1 << 16  # elements (256 KiB of float32): the Horner passes of a block stay in L2


def _erf_float32(x):
    flat = x.reshape(-1)
    out = np.empty_like(flat)
    t = np.empty(min(_ERF_BLOCK, flat.size), np.float32)
    poly = np.empty_like(t)
    for start in range(0, flat.size, _ERF_BLOCK):
        stop = min(start + _ERF_BLOCK, flat.size)
        o, tt, pp = out[start:stop], t[: stop - start], poly[: stop - start]
        np.clip(flat[start:stop], np.float32(-4), np.float32(4), out=o)
        np.multiply(o, o, out=tt)
        for coeffs, combine in ((_ERF_P, np.multiply), (_ERF_Q, np.divide)):
            np.multiply(tt, coeffs[0], out=pp)
            pp += coeffs[1]
            for c in coeffs[2:]:
                pp *= tt
                pp += c
            combine(o, pp, out=o)
        np.clip(o, np.float32(-1), np.float32(1), out=o)  # the fit overshoots 1 by an ulp near 4
    return out.reshape(x.shape)


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
logistic = _unary("logistic", lambda xp, x: _logistic(xp, x))  # stable sigmoid
erf = _unary("erf", _erf)
abs = defprim(
    "abs", lambda xp, x: xp.abs(x), lambda x: ShapedArray(x.shape, _dt.real_dtype(x.dtype))
)
batch_rules[abs] = elementwise_rule(abs)
sign = _unary("sign", lambda xp, x: xp.sign(x), differentiable=False)
floor = _unary("floor", lambda xp, x: xp.floor(x), differentiable=False)
ceil = _unary("ceil", lambda xp, x: xp.ceil(x), differentiable=False)
round = _unary("round", lambda xp, x: xp.round(x), differentiable=False)
logical_not = _unary("logical_not", lambda xp, x: xp.logical_not(x), differentiable=False)
bitwise_not = _unary("bitwise_not", lambda xp, x: xp.invert(x), differentiable=False)
isfinite = defprim(
    "isfinite", lambda xp, x: xp.isfinite(x), lambda x: ShapedArray(x.shape, _BOOL), False
)
batch_rules[isfinite] = elementwise_rule(isfinite)
stop_gradient = _unary("stop_gradient", lambda xp, x: x, differentiable=False)


def _logistic(xp, x):
    # 1 / (1 + exp(-x)) overflows for very negative x, and 0.5 tanh(x / 2) + 0.5 rounds tiny
    # values to 0; exp(min(x, 0)) / (1 + exp(-|x|)) keeps full relative precision everywhere
    if x.dtype.kind == "c":
        half = x.dtype.type(0.5)
        return half * xp.tanh(half * x) + half
    if xp is np and x.size >= _NATIVE_MIN:
        out = _native.logistic(x)  # one C pass with one vectorized exp, where a compiler exists
        if out is not None:
            return out
    out = xp.empty_like(x)
    if xp is np and x.size > _BLOCK and x.flags.c_contiguous:
        # six passes over memory become one: each block is finished while it is in cache
        flat_x, flat_out = x.reshape(-1), out.reshape(-1)
        scratch = np.empty(_BLOCK, x.dtype)
        for start in range(0, x.size, _BLOCK):
            stop = min(start + _BLOCK, x.size)
            _logistic_into(xp, flat_x[start:stop], flat_out[start:stop], scratch[: stop - start])
        return out
    return _logistic_into(xp, x, out, xp.empty_like(x))


_BLOCK = 1 << 16  # elements (256 KiB of float32): a block stays in L2 cache


def _logistic_into(xp, x, out, den):
    zero, one = x.dtype.type(0), x.dtype.type(1)
    xp.minimum(x, zero, out=out)
    xp.exp(out, out=out)
    xp.abs(x, out=den)
    xp.negative(den, out=den)
    xp.exp(den, out=den)
    den += one
    out /= den
    return out


def_linear_unary(neg, lambda g, out, x: neg(g))
def_partials(exp, lambda out, x: out)
def_partials(expm1, lambda out, x: out + 1.0)
def_partials(log1p, lambda out, x: 1.0 / (1.0 + x))
def_partials(sin, lambda out, x: cos(x))
def_partials(cos, lambda out, x: neg(sin(x)))
# tanh is the activation of most PINNs: its backward g * (1 - t^2) is one primitive instead of
# three (speed: a third of the backward dispatches of a tanh network), itself differentiable.
tanh_backward = _binary("tanh_backward", lambda xp, g, t: _tanh_backward_impl(xp, g, t))


def _tanh_backward_impl(xp, g, t):
    if xp is np and t.size >= _NATIVE_MIN:
        out = _native.tanh_backward(g, t)  # one pass instead of three (None: numpy's path)
        if out is not None:
            return out
    return g * (1 - t * t)  # Python int 1 is weak: the dtype stays t's


# its own derivatives: linear in g (so tanh_backward again, one primitive), and c * (-2 g t)
# in t, also one primitive (a PINN's second derivatives run it once per layer and point)


def _tanh_backward_t_impl(xp, c, g, t):
    """-2 c g t: the cotangent that tanh_backward(g, t) passes to t."""
    if xp is np and t.size >= _NATIVE_MIN:
        out = _native.tanh_backward_t(c, g, t)  # one pass instead of three (None: numpy's path)
        if out is not None:
            return out
    return (-2 * c) * g * t  # the native kernel's order of operations; -2 is weak


tanh_backward_t = _binary("tanh_backward_t", _tanh_backward_t_impl)


def _tanh_backward_vjp(c, out, g, t, _needed=(True, True)):
    return (
        tanh_backward(c, t) if _needed[0] else None,
        tanh_backward_t(c, g, t) if _needed[1] else None,
    )


def _tanh_backward_jvp(ts, out, g, t):
    a = None if ts[0] is None else tanh_backward(ts[0], t)
    b = None if ts[1] is None else tanh_backward_t(ts[1], g, t)
    return b if a is None else (a if b is None else a + b)


# -2 c g t is linear in each input: every partial is the same primitive with that input
# replaced by the incoming (co)tangent
def _tanh_backward_t_vjp(ct, out, c, g, t, _needed=(True, True, True)):
    return (
        tanh_backward_t(ct, g, t) if _needed[0] else None,
        tanh_backward_t(c, ct, t) if _needed[1] else None,
        tanh_backward_t(c, g, ct) if _needed[2] else None,
    )


def _tanh_backward_t_jvp(ts, out, c, g, t):
    tc, tg, tt = ts
    terms = []
    if tc is not None:
        terms.append(tanh_backward_t(tc, g, t))
    if tg is not None:
        terms.append(tanh_backward_t(c, tg, t))
    if tt is not None:
        terms.append(tanh_backward_t(c, g, tt))
    return sum(terms[1:], terms[0])


defvjp(tanh_backward_t, _tanh_backward_t_vjp, masked=True)
defjvp(tanh_backward_t, _tanh_backward_t_jvp)


defvjp(tanh_backward, _tanh_backward_vjp, masked=True)
defjvp(tanh_backward, _tanh_backward_jvp)
defvjp(tanh, lambda g, out, x: (tanh_backward(g, out),))
defjvp(tanh, lambda ts, out, x: tanh_backward(ts[0], out))
def_partials(logistic, lambda out, x: out * (1.0 - out))
def_partials(erf, lambda out, x: (2.0 / math.sqrt(math.pi)) * exp(neg(x * x)))


# GELU (exact form) x Phi(x): a primitive for speed, since the composite 0.5 x (1 + erf(x/sqrt 2))
# makes five passes over activations (and its derivative nine) where this makes three.
def _gelu_impl(xp, x):
    if xp is np and x.size >= _NATIVE_MIN:
        out = _native.gelu(x)  # one pass with a vectorized erf, where a C compiler exists
        if out is not None:
            return out
    out = _erf(xp, x * x.dtype.type(1.0 / math.sqrt(2.0)))
    out += x.dtype.type(1)
    out *= x
    out *= x.dtype.type(0.5)
    return out


gelu = _unary("gelu", _gelu_impl)


def _gelu_backward_impl(xp, g, x):
    """g * (Phi(x) + x phi(x)), the derivative of x Phi(x), in place after one erf."""
    if xp is np and x.size >= _NATIVE_MIN and g.shape == x.shape and g.dtype == x.dtype:
        out = _native.gelu_backward(g, x)
        if out is not None:
            return out
    out = _erf(xp, x * x.dtype.type(1.0 / math.sqrt(2.0)))
    out += x.dtype.type(1)
    out *= x.dtype.type(0.5)
    x_phi = x * x
    x_phi *= x.dtype.type(-0.5)
    x_phi = xp.exp(x_phi, out=x_phi) if isinstance(x_phi, xp.ndarray) else xp.exp(x_phi)
    x_phi *= x.dtype.type(1.0 / math.sqrt(2.0 * math.pi))
    x_phi *= x
    out += x_phi
    return g * out


# the backward of gelu as one primitive (speed, like tanh_backward), itself differentiable
gelu_backward = _binary("gelu_backward", _gelu_backward_impl)


def _phi(x):
    return (1.0 / math.sqrt(2.0 * math.pi)) * exp(-0.5 * (x * x))


def_partials(
    gelu_backward,
    lambda out, g, x: gelu_backward(_ones(g), x),
    lambda out, g, x: g * _phi(x) * (2.0 - x * x),  # d/dx (Phi + x phi) = phi (2 - x^2)
)
defvjp(gelu, lambda g, out, x: (gelu_backward(g, x),))
defjvp(gelu, lambda ts, out, x: gelu_backward(ts[0], x))
defvjp(log, lambda g, out, x: (g / x,))
defjvp(log, lambda ts, out, x: ts[0] / x)
def_partials(log2, lambda out, x: (1.0 / math.log(2.0)) / x)
def_partials(log10, lambda out, x: (1.0 / math.log(10.0)) / x)
defvjp(sqrt, lambda g, out, x: (g / (2.0 * out),))
defjvp(sqrt, lambda ts, out, x: ts[0] / (2.0 * out))


def _abs_partial(out, x):
    from .. import ops

    if _dt.is_complex(x.dtype):
        # JAX convention for complex inputs: the cotangent of x is g * conj(x) / |x|.
        return ops.conj(x) / ops.astype(out, x.dtype)
    return sign(x)


def _abs_jvp(ts, out, x):
    from .. import ops

    if _dt.is_complex(x.dtype):
        return ops.real(ops.conj(x) * ts[0]) / out
    return ts[0] * sign(x)


defvjp(abs, lambda g, out, x: (g * _abs_partial(out, x),))
defjvp(abs, _abs_jvp)


# ---- binary -----------------------------------------------------------------------------
def _arith(name, ufunc_name):
    """``xp.<ufunc_name>(x, y)``; large float arrays on the CPU use the threaded native loop
    (same bits); small ones pay one size check."""
    big = _native.ARITH_MIN_SIZE
    np_ufunc = getattr(np, ufunc_name)

    def impl(xp, x, y):
        if xp is not np:
            return getattr(xp, ufunc_name)(x, y)
        if x.size >= big or y.size >= big:
            out = _native.arith(name, x, y)
            if out is not None:
                return out
        return np_ufunc(x, y)

    return impl


add = _binary("add", _arith("add", "add"))
sub = _binary("sub", _arith("sub", "subtract"))
mul = _binary("mul", _arith("mul", "multiply"))
div = _binary("div", lambda xp, x, y: xp.true_divide(x, y))
pow = _binary("pow", lambda xp, x, y: xp.power(x, y))
maximum = _binary("maximum", lambda xp, x, y: xp.maximum(x, y))
minimum = _binary("minimum", lambda xp, x, y: xp.minimum(x, y))
atan2 = _binary("atan2", lambda xp, y, x: xp.arctan2(y, x))
rem = _binary("rem", lambda xp, x, y: xp.mod(x, y))  # Python semantics: sign of the divisor
floor_divide = _binary("floor_divide", lambda xp, x, y: xp.floor_divide(x, y), differentiable=False)

defvjp(add, lambda g, out, x, y: (g, g))
defjvp(
    add,
    lambda ts, out, x, y: ts[1] if ts[0] is None else (ts[0] if ts[1] is None else ts[0] + ts[1]),
)
defvjp(
    sub, lambda g, out, x, y, _needed=(True, True): (g, neg(g) if _needed[1] else None), masked=True
)
defjvp(
    sub,
    lambda ts, out, x, y: (
        neg(ts[1]) if ts[0] is None else (ts[0] if ts[1] is None else ts[0] - ts[1])
    ),
)
defvjp(
    mul,
    lambda g, out, x, y, _needed=(True, True): (
        mul(g, y) if _needed[0] else None,
        mul(g, x) if _needed[1] else None,
    ),
    masked=True,
)


def _mul_jvp(ts, out, x, y):
    a = None if ts[0] is None else ts[0] * y
    b = None if ts[1] is None else x * ts[1]
    return b if a is None else (a if b is None else a + b)


defjvp(mul, _mul_jvp)


def _div_vjp(g, out, x, y, _needed=(True, True)):
    gx = g / y
    return gx, (neg(gx * out) if _needed[1] else None)


def _div_jvp(ts, out, x, y):
    a = None if ts[0] is None else ts[0] / y
    b = None if ts[1] is None else neg(ts[1] * out / y)
    return b if a is None else (a if b is None else a + b)


defvjp(div, _div_vjp, masked=True)
defjvp(div, _div_jvp)


def _pow_dy(out, x, y):
    from .. import ops

    if _dt.is_complex(x.dtype):
        return out * log(x)
    # d/dy x**y = x**y log x, defined as 0 where x == 0 (the limit for y > 0)
    positive = ops.greater(x, 0.0)
    safe = ops.where(positive, x, 1.0)
    return ops.where(positive, out * log(safe), 0.0)


def _pow_dx(out, x, y):
    from .. import ops

    # y x^(y-1), exactly 0 where y == 0: keeps x^1, x^2 ... finite at x == 0 in every order
    # (the next derivative would otherwise be 0 * 0^-1 = nan)
    zero = ops.equal(y, 0.0)
    safe_y = ops.where(zero, 1.0, y)
    return ops.where(zero, 0.0, safe_y * pow(x, safe_y - 1.0))


def_partials(pow, _pow_dx, _pow_dy)


def _max_partials(pick_x):
    from .. import ops

    def dx(out, x, y):
        return ops.astype(pick_x(x, y), x.dtype) + 0.5 * ops.astype(ops.equal(x, y), x.dtype)

    def dy(out, x, y):
        return ops.astype(pick_x(y, x), x.dtype) + 0.5 * ops.astype(ops.equal(x, y), x.dtype)

    return dx, dy


def_partials(maximum, *_max_partials(lambda a, b: greater(a, b)))
def_partials(minimum, *_max_partials(lambda a, b: less(a, b)))
def_partials(
    atan2, lambda out, y, x: x / (x * x + y * y), lambda out, y, x: neg(y) / (x * x + y * y)
)
def_partials(rem, lambda out, x, y: _ones(x), lambda out, x, y: neg(floor(x / y)))


def _ones(x):
    from .. import ops

    return ops.ones_like(x)


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
batch_rules[select] = elementwise_rule(select)


def _select_vjp(g, out, c, x, y):
    from .. import ops

    zero = ops.zeros_like(g)
    return None, select(c, g, zero), select(c, zero, g)


def _select_jvp(ts, out, c, x, y):
    from .. import ops

    tx = ts[1] if ts[1] is not None else ops.zeros_like(out)
    ty = ts[2] if ts[2] is not None else ops.zeros_like(out)
    return select(c, tx, ty)


defvjp(select, _select_vjp)
defjvp(select, _select_jvp)


# ---- complex parts and casts (linear) -----------------------------------------------------
def _real_aval(x):
    return ShapedArray(x.shape, _dt.real_dtype(x.dtype))


real = defprim("real", lambda xp, x: xp.real(x).copy() if x.dtype.kind == "c" else x, _real_aval)
imag = defprim(
    "imag", lambda xp, x: xp.imag(x).copy() if x.dtype.kind == "c" else xp.zeros_like(x), _real_aval
)
conj = _unary("conj", lambda xp, x: xp.conj(x))
complex = defprim(
    "complex",
    lambda xp, re, im: xp.asarray(
        re + 1j * im if re.dtype == np.float64 else (re + np.complex64(1j) * im),
        dtype=_dt.complex_dtype(re.dtype),
    ),
    lambda re, im: ShapedArray(
        np.broadcast_shapes(re.shape, im.shape), _dt.complex_dtype(re.dtype)
    ),
)
for _p in (real, imag, complex):
    batch_rules[_p] = elementwise_rule(_p)


def _complex_of(re, im):
    return complex(re, im)


def_linear_unary(
    real, lambda g, out, x: _complex_of(g, _zeros(g)) if _dt.is_complex(x.dtype) else g
)
def_linear_unary(
    imag, lambda g, out, x: _complex_of(_zeros(g), neg(g)) if _dt.is_complex(x.dtype) else None
)
def_linear_unary(conj, lambda g, out, x: conj(g))
defvjp(complex, lambda g, out, re, im: (real(g), neg(imag(g))))


def _complex_jvp(ts, out, re, im):
    tr = ts[0] if ts[0] is not None else _zeros(re)
    ti = ts[1] if ts[1] is not None else _zeros(im)
    return complex(tr, ti)


defjvp(complex, _complex_jvp)


def _zeros(x):
    from .. import ops

    return ops.zeros_like(x)


def _cast_impl(xp, x, dtype):
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        x = x.real
    return x.astype(dtype)


convert = defprim("convert", _cast_impl, lambda x, dtype: ShapedArray(x.shape, dtype))
batch_rules[convert] = elementwise_rule(convert)


def _convert_t(g, out, x, dtype):
    if not _dt.is_inexact(x.dtype):
        return None
    return convert(g, dtype=x.dtype)


def_linear_unary(convert, _convert_t)
