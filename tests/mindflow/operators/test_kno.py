"""KNO1D/KNO2D: MindFlow's arguments and parameter names, the forward against a numpy
implementation, finite differences in float64, jit, other resolutions, bad input."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core.testing import gradcheck
from diffsci.mindflow.cell import KNO1D, KNO2D

from .test_fno import _swap_params, _t, _weights, numpy_spectral_conv

F64 = core.float64


def numpy_kno(net, x):
    """MindFlow's KNO forward written with numpy: x [B, *grid, C] -> (prediction, reconstruction)."""
    p = {n: v.asnumpy() for n, v in net.parameters_and_names()}
    d = x.ndim - 2

    def enc(u):
        return u @ p["enc.weight"].T + p["enc.bias"]

    def dec(u):
        return u @ p["dec.weight"].T + p["dec.bias"]

    recon = dec(np.tanh(enc(x)))
    z = np.moveaxis(np.tanh(enc(x)), -1, 1)  # [B, channels, *grid]
    z_w = z
    modes = [net.modes] * d
    for _ in range(net.depths):
        z = np.tanh(z + numpy_spectral_conv(z, _weights(net.koopman_layer), modes))
    w0 = p["w0.weight"].reshape(net.channels, net.channels)
    skip = np.einsum("bi...,oi->bo...", z_w, w0) + p["w0.bias"].reshape((-1,) + (1,) * d)
    z = np.tanh(skip + z)
    return dec(np.moveaxis(z, 1, -1)), recon


def test_defaults_and_parameter_names_are_mindflows():
    net = KNO1D()
    assert (net.in_channels, net.channels, net.modes, net.depths, net.resolution) == (
        1,
        32,
        16,
        4,
        1024,
    )
    shapes = {n: tuple(p.shape) for n, p in net.parameters_and_names()}
    assert shapes == {
        "enc.weight": (32, 1),
        "enc.bias": (32,),
        "dec.weight": (1, 32),
        "dec.bias": (1,),
        "koopman_layer._w_re": (32, 32, 16),
        "koopman_layer._w_im": (32, 32, 16),
        "w0.weight": (32, 32, 1),
        "w0.bias": (32,),
    }
    net2 = KNO2D(channels=4, modes=3, resolution=16)
    assert net2.in_channels == 10
    names = [n for n, _ in net2.parameters_and_names()]
    assert "koopman_layer._w_re2" in names and "w0.bias" in names


@pytest.mark.parametrize("d", [1, 2])
def test_forward_matches_numpy(d):
    cls = KNO1D if d == 1 else KNO2D
    net = cls(in_channels=2, channels=4, modes=3, depths=3, resolution=12, compute_dtype=F64)
    rng = np.random.default_rng(d)
    for p in net.koopman_layer.trainable_params():  # large enough that the layers matter
        p.set_data(_t(rng.standard_normal(p.shape) * 0.5))
    x = rng.standard_normal((2, *([12] * d), 2))
    pred, recon = net(_t(x))
    ref_pred, ref_recon = numpy_kno(net, x)
    assert pred.shape == recon.shape == x.shape
    np.testing.assert_allclose(recon.asnumpy(), ref_recon, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(pred.asnumpy(), ref_pred, rtol=1e-10, atol=1e-12)


def test_gradients_match_finite_differences_float64():
    net = KNO2D(in_channels=2, channels=3, modes=2, depths=2, resolution=6, compute_dtype=F64)
    names = ["enc.weight", "koopman_layer._w_re2", "w0.weight", "dec.bias"]
    params = net.parameters_dict()
    run = _swap_params(net, names)
    x = np.random.default_rng(0).standard_normal((2, 6, 6, 2))
    assert gradcheck(run, (_t(x), *[core.tensor(params[n].asnumpy()) for n in names]))


def test_jit_equals_eager_and_other_resolutions():
    net = KNO1D(in_channels=1, channels=8, modes=4, depths=2, resolution=32)
    x = _t(np.random.default_rng(0).standard_normal((3, 32, 1)).astype(np.float32))
    eager, jitted = net(x), core.jit(net)(x)
    for a, b in zip(eager, jitted):
        np.testing.assert_allclose(b.asnumpy(), a.asnumpy(), rtol=1e-5, atol=1e-6)
    fine = _t(np.random.default_rng(1).standard_normal((3, 128, 1)).astype(np.float32))
    assert net(fine)[0].shape == (3, 128, 1)


def test_bad_input():
    with pytest.raises(
        ValueError, match=r"KNO1D: resolution \[16\] .*fewer than modes = 10; lower modes"
    ):
        KNO1D(modes=10, resolution=16)
    with pytest.raises(TypeError, match="channels must be int"):
        KNO1D(channels=8.0)
    net = KNO2D(in_channels=3, channels=4, modes=2, resolution=8)
    with pytest.raises(ValueError, match=r"\(1, 3, 8, 8\).*looks like channels-first"):
        net(_t(np.zeros((1, 3, 8, 8), np.float32)))
    with pytest.raises(
        ValueError, match=r"KNO2D: input grid \[2, 8\] has 2 points on spatial axis 0.*lower modes"
    ):
        net(_t(np.zeros((1, 2, 8, 3), np.float32)))
