"""The softmax primitive.

Softmax is a composite of max, sub, exp, sum and div, but as five separate primitives it
makes five passes over (and four fresh allocations of) tensors that dominate attention's memory
traffic, e.g. [N, heads, N, N] in triangle attention. As one primitive it allocates once and
works in that buffer (speed; its derivatives are still written with core ops).
"""

from ..autodiff.rules import defjvp, defvjp
from ..primitive import ShapedArray
from ..vmap import axis_rule, batch_rules
from ._define import defprim


def _softmax_impl(xp, x, axis):
    m = xp.max(x, axis=axis, keepdims=True)
    if not bool(xp.isfinite(m).all()):
        m = xp.where(xp.isfinite(m), m, 0)  # rows of -inf give 0/0 = NaN, as in PyTorch
    e = xp.subtract(x, m)  # numpy's SIMD exp beats a fused numexpr exp (scalar libm) 3x
    xp.exp(e, out=e)
    s = e.sum(axis=axis, keepdims=True)
    xp.divide(e, s, out=e)
    return e


def _softmax_abstract(x, axis):
    if not 0 <= axis < len(x.shape):
        raise ValueError(f"softmax: axis {axis} out of range for shape {tuple(x.shape)}")
    return ShapedArray(x.shape, x.dtype)


softmax = defprim("softmax", _softmax_impl, _softmax_abstract)


def _sum(x, axis):
    from .reduction import reduce_sum

    return reduce_sum(x, axes=(axis,), keepdims=True)


# d softmax = s * (dx - sum(s * dx)); the same expression transposes onto the cotangent
defvjp(softmax, lambda g, s, x, axis: (s * (g - _sum(g * s, axis)),))
defjvp(softmax, lambda ts, s, x, axis: s * (ts[0] - _sum(ts[0] * s, axis)))
batch_rules[softmax] = axis_rule(softmax, ("axis",))
