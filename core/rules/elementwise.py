"""Derivative, batching, array-path and lowering rules of the elementwise primitives
(``core/prims/elementwise.py``).

VJPs and JVPs are written with primitives and ``core.ops`` functions, so they are themselves
differentiable to any order. ``array_vjps`` entries are the same VJPs on numpy arrays, for
backward passes nobody differentiates (see ``core.autodiff.reverse.array_vjps``); they share
their formulas with the tensor rules (the partial derivative functions below accept tensors
and arrays alike) or call the primitive's own implementation (tanh).
"""

import math

import numpy as np

from .. import dtypes as _dt
from ..autodiff.reverse import array_vjps
from ..jit.lowering import deflowering
from ..ops import creation as ops_creation
from ..ops import elementwise as ops_elementwise
from ..prims.elementwise import (
    abs,
    add,
    atan2,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    ceil,
    complex,
    conj,
    convert,
    cos,
    div,
    equal,
    erf,
    exp,
    expm1,
    floor,
    floor_divide,
    gelu,
    gelu_backward,
    gelu_tanh,
    gelu_tanh_backward,
    greater,
    greater_equal,
    imag,
    isfinite,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    logistic,
    maximum,
    minimum,
    mul,
    neg,
    not_equal,
    pow,
    real,
    rem,
    round,
    select,
    sign,
    sin,
    sqrt,
    stop_gradient,
    sub,
    tanh,
    tanh_backward,
    tanh_backward_t,
)
from ..vmap import batch_rules
from ._define import (
    broadcasting_batch_rule,
    def_linear_unary,
    def_partials,
    defjvp,
    defvjp,
    tangent_sum,
)

# ---- batching: every primitive of the family broadcasts elementwise ---------------------
for _p in (
    # unary
    neg, exp, expm1, log, log1p, log2, log10, sqrt, sin, cos, tanh, logistic, erf, abs, sign,
    floor, ceil, round, logical_not, bitwise_not, isfinite, stop_gradient, gelu, gelu_tanh,
    real, imag, conj, convert,
    # binary and ternary
    tanh_backward, tanh_backward_t, gelu_backward, gelu_tanh_backward, add, sub, mul, div, pow, maximum, minimum,
    atan2, rem, floor_divide, equal, not_equal, less, less_equal, greater, greater_equal,
    logical_and, logical_or, logical_xor, bitwise_and, bitwise_or, bitwise_xor, select, complex,
):  # fmt: skip
    batch_rules[_p] = broadcasting_batch_rule(_p)


def _array_rule(partial):
    """The array path of a unary rule ``def_partials(prim, partial)``: ``g * partial``."""
    return lambda g, out, x, needed: (g * partial(out, x),)


# ---- unary ------------------------------------------------------------------------------
def _exp_partial(out, x):
    return out


def _logistic_partial(out, x):
    return out * (1.0 - out)


def_linear_unary(neg, lambda g, out, x: neg(g))
def_partials(exp, _exp_partial)
def_partials(expm1, lambda out, x: out + 1.0)
def_partials(log1p, lambda out, x: 1.0 / (1.0 + x))
def_partials(sin, lambda out, x: cos(x))
def_partials(cos, lambda out, x: neg(sin(x)))
def_partials(logistic, _logistic_partial)
def_partials(erf, lambda out, x: (2.0 / math.sqrt(math.pi)) * exp(neg(x * x)))
defvjp(log, lambda g, out, x: (g / x,))
defjvp(log, lambda ts, out, x: ts[0] / x)
def_partials(log2, lambda out, x: (1.0 / math.log(2.0)) / x)
def_partials(log10, lambda out, x: (1.0 / math.log(10.0)) / x)
defvjp(sqrt, lambda g, out, x: (g / (2.0 * out),))
defjvp(sqrt, lambda ts, out, x: ts[0] / (2.0 * out))


def _abs_vjp(g, out, x):
    if _dt.is_complex(x.dtype):
        # JAX convention for complex inputs: the cotangent of x is g * conj(x) / |x|.
        return (g * (ops_elementwise.conj(x) / ops_elementwise.astype(out, x.dtype)),)
    return (g * sign(x),)


def _abs_jvp(ts, out, x):
    if _dt.is_complex(x.dtype):
        return ops_elementwise.real(ops_elementwise.conj(x) * ts[0]) / out
    return ts[0] * sign(x)


defvjp(abs, _abs_vjp)
defjvp(abs, _abs_jvp)

# ---- tanh and its fused backward passes (formulas: the primitives' implementations) ------
defvjp(tanh, lambda g, out, x: (tanh_backward(g, out),))
defjvp(tanh, lambda ts, out, x: tanh_backward(ts[0], out))


