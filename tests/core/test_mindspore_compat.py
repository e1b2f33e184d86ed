"""MindSpore compatibility: small ports of MindSpore's tutorials (quick-start, autodiff, static
graph) and every name of the compatibility list, each checked against numpy or exact math."""

import functools
import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
import diffsci.core as ms
from diffsci.core import dtype as mstype
from diffsci.core import nn, ops
from diffsci.core import numpy as mnp
from diffsci.core.common.initializer import Constant, Normal, One, initializer
from diffsci.core.ops import operations as P
from diffsci.core.ops.primitive_classes import PRIMITIVE_CLASSES


@pytest.fixture(autouse=True)
def _pynative_after():
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def _np(t):
    return t.asnumpy() if isinstance(t, core.Tensor) else np.asarray(t)


# ---- set_context / get_context / mstype ----------------------------------------------------------
def test_context_modes_and_device():
    assert ms.get_context("mode") == ms.PYNATIVE_MODE == 1 and ms.GRAPH_MODE == 0
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU", device_id=0, save_graphs=False)
    assert ms.get_context("mode") == ms.GRAPH_MODE
    assert ms.get_context("device_target") == core.get_device() == "CPU"
    assert ms.context.get_context(attr_key="device_id") == 0
    with pytest.raises(ValueError, match="mode must be GRAPH_MODE"):
        ms.set_context(mode=2)
    with pytest.raises(ValueError, match="unknown key 'made'"):
        ms.set_context(made=0)


def test_device_target_is_set_device():
    with pytest.raises(Exception, match="Ascend"):
        ms.set_context(device_target="Ascend")  # no Ascend array library on this machine
    assert core.get_device() == "CPU"


def test_mstype():
    assert mstype.float32 is core.float32 and mstype.float16 == np.float16
    assert mstype.int32 == np.int32 and mstype.bool_ == np.bool_ and mstype.uint8 == np.uint8
    assert mstype.bfloat16 is core.bfloat16 and mstype.double == np.float64
    assert isinstance(mstype.float32, mstype.dtype)
    assert mstype.dtype_to_nptype(mstype.float16) is np.float16
    assert mstype.pytype_to_dtype(float) == mstype.float32
    x = ms.Tensor(np.ones(2), mstype.float16)
    assert x.dtype == np.float16


# ---- creation: dtype positional, Tensor(shape=, dtype=, init=) -----------------------------------
def test_creation_dtype_positional():
    assert ops.ones(5, mstype.float32).shape == (5,)  # crashed with an int() error before
    z = ops.zeros((2, 3), mstype.int32)
    assert z.shape == (2, 3) and z.dtype == np.int32 and not _np(z).any()
    assert ops.ones(2, 3, np.float64).dtype == np.float64 and ops.ones(2, 3).shape == (2, 3)
    np.testing.assert_array_equal(_np(ops.eye(2, 3, mstype.int32)), np.eye(2, 3, dtype=np.int32))
    assert ops.eye(2, 3, mstype.int32).dtype == np.int32
    assert ops.full((2,), 1.5, mstype.float64).dtype == np.float64
    with pytest.raises(TypeError, match="dtype given twice"):
        ops.ones(5, mstype.float32, dtype=mstype.int32)


def test_tensor_initializer_form():
    t = ms.Tensor(shape=(2, 3), dtype=mstype.float32, init=One())
    assert t.init_data() is t
    np.testing.assert_array_equal(_np(t), np.ones((2, 3), np.float32))
    c = ms.Tensor(shape=(4,), dtype=mstype.float64, init=Constant(0.5)).init_data()
    assert c.dtype == np.float64 and np.all(_np(c) == 0.5)
    core.set_seed(3)
    a = _np(ms.Tensor(shape=(3, 4), dtype=mstype.float32, init=Normal(0.02)))
    core.set_seed(3)
    b = _np(initializer(Normal(0.02), (3, 4), mstype.float32))
    np.testing.assert_array_equal(a, b)  # same draw as MindSpore's initializer() path
    with pytest.raises(TypeError, match="shape= and init= go together"):
        ms.Tensor(shape=(2,), dtype=mstype.float32)
    with pytest.raises(TypeError, match="either data or shape"):
        ms.Tensor(np.ones(2), init="ones", shape=(2,))


