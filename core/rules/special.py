"""Derivative, batching and lowering rules of the special functions (``core/prims/special.py``).

Every derivative is written with the special-function primitives themselves (gammaln' =
digamma = polygamma(n=0), polygamma(n)' = polygamma(n + 1), i0' = i1, ...), so derivatives of
any order follow.
"""

import math

from ..jit.lowering import deflowering
from ..ops import elementwise as ops_elementwise
from ..prims.special import (
    erfc,
    erfcinv,
    erfcx,
    erfinv,
    gammaln,
    i0,
    i0e,
    i1,
    i1e,
    log_ndtr,
    polygamma,
)
from ..vmap import batch_rules
from ._define import broadcasting_batch_rule, def_partials

_SQRT_PI = math.sqrt(math.pi)

for _p in (gammaln, polygamma, erfc, erfcx, erfinv, erfcinv, log_ndtr, i0, i1, i0e, i1e):
    batch_rules[_p] = broadcasting_batch_rule(_p)
    deflowering(_p, unfused="scipy.special functions: no numexpr or C template written")


def _over_x(f, x, small_value):
    """``f(x) / x`` for an odd f with f(x) / x -> ``small_value(x)`` near 0 (its Taylor
    series there), without 0 / 0 and with finite derivatives of any order at 0."""
    small = ops_elementwise.less(ops_elementwise.abs(x), 1e-4)  # next term < 1e-18 relative
    safe = ops_elementwise.where(small, 1.0, x)
    return ops_elementwise.where(small, small_value(x), f(safe) / safe)


def_partials(gammaln, lambda out, x: polygamma(x, n=0))
def_partials(polygamma, lambda out, x, n: polygamma(x, n=n + 1))
def_partials(erfc, lambda out, x: (-2.0 / _SQRT_PI) * ops_elementwise.exp(-(x * x)))
# d/dx exp(x^2) erfc(x) = 2 x erfcx(x) - 2 / sqrt(pi)
def_partials(erfcx, lambda out, x: 2.0 * x * out - 2.0 / _SQRT_PI)
# inverse functions: 1 / erf'(out) = sqrt(pi) / 2 exp(out^2)
def_partials(erfinv, lambda out, x: (0.5 * _SQRT_PI) * ops_elementwise.exp(out * out))
def_partials(erfcinv, lambda out, x: (-0.5 * _SQRT_PI) * ops_elementwise.exp(out * out))
# d/dx log ndtr(x) = phi(x) / ndtr(x) = sqrt(2 / pi) / erfcx(-x / sqrt 2): the Mills ratio,
# finite for every x (phi / ndtr as two numbers underflows to 0 / 0 below x = -38)
def_partials(log_ndtr, lambda out, x: math.sqrt(2.0 / math.pi) / erfcx(x * (-1.0 / math.sqrt(2.0))))
def_partials(i0, lambda out, x: i1(x))
# i1' = (i0 + i2) / 2 = i0 - i1 / x
def_partials(i1, lambda out, x: i0(x) - _over_x(i1, x, lambda t: 0.5 + t * t / 16.0))
# i0e = exp(-|x|) i0:  i0e' = i1e - sign(x) i0e;  i1e' = i0e - i1e (sign(x) + 1 / x)
def_partials(i0e, lambda out, x: i1e(x) - ops_elementwise.sign(x) * out)


def _i1e_over_x_near_0(t):
    return ops_elementwise.exp(-ops_elementwise.abs(t)) * (0.5 + t * t / 16.0)


def_partials(
    i1e,
    lambda out, x: i0e(x) - ops_elementwise.sign(x) * out - _over_x(i1e, x, _i1e_over_x_near_0),
)
