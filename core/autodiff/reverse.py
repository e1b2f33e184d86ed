"""Reverse mode: a tape built while the function runs, then a backward sweep.

Each primitive applied to a :class:`VJPTracer` returns a new VJPTracer that is also the tape
entry (primitive, parent tracers, the primal inputs, the primal output, static params). The
backward sweep calls the primitive's VJP rule, which is written with core ops; when an outer
transformation is active (``grad`` of ``grad``, ``jvp`` of ``grad``) those ops are themselves
traced, which is what makes derivatives of any order work. Broadcasting is undone here, once,
not in every rule.
"""

import contextlib

import numpy as np

from .. import dtypes as _dt
from .. import primitive as _primitive
from .. import tree as _tree
from ..primitive import PrimalTracer, Trace, bind, eager, op_error, split_operands
from ..tensor import Tensor, _alias_class, resolve

_new = object.__new__

vjp_rules = {}  # Primitive -> rule(g, out, *primals, **params) -> tuple of cotangents (None = zero)
# Primitives whose rule also takes ``_needed`` (a tuple of bools, one per input): the engine
# tells it which cotangents anybody will read, so it can skip the others (x * const, data @ W).
needs_mask = set()
# Primitive -> rule(g, out, *xs, needed) -> tuple of arrays (None = zero): the same VJP on numpy
# arrays, for backward passes nobody differentiates (filled by the rules of each family; see
# ``backward``).
array_vjps = {}

# Callbacks ``hook(param, cotangent)`` told when a Parameter's gradient is final during a backward
# sweep (``grad_ready_hook``); data-parallel training starts each gradient bucket's all-reduce
# then, while the sweep goes on.
_grad_ready_hooks = []


@contextlib.contextmanager
def grad_ready_hook(hook):
    """Within the block, every reverse sweep (``core.grad``, ``value_and_grad``...) calls
    ``hook(param, cotangent)`` for each differentiated Parameter as soon as its gradient is
    complete: right after the earliest operation that read it has been swept, so before the
    sweep ends (PyTorch's post-accumulate-grad hooks; DistributedDataParallel's overlap).
    ``cotangent`` is a Tensor (the gradient as the sweep returns it). Parameters that received
    no gradient are not reported."""
    _grad_ready_hooks.append(hook)
    try:
        yield hook
    finally:
        _grad_ready_hooks.remove(hook)


class VJPTracer(PrimalTracer):
    """A value inside reverse mode, and the tape entry that made it.

    One object per recorded primitive application keeps the forward pass lean: it is the
    tracer that user code holds and the node the backward sweep visits. Leaves (the inputs and
    Parameters being differentiated) have ``prim`` None and no parents.

    Slots:
        primal: the concrete (or outer-tracer) value this tracer stands for: the node's output.
        prim: the Primitive (or a CustomVJPCall / recompute call) that produced it.
        parents: one entry per input: that input's VJPTracer of this trace, or None.
        primals: the inputs' primal values.
        params: the static params of the application.
        arrays: ``(out, *primals)`` as numpy arrays when all were concrete (see ``array_vjps``),
            else None.
    """

    __slots__ = ("arrays", "dtype", "params", "parents", "prim", "primals")

    def __init__(self, trace, primal, prim=None, parents=(), primals=(), params=None):
        self._trace = trace
        self.primal = primal
        # read by the ops layer several times per op: kept here instead of a property chain
        self.dtype = primal._value.dtype if type(primal) is Tensor else primal.dtype
        self.prim = prim
        self.parents = parents
        self.primals = primals
        self.params = params
        self.arrays = None

    def _become(self, other):
        # `x[idx] = v` on a tracer: this object is also a tape entry that later nodes name as
        # their parent, so its node fields stay and it turns into an alias of the new value
        # (bind resolves aliases), instead of copying the new value's fields over them.
        self.__class__ = _alias_class(VJPTracer)
        self._value = resolve(other)

    def __repr__(self):
        return f"VJPTracer(level={self._trace.level}, {self.concrete()!r})"


_no_grad_depth = [0]


