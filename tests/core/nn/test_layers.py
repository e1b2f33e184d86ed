"""nn layers against numpy references (written here, the convolutions' in tests/core/_helpers.py)
and torch.nn when installed, plus float64 gradchecks of each layer's output with respect to its
input and its weights."""

import math
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import nn
from diffsci.core.testing import gradcheck

from .._helpers import ref_conv, ref_conv_transpose

F64 = core.float64


def _rng(seed=0):
    return np.random.default_rng(seed)


def _t(a):
    return core.tensor(a)


def _resolve(cell, path):
    *owners, attr = path.split(".")
    for o in owners:
        cell = getattr(cell, o)
    return cell, attr


def layer_fn(cell, names):
    """``f(x, *weights)`` calling ``cell`` with the named Parameters replaced by the arguments
    (so gradcheck can differentiate with respect to them)."""

    def f(x, *weights):
        saved = []
        for name, w in zip(names, weights):
            owner, attr = _resolve(cell, name)
            saved.append((owner, attr, getattr(owner, attr)))
            object.__setattr__(owner, attr, w)  # bypass registration: a temporary stand-in
        try:
            out = cell(x)
            return out[0] if isinstance(out, tuple) else out
        finally:
            for owner, attr, p in saved:
                object.__setattr__(owner, attr, p)

    return f


def check_layer_grads(cell, x, names, order=1, **kw):
    weights = [_resolve(cell, n)[0].__dict__[_resolve(cell, n)[1]].asnumpy() for n in names]
    gradcheck(layer_fn(cell, names), [x, *weights], order=order, **kw)


# ---- Dense ----------------------------------------------------------------------------------------
def test_dense_matches_numpy_on_batch_dims():
    d = nn.Dense(4, 3, activation="tanh", dtype=F64)
    x = _rng().standard_normal((2, 5, 4))
    ref = np.tanh(x @ d.weight.asnumpy().T + d.bias.asnumpy())
    np.testing.assert_allclose(d(_t(x)).asnumpy(), ref, rtol=1e-12)
    assert tuple(d.weight.shape) == (3, 4)
    nb = nn.Dense(4, 3, has_bias=False, activation=nn.ReLU(), dtype=F64)
    assert nb.bias is None and len(nb.trainable_params()) == 1
    np.testing.assert_allclose(
        nb(_t(x[0])).asnumpy(), np.maximum(x[0] @ nb.weight.asnumpy().T, 0), rtol=1e-12
    )
    with pytest.raises(ValueError, match="in_channels=4"):
        d(_t(np.ones((2, 5))))


def test_dense_gradcheck():
    d = nn.Dense(3, 2, activation="tanh", dtype=F64)
    check_layer_grads(d, _rng().standard_normal((4, 3)), ["weight", "bias"], order=2)


# ---- activations ----------------------------------------------------------------------------------
def _np_gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def _np_gelu_exact(x):
    from scipy.special import erf

    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


ACTIVATIONS = [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    (nn.GELU(), _np_gelu_tanh),
    (nn.GELU(approximate=False), _np_gelu_exact),
    (nn.Tanh(), np.tanh),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.Softplus(), lambda x: np.log1p(np.exp(x))),
    (
        nn.Softplus(beta=2.0, threshold=5.0),
        lambda x: np.where(2 * x > 5, x, np.log1p(np.exp(2 * x)) / 2),
    ),
    (nn.LeakyReLU(), lambda x: np.where(x >= 0, x, 0.2 * x)),
    (nn.LeakyReLU(alpha=0.05), lambda x: np.where(x >= 0, x, 0.05 * x)),
    (nn.ELU(), lambda x: np.where(x > 0, x, np.expm1(x))),
    (nn.Sin(), np.sin),
    (nn.Sin(omega=30.0), lambda x: np.sin(30 * x)),
    (nn.Softmax(axis=0), lambda x: np.exp(x) / np.exp(x).sum(0)),
    (nn.LogSoftmax(), lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
    (nn.Identity(), lambda x: x),
]


@pytest.mark.parametrize(
    "cell, ref", ACTIVATIONS, ids=lambda v: type(v).__name__ if isinstance(v, nn.Cell) else ""
)
def test_activations_match_numpy(cell, ref):
    x = _rng().standard_normal((3, 4)) * 3
    np.testing.assert_allclose(cell(_t(x)).asnumpy(), ref(x), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "cell",
    [a[0] for a in ACTIVATIONS if not isinstance(a[0], (nn.ReLU, nn.ReLU6, nn.LeakyReLU))],
    ids=lambda c: type(c).__name__,
)
def test_smooth_activations_gradcheck(cell):
    x = _rng(1).standard_normal((2, 3)) + 0.1  # away from ELU's kink at 0
    gradcheck(cell, [x], order=2)


def test_get_activation():
    assert isinstance(nn.get_activation("ReLU"), nn.ReLU)
    assert isinstance(nn.get_activation("swish"), nn.SiLU)
    assert nn.get_activation(None) is None
    with pytest.raises(KeyError, match="unknown activation"):
        nn.get_activation("mish")
    with pytest.raises(ValueError, match="approximate"):
        nn.GELU(approximate="erf")


