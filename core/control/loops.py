"""Staged loops: ``scan`` as one primitive whose body is a graph traced once.

A loop body is traced once, on symbolic inputs, into a closed :class:`~core.jit.ir.Graph`
(:class:`Body`): its inputs are ``[*consts, *carry, *x]`` (``consts``: values the body reads
from outside, captured while tracing) and its outputs ``[*carry, *y]``. The ``scan`` primitive
applies that graph ``length`` times. :func:`apply_scan` dispatches on the innermost active
transformation of its operands, as ``bind`` does for ordinary primitives:

- none (concrete tensors): the loop runs the body compiled by ``core.jit``'s code generator;
- ``core.jit`` (or the body of an enclosing loop): one ``scan`` equation is staged;
- forward mode: the tangents ride along in the carry of one scan (the body's JVP);
- reverse mode: the forward scan also returns the carries it needs; the backward pass is one
  reverse scan over the body's VJP, written with core ops (so it is differentiable again). A
  :class:`CheckpointPolicy` decides how many carries are stored: by default about sqrt(N)
  (segment starts), each segment recomputed once during the backward pass;
- vmap: the body's batched form, with every carry batched.

``while_loop`` is staged the same way (a ``while`` equation with condition and body graphs:
forward mode and vmap, no reverse mode), and so are ``custom_vjp``/``custom_jvp`` calls met
inside a body (a ``custom_call`` equation), so that differentiating the body uses their rules.

Loops are multi-output primitives; this module handles them itself instead of going through
the one-output rule tables of ``core.autodiff`` and ``core.vmap``.
"""

import math

from .. import backend as _backend
from .. import dtypes as _dt
from .. import primitive as _primitive
from ..autodiff.forward import JVPTrace, JVPTracer, split_tangents
from ..autodiff.reverse import VJPTrace, VJPTracer, record_call, split_primals
from ..jit.ir import Eqn, Graph, Var
from ..jit.trace import JitTrace, JitTracer
from ..primitive import Primitive, ShapedArray, Tracer, bind, read_param
from ..tensor import Parameter, Tensor, _assign_hook, resolve
from ..vmap import BatchTrace, BatchTracer, broadcast_batch, moveaxis, split_batched, vmap


# ---- checkpointing policy -------------------------------------------------------------------
class CheckpointPolicy:
    """Which carries the reverse mode of ``scan``/``fori_loop`` stores for its backward pass.

    Storing every carry of an N-step loop costs N carries of memory. A policy splits the loop
    into segments, stores the carry at each segment start, and during the backward pass
    recomputes one segment at a time (its carries stored, then its VJP). Segments are split
    again, recursively, while levels remain: ``levels`` nested levels store about
    ``levels * N ** (1 / levels)`` carries and run the forward pass about ``levels`` times
    (nested checkpointing; Griewank & Walther's binomial schedule is not implemented).

    Args:
        levels: 1 stores every carry (no recomputation); 2 (the default) about ``2 sqrt(N)``
            carries; 3 about ``3 N^(1/3)``.
        every: store every ``every``-th carry (segments of that length, stored whole during
            their backward: about ``N / every + every`` carries); overrides ``levels``.
        budget: store at most about ``budget`` carries: the fewest levels (the least
            recomputation) whose ``levels * ceil(N^(1/levels))`` fits; overrides ``levels``.
        min_length: loops of at most this many steps store every carry.

    Example:
        >>> ops.scan(step, state, xs, checkpoint=CheckpointPolicy(budget=64))
    """

    def __init__(self, levels=2, every=None, budget=None, min_length=16):
        for name, v in (("levels", levels), ("every", every), ("budget", budget)):
            if (v is not None or name == "levels") and (not isinstance(v, int) or v < 1):
                raise ValueError(f"CheckpointPolicy: {name} must be an int >= 1, got {v!r}")
        self.levels = levels
        self.every = every
        self.budget = budget
        self.min_length = min_length

    def plan(self, length):
        """``(segment length, policy inside a segment)``, or None to store every carry."""
        if self.every is not None:
            if length <= self.every or self.every == 1:
                return None
            return self.every, STORE_ALL
        levels = self.levels if self.budget is None else self._levels_for_budget(length)
        if levels == 1 or length <= max(self.min_length, 1):
            return None
        n_segments = math.ceil(length ** (1.0 / levels))
        seg = math.ceil(length / n_segments)
        if seg <= 1 or seg >= length:
            return None
        return seg, CheckpointPolicy(levels - 1, min_length=self.min_length)

    def _levels_for_budget(self, length):
        best = None
        for levels in range(1, 64):
            stored = levels * math.ceil(length ** (1.0 / levels))
            if stored <= self.budget:
                return levels
            best = stored if best is None else min(best, stored)
        raise ValueError(
            f"CheckpointPolicy(budget={self.budget}): a loop of {length} steps needs at least "
            f"about {best} stored carries; raise the budget"
        )

    def _key(self):
        return (self.levels, self.every, self.budget, self.min_length)

    def __repr__(self):
        if self.every is not None:
            return f"CheckpointPolicy(every={self.every})"
        if self.budget is not None:
            return f"CheckpointPolicy(budget={self.budget})"
        return f"CheckpointPolicy(levels={self.levels})"

    def __eq__(self, other):
        return isinstance(other, CheckpointPolicy) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