class VJPTrace(Trace):
    tracer_type = VJPTracer
    unrolled = True  # process()'s fast one- and two-input cases (False: the general path only)

    def __init__(self):
        # every VJPTracer made in this trace, in creation order: a valid topological order for
        # the backward sweep (parents are always created before their children)
        self.tape = []
        self.paused = False  # see pause()

    @contextlib.contextmanager
    def pause(self):
        """Inside this block the trace records nothing: primitives applied to its tracers run
        one level down on their primals (outer transformations still see them). The forward
        pass of ``core.recompute`` runs so; unlike ``no_grad`` it leaves other traces alone."""
        saved, self.paused = self.paused, True
        try:
            yield self
        finally:
            self.paused = saved

    def records(self):
        """Whether an operation on this trace's tracers is taped now (not under ``no_grad``,
        not paused): the test for code that tapes calls itself (custom rules, loops)."""
        return not (_no_grad_depth[0] or self.paused)

    def process(self, prim, args, params):
        # The one- and two-input cases are unrolled, each with eager() inlined: this runs once
        # per recorded op, and one shared block with argument unpacking measured 5% slower on
        # bench W1 (0.96x of PyTorch instead of 0.91x). With ``unrolled`` False every call
        # takes the general path (split_primals, bind): the reference the unrolled cases are
        # tested against (tests/core/test_autodiff.py, identical tapes and gradients).
        arrays = None
        n = len(args) if self.unrolled else -1
        if n == 2:
            a, b = args
            if type(a) is VJPTracer and a._trace is self:
                pa, na = a.primal, a
            else:
                pa, na = a, None
            if type(b) is VJPTracer and b._trace is self:
                pb, nb = b.primal, b
            else:
                pb, nb = b, None
            primals = (pa, pb)
            parents = (na, nb)
            if type(pa) is Tensor and type(pb) is Tensor:  # one level down is eager: skip bind
                va, vb = pa._value, pb._value
                if type(va) is np.ndarray and type(vb) is np.ndarray and not _primitive._debug_nans:
                    # eager() inlined for host arrays: this runs once per recorded op
                    try:
                        ov = prim.impl(np, va, vb, **params) if params else prim.impl(np, va, vb)
                    except (ValueError, IndexError, TypeError, np.linalg.LinAlgError) as err:
                        raise op_error(prim, (va, vb), params, err) from err
                    if type(ov) is not np.ndarray:
                        ov = np.asarray(ov)  # numpy gives scalars for 0-d results
                    out = _new(Tensor)
                    out._value = ov
                    arrays = (ov, va, vb)
                else:
                    out = eager(prim, primals, params)
            else:
                out = bind(prim, primals, params)
        elif n == 1:
            a = args[0]
            if type(a) is VJPTracer and a._trace is self:
                pa, parents = a.primal, (a,)
            else:
                pa, parents = a, (None,)
            primals = (pa,)
            if type(pa) is Tensor:
                va = pa._value
                if type(va) is np.ndarray and not _primitive._debug_nans:
                    try:
                        ov = prim.impl(np, va, **params) if params else prim.impl(np, va)
                    except (ValueError, IndexError, TypeError, np.linalg.LinAlgError) as err:
                        raise op_error(prim, (va,), params, err) from err
                    if type(ov) is not np.ndarray:
                        ov = np.asarray(ov)
                    out = _new(Tensor)
                    out._value = ov
                    arrays = (ov, va)
                else:
                    out = eager(prim, primals, params)
            else:
                out = bind(prim, primals, params)
        else:
            primals, parents = split_primals(self, args)
            out = bind(prim, primals, params)
        if not prim.differentiable or _no_grad_depth[0] or self.paused:
            return out
        if arrays is not None:
            dtype = arrays[0].dtype
        else:
            dtype = out._value.dtype if type(out) is Tensor else out.dtype
        if not (dtype.kind in "fc" or dtype == _dt.bfloat16):
            return out
        # a VJPTracer built field by field: no __init__ frame on this hot path
        t = _new(VJPTracer)
        t._trace = self
        t.primal = out
        t.dtype = dtype
        t.prim = prim
        t.parents = parents
        t.primals = primals
        t.params = params
        t.arrays = arrays
        self.tape.append(t)
        return t

    def record(self, prim, parents, primals, out, params=None):
        """A VJPTracer for ``out`` made by ``prim`` (custom_vjp, recompute), on the tape."""
        t = VJPTracer(self, out, prim, tuple(parents), tuple(primals), params or {})
        self.tape.append(t)
        return t

    def __repr__(self):
        return f"VJPTrace(level={self.level})"


def unwrap(x, trace):
    """The primal of ``x`` if it is a tracer of ``trace``, else ``x``."""
    if type(x) is VJPTracer and x._trace is trace:
        return x.primal
    return x


def split_primals(trace, args):
    """``(primals, parents)`` of ``args`` as ``trace`` tapes them (see ``split_operands``)."""
    return split_operands(trace, args, "primal", "self")


def toposort(roots):
    """Nodes reachable from ``roots``, every node after all of its parents."""
    order = []
    seen = set()
    stack = [(r, False) for r in roots]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for p in node.parents:
            if p is not None and id(p) not in seen:
                stack.append((p, False))
    return order


