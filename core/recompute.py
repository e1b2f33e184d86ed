"""``core.recompute``: activation checkpointing.

The forward pass of a recomputed function keeps only its inputs (and the Parameters it
reads); the backward pass runs the function again under a fresh reverse-mode trace and pulls
the cotangent back through it. Gradients are identical; the peak memory of a deep network's
gradient drops from all activations to one block's activations plus the block inputs.
Under ``core.jit`` the recomputed equations are tagged ``recompute`` in the IR (and common-
subexpression elimination never merges them with the forward pass).
"""

import functools

from . import primitive as _primitive
from . import tree as _tree
from .autodiff.api import _Reverse, no_grad
from .autodiff.reverse import CustomVJPCall, Node, VJPTrace, VJPTracer, _no_grad_depth


class _RecomputeCall(CustomVJPCall):
    """Tape entry for one output of a recomputed call."""

    __slots__ = ("args", "fn", "index", "n_out", "params")

    def __init__(self, fn, args, params, index, n_out):
        super().__init__(f"recompute({getattr(fn, '__name__', 'fn')})", None, None)
        self.fn = fn
        self.args = args
        self.params = params
        self.index = index
        self.n_out = n_out

    def backward(self, g):
        jit_traces = [t for t in _primitive.trace_stack() if type(t).__name__ == "JitTrace"]
        saved = [t.tag for t in jit_traces]
        for t in jit_traces:
            t.tag = "recompute"
        try:
            rev = _Reverse(self.fn, self.args, self.params)
        finally:
            for t, tag in zip(jit_traces, saved):
                t.tag = tag
        outs, _ = _tree.flatten(rev.out)
        cts = [None] * len(outs)
        cts[self.index] = g
        from . import ops

        cts = [ops.zeros_like(o) if c is None else c for o, c in zip(outs, cts)]
        leaf_cts = rev.pullback(outs, cts)
        grads = rev.grads_for(leaf_cts, rev.leaves + rev.param_tracers)
        return tuple(grads)


def recompute(fn):
    """Wrap ``fn`` (a function of tensors, or a Cell) so that its activations are recomputed
    in the backward pass instead of stored.

    Outside reverse-mode differentiation it simply calls ``fn``. Inputs must be tensors;
    outputs a tensor or a tuple/list of tensors (with several outputs, each output's backward
    re-runs ``fn``; prefer one output per recomputed block).
    """
    from .nn.cell import Cell

    if isinstance(fn, Cell):
        cell = fn
        fn = cell.construct

    @functools.wraps(fn)
    def wrapper(*args):
        stack = _primitive.trace_stack()
        if not stack or not isinstance(stack[-1], VJPTrace) or _no_grad_depth[0]:
            return fn(*args)
        trace = stack[-1]
        read = []
        saved_log = _primitive.param_log[0]
        _primitive.param_log[0] = read
        try:
            with no_grad():
                out = fn(*args)  # no tape: only the outputs survive
        finally:
            _primitive.param_log[0] = saved_log
        params, seen = [], set()
        for p in read:
            if id(p) not in seen and p._subs and type(p._subs[-1]) is VJPTracer and p._subs[-1]._trace is trace:
                seen.add(id(p))
                params.append(p)
        arg_primals, parents = [], []
        for a in args:
            if type(a) is VJPTracer and a._trace is trace:
                arg_primals.append(a.primal)
                parents.append(a.node)
            else:
                arg_primals.append(a)
                parents.append(None)
        for p in params:
            parents.append(p._subs[-1].node)
        param_primals = [p._subs[-1].primal for p in params]
        outs, treedef = _tree.flatten(out)
        wrapped = []
        for k, o in enumerate(outs):
            call = _RecomputeCall(fn, tuple(arg_primals), params, k, len(outs))
            node = Node(call, parents, tuple(arg_primals) + tuple(param_primals), o, {})
            wrapped.append(VJPTracer(trace, o, node))
        return _tree.unflatten(treedef, wrapped)

    return wrapper