def _tanh_backward_vjp(c, out, g, t, _needed=(True, True)):
    # g (1 - t^2) is linear in g (the same primitive) and has -2 g t c for t
    return (
        tanh_backward(c, t) if _needed[0] else None,
        tanh_backward_t(c, g, t) if _needed[1] else None,
    )


def _tanh_backward_jvp(ts, out, g, t):
    a = None if ts[0] is None else tanh_backward(ts[0], t)
    b = None if ts[1] is None else tanh_backward_t(ts[1], g, t)
    return tangent_sum(a, b)


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
    return tangent_sum(
        None if tc is None else tanh_backward_t(tc, g, t),
        None if tg is None else tanh_backward_t(c, tg, t),
        None if tt is None else tanh_backward_t(c, g, tt),
    )


defvjp(tanh_backward, _tanh_backward_vjp, masked=True)
defjvp(tanh_backward, _tanh_backward_jvp)
defvjp(tanh_backward_t, _tanh_backward_t_vjp, masked=True)
defjvp(tanh_backward_t, _tanh_backward_t_jvp)


# ---- gelu and its fused backward ----------------------------------------------------------
def _normal_pdf(x):
    """phi(x), the standard normal density."""
    return (1.0 / math.sqrt(2.0 * math.pi)) * exp(-0.5 * (x * x))


defvjp(gelu, lambda g, out, x: (gelu_backward(g, x),))
defjvp(gelu, lambda ts, out, x: gelu_backward(ts[0], x))
def_partials(
    gelu_backward,
    lambda out, g, x: gelu_backward(ops_creation.ones_like(g), x),
    lambda out, g, x: g * _normal_pdf(x) * (2.0 - x * x),  # d/dx (Phi + x phi) = phi (2 - x^2)
)


# tanh-form GELU f(x) = 0.5 x (1 + tanh u), u = k (x + c x^3): f' is gelu_tanh_backward's
# formula; f'' = (1 - t^2) (u' - x t u'^2 + 3 k c x^2), with u' = k (1 + 3 c x^2)
_GK, _GC = math.sqrt(2.0 / math.pi), 0.044715


def _gelu_tanh_second(x):
    t = tanh(_GK * (x + _GC * (x * x * x)))
    du = _GK * (1.0 + (3.0 * _GC) * (x * x))
    return (1.0 - t * t) * (du - x * t * (du * du) + (3.0 * _GK * _GC) * (x * x))


defvjp(gelu_tanh, lambda g, out, x: (gelu_tanh_backward(g, x),))
defjvp(gelu_tanh, lambda ts, out, x: gelu_tanh_backward(ts[0], x))
def_partials(
    gelu_tanh_backward,
    lambda out, g, x: gelu_tanh_backward(ops_creation.ones_like(g), x),
    lambda out, g, x: g * _gelu_tanh_second(x),
)

# ---- binary -----------------------------------------------------------------------------
defvjp(add, lambda g, out, x, y: (g, g))
defjvp(add, lambda ts, out, x, y: tangent_sum(ts[0], ts[1]))
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
defjvp(
    mul,
    lambda ts, out, x, y: tangent_sum(
        None if ts[0] is None else ts[0] * y, None if ts[1] is None else x * ts[1]
    ),
)


def _div_vjp(g, out, x, y, _needed=(True, True)):
    # operators only: the same function is div's rule on tensors and on arrays
    gx = g / y
    return gx, (-(gx * out) if _needed[1] else None)


def _div_jvp(ts, out, x, y):
    a = None if ts[0] is None else ts[0] / y
    b = None if ts[1] is None else neg(ts[1] * out / y)
    return tangent_sum(a, b)


defvjp(div, _div_vjp, masked=True)
defjvp(div, _div_jvp)


def _pow_dx(out, x, y):
    # y x^(y-1), exactly 0 where y == 0: keeps x^1, x^2 ... finite at x == 0 in every order
    # (the next derivative would otherwise be 0 * 0^-1 = nan)
    zero = ops_elementwise.equal(y, 0.0)
    safe_y = ops_elementwise.where(zero, 1.0, y)
    return ops_elementwise.where(zero, 0.0, safe_y * pow(x, safe_y - 1.0))


def _pow_dy(out, x, y):
    if _dt.is_complex(x.dtype):
        return out * log(x)
    # d/dy x**y = x**y log x, defined as 0 where x == 0 (the limit for y > 0)
    positive = ops_elementwise.greater(x, 0.0)
    safe = ops_elementwise.where(positive, x, 1.0)
    return ops_elementwise.where(positive, out * log(safe), 0.0)


def_partials(pow, _pow_dx, _pow_dy)