def _ready_points(order, ready):
    """{id(node): [leaf ids]}: each watched leaf (``ready``: id -> anything) under the node
    just before the earliest one that reads it, whose arrival in the reversed sweep means
    that leaf's cotangent is complete; leaves read by the first node map to None (end)."""
    first = {}
    for k, node in enumerate(order):
        for p in node.parents:
            if p is not None and id(p) in ready and id(p) not in first:
                first[id(p)] = k
    points = {}
    for leaf, k in first.items():
        points.setdefault(id(order[k - 1]) if k > 0 else None, []).append(leaf)
    return points


def backward(roots, cotangents, order=None, ready=None, hook=None):
    """Propagate ``cotangents`` from ``roots`` to every node; return {id(leaf): cotangent}.

    ``ready`` ({id(leaf): obj}) and ``hook``: call ``hook(obj, cotangent)`` for each of those
    leaves as soon as its cotangent is complete (see ``grad_ready_hook``).

    This loop runs once per recorded primitive, so it is written for speed: dict lookups are
    bound to locals and the shape/dtype check reads concrete arrays directly when it can.
    """
    from ..prims.elementwise import add

    cts = {}
    for r, g in zip(roots, cotangents):
        if g is not None:
            cts[id(r)] = g if id(r) not in cts else add(cts[id(r)], g)
    if order is None:
        order = toposort(roots)
    leaf_cts = {}
    pop = cts.pop
    array_rule = array_vjps.get
    array_ok = not _primitive._debug_nans  # the array path skips the per-primitive NaN check
    rules, masked = vjp_rules, needs_mask
    points = _ready_points(order, ready) if ready else None
    for node in reversed(order):
        if points:
            done = points.pop(id(node), None)
            if done:
                _report(done, cts, ready, hook)
        g = pop(id(node), None)
        if g is None:
            continue
        prim = node.prim
        if prim is None:
            leaf_cts[id(node)] = g
            continue
        arrays = node.arrays
        if arrays is not None and array_ok:
            fast = array_rule(prim)
            gv = g if type(g) is np.ndarray else (g._value if type(g) is Tensor else None)
            if fast is not None and type(gv) is np.ndarray:
                # nothing traces this backward pass: the VJP runs on the arrays and the
                # cotangents stay arrays (``array_vjps``)
                ps = node.parents
                needed = (
                    (ps[0] is not None, ps[1] is not None)
                    if len(ps) == 2
                    else tuple([p is not None for p in ps])
                )
                in_cts = fast(gv, *arrays, needed)
                for parent, c, x in zip(ps, in_cts, arrays[1:]):
                    if parent is None or c is None:
                        continue
                    if type(c) is not np.ndarray:
                        c = np.asarray(c)  # numpy gives scalars for 0-d results
                    if c.shape != x.shape or c.dtype != x.dtype:
                        c = fit_to(_wrap_array(c), x)
                    _accumulate(cts, id(parent), c, add)
                continue
        if type(g) is np.ndarray:
            g = _wrap_array(g)
        rule = rules.get(prim)
        if rule is None:
            if isinstance(prim, CustomVJPCall):
                in_cts = prim.backward(g)
            else:
                raise NotImplementedError(
                    f"reverse-mode derivative of primitive {prim.name} is not defined"
                )
        elif prim in masked:
            ps = node.parents
            if len(ps) == 2:
                needed = (ps[0] is not None, ps[1] is not None)
            else:
                needed = tuple([p is not None for p in ps])
            in_cts = rule(g, node.primal, *node.primals, _needed=needed, **node.params)
        elif node.params:
            in_cts = rule(g, node.primal, *node.primals, **node.params)
        else:
            in_cts = rule(g, node.primal, *node.primals)
        for parent, c, x in zip(node.parents, in_cts, node.primals):
            if parent is None or c is None:
                continue
            if type(c) is Tensor and type(x) is Tensor:
                cv, xv = c._value, x._value
                if cv.shape != xv.shape or cv.dtype != xv.dtype:
                    c = fit_to(c, x)
            elif c.shape != x.shape or c.dtype != x.dtype:
                c = fit_to(c, x)
            _accumulate(cts, id(parent), c, add)
    if points:
        for done in points.values():
            _report(done, cts, ready, hook)
    leaf_cts.update(cts)  # with a tape as the order, leaves (not on the tape) remain here
    for key, v in leaf_cts.items():
        if type(v) is np.ndarray:
            leaf_cts[key] = _wrap_array(v)
    return leaf_cts


