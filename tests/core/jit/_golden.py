"""Golden IR files: the printed graphs of a few small functions, pinned in ``golden/*.txt``.

Var numbers come from a global counter, so the text is compared after renumbering them in
order of appearance (``normalize``). To regenerate after a deliberate change of the IR or of
the passes, run from the repository root:

    python -m tests.core.jit._golden

and review the diff by hand (``git diff tests/core/jit/golden``) before committing it: the
files are the specification, not a snapshot to refresh blindly.
"""

import pathlib
import re

import numpy as np

from diffsci import core
from diffsci.core import ops
from diffsci.core.backend import cc
from diffsci.core.jit import passes

GOLDEN_DIR = pathlib.Path(__file__).parent / "golden"

# every pass except elementwise fusion: shows what simplification alone leaves
NO_FUSION = [
    passes.simplify,
    passes.fold_constants,
    passes.common_subexpressions,
    passes.simplify,
    passes.dead_code,
]


def _f32(*shape):
    return core.tensor(np.zeros(shape, np.float32))


def dense_tanh_raw():
    """The raw trace (no passes) of one dense layer: matmul, broadcast add, tanh."""
    fn = core.jit(lambda x, w, b: ops.tanh(x @ w + b), passes=())
    return fn.lower(_f32(4, 3), _f32(3, 2), _f32(2))


def simplify_all():
    """x*1 + 0, reshape of reshape, transpose of transpose, a duplicated sin, dead code."""

    def f(x):
        a = ops.reshape(ops.reshape(x * 1.0 + 0.0, (12,)), (3, 4))
        t = ops.transpose(ops.transpose(x))
        unused = ops.exp(x)  # noqa: F841  (dead code)
        return ops.sin(a) + ops.sin(a), t * t

    return core.jit(f, passes=NO_FUSION).lower(_f32(4, 3))


def grad_tanh():
    """jit(grad(sum(tanh(x)))): the VJP rule of tanh, 1 - tanh(x)^2, in the same graph."""
    return core.jit(core.grad(lambda x: ops.tanh(x).sum()), passes=NO_FUSION).lower(_f32(4, 3))


def fused_chain():
    """exp(sin(x) * 2 + 1) with every pass on a 1M-element CPU array, without a C compiler: sin
    and exp stay numpy calls (SIMD), the arithmetic between them is one fused numexpr kernel."""
    return core.jit(lambda x: ops.exp(ops.sin(x) * 2.0 + 1.0)).lower(_f32(1024, 1024))


def while_counter():
    """A while_loop with a counter: one ``while`` equation, results read by tuple_index."""

    def f(x):
        init = (core.tensor(0, dtype=core.int32), x)
        return ops.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), init)[1]

    return core.jit(f).lower(_f32(4, 3))


CASES = {
    "dense_tanh_raw": dense_tanh_raw,
    "simplify_all": simplify_all,
    "grad_tanh": grad_tanh,
    "fused_chain": fused_chain,
    "while_counter": while_counter,
}


def normalize(text):
    """Renumber ``%N`` in order of first appearance, so that unrelated tracing elsewhere in the
    process (which advances the global Var counter) does not change the text."""
    mapping = {}

    def sub(m):
        return "%" + str(mapping.setdefault(m.group(1), len(mapping)))

    return re.sub(r"%(\d+)", sub, text).rstrip() + "\n"


def render(name):
    # the IR must not depend on the machine: fusion is pinned as without a C compiler (the
    # native CPU policy is tested in test_passes.py)
    with cc.disabled():
        return normalize(CASES[name]().as_text())


def regenerate():
    GOLDEN_DIR.mkdir(exist_ok=True)
    for name in CASES:
        (GOLDEN_DIR / f"{name}.txt").write_text(render(name))
        print(f"wrote {GOLDEN_DIR / name}.txt")


if __name__ == "__main__":
    regenerate()
