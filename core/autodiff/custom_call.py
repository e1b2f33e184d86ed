"""How each transformation treats a call of a ``core.custom_vjp`` / ``core.custom_jvp`` function.

A call is bound like a primitive: :func:`bind_custom` finds the highest transformation among
the call's tensor inputs and hands it the whole call, a *rule* with flat inputs and outputs
(lists of tensors; see ``core.autodiff.custom`` for the user-facing side):

- ``rule.call(xs) -> outs`` runs the function itself;
- custom_vjp: ``rule.fwd(xs) -> (outs, res)`` and ``rule.bwd(res, cts) -> in_cts`` (one
  cotangent per input, None for zero; ``cts`` one per output, None for integer outputs);
- custom_jvp: ``rule.jvp(xs, ts) -> (outs, touts)``.

The tables below say what each transformation does with a call. ``core.jit``'s trace is not
listed: it runs ``rule.call`` on its tracers (nothing above it differentiates, so tracing the
function itself is exact). A loop body's trace (``core.control.loops``) adds its own entry: the
call becomes one ``custom_call`` equation of the body's graph, bound again here when the body
is evaluated, so the transformation that differentiates the body applies the custom rule.
Reverse mode tapes a call with ``core.autodiff.reverse.record_call``, as it tapes a whole loop.

==============  ==========================================  ===================================
                custom_vjp                                  custom_jvp
==============  ==========================================  ===================================
reverse mode    runs fwd one level down, tapes bwd          transposes the custom jvp (below)
forward mode    differentiates ``fun`` (not listed)         runs the custom jvp
vmap            vmaps fwd and bwd (or fun, or jvp) and binds the call again one level down
==============  ==========================================  ===================================

Reverse mode of a custom_jvp function: the jvp runs once with its tangent inputs as the leaves
of a fresh reverse-mode trace (valued zero); the tangent outputs are linear in them, so the
pullback of that small tape is exactly the transpose of the custom jvp. The custom rule is used,
one jvp call per application, and the user never writes a VJP.
"""

from .. import dtypes as _dt
from .. import tree as _tree
from ..primitive import Tracer, pop_trace, push_trace, trace_stack
from ..tensor import Tensor, resolve
from ..vmap import BatchTrace, BatchTracer, broadcast_batch, split_batched, to_front
from .forward import JVPTrace, JVPTracer, fit_tangent, split_tangents
from .reverse import VJPTrace, VJPTracer, backward, record_call, split_primals, unwrap

# Trace type -> handler(trace, rule, xs) -> list of outputs; filled at the end of this module
custom_vjp_rules = {}
custom_jvp_rules = {}


def bind_custom(rule, xs):
    """Apply a custom-rule call to the flat tensor inputs ``xs``: eagerly (``rule.call``) or
    through the highest transformation among them. Returns the flat outputs."""
    top = None
    for x in xs:
        if isinstance(x, Tracer) and (top is None or x._trace.level > top.level):
            top = x._trace
    if top is None:
        return rule.call(xs)
    stack = trace_stack()
    if top.level >= len(stack) or stack[top.level] is not top:
        raise RuntimeError(
            f"{rule.kind} {rule.name}: a tracer escaped the transformation that made it (a "
            "value computed inside core.grad/jvp/vmap/jit was kept and used after it returned)"
        )
    handler = rule.table.get(type(top))
    if handler is None:
        return rule.call(xs)
    return handler(top, rule, xs)


def _inexact(x):
    return isinstance(x, Tensor) and _dt.is_inexact(x.dtype)


# ---- reverse mode ------------------------------------------------------------------------------
def _split_vjp(trace, xs):
    primals, parents = split_primals(trace, xs)
    return list(primals), parents


def _records_nothing(trace):
    # under no_grad, and in the (paused) forward pass of core.recompute, the call goes one
    # level down untaped
    return not trace.records()


def _reverse_of_vjp(trace, rule, xs):
    primals, parents = _split_vjp(trace, xs)
    if _records_nothing(trace):
        return bind_custom(rule, primals)
    outs, res = rule.fwd(primals)  # one level down: outer transformations see fwd's ops

    def pull(cts):
        # bwd sees a cotangent for every floating-point output (zeros where none flowed back)
        if any(c is None for c in cts):
            from ..ops.creation import zeros_like

            cts = [zeros_like(o) if c is None and _inexact(o) else c for c, o in zip(cts, outs)]
        return rule.bwd(res, cts)

    return record_call(trace, rule.name, parents, primals, outs, pull)