def _report(leaves, cts, ready, hook):
    for leaf in leaves:
        c = cts.get(leaf)
        if c is not None:
            if type(c) is np.ndarray:
                c = cts[leaf] = _wrap_array(c)
            hook(ready[leaf], c)


def _accumulate(cts, key, c, add):
    """cts[key] += c; two arrays (or concrete numpy tensors) are summed directly."""
    prev = cts.get(key)
    if prev is None:
        cts[key] = c
        return
    pv = prev if type(prev) is np.ndarray else (prev._value if type(prev) is Tensor else None)
    cv = c if type(c) is np.ndarray else (c._value if type(c) is Tensor else None)
    if type(pv) is np.ndarray and type(cv) is np.ndarray and not _primitive._debug_nans:
        total = pv + cv  # same shape and dtype (fit_to ran)
        cts[key] = total if type(total) is np.ndarray else np.asarray(total)
        return
    if type(prev) is np.ndarray:
        prev = _wrap_array(prev)
    if type(c) is np.ndarray:
        c = _wrap_array(c)
    cts[key] = add(prev, c)


def _wrap_array(a):
    if type(a) is not np.ndarray:
        a = np.asarray(a)  # numpy gives scalars for 0-d results
    t = Tensor.__new__(Tensor)
    t._value = a
    return t


def fit_to(c, x):
    """Undo broadcasting and dtype changes so that cotangent ``c`` matches primal ``x``."""
    from ..ops.elementwise import astype, real
    from ..ops.shape import sum_to_shape

    if c.shape != x.shape:
        c = sum_to_shape(c, x.shape)
    if c.dtype != x.dtype:
        if _dt.is_complex(c.dtype) and not _dt.is_complex(x.dtype):
            c = real(c)
        if c.dtype != x.dtype:
            c = astype(c, x.dtype)
    return c


class CustomVJPCall:
    """Stands in for a primitive on a node made by ``core.custom_vjp``."""

    __slots__ = ("bwd", "name", "residuals")

    def __init__(self, name, bwd, residuals):
        self.name = name
        self.bwd = bwd
        self.residuals = residuals

    def backward(self, g):
        cts = self.bwd(self.residuals, g)
        if not isinstance(cts, (tuple, list)):
            raise TypeError(
                f"custom_vjp {self.name}: bwd must return a tuple of cotangents, got {type(cts).__name__}"
            )
        return tuple(cts)


class _CallEntry(CustomVJPCall):
    """Tape entry of a call with its own pullback (``record_call``). With several outputs, each
    output's entry (:class:`_OutputEntry`) parks its cotangent here and passes a 0-d zero on:
    this entry is their common parent, so the sweep reaches it after all of them (in tape and
    in topological order) and pulls back all outputs' cotangents at once."""

    __slots__ = ("cts", "only", "pull")

    def __init__(self, name, pull, n_out, only):
        super().__init__(name, None, None)
        self.pull = pull
        self.cts = [None] * n_out
        self.only = only  # index of the call's one differentiable output (its node is this one)

    def backward(self, g):
        cts, self.cts = self.cts, [None] * len(self.cts)  # the tape may be swept again
        if self.only is not None:
            cts[self.only] = g
        return tuple(self.pull(cts))


class _OutputEntry(CustomVJPCall):
    __slots__ = ("call", "index")

    def __init__(self, call, index):
        super().__init__(f"{call.name}[{index}]", None, None)
        self.call = call
        self.index = index

    def backward(self, g):
        cts = self.call.cts
        k = self.index
        cts[k] = g if cts[k] is None else cts[k] + g
        return (_joint_zero(),)


_JOINT_ZERO = []


def _joint_zero():
    """The 0-d tensor that stands for a call's joint output on the tape."""
    if not _JOINT_ZERO:
        _JOINT_ZERO.append(_wrap_array(np.zeros((), np.float64)))
    return _JOINT_ZERO[0]


def record_call(trace, name, parents, primals, outs, pull):
    """Tape a call whose pullback is ``pull`` (custom_vjp, custom_jvp) on ``trace``.

    Args:
        parents: one per input: its VJPTracer of ``trace``, or None.
        primals: the inputs' values one level down.
        outs: the call's outputs, one level down.
        pull: ``pull(cts) -> in_cts``: ``cts`` one cotangent per output (None where nothing
            flowed back), ``in_cts`` one per input (None for zero).

    Returns:
        ``outs`` with each floating-point output replaced by its VJPTracer.
    """
    diff = [k for k, o in enumerate(outs) if isinstance(o, Tensor) and _dt.is_inexact(o.dtype)]
    if not diff:
        return list(outs)
    wrapped = list(outs)
    if len(diff) == 1:
        k = diff[0]
        wrapped[k] = trace.record(_CallEntry(name, pull, len(outs), k), parents, primals, outs[k])
        return wrapped
    call = _CallEntry(name, pull, len(outs), None)
    node = trace.record(call, parents, primals, _joint_zero())
    for k in diff:
        wrapped[k] = trace.record(_OutputEntry(call, k), (node,), (_joint_zero(),), outs[k])
    return wrapped


