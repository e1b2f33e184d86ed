"""``autograd.numpy.fft`` on diffsci."""

from .._resolve import lookup as _lookup


def __getattr__(name):
    return _lookup(name, ["diffsci.core.numpy.fft", "diffsci.core.ops.fft"])