# ---- the quick-start: a Dense network trained in GRAPH_MODE --------------------------------------
def _numpy_mlp_step(w1, b1, w2, b2, x, y, lr):
    """Reference: forward, backward and one SGD step of tanh MLP + MSE, by hand."""
    h = np.tanh(x @ w1.T + b1)
    out = h @ w2.T + b2
    loss = np.mean((out - y) ** 2)
    g_out = 2 * (out - y) / out.size
    g_w2, g_b2 = g_out.T @ h, g_out.sum(0)
    g_pre = (g_out @ w2) * (1 - h**2)
    g_w1, g_b1 = g_pre.T @ x, g_pre.sum(0)
    return loss, [p - lr * g for p, g in ((w1, g_w1), (b1, g_b1), (w2, g_w2), (b2, g_b2))]


@pytest.mark.parametrize("mode", [ms.GRAPH_MODE, ms.PYNATIVE_MODE])
def test_quickstart_training_step(mode):
    ms.set_context(mode=mode)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 3))
    y = np.sin(x.sum(1, keepdims=True))
    net = nn.SequentialCell(nn.Dense(3, 8), nn.Tanh(), nn.Dense(8, 1))
    params = [_np(p).astype(np.float64) for p in net.trainable_params()]
    opt = nn.SGD(net.trainable_params(), learning_rate=0.1)
    calls = []

    def forward_fn(data, label):
        calls.append(1)  # the Python body runs once per trace in GRAPH_MODE
        return ((net(data) - label) ** 2).mean()

    grad_fn = ops.value_and_grad(forward_fn, None, opt.parameters)

    def train_step(data, label):
        loss, grads = grad_fn(data, label)
        opt(grads)
        return loss

    xs, ys = ms.Tensor(x, mstype.float32), ms.Tensor(y, mstype.float32)
    for _ in range(3):
        want_loss, params = _numpy_mlp_step(*params, x, y, 0.1)
        loss = train_step(xs, ys)
        np.testing.assert_allclose(float(loss), want_loss, rtol=1e-4)
    for p, want in zip(net.trainable_params(), params):
        np.testing.assert_allclose(_np(p), want, rtol=1e-4, atol=1e-5)
    assert len(calls) == (1 if mode == ms.GRAPH_MODE else 3)


def test_graph_mode_cell_compiles_once_and_matches_pynative():
    net = nn.SequentialCell(nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2))
    x = ms.Tensor(np.random.default_rng(1).standard_normal((5, 3)), mstype.float32)
    eager = _np(net(x))
    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_allclose(_np(net(x)), eager, rtol=1e-6)
    np.testing.assert_allclose(_np(net(x)), eager, rtol=1e-6)
    assert net._graph_fn.trace_count == 1
    lowered = net._graph_fn.lower(x).as_text()
    assert "matmul" in lowered or "dot" in lowered or "einsum" in lowered


# ---- the autodiff tutorial -----------------------------------------------------------------------
def _bce_setup():
    rng = np.random.default_rng(2)
    x, y = np.ones(5), np.zeros(3)
    w, b = rng.standard_normal((5, 3)), rng.standard_normal(3)
    z = x @ w + b
    dz = (1 / (1 + np.exp(-z)) - y) / 3  # d mean(BCE-with-logits) / dz
    loss = np.mean(np.log1p(np.exp(z)) - y * z)
    t = functools.partial(ms.Tensor, dtype=mstype.float64)
    return (t(x), t(y), t(w), t(b)), (z, loss, np.outer(x, dz), dz)


def _bce(z, y):
    return (ops.softplus(z) - y * z).mean()


def test_autodiff_tutorial_grad_position_and_has_aux():
    (x, y, w, b), (z_ref, loss_ref, dw_ref, db_ref) = _bce_setup()

    def function(x, y, w, b):
        z = ops.matmul(x, w) + b
        return _bce(z, y)

    dw, db = ms.grad(function, (2, 3))(x, y, w, b)
    np.testing.assert_allclose(_np(dw), dw_ref, rtol=1e-12)
    np.testing.assert_allclose(_np(db), db_ref, rtol=1e-12)

    def function_with_logits(x, y, w, b):
        z = ops.matmul(x, w) + b
        return _bce(z, y), z

    (dw, db), (z,) = ops.grad(function_with_logits, (2, 3), has_aux=True)(x, y, w, b)
    np.testing.assert_allclose(_np(dw), dw_ref, rtol=1e-12)
    np.testing.assert_allclose(_np(z), z_ref, rtol=1e-12)
    (loss, z), (dw, db) = ops.value_and_grad(function_with_logits, (2, 3), has_aux=True)(x, y, w, b)
    np.testing.assert_allclose(float(loss), loss_ref, rtol=1e-12)
    np.testing.assert_allclose(_np(db), db_ref, rtol=1e-12)


