"""SteadyFlowWithLoss / UnsteadyFlowWithLoss against numpy rollouts written here."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import nn, ops
from diffsci.mindflow.core import RelativeRMSELoss
from diffsci.mindflow.pde import FlowWithLoss, SteadyFlowWithLoss, UnsteadyFlowWithLoss


class ChannelsFirstLinear(nn.Cell):
    """``[N, I, x...] -> [N, O, x...]``: a pointwise linear map on axis 1."""

    def __init__(self, i, o):
        super().__init__()
        self.w = core.Parameter(core.tensor(np.random.default_rng(1).normal(size=(o, i))))

    def construct(self, x):
        return ops.einsum("oi,ni...->no...", self.w, x)


def _np(t):
    return t.asnumpy().astype(np.float64)


def test_nhwtc_rollout_matches_numpy_loop():
    rng = np.random.default_rng(0)
    t_in, t_out, c = 3, 4, 2
    net = nn.Dense(t_in * c, c)
    w, b = _np(net.weight), _np(net.bias)
    x = rng.normal(size=(2, 5, 6, t_in, c)).astype(np.float32)  # [N, H, W, T, C]
    problem = UnsteadyFlowWithLoss(net, t_in=t_in, t_out=t_out, data_format="NHWTC")
    got = _np(problem.step(core.tensor(x)))
    window, frames = x.astype(np.float64), []
    for _ in range(t_out):
        flat = window.reshape(2, 5, 6, t_in * c)  # frame-major channels
        pred = flat @ w.T + b  # [N, H, W, C]
        frames.append(pred)
        window = np.concatenate([window[..., 1:, :], pred[..., None, :]], axis=-2)
    want = np.stack(frames, axis=-2)
    assert got.shape == (2, 5, 6, t_out, c)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # get_loss: MSE of the last frame only (MindFlow's definition)
    labels = rng.normal(size=want.shape).astype(np.float32)
    loss = float(problem.get_loss(core.tensor(x), core.tensor(labels)).asnumpy())
    assert loss == pytest.approx(np.mean((want[..., -1, :] - labels[..., -1, :]) ** 2), rel=1e-5)


def test_ntchw_rollout_matches_numpy_loop_and_t_in_1():
    rng = np.random.default_rng(2)
    for t_in in (1, 2):
        c = 2
        net = ChannelsFirstLinear(t_in * c, c)
        w = _np(net.w)
        x = rng.normal(size=(3, t_in, c, 7)).astype(np.float32)  # [N, T, C, X]
        problem = UnsteadyFlowWithLoss(net, t_in=t_in, t_out=3, loss_fn=RelativeRMSELoss())
        got = _np(problem.step(core.tensor(x)))
        window, frames = x.astype(np.float64), []
        for _ in range(3):
            pred = np.einsum("oi,nix->nox", w, window.reshape(3, t_in * c, 7))
            frames.append(pred)
            window = np.concatenate([window[:, 1:], pred[:, None]], axis=1)
        want = np.stack(frames, axis=1)  # [N, t_out, C, X]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        labels = rng.normal(size=want.shape)
        loss = float(
            problem.get_loss(core.tensor(x), core.tensor(labels.astype(np.float32))).asnumpy()
        )
        e = np.linalg.norm((want[:, -1] - labels[:, -1]).reshape(3, -1), axis=1)
        e /= np.linalg.norm(labels[:, -1].reshape(3, -1), axis=1)
        assert loss == pytest.approx(e.sum(), rel=1e-5)  # RelativeRMSELoss: reduction 'sum'


def test_steady_loss_and_jit_grad():
    rng = np.random.default_rng(3)
    net = nn.Dense(3, 1)
    problem = SteadyFlowWithLoss(net, loss_fn="l1")
    x = rng.normal(size=(4, 8, 3)).astype(np.float32)
    y = rng.normal(size=(4, 8, 1)).astype(np.float32)
    want = np.mean(np.abs(x @ _np(net.weight).T + _np(net.bias) - y))
    assert float(problem.get_loss(core.tensor(x), core.tensor(y)).asnumpy()) == pytest.approx(
        want, rel=1e-5
    )
    grad_fn = core.value_and_grad(problem.get_loss, None, net.trainable_params())
    eager = grad_fn(core.tensor(x), core.tensor(y))
    compiled = core.jit(grad_fn)(core.tensor(x), core.tensor(y))
    np.testing.assert_allclose(_np(eager[0]), _np(compiled[0]), rtol=1e-6)
    for a, b in zip(eager[1], compiled[1], strict=True):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-7)


def test_bad_arguments():
    net = nn.Dense(2, 1)
    with pytest.raises(TypeError, match="t_in"):
        UnsteadyFlowWithLoss(net, t_in=1.5)
    with pytest.raises(ValueError, match="data_format"):
        UnsteadyFlowWithLoss(net, data_format="NCHW")
    with pytest.raises(TypeError, match="model"):
        SteadyFlowWithLoss(lambda x: x)
    with pytest.raises(NotImplementedError):
        FlowWithLoss(net).get_loss(None, None)
    problem = UnsteadyFlowWithLoss(net, t_in=2, data_format="NHWTC")
    with pytest.raises(ValueError, match=r"3 frames.*t_in=2"):
        problem.step(core.tensor(np.zeros((1, 4, 3, 1), np.float32)))