def _reverse_of_jvp(trace, rule, xs):
    from ..ops.creation import zeros_like

    primals, parents = _split_vjp(trace, xs)
    if _records_nothing(trace):
        return bind_custom(rule, primals)
    lin = push_trace(VJPTrace())  # tapes the jvp's tangent computation only
    try:
        tangents = [
            VJPTracer(lin, zeros_like(p)) if par is not None and _inexact(p) else zeros_like(p)
            for p, par in zip(primals, parents)
        ]
        outs, touts = rule.jvp(primals, tangents)
    finally:
        pop_trace(lin)
        tape, lin.tape = lin.tape, None  # no cycle through the trace (see reverse.ReversePass)
    outs = [unwrap(o, lin) for o in outs]

    def pull(cts):
        roots, seeds = [], []
        for t, c in zip(touts, cts):
            if c is not None and type(t) is VJPTracer and t._trace is lin:
                roots.append(t)
                seeds.append(c)
        leaf_cts = backward(roots, seeds, order=tape) if roots else {}
        return [leaf_cts.get(id(t)) if type(t) is VJPTracer else None for t in tangents]

    return record_call(trace, rule.name, parents, primals, outs, pull)


# ---- forward mode ------------------------------------------------------------------------------
def _forward_of_jvp(trace, rule, xs):
    from ..ops.creation import zeros_like

    primals, tangents = split_tangents(trace, xs)
    tangents = [zeros_like(x) if t is None else t for x, t in zip(primals, tangents)]
    outs, touts = rule.jvp(list(primals), tangents)  # one level down
    return [
        JVPTracer(trace, o, fit_tangent(t, o)) if _inexact(o) else o for o, t in zip(outs, touts)
    ]


# ---- vmap --------------------------------------------------------------------------------------
def _batch(trace, rule, xs):
    vals, bdims = split_batched(trace, xs)
    vals = [to_front(v, b) for v, b in zip(vals, bdims)]
    axes = [None if b is None else 0 for b in bdims]
    outs = bind_custom(BatchedRule(rule, axes, trace.size), vals)
    return [BatchTracer(trace, o, 0) for o in outs]


def _run_batched(fn, size, args, axes):
    """``fn(list)`` with ``args[i]`` mapped over its axis ``axes[i]`` (None: the same for every
    element), under a new vmap level. ``fn`` returns a flat list; returns its values and their
    batch axes (None: not batched), the values one level down."""
    trace = push_trace(BatchTrace(size))
    try:
        out = fn([a if ax is None else BatchTracer(trace, a, ax) for a, ax in zip(args, axes)])
    finally:
        pop_trace(trace)
    vals, bdims = split_batched(trace, [resolve(o) for o in out])
    return list(vals), list(bdims)


def _front(vals, bdims, size):
    return [broadcast_batch(v, b, size) for v, b in zip(vals, bdims)]


class BatchedRule:
    """The rule of a custom call whose inputs carry a batch axis: fun, fwd, bwd and jvp are the
    inner rule's, vmapped. Inputs are batched at axis 0 (``axes[i] == 0``) or not (None);
    outputs always at axis 0. Residuals keep whatever batch axis fwd gave them."""

    def __init__(self, inner, axes, size):
        self.inner = inner
        self.axes = list(axes)
        self.size = size
        self.kind = inner.kind
        self.table = inner.table
        self.name = f"vmap({inner.name})"

    def call(self, xs):
        return _front(*_run_batched(self.inner.call, self.size, xs, self.axes), self.size)

    def fwd(self, xs):
        box = {}

        def per_example(a):
            outs, res = self.inner.fwd(a)
            leaves, box["res_tree"] = _tree.flatten(res)
            box["n_out"] = len(outs)
            return list(outs) + leaves

        vals, bdims = _run_batched(per_example, self.size, xs, self.axes)
        n = box["n_out"]
        res = (box["res_tree"], vals[n:], bdims[n:])
        return _front(vals[:n], bdims[:n], self.size), res

    def bwd(self, res, cts):
        from ..ops import reduction as ops_reduction

        res_tree, res_vals, res_bdims = res
        m = len(res_vals)

        def per_example(a):
            return self.inner.bwd(_tree.unflatten(res_tree, a[:m]), a[m:])

        ct_axes = [None if c is None else 0 for c in cts]
        vals, bdims = _run_batched(
            per_example, self.size, list(res_vals) + list(cts), list(res_bdims) + ct_axes
        )
        in_cts = []
        for c, b, ax in zip(vals, bdims, self.axes):
            if c is None:
                in_cts.append(None)
            elif ax is None:  # an input shared by every element: the elements' cotangents add up
                in_cts.append(c if b is None else ops_reduction.sum(c, axis=b))
            else:
                in_cts.append(broadcast_batch(c, b, self.size))
        return in_cts

    def jvp(self, xs, ts):
        n = len(xs)

        def per_example(a):
            outs, touts = self.inner.jvp(a[:n], a[n:])
            return list(outs) + list(touts)

        # a tangent has its primal's shape at every level, so it is batched like its primal
        vals, bdims = _run_batched(per_example, self.size, list(xs) + list(ts), self.axes * 2)
        k = len(vals) // 2
        return _front(vals[:k], bdims[:k], self.size), _front(vals[k:], bdims[k:], self.size)


custom_vjp_rules[VJPTrace] = _reverse_of_vjp
custom_vjp_rules[BatchTrace] = _batch
custom_jvp_rules[VJPTrace] = _reverse_of_jvp
custom_jvp_rules[JVPTrace] = _forward_of_jvp
custom_jvp_rules[BatchTrace] = _batch
