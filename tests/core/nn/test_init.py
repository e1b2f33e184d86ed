"""Initializers: statistics, fans, names, dtypes, reproducibility, use by layers."""

import math

import numpy as np
import pytest

from diffsci import core
from diffsci.core import nn
from diffsci.core.common import initializer as common_init
from diffsci.core.nn import init

SHAPE = (400, 500)  # 200k samples: sample mean/std within ~1% of the truth


def _draw(ini, shape=SHAPE, dtype=core.float64):
    out = ini(shape, dtype)
    assert tuple(out.shape) == tuple(shape) and out.dtype == dtype
    return out.asnumpy()


def test_normal_statistics():
    a = _draw(init.Normal(sigma=0.5, mean=1.0))
    assert abs(a.mean() - 1.0) < 0.005 and abs(a.std() - 0.5) < 0.005
    b = _draw(init.Normal())  # MindSpore's default sigma 0.01
    assert abs(b.std() - 0.01) < 1e-4


def test_uniform_statistics_and_bounds():
    a = _draw(init.Uniform(scale=0.3))
    assert a.min() >= -0.3 and a.max() <= 0.3 and a.max() > 0.299 and a.min() < -0.299
    assert abs(a.std() - 0.3 / math.sqrt(3)) < 0.002
    assert abs(_draw(init.Uniform()).max() - 0.07) < 1e-3  # default scale 0.07


def test_truncated_normal_bounds_and_std():
    sigma, a_, b_ = 1.0, -1.0, 2.0
    a = _draw(init.TruncatedNormal(sigma=sigma, mean=0.0, a=a_, b=b_))
    assert a.min() >= a_ and a.max() <= b_
    from scipy import stats

    ref = stats.truncnorm(a_ / sigma, b_ / sigma, loc=0.0, scale=sigma)
    assert abs(a.mean() - ref.mean()) < 0.01 and abs(a.std() - ref.std()) < 0.01
    small = _draw(init.TruncatedNormal())  # sigma 0.01, bounds +-2: plain N(0, 0.01^2)
    assert abs(small.std() - 0.01) < 2e-4
    with pytest.raises(ValueError, match="a < b"):
        init.TruncatedNormal(a=1.0, b=0.0)
    with pytest.raises(ValueError, match="rejection"):
        init.TruncatedNormal(sigma=0.01, a=1.0, b=2.0)


@pytest.mark.parametrize(
    "shape, fan_in, fan_out",
    [((300, 200), 200, 300), ((16, 8, 3, 5), 120, 240), ((40, 6, 7), 42, 280)],
)
def test_xavier_uniform_and_normal_use_fans(shape, fan_in, fan_out):
    bound = 2.0 * math.sqrt(6.0 / (fan_in + fan_out))
    a = _draw(init.XavierUniform(gain=2.0), shape)
    assert np.abs(a).max() <= bound and np.abs(a).max() > 0.98 * bound
    assert abs(a.std() / (bound / math.sqrt(3)) - 1) < 0.03
    std = 0.5 * math.sqrt(2.0 / (fan_in + fan_out))
    b = _draw(init.XavierNormal(gain=0.5), shape)
    assert abs(b.std() / std - 1) < 0.03


@pytest.mark.parametrize(
    "kwargs, gain",
    [
        ({}, math.sqrt(2.0)),  # leaky_relu with slope 0 == relu
        ({"negative_slope": math.sqrt(5)}, math.sqrt(1.0 / 3.0)),
        ({"nonlinearity": "tanh"}, 5.0 / 3.0),
        ({"nonlinearity": "linear"}, 1.0),
    ],
)
@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
def test_he_uniform_and_normal(kwargs, gain, mode):
    shape = (60, 30, 3, 3)
    fan = 30 * 9 if mode == "fan_in" else 60 * 9
    bound = gain * math.sqrt(3.0 / fan)
    a = _draw(init.HeUniform(mode=mode, **kwargs), shape)
    assert np.abs(a).max() <= bound and np.abs(a).max() > 0.98 * bound
    b = _draw(init.HeNormal(mode=mode, **kwargs), shape)
    assert abs(b.std() / (gain / math.sqrt(fan)) - 1) < 0.04


def test_fans_need_two_dims_and_valid_mode():
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        init.XavierUniform()((5,))
    with pytest.raises(ValueError, match="mode"):
        init.HeNormal(mode="fan_avg")((3, 3))


def test_calculate_gain():
    assert init.calculate_gain("relu") == math.sqrt(2)
    assert init.calculate_gain("leaky_relu") == math.sqrt(2 / (1 + 0.01**2))
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    assert init.calculate_gain("tanh") == 5 / 3 and init.calculate_gain("conv2d") == 1.0
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="unsupported"):
        init.calculate_gain("swoosh")


def test_constants():
    np.testing.assert_array_equal(_draw(init.Zero(), (2, 3)), np.zeros((2, 3)))
    np.testing.assert_array_equal(_draw(init.One(), (2, 3)), np.ones((2, 3)))
    np.testing.assert_array_equal(_draw(init.Constant(2.5), (4,)), np.full(4, 2.5))
    np.testing.assert_array_equal(_draw(init.Identity(), (2, 3)), np.eye(2, 3))


