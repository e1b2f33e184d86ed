"""softmax, normalization, dropout, linear, attention and losses: values against numpy/scipy
(and PyTorch when installed), derivatives of order 1 and 2, vmap, errors."""

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops
from diffsci.core.testing import gradcheck


def _rng(seed=0):
    return np.random.default_rng(seed)


def _t(a):
    return core.Tensor(np.asarray(a))


def _np(x):
    return x.asnumpy()


# ---- softmax / log_softmax ------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_values(axis):
    x = _rng().standard_normal((3, 4, 5)) * 3
    np.testing.assert_allclose(
        _np(ops.softmax(_t(x), axis)), scipy.special.softmax(x, axis), rtol=1e-12
    )
    np.testing.assert_allclose(
        _np(ops.log_softmax(_t(x), axis)),
        scipy.special.log_softmax(x, axis),
        rtol=1e-12,
        atol=1e-12,
    )


def test_softmax_is_stable_and_handles_inf():
    x = np.array([[1000.0, 1001.0, -1000.0], [-np.inf, 0.0, 0.0], [-np.inf, -np.inf, -np.inf]])
    with np.errstate(invalid="ignore"):  # the all -inf row divides 0 by 0
        s = _np(ops.softmax(_t(x)))
    np.testing.assert_allclose(s[0], scipy.special.softmax(x[0]), rtol=1e-12)
    np.testing.assert_allclose(s[1], [0.0, 0.5, 0.5])
    assert np.isnan(s[2]).all()  # 0 / 0, as in PyTorch
    ls = _np(ops.log_softmax(_t(x[:2])))
    np.testing.assert_allclose(ls[0], scipy.special.log_softmax(x[0]), rtol=1e-12)
    np.testing.assert_allclose(ls[1], [-np.inf, np.log(0.5), np.log(0.5)])
    x32 = np.array([80.0, 90.0, 100.0], np.float32)
    out = ops.softmax(_t(x32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(_np(out), scipy.special.softmax(x32.astype(np.float64)), rtol=1e-5)
    assert ops.softmax(_t(np.arange(3))).dtype == np.float32  # integers are promoted


@pytest.mark.parametrize("fn", [ops.softmax, ops.log_softmax])
@pytest.mark.parametrize("axis", [0, -1])
def test_softmax_gradcheck(fn, axis):
    x = _rng(1).standard_normal((3, 4))
    gradcheck(lambda x: fn(x, axis), [x], order=2)


def test_softmax_and_log_softmax_jacobians():
    x = _rng(2).standard_normal(5)
    s = scipy.special.softmax(x)
    jac = _np(core.jacrev(lambda x: ops.softmax(x))(_t(x)))
    np.testing.assert_allclose(jac, np.diag(s) - np.outer(s, s), rtol=1e-12, atol=1e-15)
    jac = _np(core.jacrev(lambda x: ops.log_softmax(x))(_t(x)))
    np.testing.assert_allclose(jac, np.eye(5) - s[None, :], rtol=1e-12, atol=1e-15)
    # second order through log_softmax's rule: Hessian of log(sum(exp x)) == d softmax / dx
    hess = _np(core.jacrev(core.grad(lambda x: -ops.log_softmax(x)[0]))(_t(x)))
    np.testing.assert_allclose(hess, np.diag(s) - np.outer(s, s), rtol=1e-10, atol=1e-14)


def test_softmax_vmap():
    x = _rng(3).standard_normal((4, 3, 5))
    for fn in (ops.softmax, ops.log_softmax):
        got = _np(core.vmap(lambda r, fn=fn: fn(r, 0), in_axes=1)(_t(x)))
        ref = np.stack([_np(fn(_t(x[:, i]), 0)) for i in range(3)])
        np.testing.assert_allclose(got, ref, rtol=1e-12)


# ---- normalization -----------------------------------------------------------------------------------
def _ref_norm(x, axes, eps):
    mu = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mu) / np.sqrt(var + eps)


def test_layer_norm_values_and_grad():
    rng = _rng(4)
    x = rng.standard_normal((2, 3, 4, 5)) * 2 + 1
    w, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    got = _np(ops.layer_norm(_t(x), (4, 5), _t(w), _t(b), eps=1e-3))
    np.testing.assert_allclose(got, _ref_norm(x, (2, 3), 1e-3) * w + b, rtol=1e-10)
    got = _np(ops.layer_norm(_t(x), 5))
    np.testing.assert_allclose(got, _ref_norm(x, (3,), 1e-5), rtol=1e-10)
    gradcheck(lambda x, w, b: ops.layer_norm(x, 5, w, b), [x[0, 0, :2], w[0], b[0]], order=2)


def test_group_norm_values_and_grad():
    rng = _rng(5)
    x = rng.standard_normal((2, 6, 3, 2))
    w, b = rng.standard_normal(6), rng.standard_normal(6)
    got = _np(ops.group_norm(_t(x), 3, _t(w), _t(b)))
    ref = (
        _ref_norm(x.reshape(2, 3, -1), (2,), 1e-5).reshape(x.shape) * w[:, None, None]
        + b[:, None, None]
    )
    np.testing.assert_allclose(got, ref, rtol=1e-10)
    gradcheck(lambda x, w, b: ops.group_norm(x, 2, w, b), [x[:1, :4, :2], w[:4], b[:4]], order=2)


def test_batch_norm_training_and_eval():
    rng = _rng(6)
    x = rng.standard_normal((4, 3, 2, 5)) * 2 + 3
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    rm, rv = rng.standard_normal(3), rng.random(3) + 0.5
    out, new_m, new_v = ops.batch_norm(
        _t(x), _t(rm), _t(rv), _t(w), _t(b), training=True, momentum=0.2
    )
    ref = _ref_norm(x, (0, 2, 3), 1e-5) * w[:, None, None] + b[:, None, None]
    np.testing.assert_allclose(_np(out), ref, rtol=1e-10)
    np.testing.assert_allclose(_np(new_m), 0.8 * rm + 0.2 * x.mean(axis=(0, 2, 3)), rtol=1e-12)
    np.testing.assert_allclose(
        _np(new_v), 0.8 * rv + 0.2 * x.var(axis=(0, 2, 3), ddof=1), rtol=1e-12
    )
    out = ops.batch_norm(_t(x), _t(rm), _t(rv), _t(w), _t(b))
    ref = (x - rm[:, None, None]) / np.sqrt(rv[:, None, None] + 1e-5) * w[:, None, None] + b[
        :, None, None
    ]
    np.testing.assert_allclose(_np(out), ref, rtol=1e-10)
    # dense features [N, C]; no running statistics
    out, m, v = ops.batch_norm(_t(x[:, :, 0, 0]), None, None, training=True)
    assert m is None and v is None
    np.testing.assert_allclose(_np(out), _ref_norm(x[:, :, 0, 0], (0,), 1e-5), rtol=1e-10)


def test_batch_norm_grad():
    rng = _rng(7)
    x = rng.standard_normal((3, 2, 2))
    w, b = rng.standard_normal(2), rng.standard_normal(2)
    rm, rv = np.zeros(2), np.ones(2)
    gradcheck(lambda x, w, b: ops.batch_norm(x, rm, rv, w, b, training=True)[0], [x, w, b], order=2)
    gradcheck(lambda x, w, b: ops.batch_norm(x, rm, rv + 0.5, w, b), [x, w, b], order=2)
    # the running statistics carry no gradient
    g = core.grad(lambda x: ops.batch_norm(x, _t(rm), _t(rv), training=True)[1].sum())(_t(x))
    np.testing.assert_array_equal(_np(g), 0.0)


def test_norm_vmap():
    rng = _rng(8)
    x = rng.standard_normal((3, 2, 4, 5))
    for fn in (
        lambda a: ops.layer_norm(a, 5),
        lambda a: ops.group_norm(a, 2),
        lambda a: ops.batch_norm(a, None, None, training=True)[0],
    ):
        got = _np(core.vmap(fn)(_t(x)))
        np.testing.assert_allclose(got, np.stack([_np(fn(_t(x[i]))) for i in range(3)]), rtol=1e-12)


def test_norm_errors():
    x = _t(np.zeros((2, 6, 3)))
    with pytest.raises(
        ValueError,
        match=r"layer_norm: input of shape \(2, 6, 3\) does not end with normalized_shape \(6,\)",
    ):
        ops.layer_norm(x, 6)
    with pytest.raises(ValueError, match=r"layer_norm: weight of shape \(2,\) should be \(3,\)"):
        ops.layer_norm(x, 3, _t(np.ones(2)))
    with pytest.raises(
        ValueError, match=r"group_norm: 6 channels of input \(2, 6, 3\) do not split into 4 groups"
    ):
        ops.group_norm(x, 4)
    with pytest.raises(ValueError, match="batch_norm: expected more than 1 value per channel"):
        ops.batch_norm(_t(np.zeros((1, 3))), None, None, training=True)
    with pytest.raises(ValueError, match="batch_norm: running_mean and running_var are needed"):
        ops.batch_norm(x, None, None)
    with pytest.raises(
        ValueError, match=r"batch_norm: running_mean of shape \(3,\) should be \(6,\)"
    ):
        ops.batch_norm(x, _t(np.zeros(3)), _t(np.ones(6)))


# ---- dropout ---------------------------------------------------------------------------------------------
def test_dropout():
    x = _t(np.ones((200, 100)))
    assert ops.dropout(x, 0.3, training=False) is x
    assert ops.dropout(x, 0.0) is x
    np.testing.assert_array_equal(_np(ops.dropout(x, 1.0)), 0.0)
    core.set_seed(3)
    y = _np(ops.dropout(x, 0.25))
    assert set(np.unique(y)) == {0.0, 1.0 / 0.75}
    assert abs((y == 0).mean() - 0.25) < 0.02
    core.set_seed(3)
    np.testing.assert_array_equal(_np(ops.dropout(x, 0.25)), y)  # repeatable
    core.set_seed(4)
    xv = _rng(9).standard_normal((5, 6))
    g = _np(core.grad(lambda a: (ops.dropout(a, 0.5) * 2.0).sum())(_t(xv)))
    assert set(np.unique(g)) <= {0.0, 4.0}
    assert ops.dropout(_t(np.ones(3, np.float32)), 0.5).dtype == np.float32
    with pytest.raises(ValueError, match=r"dropout: probability p=1.5"):
        ops.dropout(x, 1.5)


# ---- linear -------------------------------------------------------------------------------------------------
def test_linear():
    rng = _rng(10)
    w, b = rng.standard_normal((4, 3)), rng.standard_normal(4)
    for shape in [(3,), (5, 3), (2, 5, 3)]:
        x = rng.standard_normal(shape)
        np.testing.assert_allclose(_np(ops.linear(_t(x), _t(w), _t(b))), x @ w.T + b, rtol=1e-12)
    np.testing.assert_allclose(_np(ops.dense(_t(x), _t(w))), x @ w.T, rtol=1e-12)
    gradcheck(lambda x, w, b: ops.linear(x, w, b), [x[0], w, b], order=2)
    got = _np(core.vmap(lambda w: ops.linear(_t(x), w))(_t(np.stack([w, 2 * w]))))
    np.testing.assert_allclose(got, np.stack([x @ w.T, 2 * x @ w.T]), rtol=1e-12)
    with pytest.raises(
        ValueError,
        match=r"linear: input of shape \(2, 5, 3\) does not match weight \[out, in\] of shape \(3, 4\)",
    ):
        ops.linear(_t(x), _t(w.T))
    with pytest.raises(ValueError, match=r"linear: bias of shape \(3,\) should be \(4,\)"):
        ops.linear(_t(x), _t(w), _t(b[:3]))


# ---- attention ---------------------------------------------------------------------------------------------
def _ref_attention(q, k, v, bias=None, mask=None, scale=None):
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if bias is not None:
        s = s + bias
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    return scipy.special.softmax(s, axis=-1) @ v


def test_attention_values():
    rng = _rng(11)
    q, k, v = (
        rng.standard_normal((2, 3, 4, 5)),
        rng.standard_normal((2, 3, 6, 5)),
        rng.standard_normal((2, 3, 6, 7)),
    )
    bias = rng.standard_normal((3, 4, 6))
    mask = rng.random((2, 1, 4, 6)) > 0.3
    mask[..., 0] = True
    np.testing.assert_allclose(
        _np(ops.scaled_dot_product_attention(_t(q), _t(k), _t(v))),
        _ref_attention(q, k, v),
        rtol=1e-10,
    )
    got = ops.scaled_dot_product_attention(
        _t(q), _t(k), _t(v), bias=_t(bias), mask=_t(mask), scale=0.3
    )
    np.testing.assert_allclose(_np(got), _ref_attention(q, k, v, bias, mask, 0.3), rtol=1e-10)
    causal = np.tri(4, 6, dtype=bool)
    got = ops.scaled_dot_product_attention(_t(q), _t(k), _t(v), is_causal=True, mask=_t(mask))
    np.testing.assert_allclose(_np(got), _ref_attention(q, k, v, mask=mask & causal), rtol=1e-10)
    # broadcasting: one key/value set for every head
    got = ops.scaled_dot_product_attention(_t(q), _t(k[:, :1]), _t(v[:, :1]))
    np.testing.assert_allclose(_np(got), _ref_attention(q, k[:, :1], v[:, :1]), rtol=1e-10)


def test_attention_fully_masked_row_is_uniform():
    rng = _rng(12)
    q, k, v = rng.standard_normal((2, 3)), rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    mask = np.ones((2, 4), bool)
    mask[1] = False
    out = _np(ops.scaled_dot_product_attention(_t(q), _t(k), _t(v), mask=_t(mask)))
    np.testing.assert_allclose(out[1], v.mean(axis=0), rtol=1e-12)
    assert np.isfinite(out).all()
    q32 = _t(q.astype(np.float16))
    out = ops.scaled_dot_product_attention(
        q32, _t(k.astype(np.float16)), _t(v.astype(np.float16)), mask=_t(mask)
    )
    assert out.dtype == np.float16 and np.isfinite(_np(out)).all()


def test_attention_grad_and_vmap():
    rng = _rng(13)
    q, k, v = (
        rng.standard_normal((2, 3, 2)),
        rng.standard_normal((2, 4, 2)),
        rng.standard_normal((2, 4, 3)),
    )
    bias = rng.standard_normal((3, 4))
    mask = np.tri(3, 4, dtype=bool)
    gradcheck(
        lambda q, k, v, b: ops.scaled_dot_product_attention(q, k, v, bias=b, mask=mask),
        [q, k, v, bias],
        order=2,
    )
    f = lambda q, k, v: ops.scaled_dot_product_attention(q, k, v, bias=_t(bias))  # noqa: E731
    got = _np(core.vmap(f, in_axes=(0, 0, None))(_t(q), _t(k), _t(v[0])))
    ref = np.stack([_np(f(_t(q[i]), _t(k[i]), _t(v[0]))) for i in range(2)])
    np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_attention_errors():
    q = _t(np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: q \(3, 4\), k \(5, 3\)"):
        ops.scaled_dot_product_attention(q, _t(np.zeros((5, 3))), _t(np.zeros((5, 2))))
    with pytest.raises(TypeError, match="mask must be boolean"):
        ops.scaled_dot_product_attention(q, q, q, mask=_t(np.ones((3, 3))))


# ---- losses ---------------------------------------------------------------------------------------------
def _reduce(loss, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda a: a}[reduction](loss)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(reduction):
    rng = _rng(14)
    p, t = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    d = p - t
    np.testing.assert_allclose(
        _np(ops.mse_loss(_t(p), _t(t), reduction)), _reduce(d * d, reduction), rtol=1e-12
    )
    np.testing.assert_allclose(
        _np(ops.l1_loss(_t(p), _t(t), reduction)), _reduce(np.abs(d), reduction), rtol=1e-12
    )
    for beta in (0.5, 1.0):
        ref = np.where(np.abs(d) < beta, 0.5 * d * d / beta, np.abs(d) - 0.5 * beta)
        got = ops.smooth_l1_loss(_t(p), _t(t), reduction, beta=beta)
        np.testing.assert_allclose(_np(got), _reduce(ref, reduction), rtol=1e-12)
    np.testing.assert_allclose(
        _np(ops.smooth_l1_loss(_t(p), _t(t), reduction, beta=0.0)), _reduce(np.abs(d), reduction)
    )
    rel = np.linalg.norm(d, axis=1) / np.linalg.norm(t, axis=1)
    np.testing.assert_allclose(
        _np(ops.relative_l2_loss(_t(p), _t(t), reduction)), _reduce(rel, reduction), rtol=1e-12
    )


def test_regression_loss_grads():
    rng = _rng(15)
    p, t = rng.standard_normal((3, 2, 2)), rng.standard_normal((3, 2, 2))
    for fn in (ops.mse_loss, ops.l1_loss, ops.smooth_l1_loss, ops.relative_l2_loss):
        gradcheck(fn, [p, t], order=2)
    # the relative L2 loss has a zero (not NaN) gradient where prediction == target
    g = _np(core.grad(lambda a: ops.relative_l2_loss(a, _t(t)))(_t(t)))
    np.testing.assert_array_equal(g, 0.0)


def _ref_ce(logits, target, weight=None, ignore_index=-100, reduction="mean", ls=0.0):
    """PyTorch's documented formula for class-index targets (class axis 1)."""
    c_axis = 1 if logits.ndim >= 2 else 0
    logp = scipy.special.log_softmax(logits, axis=c_axis)
    lp = np.moveaxis(logp, c_axis, -1)  # [..., C]
    n_cls = lp.shape[-1]
    w = np.ones(n_cls) if weight is None else weight
    valid = target != ignore_index
    safe = np.where(valid, target, 0)
    picked = np.take_along_axis(lp, safe[..., None], -1)[..., 0]
    nll = -w[safe] * picked * valid
    smooth = -(lp * w).sum(-1) * valid
    loss = (1 - ls) * nll + ls / n_cls * smooth
    if reduction == "mean":
        return loss.sum() / (w[safe] * valid).sum()
    return _reduce(loss, reduction)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ls", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_class_indices(reduction, ls, weighted):
    rng = _rng(16)
    w = rng.random(4) + 0.1 if weighted else None
    for shape in [(5, 4), (3, 4, 2, 3)]:
        logits = rng.standard_normal(shape) * 2
        target = rng.integers(0, 4, (shape[0], *shape[2:]))
        target.reshape(-1)[1] = -100
        got = ops.cross_entropy(
            _t(logits),
            _t(target),
            None if w is None else _t(w),
            reduction=reduction,
            label_smoothing=ls,
        )
        ref = _ref_ce(logits, target, w, reduction=reduction, ls=ls)
        np.testing.assert_allclose(_np(got), ref, rtol=1e-12)
        logp = scipy.special.log_softmax(logits, axis=1)
        if ls == 0.0:
            got = ops.nll_loss(
                _t(logp), _t(target), None if w is None else _t(w), reduction=reduction
            )
            np.testing.assert_allclose(_np(got), ref, rtol=1e-12)
    # unbatched logits [C] with a scalar target, and a custom ignore_index
    np.testing.assert_allclose(
        _np(ops.cross_entropy(_t(logits[0, :, 0, 0]), _t(np.array(2)))),
        -scipy.special.log_softmax(logits[0, :, 0, 0])[2],
    )
    t = np.array([1, 3, 3])
    np.testing.assert_allclose(
        _np(ops.cross_entropy(_t(logits[:3, :, 0, 0]), _t(t), ignore_index=3)),
        -scipy.special.log_softmax(logits[0, :, 0, 0])[1],
        rtol=1e-12,
    )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_probabilities(reduction):
    rng = _rng(17)
    logits = rng.standard_normal((3, 4, 2))
    probs = scipy.special.softmax(rng.standard_normal((3, 4, 2)), axis=1)
    w = rng.random(4)
    for ls, weight in [(0.0, None), (0.3, w)]:
        t = probs * (1 - ls) + ls / 4
        ref = -(
            scipy.special.log_softmax(logits, axis=1)
            * t
            * (1 if weight is None else weight[:, None])
        ).sum(1)
        got = ops.cross_entropy(
            _t(logits),
            _t(probs),
            None if weight is None else _t(weight),
            reduction=reduction,
            label_smoothing=ls,
        )
        np.testing.assert_allclose(_np(got), _reduce(ref, reduction), rtol=1e-12)


def test_cross_entropy_grad_and_vmap():
    rng = _rng(18)
    logits, w = rng.standard_normal((3, 4)), rng.random(4)
    target = np.array([0, 3, -100])
    gradcheck(lambda x: ops.cross_entropy(x, target, _t(w), label_smoothing=0.1), [logits], order=2)
    probs = scipy.special.softmax(rng.standard_normal((3, 4)), axis=1)
    gradcheck(lambda x, p: ops.cross_entropy(x, p), [logits, probs], order=2)
    gradcheck(lambda x: ops.nll_loss(x, np.array([1, 2, 0]), reduction="sum"), [logits], order=2)
    per = _np(core.vmap(lambda x, t: ops.cross_entropy(x, t))(_t(logits), _t(np.array([0, 3, 1]))))
    ref = -scipy.special.log_softmax(logits, axis=1)[np.arange(3), [0, 3, 1]]
    np.testing.assert_allclose(per, ref, rtol=1e-12)


def test_loss_errors():
    p = _t(np.zeros((3, 4)))
    with pytest.raises(
        ValueError, match=r"mse_loss: input of shape \(3, 4\) and target of shape \(4,\) differ"
    ):
        ops.mse_loss(p, _t(np.zeros(4)))
    with pytest.raises(ValueError, match="l1_loss: reduction must be"):
        ops.l1_loss(p, p, reduction="avg")
    with pytest.raises(ValueError, match=r"cross_entropy: target of shape \(4,\) should be \(3,\)"):
        ops.cross_entropy(p, _t(np.zeros(4, np.int64)))
    with pytest.raises(
        ValueError, match=r"cross_entropy: target contains class 4 outside \[0, 4\)"
    ):
        ops.cross_entropy(p, _t(np.array([0, 4, 1])))
    with pytest.raises(ValueError, match=r"cross_entropy: probability target of shape \(3, 5\)"):
        ops.cross_entropy(p, _t(np.zeros((3, 5))))
    with pytest.raises(ValueError, match=r"nll_loss: weight of shape \(3,\) should be \(4,\)"):
        ops.nll_loss(p, _t(np.array([0, 1, 2])), _t(np.ones(3)))


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 4), c=st.integers(2, 5), ls=st.floats(0.0, 0.5), seed=st.integers(0, 100))
def test_cross_entropy_random(n, c, ls, seed):
    rng = _rng(seed)
    logits, target = rng.standard_normal((n, c)) * 3, rng.integers(0, c, n)
    got = ops.cross_entropy(_t(logits), _t(target), label_smoothing=ls)
    np.testing.assert_allclose(_np(got), _ref_ce(logits, target, ls=ls), rtol=1e-10)


