"""Special-function primitives (``scipy.special`` on the CPU, ``cupyx.scipy.special`` on the GPU).

Only functions that cannot be written well from other primitives are here, each for accuracy
(composites lose it in a tail or overflow early): log Gamma and the polygamma family, erfc,
erfcx, the inverse error functions, log_ndtr and the modified Bessel functions of order 0 and
1. Everything else (ndtr, ndtri, xlogy, entr, sinc, ...) is a composite in
``core/ops/special.py``. Every derivative is written with these primitives, so derivatives of
any order follow: gammaln' = digamma, polygamma(n)' = polygamma(n + 1), i0' = i1, ...

All primitives are unary and elementwise on real floating inputs (erfc and erfcx also take
complex ones, as scipy does); float16/bfloat16 are computed in float32.
"""

import math

import numpy as np

from .. import dtypes as _dt
from ..rules._define import def_partials
from ..vmap import batch_rules, elementwise_rule
from ._define import defprim, same_aval

_LOW = (np.dtype("float16"), _dt.bfloat16)
_SQRT_PI = math.sqrt(math.pi)


def _scipy(xp):
    if xp is np:
        import scipy.special as sps

        return sps
    import cupyx.scipy.special as csp

    return csp


def _unary(name, compute):
    """A unary elementwise primitive ``compute(special_module, x, **params)`` in x's dtype."""

    def impl(xp, x, **params):
        arg = x.astype(np.float32) if x.dtype in _LOW else x
        return compute(_scipy(xp), arg, **params).astype(x.dtype, copy=False)

    p = defprim(name, impl, same_aval)
    batch_rules[p] = elementwise_rule(p)
    return p


gammaln = _unary("gammaln", lambda sp, x: sp.gammaln(x))  # log|Gamma(x)|
# polygamma(x, n=0) is digamma: one primitive for the whole family, so that each derivative,
# polygamma(n + 1), is the same primitive with another static ``n``
polygamma = _unary("polygamma", lambda sp, x, n: sp.digamma(x) if n == 0 else sp.polygamma(n, x))
erfc = _unary("erfc", lambda sp, x: sp.erfc(x))  # 1 - erf(x) cancels to 0 for x > 6 (float64)
erfcx = _unary("erfcx", lambda sp, x: sp.erfcx(x))  # exp(x^2) erfc(x), finite where they are not
erfinv = _unary("erfinv", lambda sp, x: sp.erfinv(x))
erfcinv = _unary("erfcinv", lambda sp, x: sp.erfcinv(x))  # erfinv(1 - y) loses the small-y tail
log_ndtr = _unary("log_ndtr", lambda sp, x: sp.log_ndtr(x))  # log(ndtr(x)): -inf below x = -38
i0 = _unary("i0", lambda sp, x: sp.i0(x))
i1 = _unary("i1", lambda sp, x: sp.i1(x))
i0e = _unary("i0e", lambda sp, x: sp.i0e(x))  # exp(-|x|) i0(x): finite where i0 overflows
i1e = _unary("i1e", lambda sp, x: sp.i1e(x))


def _ops():
    from .. import ops

    return ops


def _over_x(f, x, small_value):
    """``f(x) / x`` for an odd f with f(x) / x -> ``small_value(x)`` near 0 (its Taylor
    series there), without 0 / 0 and with finite derivatives of any order at 0."""
    ops = _ops()
    small = ops.less(ops.abs(x), 1e-4)  # next Taylor term < 1e-18 relative below 1e-4
    safe = ops.where(small, 1.0, x)
    return ops.where(small, small_value(x), f(safe) / safe)


def _sign(x):
    return _ops().sign(x)


def_partials(gammaln, lambda out, x: polygamma(x, n=0))
def_partials(polygamma, lambda out, x, n: polygamma(x, n=n + 1))
def_partials(erfc, lambda out, x: (-2.0 / _SQRT_PI) * _ops().exp(-(x * x)))
# d/dx exp(x^2) erfc(x) = 2 x erfcx(x) - 2 / sqrt(pi)
def_partials(erfcx, lambda out, x: 2.0 * x * out - 2.0 / _SQRT_PI)
# inverse functions: 1 / erf'(out) = sqrt(pi) / 2 exp(out^2)
def_partials(erfinv, lambda out, x: (0.5 * _SQRT_PI) * _ops().exp(out * out))
def_partials(erfcinv, lambda out, x: (-0.5 * _SQRT_PI) * _ops().exp(out * out))
# d/dx log ndtr(x) = phi(x) / ndtr(x) = sqrt(2 / pi) / erfcx(-x / sqrt 2): the Mills ratio,
# finite for every x (phi / ndtr as two numbers underflows to 0 / 0 below x = -38)
def_partials(log_ndtr, lambda out, x: math.sqrt(2.0 / math.pi) / erfcx(x * (-1.0 / math.sqrt(2.0))))
def_partials(i0, lambda out, x: i1(x))
# i1' = (i0 + i2) / 2 = i0 - i1 / x
def_partials(i1, lambda out, x: i0(x) - _over_x(i1, x, lambda t: 0.5 + t * t / 16.0))
# i0e = exp(-|x|) i0:  i0e' = i1e - sign(x) i0e;  i1e' = i0e - i1e (sign(x) + 1 / x)
def_partials(i0e, lambda out, x: i1e(x) - _sign(x) * out)
def_partials(
    i1e,
    lambda out, x: (
        i0e(x)
        - _sign(x) * out
        - _over_x(i1e, x, lambda t: _ops().exp(-_ops().abs(t)) * (0.5 + t * t / 16.0))
    ),
)
