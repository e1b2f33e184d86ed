"""Helpers shared by the layers: parameter creation and argument normalization."""

from ... import dtypes as _dt
from ...tensor import Parameter
from ..init import initializer


def make_parameter(init, shape, dtype, name, requires_grad=True):
    """A Parameter of ``shape`` initialized by ``init`` (name, number, Initializer or Tensor).

    A Tensor ``init`` keeps its own dtype (as in MindSpore); otherwise ``dtype`` is used.
    """
    value = initializer(init, shape, _dt.canonical(dtype) or _dt.default_float)
    return Parameter(value, name=name, requires_grad=requires_grad)


def ntuple(value, n, what, layer):
    """``value`` (int or sequence of n ints) as a tuple of n positive ints."""
    if isinstance(value, int) and not isinstance(value, bool):
        out = (value,) * n
    else:
        out = tuple(value)
        if len(out) != n or not all(isinstance(v, int) and not isinstance(v, bool) for v in out):
            raise ValueError(f"{layer}: {what} must be an int or {n} ints, got {value!r}")
    if any(v < 1 for v in out):
        raise ValueError(f"{layer}: {what} must be positive, got {value!r}")
    return out
