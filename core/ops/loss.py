"""Losses: mean squared / absolute / smooth L1 error, negative log-likelihood, cross entropy
(index or probability targets, class weights, label smoothing), relative L2 error.

Reductions and ``ignore_index`` follow MindSpore/PyTorch; the class axis is 1 (0 for a rank-1
input).
"""

from .. import dtypes as _dt
from ..tensor import Tensor
from ._convert import as_tensor, binary_args
from ._nn_args import as_float
from .activation import log_softmax
from .elementwise import abs, astype, not_equal, sqrt, where
from .indexing import one_hot
from .reduction import mean
from .reduction import sum as reduction_sum
from .shape import moveaxis, reshape


def _reduce(loss, reduction, name):
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return reduction_sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{name}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _diff(name, input, target):
    input, target = binary_args(input, target)
    input, target = as_float(input), as_float(target)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(
            f"{name}: input of shape {tuple(input.shape)} and target of shape {tuple(target.shape)} differ"
        )
    return input - target


def mse_loss(input, target, reduction="mean"):
    """Mean squared error ``(input - target)^2`` reduced by ``reduction`` ('mean', 'sum', 'none')."""
    d = _diff("mse_loss", input, target)
    return _reduce(d * d, reduction, "mse_loss")


def l1_loss(input, target, reduction="mean"):
    """Mean absolute error ``|input - target|``."""
    return _reduce(abs(_diff("l1_loss", input, target)), reduction, "l1_loss")


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``beta = 0``: L1)."""
    d = _diff("smooth_l1_loss", input, target)
    a = abs(d)
    if beta <= 0:
        return _reduce(a, reduction, "smooth_l1_loss")
    loss = where(a < beta, (0.5 / beta) * d * d, a - 0.5 * beta)
    return _reduce(loss, reduction, "smooth_l1_loss")


def _check_class_range(name, target, n_cls, ignore_index):
    if type(target) is not Tensor:  # symbolic (jit/vmap): no data-dependent check
        return
    t = target.asnumpy()
    bad = (t != ignore_index) & ((t < 0) | (t >= n_cls))
    if bad.any():
        raise ValueError(f"{name}: target contains class {int(t[bad][0])} outside [0, {n_cls})")


def _nll(name, logp, target, weight, ignore_index, reduction, label_smoothing):
    """Negative log-likelihood of class indices (with label smoothing), PyTorch's reductions."""
    c_axis = 1 if logp.ndim >= 2 else 0
    n_cls = logp.shape[c_axis]
    expect = tuple(d for i, d in enumerate(logp.shape) if i != c_axis)
    if tuple(target.shape) != expect:
        raise ValueError(
            f"{name}: target of shape {tuple(target.shape)} should be {expect} for input {tuple(logp.shape)}"
        )
    _check_class_range(name, target, n_cls, ignore_index)
    wb = None
    if weight is not None:
        weight = astype(as_tensor(weight), logp.dtype)
        if tuple(weight.shape) != (n_cls,):
            raise ValueError(f"{name}: weight of shape {tuple(weight.shape)} should be ({n_cls},)")
        wb = reshape(
            weight, (n_cls,) + (1,) * (logp.ndim - c_axis - 1)
        )  # broadcasts on the class axis
    valid = not_equal(target, ignore_index)
    hot = moveaxis(one_hot(where(valid, target, 0), n_cls, dtype=logp.dtype), -1, c_axis)
    validf = astype(valid, logp.dtype)
    hot_w = hot if wb is None else hot * wb
    nll = -reduction_sum(logp * hot_w, axis=c_axis) * validf  # [N, *d]
    loss = nll
    if label_smoothing > 0.0:
        lw = logp if wb is None else logp * wb
        smooth = -reduction_sum(lw, axis=c_axis) * validf
        loss = (1.0 - label_smoothing) * nll + (label_smoothing / n_cls) * smooth
    if reduction == "mean":
        denom = (
            reduction_sum(validf)
            if wb is None
            else reduction_sum(reduction_sum(hot_w, axis=c_axis) * validf)
        )
        return reduction_sum(loss) / denom
    return _reduce(loss, reduction, name)


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """Negative log-likelihood of class ``target`` under log-probabilities ``input``.

    Args:
        input: ``[N, C]``, ``[N, C, *d]`` or ``[C]`` log-probabilities.
        target: integer class indices ``[N]``, ``[N, *d]`` or ``[]``.
        weight: ``[C]`` per-class weights or None.
        ignore_index: target value that contributes nothing (and is not counted).
        reduction: 'mean' (weighted mean over the non-ignored targets), 'sum' or 'none'.
    """
    logp = as_float(as_tensor(input))
    return _nll("nll_loss", logp, as_tensor(target), weight, ignore_index, reduction, 0.0)