STORE_ALL = CheckpointPolicy(levels=1)
DEFAULT_POLICY = CheckpointPolicy(levels=2)


def as_policy(checkpoint):
    """``checkpoint`` argument of scan/fori_loop -> CheckpointPolicy (None: the default,
    False: store every carry, an int k: every k-th carry)."""
    if checkpoint is None or checkpoint is True:
        return DEFAULT_POLICY
    if checkpoint is False:
        return STORE_ALL
    if isinstance(checkpoint, CheckpointPolicy):
        return checkpoint
    if isinstance(checkpoint, int):
        return CheckpointPolicy(every=checkpoint)
    raise TypeError(
        "checkpoint must be None, False, an int (store every k-th carry) or a "
        f"CheckpointPolicy, got {type(checkpoint).__name__}"
    )


# ---- tracing a body into a closed graph -----------------------------------------------------
class _BodyTrace(JitTrace):
    """A jit trace of a loop body with no parent graph: every value from outside that the body
    reads (a tracer of any transformation, a Parameter) becomes an extra input of the graph,
    recorded in ``captured`` with the outer value; concrete tensors become constants.

    An operation on outer values only is applied by the outer transformation (hoisted out of
    the loop): only its result is captured."""

    def __init__(self):
        super().__init__()
        self.captured = []  # our input Vars standing for outer values
        self.outer = []  # those outer values, in the same order
        self._by_id = {}  # id(outer value) -> our Var

    def to_var(self, x):
        x = resolve(x)
        if type(x) is JitTracer and x._trace is self:
            return x.var
        if isinstance(x, Parameter):
            x = self.read_param(x)
            if type(x) is JitTracer and x._trace is self:
                return x.var
        if isinstance(x, Tracer):
            v = self._by_id.get(id(x))
            if v is None:
                v = Var(ShapedArray(x.shape, x.dtype))
                self._by_id[id(x)] = v
                self.captured.append(v)
                self.outer.append(x)
            return v
        return self.const(x)

    def read_param(self, p):
        if p._subs:
            return p._subs[-1]
        outer_reader = self._saved[0]
        if outer_reader is not None:
            return outer_reader(p)
        return Tensor._wrap(p._value)

    def __enter__(self):
        super().__enter__()
        _primitive.param_reader[0] = self.read_param
        _assign_hook[0] = self._no_loop_assign
        return self

    def _no_loop_assign(self, p, value):
        raise RuntimeError(
            f"core.ops: Parameter {p.name!r} cannot be assigned inside a scan/fori_loop/"
            "while_loop body; carry the new value instead"
        )


class Body:
    """A loop body traced into a closed graph.

    Attributes:
        graph: inputs ``[*consts, *carry, *x]``, outputs ``[*carry, *y]`` (x and y: one step's
            slices of the scanned arrays).
        n_consts, n_carry, n_x: how many inputs of each kind.
    """

    def __init__(self, graph, n_consts, n_carry, n_x):
        self.graph = graph
        self.n_consts = n_consts
        self.n_carry = n_carry
        self.n_x = n_x
        self._compiled = {}

    @property
    def name(self):
        return f"<body of {len(self.graph.eqns)} equations>"

    def __repr__(self):
        return self.name

    def in_avals(self):
        return [v.aval for v in self.graph.inputs]

    def out_avals(self):
        return [v.aval for v in self.graph.outputs]

    def compiled(self, backend):
        """``fn(*arrays) -> tuple of arrays``: the body optimized and lowered by core.jit."""
        fn = self._compiled.get(backend.name)
        if fn is None:
            from ..jit.codegen import lower
            from ..jit.passes import run_passes

            g = self.graph
            # passes rewrite equations in place: they get copies, the raw graph stays for
            # __call__ (and for the derivative bodies traced from it)
            copy = Graph(
                g.inputs,
                [Eqn(e.prim, list(e.inputs), dict(e.params), e.out, e.tag) for e in g.eqns],
                g.outputs,
            )
            fn = lower(run_passes(copy, backend=backend), backend).fn
            self._compiled[backend.name] = fn
        return fn

    def __call__(self, *args):
        """Evaluate the graph on tensors or tracers of any transformation, one primitive at a
        time (how derivative and batched bodies are traced from this one)."""
        env = {}
        for v, a in zip(self.graph.inputs, args, strict=True):
            env[v.id] = a

        def read(v):
            return Tensor._wrap(v.const) if v.const is not None else env[v.id]

        for e in self.graph.eqns:
            ins = [read(v) for v in e.inputs]
            rule = eval_rules.get(e.prim)
            if not e.inputs:  # a random draw: staged again by the innermost jit trace
                env[e.out.id] = _nullary(e)
            elif rule is not None:
                env[e.out.id] = rule(ins, e.params)
            else:
                env[e.out.id] = bind(e.prim, tuple(ins), e.params)
        return [read(v) for v in self.graph.outputs]

    def with_carries_as_ys(self):
        """The same body, also returning its input carries as extra ys (what reverse mode
        stores)."""
        g = self.graph
        carry_in = g.inputs[self.n_consts : self.n_consts + self.n_carry]
        graph = Graph(g.inputs, g.eqns, [*g.outputs, *carry_in])
        return Body(graph, self.n_consts, self.n_carry, self.n_x)


