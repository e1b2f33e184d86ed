"""Softmax, log-softmax and dropout.

``softmax`` and ``log_softmax`` are primitives (``core/prims/softmax.py``: one buffer instead of
five passes, and a short stable derivative); ``dropout`` multiplies by a Bernoulli mask drawn
from the device's generator (``core.random``, seeded by ``core.set_seed``).
"""

from ..prims import softmax as prims_softmax
from ._convert import as_tensor, normalize_axis
from ._nn_args import as_float
from .random import draw_bernoulli


def _along_axis(prim, x, axis):
    x = as_float(as_tensor(x))
    if x.ndim == 0:
        raise ValueError(f"{prim.name}: needs a tensor of rank >= 1, got a 0-d tensor")
    return prim(x, axis=normalize_axis(axis, x.ndim, prim.name))


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis``, shifted by the maximum so it never overflows.

    A row that is all ``-inf`` gives NaN (0/0), as in PyTorch.
    """
    return _along_axis(prims_softmax.softmax, x, axis)


def log_softmax(x, axis=-1):
    """``x - logsumexp(x)`` along ``axis`` (numerically stable)."""
    return _along_axis(prims_softmax.log_softmax, x, axis)


def dropout(x, p=0.5, training=True):
    """Zero each entry with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    The mask comes from ``core.random`` (repeatable with ``core.set_seed``). Inside
    ``core.vmap`` one mask of the per-example shape is shared by the whole batch.
    """
    x = as_tensor(x)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability p={p} must be in [0, 1]")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    keep = draw_bernoulli(tuple(x.shape), 1.0 - p, dtype=x.dtype)
    return x * (keep * (1.0 / (1.0 - p)))
