"""Special-function primitives (``scipy.special`` on the CPU, ``cupyx.scipy.special`` on the GPU).

Only functions that cannot be written well from other primitives are here, each for accuracy
(composites lose it in a tail or overflow early): log Gamma and the polygamma family, erfc,
erfcx, the inverse error functions, log_ndtr and the modified Bessel functions of order 0 and
1. Everything else (ndtr, ndtri, xlogy, entr, sinc, ...) is a composite in
``core/ops/special.py``. Their derivatives (``core/rules/special.py``) are written with these
primitives, so derivatives of any order follow: gammaln' = digamma, polygamma(n)' =
polygamma(n + 1), i0' = i1, ...

All primitives are unary and elementwise on real floating inputs (erfc and erfcx also take
complex ones, as scipy does); float16/bfloat16 are computed in float32.
"""

import numpy as np

from .. import dtypes as _dt
from ..backend.special import special_functions
from ._define import defprim, same_aval

_LOW = (np.dtype("float16"), _dt.bfloat16)


def _unary(name, compute):
    """A unary elementwise primitive ``compute(special_module, x, **params)`` in x's dtype."""

    def impl(xp, x, **params):
        arg = x.astype(np.float32) if x.dtype in _LOW else x
        return compute(special_functions(xp), arg, **params).astype(x.dtype, copy=False)

    return defprim(name, impl, same_aval)


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