def _extremum_partials(pick_x):
    """Partials of maximum (``pick_x`` = greater) or minimum (less): the picked input gets
    the cotangent, ties share it equally."""

    def tie(x, y):
        return 0.5 * ops_elementwise.astype(ops_elementwise.equal(x, y), x.dtype)

    def dx(out, x, y):
        return ops_elementwise.astype(pick_x(x, y), x.dtype) + tie(x, y)

    def dy(out, x, y):
        return ops_elementwise.astype(pick_x(y, x), x.dtype) + tie(x, y)

    return dx, dy


def_partials(maximum, *_extremum_partials(greater))
def_partials(minimum, *_extremum_partials(less))
def_partials(
    atan2, lambda out, y, x: x / (x * x + y * y), lambda out, y, x: neg(y) / (x * x + y * y)
)
def_partials(rem, lambda out, x, y: ops_creation.ones_like(x), lambda out, x, y: neg(floor(x / y)))


# ---- select -------------------------------------------------------------------------------
def _select_vjp(g, out, c, x, y):
    zero = ops_creation.zeros_like(g)
    return None, select(c, g, zero), select(c, zero, g)


def _select_jvp(ts, out, c, x, y):
    tx = ts[1] if ts[1] is not None else ops_creation.zeros_like(out)
    ty = ts[2] if ts[2] is not None else ops_creation.zeros_like(out)
    return select(c, tx, ty)


defvjp(select, _select_vjp)
defjvp(select, _select_jvp)


# ---- complex parts and casts (linear) -----------------------------------------------------
def _real_t(g, out, x):
    if not _dt.is_complex(x.dtype):
        return g
    return complex(g, ops_creation.zeros_like(g))


def _imag_t(g, out, x):
    if not _dt.is_complex(x.dtype):
        return None
    return complex(ops_creation.zeros_like(g), neg(g))


def _complex_jvp(ts, out, re, im):
    tr = ts[0] if ts[0] is not None else ops_creation.zeros_like(re)
    ti = ts[1] if ts[1] is not None else ops_creation.zeros_like(im)
    return complex(tr, ti)


def _convert_t(g, out, x, dtype):
    if not _dt.is_inexact(x.dtype):
        return None
    return convert(g, dtype=x.dtype)


def_linear_unary(real, _real_t)
def_linear_unary(imag, _imag_t)
def_linear_unary(conj, lambda g, out, x: conj(g))
defvjp(complex, lambda g, out, re, im: (real(g), neg(imag(g))))
defjvp(complex, _complex_jvp)
def_linear_unary(convert, _convert_t)


# ---- the array path: the same VJPs on numpy arrays (rule(g, out, *xs, needed)) -----------
array_vjps.update(
    {
        add: lambda g, out, x, y, needed: (g, g),
        sub: lambda g, out, x, y, needed: (g, -g if needed[1] else None),
        mul: lambda g, out, x, y, needed: (
            g * y if needed[0] else None,
            g * x if needed[1] else None,
        ),
        div: _div_vjp,
        neg: lambda g, out, x, needed: (-g,),
        exp: _array_rule(_exp_partial),
        # the formula of tanh_backward's reference, in numpy: a backend kernel's call costs
        # more than it saves on the small arrays this path is for (W1: 16 x 16)
        tanh: lambda g, out, x, needed: (tanh_backward.reference(np, g, out),),
        logistic: _array_rule(_logistic_partial),
    }
)


# ---- lowering (core/jit/lowering.py): fused templates, ufuncs, fresh buffers --------------
# Templates that repeat an input name it in ``name_args``, so no inlined work is repeated.
for _prim, _template, _ufunc in (
    (add, "({0} + {1})", "add"),
    (sub, "({0} - {1})", "subtract"),
    (mul, "({0} * {1})", "multiply"),
    (div, "({0} / {1})", "true_divide"),
    (neg, "(-{0})", "negative"),
    (greater, "({0} > {1})", "greater"),
    (greater_equal, "({0} >= {1})", "greater_equal"),
    (less, "({0} < {1})", "less"),
    (less_equal, "({0} <= {1})", "less_equal"),
    (equal, "({0} == {1})", "equal"),
    (not_equal, "({0} != {1})", "not_equal"),
):
    deflowering(_prim, numexpr=_template, c=_template, ufunc=_ufunc)
for _prim, _function in (
    (exp, "exp"),
    (expm1, "expm1"),
    (log, "log"),
    (log1p, "log1p"),
    (sqrt, "sqrt"),
    (sin, "sin"),
    (cos, "cos"),
    (tanh, "tanh"),
):
    _template = f"{_function}({{0}})"
    deflowering(_prim, numexpr=_template, c=_template, ufunc=_function, math=(_function,))