eval_rules = {}  # Primitive -> rule(inputs, params) -> value, for Body.__call__


def _nullary(e):
    for t in reversed(_primitive.trace_stack()):
        if isinstance(t, JitTrace):
            return t.process_nullary(e.prim, e.params)
    return bind(e.prim, (), e.params)


def as_tensor(x):
    """``x`` (a loop operand or output: a tensor or a Python/numpy value) as a tensor."""
    if isinstance(x, Tensor):
        return x
    from ..ops.creation import tensor

    return tensor(x)


def trace_body(fn, carry_avals, x_avals):
    """Trace ``fn(carry, x) -> (new_carry, y)`` (lists of tensors) into a :class:`Body`.

    Returns:
        ``(body, consts)``: consts are the outer values the body reads, the first inputs of
        its graph (and the first operands of the scan).
    """
    trace = _BodyTrace()
    with trace:
        c_in = [trace.new_input(a) for a in carry_avals]
        x_in = [trace.new_input(a) for a in x_avals]
        c_out, y_out = fn(c_in, x_in)
        outs = [trace.to_var(as_tensor(o)) for o in [*c_out, *y_out]]
    if len(c_out) != len(carry_avals):
        raise ValueError(
            f"loop body returns {len(c_out)} carried arrays for a carry of {len(carry_avals)}; "
            "it must return a value of the same structure as the initial carry"
        )
    for k, (a, o) in enumerate(zip(carry_avals, outs, strict=False)):
        if (tuple(a.shape), a.dtype) != (tuple(o.aval.shape), o.aval.dtype):
            raise ValueError(
                f"loop body changes a carried value (leaf {k}) from {a} to {o.aval}; a carry "
                "keeps its shape and dtype (cast the initial value, e.g. init.astype(...))"
            )
    cap = trace.captured
    graph = Graph([*cap, *trace.inputs], trace.eqns, outs).verify()
    return Body(graph, len(cap), len(carry_avals), len(x_avals)), list(trace.outer)


# ---- the primitive ----------------------------------------------------------------------------
class TupleAval:
    """Abstract value of a primitive that returns several arrays."""

    def __init__(self, avals):
        self.avals = tuple(avals)
        self.shape = None
        self.dtype = None

    def __repr__(self):
        return "(" + ", ".join(map(repr, self.avals)) + ")"


def _scan_abstract(*avals, body, length, reverse, checkpoint):
    outs = body.out_avals()
    n = body.n_carry
    return TupleAval([*outs[:n], *[ShapedArray((length, *a.shape), a.dtype) for a in outs[n:]]])


def _scan_impl(xp, *arrays, body, length, reverse, checkpoint):
    """The loop on backend arrays: the compiled body once per step."""
    backend = _backend.backend_of(arrays[0]) if arrays else _backend.current()
    fn = body.compiled(backend)
    nc, ncar = body.n_consts, body.n_carry
    consts = arrays[:nc]
    carry = tuple(arrays[nc : nc + ncar])
    xs = arrays[nc + ncar :]
    y_avals = body.out_avals()[ncar:]
    ys = [xp.empty((length, *a.shape), dtype=a.dtype) for a in y_avals]
    for step in range(length):
        t = length - 1 - step if reverse else step
        outs = fn(*consts, *carry, *[x[t, ...] for x in xs])  # [t, ...]: 0-d arrays, not scalars
        carry = outs[:ncar]
        for y, out in zip(ys, outs[ncar:], strict=True):
            y[t] = out
    # A result may be one of our inputs (zero steps, a carry passed through, a captured
    # value): copy those, since the compiled caller may reuse a dead input's buffer in place.
    carry = [
        xp.array(c, copy=True) if any(xp.may_share_memory(c, a) for a in arrays) else xp.asarray(c)
        for c in carry
    ]
    return (*carry, *ys)


