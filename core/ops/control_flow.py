"""Control flow that works eagerly, under autodiff, vmap and ``core.jit``.

- ``cond``: eager and under grad the predicate is concrete and one branch runs; under jit or
  vmap (symbolic predicate) both branches are evaluated and the results selected elementwise,
  which keeps it differentiable and batchable (both branches must be finite).
- ``scan``: a loop with a static trip count; unrolled, so it is differentiable in every mode
  (under jit the IR holds one copy of the body per step).
- ``while_loop``: eager it is a Python loop (differentiable through the tape); under jit it is
  one ``while`` equation whose condition and body are compiled sub-graphs (not differentiable
  in that form: use ``scan`` with a fixed length for gradients).
"""

from .. import tree as _tree
from ..primitive import Primitive, Tracer, trace_stack
from ..tensor import Tensor


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
    from .elementwise import where

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
    graph and the loop is one ``scan`` equation (see ``core.ops.loops``), whatever its length;
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
    from . import loops

    x_leaves, x_def = _tree.flatten(xs)
    x_leaves = [loops._as_tensor(x) for x in x_leaves]
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
    c_leaves = [loops._as_tensor(c) for c in c_leaves]
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
        step, [loops._aval(c) for c in c_leaves], [loops._step_aval(x) for x in x_leaves]
    )
    carry, ys = loops.apply_scan(body, consts, c_leaves, x_leaves, length, reverse, policy)
    return _tree.unflatten(c_def, carry), _tree.unflatten(y_def[0], ys)


def _python_scan(f, init, x_leaves, x_def, length, reverse):
    """The loop on concrete tensors, no transformation active: ``f`` once per step."""
    from .shape import stack

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
    from ..jit import jit

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
    from .creation import tensor

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
    from .elementwise import astype

    def body(c):
        i, val = c
        return i + 1, body_fun(i, val)

    lower = astype(lower, "int64") if isinstance(lower, Tensor) else _as(int(lower))
    return while_loop(lambda c: c[0] < upper, body, (lower, init_val))[1]


def while_loop(cond_fun, body_fun, init_val):
    """``while cond_fun(val): val = body_fun(val)``; ``val`` keeps its structure, shapes, dtypes."""
    from ..jit.trace import JitTrace

    stack = trace_stack()
    jit_trace = stack[-1] if stack and type(stack[-1]) is JitTrace else None
    leaves, treedef = _tree.flatten(init_val)
    if jit_trace is None:
        val = init_val
        while True:
            flag = _concrete_bool(cond_fun(val))
            if flag is None:
                if any(type(t) is JitTrace for t in stack):
                    raise TypeError(
                        "while_loop: the condition depends on a symbolic value under a "
                        f"transformation inside core.jit ({type(stack[-1]).__name__}); the "
                        "compiled while loop is neither differentiable nor batchable: use scan or "
                        "fori_loop with a fixed trip count"
                    )
                raise TypeError(
                    "while_loop: the condition depends on a batched or symbolic value outside "
                    "core.jit (e.g. under vmap); use scan with a fixed length"
                )
            if not flag:
                return val
            val = body_fun(val)
    return _staged_while(jit_trace, cond_fun, body_fun, leaves, treedef)


# ---- the staged form inside core.jit --------------------------------------------------------


class _TupleAval:
    """Abstract value of a primitive that returns several arrays."""

    def __init__(self, avals):
        self.avals = tuple(avals)
        self.shape = None
        self.dtype = None

    def __repr__(self):
        return "(" + ", ".join(map(repr, self.avals)) + ")"


def _while_impl(xp, *arrays, cond, body, n_carry, n_cond):
    carry = list(arrays[:n_carry])
    cond_env = arrays[n_carry : n_carry + n_cond]
    body_env = arrays[n_carry + n_cond :]
    while bool(cond.fn(*carry, *cond_env)[0]):
        carry = list(body.fn(*carry, *body_env))
    # A result may be one of our inputs (zero trips, a carry the body passes through, a captured
    # value): copy those, since the compiled caller may reuse a dead input's buffer in place.
    return tuple(
        xp.array(c, copy=True) if any(xp.may_share_memory(c, a) for a in arrays) else c
        for c in carry
    )


def _while_abstract(*avals, cond, body, n_carry, n_cond):
    return _TupleAval(avals[:n_carry])


while_p = Primitive("while", _while_impl, _while_abstract, differentiable=False)


def _tuple_index_impl(xp, tup, index):
    return xp.asarray(tup[index])


tuple_index_p = Primitive(
    "tuple_index", _tuple_index_impl, lambda tup, index: tup.avals[index], differentiable=False
)


def _trace_subgraph(outer, fn, avals, treedef):
    """Trace ``fn`` on symbolic inputs as a separate graph; values it captures from the outer
    graph become extra inputs (returned as outer Vars)."""
    from ..jit.codegen import lower
    from ..jit.ir import Graph
    from ..jit.passes import run_passes
    from ..jit.trace import JitTrace

    sub = JitTrace(parent=outer)
    with sub:
        ins = [sub.new_input(a) for a in avals]
        out = fn(_tree.unflatten(treedef, ins))
        outs = [sub.to_var(o if isinstance(o, Tensor) else _as(o)) for o in _tree.flatten(out)[0]]
    captured_outer = [ov for ov, _ in sub.captured]
    graph = Graph(list(sub.inputs) + [sv for _, sv in sub.captured], sub.eqns, outs).verify()
    graph = run_passes(graph)
    return lower(graph), captured_outer, outs


def _as(x):
    from .creation import tensor

    return tensor(x)


def _staged_while(trace, cond_fun, body_fun, leaves, treedef):
    from ..jit.trace import JitTracer
    from ..primitive import ShapedArray

    carry = [trace.to_var(x if isinstance(x, Tensor) else _as(x)) for x in leaves]
    avals = [ShapedArray(v.aval.shape, v.aval.dtype) for v in carry]
    cond_low, cond_env, cond_out = _trace_subgraph(trace, cond_fun, avals, treedef)
    if len(cond_out) != 1 or cond_out[0].aval.shape != ():
        raise ValueError("while_loop: cond_fun must return a scalar")
    body_low, body_env, body_out = _trace_subgraph(trace, body_fun, avals, treedef)
    if len(body_out) != len(avals):
        raise ValueError(
            f"while_loop: body_fun returns {len(body_out)} arrays for a carry of {len(avals)}; "
            "it must return a value of the same structure as init_val"
        )
    for a, o in zip(avals, body_out, strict=True):
        if (a.shape, a.dtype) != (o.aval.shape, o.aval.dtype):
            raise ValueError(f"while_loop: body_fun changes a carried value from {a} to {o.aval}")
    args = [JitTracer(trace, v) for v in carry + cond_env + body_env]
    tup = trace.process(
        while_p, args, dict(cond=cond_low, body=body_low, n_carry=len(carry), n_cond=len(cond_env))
    )
    outs = [trace.process(tuple_index_p, [tup], dict(index=k)) for k in range(len(carry))]
    return _tree.unflatten(treedef, outs)
