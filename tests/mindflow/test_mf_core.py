"""mindflow.core: learning-rate schedules against MindFlow's formulas written out step by step,
losses against their formulas and MindFlow's documented values, MTL weighting's gradient
against finite differences."""

import math

import numpy as np
import pytest

from diffsci import core
from diffsci.mindflow.core import (
    MTLWeightedLoss,
    RegularizedLossCell,
    RelativeRMSELoss,
    batched_hessian,
    batched_jacobian,
    get_loss_metric,
    get_multi_step_lr,
    get_poly_lr,
    get_warmup_cosine_annealing_lr,
)

RNG = np.random.default_rng(3)


# ---- learning-rate schedules ------------------------------------------------------------------


def _poly_reference(global_step, lr_init, lr_end, lr_max, warmup, total, power):
    out = []
    for i in range(total):
        if i < warmup:
            out.append(lr_init + (lr_max - lr_init) / warmup * i)
        else:
            frac = 1.0 - (i - warmup) / (total - warmup)
            out.append(max((lr_max - lr_end) * frac**power + lr_end, 0.0))
    return np.array(out, np.float32)[global_step:]


@pytest.mark.parametrize(
    "args",
    [
        (100, 0.001, 0.1, 0.0001, 1000, 10000, 0.5),  # MindFlow's docstring example
        (0, 0.01, 1e-5, 0.1, 10, 50, 2.0),
        (3, 0.01, 0.0, 0.02, 0, 20, 1.0),
    ],
)
def test_poly_lr(args):
    lr = get_poly_lr(*args)
    assert lr.dtype == np.float32 and lr.shape == (args[5] - args[0],)
    np.testing.assert_allclose(lr, _poly_reference(*args), rtol=1e-6, atol=1e-12)


