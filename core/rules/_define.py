"""Helpers that fill the VJP and JVP tables from one declaration per primitive."""

from ..autodiff.forward import jvp_rules
from ..autodiff.reverse import VJPTrace, VJPTracer, backward, needs_mask, vjp_rules
from ..ops.creation import zeros_like
from ..primitive import pop_trace, push_trace
from ..prims.shape import reshape
from ..tensor import resolve
from ..vmap import to_front


def defvjp(prim, rule, masked=False):
    """Register ``rule(g, out, *primals, **params)``; with ``masked=True`` it also receives
    ``_needed`` (one bool per input) and may return None for cotangents nobody reads."""
    vjp_rules[prim] = rule
    if masked:
        needs_mask.add(prim)


def defjvp(prim, rule):
    jvp_rules[prim] = rule


_MUL = []


def _mul():
    if not _MUL:
        from ..prims.elementwise import mul

        _MUL.append(mul)
    return _MUL[0]


def tangent_sum(*terms):
    """The sum of the tangents ``terms``, where None stands for a zero tangent (None if every
    term is): how a JVP rule adds the contributions of its inputs."""
    total = None
    for t in terms:
        if t is not None:
            total = t if total is None else total + t
    return total


def def_partials(prim, *partials):
    """Elementwise primitive whose i-th partial derivative is ``partials[i](out, *xs)``.

    One declaration gives both modes: VJP ``g * d_i`` and JVP ``sum_i t_i * d_i``
    (``None`` marks an input with no derivative, e.g. an integer exponent).
    """

    def vjp(g, out, *xs, _needed=None, **params):
        mul = _mul()  # a primitive call: g and the partial share a dtype
        return tuple(
            None
            if d is None or (_needed is not None and not _needed[i])
            else mul(g, d(out, *xs, **params))
            for i, d in enumerate(partials)
        )

    def jvp(ts, out, *xs, **params):
        return tangent_sum(
            *[
                t * d(out, *xs, **params)
                for d, t in zip(partials, ts)
                if d is not None and t is not None
            ]
        )

    vjp_rules[prim] = vjp
    needs_mask.add(prim)
    jvp_rules[prim] = jvp


def def_linear_unary(prim, transpose):
    """A primitive linear in its single input: JVP applies it to the tangent;
    VJP is ``transpose(g, out, x, **params)`` returning the input cotangent."""

    def jvp(ts, out, x, **params):
        return None if ts[0] is None else prim(ts[0], **params)

    def vjp(g, out, x, **params):
        return (transpose(g, out, x, **params),)

    vjp_rules[prim] = vjp
    jvp_rules[prim] = jvp


def align_batch(args, bdims):
    """Operands of a broadcasting primitive, batched for one call: the batch axis first and
    the ranks aligned.

    For a primitive that broadcasts its operands' leading axes (elementwise ops, matmul,
    solve), each batched operand ``a`` (batch axis at ``bdims[i]``, unbatched rank ``r``)
    becomes ``[B, 1, ..., 1, *a_unbatched]`` with ``rank - r`` size-1 axes after the batch
    axis, where ``rank`` is the largest unbatched rank among ``args``: numpy broadcasting
    then lines up every other axis as in the unbatched call. Unbatched operands (bdim None)
    are returned as they are; broadcasting puts them under the batch axis.

    Args:
        args: the primitive's operands (tensors or tracers).
        bdims: one batch axis per operand (int, or None when the operand is not batched).

    Returns:
        A list of operands; the primitive applied to them has its batch axis at 0.
    """
    rank = max(a.ndim - (b is not None) for a, b in zip(args, bdims))
    moved = []
    for a, b in zip(args, bdims):
        if b is not None:
            a = to_front(a, b)
            r = a.ndim - 1
            if r < rank:
                a = reshape(a, shape=(a.shape[0],) + (1,) * (rank - r) + tuple(a.shape[1:]))
        moved.append(a)
    return moved


def broadcasting_batch_rule(prim):
    """The batching rule of a primitive that broadcasts its operands' leading axes as numpy
    does (elementwise ops, matmul, solve): the operands aligned by :func:`align_batch`, then
    one call; the result's batch axis is 0."""

    def rule(args, bdims, **params):
        return prim(*align_batch(args, bdims), **params), 0

    return rule


def transpose_linear(fn, x, ct):
    """``fn^T(ct)`` for a linear map ``fn``: the cotangent of its input ``x`` (whose shape and
    dtype it has; x's value is not read) for the output cotangent ``ct``.

    Taken as the pullback of ``fn`` at zero (for a linear map every point gives the same) by
    one reverse pass, so a rule can state a JVP once and get the VJP as its transpose; the
    pass runs the VJP rules, which are written with core ops, so the result differentiates
    again. Maps that conjugate (complex JVPs) are transposed correctly too.
    """
    trace = push_trace(VJPTrace())
    try:
        t = VJPTracer(trace, zeros_like(x))
        out = resolve(fn(t))
    finally:
        pop_trace(trace)
    tape, trace.tape = trace.tape, None  # no reference cycle through the trace
    if type(out) is VJPTracer and out._trace is trace:
        c = backward([out], [ct], order=tape).get(id(t))
        if c is not None:
            return c
    return zeros_like(x)  # fn does not depend on its input
