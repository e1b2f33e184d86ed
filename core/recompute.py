"""``core.recompute``: activation checkpointing.

The forward pass of a recomputed function keeps only its inputs (and the Parameters it
reads); the backward pass runs the function again under a fresh reverse-mode trace and pulls
the cotangent back through it. Gradients are identical; the peak memory of a deep network's
gradient drops from all activations to one block's activations plus the block inputs. Random
draws (dropout masks) of the forward pass are recorded and replayed by the re-run, so both see
the same numbers.
Under ``core.jit`` the recomputed equations are tagged ``recompute`` in the IR (and common-
subexpression elimination never merges them with the forward pass).
"""

import functools

from . import dtypes as _dt
from . import primitive as _primitive
from . import tree as _tree
from .autodiff.reverse import (
    CustomVJPCall,
    ReversePass,
    VJPTrace,
    VJPTracer,
    split_primals,
    unwrap,
)
from .jit.random import RandomTape
from .jit.trace import tagging
from .ops.creation import zeros_like
from .tensor import Parameter, Tensor


class _RecomputeCall(CustomVJPCall):
    """Tape entry for one output of a recomputed call."""

    __slots__ = ("fn", "index", "leaves", "n_out", "params", "tape", "treedef")

    def __init__(self, fn, leaves, treedef, params, index, n_out, tape):
        super().__init__(f"recompute({getattr(fn, '__name__', 'fn')})", None, None)
        self.fn = fn
        self.leaves = leaves  # the positional arguments' pytree leaves (primals)
        self.treedef = treedef  # of the tuple of positional arguments
        self.params = params
        self.index = index
        self.n_out = n_out
        self.tape = tape  # the forward pass's random draws, replayed by the re-run

    def backward(self, g):
        """Cotangents for every argument leaf (None for leaves that are not tensors), then for
        every Parameter read."""
        tensor_at = [k for k, a in enumerate(self.leaves) if isinstance(a, Tensor)]

        def rerun(*tensors):
            leaves = list(self.leaves)
            for k, t in zip(tensor_at, tensors, strict=True):
                leaves[k] = t
            return self.fn(*_tree.unflatten(self.treedef, leaves))

        with tagging("recompute"), self.tape.replay():
            rev = ReversePass(rerun, [self.leaves[k] for k in tensor_at], self.params)
        outs, _ = _tree.flatten(rev.out)
        cts = [None] * len(outs)
        cts[self.index] = g
        cts = [zeros_like(o) if c is None else c for o, c in zip(outs, cts, strict=True)]
        leaf_cts = rev.pullback(outs, cts)
        grads = rev.grads_for(leaf_cts, rev.leaves)
        per_leaf = [None] * len(self.leaves)
        for k, gk in zip(tensor_at, grads, strict=True):
            per_leaf[k] = gk
        return tuple(per_leaf) + tuple(rev.grads_for(leaf_cts, rev.param_tracers))


def recompute(fn):
    """Wrap ``fn`` (a function of tensors, or a Cell) so that its activations are recomputed
    in the backward pass instead of stored.

    Outside reverse-mode differentiation it simply calls ``fn``. Positional inputs are pytrees
    (tensors, Parameters, tuples/dicts/NamedTuples/registered dataclasses of them) whose
    non-tensor leaves are static values, keyword arguments static values; outputs a tensor or a
    pytree of tensors (with several outputs, each output's backward re-runs ``fn``; prefer
    one output per recomputed block). Parameters that ``fn`` reads get their gradients.
    """
    fn = getattr(fn, "construct", fn)  # a Cell: its forward

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs:
            if any(isinstance(v, Tensor) for v in _tree.flatten(kwargs)[0]):
                raise TypeError(
                    f"recompute({getattr(fn, '__name__', 'fn')}): pass tensors positionally "
                    f"(got tensor keyword arguments {sorted(kwargs)})"
                )
            return recompute(functools.partial(fn, **kwargs))(*args)
        stack = _primitive.trace_stack()
        if not stack or not isinstance(stack[-1], VJPTrace) or not stack[-1].records():
            # no reverse pass to save memory in; or no_grad, or the forward pass of an
            # enclosing recompute, which tapes nothing
            return fn(*args)
        trace = stack[-1]
        # a Parameter passed as an argument is an input like any other: its current value
        leaves, args_def = _tree.flatten(args)
        leaves = [_primitive.read_param(a) if isinstance(a, Parameter) else a for a in leaves]
        args = _tree.unflatten(args_def, leaves)
        read = []
        saved_log = _primitive.param_log[0]
        _primitive.param_log[0] = read
        # No tape in *our* trace: only the outputs survive. Our trace is paused (it passes
        # every primitive one level down instead of recording it); outer transformations (grad
        # of grad, jit) still see the forward pass (a global no_grad would hide it from them).
        tape = RandomTape()
        try:
            with trace.pause(), tape.record():
                out = _tree.tree_map(lambda o: unwrap(o, trace), fn(*args))
        finally:
            _primitive.param_log[0] = saved_log
        params, seen = [], set()
        for p in read:
            if (
                id(p) not in seen
                and p._subs
                and type(p._subs[-1]) is VJPTracer
                and p._subs[-1]._trace is trace
            ):
                seen.add(id(p))
                params.append(p)
        arg_primals, parents = split_primals(trace, leaves)
        parents = [*parents, *(p._subs[-1] for p in params)]
        param_primals = [p._subs[-1].primal for p in params]
        outs, treedef = _tree.flatten(out)
        wrapped = []
        for k, o in enumerate(outs):
            if not isinstance(o, Tensor) or not _dt.is_inexact(o.dtype):
                wrapped.append(o)  # integer/bool outputs carry no cotangent
                continue
            call = _RecomputeCall(fn, arg_primals, args_def, params, k, len(outs), tape)
            wrapped.append(trace.record(call, parents, (*arg_primals, *param_primals), o))
        return _tree.unflatten(treedef, wrapped)

    return wrapper
