"""Staged loops (core.control.loops): ``scan``, ``fori_loop`` and ``while_loop`` as one equation with a
body traced once; values against plain Python loops, derivatives against finite differences
(float64), reverse mode's checkpointing memory, and the size of the IR of 10^4-step loops."""

import dataclasses
import typing

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops
from diffsci.core.ops import CheckpointPolicy
from diffsci.core.testing import gradcheck

from .jit._helpers import assert_tree_close, peak_bytes


def rand(*shape, seed=0):
    return core.tensor(np.random.default_rng(seed).standard_normal(shape))


def rnn_loss(h0, xs, w, reverse=False, checkpoint=None):
    """A tanh RNN over xs [T, H] with per-step outputs: scan with carry, xs and ys."""

    def step(h, x):
        h = ops.tanh(h @ w + x)
        return h, ops.sum(h * x)

    h, ys = ops.scan(step, h0, xs, reverse=reverse, checkpoint=checkpoint)
    weights = ops.arange(xs.shape[0], dtype=core.float64) * 0.1
    return ops.sum(h**2) + ops.sum(ys * weights)


def rnn_reference(h0, xs, w, reverse=False):
    """The same loss as a plain Python loop."""
    steps = range(xs.shape[0])
    h, ys = h0, [None] * xs.shape[0]
    for t in reversed(steps) if reverse else steps:
        h = ops.tanh(h @ w + xs[t])
        ys[t] = ops.sum(h * xs[t])
    weights = ops.arange(xs.shape[0], dtype=core.float64) * 0.1
    return ops.sum(h**2) + ops.sum(ops.stack(ys) * weights)


def eqn_names(graph):
    return [e.prim.name for e in graph.eqns]


