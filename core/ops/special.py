"""``core.ops.special``: special functions with ``scipy.special``'s names and argument order.

Primitives (``core/prims/special.py``) where accuracy needs scipy's own evaluation; composites
of primitives everywhere else. All are differentiable to any order; where a function has a
kink or an undefined derivative at a point of its domain, the convention is stated.

    from diffsci.core.ops import special
    special.gammaln(x); special.digamma(x); special.polygamma(2, x); special.xlogy(p, q)
"""

import math

import numpy as np

from .. import dtypes as _dt
from ..prims import special as prims_special
from ..tensor import Tensor, _is_traced
from ._convert import binary_args
from .elementwise import (
    _float_unary,
    _inexact,
    abs,
    astype,
    equal,
    exp,
    greater,
    greater_equal,
    isfinite,
    isnan,
    less,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    neg,
    sigmoid,
    sin,
    softplus,
    stop_gradient,
    where,
)
from .elementwise import erf as erf
from .reduction import logsumexp as _logsumexp

gammaln = _float_unary(prims_special.gammaln)
erfc = _float_unary(prims_special.erfc)
erfcx = _float_unary(prims_special.erfcx)
erfinv = _float_unary(prims_special.erfinv)
erfcinv = _float_unary(prims_special.erfcinv)
log_ndtr = _float_unary(prims_special.log_ndtr)
i0 = _float_unary(prims_special.i0)
i1 = _float_unary(prims_special.i1)
i0e = _float_unary(prims_special.i0e)
i1e = _float_unary(prims_special.i1e)
expit = sigmoid