def test_autodiff_tutorial_weights_of_a_cell():
    (x, y, w, b), (_, loss_ref, dw_ref, db_ref) = _bce_setup()

    class Network(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(w, name="w")
            self.b = ms.Parameter(b, name="b")

        def construct(self, x):
            return ops.matmul(x, self.w) + self.b

    model = Network()
    loss_fn = lambda x, y: _bce(model(x), y)  # noqa: E731
    loss, (dw, db) = ops.value_and_grad(loss_fn, None, weights=model.trainable_params())(x, y)
    np.testing.assert_allclose(float(loss), loss_ref, rtol=1e-12)
    np.testing.assert_allclose(_np(dw), dw_ref, rtol=1e-12)
    np.testing.assert_allclose(_np(db), db_ref, rtol=1e-12)


def test_grad_of_a_tuple_output_sums_the_outputs():
    x, y = ms.Tensor(2.0, mstype.float64), ms.Tensor(3.0, mstype.float64)
    gx, gy = ms.grad(lambda x, y: (x * y, x + y), (0, 1))(x, y)
    assert float(gx) == 4.0 and float(gy) == 3.0  # d(xy + x + y) = (y + 1, x + 1)
    v = ms.Tensor([1.0, 2.0], mstype.float64)
    (sq, _), g = ms.value_and_grad(lambda v: (v**2, ops.sin(v)))(v)  # non-scalar: seeds of ones
    np.testing.assert_allclose(_np(g), 2 * _np(v) + np.cos(_np(v)), rtol=1e-14)
    np.testing.assert_allclose(_np(sq), [1.0, 4.0])
    with pytest.raises(TypeError, match=r"output 1 .* no derivative"):
        ms.grad(lambda v: (v.sum(), v > 0))(v)
    with pytest.raises(ValueError, match="scalar"):  # one non-scalar output: still an error
        ms.grad(lambda v: v * 2)(v)


def _grad_operation_net():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.z = ms.Parameter(ms.Tensor(np.array([1.5]), mstype.float64), name="z")

        def construct(self, x, y):
            return ops.matmul(x * self.z, y)

    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    return Net(), x, y


def test_grad_operation():
    net, x, y = _grad_operation_net()
    z = 1.5
    xt, yt = ms.Tensor(x, mstype.float64), ms.Tensor(y, mstype.float64)
    sens = np.random.default_rng(5).standard_normal((2, 4))
    ones = np.ones((2, 4))
    dx_ref, dy_ref = ones @ y.T * z, (x * z).T @ ones

    dx = ops.GradOperation()(net)(xt, yt)
    np.testing.assert_allclose(_np(dx), dx_ref, rtol=1e-12)
    dx, dy = ops.GradOperation(get_all=True)(net)(xt, yt)
    np.testing.assert_allclose(_np(dy), dy_ref, rtol=1e-12)
    (dz,) = P.GradOperation(get_by_list=True)(net, net.trainable_params())(xt, yt)
    np.testing.assert_allclose(_np(dz), [np.sum(x * (ones @ y.T))], rtol=1e-12)
    (dx, dy), (dz,) = ops.GradOperation(get_all=True, get_by_list=True, sens_param=True)(
        net, net.trainable_params()
    )(xt, yt, ms.Tensor(sens, mstype.float64))
    np.testing.assert_allclose(_np(dx), sens @ y.T * z, rtol=1e-12)
    np.testing.assert_allclose(_np(dy), (x * z).T @ sens, rtol=1e-12)
    np.testing.assert_allclose(_np(dz), [np.sum(x * (sens @ y.T))], rtol=1e-12)
    with pytest.raises(ValueError, match="sens shape"):
        ops.GradOperation(sens_param=True)(net)(xt, yt, ms.Tensor(np.ones(3)))
    with pytest.raises(TypeError, match="weights are missing"):
        ops.GradOperation(get_by_list=True)(net)


def test_depend_returns_the_value():
    p = ms.Parameter(ms.Tensor([1.0]), name="p")
    v = ms.Tensor([2.0])
    assert ops.depend(v, p.set_data(ms.Tensor([3.0]))) is v
    assert float(p[0]) == 3.0


# ---- the static-graph tutorial: jit, jit_class, constexpr ----------------------------------------
def test_static_graph_jit_jit_class_constexpr():
    @ms.jit_class
    class Scaler:
        def __init__(self, factor):
            self.factor = ms.Tensor(factor, mstype.float32)

        def apply(self, x):
            return x * self.factor

    @ops.constexpr
    def count(shape):
        return functools.reduce(operator.mul, shape, 1)

    @ops.constexpr(reuse_result=False)
    def half(v):
        return v / 2

    scaler = Scaler(np.array([1.0, 2.0, 3.0]))
    traced = []

    @ms.jit
    def f(x):
        traced.append(1)
        return scaler.apply(x).sum() / count(x.shape) + half(4.0)

    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    want = (x * [1.0, 2.0, 3.0]).sum() / 6 + 2.0
    assert float(f(ms.Tensor(x))) == pytest.approx(want, rel=1e-6)
    assert float(f(ms.Tensor(x + 1))) == pytest.approx(want + 12.0 / 6, rel=1e-6)
    assert len(traced) == 1
    with pytest.raises(TypeError, match="is a Cell"):
        ms.jit_class(nn.Dense)


def test_graph_mode_grad_compiles():
    ms.set_context(mode=ms.GRAPH_MODE)
    runs = []

    def f(x):
        runs.append(1)
        return (ops.sin(x) * x).sum()

    grad_f = ms.grad(f)
    for v in ([0.5, 1.0], [2.0, -1.0]):
        x = np.array(v)
        g = grad_f(ms.Tensor(x, mstype.float64))
        np.testing.assert_allclose(_np(g), np.cos(x) * x + np.sin(x), rtol=1e-13)
    assert len(runs) == 1


# ---- error messages ------------------------------------------------------------------------------
def test_sequential_cell_error_names_the_layer():
    net = nn.SequentialCell(nn.Dense(2, 4), nn.Tanh(), nn.SequentialCell(nn.Dense(3, 1)))
    with pytest.raises(
        ValueError,
        match=r"in SequentialCell layer 0: Dense\] \[in SequentialCell layer 2: SequentialCell",
    ):
        net(ms.Tensor(np.ones((5, 2)), mstype.float32))


def test_sequential_cell_error_of_another_type_gets_a_note():
    class Lookup(nn.Cell):
        def construct(self, x):
            return {}["missing"]

    net = nn.SequentialCell({"embed": nn.Tanh(), "lookup": Lookup()})
    with pytest.raises(KeyError) as info:
        net(ops.ones(2))
    assert info.value.__notes__ == ["in SequentialCell layer 1 ('lookup'): Lookup"]


def test_cell_created_inside_jit_explains_itself():
    @ms.jit
    def f(x):
        return nn.Dense(2, 3)(x)

    with pytest.raises(TypeError, match=r"created inside core.jit.*outside the compiled function"):
        f(ops.ones((4, 2)))


# ---- core.numpy (mindspore.numpy) ----------------------------------------------------------------
_UNARY = "abs sqrt exp sin cos tanh arctan square sign floor ceil isnan".split()
_BINARY = "add subtract multiply divide power maximum minimum arctan2 less greater_equal".split()
_REDUCE = "sum mean prod amax amin max min var std".split()


@settings(max_examples=15, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    seed=st.integers(0, 2**16),
    axis=st.sampled_from([None, 0, -1]),
    keepdims=st.booleans(),
)
def test_numpy_functions_match_numpy(shape, seed, axis, keepdims):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0.5, 2.0, shape), rng.uniform(0.5, 2.0, shape)
    ta, tb = ms.Tensor(a, mstype.float64), ms.Tensor(b, mstype.float64)
    for name in _UNARY:
        np.testing.assert_allclose(_np(getattr(mnp, name)(ta)), getattr(np, name)(a), rtol=1e-12)
    for name in _BINARY:
        np.testing.assert_allclose(
            _np(getattr(mnp, name)(ta, tb)), getattr(np, name)(a, b), rtol=1e-12
        )
    for name in _REDUCE:
        got = getattr(mnp, name)(ta, axis=axis, keepdims=keepdims)
        np.testing.assert_allclose(
            _np(got), getattr(np, name)(a, axis=axis, keepdims=keepdims), rtol=1e-12
        )
    np.testing.assert_array_equal(_np(mnp.argmax(ta, axis)), np.argmax(a, axis))
    np.testing.assert_allclose(_np(mnp.cumsum(ta, axis)), np.cumsum(a, axis), rtol=1e-12)
    np.testing.assert_allclose(_np(mnp.where(ta > tb, ta, tb)), np.where(a > b, a, b))
    np.testing.assert_allclose(_np(mnp.clip(ta, 0.8, 1.5)), np.clip(a, 0.8, 1.5))
    for fn in ("stack", "concatenate"):
        np.testing.assert_array_equal(
            _np(getattr(mnp, fn)([ta, tb], -1)), getattr(np, fn)([a, b], -1)
        )
    np.testing.assert_array_equal(_np(mnp.flip(ta, 0)), np.flip(a, 0))
    np.testing.assert_array_equal(_np(mnp.roll(ta, 1, 0)), np.roll(a, 1, 0))
    np.testing.assert_array_equal(_np(mnp.expand_dims(ta, 0)), np.expand_dims(a, 0))
    np.testing.assert_array_equal(
        _np(mnp.tile(ta, (2,) * len(shape))), np.tile(a, (2,) * len(shape))
    )
    np.testing.assert_array_equal(_np(mnp.ravel(ta)), np.ravel(a))
    np.testing.assert_array_equal(_np(mnp.transpose(ta)), np.transpose(a))
    np.testing.assert_array_equal(_np(mnp.append(ta, tb)), np.append(a, b))