scan_p = Primitive("scan", _scan_impl, _scan_abstract)


def _tuple_index_impl(xp, tup, index):
    return xp.asarray(tup[index])


tuple_index_p = Primitive(
    "tuple_index", _tuple_index_impl, lambda tup, index: tup.avals[index], differentiable=False
)
eval_rules[tuple_index_p] = lambda ins, params: ins[0][params["index"]]


def _top_trace(args):
    top = None
    for a in args:
        if isinstance(a, Tracer) and (top is None or a._trace.level > top.level):
            top = a._trace
    return top


def _normalize(args):
    out = []
    for a in args:
        a = resolve(a)
        if isinstance(a, Parameter):
            a = read_param(a)
        out.append(as_tensor(a))
    return out


def apply_scan(body, consts, init, xs, length, reverse=False, checkpoint=DEFAULT_POLICY):
    """Run ``body`` ``length`` times: ``carry, y = body(consts, carry, xs[t])``.

    Args:
        body: a :class:`Body`.
        consts, init, xs: lists of tensors (xs leaves ``[length, ...]``).
        checkpoint: the :class:`CheckpointPolicy` of reverse mode.

    Returns:
        ``(carry, ys)``: lists (ys ``[length, ...]``).
    """
    args = _normalize([*consts, *init, *xs])
    params = dict(body=body, length=length, reverse=reverse, checkpoint=checkpoint)
    outs = _dispatch(args, params)
    return list(outs[: body.n_carry]), list(outs[body.n_carry :])


def _dispatch(args, params):
    top = _top_trace(args)
    if top is None:
        vals = [a._value for a in args]
        xp = _backend.namespace_of(vals)
        return [Tensor._wrap(xp.asarray(o)) for o in _scan_impl(xp, *vals, **params)]
    if isinstance(top, JitTrace):
        tup = top.process(scan_p, args, params)
        n = len(tup.aval.avals)
        return [top.process(tuple_index_p, [tup], {"index": k}) for k in range(n)]
    if isinstance(top, VJPTrace):
        return _scan_vjp(top, args, params)
    if isinstance(top, JVPTrace):
        return _scan_jvp(top, args, params)
    if isinstance(top, BatchTrace):
        return _scan_batch(top, args, params)
    raise NotImplementedError(f"scan under {type(top).__name__} is not supported")


def _eval_scan(ins, params):
    body = params["body"]
    nc, ncar = body.n_consts, body.n_carry
    carry, ys = apply_scan(
        body,
        ins[:nc],
        ins[nc : nc + ncar],
        ins[nc + ncar :],
        params["length"],
        params["reverse"],
        params["checkpoint"],
    )
    return (*carry, *ys)


eval_rules[scan_p] = _eval_scan


def _split(seq, body):
    nc, ncar = body.n_consts, body.n_carry
    return list(seq[:nc]), list(seq[nc : nc + ncar]), list(seq[nc + ncar :])


def _inexact(x):
    return _dt.is_inexact(x.dtype)