# ---- convolution (references: ref_conv, ref_conv_transpose in tests/core/_helpers.py) -----------
def same_pads(sp, k, s, d):
    """MindSpore's 'same' padding, written from its documented rule."""
    pads = []
    for n, kk, ss, dd in zip(sp, k, s, d):
        out = math.ceil(n / ss)
        total = max((out - 1) * ss + dd * (kk - 1) + 1 - n, 0)
        pads.append((total // 2, total - total // 2))
    return pads


CONV = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}
CONV_T = {1: nn.Conv1dTranspose, 2: nn.Conv2dTranspose, 3: nn.Conv3dTranspose}


@settings(max_examples=15, deadline=None)
@given(
    nd=st.sampled_from([1, 2, 3]),
    pad_mode=st.sampled_from(["same", "valid", "pad"]),
    k=st.integers(1, 3),
    s=st.integers(1, 3),
    d=st.integers(1, 2),
    groups=st.sampled_from([1, 2]),
    size=st.integers(5, 7),
    seed=st.integers(0, 10),
)
def test_conv_matches_numpy(nd, pad_mode, k, s, d, groups, size, seed):
    rng = _rng(seed)
    pads = (
        [(int(rng.integers(0, 3)), int(rng.integers(0, 3))) for _ in range(nd)]
        if pad_mode == "pad"
        else 0
    )
    padding = tuple(p for pair in pads for p in pair) if pad_mode == "pad" else 0
    conv = CONV[nd](
        4,
        2 * groups,
        k,
        stride=s,
        pad_mode=pad_mode,
        padding=padding,
        dilation=d,
        group=groups,
        has_bias=True,
        dtype=F64,
    )
    x = rng.standard_normal((2, 4) + (size,) * nd)
    if pad_mode == "same":
        pads = same_pads(x.shape[2:], (k,) * nd, (s,) * nd, (d,) * nd)
    elif pad_mode == "valid":
        pads = [(0, 0)] * nd
    ref = ref_conv(
        x, conv.weight.asnumpy(), conv.bias.asnumpy(), (s,) * nd, pads, (d,) * nd, groups
    )
    out = conv(_t(x)).asnumpy()
    assert out.shape == ref.shape
    if pad_mode == "same":
        assert out.shape[2:] == (math.ceil(size / s),) * nd
    np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-12)


def test_conv_output_sizes_follow_mindspore_docs():
    x = core.ones((1, 3, 10, 11))
    assert nn.Conv2d(3, 5, 3, stride=2)(x).shape == (1, 5, 5, 6)  # same: ceil(in / stride)
    assert nn.Conv2d(3, 5, (3, 4), stride=2, pad_mode="valid")(x).shape == (1, 5, 4, 4)
    assert nn.Conv2d(3, 5, 3, pad_mode="pad", padding=(1, 2, 0, 3), dilation=2)(x).shape == (
        1,
        5,
        9,
        10,
    )
    assert nn.Conv2d(3, 5, 3, pad_mode="pad", padding=(1, 2))(x).shape == (1, 5, 10, 13)


def test_conv_accepts_any_batch_dims_and_unbatched():
    conv = nn.Conv1d(2, 3, 3, has_bias=True, dtype=F64)
    x = _rng().standard_normal((2, 3, 2, 7))
    flat = conv(_t(x.reshape(6, 2, 7))).asnumpy()
    np.testing.assert_allclose(conv(_t(x)).asnumpy(), flat.reshape(2, 3, 3, 7), rtol=1e-12)
    np.testing.assert_allclose(conv(_t(x[0, 0])).asnumpy(), flat[0], rtol=1e-12)
    with pytest.raises(ValueError, match="C_in=2"):
        conv(_t(np.ones((2, 4, 7))))


def test_conv_argument_errors():
    with pytest.raises(ValueError, match="padding must be 0"):
        nn.Conv2d(2, 2, 3, padding=1)
    with pytest.raises(ValueError, match="pad_mode"):
        nn.Conv2d(2, 2, 3, pad_mode="SAME_UPPER")
    with pytest.raises(ValueError, match="divisible by group"):
        nn.Conv2d(3, 4, 3, group=2)
    with pytest.raises(ValueError, match="kernel_size"):
        nn.Conv2d(2, 2, (3, 3, 3))
    with pytest.raises(ValueError, match="padding must be an int"):
        nn.Conv2d(2, 2, 3, pad_mode="pad", padding=(1, 2, 3))
    with pytest.raises(ValueError, match="output_padding"):
        nn.Conv2dTranspose(2, 2, 3, stride=2, output_padding=1)  # needs pad_mode='pad'
    with pytest.raises(ValueError, match="output_padding"):
        nn.Conv2dTranspose(2, 2, 3, stride=2, pad_mode="pad", output_padding=2)
    assert nn.Conv2d(2, 2, 3, pad_mode="VALID").pad_mode == "valid"
    with pytest.raises(ValueError, match=r"Conv2d: only data_format='NCHW'"):
        nn.Conv2d(2, 2, 3, data_format="NHWC")
    with pytest.raises(ValueError, match=r"Conv3d: only data_format='NCDHW'"):
        nn.Conv3d(2, 2, 3, data_format="NCHW")
    assert nn.Conv3d(2, 2, 3, data_format="NCDHW").weight.shape == (2, 2, 3, 3, 3)
    with pytest.raises(TypeError):
        nn.Conv1d(2, 2, 3, output_padding=1)  # only the transposed layers take it


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_gradcheck(nd):
    conv = CONV[nd](
        2,
        2,
        2,
        stride=2 if nd < 3 else 1,
        pad_mode="same",
        group=2 if nd == 1 else 1,
        has_bias=True,
        dtype=F64,
    )
    x = _rng(nd).standard_normal((1, 2) + (3,) * nd)
    check_layer_grads(conv, x, ["weight", "bias"])