# every mindspore.numpy name used in MindFlow's 486 Python files (mindspore-ai/mindscience)
_MINDFLOW_MNP = (
    "stack zeros_like sqrt abs flip expand_dims mean square zeros where ones_like ones maximum "
    "linspace sign roll less_equal less greater_equal greater tile sin minimum meshgrid float32 "
    "eye exp clip broadcast_to arctan arange trace tanh tan sinh power not_equal multiply max "
    "matmul logical_xor logical_or logical_not logical_and log isnan floor equal empty divide "
    "cosh cos concatenate ceil broadcast_arrays arctanh arctan2 arcsinh arcsin arccosh arccos "
    "add tensordot"
).split()


def test_numpy_has_every_name_mindflow_uses():
    assert [n for n in _MINDFLOW_MNP if not hasattr(mnp, n)] == []
    assert [n for n in mnp._SAME_AS_OPS if not hasattr(mnp, n)] == []
    x = np.array([0.2, 0.5])
    for name in ("arcsinh", "arctanh", "cosh", "tan"):
        np.testing.assert_allclose(
            _np(getattr(mnp, name)(ms.Tensor(x, mstype.float64))), getattr(np, name)(x)
        )
    np.testing.assert_allclose(
        _np(mnp.arccosh(ms.Tensor(x + 1, mstype.float64))), np.arccosh(x + 1)
    )


