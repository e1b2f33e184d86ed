"""Loss cells against numpy references (and torch.nn when installed)."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import nn
from diffsci.core.testing import gradcheck

RNG = np.random.default_rng(0)
REDUCE = {"mean": np.mean, "sum": np.sum, "none": lambda a: a}


def _t(a):
    return core.tensor(a)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_l1_smooth_l1_match_numpy(reduction):
    x, y = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5))
    d = x - y
    np.testing.assert_allclose(
        nn.MSELoss(reduction)(_t(x), _t(y)).asnumpy(), REDUCE[reduction](d**2), rtol=1e-12
    )
    np.testing.assert_allclose(
        nn.L1Loss(reduction)(_t(x), _t(y)).asnumpy(), REDUCE[reduction](np.abs(d)), rtol=1e-12
    )
    beta = 0.7
    ref = np.where(np.abs(d) < beta, 0.5 * d**2 / beta, np.abs(d) - 0.5 * beta)
    got = nn.SmoothL1Loss(beta=beta, reduction=reduction)(_t(x), _t(y)).asnumpy()
    np.testing.assert_allclose(got, REDUCE[reduction](ref), rtol=1e-12)


def test_defaults_follow_mindspore():
    assert nn.MSELoss().reduction == "mean" and nn.L1Loss().reduction == "mean"
    assert nn.SmoothL1Loss().reduction == "none" and nn.SmoothL1Loss().beta == 1.0
    ce = nn.CrossEntropyLoss()
    assert (ce.reduction, ce.ignore_index, ce.label_smoothing) == ("mean", -100, 0.0)


def test_mse_broadcasts_labels():
    x, y = RNG.standard_normal((3, 4)), RNG.standard_normal((4,))
    np.testing.assert_allclose(
        nn.MSELoss("sum")(_t(x), _t(y)).asnumpy(), ((x - y) ** 2).sum(), rtol=1e-12
    )
    with pytest.raises(ValueError, match="broadcast"):
        nn.MSELoss()(_t(x), _t(RNG.standard_normal(3)))


def test_bad_reduction_and_beta():
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss("avg")
    with pytest.raises(ValueError, match="beta"):
        nn.SmoothL1Loss(beta=0.0)
    with pytest.raises(ValueError, match="label_smoothing"):
        nn.CrossEntropyLoss(label_smoothing=1.5)


def _np_log_softmax(z, axis):
    z = z - z.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def _np_cross_entropy(logits, target, weight, ignore_index, reduction, smoothing):
    """PyTorch's definition, written out for class indices [N, C, *d] / [N, *d]."""
    c = logits.shape[1]
    logp = _np_log_softmax(logits, 1)
    w = np.ones(c) if weight is None else weight
    valid = target != ignore_index
    safe = np.where(valid, target, 0)
    picked = np.take_along_axis(logp, safe[:, None], 1)[:, 0]
    wt = w[safe] * valid
    nll = -picked * wt
    smooth = -(logp * w.reshape((1, c) + (1,) * (logits.ndim - 2))).sum(1) * valid
    loss = (1 - smoothing) * nll + smoothing / c * smooth
    if reduction == "mean":
        return loss.sum() / wt.sum()
    return loss.sum() if reduction == "sum" else loss


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_class_indices(reduction, weighted, smoothing):
    logits = RNG.standard_normal((6, 4, 3))
    target = RNG.integers(0, 4, (6, 3))
    target[0, 1] = target[4, 2] = -100
    weight = RNG.uniform(0.5, 2.0, 4) if weighted else None
    loss = nn.CrossEntropyLoss(
        None if weight is None else _t(weight), reduction=reduction, label_smoothing=smoothing
    )
    got = loss(_t(logits), _t(target)).asnumpy()
    np.testing.assert_allclose(
        got, _np_cross_entropy(logits, target, weight, -100, reduction, smoothing), rtol=1e-10
    )