def logsumexp(a, axis=None, b=None, keepdims=False):
    """log(sum(b * exp(a))) over ``axis`` without overflow (scipy's signature; ``b``: scale
    factors that broadcast against ``a``, default 1)."""
    if b is None:
        return _logsumexp(a, axis=axis, keepdims=keepdims)
    from .reduction import max, sum
    from .shape import broadcast_to, squeeze

    a, b = _inexact_pair(a, b)
    a = broadcast_to(a, np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    m = stop_gradient(max(a, axis=axis, keepdims=True))
    m = where(isfinite(m), m, 0.0)  # all -inf (or an inf): no shift
    out = log(sum(b * exp(a - m), axis=axis, keepdims=True)) + m
    if keepdims:
        return out
    return squeeze(out, tuple(range(a.ndim)) if axis is None else axis)


def digamma(x):
    """psi(x) = d/dx log Gamma(x); its derivative is polygamma(1, x)."""
    return prims_special.polygamma(_inexact(x), n=0)


psi = digamma


def polygamma(n, x):
    """The n-th derivative of digamma. ``n``: a non-negative integer, or a concrete array of
    them that broadcasts against ``x`` (scipy's form; each distinct order is one evaluation)."""
    x = _inexact(x)
    if isinstance(n, Tensor) and _is_traced(n):
        raise TypeError("polygamma: the order n must be concrete (it is a static integer)")
    orders = np.asarray(n.asnumpy() if isinstance(n, Tensor) else n)
    if orders.dtype.kind not in "iuf" or np.any(orders < 0) or np.any(orders != np.floor(orders)):
        raise ValueError(f"polygamma: n must be non-negative integers, got {n!r}")
    if orders.ndim == 0:
        return prims_special.polygamma(x, n=int(orders))
    from .shape import broadcast_to

    shape = np.broadcast_shapes(orders.shape, tuple(x.shape))
    values = [int(k) for k in np.unique(orders)]
    out = prims_special.polygamma(x, n=values[0])
    for k in values[1:]:
        out = where(Tensor(orders == k), prims_special.polygamma(x, n=k), out)
    return broadcast_to(out, shape)


def ndtr(x):
    """The standard normal CDF, 0.5 erfc(-x / sqrt 2): full relative precision in the lower tail."""
    return 0.5 * erfc(neg(_inexact(x)) * (1.0 / math.sqrt(2.0)))


def ndtri(p):
    """The inverse of ndtr: -sqrt(2) erfcinv(2 p) (exact in the lower tail, as scipy's)."""
    return erfcinv(2.0 * _inexact(p)) * (-math.sqrt(2.0))


def logit(p):
    """log(p / (1 - p)). Near p = 1/2 the quotient is formed as 1 + (2p - 1) / (1 - p), whose
    log1p keeps the small result's relative precision (as scipy does)."""
    p = _inexact(p)
    middle = logical_and(greater(p, 0.3), less(p, 0.65))
    q = where(middle, p, 0.5)  # keeps the unused branch finite (log1p(-1) at p = 0)
    return where(middle, log1p((2.0 * q - 1.0) / (1.0 - q)), log(p / (1.0 - p)))


def log_expit(x):
    """log(expit(x)) = -softplus(-x), without overflow or cancellation."""
    return neg(softplus(neg(_inexact(x))))


def _inexact_pair(x, y):
    x, y = binary_args(x, y)
    if not _dt.is_inexact(x.dtype):
        x, y = astype(x, _dt.default_float), astype(y, _dt.default_float)
    return x, y


def _xlog(x, y, log_fn, neutral, valid):
    """``x * log_fn(y)``, and 0 where x == 0 and y is not nan (scipy's rule), also where
    log_fn(y) is infinite or nan: there y is replaced by ``neutral`` (log_fn(neutral) = 0).
    Derivatives at those points: 0 for both inputs (the function is identically 0 along
    x = 0); elsewhere the true ones, d/dx = log_fn(y) and d/dy = x log_fn'(y), also at x == 0."""
    x, y = _inexact_pair(x, y)
    swap = logical_and(equal(x, 0), logical_not(logical_or(valid(y), isnan(y))))
    return x * log_fn(where(swap, neutral, y))


def xlogy(x, y):
    """x * log(y), 0 where x == 0 (also for y == 0). Gradient at x == 0 and y == 0: 0 for both
    inputs; d/dx = log(y) wherever y > 0 (also at x == 0)."""
    return _xlog(x, y, log, 1.0, lambda y: logical_and(greater(y, 0), less(y, math.inf)))


def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0 (also for y == -1); conventions as :func:`xlogy`."""
    return _xlog(x, y, log1p, 0.0, lambda y: logical_and(greater(y, -1.0), less(y, math.inf)))


def entr(x):
    """-x log x for x > 0, 0 at 0, -inf for x < 0. Derivative convention at 0: 0 (the true
    one-sided derivative is +inf)."""
    x = _inexact(x)
    positive = greater(x, 0)
    safe = where(positive, x, 1.0)
    inside = where(positive, neg(safe * log(safe)), where(isnan(x), x, 0.0))
    return where(less(x, 0), -math.inf, inside)


def rel_entr(x, y):
    """x log(x / y) for x, y > 0; 0 where x == 0 and y >= 0; inf elsewhere (nan stays nan).
    Derivative convention where x == 0: 0 for both inputs."""
    x, y = _inexact_pair(x, y)
    inside = logical_and(greater(x, 0), greater(y, 0))
    sx, sy = where(inside, x, 1.0), where(inside, y, 1.0)
    zero = logical_and(equal(x, 0), greater_equal(y, 0))
    out = where(inside, sx * log(sx / sy), where(zero, 0.0, math.inf))
    return where(logical_or(isnan(x), isnan(y)), x + y, out)


def sinc(x):
    """sin(pi x) / (pi x), 1 at 0 (numpy.sinc). Near 0 a Taylor polynomial takes over, so that
    the derivatives of every order are right there too (sinc''(0) = -pi^2 / 3)."""
    x = _inexact(x)
    small = less(abs(x), 1e-3)  # next Taylor term (pi x)^6 / 5040 < 2e-19 below 1e-3
    z = math.pi * where(small, 1.0, x)
    t = math.pi * where(small, x, 0.0)
    t2 = t * t
    return where(small, 1.0 - t2 / 6.0 + t2 * t2 / 120.0, sin(z) / z)
