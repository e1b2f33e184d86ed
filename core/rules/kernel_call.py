"""Rules of ``kernel_call`` (``core/prims/kernel_call.py``): those of its reference function.

Each rule runs the reference under the transformation it stands for, one level above the
operands it is handed (which may themselves be tracers of outer transformations), so the
derivatives of a ``kernel_call`` are the composite's, to any order, and vmap batches the
composite. The value itself stays with the kernel.
"""

from ..autodiff.forward import JVPTrace, JVPTracer, jvp_rules
from ..autodiff.reverse import VJPTrace, VJPTracer, backward, vjp_rules
from ..primitive import pop_trace, push_trace
from ..prims.kernel_call import kernel_call
from ..tensor import resolve
from ..vmap import BatchTrace, BatchTracer, batch_rules


def _vjp(g, out, *xs, reference, kernel, shape, dtype):
    trace = push_trace(VJPTrace())
    try:
        tracers = [VJPTracer(trace, x) for x in xs]
        result = resolve(reference(*tracers))
    finally:
        pop_trace(trace)
    tape, trace.tape = trace.tape, None  # no reference cycle through the trace
    if type(result) is not VJPTracer or result._trace is not trace:
        return tuple(None for _ in xs)  # the reference does not depend on its inputs
    cts = backward([result], [g], order=tape)
    return tuple(cts.get(id(t)) for t in tracers)


def _jvp(ts, out, *xs, reference, kernel, shape, dtype):
    trace = push_trace(JVPTrace())
    try:
        tracers = [x if t is None else JVPTracer(trace, x, t) for x, t in zip(xs, ts)]
        result = resolve(reference(*tracers))
    finally:
        pop_trace(trace)
    if type(result) is not JVPTracer or result._trace is not trace:
        return None
    return result.tangent


def _batch(args, bdims, reference, kernel, shape, dtype):
    size = next(a.shape[b] for a, b in zip(args, bdims) if b is not None)
    trace = push_trace(BatchTrace(size))
    try:
        tracers = [a if b is None else BatchTracer(trace, a, b) for a, b in zip(args, bdims)]
        result = resolve(reference(*tracers))
    finally:
        pop_trace(trace)
    if type(result) is not BatchTracer or result._trace is not trace:
        return result, None
    return result.val, result.bdim


vjp_rules[kernel_call] = _vjp
jvp_rules[kernel_call] = _jvp
batch_rules[kernel_call] = _batch