def test_numpy_creation_and_grids():
    assert mnp.zeros((2, 3)).dtype == mstype.float32 and mnp.ones(4, mstype.int32).dtype == np.int32
    np.testing.assert_array_equal(_np(mnp.full((2, 2), 7)), np.full((2, 2), 7))
    np.testing.assert_array_equal(_np(mnp.eye(3, 4, 1)), np.eye(3, 4, 1, dtype=np.float32))
    np.testing.assert_array_equal(_np(mnp.arange(1, 7, 2)), np.arange(1, 7, 2))
    np.testing.assert_allclose(_np(mnp.arange(0.0, 1.0, 0.25)), np.arange(0.0, 1.0, 0.25))
    out, step = mnp.linspace(0.0, 2.0, 5, retstep=True)
    np.testing.assert_allclose(_np(out), np.linspace(0.0, 2.0, 5))
    assert step == 0.5
    np.testing.assert_allclose(_np(mnp.linspace(0.0, 1.0, 4, endpoint=False)), [0, 0.25, 0.5, 0.75])
    x, y, z = np.arange(3.0), np.arange(4.0), np.arange(2.0)
    for indexing in ("xy", "ij"):
        for got, want in zip(
            mnp.meshgrid(x, y, z, indexing=indexing), np.meshgrid(x, y, z, indexing=indexing)
        ):
            np.testing.assert_array_equal(_np(got), want)
    for got, want in zip(mnp.meshgrid(x, y, sparse=True), np.meshgrid(x, y, sparse=True)):
        np.testing.assert_array_equal(_np(got), want)
    a = np.arange(24.0).reshape(2, 3, 4)
    ta = ms.Tensor(a, mstype.float64)
    for got, want in zip(mnp.split(ta, 2), np.split(a, 2)):
        np.testing.assert_array_equal(_np(got), want)
    for got, want in zip(mnp.split(ta, [1, 3], axis=2), np.split(a, [1, 3], axis=2)):
        np.testing.assert_array_equal(_np(got), want)
    np.testing.assert_array_equal(_np(mnp.trace(ta, 1, 1, 2)), np.trace(a, 1, 1, 2))
    np.testing.assert_array_equal(
        _np(mnp.vstack([ta[0, 0], ta[1, 0]])), np.vstack([a[0, 0], a[1, 0]])
    )
    np.testing.assert_array_equal(_np(mnp.hstack([ta[0], ta[1]])), np.hstack([a[0], a[1]]))
    b1, b2 = mnp.broadcast_arrays(ta[0, :, :1], ta[1, :1])
    np.testing.assert_array_equal(_np(b1), np.broadcast_arrays(a[0, :, :1], a[1, :1])[0])
    assert b2.shape == (3, 4)
    with pytest.raises(TypeError, match="out= is not supported"):
        mnp.sum(ta, out=ta)
    with pytest.raises(AttributeError, match="no attribute 'no_such_fn'"):
        mnp.no_such_fn  # noqa: B018


