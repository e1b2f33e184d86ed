"""Learning-rate lists and schedules against MindSpore's formulas (hand-computed values)."""

import math

import numpy as np
import pytest

from diffsci import core
from diffsci.core import Parameter, nn


# ---- lists (mindspore.nn.dynamic_lr); expected values are MindSpore's documented examples -------
def test_piecewise_constant_lr():
    assert (
        nn.piecewise_constant_lr([2, 5, 10], [0.1, 0.05, 0.01])
        == [0.1] * 2 + [0.05] * 3 + [0.01] * 5
    )
    with pytest.raises(ValueError, match="2 entries but learning_rates has 1"):
        nn.piecewise_constant_lr([2, 5], [0.1])
    with pytest.raises(ValueError, match="smaller"):
        nn.piecewise_constant_lr([5, 2], [0.1, 0.2])


def test_exponential_decay_lr():
    got = nn.exponential_decay_lr(0.1, 0.9, total_step=6, step_per_epoch=2, decay_epoch=1)
    np.testing.assert_allclose(got, [0.1, 0.1, 0.09, 0.09, 0.081, 0.081], rtol=1e-14)
    # decay_epoch=2: exponent epoch/2 = 0, 0, 0.5, 0.5, 1, 1 (stair: 0, 0, 0, 0, 1, 1)
    got = nn.exponential_decay_lr(0.1, 0.9, 6, 2, 2)
    np.testing.assert_allclose(
        got, [0.1, 0.1, 0.1 * 0.9**0.5, 0.1 * 0.9**0.5, 0.09, 0.09], rtol=1e-14
    )
    got = nn.exponential_decay_lr(0.1, 0.9, 6, 2, 2, is_stair=True)
    np.testing.assert_allclose(got, [0.1, 0.1, 0.1, 0.1, 0.09, 0.09], rtol=1e-14)


def test_natural_exp_and_inverse_decay_lr():
    got = nn.natural_exp_decay_lr(0.1, 0.9, 6, 2, 2, is_stair=True)
    np.testing.assert_allclose(
        got, [0.1, 0.1, 0.1, 0.1, 0.016529888822158657, 0.016529888822158657], rtol=1e-14
    )
    got = nn.inverse_decay_lr(0.1, 0.5, 6, 1, 1, is_stair=True)
    np.testing.assert_allclose(got, [0.1, 0.1 / 1.5, 0.05, 0.04, 0.1 / 3, 0.1 / 3.5], rtol=1e-14)


def test_cosine_decay_lr():
    got = nn.cosine_decay_lr(0.01, 0.1, total_step=6, step_per_epoch=2, decay_epoch=2)
    np.testing.assert_allclose(got, [0.1, 0.1, 0.055, 0.055, 0.01, 0.01], rtol=1e-14)
    # past decay_epoch the rate stays at min_lr
    assert nn.cosine_decay_lr(0.0, 1.0, 10, 1, 4)[4:] == [0.0] * 6
    with pytest.raises(ValueError, match="greater than min_lr"):
        nn.cosine_decay_lr(0.2, 0.1, 6, 2, 2)


def test_polynomial_decay_lr():
    got = nn.polynomial_decay_lr(0.1, 0.01, 6, 2, 2, power=0.5)
    mid = 0.09 * 0.5**0.5 + 0.01
    np.testing.assert_allclose(got, [0.1, 0.1, mid, mid, 0.01, 0.01], rtol=1e-14)


def test_warmup_lr():
    assert nn.warmup_lr(0.1, total_step=6, step_per_epoch=2, warmup_epoch=2) == [
        0.0,
        0.0,
        0.05,
        0.05,
        0.1,
        0.1,
    ]
    with pytest.raises(ValueError, match="total_step"):
        nn.warmup_lr(0.1, 0, 2, 2)


# ---- schedule objects (mindspore.nn.learning_rate_schedule) -------------------------------------
def _at(schedule, step):
    return float(schedule(core.tensor(step, dtype=core.int32)))


def test_exponential_decay_schedule():
    s = nn.ExponentialDecayLR(0.1, 0.9, decay_steps=4)
    assert _at(s, 2) == pytest.approx(0.1 * 0.9**0.5, rel=1e-14)
    s = nn.ExponentialDecayLR(0.1, 0.9, decay_steps=4, is_stair=True)
    assert [_at(s, k) for k in (0, 3, 4, 9)] == pytest.approx([0.1, 0.1, 0.09, 0.081], rel=1e-14)


def test_cosine_decay_schedule():
    s = nn.CosineDecayLR(0.01, 0.1, decay_steps=4)
    assert _at(s, 2) == pytest.approx(0.055, rel=1e-14)  # MindSpore's documented example
    assert _at(s, 0) == pytest.approx(0.1, rel=1e-14)
    assert _at(s, 1) == pytest.approx(0.01 + 0.045 * (1 + math.cos(math.pi / 4)), rel=1e-14)
    assert _at(s, 4) == pytest.approx(0.01, rel=1e-14)
    assert _at(s, 100) == pytest.approx(0.01, rel=1e-14)


