"""Loss cells: ``loss_fn(logits, labels) -> Tensor`` with ``reduction`` 'mean' | 'sum' | 'none'.

'none' returns the per-element (per-example for RelativeL2Loss, per-position for
CrossEntropyLoss) losses; 'mean' and 'sum' reduce them to a scalar.
"""

from .. import dtypes as _dt
from .. import ops
from .cell import Cell

__all__ = [
    "BCEWithLogitsLoss",
    "get_loss_metric",
    "CrossEntropyLoss",
    "L1Loss",
    "LossBase",
    "MAELoss",
    "MSELoss",
    "NLLLoss",
    "RMSELoss",
    "RelativeL2Loss",
    "SmoothL1Loss",
    "SoftmaxCrossEntropyWithLogits",
]


def _check_reduction(reduction, name):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{name}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    return reduction


class LossBase(Cell):
    """Base of the losses: holds ``reduction`` and applies it in :meth:`get_loss`."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = _check_reduction(reduction, type(self).__name__)

    def get_loss(self, x, weights=1.0):
        """``x * weights`` reduced by ``self.reduction`` (mean, sum, or unchanged)."""
        if not (isinstance(weights, (int, float)) and weights == 1.0):
            x = x * weights
        if self.reduction == "mean":
            return ops.mean(x)
        if self.reduction == "sum":
            return ops.sum(x)
        return x

    def extend_repr(self):
        return f"reduction={self.reduction}"


def _broadcast_pair(name, logits, labels):
    """``logits`` and ``labels`` broadcast to one shape (MindSpore's losses broadcast)."""
    if tuple(logits.shape) == tuple(labels.shape):
        return logits, labels
    try:
        shape = ops.broadcast_shapes(tuple(logits.shape), tuple(labels.shape))
    except ValueError:
        raise ValueError(
            f"{name}: logits {tuple(logits.shape)} and labels {tuple(labels.shape)} do not broadcast"
        ) from None
    return ops.broadcast_to(logits, shape), ops.broadcast_to(labels, shape)


class MSELoss(LossBase):
    """Mean squared error ``(logits - labels)^2`` (shapes broadcast); default reduction 'mean'."""

    def construct(self, logits, labels):
        logits, labels = _broadcast_pair("MSELoss", logits, labels)
        return ops.mse_loss(logits, labels, reduction=self.reduction)


class L1Loss(LossBase):
    """Absolute error ``|logits - labels|`` (shapes broadcast); default reduction 'mean'."""

    def construct(self, logits, labels):
        logits, labels = _broadcast_pair("L1Loss", logits, labels)
        return ops.l1_loss(logits, labels, reduction=self.reduction)


class MAELoss(LossBase):
    """Mean absolute error ``|logits - labels|`` (shapes broadcast); default reduction 'mean'.
    MindSpore's ``nn.MAELoss``: the same values as ``L1Loss``, a separate name because
    MindSpore (and MindFlow's ``get_loss_metric('mae')``) has both."""

    def construct(self, logits, labels):
        logits, labels = _broadcast_pair("MAELoss", logits, labels)
        return ops.l1_loss(logits, labels, reduction=self.reduction)


class SmoothL1Loss(LossBase):
    """Huber-like loss (Girshick 2015, Fast R-CNN): with ``d = |logits - labels|``,
    ``0.5 d^2 / beta`` where ``d < beta`` and ``d - 0.5 beta`` elsewhere.

    MindSpore's default reduction here is 'none'. ``beta > 0``.
    """

    def __init__(self, beta=1.0, reduction="none"):
        super().__init__(reduction)
        if not beta > 0:
            raise ValueError(f"SmoothL1Loss: beta must be positive, got {beta}")
        self.beta = float(beta)

    def construct(self, logits, labels):
        logits, labels = _broadcast_pair("SmoothL1Loss", logits, labels)
        return ops.smooth_l1_loss(logits, labels, reduction=self.reduction, beta=self.beta)

    def extend_repr(self):
        return f"beta={self.beta}, reduction={self.reduction}"


class NLLLoss(LossBase):
    """Negative log-likelihood of log-probabilities (PyTorch/MindSpore ``NLLLoss``).

    Inputs: logits ``[N, C, *]`` (or ``[C]``) log-probabilities; labels ``[N, *]`` int.
    'mean' divides by the summed weights of the non-ignored labels.
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, int(ignore_index)

    def construct(self, logits, labels):
        return ops.nll_loss(logits, labels, self.weight, self.ignore_index, self.reduction)


class CrossEntropyLoss(LossBase):
    """Cross entropy between ``softmax(logits)`` and the labels (class axis 1).

    Args:
        weight: None or a ``[C]`` tensor of class weights.
        ignore_index: class-index labels equal to it contribute nothing (class indices only).
        reduction: 'mean' (default) | 'sum' | 'none'.
        label_smoothing: in [0, 1]; the target becomes ``(1 - s) * target + s / C``.

    Inputs:
        logits ``[N, C, *]`` or ``[C]``; labels either class indices ``[N, *]`` (int) or
        class probabilities of the same shape as logits (float).

    Returns:
        The PyTorch/MindSpore value: with class indices 'mean' divides by the summed weights of
        the non-ignored labels; with probabilities by the number of positions ``N * prod(*)``.
        'none' gives ``[N, *]``.
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(
                f"CrossEntropyLoss: label_smoothing must be in [0, 1], got {label_smoothing}"
            )
        self.weight, self.ignore_index = weight, int(ignore_index)
        self.label_smoothing = float(label_smoothing)

    def construct(self, logits, labels):
        return ops.cross_entropy(
            logits, labels, self.weight, self.ignore_index, self.reduction, self.label_smoothing
        )

    def extend_repr(self):
        return f"ignore_index={self.ignore_index}, reduction={self.reduction}, label_smoothing={self.label_smoothing}"


class RelativeL2Loss(LossBase):
    """Relative L2 error per example, the usual loss of neural operators (Li et al. 2021, FNO):
    ``||logits_i - labels_i||_2 / ||labels_i||_2`` over all axes but the first.

    Inputs: logits and labels ``[N, *]`` of the same shape (a rank-1 input is one example).
    'none' returns ``[N]``; 'mean' (default) averages over the batch, 'sum' adds.
    """

    def construct(self, logits, labels):
        return ops.relative_l2_loss(logits, labels, reduction=self.reduction)


class RMSELoss(LossBase):
    """Root mean squared error ``sqrt(mean((logits - labels)^2))`` over all elements (shapes
    broadcast); a scalar. MindSpore's ``nn.RMSELoss`` (it has no ``reduction`` argument)."""

    def __init__(self):
        super().__init__("mean")

    def construct(self, logits, labels):
        logits, labels = _broadcast_pair("RMSELoss", logits, labels)
        return ops.sqrt(ops.mse_loss(logits, labels, reduction="mean"))

    def extend_repr(self):
        return ""


class SoftmaxCrossEntropyWithLogits(LossBase):
    """Cross entropy of ``softmax(logits)`` along the last axis (MindSpore's
    ``nn.SoftmaxCrossEntropyWithLogits``): ``-sum_c labels[..., c] * log_softmax(logits)[..., c]``.

    Args:
        sparse: False (default): ``labels`` has the shape of ``logits`` (one-hot or class
            probabilities). True: ``labels`` are int class indices of shape ``logits.shape[:-1]``.
        reduction: 'none' (default, MindSpore's): one loss per example ``[N]``; 'mean' | 'sum'.

    Inputs: logits ``[N, C]`` (any leading axes ``[..., C]``); labels as described above.
    """

    def __init__(self, sparse=False, reduction="none"):
        super().__init__(reduction)
        self.sparse = bool(sparse)

    def construct(self, logits, labels):
        name = type(self).__name__
        if logits.ndim < 1:
            raise ValueError(
                f"{name}: logits must have a class axis, got shape {tuple(logits.shape)}"
            )
        n_classes = logits.shape[-1]
        if self.sparse:
            if tuple(labels.shape) != tuple(logits.shape[:-1]):
                raise ValueError(
                    f"{name}: with sparse=True labels must have shape {tuple(logits.shape[:-1])} "
                    f"(logits {tuple(logits.shape)} without the class axis), got {tuple(labels.shape)}"
                )
            if _dt.is_inexact(labels.dtype) or labels.dtype == _dt.bool_:
                raise TypeError(f"{name}: sparse labels must be integers, got {labels.dtype}")
            labels = ops.one_hot(labels, n_classes, dtype=logits.dtype)
        elif tuple(labels.shape) != tuple(logits.shape):
            raise ValueError(
                f"{name}: labels {tuple(labels.shape)} must have the shape of logits "
                f"{tuple(logits.shape)} (or pass sparse=True for class indices)"
            )
        elif labels.dtype != logits.dtype:
            labels = ops.astype(labels, logits.dtype)
        loss = -ops.sum(labels * ops.log_softmax(logits, axis=-1), axis=-1)
        return self.get_loss(loss)

    def extend_repr(self):
        return f"sparse={self.sparse}, reduction={self.reduction}"


class BCEWithLogitsLoss(LossBase):
    """Binary cross entropy of ``sigmoid(logits)`` (MindSpore's ``nn.BCEWithLogitsLoss``):

    ``weight * (pos_weight * labels * softplus(-x) + (1 - labels) * softplus(x))``, which is
    ``-weight * (pos_weight * y * log(sigmoid(x)) + (1 - y) * log(1 - sigmoid(x)))`` computed
    without overflow for large ``|x|``.

    Args:
        reduction: 'mean' (default) | 'sum' | 'none'.
        weight: None or a tensor broadcast to the logits (per-element weight).
        pos_weight: None or a tensor broadcast to the logits (weight of positive examples,
            usually ``[C]``).

    Inputs: logits and labels of one shape (float labels in [0, 1]).
    """

    def __init__(self, reduction="mean", weight=None, pos_weight=None):
        super().__init__(reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def construct(self, logits, labels):
        name = type(self).__name__
        if tuple(logits.shape) != tuple(labels.shape):
            raise ValueError(
                f"{name}: logits {tuple(logits.shape)} and labels {tuple(labels.shape)} must have "
                "the same shape"
            )
        if labels.dtype != logits.dtype:
            labels = ops.astype(labels, logits.dtype)
        pos_term = labels * ops.softplus(-logits)
        if self.pos_weight is not None:
            pos_term = pos_term * self.pos_weight
        loss = pos_term + (1.0 - labels) * ops.softplus(logits)
        if self.weight is not None:
            loss = loss * self.weight
        return self.get_loss(loss)


_LOSS_METRIC = {
    "l1_loss": L1Loss,
    "l1": L1Loss,
    "l2_loss": MSELoss,
    "l2": MSELoss,
    "mse_loss": MSELoss,
    "mse": MSELoss,
    "rmse_loss": RMSELoss,
    "rmse": RMSELoss,
    "mae_loss": MAELoss,
    "mae": MAELoss,
    "smooth_l1_loss": SmoothL1Loss,
    "smooth_l1": SmoothL1Loss,
}


def get_loss_metric(name):
    """A new loss cell ``loss(logits, labels) -> scalar`` by name (MindFlow's and MindElec's
    ``get_loss_metric``, shared here because both domains use it).

    Names: ``l1``/``l1_loss``, ``l2``/``l2_loss``/``mse``/``mse_loss`` (mean squared error),
    ``rmse``/``rmse_loss``, ``mae``/``mae_loss``, ``smooth_l1``/``smooth_l1_loss`` (all with
    reduction 'mean', except SmoothL1Loss's MindSpore default 'none').

    Raises:
        TypeError: ``name`` is not a str.
        ValueError: an unknown name (the message lists the known ones).
    """
    if not isinstance(name, str):
        raise TypeError(f"get_loss_metric: name must be a str, got {type(name).__name__}")
    cls = _LOSS_METRIC.get(name)
    if cls is None:
        raise ValueError(
            f"get_loss_metric: unknown loss function {name!r}; known: {sorted(_LOSS_METRIC)}"
        )
    return cls()