def test_numpy_functions_are_differentiable():
    x = np.array([0.3, 1.2, 2.0])
    g = ms.grad(lambda t: mnp.sum(mnp.sqrt(t) * mnp.exp(t)))(ms.Tensor(x, mstype.float64))
    np.testing.assert_allclose(_np(g), np.exp(x) * (np.sqrt(x) + 0.5 / np.sqrt(x)), rtol=1e-13)


# ---- Primitive classes (generated) ---------------------------------------------------------------
_A = np.random.default_rng(7).uniform(0.5, 2.0, (2, 3))
_B = np.random.default_rng(8).uniform(0.5, 2.0, (2, 3))

# class -> (constructor args, call args, numpy reference of the call)
_PRIM_CASES = {
    "Add": ((), (_A, _B), _A + _B),
    "Sub": ((), (_A, _B), _A - _B),
    "Mul": ((), (_A, _B), _A * _B),
    "Div": ((), (_A, _B), _A / _B),
    "RealDiv": ((), (_A, _B), _A / _B),
    "Pow": ((), (_A, _B), _A**_B),
    "Maximum": ((), (_A, _B), np.maximum(_A, _B)),
    "Sqrt": ((), (_A,), np.sqrt(_A)),
    "Rsqrt": ((), (_A,), 1 / np.sqrt(_A)),
    "Square": ((), (_A,), _A**2),
    "Exp": ((), (_A,), np.exp(_A)),
    "Log": ((), (_A,), np.log(_A)),
    "Sin": ((), (_A,), np.sin(_A)),
    "Tanh": ((), (_A,), np.tanh(_A)),
    "Sigmoid": ((), (_A,), 1 / (1 + np.exp(-_A))),
    "ReLU": ((), (_A - 1,), np.maximum(_A - 1, 0)),
    "Abs": ((), (-_A,), _A),
    "Neg": ((), (_A,), -_A),
    "Select": ((), (_A > 1, _A, _B), np.where(_A > 1, _A, _B)),
    "Cast": ((), (_A, mstype.int32), _A.astype(np.int32)),
    "OnesLike": ((), (_A,), np.ones_like(_A)),
    "ZerosLike": ((), (_A,), np.zeros_like(_A)),
    "Identity": ((), (_A,), _A),
    "ReduceMean": ((), (_A, 1), _A.mean(1)),
    "ReduceSum": ((True,), (_A, (0, 1)), _A.sum(keepdims=True)),
    "ReduceMax": ((), (_A,), _A.max()),
    "ReduceMin": ((False,), (_A, 0), _A.min(0)),
    "ReduceProd": ((), (_A, -1), _A.prod(-1)),
    "Argmax": ((), (_A,), np.argmax(_A, -1).astype(np.int32)),
    "CumSum": ((), (_A, 1), np.cumsum(_A, 1)),
    "L2Normalize": ((1,), (_A,), _A / np.sqrt((_A**2).sum(1, keepdims=True))),
    "Concat": ((1,), ((_A, _B),), np.concatenate([_A, _B], 1)),
    "Stack": ((-1,), ((_A, _B),), np.stack([_A, _B], -1)),
    "Transpose": ((), (_A, (1, 0)), _A.T),
    "Reshape": ((), (_A, (3, 2)), _A.reshape(3, 2)),
    "ExpandDims": ((), (_A, 1), _A[:, None]),
    "Squeeze": ((1,), (_A[:, :1],), _A[:, 0]),
    "Flatten": ((), (_A[:, :, None],), _A),
    "Tile": ((), (_A, (2, 1)), np.tile(_A, (2, 1))),
    "BroadcastTo": (((4, 2, 3),), (_A,), np.broadcast_to(_A, (4, 2, 3))),
    "Gather": ((), (_A, np.array([2, 0]), 1), _A[:, [2, 0]]),
    "Pad": ((((1, 0), (0, 2)),), (_A,), np.pad(_A, ((1, 0), (0, 2)))),
    "MatMul": ((False, True), (_A, _B), _A @ _B.T),
    "BatchMatMul": ((True,), (_A[None], _B[None]), (_A.T @ _B)[None]),
    "Einsum": (("ij,kj->ik",), ((_A, _B),), _A @ _B.T),
    "Softmax": ((), (_A,), np.exp(_A) / np.exp(_A).sum(-1, keepdims=True)),
    "LogSoftmax": ((0,), (_A,), _A - np.log(np.exp(_A).sum(0, keepdims=True))),
    "Zeros": ((), ((2, 2), mstype.float32), np.zeros((2, 2))),
    "Ones": ((), ((2,), mstype.float32), np.ones(2)),
    "Fill": ((), (mstype.float64, (2,), 3.0), np.full(2, 3.0)),
    "Eye": ((), (2, 3, mstype.float32), np.eye(2, 3)),
}


