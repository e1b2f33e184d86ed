"""``core.recompute`` (activation checkpointing): identical gradients, a measured cut of the
peak memory of a gradient (eagerly and under jit), ``Cell.recompute()``, Parameters read
inside a recomputed block, higher-order derivatives through it, and its trace in the IR."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import nn, ops
from diffsci.core.testing import gradcheck

from ._helpers import assert_tree_close, peak_bytes

# An 8-block residual MLP with a 4x expansion (the transformer MLP shape): each block stores
# [B, H] activations for its backward pass, while only its [B, D] input is kept with recompute.
D, H, B, L = 32, 128, 256, 8


def make_weights(seed=0):
    rng = np.random.default_rng(seed)
    w1 = [
        core.Parameter(rng.standard_normal((D, H)) / np.sqrt(D), name=f"w1_{i}") for i in range(L)
    ]
    w2 = [
        core.Parameter(rng.standard_normal((H, D)) / np.sqrt(H), name=f"w2_{i}") for i in range(L)
    ]
    return w1, w2


W1, W2 = make_weights()


def block(i):
    def f(h):  # [B, D] -> [B, D]
        return h + ops.tanh(h @ W1[i]) @ W2[i]

    f.__name__ = f"block{i}"
    return f


def loss(x, use_recompute):
    h = x
    for i in range(L):
        h = (core.recompute(block(i)) if use_recompute else block(i))(h)
    return ops.sum(h**2)


def grad_fn(use_recompute):
    return core.grad(lambda x: loss(x, use_recompute), grad_position=0, weights=W1 + W2)


X = core.tensor(np.random.default_rng(1).standard_normal((B, D)))


def test_recompute_halves_the_peak_of_an_eager_gradient():
    base, g_plain = peak_bytes(lambda: grad_fn(False)(X))
    cut, g_rc = peak_bytes(lambda: grad_fn(True)(X))
    assert_tree_close(g_rc, g_plain, rtol=0, atol=0)  # identical, not just close
    # the plain tape holds about 2 [B, H] arrays per block (16 in all): at least that much
    assert base > 2 * L * B * H * 8 * 0.9
    assert cut <= 0.5 * base, f"recompute peak {cut} vs {base}"


def test_recompute_halves_the_peak_of_a_jitted_gradient():
    plain, rc = core.jit(grad_fn(False)), core.jit(grad_fn(True))
    plain(X), rc(X)  # compile outside the measurement
    base, g_plain = peak_bytes(lambda: plain(X))
    cut, g_rc = peak_bytes(lambda: rc(X))
    assert_tree_close(g_rc, g_plain, rtol=1e-12, atol=1e-12)
    assert_tree_close(g_plain, grad_fn(False)(X), rtol=1e-12, atol=1e-12)
    assert cut <= 0.5 * base, f"recompute peak {cut} vs {base}"
    # the recomputed forward is visible in the IR, tagged, and not merged away by CSE
    text = rc.lower(X).as_text()
    assert text.count("# recompute") >= L * 2
    assert plain.lower(X).as_text().count("# recompute") == 0


def test_recompute_outside_grad_is_a_plain_call():
    f = core.recompute(block(0))
    x = X[:4]
    assert_tree_close(f(x), block(0)(x))
    assert core.jit(f).lower(x).as_text().count("# recompute") == 0


def test_recompute_gradients_of_inputs_and_parameters_match_finite_differences():
    w = core.Parameter(np.random.default_rng(3).standard_normal((3, 3)) * 0.5, name="w")

    @core.recompute
    def blk(x, y):  # reads a Parameter and two inputs
        return ops.tanh(x @ w) * y

    x, y = (
        core.tensor(np.random.default_rng(4).standard_normal((2, 3))),
        core.tensor(np.random.default_rng(5).standard_normal((2, 3))),
    )
    assert gradcheck(lambda x, y: ops.sum(blk(x, y) ** 2), (x, y), order=1)
    plain = lambda x, y: ops.sum((ops.tanh(x @ w) * y) ** 2)  # noqa: E731
    rc = lambda x, y: ops.sum(blk(x, y) ** 2)  # noqa: E731
    g_plain = core.grad(plain, grad_position=(0, 1), weights=[w])(x, y)
    g_rc = core.grad(rc, grad_position=(0, 1), weights=[w])(x, y)
    assert_tree_close(g_rc, g_plain)
    assert_tree_close(core.jit(core.grad(rc, grad_position=(0, 1), weights=[w]))(x, y), g_plain)


def test_recompute_parameters_as_arguments_and_keyword_arguments():
    w = core.Parameter(np.random.default_rng(6).standard_normal((3, 3)) * 0.5, name="w")

    def fn(x, v, scale=1.0):  # v is w passed positionally, w is also read by closure
        return ops.tanh(x @ v) * scale + ops.sum(w * x[0])

    x = core.tensor(np.random.default_rng(7).standard_normal((2, 3)))
    rc = core.recompute(fn)
    for kw in ({}, {"scale": 3.0}):
        plain = core.grad(
            lambda x, kw=kw: ops.sum(fn(x, w, **kw) ** 2), grad_position=0, weights=[w]
        )
        cut = core.grad(lambda x, kw=kw: ops.sum(rc(x, w, **kw) ** 2), grad_position=0, weights=[w])
        assert_tree_close(cut(x), plain(x))
        assert_tree_close(core.jit(cut)(x), plain(x))
    with pytest.raises(TypeError, match="positionally"):
        core.grad(lambda x: ops.sum(rc(x, v=w)))(x)


def test_recompute_higher_order():
    blk = core.recompute(lambda x: ops.sin(x) * ops.exp(x * 0.5))
    x = core.tensor(np.array([0.3, -0.7, 1.1]))
    # grad of grad: the block's derivative is recomputed under the outer trace
    assert gradcheck(lambda x: ops.sum(blk(x)), (x,), order=2)

    # an outer gradient of a function using both the inner value and the inner gradient: the
    # forward value of a recomputed block must stay visible to the outer differentiation
    def inner_uses_value(v, fn):
        val, g = core.value_and_grad(lambda y: ops.sum(fn(y)))(v)
        return val + ops.sum(g**2)

    plain_fn = lambda x: ops.sin(x) * ops.exp(x * 0.5)  # noqa: E731
    assert_tree_close(
        core.grad(lambda v: inner_uses_value(v, blk))(x),
        core.grad(lambda v: inner_uses_value(v, plain_fn))(x),
    )


def test_cell_recompute_and_pinn_style_loss():
    f64 = core.float64
    core.set_seed(0)
    net_a = nn.SequentialCell(
        nn.Dense(2, 16, activation="tanh", dtype=f64),
        nn.Dense(16, 16, activation="tanh", dtype=f64),
        nn.Dense(16, 1, dtype=f64),
    )
    core.set_seed(0)
    net_b = nn.SequentialCell(
        nn.Dense(2, 16, activation="tanh", dtype=f64),
        nn.Dense(16, 16, activation="tanh", dtype=f64),
        nn.Dense(16, 1, dtype=f64),
    )
    for cell in net_b.cells():
        assert cell.recompute() is cell
    pts = core.tensor(np.random.default_rng(2).standard_normal((5, 2)))

    def pinn_loss(net):
        def u(p):
            return net(p[None, :])[0, 0]

        def lap(p):
            hess = core.hessian(u)(p)
            return hess[0, 0] + hess[1, 1]

        return lambda pts: ops.mean((core.vmap(lap)(pts) + 1.0) ** 2) + ops.mean(net(pts) ** 2)

    ga = core.value_and_grad(pinn_loss(net_a), None, net_a.trainable_params())(pts)
    gb = core.value_and_grad(pinn_loss(net_b), None, net_b.trainable_params())(pts)
    assert_tree_close(gb, ga, rtol=1e-10, atol=1e-12)
    gj = core.jit(core.value_and_grad(pinn_loss(net_b), None, net_b.trainable_params()))(pts)
    assert_tree_close(gj, ga, rtol=1e-9, atol=1e-12)


def test_recompute_with_several_and_integer_outputs():
    @core.recompute
    def two(x):
        return ops.sin(x), ops.exp(x), ops.argmax(x)

    def loss2(x):
        a, b, idx = two(x)
        return ops.sum(a * b) + ops.sum(b) * 0.5 + ops.astype(idx, x.dtype) * 0.0

    x = core.tensor(np.array([0.1, 0.4, -0.3]))
    assert gradcheck(loss2, (x,), order=1)
    assert two(x)[2].dtype == core.int64


def test_recompute_under_no_grad_is_a_plain_call():
    blk = core.recompute(lambda x: x * 2.0)
    x = core.tensor(np.array([1.0, 2.0]))
    with core.no_grad():
        out = blk(x)
    assert_tree_close(out, x * 2.0)


@pytest.mark.parametrize("use_jit", [False, True])
def test_recomputed_cell_in_a_training_step(use_jit):
    core.set_seed(1)
    net = nn.SequentialCell(nn.Dense(3, 8, activation="tanh"), nn.Dense(8, 1))
    net.cells()[0].recompute()
    core.set_seed(1)
    ref = nn.SequentialCell(nn.Dense(3, 8, activation="tanh"), nn.Dense(8, 1))
    steps = []
    for model in (net, ref):
        opt = nn.SGD(model.trainable_params(), learning_rate=0.1)
        vg = core.value_and_grad(lambda x, m=model: ops.mean(m(x) ** 2), None, opt.parameters)

        def step(x, vg=vg, opt=opt):
            value, grads = vg(x)
            opt(grads)
            return value

        steps.append(core.jit(step) if use_jit else step)
    x = core.tensor(np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32))
    for _ in range(3):
        assert_tree_close(steps[0](x), steps[1](x), rtol=1e-6, atol=1e-7)
    for p, q in zip(net.trainable_params(), ref.trainable_params(), strict=True):
        np.testing.assert_allclose(p.asnumpy(), q.asnumpy(), rtol=1e-6, atol=1e-7)


def test_recompute_replays_the_random_draws_of_the_forward_pass():
    # a dropout mask drawn in the forward pass must be the one the backward re-run uses
    x = core.tensor(np.random.default_rng(8).standard_normal(64))
    c = core.tensor(np.random.default_rng(9).standard_normal(64))

    def blk(v):
        return ops.dropout(ops.sin(v), p=0.5) * 3.0 + core.random.normal(v.shape, dtype=v.dtype)

    inner = core.recompute(blk)

    def nested(v):  # a recomputed block inside a recomputed block
        return inner(v) * ops.cos(v)

    variants = {
        "plain": lambda v: blk(v),
        "recompute": core.recompute(blk),
        "nested": lambda v: core.recompute(nested)(v) / ops.cos(v),
    }
    results = {}
    for name, f in variants.items():
        vg = core.value_and_grad(lambda v, f=f: ops.sum(f(v) * c))
        core.set_seed(11)
        eager = vg(x)
        jitted = core.jit(vg)
        jitted.lower(x)
        core.set_seed(11)
        assert_tree_close(jitted(x), eager, rtol=1e-12, atol=1e-12)
        results[name] = eager
    assert (results["plain"][1].asnumpy() == 0).sum() > 10  # dropped entries: zero gradient
    assert_tree_close(results["recompute"], results["plain"], rtol=0, atol=0)
    assert_tree_close(results["nested"], results["plain"], rtol=1e-12, atol=1e-12)


def test_recompute_of_a_nondeterministic_block_is_an_error():
    calls = []

    @core.recompute
    def bad(v):  # draws another shape on every call: the re-run cannot replay the forward
        calls.append(1)
        return v * core.random.normal((len(calls),), dtype=v.dtype)[0]

    with pytest.raises(RuntimeError, match="other random numbers"):
        core.grad(lambda v: ops.sum(bad(v)))(core.tensor(np.array([1.0, 2.0])))