deflowering(abs, numexpr="abs({0})", c="fabs({0})", ufunc="absolute", math=("fabs",))
deflowering(pow, numexpr="({0} ** {1})", c="pow({0}, {1})", ufunc="power", math=("pow",))
# NaN propagates as in numpy's maximum/minimum (a NaN in {1} fails the comparison)
for _prim, _wins in ((maximum, ">"), (minimum, "<")):
    deflowering(
        _prim,
        numexpr=f"where({{0}} != {{0}}, {{0}}, where({{0}} {_wins} {{1}}, {{0}}, {{1}}))",
        c=f"(({{0}} != {{0}} || {{0}} {_wins} {{1}}) ? {{0}} : {{1}})",
        name_args=(0, 1),
        ufunc=_prim.name,
    )
deflowering(
    select,
    numexpr="where({0}, {1}, {2})",
    c="({0} ? {1} : {2})",
    fresh=True,
    emit=lambda args, params: f"xp.where({args[0]}, {args[1]}, {args[2]})",
)
deflowering(logistic, numexpr="(1 / (1 + exp(-{0})))", c="(1 / (1 + exp(-{0})))", math=("exp",))
deflowering(erf, c="erf({0})", math=("erf",))  # numexpr has no erf: native C and GPU only
deflowering(
    gelu,
    c="((0.5 * {0}) * (1 + erf({0} * 0.70710678118654752)))",
    name_args=(0,),
    math=("erf",),
)
deflowering(
    gelu_backward,
    c="({0} * (0.5 * (1 + erf({1} * 0.70710678118654752))"
    " + {1} * (0.39894228040143268 * exp(-0.5 * {1} * {1}))))",
    name_args=(1,),
    math=("erf", "exp"),
)
deflowering(
    gelu_tanh,
    c="((0.5 * {0}) * (1 + tanh({0} * (0.79788456080286536 + 0.035677408136300125 * {0} * {0}))))",
    name_args=(0,),
    math=("tanh",),
)
deflowering(
    gelu_tanh_backward,
    c="({0} * (0.5 * (1 + tanh({1} * (0.79788456080286536 + 0.035677408136300125 * {1} * {1})))"
    " + (0.5 * {1}) * (1 - tanh({1} * (0.79788456080286536 + 0.035677408136300125 * {1} * {1}))"
    " * tanh({1} * (0.79788456080286536 + 0.035677408136300125 * {1} * {1})))"
    " * (0.79788456080286536 + 0.10703222440890038 * {1} * {1})))",
    name_args=(1,),
    math=("tanh",),
)
deflowering(
    tanh_backward,
    numexpr="({0} * (1 - {1} * {1}))",
    c="({0} * (1 - {1} * {1}))",
    name_args=(1,),
)
deflowering(tanh_backward_t, numexpr="(((-2 * {0}) * {1}) * {2})", c="(((-2 * {0}) * {1}) * {2})")

# not fused: plain ufunc calls (each a single numpy pass; not seen in hot elementwise chains)
for _prim, _ufunc in (
    (atan2, "arctan2"),
    (logical_and, "logical_and"),
    (logical_or, "logical_or"),
    (floor, "floor"),
    (ceil, "ceil"),
    (sign, "sign"),
):
    deflowering(_prim, ufunc=_ufunc, unfused="not in hot elementwise chains: one ufunc call")
deflowering(convert, fresh=True, unfused="a dtype change: fusion keeps one dtype per kernel")
for _prim, _why in (
    (log2, "not in hot elementwise chains"),
    (log10, "not in hot elementwise chains"),
    (round, "not in hot elementwise chains"),
    (rem, "Python's sign convention: C's fmod truncates toward zero"),
    (floor_divide, "Python's sign convention: C's division truncates toward zero"),
    (logical_not, "boolean logic: not in hot elementwise chains"),
    (logical_xor, "boolean logic: not in hot elementwise chains"),
    (bitwise_not, "integers: fused kernels are float32/float64/bool only"),
    (bitwise_and, "integers: fused kernels are float32/float64/bool only"),
    (bitwise_or, "integers: fused kernels are float32/float64/bool only"),
    (bitwise_xor, "integers: fused kernels are float32/float64/bool only"),
    (isfinite, "not in hot elementwise chains"),
    (stop_gradient, "the identity: its result aliases its input"),
    (real, "complex parts: fused kernels are real only"),
    (imag, "complex parts: fused kernels are real only"),
    (conj, "complex: fused kernels are real only"),
    (complex, "complex: fused kernels are real only"),
):
    deflowering(_prim, unfused=_why)