def test_primitive_classes_match_numpy():
    for name, (init, args, want) in _PRIM_CASES.items():
        prim = getattr(ops, name)(*init)
        targs = [
            ms.Tensor(a, mstype.float64)
            if isinstance(a, np.ndarray) and a.dtype != bool and name not in ("Gather",)
            else (ms.Tensor(a) if isinstance(a, np.ndarray) else a)
            for a in args
        ]
        if name in ("Concat", "Stack", "Einsum"):
            targs = [tuple(ms.Tensor(a, mstype.float64) for a in args[0])]
        if name == "Gather":
            targs[0] = ms.Tensor(args[0], mstype.float64)
        got = prim(*targs)
        np.testing.assert_allclose(_np(got), want, rtol=1e-12, err_msg=name)


def test_primitive_classes_generated_from_the_table():
    assert P.Concat is ops.Concat and issubclass(ops.Concat, ops.Primitive)
    for name, cls in PRIMITIVE_CLASSES.items():
        assert cls.__name__ == name and name in cls.__doc__
    assert ops.ReduceMean(keep_dims=True).attrs == {"keep_dims": True}
    with pytest.raises(TypeError, match="unexpected argument 'keepdims'"):
        ops.ReduceMean(keepdims=True)
    with pytest.raises(TypeError, match="missing the constructor argument 'shape'"):
        ops.BroadcastTo()
    x = ms.Tensor(_A, mstype.float64)
    assert ops.Shape()(x) == (2, 3) and ops.Rank()(x) == 2 and ops.DType()(x) == np.float64
    assert ops.Size()(x) == 6
    parts = ops.Split(1, 3)(x)
    assert len(parts) == 3 and all(_np(p).shape == (2, 1) for p in parts)
    idx, val = ops.ArgMaxWithValue(axis=1)(x)
    np.testing.assert_array_equal(_np(idx), _A.argmax(1))
    np.testing.assert_array_equal(_np(val), _A.max(1))
    values, _ = ops.TopK()(x, 2)
    np.testing.assert_array_equal(_np(values), -np.sort(-_A, 1)[:, :2])

    class MyPrim(ops.Primitive):
        def __call__(self, x):
            return x * self.attrs["k"]

    assert float(MyPrim().add_prim_attr("k", 3.0)(ms.Tensor(2.0))) == 6.0


def test_primitive_classes_are_differentiable():
    x = ms.Tensor(_A, mstype.float64)
    concat, mean, transpose = ops.Concat(1), P.ReduceMean(), ops.Transpose()
    g = ms.grad(lambda t: mean(transpose(concat((t, t * t)), (1, 0))))(x)
    np.testing.assert_allclose(_np(g), (1 + 2 * _A) / 12, rtol=1e-13)


def test_resize_nearest_neighbor():
    x = np.arange(12.0).reshape(1, 1, 3, 4)
    out = _np(P.ResizeNearestNeighbor((6, 2))(ms.Tensor(x)))
    np.testing.assert_array_equal(out, x[:, :, [0, 0, 1, 1, 2, 2]][:, :, :, [0, 2]])
    out = _np(P.ResizeNearestNeighbor((5, 7), align_corners=True)(ms.Tensor(x)))
    rows = np.floor(np.arange(5) * 2 / 4 + 0.5).astype(int)
    cols = np.floor(np.arange(7) * 3 / 6 + 0.5).astype(int)
    np.testing.assert_array_equal(out, x[:, :, rows][:, :, :, cols])


# ---- ops.cast / select / interpolate -------------------------------------------------------------
def test_cast_and_select():
    x = ms.Tensor([1.7, -2.2])
    assert ops.cast(x, mstype.int32).dtype == np.int32
    np.testing.assert_array_equal(_np(ops.cast(x, mstype.int32)), [1, -2])
    np.testing.assert_array_equal(_np(ops.select(x > 0, x, -x)), np.float32([1.7, 2.2]))


def _linear_reference(a, axis, n_out, align_corners):
    """Linear resampling of numpy ``a`` along ``axis`` with np.interp (PyTorch/MindSpore's
    source coordinates)."""
    n_in = a.shape[axis]
    dst = np.arange(n_out)
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    else:
        src = np.clip((dst + 0.5) * n_in / n_out - 0.5, 0, None)
    return np.apply_along_axis(lambda v: np.interp(src, np.arange(n_in), v), axis, a)