# ---- transposed convolution -------------------------------------------------------------------------
def test_conv_transpose_output_sizes_follow_mindspore_docs():
    x = core.ones((1, 3, 16, 50))
    assert nn.Conv2dTranspose(3, 64, 4, pad_mode="pad")(x).shape == (
        1,
        64,
        19,
        53,
    )  # the docs' example
    x = core.ones((2, 3, 5, 6))
    assert nn.Conv2dTranspose(3, 4, 3, stride=2)(x).shape == (2, 4, 10, 12)  # same: in * stride
    assert nn.Conv2dTranspose(3, 4, 3, stride=2, pad_mode="valid")(x).shape == (
        2,
        4,
        11,
        13,
    )  # + max(k - s, 0)
    assert nn.Conv2dTranspose(3, 4, 2, stride=3, pad_mode="valid")(x).shape == (2, 4, 15, 18)
    assert nn.Conv2dTranspose(3, 4, 3, stride=2, dilation=2, pad_mode="valid")(x).shape == (
        2,
        4,
        13,
        15,
    )
    y = nn.Conv2dTranspose(
        3, 4, 3, stride=2, pad_mode="pad", padding=(1, 0, 2, 1), output_padding=1
    )(x)
    assert y.shape == (2, 4, 11 - 1 + 1, 13 - 3 + 1)


