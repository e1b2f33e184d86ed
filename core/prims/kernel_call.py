"""``kernel_call``: a composite function whose value a native kernel computes.

A domain with a hot loop the elementwise fusion of ``core.jit`` cannot make fast (a finite-volume
flux: a stencil gather, a 5x5 projection, WENO weights and a Riemann solver per face, hundreds
of operations on every face) writes it twice: once with core ops (the *reference*: what every
transformation differentiates, batches and what other backends run) and once as a native kernel
for the value alone. ``kernel_call`` is the primitive that binds the two: evaluating it (eagerly
or inside a compiled graph) runs ``kernel(xp, *arrays)``, and where the kernel declines (it
returns None: another backend, a dtype it does not handle, no C compiler) the reference runs
instead. Its VJP, JVP and batching rules (``core/rules/kernel_call.py``) are those of the
reference, so ``grad``, ``jvp``, ``vmap`` and any nesting of them see exactly the composite.

The kernel must compute what the reference computes (up to rounding): the domain's tests check
the two against each other.
"""

from ..primitive import ShapedArray
from ..tensor import Tensor, resolve
from ._define import defprim

__all__ = ["kernel_call"]


def _wrap(array):
    t = Tensor.__new__(Tensor)
    t._value = array
    return t


def _impl(xp, *arrays, reference, kernel, shape, dtype):
    out = kernel(xp, *arrays) if kernel is not None else None
    if out is None:
        out = resolve(reference(*[_wrap(a) for a in arrays]))._value
    if tuple(out.shape) != tuple(shape) or out.dtype != dtype:
        raise ValueError(
            f"kernel_call {getattr(reference, '__name__', reference)}: the result has shape "
            f"{tuple(out.shape)} and dtype {out.dtype}, declared {tuple(shape)} {dtype}"
        )
    return out


def _abstract(*avals, reference, kernel, shape, dtype):
    return ShapedArray(tuple(shape), dtype)


kernel_call = defprim("kernel_call", _impl, _abstract)
