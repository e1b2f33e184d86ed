"""Control flow that works eagerly, under autodiff, vmap and ``core.jit`` (the user functions;
``core.ops`` exports them too).

- ``cond``: eager and under grad the predicate is concrete and one branch runs; under jit or
  vmap (symbolic predicate) both branches are evaluated and the results selected elementwise,
  which keeps it differentiable and batchable (both branches must be finite).
- ``scan``/``fori_loop``: a loop with a static trip count. Under any transformation it is one
  ``scan`` equation whose body is traced once (``core.control.loops``), not unrolled: under jit
  the IR does not grow with the trip count; reverse mode runs a reverse scan over the body's
  VJP, storing every k-th carry (``checkpoint``); forward mode and vmap have rules. With no
  transformation active it is a Python loop over the body (same values).
- ``while_loop``: with a concrete condition a Python loop (differentiable through the tape);
  with a symbolic one (jit, vmap) one ``while`` equation whose condition and body are traced
  once: forward-mode differentiable and batchable, not reverse-differentiable (use
  ``fori_loop``/``scan`` with a fixed trip count for gradients).
"""

from .. import tree as _tree
from ..jit.trace import JitTrace
from ..primitive import Tracer, trace_stack
from ..tensor import Tensor
from . import loops


def _concrete_bool(pred):
    if isinstance(pred, Tensor) and not isinstance(pred, Tracer):
        return bool(pred)
    if isinstance(pred, Tracer):
        try:
            return bool(pred.concrete())
        except NotImplementedError:
            return None
    return bool(pred)