def cross_entropy(
    input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0
):
    """Cross entropy between ``softmax(input)`` over the class axis and ``target``
    (MindSpore/PyTorch ``cross_entropy``).

    Args:
        input: logits ``[N, C]``, ``[N, C, *d]`` or ``[C]`` (class axis 1, or 0 for rank 1).
        target: integer class indices ``[N, *d]``, or class probabilities of the shape of
            ``input`` (a floating tensor).
        weight: ``[C]`` per-class weights or None.
        ignore_index: for index targets, the value that contributes nothing.
        reduction: 'mean', 'sum' or 'none'. For index targets the mean is weighted by
            ``weight[target]``; for probability targets it is over the ``N * prod(d)`` samples.
        label_smoothing: ``eps`` in [0, 1]: the target mixes with the uniform distribution,
            ``(1 - eps) * target + eps / C``.

    Returns:
        The reduced loss (a scalar), or per-sample losses ``[N, *d]`` for 'none'.
    """
    logits = as_float(as_tensor(input))
    target = as_tensor(target)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing={label_smoothing} must be in [0, 1]")
    if logits.ndim == 0:
        raise ValueError("cross_entropy: input must have a class axis, got a 0-d tensor")
    c_axis = 1 if logits.ndim >= 2 else 0
    logp = log_softmax(logits, axis=c_axis)
    if not _dt.is_inexact(target.dtype):
        return _nll("cross_entropy", logp, target, weight, ignore_index, reduction, label_smoothing)
    if tuple(target.shape) != tuple(logits.shape):
        raise ValueError(
            f"cross_entropy: probability target of shape {tuple(target.shape)} should match input {tuple(logits.shape)}"
        )
    n_cls = logits.shape[c_axis]
    t = astype(target, logp.dtype)
    if label_smoothing > 0.0:
        t = t * (1.0 - label_smoothing) + label_smoothing / n_cls
    prod = logp * t
    if weight is not None:
        weight = astype(as_tensor(weight), logp.dtype)
        if tuple(weight.shape) != (n_cls,):
            raise ValueError(
                f"cross_entropy: weight of shape {tuple(weight.shape)} should be ({n_cls},)"
            )
        prod = prod * reshape(weight, (n_cls,) + (1,) * (logits.ndim - c_axis - 1))
    return _reduce(-reduction_sum(prod, axis=c_axis), reduction, "cross_entropy")


def _safe_norm(x, axes):
    """Euclidean norm over ``axes`` whose gradient at 0 is 0 instead of NaN."""
    sq = reduction_sum(x * x, axis=axes)
    pos = sq > 0
    return where(pos, sqrt(where(pos, sq, 1.0)), 0.0)


def relative_l2_loss(input, target, reduction="mean"):
    """Relative L2 error ``||input - target|| / ||target||`` per sample (the neural-operator
    loss of Li et al. 2021, FNO), norms over every axis but the first.

    Args:
        input, target: ``[N, ...]`` (a rank-1 input is one sample).
        reduction: 'mean' over samples, 'sum' or 'none' (``[N]``).
    """
    d = _diff("relative_l2_loss", input, target)
    target = as_float(as_tensor(target))
    if d.ndim <= 1:
        axes = tuple(range(d.ndim))
        return _safe_norm(d, axes) / _safe_norm(target, axes)
    axes = tuple(range(1, d.ndim))
    return _reduce(_safe_norm(d, axes) / _safe_norm(target, axes), reduction, "relative_l2_loss")
