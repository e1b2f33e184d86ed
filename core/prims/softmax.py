"""The softmax and log-softmax primitives.

Softmax is a composite of max, sub, exp, sum and div, but as five separate primitives it
makes five passes over (and four fresh allocations of) tensors that dominate attention's memory
traffic, e.g. [N, heads, N, N] in triangle attention. As one primitive it allocates once and
works in that buffer (speed). Log-softmax is a primitive for the same reason, and so that its
derivative is the short stable ``g - softmax * sum(g)`` rather than the chain rule through
``x - max - log(sum(exp(x - max)))``.

Declared here: the reference implementations (against the array namespace ``xp``) and the shape
rule. Derivatives and batching rules are in ``core/rules/softmax.py``; the CPU's kernels (a
native pass per row, cache-blocked numpy) in ``core/backend/cpu_impls/nn.py``.
"""

from ..primitive import ShapedArray
from ._define import defprim


def _shift(xp, x, axis):
    """``x - max(x)`` along ``axis`` in a fresh buffer; rows whose max is not finite are not
    shifted (a row of -inf then gives NaN, as in PyTorch)."""
    m = xp.max(x, axis=axis, keepdims=True)
    if not bool(xp.isfinite(m).all()):
        m = xp.where(xp.isfinite(m), m, 0)
    return xp.subtract(x, m)


def _softmax_impl(xp, x, axis):
    out = _shift(xp, x, axis)
    xp.exp(out, out=out)
    out /= out.sum(axis=axis, keepdims=True)
    return out


def _log_softmax_impl(xp, x, axis):
    out = _shift(xp, x, axis)
    out -= xp.log(xp.exp(out).sum(axis=axis, keepdims=True))
    return out


def _axis_aval(name):
    def rule(x, axis):
        if not 0 <= axis < len(x.shape):
            raise ValueError(f"{name}: axis {axis} out of range for shape {tuple(x.shape)}")
        return ShapedArray(x.shape, x.dtype)

    return rule


# softmax(x)[i] = exp(x[i]) / sum_j exp(x[j]) along ``axis`` (a non-negative int)
softmax = defprim("softmax", _softmax_impl, _axis_aval("softmax"))
# log_softmax(x)[i] = x[i] - log(sum_j exp(x[j])) along ``axis``
log_softmax = defprim("log_softmax", _log_softmax_impl, _axis_aval("log_softmax"))
