"""Compiled control flow: ``ops.cond``, ``ops.while_loop`` (a ``while`` equation with
sub-graphs), ``ops.scan`` (differentiable) and ``ops.fori_loop``, eagerly, under jit, grad
and vmap."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops
from diffsci.core.testing import gradcheck

from ._helpers import assert_tree_close


def rand(*shape, seed=0):
    return core.tensor(np.random.default_rng(seed).standard_normal(shape))


def prim_names(graph):
    return [e.prim.name for e in graph.eqns]


# ---- cond -------------------------------------------------------------------------------------------
def branchy(x):
    return ops.cond(ops.sum(x) > 0.0, lambda a: ops.sin(a) * 2.0, lambda a: a**2 - 1.0, x)


def test_cond_eager_and_jit_take_the_right_branch():
    jf = core.jit(branchy)
    for x in (core.tensor(np.array([0.5, 1.0, 2.0])), core.tensor(np.array([-0.5, -1.0, 0.2]))):
        expected = ops.sin(x) * 2.0 if float(ops.sum(x)) > 0 else x**2 - 1.0
        assert_tree_close(branchy(x), expected)
        assert_tree_close(jf(x), expected)
    assert jf.trace_count == 1  # one graph serves both branches


def test_cond_grad_jit_and_vmap():
    x_pos, x_neg = core.tensor(np.array([0.5, 1.0, 2.0])), core.tensor(np.array([-0.5, -1.0, 0.2]))
    loss = lambda x: ops.sum(branchy(x))  # noqa: E731
    for x in (x_pos, x_neg):
        assert_tree_close(core.jit(core.grad(loss))(x), core.grad(loss)(x))
        assert gradcheck(loss, (x,), order=2)
    xs = ops.stack([x_pos, x_neg])
    assert_tree_close(core.vmap(branchy)(xs), ops.stack([branchy(x_pos), branchy(x_neg)]))
    assert_tree_close(core.jit(core.vmap(branchy))(xs), ops.stack([branchy(x_pos), branchy(x_neg)]))


def test_cond_with_a_python_predicate_and_pytrees():
    f = core.jit(
        lambda x, flag: ops.cond(flag, lambda a: {"y": a + 1.0}, lambda a: {"y": a - 1.0}, x),
        static_argnums=1,
    )
    x = rand(3)
    assert_tree_close(f(x, True), {"y": x + 1.0})
    assert_tree_close(f(x, False), {"y": x - 1.0})


def test_cond_branch_mismatch_is_an_error():
    with pytest.raises(ValueError, match="cond"):
        core.jit(lambda x: ops.cond(ops.sum(x) > 0, lambda a: a, lambda a: a[:2], x))(rand(3))


# ---- while_loop ---------------------------------------------------------------------------------------
def newton_sqrt(a):
    """sqrt(a) by Newton's method until converged: a data-dependent trip count."""

    def cond_fun(c):
        _, _, dx = c
        return ops.max(ops.abs(dx)) > 1e-12

    def body_fun(c):
        i, x, _ = c
        new = 0.5 * (x + a / x)
        return i + 1, new, new - x

    return ops.while_loop(cond_fun, body_fun, (core.tensor(0), a, ops.ones_like(a)))


def test_while_loop_compiles_to_one_while_equation_with_subgraphs():
    a = core.tensor(np.array([2.0, 9.0, 0.25]))
    jf = core.jit(newton_sqrt)
    low = jf.lower(a)
    assert prim_names(low.graph).count("while") == 1
    (w,) = [e for e in low.graph.eqns if e.prim.name == "while"]
    assert {"cond", "body"} <= set(w.params)
    assert "cond = graph(" in low.as_text() and "body = graph(" in low.as_text()
    steps, root, _ = jf(a)
    np.testing.assert_allclose(root.asnumpy(), np.sqrt([2.0, 9.0, 0.25]), rtol=1e-14)
    assert_tree_close(jf(a), newton_sqrt(a))
    assert int(steps) > 3
    # the trip count depends on the data, the graph does not
    steps2, root2, _ = jf(core.tensor(np.array([1.0, 1.0, 1.0])))
    assert int(steps2) < int(steps) and jf.trace_count == 1
    np.testing.assert_allclose(root2.asnumpy(), 1.0)