# ---- PyTorch comparison ---------------------------------------------------------------------------------
@pytest.mark.parity
def test_against_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    T = torch.tensor
    rng = _rng(19)

    def close(a, b):
        np.testing.assert_allclose(_np(a), b.detach().numpy(), rtol=1e-10, atol=1e-12)

    x = rng.standard_normal((2, 6, 3, 4))
    w, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    close(ops.layer_norm(_t(x), (3, 4), _t(w), _t(b)), F.layer_norm(T(x), (3, 4), T(w), T(b)))
    wc, bc = rng.standard_normal(6), rng.standard_normal(6)
    close(ops.group_norm(_t(x), 3, _t(wc), _t(bc)), F.group_norm(T(x), 3, T(wc), T(bc)))
    rm, rv = rng.standard_normal(6), rng.random(6) + 0.5
    trm, trv = T(rm), T(rv)
    out, new_m, new_v = ops.batch_norm(
        _t(x), _t(rm), _t(rv), _t(wc), _t(bc), training=True, momentum=0.3
    )
    close(out, F.batch_norm(T(x), trm, trv, T(wc), T(bc), training=True, momentum=0.3))
    close(new_m, trm)
    close(new_v, trv)
    close(
        ops.batch_norm(_t(x), _t(rm), _t(rv), _t(wc), _t(bc)),
        F.batch_norm(T(x), T(rm), T(rv), T(wc), T(bc)),
    )
    close(ops.softmax(_t(x), 1), F.softmax(T(x), 1))
    close(ops.log_softmax(_t(x), 1), F.log_softmax(T(x), 1))
    q, k, v = (
        rng.standard_normal((2, 3, 4, 5)),
        rng.standard_normal((2, 3, 6, 5)),
        rng.standard_normal((2, 3, 6, 7)),
    )
    mask = rng.random((4, 6)) > 0.3
    mask[:, 0] = True
    close(
        ops.scaled_dot_product_attention(_t(q), _t(k), _t(v), mask=_t(mask), scale=0.2),
        F.scaled_dot_product_attention(T(q), T(k), T(v), attn_mask=T(mask), scale=0.2),
    )
    bias = rng.standard_normal((4, 6))
    close(
        ops.scaled_dot_product_attention(_t(q), _t(k), _t(v), bias=_t(bias), is_causal=True),
        F.scaled_dot_product_attention(
            T(q), T(k), T(v), attn_mask=T(bias) + T(np.where(np.tri(4, 6), 0.0, -np.inf))
        ),
    )
    wl, bl = rng.standard_normal((2, 4)), rng.standard_normal(2)
    close(ops.linear(_t(x), _t(wl), _t(bl)), F.linear(T(x), T(wl), T(bl)))
    logits = rng.standard_normal((5, 4, 3))
    target = rng.integers(0, 4, (5, 3))
    target[0, 0] = -100
    wcls = rng.random(4)
    for red in ("mean", "sum", "none"):
        close(
            ops.cross_entropy(
                _t(logits), _t(target), _t(wcls), reduction=red, label_smoothing=0.15
            ),
            F.cross_entropy(T(logits), T(target), T(wcls), reduction=red, label_smoothing=0.15),
        )
        probs = rng.random((5, 4, 3))
        close(
            ops.cross_entropy(_t(logits), _t(probs), _t(wcls), reduction=red, label_smoothing=0.15),
            F.cross_entropy(T(logits), T(probs), T(wcls), reduction=red, label_smoothing=0.15),
        )
        close(
            ops.nll_loss(_t(logits), _t(target), _t(wcls), reduction=red),
            F.nll_loss(T(logits), T(target), T(wcls), reduction=red),
        )
        p, t = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
        close(
            ops.smooth_l1_loss(_t(p), _t(t), red, beta=0.7),
            F.smooth_l1_loss(T(p), T(t), reduction=red, beta=0.7),
        )
        close(ops.mse_loss(_t(p), _t(t), red), F.mse_loss(T(p), T(t), reduction=red))
        close(ops.l1_loss(_t(p), _t(t), red), F.l1_loss(T(p), T(t), reduction=red))