def test_cross_entropy_ignore_index_and_probabilities():
    logits = RNG.standard_normal((5, 3))
    target = np.array([0, 2, 1, 1, 0])
    got = nn.CrossEntropyLoss(ignore_index=1)(_t(logits), _t(target)).item()
    np.testing.assert_allclose(
        got, _np_cross_entropy(logits, target, None, 1, "mean", 0.0), rtol=1e-12
    )
    probs = RNG.dirichlet(np.ones(3), 5)
    ref = -(probs * _np_log_softmax(logits, 1)).sum(1)
    np.testing.assert_allclose(
        nn.CrossEntropyLoss()(_t(logits), _t(probs)).item(), ref.mean(), rtol=1e-12
    )
    np.testing.assert_allclose(
        nn.CrossEntropyLoss(reduction="none")(_t(logits), _t(probs)).asnumpy(), ref, rtol=1e-12
    )
    # rank-1 logits: one example
    np.testing.assert_allclose(
        nn.CrossEntropyLoss()(_t(logits[0]), _t(np.array(2))).item(),
        -_np_log_softmax(logits[0], 0)[2],
        rtol=1e-12,
    )


def test_nll_loss():
    logp = _np_log_softmax(RNG.standard_normal((4, 3)), 1)
    target = np.array([2, 0, 1, 2])
    w = np.array([1.0, 2.0, 0.5])
    ref = -(logp[np.arange(4), target] * w[target]).sum() / w[target].sum()
    np.testing.assert_allclose(
        nn.NLLLoss(weight=_t(w))(_t(logp), _t(target)).item(), ref, rtol=1e-12
    )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_relative_l2(reduction):
    x, y = RNG.standard_normal((4, 3, 5)), RNG.standard_normal((4, 3, 5))
    per = np.sqrt(((x - y) ** 2).sum((1, 2))) / np.sqrt((y**2).sum((1, 2)))
    got = nn.RelativeL2Loss(reduction)(_t(x), _t(y)).asnumpy()
    np.testing.assert_allclose(got, REDUCE[reduction](per), rtol=1e-12)


def test_loss_base_get_loss_weights():
    base = nn.LossBase("sum")
    x = RNG.standard_normal((3, 2))
    np.testing.assert_allclose(base.get_loss(_t(x), 2.0).item(), 2 * x.sum(), rtol=1e-12)
    np.testing.assert_allclose(nn.LossBase("none").get_loss(_t(x)).asnumpy(), x)


def test_losses_gradcheck():
    logits = RNG.standard_normal((3, 4))
    target = core.tensor(np.array([1, 3, 0]))
    ce = nn.CrossEntropyLoss(weight=_t(np.array([1.0, 0.5, 2.0, 1.0])), label_smoothing=0.1)
    gradcheck(lambda z: ce(z, target), [logits], order=2)
    y = RNG.standard_normal((3, 4))
    gradcheck(lambda a, b: nn.MSELoss()(a, b), [logits, y])
    gradcheck(lambda a, b: nn.SmoothL1Loss(beta=0.5, reduction="sum")(a, b), [logits, y])
    gradcheck(lambda a, b: nn.RelativeL2Loss()(a, b), [logits, y])


@pytest.mark.parity
def test_cross_entropy_matches_torch():
    torch = pytest.importorskip("torch")
    logits = RNG.standard_normal((5, 4, 2))
    target = RNG.integers(0, 4, (5, 2))
    target[1, 0] = 3
    w = RNG.uniform(0.5, 2.0, 4)
    for reduction in ("mean", "sum", "none"):
        ref = torch.nn.CrossEntropyLoss(
            weight=torch.tensor(w), ignore_index=3, reduction=reduction, label_smoothing=0.15
        )(torch.tensor(logits), torch.tensor(target))
        got = nn.CrossEntropyLoss(_t(w), ignore_index=3, reduction=reduction, label_smoothing=0.15)(
            _t(logits), _t(target)
        )
        np.testing.assert_allclose(got.asnumpy(), ref.numpy(), rtol=1e-10)
    ref = torch.nn.SmoothL1Loss(beta=0.3)(torch.tensor(logits), torch.tensor(logits * 0.5))
    got = nn.SmoothL1Loss(beta=0.3, reduction="mean")(_t(logits), _t(logits * 0.5))
    np.testing.assert_allclose(got.item(), ref.item(), rtol=1e-12)