# ---- forward mode: tangents ride along in the carry ---------------------------------------
def _scan_jvp(trace, args, params):
    from ..autodiff.api import jvp
    from ..ops.creation import zeros_like

    body = params["body"]
    primals, tangents = split_tangents(trace, args)
    if all(t is None for t in tangents):
        return _dispatch(primals, params)
    consts_p, init_p, xs_p = _split(primals, body)
    consts_t, init_t, xs_t = _split(tangents, body)
    k_diff = [i for i, t in enumerate(consts_t) if t is not None]
    c_diff = [i for i, c in enumerate(init_p) if _inexact(c)]  # every inexact carry
    x_diff = [i for i, t in enumerate(xs_t) if t is not None]
    n_x = len(xs_p)
    y_avals = body.out_avals()[body.n_carry :]
    y_diff = [j for j, a in enumerate(y_avals) if _dt.is_inexact(a.dtype)]

    def step(carry, x):
        c_p, c_t = carry[: len(init_p)], carry[len(init_p) :]
        x_p, x_t = x[:n_x], x[n_x:]

        def f(kd, cd, xd):
            ks, cs, xx = list(consts_p), list(c_p), list(x_p)
            for i, v in zip(k_diff, kd, strict=True):
                ks[i] = v
            for i, v in zip(c_diff, cd, strict=True):
                cs[i] = v
            for i, v in zip(x_diff, xd, strict=True):
                xx[i] = v
            return body(*ks, *cs, *xx)

        outs, touts = jvp(
            f,
            ([consts_p[i] for i in k_diff], [c_p[i] for i in c_diff], [x_p[i] for i in x_diff]),
            ([consts_t[i] for i in k_diff], list(c_t), list(x_t)),
        )
        n = body.n_carry
        new_c = [*outs[:n], *[touts[i] for i in c_diff]]
        ys = [*outs[n:], *[touts[n + j] for j in y_diff]]
        return new_c, ys

    c_t0 = [init_t[i] if init_t[i] is not None else zeros_like(init_p[i]) for i in c_diff]
    x_t = [xs_t[i] for i in x_diff]
    carry_avals = [aval(c) for c in [*init_p, *c_t0]]
    x_avals = [step_aval(x) for x in [*xs_p, *x_t]]
    jbody, consts = trace_body(step, carry_avals, x_avals)
    carry, ys = apply_scan(
        jbody, consts, [*init_p, *c_t0], [*xs_p, *x_t], params["length"], params["reverse"],
        params["checkpoint"],
    )  # fmt: skip
    n_c, n_y = len(init_p), len(y_avals)
    out = []
    for i in range(n_c):
        k = c_diff.index(i) if i in c_diff else None
        out.append(carry[i] if k is None else JVPTracer(trace, carry[i], carry[n_c + k]))
    for j in range(n_y):
        k = y_diff.index(j) if j in y_diff else None
        out.append(ys[j] if k is None else JVPTracer(trace, ys[j], ys[n_y + k]))
    return out


def aval(x):
    """The abstract value (shape, dtype) of tensor ``x``."""
    return ShapedArray(tuple(x.shape), x.dtype)


def step_aval(x):
    """The abstract value of one step's slice of a scanned tensor ``x`` ([length, ...])."""
    return ShapedArray(tuple(x.shape)[1:], x.dtype)


# ---- vmap: every carry batched ------------------------------------------------------------
def _scan_batch(trace, args, params):
    body = params["body"]
    vals, bdims = split_batched(trace, args)
    if all(b is None for b in bdims):
        return _dispatch(vals, params)
    size = trace.size
    consts, init, xs = _split(vals, body)
    k_b, c_b, x_b = _split(bdims, body)
    consts = [c if b is None else moveaxis(c, b, 0) for c, b in zip(consts, k_b, strict=True)]
    init = [broadcast_batch(c, b, size) for c, b in zip(init, c_b, strict=True)]
    # a batched xs leaf keeps the scanned axis first and its batch axis second
    xs = [x if b is None else moveaxis(x, b, 1) for x, b in zip(xs, x_b, strict=True)]
    k_axes = [None if b is None else 0 for b in k_b]
    x_axes = [None if b is None else 0 for b in x_b]

    def step(carry, x):
        def per_example(ks, cs, xx):
            return body(*ks, *cs, *xx)

        outs = vmap(per_example, in_axes=(k_axes, [0] * len(carry), x_axes))(consts, carry, x)
        return outs[: body.n_carry], outs[body.n_carry :]

    carry_avals = [aval(c) for c in init]
    x_avals = [step_aval(x) for x in xs]
    bbody, bconsts = trace_body(step, carry_avals, x_avals)
    carry, ys = apply_scan(
        bbody, bconsts, init, xs, params["length"], params["reverse"], params["checkpoint"]
    )
    return [BatchTracer(trace, c, 0) for c in carry] + [BatchTracer(trace, y, 1) for y in ys]


# ---- reverse mode ---------------------------------------------------------------------------
def _scan_vjp(trace, args, params):
    body = params["body"]
    primals, parents = split_primals(trace, args)
    if all(p is None for p in parents) or not trace.records():
        # nothing to differentiate, no_grad, or the forward pass of an enclosing recompute
        return _dispatch(primals, params)
    plan = params["checkpoint"].plan(params["length"])
    if plan is not None:
        return _checkpointed(args, params, *plan)
    # store every carry: the forward scan returns them as extra ys
    consts, _, xs = _split(primals, body)
    n_c = body.n_carry
    outs = _dispatch(primals, dict(params, body=body.with_carries_as_ys()))
    carry_out, rest = outs[:n_c], outs[n_c:]
    n_y = len(rest) - n_c
    ys, stored = rest[:n_y], rest[n_y:]
    k_par, _, x_par = _split(parents, body)
    k_diff = [i for i, p in enumerate(k_par) if p is not None and _inexact(consts[i])]
    x_diff = [i for i, p in enumerate(x_par) if p is not None and _inexact(xs[i])]

    def pull(cts):
        from ..ops.creation import zeros_like

        cts = [
            zeros_like(o) if c is None else c for o, c in zip([*carry_out, *ys], cts, strict=True)
        ]
        return _scan_transpose(body, consts, stored, xs, cts, k_diff, x_diff, params)

    return record_call(trace, "scan", parents, primals, [*carry_out, *ys], pull)


