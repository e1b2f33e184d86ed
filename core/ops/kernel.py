"""``ops.kernel_call``: run a composite function through a native kernel of its own."""

from .. import dtypes as _dt
from ..prims.kernel_call import kernel_call as _kernel_call
from ..tensor import Tensor

__all__ = ["kernel_call"]


def kernel_call(reference, kernel, *args, shape, dtype=None):
    """``reference(*args)``, its value computed by ``kernel`` where the kernel can.

    Evaluating the call (eagerly, or inside a ``core.jit`` graph, where it is one equation)
    runs ``kernel(xp, *arrays)`` on the backend arrays of ``args``; a kernel returns the result
    array, or None to decline (another backend, an unsupported dtype), and then ``reference``
    runs. Every transformation (``grad``, ``jvp``, ``vmap``, their nestings) uses
    ``reference``: the kernel only ever computes values. See ``core/prims/kernel_call.py``.

    Args:
        reference (callable): ``reference(*tensors) -> Tensor``, written with core ops.
        kernel (callable | None): ``kernel(xp, *arrays) -> array | None``; it must compute
            what ``reference`` computes, up to rounding (test the two against each other).
        *args (Tensor): the operands (tensors only; close over static values in both
            functions).
        shape (tuple[int]): the result's shape.
        dtype: the result's dtype (default: the first operand's).

    Returns:
        Tensor: ``shape``, ``dtype``.
    """
    if not args:
        raise ValueError("kernel_call needs at least one tensor operand")
    args = tuple(a if isinstance(a, Tensor) else Tensor(a) for a in args)
    dtype = args[0].dtype if dtype is None else _dt.canonical(dtype)
    return _kernel_call(
        *args, reference=reference, kernel=kernel, shape=tuple(int(s) for s in shape), dtype=dtype
    )