def test_orthogonal():
    q = _draw(init.Orthogonal(gain=2.0), (6, 4))
    np.testing.assert_allclose(q.T @ q, 4.0 * np.eye(4), atol=1e-12)
    q = _draw(init.Orthogonal(), (3, 2, 4))  # rows 3, flattened cols 8: orthonormal rows
    flat = q.reshape(3, 8)
    np.testing.assert_allclose(flat @ flat.T, np.eye(3), atol=1e-12)


@pytest.mark.parametrize("dtype", [core.float32, core.float64, core.float16, core.bfloat16])
def test_dtypes(dtype):
    out = init.initializer("xavier_uniform", (8, 8), dtype)
    assert out.dtype == dtype
    assert init.initializer("normal", (3,)).dtype == core.float32  # the default


def test_initializer_accepts_names_numbers_classes_instances_tensors():
    core.set_seed(5)
    by_name = init.initializer("XAVIER_UNIFORM", (4, 6))
    core.set_seed(5)
    by_inst = init.initializer(init.XavierUniform(), (4, 6))
    core.set_seed(5)
    by_cls = init.initializer(init.XavierUniform, (4, 6))
    np.testing.assert_array_equal(by_name.asnumpy(), by_inst.asnumpy())
    np.testing.assert_array_equal(by_name.asnumpy(), by_cls.asnumpy())
    for name, cls in [
        ("zeros", init.Zero),
        ("ones", init.One),
        ("normal", init.Normal),
        ("uniform", init.Uniform),
        ("truncatednormal", init.TruncatedNormal),
        ("he_uniform", init.HeUniform),
        ("he_normal", init.HeNormal),
        ("xavier_normal", init.XavierNormal),
    ]:
        assert init.get_initializer(name) == cls()
    np.testing.assert_array_equal(init.initializer(3, (2,)).asnumpy(), [3.0, 3.0])
    t = core.tensor(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(init.initializer(t, (2, 3)).asnumpy(), t.asnumpy())
    assert init.initializer(t).dtype == t.dtype  # a Tensor keeps its dtype
    with pytest.raises(ValueError, match=r"shape \(2, 3\).*\(3, 2\)"):
        init.initializer(t, (3, 2))
    with pytest.raises(ValueError, match="unknown name"):
        init.initializer("glorot", (2, 2))
    with pytest.raises(ValueError, match="shape is needed"):
        init.initializer("zeros")
    with pytest.raises(TypeError, match="init must be"):
        init.initializer([1, 2], (2,))


def test_reproducible_under_set_seed():
    core.set_seed(11)
    a = nn.Dense(5, 7).weight.asnumpy()
    b = init.initializer("truncatednormal", (50,)).asnumpy()
    core.set_seed(11)
    np.testing.assert_array_equal(nn.Dense(5, 7).weight.asnumpy(), a)
    np.testing.assert_array_equal(init.initializer("truncatednormal", (50,)).asnumpy(), b)
    core.set_seed(12)
    assert not np.array_equal(nn.Dense(5, 7).weight.asnumpy(), a)


def test_common_initializer_is_the_same_module_api():
    assert common_init.initializer is init.initializer
    assert common_init.HeUniform is init.HeUniform
    assert core.common.initializer.Normal is init.Normal


def test_layers_accept_names_objects_and_tensors():
    d = nn.Dense(3, 2, weight_init="zeros", bias_init=init.Constant(0.5))
    np.testing.assert_array_equal(d.weight.asnumpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(d.bias.asnumpy(), [0.5, 0.5])
    w = core.tensor(np.arange(6.0).reshape(2, 3), dtype=core.float64)
    d = nn.Dense(3, 2, weight_init=w)
    assert d.weight.dtype == core.float64  # a Tensor keeps its dtype (MindSpore)
    np.testing.assert_array_equal(d.weight.asnumpy(), w.asnumpy())
    with pytest.raises(ValueError, match="shape"):
        nn.Dense(3, 3, weight_init=w)
    c = nn.Conv2d(2, 4, 3, weight_init="ones", has_bias=True, bias_init=1.5)
    np.testing.assert_array_equal(c.weight.asnumpy(), np.ones((4, 2, 3, 3)))
    np.testing.assert_array_equal(c.bias.asnumpy(), np.full(4, 1.5))


def test_default_dense_and_conv_init_bounds():
    d = nn.Dense(400, 300)  # HeUniform(sqrt 5): U(+-1/sqrt(fan_in)); bias U(+-1/sqrt(in))
    bound = 1 / math.sqrt(400)
    w = d.weight.asnumpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert np.abs(d.bias.asnumpy()).max() <= bound
    c = nn.Conv2d(16, 64, 5, has_bias=True)
    bound = 1 / math.sqrt(16 * 25)
    assert (
        np.abs(c.weight.asnumpy()).max() <= bound
        and np.abs(c.weight.asnumpy()).max() > 0.98 * bound
    )
    assert np.abs(c.bias.asnumpy()).max() <= bound
    t = nn.Conv2dTranspose(16, 8, 3, has_bias=True)  # weight [16, 8, 3, 3]: fan_in = 8 * 9
    assert np.abs(t.weight.asnumpy()).max() <= 1 / math.sqrt(72)
