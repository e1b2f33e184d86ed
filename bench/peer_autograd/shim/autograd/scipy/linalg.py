"""``autograd.scipy.linalg`` on diffsci."""

from .._resolve import lookup as _lookup


def __getattr__(name):
    return _lookup(name, ["diffsci.core.scipy.linalg", "diffsci.core.ops.linalg", "diffsci.core.ops"])