def _scan_transpose(body, consts, stored, xs, cts, k_diff, x_diff, params):
    """Input cotangents of a scan, given its stored input carries ``stored`` ([length, ...]
    each) and the cotangents ``cts`` of its outputs: one reverse scan over the body's VJP,
    carrying the carry's cotangent and the sum of the consts' cotangents."""
    from ..autodiff.api import vjp
    from ..ops.creation import zeros_like

    n_c = body.n_carry
    ct_carry, ct_ys = cts[:n_c], cts[n_c:]
    n_x, n_k = len(xs), len(k_diff)

    def step(carry, x):
        ct_c, acc = carry[:n_c], carry[n_c:]
        c, xx, ct_y = x[:n_c], x[n_c : n_c + n_x], x[n_c + n_x :]

        def f(kd, cs, xd):
            ks, xfull = list(consts), list(xx)
            for i, v in zip(k_diff, kd, strict=True):
                ks[i] = v
            for i, v in zip(x_diff, xd, strict=True):
                xfull[i] = v
            return body(*ks, *cs, *xfull)

        _, f_vjp = vjp(f, [consts[i] for i in k_diff], list(c), [xx[i] for i in x_diff])
        d_k, d_c, d_x = f_vjp([*ct_c, *ct_y])
        return [*d_c, *[a + d for a, d in zip(acc, d_k, strict=True)]], list(d_x)

    acc0 = [zeros_like(consts[i]) for i in k_diff]
    init = [*ct_carry, *acc0]
    x_list = [*stored, *xs, *ct_ys]
    bwd, bconsts = trace_body(step, [aval(c) for c in init], [step_aval(x) for x in x_list])
    carry, d_xs = apply_scan(
        bwd, bconsts, init, x_list, params["length"], not params["reverse"], params["checkpoint"]
    )
    d_init, d_consts = carry[:n_c], carry[n_c : n_c + n_k]
    res_k = [None] * len(consts)
    for i, d in zip(k_diff, d_consts, strict=True):
        res_k[i] = d
    res_x = [None] * n_x
    for i, d in zip(x_diff, d_xs, strict=True):
        res_x[i] = d
    return [*res_k, *d_init, *res_x]


def _checkpointed(args, params, seg, inner_policy):
    """The scan as an outer scan over segments of ``seg`` steps (whose carries reverse mode
    stores: one per segment) and a tail of fewer steps; each segment is an inner scan with
    ``inner_policy``, recomputed during the backward pass. ``args`` are the tracers of the
    reverse-mode trace: both scans are differentiated by the rules above."""
    from ..ops.shape import concatenate, reshape

    body, length, reverse = params["body"], params["length"], params["reverse"]
    consts, init, xs = _split(args, body)
    n_seg = length // seg
    tail = length - n_seg * seg
    if reverse:
        xs_tail = [x[:tail] for x in xs]
        xs_main = [x[tail:] for x in xs]
    else:
        xs_main = [x[: n_seg * seg] for x in xs]
        xs_tail = [x[n_seg * seg :] for x in xs]
    xs_main = [reshape(x, (n_seg, seg, *tuple(x.shape)[1:])) for x in xs_main]

    def segment(carry, x):
        return apply_scan(body, consts, carry, x, seg, reverse, inner_policy)

    seg_body, seg_consts = trace_body(
        segment, [aval(c) for c in init], [step_aval(x) for x in xs_main]
    )
    # the segments run first in either direction: in reverse order the tail (the first
    # entries) comes last
    carry, ys_main = apply_scan(seg_body, seg_consts, init, xs_main, n_seg, reverse, STORE_ALL)
    ys_tail = []
    if tail:
        carry, ys_tail = apply_scan(body, consts, carry, xs_tail, tail, reverse, inner_policy)
    ys = [reshape(y, (n_seg * seg, *tuple(y.shape)[2:])) for y in ys_main]
    if tail:
        ys = [
            concatenate([t, y] if reverse else [y, t], axis=0)
            for y, t in zip(ys, ys_tail, strict=True)
        ]
    return [*carry, *ys]


