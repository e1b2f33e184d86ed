"""``autograd.scipy.linalg`` on diffsci."""

from .._resolve import lookup as _lookup


def __getattr__(name):
    return _lookup(name, ["core.scipy.linalg", "core.ops.linalg", "core.ops"])