# ---- values ---------------------------------------------------------------------------------------
@settings(max_examples=12, deadline=None)
@given(
    length=st.integers(0, 40),
    width=st.integers(1, 4),
    reverse=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_scan_values_match_a_python_loop(length, width, reverse, seed):
    rng = np.random.default_rng(seed)
    xs = rng.standard_normal((length, width))
    c0 = rng.standard_normal(width)

    def f(c, xs):
        return ops.scan(lambda c, x: (ops.sin(c) * 0.9 + x, c * x), c, xs, reverse=reverse)

    c, ys = c0, np.zeros((length, width))
    for t in reversed(range(length)) if reverse else range(length):
        c, ys[t] = np.sin(c) * 0.9 + xs[t], c * xs[t]
    for fn in (f, core.jit(f)):
        out_c, out_ys = fn(core.tensor(c0), core.tensor(xs))
        np.testing.assert_allclose(out_c.asnumpy(), c, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(out_ys.asnumpy(), ys, rtol=1e-13, atol=1e-13)


class State(typing.NamedTuple):
    u: core.Tensor
    t: core.Tensor


def test_pytree_carries_xs_and_ys_eager_jit_and_grad():
    def f(u0, forcing):
        def step(s, x):
            u = s.u + 0.1 * (ops.cos(s.u) + x["f"])
            return State(u, s.t + 0.1), {"energy": ops.sum(u**2), "u": u}

        s, ys = ops.scan(step, State(u0, core.tensor(0.0, dtype=core.float64)), {"f": forcing})
        return s, ys

    u0, forcing = rand(3, seed=1), rand(5, 3, seed=2)
    expected_u, energies = u0, []
    for k in range(5):
        expected_u = expected_u + 0.1 * (ops.cos(expected_u) + forcing[k])
        energies.append(ops.sum(expected_u**2))
    for fn in (f, core.jit(f)):
        s, ys = fn(u0, forcing)
        assert isinstance(s, State) and set(ys) == {"energy", "u"}
        assert_tree_close(s.u, expected_u)
        np.testing.assert_allclose(float(s.t), 0.5, rtol=1e-14)
        assert_tree_close(ys["energy"], ops.stack(energies))
    loss = lambda u0, forcing: ops.sum(f(u0, forcing)[1]["energy"])  # noqa: E731
    assert gradcheck(loss, (u0, forcing), order=1)
    g = core.grad(loss, grad_position=(0, 1))
    assert_tree_close(core.jit(g)(u0, forcing), g(u0, forcing), rtol=1e-12)


def test_registered_dataclass_carry():
    @core.tree.register_dataclass
    @dataclasses.dataclass(frozen=True)
    class Particle:
        x: core.Tensor
        v: core.Tensor

    def simulate(x0, k):
        def step(p, _):
            v = p.v - 0.01 * k * p.x
            return Particle(p.x + 0.01 * v, v), None

        return ops.scan(step, Particle(x0, ops.zeros_like(x0)), length=30)[0].x

    x0, k = rand(2, seed=3), core.tensor(2.0, dtype=core.float64)
    assert_tree_close(core.jit(simulate)(x0, k), simulate(x0, k))
    assert gradcheck(simulate, (x0, k), order=1)


def test_fori_loop_index_is_a_tensor_and_bounds_may_be_traced():
    def f(x, n):
        return ops.fori_loop(1, n, lambda i, v: v * 0.5 + ops.astype(i, v.dtype), x)

    x = rand(3)
    v = x
    for i in range(1, 6):
        v = v * 0.5 + float(i)
    assert_tree_close(f(x, 6), v)
    assert_tree_close(core.jit(f, static_argnums=1)(x, 6), v)
    # a traced upper bound: a while loop underneath
    jf = core.jit(f)
    assert_tree_close(jf(x, core.tensor(6)), v)
    assert "while" in eqn_names(jf.lower(x, core.tensor(6)).graph)


# ---- reverse mode ----------------------------------------------------------------------------------
POLICIES = [
    None,
    False,
    3,
    CheckpointPolicy(levels=3, min_length=2),
    CheckpointPolicy(budget=10, min_length=2),
]


@pytest.mark.parametrize("checkpoint", POLICIES, ids=repr)
@pytest.mark.parametrize("reverse", [False, True])
def test_gradients_match_the_python_loop_for_every_policy(checkpoint, reverse):
    h0, xs, w = rand(3, seed=1), rand(23, 3, seed=2), rand(3, 3, seed=3) * 0.5
    argnums = (0, 1, 2)
    expected = core.grad(rnn_reference, grad_position=argnums)(h0, xs, w, reverse)
    g = core.grad(lambda *a: rnn_loss(*a, reverse, checkpoint), grad_position=argnums)
    assert_tree_close(g(h0, xs, w), expected, rtol=1e-11, atol=1e-13)
    assert_tree_close(core.jit(g)(h0, xs, w), expected, rtol=1e-11, atol=1e-13)


def test_first_and_second_order_against_finite_differences():
    h0, xs, w = rand(2, seed=4), rand(20, 2, seed=5), rand(2, 2, seed=6) * 0.5
    assert gradcheck(rnn_loss, (h0, xs, w), order=1)
    assert gradcheck(lambda h0, w: rnn_loss(h0, xs, w, checkpoint=4), (h0, w), order=2)
    # the backward scan is itself a scan: grad of grad, also compiled
    gg = core.grad(lambda w: ops.sum(core.grad(rnn_loss)(h0, xs, w) ** 2))
    ref = core.grad(lambda w: ops.sum(core.grad(rnn_reference)(h0, xs, w) ** 2))
    assert_tree_close(gg(w), ref(w), rtol=1e-10)
    assert_tree_close(core.jit(gg)(w), ref(w), rtol=1e-10)
    assert_tree_close(core.hessian(rnn_loss, 2)(h0, xs, w), core.hessian(rnn_reference, 2)(h0, xs, w),
                      rtol=1e-10)  # fmt: skip


def test_parameters_read_inside_the_body_get_gradients():
    p = core.Parameter(np.array([0.3, -0.2]), name="p")

    def loss(x):
        return ops.sum(ops.fori_loop(0, 30, lambda i, v: ops.sin(v * p) + x, x) ** 2)

    x = rand(2, seed=7)
    vg = core.value_and_grad(loss, grad_position=0, weights=[p])
    value, (gx, (gp,)) = vg(x)

    def unrolled(x, pv):
        v = x
        for _ in range(30):
            v = ops.sin(v * pv) + x
        return ops.sum(v**2)

    pv = core.tensor(p.asnumpy())
    rx, rp = core.grad(unrolled, grad_position=(0, 1))(x, pv)
    assert_tree_close((gx, gp), (rx, rp), rtol=1e-11)
    jvalue, (jgx, (jgp,)) = core.jit(vg)(x)
    assert_tree_close((jgx, jgp), (rx, rp), rtol=1e-11)
    assert_tree_close((value, jvalue), (unrolled(x, pv), unrolled(x, pv)), rtol=1e-12)


def test_integer_carries_and_unused_outputs():
    def f(x):
        (n, v), _unused = ops.scan(lambda c, _: ((c[0] + 1, c[1] * 1.1), c[1]), (core.tensor(0), x),
                              length=25)  # fmt: skip
        return ops.sum(v), n

    x = rand(3, seed=8)
    (value, n), g = core.value_and_grad(f, has_aux=True)(x)
    assert int(n) == 25
    np.testing.assert_allclose(float(value), float(ops.sum(x)) * 1.1**25, rtol=1e-13)
    np.testing.assert_allclose(g.asnumpy(), np.full(3, 1.1**25), rtol=1e-13)


def test_nested_scans_differentiate():
    def f(x, w):
        def outer(c, _):
            inner = ops.scan(lambda d, _: (ops.tanh(d * w) + 0.1, None), c, length=7)[0]
            return inner * 0.5 + c, None

        return ops.sum(ops.scan(outer, x, length=20)[0])

    def ref(x, w):
        for _ in range(20):
            d = x
            for _ in range(7):
                d = ops.tanh(d * w) + 0.1
            x = d * 0.5 + x
        return ops.sum(x)

    x, w = rand(2, seed=9), core.tensor(0.7, dtype=core.float64)
    g = core.grad(f, grad_position=(0, 1))
    expected = core.grad(ref, grad_position=(0, 1))(x, w)
    assert_tree_close(g(x, w), expected, rtol=1e-11)
    assert_tree_close(core.jit(g)(x, w), expected, rtol=1e-11)


# ---- forward mode and vmap ------------------------------------------------------------------------
def test_jvp_and_jacfwd_carry_the_tangent_along():
    h0, xs, w = rand(3, seed=1), rand(9, 3, seed=2), rand(3, 3, seed=3) * 0.5
    tangents = (rand(3, seed=4), rand(9, 3, seed=5), rand(3, 3, seed=6))
    expected = core.jvp(rnn_reference, (h0, xs, w), tangents)
    assert_tree_close(core.jvp(rnn_loss, (h0, xs, w), tangents), expected, rtol=1e-12)
    jitted = core.jit(lambda *p: core.jvp(rnn_loss, p, tangents))
    assert_tree_close(jitted(h0, xs, w), expected, rtol=1e-12)
    assert_tree_close(core.jacfwd(rnn_loss, 2)(h0, xs, w), core.jacrev(rnn_loss, 2)(h0, xs, w),
                      rtol=1e-11)  # fmt: skip


def test_vmap_over_carries_xs_and_closed_over_values():
    h0s, xs, w = rand(4, 3, seed=1), rand(6, 3, seed=2), rand(3, 3, seed=3) * 0.5
    ws = ops.stack([w, w * 0.5, -w, w.T])
    per_example = [rnn_reference(h0s[b], xs, ws[b]) for b in range(4)]
    batched = core.vmap(rnn_loss, in_axes=(0, None, 0))
    assert_tree_close(batched(h0s, xs, ws), ops.stack(per_example), rtol=1e-12)
    assert_tree_close(core.jit(batched)(h0s, xs, ws), ops.stack(per_example), rtol=1e-12)
    # xs batched on axis 1, gradients per example
    xs_b = ops.stack([xs, xs * 2.0], axis=1)  # [T, 2, 3]
    g = core.vmap(core.grad(rnn_loss, grad_position=1), in_axes=(None, 1, None))(h0s[0], xs_b, w)
    ref = [core.grad(rnn_reference, grad_position=1)(h0s[0], xs_b[:, b], w) for b in range(2)]
    assert_tree_close(g, ops.stack(ref), rtol=1e-12)


def test_while_loop_jvp_and_vmap():
    def f(v):
        return ops.while_loop(lambda c: ops.sum(c) < 10.0, lambda c: ops.sin(c) + c * 1.5, v)

    def ref(v):
        while float(ops.sum(v)) < 10.0:
            v = ops.sin(v) + v * 1.5
        return v

    x = core.tensor(np.array([0.5, 2.0, 1.0]))
    t = core.tensor(np.array([1.0, -1.0, 0.5]))
    expected = core.jvp(ref, (x,), (t,))
    assert_tree_close(core.jit(lambda x: core.jvp(f, (x,), (t,)))(x), expected)
    assert_tree_close(core.jacfwd(core.jit(f))(x), core.jacfwd(ref)(x))
    # vmap: each example stops after its own number of steps
    counter = lambda v: ops.while_loop(  # noqa: E731
        lambda c: c[1] < 10.0, lambda c: (c[0] + 1, c[1] * 1.5 + 1.0), (core.tensor(0), v)
    )
    xs = core.tensor(np.array([0.5, 2.0, 9.5]))
    for fn in (core.vmap(counter), core.jit(core.vmap(counter))):
        n, v = fn(xs)
        ns, vs = zip(*[counter(x) for x in xs], strict=True)
        assert n.asnumpy().tolist() == [int(k) for k in ns] and len(set(n.asnumpy())) == 3
        assert_tree_close(v, ops.stack(vs))


def test_while_loop_reverse_mode_under_jit_names_the_alternatives():
    f = lambda v: ops.sum(ops.while_loop(lambda c: ops.sum(c) < 3.0, lambda c: c * 2.0, v))  # noqa: E731
    with pytest.raises(TypeError, match="fori_loop") as err:
        core.jit(core.grad(f))(core.tensor(np.array([1.0, 0.5])))
    assert "forward mode" in str(err.value)


# ---- a 10^4-step loop: a small graph, bounded memory -------------------------------------------------
N_STEPS = 10_000


def decay_loss(x, w, checkpoint=None):
    def step(c, _):
        return c + 0.001 * ops.sin(c * w), None

    return ops.sum(ops.scan(step, x, length=N_STEPS, checkpoint=checkpoint)[0] ** 2)


def test_the_ir_of_a_long_loop_and_of_its_gradient_is_small():
    x, w = rand(8), core.tensor(0.9, dtype=core.float64)
    fwd = core.jit(decay_loss).lower(x, w).graph
    bwd = core.jit(core.grad(decay_loss, grad_position=(0, 1))).lower(x, w).graph
    assert eqn_names(fwd).count("scan") == 1 and len(fwd.eqns) < 10
    assert eqn_names(bwd).count("scan") == 2 and len(bwd.eqns) < 30
    fori = core.jit(lambda x: ops.fori_loop(0, N_STEPS, lambda i, v: v * 0.5 + 1.0, x))
    assert eqn_names(fori.lower(x).graph).count("scan") == 1
    # the loop bodies are small too (checkpointed: a segment's forward and backward scans)
    for e in bwd.eqns:
        if e.prim.name == "scan":
            assert len(e.params["body"].graph.eqns) < 60


def test_reverse_mode_memory_of_a_long_loop_is_about_sqrt_n_carries():
    n = 500  # float64 carry: 4 kB; 10^4 stored carries would take 40 MB
    x, w = core.tensor(np.linspace(-1.0, 1.0, n)), core.tensor(0.9, dtype=core.float64)
    carry_bytes = n * 8
    g = core.jit(core.grad(decay_loss, grad_position=(0, 1)))
    g(x, w)  # compile outside the measurement
    peak, (gx, gw) = peak_bytes(lambda: g(x, w))
    # default policy: ~100 segment starts + ~100 carries of one segment recomputed
    assert peak < 300 * carry_bytes, peak / carry_bytes
    # exact gradient of the decay map, by forward-mode derivatives along the loop (numpy)
    c, dc_dw = np.linspace(-1.0, 1.0, n), np.zeros(n)
    dc_dx = np.ones(n)
    for _ in range(N_STEPS):
        s, co = np.sin(c * 0.9), np.cos(c * 0.9)
        dc_dw = dc_dw + 0.001 * co * (dc_dw * 0.9 + c)
        dc_dx = dc_dx * (1 + 0.001 * co * 0.9)
        c = c + 0.001 * s
    np.testing.assert_allclose(gx.asnumpy(), 2 * c * dc_dx, rtol=1e-9)
    np.testing.assert_allclose(float(gw), np.sum(2 * c * dc_dw), rtol=1e-9)


def test_checkpoint_policy_plans_and_errors():
    assert CheckpointPolicy().plan(10_000)[0] == 100
    assert CheckpointPolicy(levels=3).plan(10_000)[0] == 455  # ceil(10^4 / 22)
    assert CheckpointPolicy(every=50).plan(10_000)[0] == 50
    assert CheckpointPolicy(levels=1).plan(10_000) is None
    # a budget of stored carries picks the fewest levels that fit: 4 * 10 <= 60 < 3 * 22
    assert CheckpointPolicy(budget=60).plan(10_000) == (1000, CheckpointPolicy(levels=3))
    assert CheckpointPolicy(budget=10_000).plan(10_000) is None
    with pytest.raises(ValueError, match="at least about 27"):
        CheckpointPolicy(budget=20).plan(10_000)
    assert CheckpointPolicy().plan(10) is None  # short loops store every carry
    with pytest.raises(ValueError, match="levels"):
        CheckpointPolicy(levels=0)
    with pytest.raises(TypeError, match="checkpoint"):
        ops.scan(lambda c, x: (c, x), rand(2), rand(3, 2), checkpoint="sqrt")


def test_errors_name_the_problem():
    x = rand(3)
    with pytest.raises(ValueError, match="carried value"):
        core.jit(lambda x: ops.scan(lambda c, _: (ops.astype(c, core.float32), None), x, length=3))(
            x
        )
    with pytest.raises(ValueError, match="structure"):
        core.jit(lambda x: ops.scan(lambda c, _: ((c, c), None), x, length=3))(x)
    p = core.Parameter(np.ones(3), name="p")

    def writes(x):
        def body(i, v):
            p.set_data(v)
            return v

        return ops.fori_loop(0, 3, body, x)

    with pytest.raises(RuntimeError, match="fori_loop"):
        core.jit(writes)(x)


def test_random_draws_in_a_jitted_body_are_fresh_each_step():
    def f(x):
        return ops.fori_loop(
            0, 50, lambda i, v: v + core.random.uniform((3,), dtype=core.float64), x
        )

    out = core.jit(f)(ops.zeros((3,), dtype=core.float64)).asnumpy()
    assert np.all(out > 15) and np.all(out < 35)  # 50 fresh U(0,1) draws, not one repeated


def test_custom_rules_inside_a_loop_body_are_kept():
    """The body is differentiated after tracing: its custom_vjp/custom_jvp calls must stay calls
    (a rule that doubles the true derivative makes the difference visible)."""

    @core.custom_vjp
    def sin_vjp(x):
        return ops.sin(x)

    sin_vjp.defvjp(lambda x: (ops.sin(x), x), lambda x, g: (2.0 * g * ops.cos(x),))

    @core.custom_jvp
    def sin_jvp(x):
        return ops.sin(x)

    sin_jvp.defjvp(
        lambda primals, tangents: (ops.sin(primals[0]), 2.0 * ops.cos(primals[0]) * tangents[0])
    )

    x = core.tensor(np.array([0.3, 1.2]))

    def doubled(x, steps=6):  # the derivative of sin applied `steps` times, each factor doubled
        d, c = np.ones(2), x.asnumpy()
        for _ in range(steps):
            d, c = d * 2.0 * np.cos(c), np.sin(c)
        return d

    for fn in (sin_vjp, sin_jvp):
        loss = lambda x, fn=fn: ops.sum(ops.fori_loop(0, 6, lambda i, c: fn(c), x))  # noqa: E731
        np.testing.assert_allclose(core.grad(loss)(x).asnumpy(), doubled(x), rtol=1e-13)
        np.testing.assert_allclose(core.jit(core.grad(loss))(x).asnumpy(), doubled(x), rtol=1e-13)
    f = lambda x: ops.fori_loop(0, 6, lambda i, c: sin_jvp(c), x)  # noqa: E731
    _, t = core.jvp(f, (x,), (ops.ones_like(x),))
    np.testing.assert_allclose(t.asnumpy(), doubled(x), rtol=1e-13)