# ---- while ----------------------------------------------------------------------------------
def trace_cond(fn, avals):
    """Trace ``fn(carry) -> scalar`` into a Body with outputs ``[pred]`` (no carry, the carry
    as its x inputs); returns ``(body, consts)``."""
    return trace_body(lambda _, c: ([], [fn(c)]), [], avals)


def _while_abstract(*avals, cond, body, n_carry, n_cond):
    return TupleAval(avals[:n_carry])


def _while_impl(xp, *arrays, cond, body, n_carry, n_cond):
    backend = _backend.backend_of(arrays[0]) if arrays else _backend.current()
    cond_fn, body_fn = cond.compiled(backend), body.compiled(backend)
    carry = tuple(arrays[:n_carry])
    cond_consts = arrays[n_carry : n_carry + n_cond]
    body_consts = arrays[n_carry + n_cond :]
    while bool(cond_fn(*cond_consts, *carry)[0]):
        carry = body_fn(*body_consts, *carry)
    # as in _scan_impl: results that are inputs are copied
    return tuple(
        xp.array(c, copy=True) if any(xp.may_share_memory(c, a) for a in arrays) else xp.asarray(c)
        for c in carry
    )


# operands [*carry, *cond consts, *body consts]; cond and body are Bodies (no x inputs)
while_p = Primitive("while", _while_impl, _while_abstract)


def apply_while(cond, body, cond_consts, body_consts, init):
    """``while cond(carry): carry = body(carry)`` with traced ``cond``/``body`` Bodies;
    returns the final carry (a list)."""
    args = _normalize([*init, *cond_consts, *body_consts])
    params = dict(cond=cond, body=body, n_carry=len(init), n_cond=len(cond_consts))
    return _dispatch_while(args, params)


def _dispatch_while(args, params):
    top = _top_trace(args)
    if top is None:
        vals = [a._value for a in args]
        xp = _backend.namespace_of(vals)
        return [Tensor._wrap(o) for o in _while_impl(xp, *vals, **params)]
    if isinstance(top, JitTrace):
        tup = top.process(while_p, args, params)
        return [top.process(tuple_index_p, [tup], {"index": k}) for k in range(params["n_carry"])]
    if isinstance(top, VJPTrace):
        diff = [a for a in args if type(a) is VJPTracer and a._trace is top and _inexact(a.primal)]
        if diff and top.records():
            raise TypeError(
                "while_loop is not reverse-differentiable when its condition depends on traced "
                "values (its trip count is known only at run time, so reverse mode cannot store "
                "its steps): use scan or fori_loop with a fixed trip count (an upper bound, "
                "with ops.cond or a mask inside), or forward mode (core.jvp/jacfwd)"
            )
        return _dispatch_while([a.primal if type(a) is VJPTracer else a for a in args], params)
    if isinstance(top, JVPTrace):
        return _while_jvp(top, args, params)
    if isinstance(top, BatchTrace):
        return _while_batch(top, args, params)
    raise NotImplementedError(f"while_loop under {type(top).__name__} is not supported")


def _eval_while(ins, params):
    return tuple(_dispatch_while(_normalize(ins), params))


eval_rules[while_p] = _eval_while


def _split_while(seq, params):
    n, nc = params["n_carry"], params["n_cond"]
    return list(seq[:n]), list(seq[n : n + nc]), list(seq[n + nc :])


def _while_jvp(trace, args, params):
    from ..autodiff.api import jvp
    from ..ops.creation import zeros_like

    primals, tangents = split_tangents(trace, args)
    init_p, cc_p, bc_p = _split_while(primals, params)
    _, _, bc_t = _split_while(tangents, params)
    init_t = list(tangents[: len(init_p)])
    if all(t is None for t in init_t + bc_t):
        return _dispatch_while(primals, params)
    cond, body = params["cond"], params["body"]
    k_diff = [i for i, t in enumerate(bc_t) if t is not None]
    c_diff = [i for i, c in enumerate(init_p) if _inexact(c)]
    n = len(init_p)

    def new_body(c, _):
        c_p, c_t = c[:n], c[n:]

        def f(kd, cd):
            ks, cs = list(bc_p), list(c_p)
            for i, v in zip(k_diff, kd, strict=True):
                ks[i] = v
            for i, v in zip(c_diff, cd, strict=True):
                cs[i] = v
            return body(*ks, *cs)

        outs, touts = jvp(
            f,
            ([bc_p[i] for i in k_diff], [c_p[i] for i in c_diff]),
            ([bc_t[i] for i in k_diff], c_t),
        )
        return [*outs, *[touts[i] for i in c_diff]], []

    c_t0 = [init_t[i] if init_t[i] is not None else zeros_like(init_p[i]) for i in c_diff]
    avals = [aval(c) for c in [*init_p, *c_t0]]
    jbody, jconsts = trace_body(new_body, avals, [])
    jcond, cconsts = trace_cond(lambda c: cond(*cc_p, *c[:n])[0], avals)
    out = apply_while(jcond, jbody, cconsts, jconsts, [*init_p, *c_t0])
    res = []
    for i in range(n):
        res.append(
            out[i] if i not in c_diff else JVPTracer(trace, out[i], out[n + c_diff.index(i)])
        )
    return res


