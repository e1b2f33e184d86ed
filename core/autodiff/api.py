"""The functional transforms: grad, value_and_grad, vjp, jvp, jacrev, jacfwd, hessian."""

import contextlib

from .. import dtypes as _dt
from .. import primitive as _primitive
from .. import tree as _tree
from ..primitive import pop_trace, push_trace
from ..tensor import Parameter, Tensor, resolve
from .custom import custom_jvp, custom_vjp
from .forward import JVPTrace, JVPTracer
from .reverse import ReversePass, _no_grad_depth, unwrap

__all__ = [
    "custom_jvp",
    "custom_vjp",
    "grad",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "no_grad",
    "value_and_grad",
    "vjp",
]


def _constants_as_tensors(tree):
    """A Python number among the outputs (``fn = lambda x: 1.0``) as a constant 0-d tensor: its
    derivative is zero, as for any output that does not depend on the inputs (autograd's
    answer; JAX makes it a weakly typed array as well). Other objects are left to the callers'
    errors."""

    def lift(x):
        if isinstance(x, (int, float, complex)) and not isinstance(x, bool):
            return Tensor(x)
        return x

    return _tree.tree_map(lift, tree)


def _split_aux(out, has_aux):
    """``(output, aux)`` of ``fn``'s result; a Python number in the output is a constant 0-d
    tensor."""
    if has_aux:
        if not isinstance(out, (tuple, list)) or len(out) < 2:
            raise TypeError("has_aux=True needs fn to return a tuple (output, aux, ...)")
        return _constants_as_tensors(out[0]), tuple(out[1:])
    return _constants_as_tensors(out), None


def vjp(fn, *primals, has_aux=False):
    """Evaluate ``fn(*primals)`` and return ``(out, vjp_fn)`` (``(out, vjp_fn, aux)`` with aux).

    ``vjp_fn(cotangent)`` returns a tuple with one cotangent per primal (pytrees allowed), the
    same structure as ``primals``. It can be called many times. A Python number among the
    outputs is returned as a constant 0-d tensor (its cotangents pull back to zeros).
    """
    rev = ReversePass(fn, primals)
    out, aux = _split_aux(rev.out, has_aux)
    structures = [_tree.flatten(p)[1] for p in primals]

    def vjp_fn(cotangent):
        leaf_cts = rev.pullback(out, cotangent)
        grads = rev.grads_for(leaf_cts, rev.leaves)
        res, i = [], 0
        for s in structures:
            n = s.num_leaves
            res.append(_tree.unflatten(s, grads[i : i + n]))
            i += n
        return tuple(res)

    if has_aux:
        return rev.primal(out), vjp_fn, rev.primal(aux)
    return rev.primal(out), vjp_fn


def _normalize_weights(weights):
    if weights is None:
        return []
    if isinstance(weights, Parameter):
        return [weights]
    ws = list(weights)
    for w in ws:
        if not isinstance(w, Parameter):
            raise TypeError(f"weights must be Parameters, got {type(w).__name__}")
    return ws


