"""``core.jit``: the API (functions, decorators, Cells), the cache and its keys, errors, random
draws, nesting with grad/vmap, and whole training steps compiled into one call."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import nn, ops
from diffsci.core.primitive import trace_stack

from ._helpers import assert_tree_close


def rand(*shape, seed=0, dtype=np.float64):
    return core.tensor(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


class TwoLayer(nn.Cell):
    """A small Cell of our own: Parameters as attributes, tanh MLP on the last axis."""

    def __init__(self, n_in=3, n_hidden=5, seed=0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.w1 = core.Parameter(rng.standard_normal((n_in, n_hidden)) * 0.5, name="w1")
        self.b1 = core.Parameter(np.zeros(n_hidden), name="b1")
        self.w2 = core.Parameter(rng.standard_normal((n_hidden, 1)) * 0.5, name="w2")

    def construct(self, x):
        return ops.tanh(x @ self.w1 + self.b1) @ self.w2


# ---- functions, decorators, Cells -----------------------------------------------------------------
def test_jit_function_and_decorators():
    def f(x, y):
        return ops.sin(x) * y + 1.0

    @core.jit
    def g(x, y):
        return ops.sin(x) * y + 1.0

    @core.jit(static_argnums=1)
    def h(x, n):
        return x**n

    x, y = rand(4, 3, seed=1), rand(4, 3, seed=2)
    assert_tree_close(core.jit(f)(x, y), f(x, y))
    assert_tree_close(g(x, y), f(x, y))
    assert_tree_close(h(x, 3), x**3)
    assert isinstance(g, core.jit(g).__class__) and core.jit(g) is g
    assert g.__name__ == "g"


def test_jit_cell_of_our_own_reads_parameters_as_inputs():
    net = TwoLayer()
    jnet = core.jit(net)
    x = rand(7, 3)
    assert_tree_close(jnet(x), net(x))
    # parameters are graph inputs, not constants baked in at trace time
    net.w2.set_data(net.w2 * 2.0)
    assert_tree_close(jnet(x), net(x))
    assert jnet.trace_count == 1
    text = jnet.lower(x).as_text()
    assert "const <" not in text  # no parameter value became a constant
    assert text.splitlines()[0].count("float64[") == 4  # x, w1, b1, w2


def test_jit_cell_from_core_nn_layers():
    net = nn.SequentialCell(nn.Dense(3, 8, activation="tanh"), nn.Dense(8, 2))
    jnet = core.jit(net)
    x = rand(5, 3, dtype=np.float32)
    assert_tree_close(jnet(x), net(x), rtol=1e-6, atol=1e-6)
    assert jnet(x).dtype == core.float32


def test_jit_method_of_a_cell():
    class Scaled(TwoLayer):
        @core.jit
        def fast(self, x):
            return self.construct(x) * 3.0

    net = Scaled()
    x = rand(4, 3)
    assert_tree_close(net.fast(x), net(x) * 3.0)
    assert_tree_close(Scaled.fast(net, x), net(x) * 3.0)
    assert Scaled.fast.trace_count == 1  # self is a static (hashable) argument


# ---- the cache -------------------------------------------------------------------------------------
def test_cache_per_shape_dtype_and_retrace_on_new_signature():
    f = core.jit(lambda x: ops.exp(x) * 2.0)
    for _ in range(3):
        f(rand(3, 4))
    assert f.trace_count == 1
    f(rand(3, 4, seed=5))  # new values, same signature
    assert f.trace_count == 1
    f(rand(4, 4))
    assert f.trace_count == 2
    f(rand(3, 4, dtype=np.float32))
    assert f.trace_count == 3
    out = f(rand(3, 4, dtype=np.float32))
    assert out.dtype == core.float32 and f.trace_count == 3
    f(core.tensor(np.arange(12).reshape(3, 4)))  # int64
    assert f.trace_count == 4


def test_static_argnums_and_argnames():
    calls = []

    def f(x, n, mode="sum"):
        calls.append(1)
        y = x**n
        return ops.sum(y) if mode == "sum" else ops.mean(y)

    jf = core.jit(f, static_argnums=(1,), static_argnames=("mode",))
    x = rand(6)
    assert_tree_close(jf(x, 2), f(x, 2))
    assert_tree_close(jf(x, 3), f(x, 3))
    assert jf.trace_count == 2
    jf(x, 2)
    assert jf.trace_count == 2
    assert_tree_close(jf(x, 2, mode="mean"), f(x, 2, mode="mean"))
    assert jf.trace_count == 3
    jf(x, 2, mode="mean")
    assert jf.trace_count == 3
    # a static argument named in static_argnames also when passed by position, and vice versa
    jf(x, 2, "mean")
    jf(x, n=2, mode="mean")
    assert_tree_close(jf(x, n=2, mode="mean"), f(x, 2, mode="mean"))


def test_static_python_values_keep_their_type_in_the_key():
    f = core.jit(lambda x, s: x * s)
    xi = core.tensor([1, 2, 3])
    assert f(xi, 2).dtype == (xi * 2).dtype
    assert f(xi, 2.0).dtype == (xi * 2.0).dtype  # 2 == 2.0 in Python, but not as a static arg
    assert f.trace_count == 2


def test_pytrees_and_keyword_tensors_in_and_out():
    def f(params, x, scale=None, extra=None):
        h = ops.tanh(x @ params["w"] + params["b"])
        return {"h": h * scale, "sum": ops.sum(h) + extra[0], "n": 3, "none": None}

    jf = core.jit(f)
    params = {"w": rand(3, 2, seed=1), "b": rand(2, seed=2)}
    x, scale = rand(4, 3, seed=3), rand(4, 2, seed=4)
    extra = [rand(seed=5), np.ones(2)]
    expected = f(params, x, scale=scale, extra=extra)
    got = jf(params, x, scale=scale, extra=extra)
    assert_tree_close(got, expected)
    assert jf.trace_count == 1
    jf(params, x, scale=rand(4, 2, seed=9), extra=extra)
    assert jf.trace_count == 1


def test_numpy_arrays_are_dynamic_arguments():
    jf = core.jit(lambda x: x * 2.0)
    a = np.arange(6.0).reshape(2, 3)
    assert_tree_close(jf(a), core.tensor(a) * 2.0)
    jf(a + 1.0)
    assert jf.trace_count == 1


def test_unhashable_static_argument_is_a_clear_error():
    jf = core.jit(lambda x, opts: x * opts["k"])
    with pytest.raises(TypeError, match="neither a Tensor nor hashable"):
        jf(rand(3), {"k": set()})


def test_parameter_shape_change_retraces():
    net = TwoLayer(n_hidden=4)
    jnet = core.jit(net)
    x = rand(2, 3)
    jnet(x)
    net.w1 = core.Parameter(np.ones((3, 6)), name="w1")
    net.b1 = core.Parameter(np.zeros(6), name="b1")
    net.w2 = core.Parameter(np.ones((6, 1)), name="w2")
    assert_tree_close(jnet(x), net(x))


_GLOBAL_NET = None
_GLOBAL_SCALE = 2.0


def _scaled_global_net(x):
    return _GLOBAL_NET(x) * _GLOBAL_SCALE


def test_rebinding_a_global_or_closure_variable_retraces():
    """A graph bakes in what the function reaches by name: a new Cell bound to the same global
    (a notebook re-running ``net = Net()``), a new constant, a rebound closure variable."""
    global _GLOBAL_NET, _GLOBAL_SCALE
    x = rand(2, 3)
    _GLOBAL_NET = TwoLayer(n_hidden=4)
    step = core.jit(_scaled_global_net)
    assert_tree_close(step(x), _GLOBAL_NET(x) * 2.0)
    step(x)
    assert step.trace_count == 1  # nothing changed: the cached graph
    _GLOBAL_NET = TwoLayer(n_hidden=5)
    assert_tree_close(step(x), _GLOBAL_NET(x) * 2.0)
    _GLOBAL_SCALE = 3.0
    assert_tree_close(step(x), _GLOBAL_NET(x) * 3.0)
    assert step.trace_count == 3
    _GLOBAL_SCALE = 6.0 / 2.0  # an equal number: still the same constant
    step(x)
    assert step.trace_count == 3

    offset = core.tensor(1.0, dtype="float64")

    def shifted(x):
        return x + offset

    jf = core.jit(shifted)
    assert_tree_close(jf(x), x + 1.0)
    offset = core.tensor(5.0, dtype="float64")  # read through the closure
    assert_tree_close(jf(x), x + 5.0)
    assert jf.trace_count == 2


def test_lower_gives_text_and_source():
    jf = core.jit(lambda x: ops.tanh(x) * 2.0)
    low = jf.lower(rand(3))
    assert "tanh" in low.as_text() and low.source.startswith("def compiled(")
    assert jf.trace_count == 1
    jf(rand(3))
    assert jf.trace_count == 1  # lower() filled the cache


# ---- errors ----------------------------------------------------------------------------------------
def test_python_control_flow_on_a_traced_value_says_what_to_do():
    def f(x):
        if ops.sum(x) > 0:
            return x
        return -x

    with pytest.raises(Exception, match=r"core\.ops\.cond") as info:
        core.jit(f)(rand(3))
    assert "symbolic" in str(info.value)
    for bad in (lambda x: float(ops.sum(x)), lambda x: ops.sum(x).item(), lambda x: x.asnumpy()):
        with pytest.raises(Exception, match="static"):
            core.jit(bad)(rand(3))
    assert not trace_stack()


def test_python_control_flow_on_static_values_is_fine():
    def f(x, flag):
        return x * 2.0 if flag else x - 1.0

    jf = core.jit(f, static_argnums=1)
    x = rand(3)
    assert_tree_close(jf(x, True), x * 2.0)
    assert_tree_close(jf(x, False), x - 1.0)
    # shapes are static too
    g = core.jit(lambda x: ops.sum(x) if x.shape[0] > 2 else x)
    assert g(rand(3)).shape == ()
    assert g(rand(2)).shape == (2,)


def test_errors_while_tracing_leave_no_state_behind():
    net = TwoLayer()

    def f(x):
        net(x)
        raise KeyError("boom")

    with pytest.raises(KeyError):
        core.jit(f)(rand(2, 3))
    assert not trace_stack()
    assert all(not p._subs for p in net.trainable_params())
    assert_tree_close(core.jit(net)(rand(2, 3)), net(rand(2, 3)))


def test_escaped_tracer_is_a_clear_error():
    leaked = []

    def f(x):
        y = ops.exp(x)
        leaked.append(y)
        return y

    core.jit(f)(rand(3))
    with pytest.raises(RuntimeError, match="escaped"):
        ops.sin(leaked[0] * 1.0)


# ---- random draws ----------------------------------------------------------------------------------
def test_random_draws_differ_between_calls():
    jf = core.jit(lambda x: ops.dropout(x, p=0.5))
    x = ops.ones((400,), dtype=core.float64)
    a, b = jf(x).asnumpy(), jf(x).asnumpy()
    assert jf.trace_count == 1
    for m in (a, b):
        assert set(np.unique(m)) == {0.0, 2.0}
        assert 100 < (m == 0).sum() < 300
    assert (a != b).any()
    core.set_seed(7)
    c = jf(x).asnumpy()
    core.set_seed(7)
    np.testing.assert_array_equal(jf(x).asnumpy(), c)  # repeatable with a seed


def test_random_permutation_and_randint_are_drawn_at_every_call():
    """A shuffle inside a compiled step must not be baked into the graph."""
    jf = core.jit(lambda x: (x[core.random.permutation(50)], core.random.randint(0, 1000, (20,))))
    x = core.arange(50, dtype="int64")
    (p1, r1), (p2, r2) = jf(x), jf(x)
    assert jf.trace_count == 1
    for p in (p1, p2):
        assert p.dtype == core.int64 and sorted(p.tolist()) == list(range(50))
    assert p1.tolist() != p2.tolist() and r1.tolist() != r2.tolist()
    core.set_seed(3)
    first = jf(x)[0].tolist()
    core.set_seed(3)
    assert jf(x)[0].tolist() == first


def test_dropout_cell_follows_training_mode_under_jit():
    drop = nn.Dropout(p=0.5)
    jd = core.jit(drop)
    x = ops.ones((300,), dtype=core.float32)
    assert (jd(x).asnumpy() == 0).any()
    drop.set_train(False)
    np.testing.assert_array_equal(jd(x).asnumpy(), x.asnumpy())
    drop.set_train(True)
    assert (jd(x).asnumpy() == 0).any()
    assert jd.trace_count == 2  # one graph per mode, both cached

    net = nn.SequentialCell(nn.Dense(3, 50), nn.Dropout(p=0.5))
    step = core.jit(lambda x: net(x) * 1.0)  # a function that reaches the Cells by closure
    xs = rand(2, 3, dtype=np.float32)
    assert (step(xs).asnumpy() == 0).any()
    net.set_train(False)
    assert_tree_close(step(xs), net(xs), rtol=1e-6, atol=1e-6)


# ---- nesting with grad and vmap ----------------------------------------------------------------------
def f_scalar(x):
    return ops.sum(ops.tanh(x) ** 3 + ops.sin(x) * x)


def test_jit_inside_grad_and_vmap_traces_inline():
    jf = core.jit(f_scalar)
    x = rand(5)
    assert_tree_close(core.grad(jf)(x), core.grad(f_scalar)(x))
    assert_tree_close(
        core.grad(core.grad(lambda v: jf(v * v)))(rand(seed=2)),
        core.grad(core.grad(lambda v: f_scalar(v * v)))(rand(seed=2)),
    )
    rows = rand(4, 5)
    assert_tree_close(core.vmap(jf)(rows), ops.stack([f_scalar(r) for r in rows]))
    assert jf.trace_count == 0  # always inlined into the outer transformation


def test_jit_of_grad_equals_grad():
    x = rand(6)
    assert_tree_close(core.jit(core.grad(f_scalar))(x), core.grad(f_scalar)(x))
    vg = core.value_and_grad(lambda x, y: ops.sum(ops.exp(x) * y), grad_position=(0, 1))
    y = rand(6, seed=1)
    assert_tree_close(core.jit(vg)(x, y), vg(x, y))
    h = core.hessian(f_scalar)
    assert_tree_close(core.jit(h)(x), h(x))


def test_jit_of_grad_with_weights_of_a_cell():
    net = TwoLayer()
    loss = lambda x: ops.mean(net(x) ** 2)  # noqa: E731
    vg = core.value_and_grad(loss, None, net.trainable_params())
    x = rand(8, 3)
    jvg = core.jit(vg)
    assert_tree_close(jvg(x), vg(x))
    assert len(jvg(x)[1]) == 3


def test_vmap_of_jit_and_jit_of_vmap():
    def per_example(v, w):
        return ops.tanh(v @ w) * ops.sum(v)

    w = rand(4, 2, seed=1)
    xs = rand(6, 4)
    expected = ops.stack([per_example(r, w) for r in xs])
    assert_tree_close(core.vmap(core.jit(per_example), in_axes=(0, None))(xs, w), expected)
    jv = core.jit(core.vmap(per_example, in_axes=(0, None)))
    assert_tree_close(jv(xs, w), expected)
    assert "matmul" in jv.lower(xs, w).as_text()


def test_pinn_second_input_derivatives_under_jit():
    f64 = core.float64
    net = nn.SequentialCell(
        nn.Dense(2, 16, activation="tanh", dtype=f64),
        nn.Dense(16, 16, activation="tanh", dtype=f64),
        nn.Dense(16, 1, dtype=f64),
    )

    def u(p):  # [2] -> []
        return net(p[None, :])[0, 0]

    def laplacian(points):  # [N, 2] -> [N]
        def one(p):
            hess = core.hessian(u)(p)  # [2, 2]
            return hess[0, 0] + hess[1, 1]

        return core.vmap(one)(points)

    pts = rand(6, 2)
    eager = laplacian(pts)
    assert_tree_close(core.jit(laplacian)(pts), eager, rtol=1e-10, atol=1e-12)
    # and against a finite-difference Laplacian of the same network
    h = 1e-4
    base = net(pts).asnumpy()[:, 0]
    fd = np.zeros(6)
    for k in range(2):
        e = np.zeros(2)
        e[k] = h
        plus = net(pts + core.tensor(e)).asnumpy()[:, 0]
        minus = net(pts - core.tensor(e)).asnumpy()[:, 0]
        fd += (plus - 2 * base + minus) / h**2
    np.testing.assert_allclose(eager.asnumpy(), fd, atol=1e-5)


# ---- whole training steps ---------------------------------------------------------------------------
def make_pinn_step(optimizer, seed=3):
    """A PINN training step: forward, second input derivatives, backward, optimizer update."""
    core.set_seed(seed)
    net = nn.SequentialCell(
        nn.Dense(2, 12, activation="tanh"), nn.Dense(12, 12, activation="tanh"), nn.Dense(12, 1)
    )
    opt = optimizer(net.trainable_params())

    def u(p):
        return net(p[None, :])[0, 0]

    def laplacian(p):  # [2] -> []
        hess = core.hessian(u)(p)
        return hess[0, 0] + hess[1, 1]

    def loss_fn(pts, bc_pts):
        residual = core.vmap(laplacian)(pts) + 1.0  # Poisson: -lap(u) = 1
        return ops.mean(residual**2) + ops.mean(net(bc_pts) ** 2)

    grad_fn = core.value_and_grad(loss_fn, None, opt.parameters)

    def train_step(pts, bc_pts):
        loss, grads = grad_fn(pts, bc_pts)
        opt(grads)
        return loss

    return net, train_step


@pytest.mark.parametrize("optimizer", ["adam", "sgd_set_data"])
def test_training_step_under_jit_is_one_call_and_matches_eager(optimizer):
    def make_opt(params):
        if optimizer == "adam":
            return nn.Adam(params, learning_rate=1e-2)

        class PlainSGD(nn.Cell):
            def __init__(self, params):
                super().__init__()
                self.parameters = tuple(params)

            def construct(self, grads):
                for p, g in zip(self.parameters, grads, strict=True):
                    p.set_data(p - 0.05 * g)

        return PlainSGD(params)

    net_e, step_e = make_pinn_step(make_opt)
    net_j, step_j = make_pinn_step(make_opt)
    step_j = core.jit(step_j)
    pts = rand(8, 2, seed=1, dtype=np.float32)
    bc = rand(4, 2, seed=2, dtype=np.float32)
    before = [p.asnumpy().copy() for p in net_j.trainable_params()]
    losses_e, losses_j = [], []
    for _ in range(4):
        losses_e.append(float(step_e(pts, bc)))
        losses_j.append(float(step_j(pts, bc)))
    assert step_j.trace_count == 1
    np.testing.assert_allclose(losses_j, losses_e, rtol=1e-5)
    assert losses_e[-1] < losses_e[0]
    for p_j, p_e, b in zip(net_j.trainable_params(), net_e.trainable_params(), before, strict=True):
        assert not np.allclose(p_j.asnumpy(), b)  # the Parameters really changed
        np.testing.assert_allclose(p_j.asnumpy(), p_e.asnumpy(), rtol=1e-4, atol=1e-6)
    # one compiled call: every updated Parameter is an output of the single graph
    graph = step_j.lower(pts, bc).graph
    n_params = len(net_j.trainable_params())
    n_state = 2 * n_params + 1 if optimizer == "adam" else 0  # moments and the step counter
    assert len(graph.outputs) == 1 + n_params + n_state


def test_parameter_written_inside_jit_and_read_back():
    p = core.Parameter(np.zeros(3), name="acc")

    @core.jit
    def accumulate(x):
        p.set_data(p + x)
        return p * 2.0  # reads the new value

    x = rand(3)
    out = accumulate(x)
    assert_tree_close(out, x * 2.0)
    accumulate(x)
    np.testing.assert_allclose(p.asnumpy(), 2 * x.asnumpy())
    assert accumulate.trace_count == 1
    with pytest.raises(ValueError, match="shape"):
        core.jit(lambda x: p.set_data(x))(rand(4))


def test_nested_jit_is_inlined_and_argless_functions_compile():
    inner = core.jit(lambda x: ops.exp(x) * 2.0)
    outer = core.jit(lambda x: inner(x) + inner(x * 3.0))
    x = rand(4)
    assert_tree_close(outer(x), ops.exp(x) * 2.0 + ops.exp(x * 3.0) * 2.0)
    assert inner.trace_count == 0 and outer.trace_count == 1
    const = core.jit(lambda: ops.ones((2,), dtype=core.float64) * 3.0)
    assert_tree_close(const(), ops.full((2,), 3.0, dtype=core.float64))


def test_parameter_assignment_inside_grad_inside_jit_is_an_error():
    p = core.Parameter(np.ones(3), name="p")

    def loss(x):
        p.set_data(p * 0.5)
        return ops.sum(p * x)

    with pytest.raises(RuntimeError, match=r"inside core\.grad"):
        core.jit(core.grad(loss, weights=[p]))(rand(3))
    with pytest.raises(RuntimeError, match="cannot assign"):
        core.jit(core.grad(lambda x: ops.sum(p.set_data(x * 2.0) * x)))(rand(3))
    np.testing.assert_array_equal(p.asnumpy(), np.ones(3))
    assert not p._subs


def test_cpu_fusion_policy_without_a_compiler_fuses_only_large_arrays():
    # numexpr's threaded set-up outweighs its gain on mid-sized CPU arrays (below ~1M
    # elements), where numpy ufuncs writing into reused buffers are as fast: they stay numpy
    from diffsci.core.backend import cc
    from diffsci.core.jit.fusion import fused

    with cc.disabled():
        fn = core.jit(lambda x: (x * 2.0 + 1.0) * x - 3.0)
        small = core.tensor(np.ones((64, 64), np.float32))
        large = core.tensor(np.ones((1024, 1024), np.float32))
        assert not any(e.prim is fused for e in fn.lower(small).graph.eqns)
        assert [e.prim for e in fn.lower(large).graph.eqns] == [fused]
        assert not fn.lower(large).graph.eqns[0].params["kernel"].native
        np.testing.assert_allclose(fn(large).asnumpy(), np.full((1024, 1024), 0.0, np.float32))
        np.testing.assert_allclose(fn(small).asnumpy(), np.zeros((64, 64), np.float32))


def test_cpu_fusion_policy_with_a_compiler_fuses_from_4096_elements():
    from diffsci.core.backend import cc
    from diffsci.core.jit.fusion import fused

    if not cc.available():
        pytest.skip("no working C compiler on this machine")
    fn = core.jit(lambda x: (x * 2.0 + 1.0) * x - 3.0)
    tiny = core.tensor(np.ones((8, 8), np.float32))
    mid = core.tensor(np.ones((64, 64), np.float32))
    # tiny arrays: a numexpr kernel for >= 3 ops (no compiler call for them)
    assert not any(e.params["kernel"].native for e in fn.lower(tiny).graph.eqns if e.prim is fused)
    (eqn,) = fn.lower(mid).graph.eqns
    assert eqn.prim is fused and eqn.params["kernel"].native
    np.testing.assert_allclose(fn(mid).asnumpy(), np.zeros((64, 64), np.float32))