@pytest.mark.parametrize("native", [True, False])
def test_softmax_of_a_large_input_runs_block_by_block_and_matches_scipy(native):
    # more rows than one cache block holds: the native row pass, or (no compiler) the blocked
    # numpy kernel of the CPU backend
    from diffsci.core.backend import cc
    from diffsci.core.backend.cpu_impls import nn as cpu_nn

    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 700, 256)).astype(np.float32) * 4
    x[1, 5] = -np.inf  # a fully masked row gives NaN, as in PyTorch
    assert x.size // 256 > cpu_nn._BLOCK // 256
    with np.errstate(invalid="ignore"):
        if native:
            out = ops.softmax(core.tensor(x), -1).asnumpy()
        else:
            with cc.disabled():
                out = ops.softmax(core.tensor(x), -1).asnumpy()
        ref = scipy.special.softmax(x.astype(np.float64), -1)
    assert np.isnan(out[1, 5]).all()
    ref[1, 5] = 0
    out[1, 5] = 0
    np.testing.assert_allclose(out, ref, rtol=2e-6, atol=1e-7)


def test_layer_norm_primitive_with_affine_gradients_and_batching():
    # weight and bias are applied inside the blocked layer_norm primitive: check its rules
    rng = np.random.default_rng(3)
    x, w, b = (
        rng.standard_normal((3, 4, 5)),
        rng.standard_normal((4, 5)),
        rng.standard_normal((4, 5)),
    )
    core.testing.gradcheck(lambda x, w, b: ops.layer_norm(x, (4, 5), w, b), [x, w, b], order=2)
    ref = (x - x.mean((1, 2), keepdims=True)) / np.sqrt(x.var((1, 2), keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(_np(ops.layer_norm(_t(x), (4, 5), _t(w), _t(b))), ref, rtol=1e-10)
    ws = rng.standard_normal((3, 5))
    batched = core.vmap(lambda w: ops.layer_norm(_t(x[0]), 5, w, _t(b[0])))(_t(ws))
    loop = np.stack([_np(ops.layer_norm(_t(x[0]), 5, _t(wi), _t(b[0]))) for wi in ws])
    np.testing.assert_allclose(_np(batched), loop, rtol=1e-12)
    many = rng.standard_normal((300, 512))  # more rows than one cache block: the blocked path
    out = _np(ops.layer_norm(_t(many), 512, _t(np.full(512, 2.0)), _t(np.full(512, 0.5))))
    z = (many - many.mean(1, keepdims=True)) / np.sqrt(many.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out, 2 * z + 0.5, rtol=1e-10, atol=1e-12)


# ---- log_softmax and layer_norm are primitives (core/prims): their rules, every path ------------
def test_log_softmax_third_order_jit_and_vmap():
    rng = _rng(11)
    x = rng.standard_normal((3, 4))
    # derivatives of order 3: order 2 of the gradient (float64 finite differences)
    gradcheck(core.grad(lambda a: (ops.log_softmax(a, 1) * _t(x)).sum()), [x], order=2)
    gradcheck(lambda a: core.vmap(lambda r: ops.log_softmax(r, 0))(a), [x], order=2)
    loss = lambda a: (ops.log_softmax(a, 0) ** 2).sum()  # noqa: E731
    np.testing.assert_allclose(
        _np(core.jit(core.grad(loss))(_t(x))), _np(core.grad(loss)(_t(x))), rtol=1e-12
    )
    # large logits stay finite: the derivative never forms exp(x) unshifted
    big = np.array([[1000.0, 0.0, -1000.0]])
    g = _np(core.grad(lambda a: ops.log_softmax(a, -1)[0, 1])(_t(big)))
    np.testing.assert_allclose(g, [[-1.0, 1.0, 0.0]], atol=1e-300)
    assert ops.log_softmax(_t(x.astype(np.float32))).dtype == np.float32


@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
def test_layer_norm_is_one_primitive_whatever_the_affine_arguments(affine):
    rng = _rng(12)
    x, w, b = rng.standard_normal((2, 3, 4)), rng.standard_normal(4), rng.standard_normal(4)
    use_w, use_b = affine in ("weight", "both"), affine in ("bias", "both")

    def fn(x, w, b):
        return ops.layer_norm(x, 4, w if use_w else None, b if use_b else None, eps=1e-3)

    ref = _ref_norm(x, (2,), 1e-3) * (w if use_w else 1.0) + (b if use_b else 0.0)
    np.testing.assert_allclose(_np(fn(_t(x), _t(w), _t(b))), ref, rtol=1e-12, atol=1e-14)
    prims = [e.prim.name for e in core.jit(fn).lower(_t(x), _t(w), _t(b)).graph.eqns]
    assert prims == ["layer_norm"]
    gradcheck(fn, [x, w, b], order=2)
    np.testing.assert_allclose(_np(core.jit(fn)(_t(x), _t(w), _t(b))), ref, rtol=1e-12, atol=1e-14)


def test_layer_norm_promotes_mixed_dtypes_and_normalizes_complex_input():
    rng = _rng(13)
    x = rng.standard_normal((3, 6)).astype(np.float32)
    w = rng.standard_normal(6)  # float64
    out = ops.layer_norm(_t(x), 6, _t(w))
    assert out.dtype == np.float64
    np.testing.assert_allclose(_np(out), _ref_norm(x.astype(np.float64), (1,), 1e-5) * w, rtol=1e-6)
    # complex input: the holomorphic (unconjugated) variance, derivatives in JAX's convention
    z = rng.standard_normal((2, 5)) + 1j * rng.standard_normal((2, 5))
    d = z - z.mean(1, keepdims=True)
    ref = d / np.sqrt((d * d).mean(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(_np(ops.layer_norm(_t(z), 5)), ref, rtol=1e-12)
    gradcheck(lambda z: ops.layer_norm(z, 5), [z], order=2)


def test_primitives_declared_fresh_return_new_arrays_and_jit_reuses_them():
    # the lowering records say these results never alias an input: jit may write into them
    from diffsci.core.jit.fuse_softmax import softmax_add
    from diffsci.core.jit.lowering import lowering_of
    from diffsci.core.prims import conv as prims_conv
    from diffsci.core.prims import normalize as prims_normalize
    from diffsci.core.prims import softmax as prims_softmax

    rng = _rng(14)
    x, small = rng.standard_normal((300, 64)), rng.standard_normal((3, 4))
    w, b = rng.standard_normal(64), rng.standard_normal(64)
    calls = [
        (prims_softmax.softmax, (x,), {"axis": 1}),
        (prims_softmax.softmax, (small,), {"axis": 0}),
        (prims_softmax.log_softmax, (x,), {"axis": 1}),
        (prims_normalize.normalize, (x,), {"n_axes": 1, "eps": 1e-5}),
        (prims_normalize.normalize, (small,), {"n_axes": 2, "eps": 1e-5}),
        (prims_normalize.layer_norm, (x, w, b), {"n_axes": 1, "eps": 1e-5}),
        (softmax_add, (x, w), {"axis": 1}),
        (
            prims_conv.fold,
            (rng.standard_normal((2, 1, 1, 3, 3)),),
            {"spatial": (3, 3), "kernel": (1, 1), "stride": (1, 1), "dilation": (1, 1)},
        ),
    ]
    for prim, args, params in calls:
        assert lowering_of(prim).fresh, prim.name
        for impl in (prim.impl, prim.reference):
            out = impl(np, *args, **params)
            assert not any(np.shares_memory(out, a) for a in args), prim.name

    def fn(a, w, b):
        s = ops.softmax(ops.layer_norm(a, 64, w, b), -1)
        return ops.log_softmax(s * 2.0 + 1.0, 0) * 3.0

    lowered = core.jit(fn).lower(_t(x), _t(w), _t(b))
    assert "out=" in lowered.source  # the elementwise steps write into the fresh results
    np.testing.assert_allclose(
        _np(core.jit(fn)(_t(x), _t(w), _t(b))), _np(fn(_t(x), _t(w), _t(b))), rtol=1e-12
    )