def value_and_grad(fn, grad_position=0, weights=None, has_aux=False):
    """Return ``f(*args) -> (value, grads)`` where grads follow MindSpore's rules.

    Args:
        fn: function returning a scalar tensor (or ``(scalar, aux...)`` with ``has_aux``). A
            Python int/float/complex output is a constant 0-d tensor, so ``grad(lambda x:
            1.0)(x)`` is ``zeros_like(x)``; other non-tensor outputs raise ``TypeError``.
        grad_position: int, tuple of ints, or None (no positional gradients).
        weights: a Parameter, a list of Parameters, or None.
        has_aux: when True only the first output is differentiated; ``value`` is the whole
            output tuple.

    Returns:
        grads is the positional gradient (tuple if ``grad_position`` is a tuple), the tuple of
        weight gradients, or ``(positional, weights)`` when both are asked for.
    """
    from ..jit.api import graph_mode_dispatch

    weights_list = _normalize_weights(weights)
    if grad_position is None and not weights_list:
        raise ValueError("value_and_grad: grad_position is None and no weights were given")

    def wrapper(*args):
        positions = (
            ()
            if grad_position is None
            else ((grad_position,) if isinstance(grad_position, int) else tuple(grad_position))
        )
        for p in positions:
            if not -len(args) <= p < len(args):
                raise ValueError(f"grad_position {p} out of range for {len(args)} arguments")
        positions = tuple(p % len(args) for p in positions)
        diff_args = [args[p] for p in positions]

        def inner(*diffs):
            full = list(args)
            for p, d in zip(positions, diffs):
                full[p] = d
            return fn(*full)

        # grad_ready_hook reports gradients only of a pass that no transformation encloses
        # (inside jit or an outer grad they are symbolic)
        outermost = not _primitive._trace_stack
        rev = ReversePass(inner, diff_args, weights_list)
        out, _ = _split_aux(rev.out, has_aux)
        several = isinstance(out, (tuple, list))
        seeds = _seeds(out, rev.trace) if several else _scalar_seed(out, rev)
        leaf_cts = rev.pullback(out, seeds, report=outermost)
        pos_grads = []
        i = 0
        for p in positions:
            leaves, treedef = _tree.flatten(args[p])
            gs = rev.grads_for(leaf_cts, rev.leaves[i : i + len(leaves)])
            pos_grads.append(_tree.unflatten(treedef, gs))
            i += len(leaves)
        w_grads = tuple(rev.grads_for(leaf_cts, rev.param_tracers))
        if grad_position is None:
            grads = w_grads
        else:
            pg = pos_grads[0] if isinstance(grad_position, int) else tuple(pos_grads)
            grads = (pg, w_grads) if weights_list else pg
        value = rev.primal(rev.out) if has_aux or several else unwrap(out, rev.trace)
        return value, grads

    return graph_mode_dispatch(wrapper)


