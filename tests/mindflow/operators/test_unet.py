"""UNet2D: a forward pass written out in numpy from the parameters (convolutions, max pooling,
transposed convolution, batch statistics), MindFlow's parameter names and shapes, data formats and
odd sizes, bad input, gradients against finite differences (float64), jit against eager."""

import numpy as np
import pytest

from diffsci import core
from diffsci.mindflow.cell import UNet2D

RNG = np.random.default_rng(3)
F64 = core.float64


def _conv3(x, w):
    """'same' 3x3 convolution without bias: x [N, C, H, W], w [O, C, 3, 3] -> [N, O, H, W]."""
    h, wd = x.shape[-2:]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    return sum(
        np.einsum("oc,nchw->nohw", w[:, :, a, b], xp[:, :, a : a + h, b : b + wd])
        for a in range(3)
        for b in range(3)
    )


def _bn(x, p, prefix, use_bn):
    if not use_bn:
        return x
    mean = x.mean(axis=(0, 2, 3), keepdims=True)
    var = x.var(axis=(0, 2, 3), keepdims=True)
    g, b = p[prefix + ".gamma"][None, :, None, None], p[prefix + ".beta"][None, :, None, None]
    return (x - mean) / np.sqrt(var + 1e-5) * g + b


def _double(x, p, prefix, use_bn, act):
    i = 3 if use_bn else 2  # index of the second convolution in double_conv
    h = act(
        _bn(_conv3(x, p[f"{prefix}.double_conv.0.weight"]), p, f"{prefix}.double_conv.1", use_bn)
    )
    h = _conv3(h, p[f"{prefix}.double_conv.{i}.weight"])
    return act(_bn(h, p, f"{prefix}.double_conv.{i + 1}", use_bn))


