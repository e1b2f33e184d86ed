"""``autograd.scipy.special`` on diffsci's ``core.ops.special``."""

from .._resolve import lookup as _lookup


def __getattr__(name):
    return _lookup(name, ["diffsci.core.ops.special", "diffsci.core.ops"])