def cond(pred, true_fn, false_fn, *operands):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``; outputs of both branches
    must have the same structure, shapes and dtypes."""
    from ..ops.elementwise import where

    flag = _concrete_bool(pred)
    if flag is not None:
        return true_fn(*operands) if flag else false_fn(*operands)
    t_leaves, t_def = _tree.flatten(true_fn(*operands))
    f_leaves, f_def = _tree.flatten(false_fn(*operands))
    if len(t_leaves) != len(f_leaves) or t_def != f_def:
        raise ValueError("cond: true_fn and false_fn return different structures")
    out = []
    for t, f in zip(t_leaves, f_leaves, strict=True):
        if tuple(t.shape) != tuple(f.shape) or t.dtype != f.dtype:
            raise ValueError(
                f"cond: branch outputs differ: {t.dtype}{list(t.shape)} vs {f.dtype}{list(f.shape)}"
            )
        out.append(where(pred, t, f))
    return _tree.unflatten(t_def, out)


def scan(f, init, xs=None, length=None, reverse=False, checkpoint=None):
    """``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns ``(carry, ys)``
    with the ``y`` stacked along a new leading axis (JAX's ``lax.scan`` contract).

    Under any transformation (``core.jit``, grad, jvp, vmap) the body is traced once into a
    graph and the loop is one ``scan`` equation (see ``core.control.loops``), whatever its length;
    without one it is a plain Python loop over ``f`` (same values).

    Args:
        f: ``(carry, x) -> (carry, y)``; carry, x and y are pytrees of tensors; the new carry
            has the structure, shapes and dtypes of ``init``; y may be None.
        init: the initial carry.
        xs: pytree of tensors ``[length, ...]`` scanned along axis 0, or None.
        length: the trip count when ``xs`` is None (else it must match xs).
        reverse: scan from the last entry to the first (ys keep xs's order).
        checkpoint: memory of reverse mode: None (about 2 sqrt(length) stored carries,
            segments recomputed once), False (store every carry), an int k (every k-th carry)
            or a ``core.ops.CheckpointPolicy``.

    Returns:
        ``(carry, ys)``: ys has y's structure, each leaf ``[length, *y.shape]`` (None if f
        returns no y).
    """
    x_leaves, x_def = _tree.flatten(xs)
    x_leaves = [loops.as_tensor(x) for x in x_leaves]
    if length is None:
        if not x_leaves:
            raise ValueError("scan: give xs or length")
        length = x_leaves[0].shape[0]
    length = int(length)
    for x in x_leaves:
        if x.ndim == 0 or x.shape[0] != length:
            got = "a 0-d value" if x.ndim == 0 else x.shape[0]
            raise ValueError(f"scan: xs leading axes differ ({got} vs {length})")
    policy = loops.as_policy(checkpoint)
    if not trace_stack():
        return _python_scan(f, init, x_leaves, x_def, length, reverse)
    c_leaves, c_def = _tree.flatten(init)
    c_leaves = [loops.as_tensor(c) for c in c_leaves]
    y_def = []

    def step(carry, x):
        new, y = f(_tree.unflatten(c_def, carry), _tree.unflatten(x_def, x) if x_leaves else None)
        new_leaves, new_def = _tree.flatten(new)
        if new_def != c_def:
            raise ValueError(
                f"scan: f returns a carry of structure {new_def}, expected {c_def} (init's)"
            )
        y_leaves, d = _tree.flatten(y)
        y_def.append(d)
        return new_leaves, y_leaves

    body, consts = loops.trace_body(
        step, [loops.aval(c) for c in c_leaves], [loops.step_aval(x) for x in x_leaves]
    )
    carry, ys = loops.apply_scan(body, consts, c_leaves, x_leaves, length, reverse, policy)
    return _tree.unflatten(c_def, carry), _tree.unflatten(y_def[0], ys)


def _python_scan(f, init, x_leaves, x_def, length, reverse):
    """The loop on concrete tensors, no transformation active: ``f`` once per step."""
    from ..ops.shape import stack

    carry = init
    ys = []
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for i in steps:
        x = _tree.unflatten(x_def, [leaf[i] for leaf in x_leaves]) if x_leaves else None
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys = ys[::-1]
    if not ys:
        return carry, _empty_ys(f, init, x_leaves, x_def)
    y_leaves = [_tree.flatten(y)[0] for y in ys]
    y_def = _tree.flatten(ys[0])[1]
    stacked = [stack([yl[k] for yl in y_leaves], axis=0) for k in range(len(y_leaves[0]))]
    return carry, _tree.unflatten(y_def, stacked)


def _empty_ys(f, init, x_leaves, x_def):
    """ys of a zero-step scan: f traced once for the shapes of y."""
    from ..jit.api import jit

    return jit(lambda c, xs: scan(f, c, xs, length=0)[1])(
        init, _tree.unflatten(x_def, x_leaves) if x_leaves else None
    )


def fori_loop(lower, upper, body_fun, init_val, checkpoint=None):
    """``val = body_fun(i, val)`` for i in [lower, upper).

    ``i`` is a 0-d int64 tensor. With static bounds (Python ints, or concrete tensors) this is
    a :func:`scan` of ``upper - lower`` steps: one equation under jit, differentiable in both
    modes (``checkpoint`` as in :func:`scan`). Bounds that are traced values make it a
    :func:`while_loop` (forward-mode differentiable only).
    """
    from ..ops.creation import tensor

    bounds = []
    for b in (lower, upper):
        if isinstance(b, Tracer):
            try:
                b = b.concrete()
            except NotImplementedError:
                return _fori_as_while(lower, upper, body_fun, init_val)
        bounds.append(int(b))
    lower, upper = bounds

    def step(c, _):
        i, val = c
        return (i + 1, body_fun(i, val)), None

    (_, val), _ = scan(
        step, (tensor(lower), init_val), length=max(upper - lower, 0), checkpoint=checkpoint
    )
    return val


def _fori_as_while(lower, upper, body_fun, init_val):
    from ..ops.creation import tensor
    from ..ops.elementwise import astype

    def body(c):
        i, val = c
        return i + 1, body_fun(i, val)

    lower = astype(lower, "int64") if isinstance(lower, Tensor) else tensor(int(lower))
    return while_loop(lambda c: c[0] < upper, body, (lower, init_val))[1]


def while_loop(cond_fun, body_fun, init_val):
    """``while cond_fun(val): val = body_fun(val)``; ``val`` keeps its structure, shapes, dtypes.

    While the condition is a concrete value (no jit, vmap, or a tracer in it) this is a Python
    loop, differentiable in both modes. Otherwise it is one ``while`` equation whose condition
    and body are traced once: under jit, forward-mode differentiable and batchable (under vmap
    each example stops on its own), but not reverse-differentiable (its trip count is known only
    at run time): that raises an error that says to use ``fori_loop``/``scan`` with a fixed
    trip count, as JAX's ``while_loop``.
    """
    stack = trace_stack()
    if not (stack and isinstance(stack[-1], JitTrace)):
        val = init_val
        first = True
        while True:
            flag = _concrete_bool(cond_fun(val))
            if flag is None:
                if first:
                    break  # a symbolic condition: the staged form
                raise TypeError(
                    "while_loop: the condition became symbolic after a few concrete steps; "
                    "make it depend on the carried value only"
                )
            if not flag:
                return val
            val = body_fun(val)
            first = False
    leaves, treedef = _tree.flatten(init_val)
    leaves = [loops.as_tensor(x) for x in leaves]
    avals = [loops.aval(x) for x in leaves]

    def cond_leaves(c):
        pred = cond_fun(_tree.unflatten(treedef, c))
        if not isinstance(pred, Tensor) or tuple(pred.shape) != ():
            shape = tuple(pred.shape) if isinstance(pred, Tensor) else type(pred).__name__
            raise ValueError(f"while_loop: cond_fun must return a scalar, got {shape}")
        return pred

    def body_leaves(c, _):
        out = body_fun(_tree.unflatten(treedef, c))
        out_leaves, out_def = _tree.flatten(out)
        if out_def != treedef:
            raise ValueError(
                f"while_loop: body_fun returns {out_def}; it must return a value of the same "
                f"structure as init_val ({treedef})"
            )
        return out_leaves, []

    cond, cond_consts = loops.trace_cond(cond_leaves, avals)
    body, body_consts = loops.trace_body(body_leaves, avals, [])
    out = loops.apply_while(cond, body, cond_consts, body_consts, leaves)
    return _tree.unflatten(treedef, out)
