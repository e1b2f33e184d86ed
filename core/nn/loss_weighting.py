"""Weighting of multi-task losses: one scalar from several loss terms, with learnt weights.

Lives in ``core`` because two domains need it (``mindflow.core.MTLWeightedLoss`` and
``mindelec``'s ``MTLWeightedLossCell``), and a domain never imports another.
"""

from .. import dtypes as _dt
from .. import ops
from ..tensor import Parameter, Tensor
from .cell import Cell

__all__ = ["MTLWeightedLoss", "WeightedLossCell"]


class WeightedLossCell(Cell):
    """Base of the cells that weight a tuple of loss terms into one scalar (MindFlow's name).

    ``construct(losses)`` takes a tuple or list of scalar Tensors (or a 1-D Tensor) and returns
    a scalar Tensor. ``use_grads`` says whether the scheme needs the terms' gradients (False
    here, as in MindFlow).
    """

    def __init__(self):
        super().__init__()
        self.type = type(self).__name__
        self.use_grads = False

    def construct(self, losses):
        return losses


class MTLWeightedLoss(WeightedLossCell):
    r"""Uncertainty weighting of ``num_losses`` loss terms (Kendall, Gal & Cipolla, "Multi-task
    learning using uncertainty to weigh losses for scene geometry and semantics", CVPR 2018;
    MindFlow's ``mindflow.core.MTLWeightedLoss``).

    Each term ``L_i`` gets a trainable ``params[i]`` (``s_i``, initialised to 1) and the total is

    .. math::
        L = \sum_i \frac{L_i}{2 w_i} + \log r_i, \qquad
        w_i = s_i^2,\ r_i = s_i^2 + 1 \ \text{(unbounded)}, \qquad
        w_i = r_i = s_i^2 + b^2 \ \text{(bounded, } b = \text{bound\_param} > 10^{-6})

    i.e. Kendall et al.'s eq. 7 with ``sigma_i^2 = w_i``; MindFlow regularises with
    ``log(s_i^2 + 1)`` instead of ``log(s_i^2)`` so the regulariser stays bounded below, and
    ``bound_param`` keeps the weight ``1 / w_i`` finite. Minimising over ``s_i`` balances the
    terms: a large ``L_i`` pushes ``w_i`` up and its weight down.

    Args:
        num_losses: number of loss terms, a positive int.
        bound_param: ``b`` above, a non-negative float (0: unbounded). Default 0.0.
        dtype: dtype of ``params`` (float32; float64 for float64 training).

    Inputs:
        losses: tuple or list of ``num_losses`` scalar Tensors, or a Tensor ``[num_losses]``.

    Outputs:
        A scalar Tensor. With ``params = 1`` and losses ``(1.0, 0.8)``:
        ``0.5 + 0.4 + 2 log 2 = 2.2862944``.
    """

    def __init__(self, num_losses, bound_param=0.0, dtype=_dt.float32):
        super().__init__()
        if isinstance(num_losses, bool) or not isinstance(num_losses, int) or num_losses <= 0:
            raise ValueError(
                f"MTLWeightedLoss: num_losses must be a positive int, got {num_losses!r}"
            )
        if isinstance(bound_param, bool) or not isinstance(bound_param, (int, float)):
            raise TypeError(f"MTLWeightedLoss: bound_param must be a float, got {bound_param!r}")
        if bound_param < 0:
            raise ValueError(f"MTLWeightedLoss: bound_param must be >= 0, got {bound_param!r}")
        self.num_losses = num_losses
        self.bounded = bound_param > 1.0e-6
        self.bound_param = float(bound_param) ** 2  # b^2, as MindFlow stores it
        self.params = Parameter(ops.ones((num_losses,), dtype=dtype), name="params")

    def construct(self, losses):
        if isinstance(losses, Tensor):
            if losses.ndim != 1:
                raise ValueError(
                    f"MTLWeightedLoss: a Tensor of losses must be 1-D [num_losses], got shape "
                    f"{tuple(losses.shape)}"
                )
            losses = [losses[i] for i in range(losses.shape[0])]
        if not isinstance(losses, (tuple, list)) or len(losses) != self.num_losses:
            got = len(losses) if isinstance(losses, (tuple, list)) else type(losses).__name__
            raise ValueError(
                f"MTLWeightedLoss: expected {self.num_losses} loss terms (num_losses), got {got}"
            )
        s2 = self.params * self.params  # [num_losses]
        if self.bounded:
            weight = s2 + self.bound_param
            reg = weight
        else:
            weight = s2
            reg = s2 + 1.0
        total = 0.0
        for i, loss in enumerate(losses):
            if isinstance(loss, Tensor) and loss.size != 1:
                raise ValueError(
                    f"MTLWeightedLoss: loss term {i} must be a scalar, got shape "
                    f"{tuple(loss.shape)}"
                )
            loss = ops.reshape(loss, ()) if isinstance(loss, Tensor) else loss
            total = total + 0.5 * loss / weight[i] + ops.log(reg[i])
        return total

    def extend_repr(self):
        return f"num_losses={self.num_losses}, bounded={self.bounded}"