@settings(max_examples=15, deadline=None)
@given(
    nd=st.sampled_from([1, 2, 3]),
    pad_mode=st.sampled_from(["same", "valid"]),
    k=st.integers(1, 4),
    s=st.integers(1, 3),
    d=st.integers(1, 2),
    groups=st.sampled_from([1, 2]),
    size=st.integers(2, 4),
    seed=st.integers(0, 10),
)
def test_conv_transpose_is_adjoint_of_conv(nd, pad_mode, k, s, d, groups, size, seed):
    """<conv(x), y> == <x, conv_transpose(y)> with the same weight: MindSpore's output-size
    rule for 'same'/'valid' makes Conv_dTranspose exactly the input-gradient of Conv_d."""
    rng = _rng(seed)
    conv_t = CONV_T[nd](
        2 * groups, 2, k, stride=s, pad_mode=pad_mode, dilation=d, group=groups, dtype=F64
    )
    conv = CONV[nd](
        2,
        2 * groups,
        k,
        stride=s,
        pad_mode=pad_mode,
        dilation=d,
        group=groups,
        weight_init=conv_t.weight,
        dtype=F64,
    )
    y = rng.standard_normal((2, 2 * groups) + (size,) * nd)
    xt = conv_t(_t(y)).asnumpy()
    x = rng.standard_normal(xt.shape)
    cx = conv(_t(x)).asnumpy()
    assert cx.shape == y.shape
    np.testing.assert_allclose((cx * y).sum(), (x * xt).sum(), rtol=1e-10)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_transpose_pad_mode_matches_numpy(nd):
    rng = _rng(nd)
    pads = [(1, 0), (0, 2), (1, 1)][:nd]
    ct = CONV_T[nd](
        4,
        6,
        3,
        stride=2,
        pad_mode="pad",
        padding=tuple(p for pr in pads for p in pr),
        output_padding=1,
        dilation=1,
        group=2,
        has_bias=True,
        dtype=F64,
    )
    x = rng.standard_normal((2, 4) + (4,) * nd)
    full = ref_conv_transpose(x, ct.weight.asnumpy(), stride=2, groups=2)  # no padding: full
    # output j is full[j + lo] for j < full - lo - hi + output_padding; zero past the end of full
    full = np.pad(full, [(0, 0), (0, 0)] + [(0, 1)] * nd)
    ref = full[
        (
            slice(None),
            slice(None),
            *[slice(lo, full.shape[2 + i] - hi) for i, (lo, hi) in enumerate(pads)],
        )
    ]
    ref = ref + ct.bias.asnumpy().reshape((1, 6) + (1,) * nd)
    np.testing.assert_allclose(ct(_t(x)).asnumpy(), ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("nd", [1, 2])
def test_conv_transpose_gradcheck(nd):
    ct = CONV_T[nd](2, 2, 3, stride=2, pad_mode="same", has_bias=True, dtype=F64)
    check_layer_grads(ct, _rng(3).standard_normal((1, 2) + (2,) * nd), ["weight", "bias"])


@pytest.mark.parity
def test_conv_and_transpose_match_torch():
    torch = pytest.importorskip("torch")
    rng = _rng(4)
    x = rng.standard_normal((2, 4, 7, 6))
    conv = nn.Conv2d(
        4,
        6,
        (3, 2),
        stride=(2, 1),
        pad_mode="pad",
        padding=(1, 2),
        dilation=(1, 2),
        group=2,
        has_bias=True,
        dtype=F64,
    )
    tconv = torch.nn.Conv2d(
        4, 6, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2
    ).double()
    with torch.no_grad():
        tconv.weight.copy_(torch.tensor(conv.weight.asnumpy()))
        tconv.bias.copy_(torch.tensor(conv.bias.asnumpy()))
    np.testing.assert_allclose(
        conv(_t(x)).asnumpy(), tconv(torch.tensor(x)).detach().numpy(), rtol=1e-10
    )
    ct = nn.Conv2dTranspose(
        4,
        6,
        3,
        stride=2,
        pad_mode="pad",
        padding=1,
        output_padding=1,
        group=2,
        has_bias=True,
        dtype=F64,
    )
    tct = torch.nn.ConvTranspose2d(
        4, 6, 3, stride=2, padding=1, output_padding=1, groups=2
    ).double()
    with torch.no_grad():
        tct.weight.copy_(torch.tensor(ct.weight.asnumpy()))
        tct.bias.copy_(torch.tensor(ct.bias.asnumpy()))
    np.testing.assert_allclose(
        ct(_t(x)).asnumpy(), tct(torch.tensor(x)).detach().numpy(), rtol=1e-10
    )
    c3 = nn.Conv3d(2, 3, 2, pad_mode="valid", has_bias=True, dtype=F64)
    t3 = torch.nn.Conv3d(2, 3, 2).double()
    with torch.no_grad():
        t3.weight.copy_(torch.tensor(c3.weight.asnumpy()))
        t3.bias.copy_(torch.tensor(c3.bias.asnumpy()))
    x3 = rng.standard_normal((1, 2, 3, 4, 3))
    np.testing.assert_allclose(
        c3(_t(x3)).asnumpy(), t3(torch.tensor(x3)).detach().numpy(), rtol=1e-10
    )


# ---- normalization ----------------------------------------------------------------------------------
def np_layer_norm(x, axes, gamma, beta, eps):
    mu = x.mean(axes, keepdims=True)
    var = x.var(axes, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


def test_layer_norm_matches_numpy():
    rng = _rng(5)
    x = rng.standard_normal((2, 3, 4))
    ln = nn.LayerNorm((4,), gamma_init=nn.init.Normal(1.0, 1.0), beta_init="normal", dtype=F64)
    assert ln.epsilon == 1e-7
    ref = np_layer_norm(x, (-1,), ln.gamma.asnumpy(), ln.beta.asnumpy(), 1e-7)
    np.testing.assert_allclose(ln(_t(x)).asnumpy(), ref, rtol=1e-9)
    ln2 = nn.LayerNorm(
        (3, 4),
        begin_norm_axis=-2,
        begin_params_axis=-2,
        gamma_init=nn.init.Normal(1.0, 1.0),
        dtype=F64,
    )
    ref = np_layer_norm(x, (1, 2), ln2.gamma.asnumpy(), ln2.beta.asnumpy(), 1e-7)
    np.testing.assert_allclose(ln2(_t(x)).asnumpy(), ref, rtol=1e-9)
    # statistics over (3, 4) but parameters only over the last axis
    ln3 = nn.LayerNorm(
        (4,),
        begin_norm_axis=1,
        begin_params_axis=-1,
        gamma_init=nn.init.Normal(1.0, 1.0),
        dtype=F64,
    )
    ref = np_layer_norm(x, (1, 2), ln3.gamma.asnumpy(), ln3.beta.asnumpy(), 1e-7)
    np.testing.assert_allclose(ln3(_t(x)).asnumpy(), ref, rtol=1e-9)
    with pytest.raises(ValueError, match="normalized_shape"):
        ln(_t(np.ones((2, 5))))


def test_layer_norm_gradcheck():
    ln = nn.LayerNorm(
        (3,), gamma_init=nn.init.Normal(1.0, 1.0), beta_init="normal", epsilon=1e-5, dtype=F64
    )
    check_layer_grads(ln, _rng(6).standard_normal((2, 3)), ["gamma", "beta"], order=2)


def test_group_norm_matches_numpy_and_gradcheck():
    rng = _rng(7)
    gn = nn.GroupNorm(2, 4, gamma_init=nn.init.Normal(1.0, 1.0), beta_init="normal", dtype=F64)
    x = rng.standard_normal((3, 4, 5))
    xg = x.reshape(3, 2, 10)
    ref = ((xg - xg.mean(2, keepdims=True)) / np.sqrt(xg.var(2, keepdims=True) + 1e-5)).reshape(
        x.shape
    )
    ref = ref * gn.gamma.asnumpy()[:, None] + gn.beta.asnumpy()[:, None]
    np.testing.assert_allclose(gn(_t(x)).asnumpy(), ref, rtol=1e-9)
    check_layer_grads(gn, x[:1, :, :2], ["gamma", "beta"])
    frozen = nn.GroupNorm(1, 4, affine=False)
    assert frozen.trainable_params() == [] and len(frozen.untrainable_params()) == 2
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(3, 4)


def test_batch_norm_training_updates_moving_statistics():
    rng = _rng(8)
    bn = nn.BatchNorm2d(
        3, momentum=0.8, gamma_init=nn.init.Normal(1.0, 1.0), beta_init="normal", dtype=F64
    )
    assert [p.name for p in bn.untrainable_params()] == ["moving_mean", "moving_variance"]
    x = rng.standard_normal((4, 3, 2, 5)) * 2 + 1
    g, b = bn.gamma.asnumpy()[:, None, None], bn.beta.asnumpy()[:, None, None]
    mu, var = x.mean((0, 2, 3)), x.var((0, 2, 3))
    ref = (x - mu[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5) * g + b
    np.testing.assert_allclose(bn(_t(x)).asnumpy(), ref, rtol=1e-9)
    unbiased = var * 40 / 39
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), 0.8 * 0 + 0.2 * mu, rtol=1e-12)
    np.testing.assert_allclose(bn.moving_variance.asnumpy(), 0.8 * 1 + 0.2 * unbiased, rtol=1e-12)
    # evaluation: moving statistics, no update
    bn.set_train(False)
    mm, mv = bn.moving_mean.asnumpy().copy(), bn.moving_variance.asnumpy().copy()
    ref = (x - mm[:, None, None]) / np.sqrt(mv[:, None, None] + 1e-5) * g + b
    np.testing.assert_allclose(bn(_t(x)).asnumpy(), ref, rtol=1e-9)
    np.testing.assert_array_equal(bn.moving_mean.asnumpy(), mm)
    # use_batch_statistics=True in evaluation: batch statistics, no update
    bn.use_batch_statistics = True
    np.testing.assert_allclose(
        bn(_t(x)).asnumpy(),
        (x - mu[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5) * g + b,
        rtol=1e-9,
    )
    np.testing.assert_array_equal(bn.moving_mean.asnumpy(), mm)
    # use_batch_statistics=False in training: moving statistics
    bn.set_train(True)
    bn.use_batch_statistics = False
    np.testing.assert_allclose(bn(_t(x)).asnumpy(), ref, rtol=1e-9)


def test_batch_norm_1d_shapes_and_errors():
    bn = nn.BatchNorm1d(3, dtype=F64)
    x = _rng(9).standard_normal((5, 3))
    np.testing.assert_allclose(
        bn(_t(x)).asnumpy(), (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-9
    )
    assert bn(_t(np.ones((5, 3, 4)) + np.arange(4))).shape == (5, 3, 4)
    with pytest.raises(ValueError, match=r"\[N, C\] or \[N, C, L\]"):
        bn(_t(np.ones((5, 3, 4, 4))))
    with pytest.raises(ValueError, match="C=3"):
        bn(_t(np.ones((5, 4))))
    with pytest.raises(ValueError, match="momentum"):
        nn.BatchNorm2d(3, momentum=1.5)
    assert nn.BatchNorm2d(3, affine=False).trainable_params() == []


def test_batch_norm_gradcheck_and_update_under_grad():
    bn = nn.BatchNorm1d(2, gamma_init=nn.init.Normal(1.0, 1.0), beta_init="normal", dtype=F64)
    x = _rng(10).standard_normal((4, 2))
    check_layer_grads(bn, x, ["gamma", "beta"])
    bn2 = nn.BatchNorm1d(2, dtype=F64)
    _, grads = core.value_and_grad(lambda x: (bn2(x) ** 3).sum(), None, bn2.trainable_params())(
        _t(x)
    )
    assert len(grads) == 2  # the moving statistics were updated from inside core.grad:
    np.testing.assert_allclose(bn2.moving_mean.asnumpy(), 0.1 * x.mean(0), rtol=1e-12)


@pytest.mark.parity
def test_norms_match_torch():
    torch = pytest.importorskip("torch")
    rng = _rng(11)
    x = rng.standard_normal((4, 6, 3, 5))
    bn = nn.BatchNorm2d(
        6, momentum=0.7, gamma_init=nn.init.Normal(1.0, 1.0), beta_init="normal", dtype=F64
    )
    tbn = torch.nn.BatchNorm2d(6, momentum=0.3).double()  # torch's momentum = 1 - MindSpore's
    with torch.no_grad():
        tbn.weight.copy_(torch.tensor(bn.gamma.asnumpy()))
        tbn.bias.copy_(torch.tensor(bn.beta.asnumpy()))
    for _ in range(2):
        np.testing.assert_allclose(
            bn(_t(x)).asnumpy(), tbn(torch.tensor(x)).detach().numpy(), rtol=1e-9, atol=1e-12
        )
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), tbn.running_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(bn.moving_variance.asnumpy(), tbn.running_var.numpy(), rtol=1e-12)
    bn.set_train(False)
    tbn.eval()
    np.testing.assert_allclose(
        bn(_t(x)).asnumpy(), tbn(torch.tensor(x)).detach().numpy(), rtol=1e-9, atol=1e-12
    )
    gn = nn.GroupNorm(3, 6, gamma_init=nn.init.Normal(1.0, 1.0), beta_init="normal", dtype=F64)
    tgn = torch.nn.GroupNorm(3, 6).double()
    ln = nn.LayerNorm(
        (3, 5),
        -2,
        -2,
        gamma_init=nn.init.Normal(1.0, 1.0),
        beta_init="normal",
        epsilon=1e-5,
        dtype=F64,
    )
    tln = torch.nn.LayerNorm((3, 5)).double()
    with torch.no_grad():
        tgn.weight.copy_(torch.tensor(gn.gamma.asnumpy()))
        tgn.bias.copy_(torch.tensor(gn.beta.asnumpy()))
        tln.weight.copy_(torch.tensor(ln.gamma.asnumpy()))
        tln.bias.copy_(torch.tensor(ln.beta.asnumpy()))
    np.testing.assert_allclose(
        gn(_t(x)).asnumpy(), tgn(torch.tensor(x)).detach().numpy(), rtol=1e-9, atol=1e-12
    )
    np.testing.assert_allclose(
        ln(_t(x)).asnumpy(), tln(torch.tensor(x)).detach().numpy(), rtol=1e-9, atol=1e-12
    )


# ---- dropout ------------------------------------------------------------------------------------------
def test_dropout():
    x = core.ones((200, 500))
    drop = nn.Dropout(p=0.3)
    y = drop(x).asnumpy()
    zeros = (y == 0).mean()
    assert abs(zeros - 0.3) < 0.01
    np.testing.assert_allclose(y[y != 0], 1 / 0.7, rtol=1e-6)
    drop.set_train(False)
    np.testing.assert_array_equal(drop(x).asnumpy(), x.asnumpy())
    assert nn.Dropout(keep_prob=0.9).p == pytest.approx(0.1) and nn.Dropout().p == 0.5
    core.set_seed(3)
    a = nn.Dropout(p=0.5)(x).asnumpy()
    core.set_seed(3)
    np.testing.assert_array_equal(nn.Dropout(p=0.5)(x).asnumpy(), a)
    np.testing.assert_array_equal(nn.Dropout(p=0.0)(x).asnumpy(), x.asnumpy())
    with pytest.raises(ValueError, match="p must be"):
        nn.Dropout(p=1.0)
    with pytest.raises(ValueError, match="not both"):
        nn.Dropout(keep_prob=0.5, p=0.5)


# ---- embedding ------------------------------------------------------------------------------------------
def test_embedding_lookup_one_hot_and_padding():
    emb = nn.Embedding(6, 3, padding_idx=2, embedding_table=nn.init.Normal(1.0))
    table = emb.embedding_table.asnumpy()
    np.testing.assert_array_equal(table[2], 0.0)
    ids = np.array([[0, 2, 5], [5, 1, 2]])
    np.testing.assert_allclose(emb(_t(ids)).asnumpy(), table[ids], rtol=1e-7)
    emb1 = nn.Embedding(6, 3, use_one_hot=True, embedding_table=core.tensor(table))
    np.testing.assert_allclose(emb1(_t(ids)).asnumpy(), table[ids], rtol=1e-6)
    # gradient: scatter-add of the output cotangent into the rows, none into the padding row
    (g,) = core.grad(
        lambda ids: (
            emb(ids) * core.tensor(np.arange(18.0).reshape(2, 3, 3).astype(np.float32))
        ).sum(),
        None,
        emb.trainable_params(),
    )(_t(ids))
    ref = np.zeros((6, 3))
    np.add.at(ref, ids.reshape(-1), np.arange(18.0).reshape(6, 3))
    ref[2] = 0.0
    np.testing.assert_allclose(g.asnumpy(), ref, rtol=1e-6)
    assert emb(_t(np.array(4))).shape == (3,)
    with pytest.raises(TypeError, match="integers"):
        emb(_t(np.array([1.0])))
    assert (
        abs(nn.Embedding(300, 200).embedding_table.asnumpy().std() - 0.01) < 1e-3
    )  # MindSpore 'normal'


# ---- containers -----------------------------------------------------------------------------------------
def test_sequential_cell():
    a, b, c = nn.Dense(2, 3), nn.ReLU(), nn.Dense(3, 1)
    seq = nn.SequentialCell(a, b, c)
    x = core.ones((4, 2))
    np.testing.assert_allclose(seq(x).asnumpy(), c(b(a(x))).asnumpy())
    assert len(seq) == 3 and seq[0] is a and seq[-1] is c and list(seq) == [a, b, c]
    assert isinstance(seq[1:], nn.SequentialCell) and list(seq[1:]) == [b, c]
    assert list(nn.SequentialCell([a, b])) == [a, b]
    seq.append(nn.Tanh())
    assert len(seq) == 4 and isinstance(seq[3], nn.Tanh)
    seq.insert(1, nn.Identity())
    assert [type(m).__name__ for m in seq] == ["Dense", "Identity", "ReLU", "Dense", "Tanh"]
    del seq[1]
    assert [n for n, _ in seq.parameters_and_names()] == [
        "0.weight",
        "0.bias",
        "2.weight",
        "2.bias",
    ]
    seq[1] = nn.Sigmoid()
    assert isinstance(seq[1], nn.Sigmoid)
    named = nn.SequentialCell(OrderedDict([("enc", nn.Dense(2, 2)), ("act", nn.Tanh())]))
    assert [n for n, _ in named.parameters_and_names()] == ["enc.weight", "enc.bias"]
    assert named["act"] is named[1]
    with pytest.raises(TypeError, match="expected a Cell"):
        nn.SequentialCell(nn.ReLU(), lambda x: x)
    with pytest.raises(IndexError):
        seq[10]


def test_cell_list_and_cell_dict():
    layers = nn.CellList([nn.Dense(2, 2), nn.Dense(2, 2)])
    layers.append(nn.Dense(2, 1))
    layers += [nn.Tanh()]
    assert len(layers) == 4 and isinstance(layers[1:3], nn.CellList)

    class Stack(nn.Cell):
        def __init__(self):
            super().__init__()
            self.blocks = layers

        def construct(self, x):
            for blk in self.blocks:
                x = blk(x)
            return x

    net = Stack()
    assert [n for n, _ in net.parameters_and_names()][:3] == [
        "blocks.0.weight",
        "blocks.0.bias",
        "blocks.1.weight",
    ]
    assert net(core.ones((3, 2))).shape == (3, 1)
    del layers[0]
    assert [n for n, _ in layers.cells_and_names()][1:] == ["0", "1", "2"]
    with pytest.raises(NotImplementedError):
        layers(core.ones(2))
    d = nn.CellDict({"a": nn.ReLU(), "b": nn.Dense(2, 2)})
    d["c"] = nn.Tanh()
    assert d.keys() == ["a", "b", "c"] and "b" in d and len(d) == 3
    assert [n for n, _ in d.parameters_and_names()] == ["b.weight", "b.bias"]
    assert isinstance(d.pop("a"), nn.ReLU) and list(d) == ["b", "c"]
    del d["c"]
    d.update([("e", nn.Sin())])
    assert [k for k, _ in d.items()] == ["b", "e"] and len(d.values()) == 2
    with pytest.raises(KeyError, match="shadow"):
        d["training"] = nn.ReLU()
    with pytest.raises(KeyError, match="without"):
        d["a.b"] = nn.ReLU()
    d.clear()
    assert len(d) == 0


# ---- multi-head attention -------------------------------------------------------------------------------
def np_mha(q, k, v, mha, attn_mask=None, key_padding_mask=None):
    """Batch-first reference of MultiheadAttention (no bias_kv / zero_attn): returns out and
    per-head weights [N, H, L, S]."""
    E, H = mha.embed_dim, mha.num_heads
    D = E // H
    if mha.in_proj_weight is not None:
        w = mha.in_proj_weight.asnumpy()
        wq, wk, wv = w[:E], w[E : 2 * E], w[2 * E :]
    else:
        wq, wk, wv = (
            p.asnumpy() for p in (mha.q_proj_weight, mha.k_proj_weight, mha.v_proj_weight)
        )
    b = mha.in_proj_bias.asnumpy() if mha.in_proj_bias is not None else np.zeros(3 * E)
    Q, K, V = q @ wq.T + b[:E], k @ wk.T + b[E : 2 * E], v @ wv.T + b[2 * E :]

    def heads(t):
        return t.reshape(t.shape[0], t.shape[1], H, D).transpose(0, 2, 1, 3)

    s = heads(Q) @ heads(K).transpose(0, 1, 3, 2) / math.sqrt(D)
    if attn_mask is not None:
        s = s + (np.where(attn_mask, -np.inf, 0.0) if attn_mask.dtype == bool else attn_mask)
    if key_padding_mask is not None:
        s = s + np.where(key_padding_mask, -np.inf, 0.0)[:, None, None, :]
    s = s - s.max(-1, keepdims=True)
    p = np.exp(s)
    p = p / p.sum(-1, keepdims=True)
    out = (p @ heads(V)).transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], E)
    ow = mha.out_proj.weight.asnumpy()
    ob = mha.out_proj.bias.asnumpy() if mha.out_proj.bias is not None else 0.0
    return out @ ow.T + ob, p