@pytest.mark.parametrize("align_corners", [False, True])
def test_interpolate_bilinear_and_trilinear(align_corners):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 4, 5))
    out = ops.interpolate(ms.Tensor(x), size=(7, 3), mode="bilinear", align_corners=align_corners)
    want = _linear_reference(_linear_reference(x, 2, 7, align_corners), 3, 3, align_corners)
    np.testing.assert_allclose(_np(out), want, rtol=1e-12)
    v = rng.standard_normal((1, 2, 3, 4, 2))
    out = ops.interpolate(
        ms.Tensor(v), scale_factor=2.0, mode="trilinear", align_corners=align_corners
    )
    want = v
    for axis, n in ((2, 6), (3, 8), (4, 4)):
        want = _linear_reference(want, axis, n, align_corners)
    np.testing.assert_allclose(_np(out), want, rtol=1e-12)


def test_interpolate_nearest_and_area():
    x = np.arange(10.0).reshape(1, 2, 5)
    out = _np(ops.interpolate(ms.Tensor(x), size=8))
    np.testing.assert_array_equal(out, x[:, :, np.floor(np.arange(8) * 5 / 8).astype(int)])
    out = _np(ops.interpolate(ms.Tensor(x), size=3, mode="nearest-exact"))
    np.testing.assert_array_equal(out, x[:, :, np.floor((np.arange(3) + 0.5) * 5 / 3).astype(int)])
    y = np.arange(16.0).reshape(1, 1, 4, 4)
    out = _np(ops.interpolate(ms.Tensor(y), size=(2, 2), mode="area"))
    np.testing.assert_allclose(out, y.reshape(1, 1, 2, 2, 2, 2).mean((3, 5)))
    with pytest.raises(ValueError, match="exactly one of size and scale_factor"):
        ops.interpolate(ms.Tensor(x))
    with pytest.raises(ValueError, match="'bilinear' needs 4-D input"):
        ops.interpolate(ms.Tensor(x), size=4, mode="bilinear")


def test_interpolate_gradients():
    x = np.random.default_rng(10).standard_normal((1, 1, 3, 4))
    for kwargs in (
        {"size": (5, 3), "mode": "bilinear"},
        {"size": (5, 6), "mode": "bilinear", "align_corners": True},
        {"scale_factor": 2.0, "mode": "nearest"},
    ):
        assert core.testing.gradcheck(lambda t, kw=kwargs: ops.interpolate(t, **kw), [x], order=2)


# ---- ops.rand* -----------------------------------------------------------------------------------
def test_random_ops():
    u = _np(ops.rand(200, 50))
    assert u.shape == (200, 50) and u.dtype == np.float32 and 0 <= u.min() and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.01
    n = _np(ops.randn((100, 100), dtype=mstype.float64))
    assert n.dtype == np.float64 and abs(n.mean()) < 0.03 and abs(n.std() - 1) < 0.03
    r = _np(ops.randint(3, 7, (1000,)))
    assert set(np.unique(r)) == {3, 4, 5, 6}
    like = ms.Tensor(np.zeros((4, 5)), mstype.float64)
    assert ops.rand_like(like).dtype == np.float64 and ops.randn_like(like).shape == (4, 5)
    assert ops.randint_like(ms.Tensor(np.zeros(3, np.int32)), 0, 2).dtype == np.int32
    assert sorted(_np(ops.randperm(6)).tolist()) == list(range(6))
    s = _np(ops.normal((2000,), ms.Tensor(3.0), ms.Tensor(0.5)))
    assert abs(s.mean() - 3) < 0.05 and abs(s.std() - 0.5) < 0.05
    with pytest.raises(ValueError, match=r"high .* must be greater"):
        ops.randint(5, 5, (2,))


def test_random_ops_seeds():
    core.set_seed(11)
    a = _np(ops.rand(3, 4))
    core.set_seed(11)
    np.testing.assert_array_equal(a, _np(ops.rand(3, 4)))
    first = [_np(ops.randn(5, seed=123)) for _ in range(2)]
    assert not np.array_equal(first[0], first[1])  # a seeded op still draws anew each call
    p1, p2 = _np(ops.randperm(8, seed=5)), _np(ops.randperm(8, seed=5))
    assert sorted(p1.tolist()) == sorted(p2.tolist()) == list(range(8))


def test_random_ops_under_jit_draw_anew():
    f = ms.jit(lambda x: x + ops.rand(3))
    a, b = _np(f(ops.zeros(3))), _np(f(ops.zeros(3)))
    assert not np.array_equal(a, b) and (a >= 0).all() and (a < 1).all()
