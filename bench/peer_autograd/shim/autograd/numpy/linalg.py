"""``autograd.numpy.linalg`` on diffsci."""

from .._resolve import lookup as _lookup


# autograd.numpy.linalg's own helpers (not numpy API), which its tests call
def T(x):
    from diffsci.core import ops

    return ops.swapaxes(x, -1, -2)


def _dot(a, b):
    from diffsci.core import ops

    return ops.einsum("...ij,...jk->...ik", a, b)


def __getattr__(name):
    return _lookup(name, ["diffsci.core.numpy.linalg", "diffsci.core.ops.linalg", "diffsci.core.ops"])