def _while_batch(trace, args, params):
    from ..ops.elementwise import where
    from ..ops.reduction import any as any_
    from ..ops.shape import reshape

    vals, bdims = split_batched(trace, args)
    init, cc, bc = _split_while(vals, params)
    init_b, cc_b, bc_b = _split_while(bdims, params)
    size = trace.size
    init = [broadcast_batch(c, b, size) for c, b in zip(init, init_b, strict=True)]
    cc = [c if b is None else moveaxis(c, b, 0) for c, b in zip(cc, cc_b, strict=True)]
    bc = [c if b is None else moveaxis(c, b, 0) for c, b in zip(bc, bc_b, strict=True)]
    cc_axes = [None if b is None else 0 for b in cc_b]
    bc_axes = [None if b is None else 0 for b in bc_b]
    cond, body = params["cond"], params["body"]
    n = len(init)

    def preds(c):  # [B] bool: which examples still loop
        return vmap(lambda ks, cs: cond(*ks, *cs)[0], in_axes=(cc_axes, [0] * n))(cc, c)

    def new_body(c, _):
        p = preds(c)
        new = vmap(lambda ks, cs: body(*ks, *cs), in_axes=(bc_axes, [0] * n))(bc, c)
        # finished examples keep their carry
        return [
            where(reshape(p, (size,) + (1,) * (o.ndim - 1)), o, old)
            for o, old in zip(new, c, strict=True)
        ], []

    avals = [aval(c) for c in init]
    bbody, bconsts = trace_body(new_body, avals, [])
    bcond, cconsts = trace_cond(lambda c: any_(preds(c)), avals)
    out = apply_while(bcond, bbody, cconsts, bconsts, init)
    return [BatchTracer(trace, o, 0) for o in out]


# ---- custom_vjp / custom_jvp calls inside a loop body ------------------------------------------
# A body is differentiated after it is traced (the loop's VJP/JVP evaluates its graph), so a
# custom-rule call in it must stay a call in the graph: traced as jit does, the function would
# be inlined and its custom derivative lost. The call is one equation whose implementation is
# the function's own traced graph; evaluating the body binds the call again (bind_custom), so
# the transformation that differentiates the body applies the custom rule.


def _custom_abstract(*avals, rule, fun, n_consts):
    return TupleAval(fun.out_avals())


def _custom_impl(xp, *arrays, rule, fun, n_consts):
    backend = _backend.backend_of(arrays[0]) if arrays else _backend.current()
    outs = fun.compiled(backend)(*arrays)
    # an output must not alias an input (the loop may overwrite its carry in place): copy the
    # ones that may. An array that owns its memory and is not an input cannot alias one, so
    # only views pay for the pairwise may_share_memory test (it ran once per output and input
    # per step: 12% of a checkpointed FDTD gradient)
    ids = {id(a) for a in arrays}

    def fresh(o):
        if getattr(o, "base", 0) is None and id(o) not in ids:
            return True
        return not any(xp.may_share_memory(o, a) for a in arrays)

    return tuple(xp.asarray(o) if fresh(o) else xp.array(o, copy=True) for o in outs)


# operands [*consts of fun, *xs]; fun: Body of the function (no carry: xs are its x inputs)
custom_call_p = Primitive("custom_call", _custom_impl, _custom_abstract)


def _stage_custom(trace, rule, xs):
    xs = [as_tensor(x) for x in xs]
    fun, consts = trace_body(lambda _, x: ([], list(rule.call(x))), [], [aval(x) for x in xs])
    params = dict(rule=rule, fun=fun, n_consts=len(consts))
    tup = trace.process(custom_call_p, [*consts, *xs], params)
    return [trace.process(tuple_index_p, [tup], {"index": k}) for k in range(len(fun.out_avals()))]


def _eval_custom(ins, params):
    from ..autodiff.custom_call import bind_custom

    return tuple(bind_custom(params["rule"], list(ins[params["n_consts"] :])))


eval_rules[custom_call_p] = _eval_custom


def _register_custom():
    from ..autodiff import custom_call

    custom_call.custom_vjp_rules[_BodyTrace] = _stage_custom
    custom_call.custom_jvp_rules[_BodyTrace] = _stage_custom


_register_custom()