def test_multi_step_lr():
    # MindFlow's docstring example
    lr = get_multi_step_lr(0.001, [2, 4], 0.1, 3, 5)
    expected = [1e-3] * 6 + [1e-4] * 6 + [1e-5] * 3
    assert lr.dtype == np.float32
    np.testing.assert_allclose(lr, expected, rtol=1e-6)
    # unsorted milestones, one past last_epoch (ignored): epoch e gets lr * gamma^#{M <= e}
    lr = get_multi_step_lr(0.5, (7, 3, 12), 0.5, 2, 10)
    ref = [0.5 * 0.5 ** sum(m <= s // 2 for m in (3, 7)) for s in range(20)]
    np.testing.assert_allclose(lr, ref, rtol=1e-6)


def test_warmup_cosine_annealing_lr():
    # MindFlow's docstring example
    lr = get_warmup_cosine_annealing_lr(0.001, 3, 5, warmup_epochs=1)
    np.testing.assert_allclose(
        lr,
        [3.3333333e-04, 6.6666666e-04, 1.0e-03]
        + [9.0460398e-04] * 3
        + [6.5485400e-04] * 3
        + [3.4614600e-04] * 3
        + [9.6396012e-05] * 3,
        rtol=1e-6,
    )
    lr_init, spe, last, warm, w0, eta = 0.02, 4, 6, 2, 0.001, 1e-4
    lr = get_warmup_cosine_annealing_lr(lr_init, spe, last, warm, w0, eta)
    ref = [w0 + (lr_init - w0) / (warm * spe) * (i + 1) for i in range(warm * spe)]
    for i in range(warm * spe, last * spe):
        epoch = i // spe
        ref.append(eta + 0.5 * (lr_init - eta) * (1 + math.cos(math.pi * epoch / last)))
    np.testing.assert_allclose(lr, ref, rtol=1e-6)


def test_lr_schedules_reject_bad_arguments():
    with pytest.raises(ValueError, match=r"get_poly_lr: lr_init must be > 0\.0, got 0\.0"):
        get_poly_lr(0, 0.0, 0.0, 0.1, 1, 10, 1.0)
    with pytest.raises(TypeError, match="get_poly_lr: total_steps must be int"):
        get_poly_lr(0, 0.1, 0.0, 0.1, 1, 10.0, 1.0)
    with pytest.raises(TypeError, match="milestones must be list or tuple"):
        get_multi_step_lr(0.1, 3, 0.1, 2, 5)
    with pytest.raises(ValueError, match="steps_per_epoch must be > 0"):
        get_warmup_cosine_annealing_lr(0.1, 0, 5)
    with pytest.raises(TypeError, match="warmup_epochs must be int"):
        get_warmup_cosine_annealing_lr(0.1, 2, 5, warmup_epochs=True)


# ---- losses -----------------------------------------------------------------------------------


def test_mtl_weighted_loss_value():
    # MindFlow's docstring: params = 1, losses (1.0, 0.8) -> 0.5 + 0.4 + 2 log 2
    out = MTLWeightedLoss(num_losses=2)((core.tensor(1.0), core.tensor(0.8)))
    np.testing.assert_allclose(out.item(), 2.2862945, rtol=1e-6)
    s = np.array([0.7, -1.3, 2.0])
    losses = np.array([0.3, 1.7, 0.05])
    for bound in (0.0, 0.5):
        mtl = MTLWeightedLoss(3, bound_param=bound, dtype=core.float64)
        mtl.params.set_data(core.tensor(s))
        b2 = bound**2
        if bound:
            ref = np.sum(0.5 * losses / (s**2 + b2) + np.log(s**2 + b2))
        else:
            ref = np.sum(0.5 * losses / s**2 + np.log(s**2 + 1.0))
        got = mtl([core.tensor(v) for v in losses])
        np.testing.assert_allclose(got.item(), ref, rtol=1e-13)
        np.testing.assert_allclose(mtl(core.tensor(losses)).item(), ref, rtol=1e-13)


def test_mtl_weighted_loss_gradient_matches_finite_differences():
    mtl = MTLWeightedLoss(3, dtype=core.float64)
    s0 = np.array([0.9, 1.4, -0.6])
    mtl.params.set_data(core.tensor(s0))
    terms = core.tensor(np.array([0.2, 3.0, 0.01]))

    def total():
        return mtl(terms)

    grads = core.grad(total, None, [mtl.params])()
    g = (grads[0] if isinstance(grads, (tuple, list)) else grads).asnumpy()
    eps = 1e-6
    for i in range(3):
        sp, sm = s0.copy(), s0.copy()
        sp[i] += eps
        sm[i] -= eps
        mtl.params.set_data(core.tensor(sp))
        fp = total().item()
        mtl.params.set_data(core.tensor(sm))
        fm = total().item()
        np.testing.assert_allclose(g[i], (fp - fm) / (2 * eps), rtol=1e-7)
    # and the gradient of the loss terms themselves: 1 / (2 s_i^2)
    mtl.params.set_data(core.tensor(s0))
    gl = core.grad(lambda t: mtl(t))(terms).asnumpy()
    np.testing.assert_allclose(gl, 0.5 / s0**2, rtol=1e-13)


def test_mtl_weighted_loss_errors():
    with pytest.raises(ValueError, match="num_losses must be a positive int, got 0"):
        MTLWeightedLoss(0)
    with pytest.raises(TypeError, match="bound_param must be a float"):
        MTLWeightedLoss(2, bound_param="1")
    with pytest.raises(ValueError, match="expected 2 loss terms"):
        MTLWeightedLoss(2)((core.tensor(1.0),))


def test_relative_rmse_loss():
    # MindFlow's docstring
    pred = core.tensor(np.array([[1, 2, 3], [1, 2, 3], [1, 2, 3]], np.float32))
    lab = core.tensor(np.array([[1, 2, 2], [1, 2, 3], [1, 2, 3]], np.float32))
    np.testing.assert_allclose(RelativeRMSELoss()(pred, lab).item(), 0.33333334, rtol=1e-6)
    x = RNG.standard_normal((4, 3, 5))
    y = RNG.standard_normal((4, 3, 5))
    per = np.sqrt(((x - y) ** 2).sum(axis=(1, 2)) / (y**2).sum(axis=(1, 2)))
    for reduction, ref in (("sum", per.sum()), ("mean", per.mean()), ("none", per)):
        got = RelativeRMSELoss(reduction)(core.tensor(x), core.tensor(y)).asnumpy()
        np.testing.assert_allclose(got, ref, rtol=1e-13)
    with pytest.raises(ValueError, match="same number of values per example"):
        RelativeRMSELoss()(core.tensor(x), core.tensor(y[:2]))


def test_get_loss_metric():
    x, y = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    tx, ty = core.tensor(x), core.tensor(y)
    expected = {
        "mse": np.mean((x - y) ** 2),
        "l2_loss": np.mean((x - y) ** 2),
        "l1": np.mean(np.abs(x - y)),
        "mae_loss": np.mean(np.abs(x - y)),
        "rmse": np.sqrt(np.mean((x - y) ** 2)),
    }
    for name, ref in expected.items():
        np.testing.assert_allclose(get_loss_metric(name)(tx, ty).item(), ref, rtol=1e-13)
    d = np.abs(x - y)
    smooth = np.where(d < 1.0, 0.5 * d**2, d - 0.5)
    np.testing.assert_allclose(get_loss_metric("smooth_l1")(tx, ty).asnumpy(), smooth, rtol=1e-13)
    # MindFlow's docstring: l1 of [1, 2, 3] against [[1, 1, 1], [1, 2, 2]] broadcasts -> 2/3
    got = get_loss_metric("l1_loss")(
        core.tensor([1.0, 2.0, 3.0]), core.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 2.0]])
    )
    np.testing.assert_allclose(got.item(), 0.6666667, rtol=1e-6)
    with pytest.raises(ValueError, match=r"unknown loss function 'huber'; known: \['l1', "):
        get_loss_metric("huber")


def test_regularized_loss_cell():
    p = core.Parameter(core.tensor(np.array([[1.0, -2.0], [0.5, 0.0]])), name="latent")
    np.testing.assert_allclose(RegularizedLossCell(p)().item(), 0.01 * (1 + 4 + 0.25) / 4)
    np.testing.assert_allclose(RegularizedLossCell(p, 0.1, "l1")().item(), 0.1 * 3.5 / 4)
    with pytest.raises(ValueError, match="reg_mode must be one of"):
        RegularizedLossCell(p, reg_mode="l3")


def test_derivatives_are_the_engines():
    assert batched_jacobian is core.batched_jacobian
    assert batched_hessian is core.batched_hessian
