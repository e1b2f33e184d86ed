"""Fused elementwise kernels as native C loops on the CPU (core.backend.cpu_fusion): the
two-run layout, values against numpy under every broadcasting pattern, ``out=`` aliasing an
input, transcendental functions and GELU inside fused jit kernels, and jit(grad) == grad."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops
from diffsci.core.backend import cc
from diffsci.core.backend.cpu_fusion import NativeFused, layout
from diffsci.core.jit.fusion import FusedKernel, fused

from ._helpers import assert_tree_close

needs_cc = pytest.mark.skipif(not cc.available(), reason="no working C compiler on this machine")


def test_layout_collapses_axes_into_an_outer_and_an_inner_run():
    assert layout([(4, 5), (4, 5)], (4, 5)) == (1, 20, (True, True), (0, 0))
    # a bias along the last axis: read in full each outer step
    assert layout([(6, 7, 8), (8,)], (6, 7, 8)) == (42, 8, (True, True), (8, 0))
    # a column [N, 1]: one value per outer step
    assert layout([(6, 8), (6, 1)], (6, 8)) == (6, 8, (True, False), (8, 1))
    # scalars and size-1 axes
    assert layout([(3, 1, 4), ()], (3, 1, 4)) == (1, 12, (True, False), (0, 0))
    assert layout([(), ()], ()) == (1, 1, (False, False), (0, 0))
    # a broadcast in the middle of three runs has no two-run layout
    assert layout([(2, 3, 4), (2, 1, 4)], (2, 3, 4)) is None


def _kernel(c_src, dtypes, out_dtype, math=()):
    names = [f"x{k}" for k in range(len(dtypes))]
    return FusedKernel(None, c_src, names, dtypes, out_dtype, 2, native=True, math=math)


@needs_cc
@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.integers(1, 5), min_size=1, max_size=4),
    st.lists(st.lists(st.booleans(), min_size=4, max_size=4), min_size=2, max_size=2),
    st.sampled_from([np.float32, np.float64]),
)
def test_native_kernel_matches_numpy_under_broadcasting(out_shape, masks, dtype):
    rng = np.random.default_rng(0)
    shapes = [tuple(1 if m else d for d, m in zip(out_shape, mask)) for mask in masks]
    shapes[1] = shapes[1][1:]  # also a lower-rank operand
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    run = NativeFused(_kernel("((x0 * x1) + tanh(x0))", [dtype, dtype], dtype, math=("tanh",)))
    want = a * b + np.tanh(a)
    got = run(a, b)
    assert got.dtype == dtype and got.shape == want.shape
    tol = 2e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@needs_cc
def test_native_kernel_writes_into_out_even_when_it_is_an_input():
    a = np.linspace(-2, 2, 5000).reshape(50, 100)
    b = np.linspace(0, 1, 100)
    want = a * b - a
    run = NativeFused(_kernel("((x0 * x1) - x0)", [a.dtype, b.dtype], a.dtype))
    out = run(a, b, out=a)
    assert out is a
    np.testing.assert_array_equal(a, want)  # plain C arithmetic: bit-identical to numpy


@needs_cc
def test_native_kernel_comparison_and_select_produce_bool_and_pick():
    x = np.linspace(-1, 1, 4096).astype(np.float32)
    gt = NativeFused(_kernel("(x0 > x1)", [x.dtype, x.dtype], np.dtype(bool)))
    mask = gt(x, np.float32(0.25) * np.ones_like(x))
    np.testing.assert_array_equal(mask, x > 0.25)
    pick = NativeFused(_kernel("(x0 ? x1 : x2)", [np.dtype(bool), x.dtype, x.dtype], x.dtype))
    np.testing.assert_array_equal(pick(mask, x, -x), np.where(mask, x, -x))


@needs_cc
def test_jit_fuses_transcendentals_into_one_native_kernel():
    fn = lambda x, y: ops.tanh(ops.exp(x) * y + 1.0) - ops.sin(y)  # noqa: E731
    rng = np.random.default_rng(1)
    x, y = (core.tensor(rng.standard_normal((64, 96)).astype(np.float32)) for _ in range(2))
    low = core.jit(fn).lower(x, y)
    assert [e.prim for e in low.graph.eqns] == [fused]
    kernel = low.graph.eqns[0].params["kernel"]
    assert all(f in kernel.c_src for f in ("exp", "tanh", "sin"))
    # the math functions it calls travel with it (the backend declares them vectorized)
    assert set(kernel.math) == {"exp", "tanh", "sin"}
    assert_tree_close(core.jit(fn)(x, y), fn(x, y), rtol=2e-6, atol=2e-6)


@needs_cc
def test_jit_fuses_the_bias_add_into_gelu_and_grad_matches_eager():
    rng = np.random.default_rng(2)
    x = core.tensor(rng.standard_normal((128, 32)))
    w = core.tensor(rng.standard_normal((32, 48)) * 0.3)
    b = core.tensor(rng.standard_normal(48))

    def loss(x, w, b):
        return ops.sum(ops.gelu(x @ w + b) * ops.gelu(x @ w))

    g = core.grad(loss, grad_position=(0, 1, 2))
    low = core.jit(g).lower(x, w, b)
    kernels = [e.params["kernel"].c_src for e in low.graph.eqns if e.prim is fused]
    assert any("erf" in k for k in kernels)
    assert not any(e.prim.name in ("gelu", "gelu_backward") for e in low.graph.eqns)
    assert_tree_close(core.jit(g)(x, w, b), g(x, w, b), rtol=1e-12, atol=1e-12)


@needs_cc
def test_all_kernels_of_a_graph_compile_in_one_call(monkeypatch):
    calls = []
    real_load = cc.load
    monkeypatch.setattr(cc, "load", lambda src: calls.append(src) or real_load(src))

    def f(x, y):
        a = ops.exp(x) * y + 1.0
        b = ops.sum(a, axis=0)
        return ops.tanh(a * b) - y * 2.0

    rng = np.random.default_rng(3)
    x, y = (core.tensor(rng.standard_normal((70, 80))) for _ in range(2))
    low = core.jit(f).lower(x, y)
    assert sum(e.prim is fused for e in low.graph.eqns) == 2
    assert len(calls) == 1
    assert_tree_close(core.jit(f)(x, y), f(x, y), rtol=1e-12, atol=1e-12)


@needs_cc
@pytest.mark.parametrize(
    "bias_shape",
    [(3, 16, 80), (1, 3, 16, 80), (5, 1, 1, 80), (5, 3, 16, 80), (80,), (5, 3, 16, 1)],
)
def test_softmax_of_a_sum_is_one_equation_and_matches_eager(bias_shape):
    from diffsci.core.jit.fuse_softmax import softmax_add

    rng = np.random.default_rng(4)
    a = core.tensor(rng.standard_normal((5, 3, 16, 80)) * 3)
    b = core.tensor(rng.standard_normal(bias_shape))
    fn = lambda a, b: ops.softmax(a + b, axis=-1)  # noqa: E731
    prims = [e.prim for e in core.jit(fn).lower(a, b).graph.eqns]
    # a bias constant along the softmax axis is left alone (it cancels; nothing to gain)
    assert (softmax_add in prims) == (bias_shape[-1] == 80)
    assert_tree_close(core.jit(fn)(a, b), fn(a, b), rtol=1e-13, atol=1e-15)

    def loss(a, b):
        s = ops.softmax(a + b, axis=-1)
        return ops.sum(s * s * ops.cos(a))

    g = core.grad(loss, grad_position=(0, 1))
    assert_tree_close(core.jit(g)(a, b), g(a, b), rtol=1e-12, atol=1e-14)


@needs_cc
def test_softmax_add_is_not_formed_when_the_sum_is_read_elsewhere():
    from diffsci.core.jit.fuse_softmax import softmax_add

    rng = np.random.default_rng(5)
    a, b = (core.tensor(rng.standard_normal((64, 100)).astype(np.float32)) for _ in range(2))

    def fn(a, b):
        z = a + b
        return ops.softmax(z, axis=-1), z * 2.0

    assert softmax_add not in [e.prim for e in core.jit(fn).lower(a, b).graph.eqns]
    assert_tree_close(core.jit(fn)(a, b), fn(a, b), rtol=1e-6, atol=1e-6)
