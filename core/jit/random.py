"""Random draws inside ``core.jit``: staged as graph equations so each call draws anew
(a draw made while tracing would otherwise be baked into the graph as a constant).

Also the random tape of ``core.recompute``: a recomputed block must see the same random
numbers (dropout masks) in its backward re-run as in its forward pass, so the forward records
its draws and the re-run replays them instead of drawing again.
"""

import contextlib

from .. import random_state
from ..primitive import Primitive, ShapedArray, trace_stack

RANDOM_PRIMS = set()


def _draw(kind):
    def impl(xp, shape, dtype, **params):
        return random_state.eager_draw(kind, shape, dtype, **params)

    prim = Primitive(
        f"random_{kind}",
        impl,
        lambda shape, dtype, **p: ShapedArray(shape, dtype),
        differentiable=False,
    )
    RANDOM_PRIMS.add(prim)
    return prim


_PRIMS = {k: _draw(k) for k in ("normal", "uniform", "randint", "permutation")}
_tape = [None]  # the innermost active RandomTape


def staged_draw(kind, shape, dtype, params):
    """The draw as a tensor when it must not be drawn eagerly by the caller: a tracer if a jit
    trace is active, the recorded or replayed value while a RandomTape runs; else None (the
    hook of ``core.random_state``)."""
    tape = _tape[0]
    if tape is not None:
        return tape.draw(kind, shape, dtype, params)
    return _staged(kind, shape, dtype, params)


random_state.set_stage_hook(staged_draw)


def _staged(kind, shape, dtype, params):
    from .trace import JitTrace

    for t in reversed(trace_stack()):
        if isinstance(t, JitTrace):  # loop bodies (a subclass) draw per step too
            return t.process_nullary(_PRIMS[kind], dict(shape=shape, dtype=dtype, **params))
    return None


def _fresh(kind, shape, dtype, params):
    out = _staged(kind, shape, dtype, params)
    if out is None:
        from ..tensor import Tensor

        out = Tensor._wrap(_PRIMS[kind].impl(None, shape=shape, dtype=dtype, **params))
    return out


class RandomTape:
    """The random draws of one recomputed call: recorded once, replayed by every re-run.

    Replaying keeps the recorded values alive until the backward pass (one array per draw,
    e.g. one dropout mask per dropout layer of the block).
    """

    def __init__(self):
        self.values = []  # [(kind, shape, dtype, params), Tensor]
        self.replaying = False
        self.pos = 0
        self.parent = None

    @contextlib.contextmanager
    def _active(self, replaying):
        self.parent, self.replaying, self.pos = _tape[0], replaying, 0
        _tape[0] = self
        try:
            yield self
        finally:
            _tape[0], self.parent = self.parent, None

    def record(self):
        """Context: draws are made (by the enclosing tape, if any) and recorded."""
        return self._active(False)

    def replay(self):
        """Context: draws return the recorded values, in order."""
        return self._active(True)

    def draw(self, kind, shape, dtype, params):
        key = (kind, shape, dtype, tuple(sorted(params.items())))
        if self.replaying:
            if self.pos >= len(self.values) or self.values[self.pos][0] != key:
                raise RuntimeError(
                    "recompute: the recomputed function draws other random numbers than its "
                    f"forward pass did (draw {self.pos}: {kind}{list(shape)}); its random draws "
                    "must not depend on values computed inside it"
                )
            value = self.values[self.pos][1]
            self.pos += 1
            return value
        parent = self.parent
        value = (
            parent.draw(kind, shape, dtype, params)
            if parent is not None
            else _fresh(kind, shape, dtype, params)
        )
        self.values.append((key, value))
        return value