def test_other_decay_schedules():
    assert _at(nn.NaturalExpDecayLR(0.1, 0.9, 4, True), 5) == pytest.approx(
        0.1 * math.exp(-0.9 * 4), rel=1e-14
    )
    assert _at(nn.InverseDecayLR(0.1, 0.9, 4), 2) == pytest.approx(0.1 / 1.45, rel=1e-14)
    poly = nn.PolynomialDecayLR(0.1, 0.01, 4, 0.5)
    assert _at(poly, 2) == pytest.approx(0.09 * 0.5**0.5 + 0.01, rel=1e-14)
    assert _at(poly, 10) == pytest.approx(0.01, rel=1e-14)
    grow = nn.PolynomialDecayLR(0.1, 0.01, 4, 0.5, update_decay_steps=True)
    assert _at(grow, 6) == pytest.approx(0.09 * (1 - 6 / 8) ** 0.5 + 0.01, rel=1e-14)


def test_warmup_schedules():
    w = nn.WarmUpLR(0.1, warmup_steps=2)
    assert [_at(w, k) for k in (0, 1, 2, 5)] == pytest.approx([0.0, 0.05, 0.1, 0.1], rel=1e-14)
    wc = nn.WarmupCosineDecayLR(min_lr=0.01, max_lr=0.1, warmup_steps=4, decay_steps=10)
    assert [_at(wc, k) for k in (0, 2, 4)] == pytest.approx([0.0, 0.05, 0.1], rel=1e-14)
    assert _at(wc, 9) == pytest.approx(0.01 + 0.045 * (1 + math.cos(math.pi * 5 / 10)), rel=1e-14)
    assert _at(wc, 14) == pytest.approx(0.01, rel=1e-14)
    assert _at(wc, 50) == pytest.approx(0.01, rel=1e-14)


def test_schedule_argument_checks():
    with pytest.raises(TypeError, match="decay_steps must be an int"):
        nn.CosineDecayLR(0.0, 0.1, 2.5)
    with pytest.raises(ValueError, match="learning_rate must be > 0"):
        nn.ExponentialDecayLR(-0.1, 0.9, 4)
    with pytest.raises(ValueError, match="greater than min_lr"):
        nn.CosineDecayLR(0.2, 0.1, 4)


def test_optimizer_follows_schedule_and_list_step_by_step():
    lrs = nn.cosine_decay_lr(0.01, 0.1, total_step=6, step_per_epoch=2, decay_epoch=2)
    p = Parameter(np.zeros(1), name="p")
    opt = nn.SGD([p], learning_rate=lrs)
    seen = []
    for _ in range(6):
        seen.append(float(opt.get_lr()))
        opt((core.tensor(np.ones(1)),))
    np.testing.assert_allclose(seen, lrs, rtol=1e-15)
    np.testing.assert_allclose(p.asnumpy(), [-sum(lrs)], rtol=1e-14)


# ---- ReduceLROnPlateau -------------------------------------------------------------------------
def test_reduce_lr_on_plateau():
    p = Parameter(np.zeros(1), name="p")
    opt = nn.SGD([p], learning_rate=1.0)
    sched = nn.ReduceLROnPlateau(opt, factor=0.5, patience=2, threshold=0.0, min_lr=0.2)
    history = []
    for metric in [5.0, 4.0, 4.0, 4.0, 4.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0]:
        sched.step(metric)
        history.append(float(opt.get_lr()))
    # 3 epochs without improvement after the best (4.0) reduce 1.0 -> 0.5; then 3.0 improves;
    # three more flat epochs: 0.25; three more: floor 0.2; then no change
    assert history == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.2, 0.2, 0.2]


def test_reduce_lr_on_plateau_max_mode_and_cooldown():
    p = Parameter(np.zeros(1), name="p")
    opt = nn.Adam([p], learning_rate=0.1)
    sched = nn.ReduceLROnPlateau(opt, mode="max", factor=0.1, patience=0, cooldown=1)
    out = [sched.step(v) for v in [1.0, 2.0, 2.0, 2.0, 2.0]]
    assert out == [False, False, True, False, True]
    assert float(opt.get_lr()) == pytest.approx(1e-3)


def test_reduce_lr_on_plateau_needs_float_learning_rate():
    p = Parameter(np.zeros(1), name="p")
    with pytest.raises(TypeError, match="not a float"):
        nn.ReduceLROnPlateau(nn.SGD([p], learning_rate=nn.WarmUpLR(0.1, 3)))