def test_mha_matches_numpy():
    rng = _rng(12)
    mha = nn.MultiheadAttention(8, 2, batch_first=True, dtype=F64)
    mha.in_proj_bias.set_data(rng.standard_normal(24))
    q, k = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 5, 8))
    attn_mask = rng.random((3, 5)) < 0.3
    attn_mask[:, 0] = False  # every query keeps one key
    kpm = np.zeros((2, 5), bool)
    kpm[1, 3:] = True
    out, w = mha(_t(q), _t(k), _t(k), key_padding_mask=_t(kpm), attn_mask=_t(attn_mask))
    ref_out, ref_p = np_mha(q, k, k, mha, attn_mask, kpm)
    np.testing.assert_allclose(out.asnumpy(), ref_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.asnumpy(), ref_p.mean(1), rtol=1e-10, atol=1e-12)
    out2, none = mha(
        _t(q), _t(k), _t(k), key_padding_mask=_t(kpm), attn_mask=_t(attn_mask), need_weights=False
    )
    assert none is None
    np.testing.assert_allclose(out2.asnumpy(), ref_out, rtol=1e-10, atol=1e-12)
    fmask = rng.standard_normal((2 * 2, 3, 5))
    out3, w3 = mha(_t(q), _t(k), _t(k), attn_mask=_t(fmask), average_attn_weights=False)
    ref_out, ref_p = np_mha(q, k, k, mha, fmask.reshape(2, 2, 3, 5))
    np.testing.assert_allclose(out3.asnumpy(), ref_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w3.asnumpy(), ref_p, rtol=1e-10, atol=1e-12)
    # sequence-first layout and unbatched inputs give the same numbers
    seq_first = nn.MultiheadAttention(8, 2, dtype=F64)
    for name in ("in_proj_weight", "in_proj_bias"):
        getattr(seq_first, name).set_data(getattr(mha, name))
    seq_first.out_proj.weight.set_data(mha.out_proj.weight)
    o_sf, _ = seq_first(
        _t(q.transpose(1, 0, 2)), _t(k.transpose(1, 0, 2)), _t(k.transpose(1, 0, 2))
    )
    o_bf, _ = mha(_t(q), _t(k), _t(k))
    np.testing.assert_allclose(o_sf.asnumpy().transpose(1, 0, 2), o_bf.asnumpy(), rtol=1e-12)
    o_un, w_un = mha(_t(q[0]), _t(k[0]), _t(k[0]))
    np.testing.assert_allclose(o_un.asnumpy(), o_bf.asnumpy()[0], rtol=1e-12)
    assert w_un.shape == (3, 5)


