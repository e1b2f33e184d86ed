"""Random straight-line programs: ``jit(f) == f`` for programs mixing elementwise chains (fused),
views (transpose, reshape, flip) of values that later die, matmuls, reductions with
broadcasting, and outputs that are inputs or intermediate values. This is where the passes
and the buffer reuse of the generated code meet in combinations no hand-written test lists."""

import os

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops

from ._helpers import assert_tree_close

UNARY = {
    "exp_tanh": lambda v: ops.exp(ops.tanh(v)),
    "sin": ops.sin,
    "cos": ops.cos,
    "neg": ops.neg,
    "abs": ops.abs,
    "sqrt1": lambda v: ops.sqrt(ops.abs(v) + 1.0),
    "sigmoid": ops.sigmoid,
    "scale": lambda v: v * 0.5 + 0.25,
    "transpose": ops.transpose,  # a view (square shapes)
    "flip": lambda v: ops.flip(v, axis=0),  # a view with negative strides
    "reshape_round_trip": lambda v: ops.reshape(ops.reshape(v, (-1,)), v.shape),
    "row_sum": lambda v: v - ops.sum(v, axis=1, keepdims=True) / v.shape[1],  # broadcasting
    "relu": ops.relu,
}
BINARY = {
    "add": ops.add,
    "sub": ops.sub,
    "mul": ops.mul,
    "max": ops.maximum,
    "min": ops.minimum,
    "where": lambda a, b: ops.where(a > b, a, b * 0.5),
    "matmul": lambda a, b: (a @ b) / a.shape[0],
    "mul_T": lambda a, b: a * ops.transpose(b),
    "duplicated": lambda a, b: ops.exp(ops.tanh(a)) * b + ops.exp(ops.tanh(a)),  # CSE
    "fused_with_own_view": lambda a, b: ops.sin(a) * ops.flip(a, axis=1) + ops.transpose(a) * b,
}


def build(program, n_outputs):
    """The function of inputs (x, y, s) that runs ``program``: a list of (op, i, j) where i
    and j pick operands among the values computed so far."""

    def fn(x, y, s):
        values = [x, y]
        for op, i, j in program:
            a, b = values[i % len(values)], values[j % len(values)]
            if op in UNARY:
                values.append(UNARY[op](a))
            elif op in BINARY:
                values.append(BINARY[op](a, b))
            else:  # "scalar": the 0-d input meets a matrix
                values.append(a * ops.tanh(s) + s)
        last = [values[-k] for k in range(1, n_outputs + 1)]
        return (*last, values[0], values[2 % len(values)])  # an input and an early value too

    return fn


op_names = st.sampled_from([*UNARY, *BINARY, "scalar"])
programs = st.lists(
    st.tuples(op_names, st.integers(0, 30), st.integers(0, 30)), min_size=1, max_size=12
)


EXAMPLES = int(os.environ.get("DIFFSCI_FUZZ_EXAMPLES", 40))  # raise it to fuzz for longer


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    program=programs,
    n=st.sampled_from([1, 3, 70]),  # 70 x 70 = 4900 elements: big enough for fusion and reuse
    dtype=st.sampled_from([np.float64, np.float32]),
    n_outputs=st.integers(1, 3),
    no_passes=st.booleans(),
)
def test_random_program_jit_equals_eager(program, n, dtype, n_outputs, no_passes):
    rng = np.random.default_rng(len(program) * 7 + n)
    x = core.tensor(rng.standard_normal((n, n)).astype(dtype))
    y = core.tensor(rng.standard_normal((n, n)).astype(dtype))
    s = core.tensor(np.asarray(0.3, dtype))
    fn = build(program, n_outputs)
    x_before = x.asnumpy().copy()
    expected = fn(x, y, s)
    jf = core.jit(fn, passes=() if no_passes else None)
    tol = 1e-11 if dtype == np.float64 else 2e-5
    for _ in range(2):  # the second call runs with buffers of the first one freed/reused
        assert_tree_close(jf(x, y, s), expected, rtol=tol, atol=tol)
    np.testing.assert_array_equal(x.asnumpy(), x_before)  # inputs are never written


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(program=programs, n=st.sampled_from([1, 3, 70]), n_outputs=st.integers(1, 3))
def test_random_program_jit_of_grad_equals_grad(program, n, n_outputs):
    rng = np.random.default_rng(len(program) * 11 + n)
    x, y = core.tensor(rng.standard_normal((n, n))), core.tensor(rng.standard_normal((n, n)))
    s = core.tensor(np.asarray(0.3))
    fn = build(program, n_outputs)
    weights = [core.tensor(rng.standard_normal(o.shape)) for o in fn(x, y, s)]

    def loss(x, y, s):
        return sum(ops.sum(o * w) for o, w in zip(fn(x, y, s), weights, strict=True))

    grad = core.grad(loss, grad_position=(0, 1, 2))
    assert_tree_close(core.jit(grad)(x, y, s), grad(x, y, s), rtol=1e-10, atol=1e-10)
