"""Optimizers against their published update rules (numpy references), convergence on the
Rosenbrock function, complex parameters, parameter groups, state naming and traceability."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from diffsci import core
from diffsci.core import Parameter, nn, ops
from diffsci.core.primitive import ShapedArray, Trace, Tracer, pop_trace, push_trace
from diffsci.core.tensor import _assign_hook


class Affine(nn.Cell):
    """A small Cell of our own (independent of nn.Dense): ``x @ w + b``."""

    def __init__(self, n_in=3, n_out=2, dtype=core.float64, seed=0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.w = Parameter(rng.standard_normal((n_in, n_out)), name="w", dtype=dtype)
        self.b = Parameter(rng.standard_normal(n_out), name="b", dtype=dtype)

    def construct(self, x):
        return x @ self.w + self.b


def _grad_sequence(shapes, steps, seed=1):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s) for s in shapes] for _ in range(steps)]


def _run(opt, grad_seq, dtype=core.float64):
    for grads in grad_seq:
        opt(tuple(core.tensor(g, dtype=dtype) for g in grads))
    return [p.asnumpy() for p in opt.parameters]


# ---- numpy references (the published rules) ---------------------------------------------------
def _sgd_ref(params, grad_seq, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    params = [p.copy() for p in params]
    bufs = [None] * len(params)
    for grads in grad_seq:
        for i, (p, g) in enumerate(zip(params, grads, strict=True)):
            g = g + weight_decay * p
            if momentum:
                bufs[i] = g.copy() if bufs[i] is None else momentum * bufs[i] + (1 - dampening) * g
                g = g + momentum * bufs[i] if nesterov else bufs[i]
            params[i] = p - lr * g
    return params


def _adam_ref(params, grad_seq, lr, beta1, beta2, eps, weight_decay=0.0, decoupled=False):
    """Kingma & Ba Algorithm 1; L2 in the gradient (Adam) or decoupled decay (AdamW)."""
    params = [p.copy() for p in params]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    for t, grads in enumerate(grad_seq, start=1):
        for i, (p, g) in enumerate(zip(params, grads, strict=True)):
            if decoupled:
                p = p * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * p
            m[i] = beta1 * m[i] + (1 - beta1) * g
            v[i] = beta2 * v[i] + (1 - beta2) * g * g
            m_hat = m[i] / (1 - beta1**t)
            v_hat = v[i] / (1 - beta2**t)
            params[i] = p - lr * m_hat / (np.sqrt(v_hat) + eps)
    return params


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(learning_rate=0.1),
        dict(learning_rate=0.05, momentum=0.9),
        dict(learning_rate=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01),
        dict(learning_rate=0.05, momentum=0.8, nesterov=True, weight_decay=0.02),
    ],
)
def test_sgd_matches_update_rule(kwargs):
    net = Affine()
    start = [p.asnumpy().copy() for p in net.trainable_params()]
    seq = _grad_sequence([p.shape for p in start], steps=5)
    opt = nn.SGD(net.trainable_params(), **kwargs)
    got = _run(opt, seq)
    ref_kwargs = {k: v for k, v in kwargs.items() if k != "learning_rate"}
    want = _sgd_ref(start, seq, kwargs["learning_rate"], **ref_kwargs)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-14)
    assert int(opt.global_step) == 5


@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_adam_matches_kingma_ba_with_bias_correction(weight_decay):
    net = Affine()
    start = [p.asnumpy().copy() for p in net.trainable_params()]
    seq = _grad_sequence([p.shape for p in start], steps=6)
    opt = nn.Adam(
        net.trainable_params(),
        learning_rate=0.01,
        beta1=0.8,
        beta2=0.95,
        eps=1e-6,
        weight_decay=weight_decay,
    )
    got = _run(opt, seq)
    want = _adam_ref(start, seq, 0.01, 0.8, 0.95, 1e-6, weight_decay)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    # the first step of bias-corrected Adam moves each coordinate by about lr
    net2 = Affine()
    p0 = net2.w.asnumpy().copy()
    opt2 = nn.Adam(net2.trainable_params(), learning_rate=0.01)
    _run(opt2, seq[:1])
    np.testing.assert_allclose(np.abs(net2.w.asnumpy() - p0), 0.01, rtol=1e-4)


def test_adamw_decoupled_weight_decay():
    net = Affine()
    start = [p.asnumpy().copy() for p in net.trainable_params()]
    seq = _grad_sequence([p.shape for p in start], steps=6)
    opt = nn.AdamW(net.trainable_params(), learning_rate=0.02, weight_decay=0.3)
    got = _run(opt, seq)
    want = _adam_ref(start, seq, 0.02, 0.9, 0.999, 1e-8, 0.3, decoupled=True)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    # decoupled decay differs from L2-in-gradient Adam
    l2 = _adam_ref(start, seq, 0.02, 0.9, 0.999, 1e-8, 0.3, decoupled=False)
    assert not np.allclose(got[0], l2[0], rtol=1e-6)


@settings(max_examples=15, deadline=None)
@given(
    shapes=st.lists(
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4), min_size=1, max_size=3
    ),
    adam=st.booleans(),
    weight_decay=st.sampled_from([0.0, 0.05]),
)
def test_update_rules_for_any_shapes(shapes, adam, weight_decay):
    rng = np.random.default_rng(0)
    start = [rng.standard_normal(s) for s in shapes]
    params = [Parameter(v, name=f"p{i}") for i, v in enumerate(start)]
    seq = _grad_sequence(shapes, steps=3)
    if adam:
        opt = nn.AdamW(params, learning_rate=0.01, weight_decay=weight_decay)
        want = _adam_ref(start, seq, 0.01, 0.9, 0.999, 1e-8, weight_decay, decoupled=True)
    else:
        opt = nn.SGD(params, learning_rate=0.1, momentum=0.9, weight_decay=weight_decay)
        want = _sgd_ref(start, seq, 0.1, momentum=0.9, weight_decay=weight_decay)
    got = _run(opt, seq)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


def test_float32_parameters_stay_float32():
    net = Affine(dtype=core.float32)
    start = [p.asnumpy().astype(np.float64) for p in net.trainable_params()]
    seq = _grad_sequence([p.shape for p in start], steps=4)
    opt = nn.Adam(net.trainable_params(), learning_rate=0.01)
    got = _run(opt, seq, dtype=core.float32)
    want = _adam_ref(start, seq, 0.01, 0.9, 0.999, 1e-8)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert opt.adam_m.w.dtype == np.float32


# ---- learning rates ----------------------------------------------------------------------------
def test_learning_rate_list_is_indexed_by_step_and_clamped():
    p = Parameter(np.zeros(2), name="p")
    opt = nn.SGD([p], learning_rate=[0.1, 0.05, 0.01])
    lrs = []
    for _ in range(5):
        lrs.append(float(opt.get_lr()))
        opt((core.tensor(np.ones(2)),))
    assert lrs == [0.1, 0.05, 0.01, 0.01, 0.01]
    np.testing.assert_allclose(p.asnumpy(), -(0.1 + 0.05 + 0.01 * 3) * np.ones(2), rtol=1e-15)


def test_learning_rate_schedule_object():
    p = Parameter(np.zeros(1), name="p")
    sched = nn.ExponentialDecayLR(0.1, 0.5, decay_steps=2)
    opt = nn.SGD([p], learning_rate=sched)
    total = 0.0
    for step in range(4):
        lr = 0.1 * 0.5 ** (step / 2)
        assert float(opt.get_lr()) == pytest.approx(lr, rel=1e-14)
        total += lr
        opt((core.tensor(np.ones(1)),))
    np.testing.assert_allclose(p.asnumpy(), [-total], rtol=1e-14)


def test_parameter_groups_use_their_own_lr_and_weight_decay():
    net = Affine()
    w0, b0 = net.w.asnumpy().copy(), net.b.asnumpy().copy()
    opt = nn.SGD(
        [{"params": [net.w], "weight_decay": 0.5}, {"params": [net.b], "lr": 0.01}],
        learning_rate=0.1,
    )
    gw, gb = np.ones_like(w0), np.ones_like(b0)
    opt((core.tensor(gw), core.tensor(gb)))
    np.testing.assert_allclose(net.w.asnumpy(), w0 - 0.1 * (gw + 0.5 * w0), rtol=1e-15)
    np.testing.assert_allclose(net.b.asnumpy(), b0 - 0.01 * gb, rtol=1e-15)
    names = [n for n, _ in opt.parameters_and_names()]
    assert names == ["global_step", "learning_rate", "learning_rate_group_1"]
    lrs = opt.get_lr()
    assert isinstance(lrs, tuple) and [float(v) for v in lrs] == [0.1, 0.01]
    assert float(opt.get_lr_parameter(net.b)) == 0.01


def test_set_lr_changes_float_rates_in_place():
    p = Parameter(np.zeros(1), name="p")
    opt = nn.SGD([p], learning_rate=0.1)
    opt.set_lr(0.5)
    opt((core.tensor(np.ones(1)),))
    np.testing.assert_allclose(p.asnumpy(), [-0.5])
    with pytest.raises(TypeError, match="not a float"):
        nn.SGD([p], learning_rate=[0.1, 0.2]).set_lr(0.3)


# ---- complex parameters --------------------------------------------------------------------------
def test_sgd_descends_on_complex_parameters():
    """grad of |z - c|^2 is 2 conj(z - c) (JAX convention); descent must use 2 (z - c)."""
    c = np.array([1.0 + 2.0j, -0.5 + 0.25j])
    z = Parameter(np.array([0.3 - 1.0j, 2.0 + 0.0j]), name="z", dtype=core.complex128)
    z0 = z.asnumpy().copy()
    opt = nn.SGD([z], learning_rate=0.1)
    target = core.tensor(c, dtype=core.complex128)
    grad_fn = core.value_and_grad(
        lambda: ops.sum(ops.real((z - target) * ops.conj(z - target))), None, [z]
    )
    loss0, grads = grad_fn()
    np.testing.assert_allclose(grads[0].asnumpy(), 2 * np.conj(z0 - c))  # the engine's convention
    opt(grads)
    np.testing.assert_allclose(z.asnumpy(), z0 - 0.1 * 2 * (z0 - c), rtol=1e-15)
    for _ in range(60):
        loss, grads = grad_fn()
        opt(grads)
    assert float(loss) < 1e-8 * float(loss0)
    np.testing.assert_allclose(z.asnumpy(), c, atol=1e-5)


def test_adam_on_complex_equals_adam_on_real_and_imaginary_parts():
    rng = np.random.default_rng(3)
    z0 = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    gs = [rng.standard_normal(4) + 1j * rng.standard_normal(4) for _ in range(5)]
    z = Parameter(z0, name="z", dtype=core.complex128)
    xy = Parameter(np.stack([z0.real, z0.imag]), name="xy", dtype=core.float64)
    opt_c = nn.Adam([z], learning_rate=0.05, weight_decay=0.1)
    opt_r = nn.Adam([xy], learning_rate=0.05, weight_decay=0.1)
    for g in gs:
        opt_c((core.tensor(g, dtype=core.complex128),))
        # the real gradient with respect to (re z, im z) is (re g, -im g) = conj(g)
        opt_r((core.tensor(np.stack([g.real, -g.imag])),))
    np.testing.assert_allclose(z.asnumpy().real, xy.asnumpy()[0], rtol=1e-13)
    np.testing.assert_allclose(z.asnumpy().imag, xy.asnumpy()[1], rtol=1e-13)


def test_lbfgs_on_complex_parameter():
    c = np.array([1.0 - 1.0j, 0.5 + 2.0j])
    z = Parameter(np.zeros(2, dtype=np.complex128), name="z")
    target = core.tensor(c, dtype=core.complex128)
    opt = nn.LBFGS([z], max_iter=20)
    loss = opt.minimize(lambda: ops.sum(ops.real((z - target) * ops.conj(z - target))))
    assert float(loss) < 1e-12
    np.testing.assert_allclose(z.asnumpy(), c, atol=1e-6)


# ---- Rosenbrock convergence ----------------------------------------------------------------------
def _rosenbrock(v):
    x, y = v[0], v[1]
    return (1.0 - x) ** 2 + 100.0 * (y - x * x) ** 2


@pytest.mark.parametrize(
    "make, steps, tol",
    [
        (lambda ps: nn.Adam(ps, learning_rate=0.02), 3000, 1e-3),
        (lambda ps: nn.AdamW(ps, learning_rate=0.02, weight_decay=1e-5), 3000, 1e-3),
        (lambda ps: nn.SGD(ps, learning_rate=1e-3, momentum=0.9), 4000, 1e-3),
        (lambda ps: nn.SGD(ps, learning_rate=1e-3, momentum=0.9, nesterov=True), 4000, 1e-3),
    ],
    ids=["adam", "adamw", "sgd-momentum", "sgd-nesterov"],
)
def test_first_order_optimizers_converge_on_rosenbrock(make, steps, tol):
    """From (-1.5, 2) to the minimum (1, 1): |x - (1, 1)|_inf < tol."""
    v = Parameter(np.array([-1.5, 2.0]), name="v")
    opt = make([v])
    grad_fn = core.value_and_grad(lambda: _rosenbrock(v), None, opt.parameters)
    for _ in range(steps):
        _, grads = grad_fn()
        opt(grads)
    assert np.max(np.abs(v.asnumpy() - 1.0)) < tol, v.asnumpy()


@pytest.mark.parametrize("dtype", [core.float64, core.float32])
def test_lbfgs_strong_wolfe_converges_on_rosenbrock(dtype):
    """Strong-Wolfe L-BFGS reaches |x - (1, 1)|_inf < 1e-5 in at most 100 iterations."""
    v = Parameter(np.array([-1.5, 2.0]), name="v", dtype=dtype)
    opt = nn.LBFGS([v], max_iter=100, history_size=10, tolerance_change=1e-14, tolerance_grad=1e-9)
    loss = opt.minimize(lambda: _rosenbrock(v))
    assert np.max(np.abs(v.asnumpy() - 1.0)) < (1e-5 if dtype == core.float64 else 1e-3), (
        v.asnumpy()
    )
    assert float(loss) == pytest.approx(float(_rosenbrock(v)), rel=1e-12, abs=1e-30)
    assert 5 <= int(opt.global_step) <= 100
    assert v.dtype == dtype


def test_lbfgs_fixed_step_and_repeated_calls_continue_history():
    """Without a line search the step is learning_rate; a second minimize() call continues."""
    a = np.diag([1.0, 4.0, 9.0])
    x = Parameter(np.array([1.0, 1.0, 1.0]), name="x")
    amat = core.tensor(a)
    opt = nn.LBFGS(
        [x],
        learning_rate=0.1,
        max_iter=5,
        line_search_fn=None,
        tolerance_change=1e-30,
        history_size=4,
    )
    x0 = x.asnumpy().copy()
    opt.minimize(lambda: 0.5 * ops.sum(x * (amat @ x)), max_iter=1)
    g0 = a @ x0
    # first iteration: d = -g, t = min(1, 1/|g|_1) * lr
    np.testing.assert_allclose(
        x.asnumpy(), x0 - min(1.0, 1.0 / np.abs(g0).sum()) * 0.1 * g0, rtol=1e-14
    )
    opt.set_lr(1.0)  # unit quasi-Newton steps from now on
    for _ in range(4):
        opt.minimize(lambda: 0.5 * ops.sum(x * (amat @ x)))
    assert int(opt.lbfgs_hist_len) == 4  # the history is full (history_size=4) and rolls
    assert np.max(np.abs(x.asnumpy())) < 1e-8


def test_lbfgs_quadratic_converges_in_few_iterations():
    """On a convex quadratic in R^6, L-BFGS with exact-ish line search needs few iterations."""
    rng = np.random.default_rng(0)
    q = rng.standard_normal((6, 6))
    a = q @ q.T + 6 * np.eye(6)
    bvec = rng.standard_normal(6)
    x = Parameter(np.zeros(6), name="x")
    am, bm = core.tensor(a), core.tensor(bvec)
    opt = nn.LBFGS([x], max_iter=50, tolerance_grad=1e-10, tolerance_change=1e-15)
    opt.minimize(lambda: 0.5 * ops.sum(x * (am @ x)) - ops.sum(bm * x))
    np.testing.assert_allclose(x.asnumpy(), np.linalg.solve(a, bvec), atol=1e-8)
    assert int(opt.global_step) <= 20


# ---- clipping -----------------------------------------------------------------------------------
def test_clip_by_global_norm():
    rng = np.random.default_rng(0)
    gs = [rng.standard_normal((3, 2)), rng.standard_normal(4)]
    norm = np.sqrt(sum((g**2).sum() for g in gs))
    out = nn.clip_by_global_norm(
        tuple(core.tensor(g, dtype=core.float64) for g in gs), clip_norm=1.0
    )
    for o, g in zip(out, gs, strict=True):
        np.testing.assert_allclose(o.asnumpy(), g / norm, rtol=1e-14)
    same = nn.clip_by_global_norm((core.tensor(gs[0], dtype=core.float64), None), clip_norm=100.0)
    np.testing.assert_allclose(same[0].asnumpy(), gs[0], rtol=1e-15)
    assert same[1] is None
    zc = np.array([3.0 + 4.0j])
    out = nn.clip_by_global_norm((core.tensor(zc, dtype=core.complex128),), clip_norm=1.0)
    np.testing.assert_allclose(out[0].asnumpy(), zc / 5.0, rtol=1e-15)
    with pytest.raises(ValueError, match="clip_norm"):
        nn.clip_by_global_norm((core.tensor(gs[0]),), clip_norm=0.0)


# ---- state, names and errors ----------------------------------------------------------------------
def test_state_names_are_prefixed_and_never_collide_with_model_names():
    net = Affine()
    opt = nn.Adam(net.trainable_params())
    state = dict(opt.parameters_and_names())
    assert list(state) == [
        "global_step",
        "learning_rate",
        "adam_m.w",
        "adam_m.b",
        "adam_v.w",
        "adam_v.b",
    ]
    assert not set(state) & {n for n, _ in net.parameters_and_names()}
    assert all(not p.requires_grad for p in state.values())
    assert opt.parameters == (net.w, net.b)
    assert opt.adam_m.w.name == "adam_m.w"


def test_duplicate_parameter_names_fall_back_to_positions():
    a, b = Parameter(np.zeros(2), name="weight"), Parameter(np.zeros(3), name="weight")
    opt = nn.SGD([a, b], momentum=0.9)
    names = [n for n, _ in opt.parameters_and_names()]
    assert names == ["global_step", "learning_rate", "sgd_momentum.param0", "sgd_momentum.param1"]


def test_parameter_names_that_look_like_attributes_are_fine():
    a, b = Parameter(np.ones(2), name="apply"), Parameter(np.ones(2), name="_params")
    opt = nn.SGD([a, b], learning_rate=0.5, momentum=0.5)
    opt((core.tensor(np.ones(2)), core.tensor(np.ones(2))))
    assert [n for n, _ in opt.parameters_and_names()][2:] == [
        "sgd_momentum.apply",
        "sgd_momentum._params",
    ]
    np.testing.assert_array_equal(opt.sgd_momentum["_params"].asnumpy(), np.ones(2))
    np.testing.assert_array_equal(b.asnumpy(), 0.5 * np.ones(2))


def test_sgd_without_momentum_has_no_velocity_state():
    opt = nn.SGD([Parameter(np.zeros(2), name="p")])
    assert [n for n, _ in opt.parameters_and_names()] == ["global_step", "learning_rate"]


def test_optimizer_errors():
    p = Parameter(np.zeros(2), name="p")
    with pytest.raises(ValueError, match="empty"):
        nn.SGD([])
    with pytest.raises(TypeError, match="expected a Parameter"):
        nn.SGD([core.tensor([1.0])])
    with pytest.raises(ValueError, match="nesterov"):
        nn.SGD([p], nesterov=True)
    with pytest.raises(ValueError, match="appears twice"):
        nn.SGD([p, p])
    with pytest.raises(ValueError, match="unknown keys"):
        nn.SGD([{"params": [p], "momentum": 0.9}])
    with pytest.raises(ValueError, match="beta1"):
        nn.Adam([p], beta1=1.0)
    with pytest.raises(TypeError, match="learning_rate"):
        nn.SGD([p], learning_rate="fast")
    opt = nn.SGD([p])
    with pytest.raises(ValueError, match="got 2 gradients for 1 parameters"):
        opt((core.tensor([1.0, 1.0]), core.tensor([1.0])))
    with pytest.raises(ValueError, match=r"shape \(3,\).*shape \(2,\)"):
        opt((core.tensor([1.0, 1.0, 1.0]),))
    with pytest.raises(ValueError, match="groups are not supported"):
        nn.LBFGS([{"params": [p]}, {"params": [Parameter(np.zeros(1), name="q")]}])


def test_none_gradient_leaves_parameter_and_state_alone():
    a, b = Parameter(np.ones(2), name="a"), Parameter(np.ones(2), name="b")
    opt = nn.Adam([a, b], learning_rate=0.1)
    opt((core.tensor(np.ones(2)), None))
    np.testing.assert_array_equal(b.asnumpy(), np.ones(2))
    np.testing.assert_array_equal(opt.adam_m.b.asnumpy(), np.zeros(2))
    assert not np.allclose(a.asnumpy(), 1.0)


# ---- traceability: every update is made of core ops (what core.jit needs) -----------------------
class _AbstractTracer(Tracer):
    __slots__ = ("_aval",)

    def __init__(self, trace, aval):
        self._trace = trace
        self._aval = aval

    @property
    def aval(self):
        return self._aval


class _AbstractTrace(Trace):
    """Evaluates primitives on shapes only: any attempt to read a value raises."""

    def process(self, prim, args, params):
        avals = [a.aval if isinstance(a, Tracer) else ShapedArray(a.shape, a.dtype) for a in args]
        return _AbstractTracer(self, prim.abstract(*avals, **params))


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: nn.SGD(ps, learning_rate=0.1, momentum=0.9, nesterov=True, weight_decay=0.1),
        lambda ps: nn.SGD(ps, learning_rate=[0.1, 0.01]),
        lambda ps: nn.Adam(
            ps, learning_rate=nn.WarmupCosineDecayLR(0.0, 0.1, 2, 5), weight_decay=0.1
        ),
        lambda ps: nn.AdamW(ps),
    ],
    ids=["sgd", "sgd-lr-list", "adam-schedule", "adamw"],
)
def test_update_traces_without_reading_values(make):
    z = Parameter(np.ones(3, dtype=np.complex64), name="z")
    net = Affine(dtype=core.float32)
    opt = make([net.w, net.b, z])
    state = [p for _, p in opt.parameters_and_names()] + list(opt.parameters)
    trace = push_trace(_AbstractTrace())
    written = {}
    try:
        for p in state:
            p._subs.append(_AbstractTracer(trace, ShapedArray(p.shape, p.dtype)))
        _assign_hook[0] = lambda p, v: written.__setitem__(id(p), v)
        grads = tuple(_AbstractTracer(trace, ShapedArray(p.shape, p.dtype)) for p in opt.parameters)
        opt(grads)
    finally:
        _assign_hook[0] = None
        for p in state:
            p._subs.pop()
        pop_trace(trace)
    must_write = list(opt.parameters) + [
        p for n, p in opt.parameters_and_names() if n != "learning_rate"
    ]
    for p in must_write:
        v = written[id(p)]
        assert isinstance(v, _AbstractTracer), p.name
        assert tuple(v.shape) == tuple(p.shape)


def _train_steps(make, use_jit, x, y, z0, steps=6):
    net = Affine()
    net.z = Parameter(z0, name="z", dtype=core.complex128)
    opt = make(net.trainable_params())

    def loss_fn(x, y):
        return ((ops.real(net(x) * net.z) - y) ** 2).mean()

    grad_fn = core.value_and_grad(loss_fn, None, opt.parameters)

    def step(x, y):
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss

    if use_jit:
        step = core.jit(step)
    losses = [float(step(x, y)) for _ in range(steps)]
    state = [p.asnumpy() for _, p in net.parameters_and_names()]
    state += [p.asnumpy() for _, p in opt.parameters_and_names()]
    return losses, state


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: nn.SGD(ps, learning_rate=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
        lambda ps: nn.SGD(ps, learning_rate=[0.1, 0.05, 0.01]),
        lambda ps: nn.Adam(
            ps, learning_rate=nn.WarmupCosineDecayLR(1e-4, 1e-2, 3, 10), weight_decay=0.1
        ),
        lambda ps: nn.AdamW(ps, learning_rate=1e-2),
    ],
    ids=["sgd", "sgd-lr-list", "adam-schedule", "adamw"],
)
def test_jitted_training_step_matches_eager(make):
    """The whole step (forward, backward, update) compiled by core.jit == the eager step."""
    rng = np.random.default_rng(0)
    x = core.tensor(rng.standard_normal((16, 3)))
    y = core.tensor(rng.standard_normal((16, 2)))
    z0 = rng.standard_normal(2) + 1j * rng.standard_normal(2)
    results = [_train_steps(make, use_jit, x, y, z0) for use_jit in (False, True)]
    (l_eager, s_eager), (l_jit, s_jit) = results
    np.testing.assert_allclose(l_jit, l_eager, rtol=1e-13)
    assert l_eager[-1] < l_eager[0]
    for a, b in zip(s_eager, s_jit, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)