def test_mha_causal_kdim_and_errors():
    rng = _rng(13)
    mha = nn.MultiheadAttention(4, 2, kdim=3, vdim=5, batch_first=True, has_bias=False, dtype=F64)
    assert mha.in_proj_weight is None and mha.in_proj_bias is None and mha.out_proj.bias is None
    assert tuple(mha.k_proj_weight.shape) == (4, 3) and tuple(mha.v_proj_weight.shape) == (4, 5)
    q, k, v = (
        rng.standard_normal((2, 4, 4)),
        rng.standard_normal((2, 4, 3)),
        rng.standard_normal((2, 4, 5)),
    )
    out, w = mha(_t(q), _t(k), _t(v), is_causal=True)
    causal = np.triu(np.ones((4, 4), bool), 1)
    ref_out, ref_p = np_mha(q, k, v, mha, causal)
    np.testing.assert_allclose(out.asnumpy(), ref_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.asnumpy(), ref_p.mean(1), rtol=1e-10, atol=1e-12)
    assert np.all(w.asnumpy()[:, causal] == 0)
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiheadAttention(5, 2)
    with pytest.raises(ValueError, match="attn_mask"):
        mha(_t(q), _t(k), _t(v), attn_mask=_t(np.zeros((3, 3), bool)))
    with pytest.raises(ValueError, match="feature sizes"):
        mha(_t(q), _t(q), _t(v))


