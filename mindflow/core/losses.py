"""MindFlow's ``mindflow/core/losses.py``: ``get_loss_metric`` (``core.nn``'s, shared with mindelec), ``RelativeRMSELoss``,
``RegularizedLossCell`` and the multi-task weighting ``MTLWeightedLoss`` (the engine's
``core.nn.MTLWeightedLoss``: loss weighting lives in ``core`` because ``mindelec`` needs it
too)."""

from diffsci.core import Parameter, nn, ops
from diffsci.core.nn.loss import get_loss_metric as get_loss_metric
from diffsci.core.nn.loss_weighting import MTLWeightedLoss as MTLWeightedLoss
from diffsci.core.nn.loss_weighting import WeightedLossCell as WeightedLossCell

from ..utils.check_func import check_param_type, check_param_value

__all__ = [
    "MTLWeightedLoss",
    "RegularizedLossCell",
    "RelativeRMSELoss",
    "WeightedLossCell",
    "get_loss_metric",
]

class RelativeRMSELoss(nn.LossBase):
    r"""Relative root-mean-square error per example (MindFlow's ``RelativeRMSELoss``):

    .. math::
        e_b = \sqrt{\frac{\sum_k (x_{bk} - y_{bk})^2}{\sum_k y_{bk}^2}}

    over all axes but the first, then reduced over the batch.

    Args:
        reduction: ``'sum'`` (MindFlow's default), ``'mean'`` or ``'none'`` (``[N]``).

    Inputs:
        prediction ``[N, *]`` and labels ``[N, *]`` with the same number of elements per
        example. The prediction keeps its dtype (MindFlow casts it to float32).

    Outputs:
        A scalar (``[N]`` with ``'none'``).
    """

    def __init__(self, reduction="sum"):
        super().__init__(reduction=reduction)

    def construct(self, prediction, labels):
        n = prediction.shape[0]
        if labels.ndim == 0 or labels.shape[0] != n or labels.size != prediction.size:
            raise ValueError(
                f"RelativeRMSELoss: prediction {tuple(prediction.shape)} and labels "
                f"{tuple(labels.shape)} must hold the same number of values per example"
            )
        pred = ops.reshape(prediction, (n, -1))  # [N, K]
        lab = ops.reshape(labels, (n, -1))  # [N, K]
        diff_norm = ops.sqrt(ops.sum((pred - lab) ** 2, axis=1))  # [N]
        label_norm = ops.sqrt(ops.sum(lab**2, axis=1))  # [N]
        return self.get_loss(diff_norm / label_norm)


class RegularizedLossCell(nn.Cell):
    """L1 or L2 regularisation of a Parameter (MindFlow's ``RegularizedLossCell``):
    ``reg_factor * mean(|p|)`` or ``reg_factor * mean(p^2)``, a scalar.

    Args:
        reg_params: the Parameter (a latent vector, for example).
        reg_factor: non-negative float. Default 0.01.
        reg_mode: ``'l1'`` or ``'l2'``. Default ``'l2'``.
    """

    def __init__(self, reg_params, reg_factor=0.01, reg_mode="l2"):
        super().__init__()
        check_param_type(reg_params, "RegularizedLossCell: reg_params", data_type=Parameter)
        check_param_value(reg_mode, "RegularizedLossCell: reg_mode", ["l1", "l2"])
        check_param_type(reg_factor, "RegularizedLossCell: reg_factor", (int, float), bool)
        if reg_factor < 0:
            raise ValueError(
                f"RegularizedLossCell: reg_factor must be non-negative, got {reg_factor!r}"
            )
        self.reg_params = reg_params
        self.reg_factor = float(reg_factor)
        self.reg_mode = reg_mode

    def construct(self):
        p = self.reg_params
        loss = ops.mean(ops.abs(p)) if self.reg_mode == "l1" else ops.mean(p * p)
        return self.reg_factor * loss