# ---- one reverse pass, what the transformations above this engine run -------------------------
class ReversePass:
    """One reverse-mode pass: wraps the inputs, runs ``fn`` on them, sweeps backward on demand.

    ``core.grad``/``vjp`` and ``core.recompute``'s backward re-run are built on it.

    Args:
        fn: the function, called as ``fn(*wrapped)``.
        args: its positional arguments, pytrees whose leaves are differentiated (non-tensor
            leaves become tensors).
        params: Parameters whose reads inside ``fn`` are differentiated too.

    Attributes:
        trace: the VJPTrace (popped when ``fn`` returns).
        leaves: one VJPTracer per leaf of ``args``, in flattening order.
        param_tracers: one VJPTracer per Parameter of ``params``.
        out: what ``fn`` returned (aliases resolved).
        tape: the trace's tape, moved here (see the comment in ``__init__``).
    """

    def __init__(self, fn, args, params=()):
        from ..ops._convert import as_tensor
        from ..primitive import pop_trace, push_trace, read_param

        self.trace = push_trace(VJPTrace())
        self.params = list(params)
        try:
            self.leaves = []
            wrapped = []
            for a in args:
                leaves, treedef = _tree.flatten(a)
                tracers = [VJPTracer(self.trace, as_tensor(x)) for x in leaves]
                self.leaves.extend(tracers)
                wrapped.append(_tree.unflatten(treedef, tracers))
            self.param_tracers = []
            for p in self.params:
                t = VJPTracer(self.trace, read_param(p))
                p._subs.append(t)
                self.param_tracers.append(t)
            try:
                self.out = _tree.tree_map(resolve, fn(*wrapped))
            finally:
                for p in reversed(self.params):
                    p._subs.pop()
        finally:
            pop_trace(self.trace)
            # The tape moves here: the trace's tracers point back at the trace, so a tape left
            # on it would make a reference cycle that keeps every activation alive until the
            # garbage collector runs.
            self.tape = self.trace.tape
            self.trace.tape = None

    def primal(self, tree):
        """``tree`` with this pass's tracers replaced by their primals."""
        return _tree.tree_map(lambda x: unwrap(x, self.trace), tree)

    def pullback(self, out_tree, cts_tree, report=False):
        """Sweep backward from the outputs ``out_tree`` with cotangents ``cts_tree`` (same
        structure); returns ``{id(leaf tracer): cotangent}`` for every leaf reached.
        ``report``: tell the active ``grad_ready_hook``s each Parameter's final gradient
        during the sweep (only a user-level pass does: a recompute re-run's parameter
        cotangents are partial sums)."""
        from ..ops._convert import as_tensor

        outs, _ = _tree.flatten(out_tree)
        cts, _ = _tree.flatten(cts_tree)
        if len(outs) != len(cts):
            raise ValueError(f"vjp: got {len(cts)} cotangents for {len(outs)} outputs")
        roots, seeds = [], []
        for o, c in zip(outs, cts):
            if type(o) is VJPTracer and o._trace is self.trace:
                c = as_tensor(c)
                if tuple(c.shape) != tuple(o.shape):
                    raise ValueError(
                        f"vjp: cotangent shape {tuple(c.shape)} != output shape {tuple(o.shape)}"
                    )
                roots.append(o)
                seeds.append(c)
        if not roots:
            return {}
        if report and _grad_ready_hooks and self.params:
            ready = {id(t): p for t, p in zip(self.param_tracers, self.params)}
            hooks = tuple(_grad_ready_hooks)

            def hook(param, ct):
                for h in hooks:
                    h(param, ct)

            return backward(roots, seeds, order=self.tape, ready=ready, hook=hook)
        return backward(roots, seeds, order=self.tape)

    def grads_for(self, leaf_cts, tracers):
        """The cotangent of each of ``tracers`` in ``leaf_cts`` (zeros where none arrived)."""
        from ..ops.creation import zeros_like

        res = []
        for t in tracers:
            g = leaf_cts.get(id(t))
            res.append(zeros_like(t.primal) if g is None else g)
        return res
