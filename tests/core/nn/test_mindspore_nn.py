"""MindSpore-named cells, optimizers, losses, wrappers and mixed precision: each against its
published formula in numpy (optimizer steps by hand, pooling by a loop), gradients checked by
finite differences in float64; the Cell parameter-name rule; L-BFGS's evaluation budget."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import Parameter, amp, nn, ops
from diffsci.core.testing import gradcheck


def _t(a, dtype=core.float64):
    return core.tensor(np.asarray(a), dtype=dtype)


def _grad_steps(shapes, steps, seed=1):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s) for s in shapes] for _ in range(steps)]


# ---- nn.Momentum ------------------------------------------------------------------------------
@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_matches_mindspore_rule(nesterov):
    rng = np.random.default_rng(0)
    w0, g0 = rng.standard_normal((3, 2)), rng.standard_normal(4)
    w = Parameter(_t(w0), name="w")
    gamma = Parameter(_t(g0), name="ln.gamma")  # no decay without groups (MindSpore's rule)
    lr, mu, wd, scale = 0.1, 0.9, 0.01, 4.0
    opt = nn.Momentum([w, gamma], lr, mu, weight_decay=wd, loss_scale=scale, use_nesterov=nesterov)
    ref, vel = [w0.copy(), g0.copy()], [np.zeros((3, 2)), np.zeros(4)]
    for grads in _grad_steps([(3, 2), (4,)], 3):
        opt(tuple(_t(g) for g in grads))
        for k, decays in ((0, True), (1, False)):
            g = (grads[k] + wd * ref[k] if decays else grads[k]) / scale
            vel[k] = mu * vel[k] + g
            ref[k] = ref[k] - lr * (g + mu * vel[k] if nesterov else vel[k])
    np.testing.assert_allclose(w.asnumpy(), ref[0], rtol=1e-12)
    np.testing.assert_allclose(gamma.asnumpy(), ref[1], rtol=1e-12)
    names = [n for n, _ in opt.parameters_and_names()]
    assert "moments.w" in names and "moments.ln.gamma" in names


def test_momentum_groups_decay_every_parameter_and_check_arguments():
    beta = Parameter(_t([1.0, 2.0]), name="bn.beta")
    opt = nn.Momentum([{"params": [beta], "weight_decay": 0.5}], learning_rate=0.1, momentum=0.0)
    opt((_t([0.0, 0.0]),))
    np.testing.assert_allclose(beta.asnumpy(), [1.0 - 0.1 * 0.5, 2.0 - 0.1 * 1.0])
    with pytest.raises(ValueError, match="momentum must be"):
        nn.Momentum([beta], 0.1, -1.0)
    with pytest.raises(ValueError, match="loss_scale"):
        nn.Momentum([beta], 0.1, 0.9, loss_scale=0.0)


# ---- nn.AdamWeightDecay -----------------------------------------------------------------------
def test_adam_weight_decay_matches_mindspore_rule():
    rng = np.random.default_rng(2)
    w0, b0 = rng.standard_normal((2, 3)), rng.standard_normal(3)
    w = Parameter(_t(w0), name="fc.weight")
    b = Parameter(_t(b0), name="fc.bias")
    lr, b1, b2, eps, wd = 0.01, 0.8, 0.95, 1e-6, 0.1
    opt = nn.AdamWeightDecay(
        [{"params": [w], "weight_decay": wd}, {"params": [b], "lr": 0.02}],
        learning_rate=lr,
        beta1=b1,
        beta2=b2,
        eps=eps,
    )
    ref, m, v = [w0.copy(), b0.copy()], [0.0, 0.0], [0.0, 0.0]
    rates, decays = [lr, 0.02], [wd, 0.0]
    for grads in _grad_steps([(2, 3), (3,)], 4, seed=3):
        opt(tuple(_t(g) for g in grads))
        for k in range(2):
            m[k] = b1 * m[k] + (1 - b1) * grads[k]
            v[k] = b2 * v[k] + (1 - b2) * grads[k] ** 2
            ref[k] = ref[k] - rates[k] * (m[k] / (np.sqrt(v[k]) + eps) + decays[k] * ref[k])
    np.testing.assert_allclose(w.asnumpy(), ref[0], rtol=1e-12)
    np.testing.assert_allclose(b.asnumpy(), ref[1], rtol=1e-12)
    names = dict(opt.parameters_and_names())
    np.testing.assert_allclose(names["adam_m.fc.weight"].asnumpy(), m[0], rtol=1e-12)
    np.testing.assert_allclose(names["adam_v.fc.bias"].asnumpy(), v[1], rtol=1e-12)


def test_adam_weight_decay_skips_beta_and_gamma_without_groups():
    gamma = Parameter(_t([1.0]), name="norm.gamma")
    w = Parameter(_t([1.0]), name="w")
    opt = nn.AdamWeightDecay([gamma, w], learning_rate=0.1, weight_decay=0.5)
    opt((_t([0.0]), _t([0.0])))  # zero gradient: only the decay moves a parameter
    np.testing.assert_allclose(gamma.asnumpy(), [1.0])
    np.testing.assert_allclose(w.asnumpy(), [1.0 - 0.1 * 0.5])


# ---- nn.MaxPool2d -----------------------------------------------------------------------------
def _maxpool_ref(x, k, s, pads, d=(1, 1), ceil=False):
    """Max over each window of the padded input (padding never wins), by loops."""
    (top, bottom), (left, right) = pads
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=-np.inf)
    outs = []
    for ax, (n, lo, hi) in enumerate(((x.shape[2], top, bottom), (x.shape[3], left, right))):
        span = n + lo + hi - d[ax] * (k[ax] - 1) - 1
        o = (-(-span // s[ax]) if ceil else span // s[ax]) + 1
        if ceil and (o - 1) * s[ax] >= n + lo:
            o -= 1
        outs.append(o)
    out = np.empty(x.shape[:2] + tuple(outs))
    for i in range(outs[0]):
        for j in range(outs[1]):
            rows = [i * s[0] + a * d[0] for a in range(k[0])]
            cols = [j * s[1] + b * d[1] for b in range(k[1])]
            rows = [r for r in rows if r < xp.shape[2]]
            cols = [c for c in cols if c < xp.shape[3]]
            out[:, :, i, j] = xp[:, :, rows][:, :, :, cols].max(axis=(2, 3))
    return out


@settings(max_examples=25, deadline=None)
@given(
    h=st.integers(3, 9),
    w=st.integers(3, 9),
    k=st.integers(1, 3),
    s=st.integers(1, 3),
    mode=st.sampled_from(["valid", "same", "pad", "pad_ceil"]),
)
def test_maxpool2d_matches_numpy_loop(h, w, k, s, mode):
    x = np.random.default_rng(h * 31 + w).standard_normal((2, 3, h, w))
    if mode == "valid":
        cell, pads, ceil = nn.MaxPool2d(k, s, "valid"), ((0, 0), (0, 0)), False
    elif mode == "same":
        cell, ceil = nn.MaxPool2d(k, s, "same"), False
        pads = []
        for n in (h, w):
            total = max((-(-n // s) - 1) * s + k - n, 0)
            pads.append((total // 2, total - total // 2))
        pads = tuple(pads)
        assert cell(_t(x)).shape[2:] == (-(-h // s), -(-w // s))
    else:
        p, ceil = k // 2, mode == "pad_ceil"
        cell, pads = nn.MaxPool2d(k, s, "pad", p, ceil_mode=ceil), ((p, p), (p, p))
    np.testing.assert_array_equal(
        cell(_t(x)).asnumpy(), _maxpool_ref(x, (k, k), (s, s), pads, ceil=ceil)
    )


def test_maxpool2d_rectangular_dilated_and_gradient():
    x = np.random.default_rng(5).standard_normal((1, 2, 7, 8))
    cell = nn.MaxPool2d((3, 2), (2, 1), "pad", (1, 1, 0, 1), dilation=(1, 2))
    ref = _maxpool_ref(x, (3, 2), (2, 1), ((1, 1), (0, 1)), d=(1, 2))
    np.testing.assert_array_equal(cell(_t(x)).asnumpy(), ref)
    assert nn.MaxPool2d(2, 2)(_t(x[0])).shape == (2, 3, 4)  # unbatched [C, H, W]
    for c in (nn.MaxPool2d(3, 2, "same"), cell):
        gradcheck(c, [_t(x)])  # distinct values: the maxima are differentiable


def test_maxpool2d_errors():
    with pytest.raises(ValueError, match="pad_mode"):
        nn.MaxPool2d(2, pad_mode="full")
    with pytest.raises(ValueError, match="padding must be 0"):
        nn.MaxPool2d(3, padding=1)
    with pytest.raises(ValueError, match="at most half"):
        nn.MaxPool2d(3, pad_mode="pad", padding=2)
    with pytest.raises(ValueError, match=r"\[N, C, H, W\]"):
        nn.MaxPool2d(2)(_t(np.zeros((4, 4))))


# ---- losses -----------------------------------------------------------------------------------
def _log_softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def test_softmax_cross_entropy_with_logits_dense_and_sparse():
    rng = np.random.default_rng(6)
    logits = rng.standard_normal((5, 4)) * 3
    labels = rng.integers(0, 4, 5)
    onehot = np.eye(4)[labels]
    expect = -(onehot * _log_softmax(logits)).sum(-1)
    out = nn.SoftmaxCrossEntropyWithLogits()(_t(logits), _t(onehot))
    np.testing.assert_allclose(out.asnumpy(), expect, rtol=1e-12)  # reduction 'none': [N]
    sparse = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    np.testing.assert_allclose(
        sparse(_t(logits), _t(labels, core.int32)).asnumpy(), expect.mean(), rtol=1e-12
    )
    soft = rng.dirichlet(np.ones(4), 5)
    gradcheck(
        lambda z, y: nn.SoftmaxCrossEntropyWithLogits()(z, y), [_t(logits), _t(soft)], order=2
    )
    with pytest.raises(ValueError, match="sparse=True"):
        nn.SoftmaxCrossEntropyWithLogits(sparse=True)(_t(logits), _t(onehot))


def test_bce_with_logits_formula_weights_and_large_logits():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4)) * 2
    y = rng.uniform(0, 1, (3, 4))
    w, pw = rng.uniform(0.5, 2, (3, 4)), rng.uniform(0.5, 2, 4)
    sig = 1 / (1 + np.exp(-x))
    expect = -w * (pw * y * np.log(sig) + (1 - y) * np.log(1 - sig))
    loss = nn.BCEWithLogitsLoss(reduction="none", weight=_t(w), pos_weight=_t(pw))
    np.testing.assert_allclose(loss(_t(x), _t(y)).asnumpy(), expect, rtol=1e-12)
    np.testing.assert_allclose(
        nn.BCEWithLogitsLoss()(_t(x), _t(y)).asnumpy(),
        (-(y * np.log(sig) + (1 - y) * np.log(1 - sig))).mean(),
        rtol=1e-12,
    )
    big = nn.BCEWithLogitsLoss(reduction="sum")(_t([800.0, -800.0]), _t([0.0, 1.0]))
    np.testing.assert_allclose(big.asnumpy(), 1600.0)  # no overflow: softplus(800) = 800
    gradcheck(lambda a, b: loss(a, b), [_t(x), _t(y)], order=2)


def test_rmse_loss():
    rng = np.random.default_rng(8)
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    np.testing.assert_allclose(
        nn.RMSELoss()(_t(x), _t(y)).asnumpy(), np.sqrt(((x - y) ** 2).mean()), rtol=1e-12
    )
    gradcheck(lambda a, b: nn.RMSELoss()(a, b), [_t(x), _t(y)])


# ---- WithLossCell / TrainOneStepCell ------------------------------------------------------------
class _Linear(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(_t([[0.5], [-0.3]]), name="w")
        self.b = Parameter(_t([0.1]), name="b")

    def construct(self, x):
        return x @ self.w + self.b


def _sgd_reference(x, y, steps, lr, sens):
    w, b = np.array([[0.5], [-0.3]]), np.array([0.1])
    losses = []
    for _ in range(steps):
        r = x @ w + b - y
        losses.append((r**2).mean())
        gw, gb = 2 * x.T @ r / r.size, 2 * r.sum(0) / r.size
        w, b = w - lr * sens * gw, b - lr * sens * gb
    return w, b, losses


@pytest.fixture
def _pynative_after():
    yield
    core.set_context(mode=core.PYNATIVE_MODE)


@pytest.mark.parametrize("mode", ["eager", "jit", "graph_mode"])
def test_train_one_step_cell_eager_jit_and_graph_mode(mode, _pynative_after):
    rng = np.random.default_rng(9)
    x, y = rng.standard_normal((6, 2)), rng.standard_normal((6, 1))
    net = _Linear()
    with_loss = nn.WithLossCell(net, nn.MSELoss())
    assert with_loss.backbone_network is net
    assert [p.name for p in with_loss.get_parameters()] == ["w", "b"]  # no prefix
    step = nn.TrainOneStepCell(with_loss, nn.SGD(net.trainable_params(), 0.1), sens=2.0)
    if mode == "graph_mode":
        core.set_context(mode=core.GRAPH_MODE)  # Cell.__call__ compiles the whole step
    run = core.jit(step) if mode == "jit" else step
    losses = [float(run(_t(x), _t(y))) for _ in range(3)]
    w, b, ref_losses = _sgd_reference(x, y, 3, 0.1, 2.0)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-12)
    np.testing.assert_allclose(net.w.asnumpy(), w, rtol=1e-12)
    np.testing.assert_allclose(net.b.asnumpy(), b, rtol=1e-12)


# ---- Cell parameter names (MindSpore's uniqueness rule) -----------------------------------------
def test_parameter_name_clash_is_an_error():
    class Two(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a = Parameter(_t([1.0]), name="shared_name")
            self.b = Parameter(_t([2.0]), name="shared_name")

    with pytest.raises(ValueError, match="its name 'shared_name' already exists"):
        Two()

    class Flat(nn.Cell):  # no prefixes: two Dense layers would both own 'weight'
        def __init__(self):
            super().__init__(auto_prefix=False)
            self.fc1 = nn.Dense(2, 2)
            self.fc2 = nn.Dense(2, 2)

    with pytest.raises(ValueError, match="'weight' already exists"):
        Flat()


def test_auto_named_and_shared_parameters_are_not_clashes():
    net = nn.SequentialCell(nn.Dense(2, 3), nn.Tanh(), nn.Dense(3, 1))
    names = [p.name for p in net.get_parameters()]
    assert names == ["0.weight", "0.bias", "2.weight", "2.bias"]

    class Tied(nn.Cell):
        def __init__(self):
            super().__init__()
            self.enc = nn.Dense(2, 2)
            self.w = self.enc.weight  # the same object under two names
            self.enc = nn.Dense(2, 2)  # replacing an attribute is not a clash

    Tied()


# ---- to_float and core.amp ----------------------------------------------------------------------
def test_to_float_computes_in_float16_and_keeps_float32_weights():
    net = nn.Dense(3, 2)
    x = np.random.default_rng(10).standard_normal((4, 3)).astype(np.float32)
    net.to_float(core.float16)
    out = net(core.tensor(x))
    assert out.dtype == core.float16 and net.weight.dtype == core.float32
    w16, b16 = net.weight.asnumpy().astype(np.float16), net.bias.asnumpy().astype(np.float16)
    np.testing.assert_allclose(
        out.asnumpy(), x.astype(np.float16) @ w16.T + b16, rtol=2e-3, atol=2e-3
    )
    grads = core.grad(
        lambda v: ops.sum(ops.astype(net(v), core.float32)), None, net.trainable_params()
    )(core.tensor(x))
    assert grads[0].dtype == core.float32  # gradients of the float32 weights
    np.testing.assert_allclose(grads[1].asnumpy(), [4.0, 4.0])
    with pytest.raises(ValueError, match="dtype must be"):
        net.to_float(core.int32)


def test_auto_mixed_precision_levels():
    def make():
        return nn.SequentialCell(nn.Dense(4, 4), nn.LayerNorm((4,)), nn.Dense(4, 2))

    x = core.tensor(np.random.default_rng(11).standard_normal((3, 4)).astype(np.float32))
    seen = {}

    def spy(cell):
        original = cell.construct

        def construct(v):
            seen[id(cell)] = v.dtype
            return original(v)

        object.__setattr__(cell, "construct", construct)

    o2 = amp.auto_mixed_precision(make(), "O2")
    for c in o2.cells():
        spy(c)
    assert o2(x).dtype == core.float32  # output cast back
    assert [seen[id(c)] for c in o2.cells()] == [core.float16, core.float32, core.float16]
    o1 = amp.auto_mixed_precision(make(), "O1")
    assert o1(x).dtype == core.float32
    assert o1.cells()[0].__dict__["_float_dtype"] == core.float16
    assert "_float_dtype" not in o1.cells()[1].__dict__
    o3 = amp.auto_mixed_precision(nn.SequentialCell(nn.Dense(4, 4), nn.ReLU()), "O3", core.bfloat16)
    for c in o3.cells():
        spy(c)
    assert o3(x).dtype == core.float32
    assert [seen[id(c)] for c in o3.cells()] == [core.bfloat16, core.bfloat16]
    with pytest.raises(ValueError, match="amp_level"):
        amp.auto_mixed_precision(make(), "O4")


def test_loss_scalers_and_all_finite():
    assert bool(amp.all_finite([_t([1.0, 2.0]), _t([3.0])]))
    assert not bool(amp.all_finite((_t([1.0, np.inf]),)))
    assert not bool(amp.all_finite(_t([np.nan])))
    static = amp.StaticLossScaler(8.0)
    np.testing.assert_allclose(static.scale(_t([1.0, 2.0])).asnumpy(), [8.0, 16.0])
    np.testing.assert_allclose(static.unscale((_t([8.0]),))[0].asnumpy(), [1.0])
    dyn = amp.DynamicLossScaler(scale_value=4.0, scale_factor=2, scale_window=2)
    history = []
    for finite in [True, True, True, False, False, False, False, True, True]:
        dyn.adjust(core.tensor(finite))
        history.append(float(dyn.scale_value))
    # grow after 2 finite steps in a row; halve on overflow, never below 1
    assert history == [4.0, 8.0, 8.0, 4.0, 2.0, 1.0, 1.0, 1.0, 2.0]


# ---- L-BFGS: the evaluation budget follows the call's max_iter ----------------------------------
def test_lbfgs_minimize_max_iter_reaches_rosenbrock_minimum():
    p = Parameter(_t([-1.2, 1.0]), name="xy")
    opt = nn.LBFGS([p], line_search_fn="strong_wolfe")  # constructor max_iter=20

    def rosenbrock():
        return (1 - p[0]) ** 2 + 100 * (p[1] - p[0] * p[0]) ** 2

    opt.minimize(rosenbrock, max_iter=500)
    assert int(opt.lbfgs_func_evals) > 25  # was capped at 20 * 5 // 4 = 25
    np.testing.assert_allclose(p.asnumpy(), [1.0, 1.0], atol=1e-4)


def test_lbfgs_minimize_max_eval_argument():
    p = Parameter(_t([-1.2, 1.0]), name="xy")
    opt = nn.LBFGS([p], line_search_fn=None, learning_rate=1e-4)

    def rosenbrock():
        return (1 - p[0]) ** 2 + 100 * (p[1] - p[0] * p[0]) ** 2

    opt.minimize(rosenbrock, max_iter=500, max_eval=7)
    # one evaluation at the start, one per fixed step: the budget of 7 stops it after 6 steps
    assert int(opt.lbfgs_func_evals) == 7 and int(opt.global_step) == 6
    with pytest.raises(ValueError, match="max_eval"):
        opt.minimize(rosenbrock, max_eval=0)