def test_mha_dropout_on_weights_only_in_training():
    mha = nn.MultiheadAttention(4, 1, dropout=0.5, batch_first=True, dtype=F64)
    x = _t(_rng(14).standard_normal((1, 6, 4)))
    a, _ = mha(x, x, x)
    b, _ = mha(x, x, x)
    assert not np.allclose(a.asnumpy(), b.asnumpy())
    mha.set_train(False)
    c, _ = mha(x, x, x, need_weights=False)
    d, _ = mha(x, x, x)
    np.testing.assert_allclose(c.asnumpy(), d.asnumpy(), rtol=1e-12)


@pytest.mark.parity
def test_mha_matches_torch():
    torch = pytest.importorskip("torch")
    rng = _rng(15)
    for kwargs in ({}, {"add_bias_kv": True, "add_zero_attn": True}, {"kdim": 3, "vdim": 5}):
        mha = nn.MultiheadAttention(6, 3, **kwargs, dtype=F64)
        tm = torch.nn.MultiheadAttention(6, 3, **kwargs).double()
        with torch.no_grad():
            for name, p in mha.parameters_and_names():
                dict(tm.named_parameters())[name].copy_(torch.tensor(p.asnumpy()))
        kd, vd = kwargs.get("kdim", 6), kwargs.get("vdim", 6)
        q, k, v = (
            rng.standard_normal((4, 2, 6)),
            rng.standard_normal((5, 2, kd)),
            rng.standard_normal((5, 2, vd)),
        )
        kpm = np.zeros((2, 5))
        kpm[0, -2:] = -np.inf  # float masks for both (torch warns when their types differ)
        amask = rng.standard_normal((4, 5))
        out, w = mha(
            _t(q),
            _t(k),
            _t(v),
            key_padding_mask=_t(kpm),
            attn_mask=_t(amask),
            average_attn_weights=False,
        )
        tout, tw = tm(
            torch.tensor(q),
            torch.tensor(k),
            torch.tensor(v),
            key_padding_mask=torch.tensor(kpm),
            attn_mask=torch.tensor(amask),
            average_attn_weights=False,
        )
        np.testing.assert_allclose(out.asnumpy(), tout.detach().numpy(), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(w.asnumpy(), tw.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_mha_gradcheck():
    mha = nn.MultiheadAttention(4, 2, batch_first=True, add_bias_kv=True, dtype=F64)
    x = _rng(16).standard_normal((1, 3, 4))

    class SelfAttn(nn.Cell):
        def __init__(self):
            super().__init__()
            self.mha = mha

        def construct(self, x):
            return self.mha(x, x, x)[0]

    check_layer_grads(
        SelfAttn(),
        x,
        ["mha.in_proj_weight", "mha.in_proj_bias", "mha.out_proj.weight", "mha.bias_k"],
    )