def test_while_loop_captures_outer_values():
    w = rand(4, seed=1)  # a constant closed over
    p = core.Parameter(np.full(4, 0.5), name="p")  # a Parameter read inside the body

    def f(x, scale):
        def body(c):
            i, v = c
            return i + 1, v * p + x * scale  # x, scale: traced values of the outer graph

        return ops.while_loop(lambda c: c[0] < 5, body, (core.tensor(0), w))[1]

    x, s = rand(4, seed=2), core.tensor(0.3, dtype=core.float64)
    jf = core.jit(f)
    assert_tree_close(jf(x, s), f(x, s))
    p.set_data(np.full(4, -0.25))  # the Parameter is an input of the graph, not a constant
    assert_tree_close(jf(x, s), f(x, s))
    assert jf.trace_count == 1


def test_nested_while_loops_and_zero_trips():
    def f(x):
        def outer(c):
            i, v = c
            _, v2 = ops.while_loop(
                lambda d: d[0] < 3, lambda d: (d[0] + 1, d[1] * 0.5 + x), (core.tensor(0), v)
            )
            return i + 1, v2

        return ops.while_loop(lambda c: c[0] < 4, outer, (core.tensor(0), x))[1]

    x = rand(5)
    assert_tree_close(core.jit(f)(x), f(x))

    def zero_trips(a, b):
        x, y = ops.exp(a), ops.exp(b)
        _, y2 = ops.while_loop(lambda c: ops.sum(c[0]) < 0.0, lambda c: (c[0] * 2.0, c[1]), (x, y))
        w = ops.cos(ops.sin(a) * 3.0) + 1.0  # may reuse dead buffers: must not touch y2
        return y2, w

    a, b = rand(100, seed=1), rand(100, seed=2)
    assert_tree_close(core.jit(zero_trips)(a, b), zero_trips(a, b))


def test_while_loop_random_draws_each_iteration():
    def f(x):
        body = lambda c: (c[0] + 1, c[1] + core.random.uniform((3,), dtype=core.float64))  # noqa: E731
        return ops.while_loop(lambda c: c[0] < 50, body, (core.tensor(0), x))[1]

    out = core.jit(f)(ops.zeros((3,), dtype=core.float64)).asnumpy()
    assert np.all(out > 15) and np.all(out < 35)  # 50 fresh U(0,1) draws, not one draw repeated
    assert len(set(np.round(out, 12))) == 3


def test_while_loop_errors():
    x = rand(3)
    with pytest.raises(ValueError, match="scalar"):
        core.jit(lambda x: ops.while_loop(lambda c: c > 0, lambda c: c - 1.0, x))(x)
    with pytest.raises(ValueError, match="changes a carried value"):
        core.jit(
            lambda x: ops.while_loop(
                lambda c: ops.sum(c) > 0, lambda c: ops.astype(c, core.float32), x
            )
        )(x)
    with pytest.raises(ValueError, match="same structure"):
        core.jit(lambda x: ops.while_loop(lambda c: ops.sum(c[0]) > 0, lambda c: (c[0],), (x, x)))(
            x
        )
    with pytest.raises(TypeError, match="scan or fori_loop"):
        core.jit(
            core.grad(
                lambda v: ops.sum(ops.while_loop(lambda c: ops.sum(c) < 3.0, lambda c: c * 2.0, v))
            )
        )(core.tensor(np.array([1.0, 0.5])))
    p = core.Parameter(np.ones(3), name="p")

    def writes(x):
        def body(c):
            p.set_data(c)
            return c * 0.5

        return ops.while_loop(lambda c: ops.sum(c) > 1.0, body, x)

    with pytest.raises(RuntimeError, match="while_loop body"):
        core.jit(writes)(ops.ones((3,), dtype=core.float64))


def test_while_loop_eager_is_differentiable():
    def f(x):
        return ops.sum(ops.while_loop(lambda c: ops.sum(c) < 10.0, lambda c: c * 1.5, x))

    x = core.tensor(np.array([1.0, 0.5]))
    # the trip count (5) is locally constant: the derivative is 1.5^5 per entry
    np.testing.assert_allclose(core.grad(f)(x).asnumpy(), [1.5**5] * 2)


# ---- scan ---------------------------------------------------------------------------------------------
def rnn(h0, xs, w):
    """A tanh RNN: carry [H], xs [T, H] -> (last carry, all carries [T, H])."""

    def step(h, x):
        h = ops.tanh(h @ w + x)
        return h, h * 2.0

    return ops.scan(step, h0, xs)