def _maxpool2(x):
    n, c, h, w = x.shape
    x = x[:, :, : h // 2 * 2, : w // 2 * 2]
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def _up2(x, w):
    """kernel 2, stride 2 transposed convolution: every input pixel spreads over a 2x2 block."""
    n, _, h, wd = x.shape
    y = np.einsum("nchw,coab->nohawb", x, w)  # [N, O, h, 2, w, 2]
    return y.reshape(n, w.shape[1], 2 * h, 2 * wd)


def _np_unet(x, p, n_layers, use_bn, act):
    x0 = x
    h = _double(x0, p, "inc", use_bn, act)
    skips = [h]
    for i in range(n_layers):
        h = _double(_maxpool2(h), p, f"layers_down.{i}.conv", use_bn, act)
        skips.append(h)
    for i in range(n_layers):
        up = _up2(h, p[f"layers_up.{i}.up.weight"])
        skip = skips[-i - 2]
        dh, dw = skip.shape[2] - up.shape[2], skip.shape[3] - up.shape[3]
        up = np.pad(up, ((0, 0), (0, 0), (dh // 2, dh - dh // 2), (dw // 2, dw - dw // 2)))
        h = _double(np.concatenate([skip, up], axis=1), p, f"layers_up.{i}.conv", use_bn, act)
    return _conv3(np.concatenate([h, x0], axis=1), p["outc.weight"])


@pytest.mark.parametrize("enable_bn", [False, True])
def test_unet_matches_a_numpy_forward_pass(enable_bn):
    net = UNet2D(2, 3, 4, n_layers=2, data_format="NCHW", enable_bn=enable_bn, dtype=F64)
    p = {k: v.asnumpy() for k, v in net.parameters_and_names()}
    if enable_bn:  # non-trivial affine parameters
        for k, v in net.parameters_and_names():
            if k.endswith((".gamma", ".beta")):
                p[k] = RNG.uniform(0.5, 1.5, v.shape)
                v.set_data(core.tensor(p[k]))
    x = RNG.standard_normal((2, 2, 10, 11))  # odd sizes: pooling floors, up-sampling pads
    expected = _np_unet(x, p, 2, enable_bn, lambda v: np.maximum(v, 0.0))
    np.testing.assert_allclose(net(core.tensor(x)).asnumpy(), expected, atol=1e-11)


def test_unet_names_shapes_and_formats():
    net = UNet2D(3, 2, 4, n_layers=3, dtype=F64)
    shapes = {k: tuple(v.shape) for k, v in net.parameters_and_names()}
    assert shapes["inc.double_conv.0.weight"] == (4, 3, 3, 3)
    assert shapes["inc.double_conv.1.gamma"] == (4,)
    assert shapes["layers_down.2.conv.double_conv.3.weight"] == (32, 32, 3, 3)
    assert shapes["layers_up.0.up.weight"] == (32, 16, 2, 2)  # the deepest up block first
    assert shapes["layers_up.0.conv.double_conv.0.weight"] == (16, 32, 3, 3)
    assert shapes["layers_up.2.conv.double_conv.3.weight"] == (4, 4, 3, 3)
    assert shapes["outc.weight"] == (2, 7, 3, 3)
    assert not any(k.endswith(".bias") for k in shapes)  # MindSpore's convolutions: no bias
    nchw = UNet2D(3, 2, 4, n_layers=3, data_format="NCHW", dtype=F64)
    core.load_param_into_net(nchw, dict(net.parameters_and_names()))
    x = RNG.standard_normal((2, 16, 12, 3))
    y = net(core.tensor(x)).asnumpy()
    assert y.shape == (2, 16, 12, 2)
    y2 = nchw(core.tensor(x.transpose(0, 3, 1, 2))).asnumpy()
    np.testing.assert_allclose(y, y2.transpose(0, 2, 3, 1), atol=1e-12)
    # several batch axes are folded into one (batch statistics over all of them)
    y3 = net(core.tensor(x.reshape(1, 2, 16, 12, 3))).asnumpy()
    np.testing.assert_allclose(y3[0], y, atol=1e-12)


def test_unet_bad_input():
    net = UNet2D(3, 1, 2, n_layers=2)
    with pytest.raises(ValueError, match="looks channels-first: pass data_format='NCHW'"):
        net(core.ones((1, 3, 8, 8)))
    with pytest.raises(ValueError, match="too small for n_layers=2"):
        net(core.ones((1, 3, 3, 3)))
    with pytest.raises(ValueError, match="at least one downsample"):
        UNet2D(3, 1, 2, n_layers=0)
    with pytest.raises(ValueError, match="data_format must be 'NHWC' or 'NCHW'"):
        UNet2D(3, 1, 2, data_format="channels_last")


def test_unet_gradient_matches_finite_differences():
    net = UNet2D(1, 1, 2, n_layers=1, data_format="NCHW", activation="tanh", dtype=F64)
    x = core.tensor(RNG.standard_normal((2, 1, 4, 5)))

    def loss(x):
        return (net(x) ** 2).mean()

    params = net.trainable_params()
    _, grads = core.value_and_grad(loss, None, params)(x)
    eps = 1e-6
    for p, g in zip(params, grads, strict=True):
        base = p.asnumpy().copy()
        idx = tuple(RNG.integers(0, s) for s in base.shape)
        for sign in (1.0, -1.0):
            bumped = base.copy()
            bumped[idx] += sign * eps
            p.set_data(core.tensor(bumped))
            if sign > 0:
                lp = float(loss(x).asnumpy())
            else:
                lm = float(loss(x).asnumpy())
        p.set_data(core.tensor(base))
        assert abs((lp - lm) / (2 * eps) - g.asnumpy()[idx]) < 1e-7, (p.name, idx)


def test_unet_jit_equals_eager():
    net = UNet2D(2, 2, 4, n_layers=2)
    net.set_train(False)
    x = core.tensor(RNG.standard_normal((2, 8, 8, 2)).astype(np.float32))
    np.testing.assert_allclose(core.jit(net)(x).asnumpy(), net(x).asnumpy(), rtol=1e-5, atol=1e-6)