def _scalar_seed(out, rev):
    """The cotangent ``1`` of a scalar output (errors for what grad cannot differentiate)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"grad: fn must return a Tensor, got {type(out).__name__}")
    if out.size != 1:
        raise ValueError(
            f"grad: fn must return a scalar, got shape {tuple(out.shape)}; use core.vjp or "
            "core.jacrev for non-scalar outputs, or reduce it (e.g. .sum())"
        )
    if not _dt.is_inexact(out.dtype):
        raise TypeError(f"grad: fn returned dtype {out.dtype}, which has no derivative")
    from ..ops.creation import ones_like

    return ones_like(unwrap(out, rev.trace))


def _seeds(outs, trace):
    """Cotangents of ones for every output of a tuple (MindSpore's rule with has_aux=False:
    the gradient of a tuple output is the sum of its outputs' gradients, each output seeded
    with ones whatever its shape)."""
    from ..ops.creation import ones_like

    seeds = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor) or not _dt.is_inexact(o.dtype):
            what = o.dtype if isinstance(o, Tensor) else type(o).__name__
            raise TypeError(
                f"grad: output {i} of fn's tuple is {what}, which has no derivative; with "
                "has_aux=True only the first output is differentiated"
            )
        seeds.append(ones_like(unwrap(o, trace)))
    return seeds


def grad(fn, grad_position=0, weights=None, has_aux=False):
    """The gradient of a scalar ``fn`` (see :func:`value_and_grad`); returns ``(grads, aux)``
    when ``has_aux``. A constant ``fn`` (one returning a Python number) has gradient
    ``zeros_like`` of each differentiated argument."""
    vg = value_and_grad(fn, grad_position, weights, has_aux)

    def wrapper(*args):
        value, grads = vg(*args)
        if has_aux:
            return grads, tuple(value[1:])
        return grads

    return wrapper


def jvp(fn, primals, tangents, has_aux=False):
    """Forward mode: ``(fn(*primals), d fn(primals)[tangents])``.

    Args:
        primals: tuple of inputs (tensors or pytrees).
        tangents: tuple of the same structure and shapes.
    """
    from ..ops._convert import as_tensor
    from ..ops.creation import zeros_like
    from ..ops.elementwise import astype

    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples")
    trace = push_trace(JVPTrace())
    try:
        wrapped = []
        for p, t in zip(primals, tangents):
            pl, treedef = _tree.flatten(p)
            tl, _ = _tree.flatten(t)
            if len(pl) != len(tl):
                raise ValueError("jvp: primals and tangents have different structures")
            tr = []
            for x, dx in zip(pl, tl):
                x, dx = as_tensor(x), as_tensor(dx)
                if tuple(x.shape) != tuple(dx.shape):
                    raise ValueError(
                        f"jvp: tangent shape {tuple(dx.shape)} != primal shape {tuple(x.shape)}"
                    )
                if dx.dtype != x.dtype:
                    dx = astype(dx, x.dtype)
                tr.append(JVPTracer(trace, x, dx))
            wrapped.append(_tree.unflatten(treedef, tr))
        out = _tree.tree_map(resolve, fn(*wrapped))
    finally:
        pop_trace(trace)
    aux = None
    if has_aux:
        out, aux = out[0], tuple(out[1:])

    def primal_of(o):
        return o.primal if type(o) is JVPTracer and o._trace is trace else o

    def tangent_of(o):
        if type(o) is JVPTracer and o._trace is trace:
            return o.tangent
        return zeros_like(o)

    res = (_tree.tree_map(primal_of, out), _tree.tree_map(tangent_of, out))
    if has_aux:
        return res + (_tree.tree_map(primal_of, aux),)
    return res


def _basis(shape, dtype):
    """The ``n = prod(shape)`` standard basis tensors stacked: shape ``[n, *shape]``."""
    from ..ops.creation import eye
    from ..ops.shape import reshape

    n = 1
    for d in shape:
        n *= d
    return reshape(eye(n, dtype=dtype), (n, *tuple(shape)))


def _positions(grad_position):
    return (grad_position,) if isinstance(grad_position, int) else tuple(grad_position)


def _escaped(tree):
    from ..vmap import BatchTracer

    return any(isinstance(leaf, BatchTracer) for leaf in _tree.flatten(tree)[0])


def _per_output(out, blocks, grad_position):
    """Arrange Jacobian blocks: ``blocks[k][p]`` is ``[*out_k.shape, *x_p.shape]``; the result
    has the structure of ``out`` with, at each leaf, one block (int ``grad_position``) or a
    tuple of blocks (one per differentiated argument)."""
    leaves = [b[0] if isinstance(grad_position, int) else tuple(b) for b in blocks]
    return _tree.unflatten(_tree.flatten(out)[1], leaves)


def jacrev(fn, grad_position=0, has_aux=False):
    """Jacobian by reverse mode: one forward pass, then the VJPs of all ``n = out.size`` basis
    cotangents at once under ``core.vmap`` (a Python loop over them if some primitive has no
    batching rule).

    Args:
        fn: function of tensors returning a tensor or a pytree of tensors (and aux values with
            ``has_aux``).
        grad_position: int or tuple of ints: the arguments to differentiate.

    Returns:
        ``[*out.shape, *in.shape]`` per differentiated argument (a tuple for a tuple
        ``grad_position``; for a pytree output, that structure at each of its leaves), and the
        aux values with ``has_aux``.
    """
    from ..ops import creation as ops_creation
    from ..ops import elementwise as ops_elementwise
    from ..ops import shape as ops_shape
    from ..ops._convert import as_tensor
    from ..vmap import vmap

    def wrapper(*args):
        positions = _positions(grad_position)
        diff = [as_tensor(args[p]) for p in positions]

        def inner(*d):
            full = list(args)
            for p, v in zip(positions, d):
                full[p] = v
            return fn(*full)

        res = vjp(inner, *diff, has_aux=has_aux)
        out, pull = res[0], res[1]
        outs, out_def = _tree.flatten(out)
        sizes = [o.size for o in outs]
        n = sum(sizes)
        dtype = outs[0].dtype if outs else _dt.default_float
        for o in outs[1:]:
            dtype = _dt.promote_types(dtype, o.dtype)

        def cotangent(e):  # e: one row of eye(n) -> one basis cotangent per output leaf
            if len(outs) == 1:
                return _tree.unflatten(out_def, [ops_shape.reshape(e, tuple(outs[0].shape))])
            parts, start = [], 0
            for o, s in zip(outs, sizes):
                parts.append(
                    ops_elementwise.astype(
                        ops_shape.reshape(e[start : start + s], tuple(o.shape)), o.dtype
                    )
                )
                start += s
            return _tree.unflatten(out_def, parts)

        if n == 0:
            rows = [ops_creation.zeros((0, *tuple(x.shape)), dtype=x.dtype) for x in diff]
        else:
            eye = ops_creation.eye(n, dtype=dtype)
            try:
                rows = list(vmap(lambda e: pull(cotangent(e)))(eye))  # per argument: [n, *x]
            except NotImplementedError:  # a primitive without a batching rule: loop
                pulled = [pull(cotangent(eye[i])) for i in range(n)]
                rows = [ops_shape.stack([r[k] for r in pulled]) for k in range(len(diff))]
        blocks, start = [], 0
        for o, s in zip(outs, sizes):
            blocks.append(
                [
                    ops_shape.reshape(
                        r if len(outs) == 1 else r[start : start + s],
                        tuple(o.shape) + tuple(x.shape),
                    )
                    for r, x in zip(rows, diff)
                ]
            )
            start += s
        jac = _per_output(out, blocks, grad_position)
        return (jac, res[2]) if has_aux else jac

    return wrapper


def jacfwd(fn, grad_position=0, has_aux=False):
    """Jacobian by forward mode: the JVPs of all ``n = x.size`` basis tangents at once under
    ``core.vmap`` (a Python loop over them if some primitive has no batching rule).

    Args:
        fn: function of tensors returning a tensor or a pytree of tensors (and aux values with
            ``has_aux``).
        grad_position: int or tuple of ints: the arguments to differentiate.

    Returns:
        ``[*out.shape, *in.shape]`` per differentiated argument (a tuple for a tuple
        ``grad_position``; for a pytree output, that structure at each of its leaves), and the
        aux values with ``has_aux``.
    """
    from ..ops import creation as ops_creation
    from ..ops import shape as ops_shape
    from ..ops._convert import as_tensor
    from ..vmap import vmap

    def wrapper(*args):
        primals = tuple(as_tensor(a) for a in args)
        zeros = [ops_creation.zeros_like(a) for a in primals]
        per_position, res = [], None
        for p in _positions(grad_position):
            x = primals[p]
            captured = []

            def column(t, p=p, captured=captured):
                tangents = tuple(t if q == p else zeros[q] for q in range(len(primals)))
                r = jvp(fn, primals, tangents, has_aux=has_aux)
                captured[:] = [r]
                return r[1]

            if x.size == 0:
                captured[:] = [jvp(fn, primals, tuple(zeros), has_aux=has_aux)]
                cols = _tree.tree_map(
                    lambda o: ops_creation.zeros((0, *tuple(o.shape)), dtype=o.dtype),
                    captured[0][0],
                )
            else:
                basis = _basis(x.shape, x.dtype)  # [n, *x]
                try:
                    cols = vmap(column)(basis)  # per output leaf: [n, *out]
                except NotImplementedError:  # a primitive without a batching rule: loop
                    each = [column(basis[i]) for i in range(x.size)]
                    cols = _tree.tree_map(lambda *cs: ops_shape.stack(cs), *each)
            res = captured[0]
            if _escaped(res[0]) or (has_aux and _escaped(res[2])):
                res = jvp(fn, primals, tuple(zeros), has_aux=has_aux)
            per_position.append(
                [
                    ops_shape.reshape(
                        ops_shape.moveaxis(c, 0, -1) if c.ndim > 1 else c,
                        tuple(o.shape) + tuple(x.shape),
                    )
                    for c, o in zip(_tree.flatten(cols)[0], _tree.flatten(res[0])[0])
                ]
            )
        blocks = [list(b) for b in zip(*per_position)]  # [output leaf][position]
        jac = _per_output(res[0], blocks, grad_position)
        return (jac, res[2]) if has_aux else jac

    return wrapper


def hessian(fn, grad_position=0):
    """Hessian of a scalar function: forward-over-reverse, shape ``in.shape + in.shape``
    (for a tuple ``grad_position``, nested tuples: ``h[i][j]`` is d2f / dx_i dx_j)."""
    return jacfwd(jacrev(fn, grad_position), grad_position)


@contextlib.contextmanager
def no_grad():
    """Inside this block reverse-mode transforms record nothing (values are constants)."""
    _no_grad_depth[0] += 1
    try:
        yield
    finally:
        _no_grad_depth[0] -= 1