def test_scan_matches_an_unrolled_loop_eagerly_and_under_jit():
    h0, xs, w = rand(3, seed=1), rand(6, 3, seed=2), rand(3, 3, seed=3) * 0.5
    h, hs = h0, []
    for t in range(6):
        h = ops.tanh(h @ w + xs[t])
        hs.append(h * 2.0)
    expected = (h, ops.stack(hs))
    assert_tree_close(rnn(h0, xs, w), expected)
    assert_tree_close(core.jit(rnn)(h0, xs, w), expected)
    # reverse and length-only forms
    rev = ops.scan(lambda c, x: (c + x, c), ops.zeros((3,), dtype=core.float64), xs, reverse=True)
    np.testing.assert_allclose(rev[0].asnumpy(), xs.asnumpy().sum(0))
    np.testing.assert_allclose(rev[1].asnumpy()[0], xs.asnumpy()[1:].sum(0))
    counted = core.jit(lambda c: ops.scan(lambda c, _: (c * 2.0, None), c, length=4))(
        core.tensor(1.0, dtype=core.float64)
    )
    assert float(counted[0]) == 16.0 and counted[1] is None


def test_scan_is_differentiable():
    h0, xs, w = rand(3, seed=1), rand(4, 3, seed=2), rand(3, 3, seed=3) * 0.5

    def loss(h0, xs, w):
        h, hs = rnn(h0, xs, w)
        return ops.sum(h**2) + ops.sum(hs * xs)

    def unrolled(h0, xs, w):
        h, total = h0, 0.0
        for t in range(xs.shape[0]):
            h = ops.tanh(h @ w + xs[t])
            total = total + ops.sum(h * 2.0 * xs[t])
        return ops.sum(h**2) + total

    assert gradcheck(loss, (h0, xs, w), order=1)
    assert gradcheck(lambda w: loss(h0, xs, w), (w,), order=2)
    g = core.grad(loss, grad_position=(0, 1, 2))
    assert_tree_close(
        g(h0, xs, w), core.grad(unrolled, grad_position=(0, 1, 2))(h0, xs, w), rtol=1e-12
    )
    assert_tree_close(core.jit(g)(h0, xs, w), g(h0, xs, w), rtol=1e-10)


def test_scan_shape_errors():
    with pytest.raises(ValueError, match="leading axes differ"):
        ops.scan(lambda c, x: (c, x), rand(2), (rand(3, 2), rand(4, 2)))
    with pytest.raises(ValueError, match="xs or length"):
        ops.scan(lambda c, x: (c, x), rand(2))


# ---- fori_loop -----------------------------------------------------------------------------------------
def test_fori_loop_eager_jit_and_grad():
    def f(x):
        return ops.fori_loop(0, 4, lambda i, v: ops.sin(v) * x + ops.astype(i, x.dtype), x)

    x = rand(5)
    v = x
    for i in range(4):
        v = ops.sin(v) * x + float(i)
    assert_tree_close(f(x), v)
    assert_tree_close(core.jit(f)(x), v)
    loss = lambda x: ops.sum(f(x))  # noqa: E731
    assert gradcheck(loss, (x,), order=1)
    assert_tree_close(core.jit(core.grad(loss))(x), core.grad(loss)(x))


# ---- long unrolled loops: the fusion pass caps expression depth -----------------------------------------
# small arrays: numexpr kernels; large ones: native C loops
@pytest.mark.parametrize(("steps", "size"), [(150, 8), (2000, 8), (150, 5000)])
def test_jit_of_a_long_unrolled_elementwise_loop(steps, size):
    """Regression: 150 steps crashed numexpr ("too many nested parentheses")."""

    def f(x):
        for _ in range(steps):
            x = x * 0.999 + 0.001
        return x

    x0 = np.linspace(-1.0, 1.0, size)
    out = core.jit(f)(core.tensor(x0)).asnumpy()
    # x_n = 1 + (x_0 - 1) * 0.999^n
    np.testing.assert_allclose(out, 1.0 + (x0 - 1.0) * 0.999**steps, rtol=1e-12, atol=1e-12)
    fused = [e for e in core.jit(f).lower(core.tensor(x0)).graph.eqns if e.prim.name == "fused"]
    assert len(fused) >= steps // 32  # split into several kernels of bounded depth
