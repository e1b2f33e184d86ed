"""MindElec's ``MTLWeightedLossCell``: uncertainty weighting of multi-task losses (Kendall, Gal &
Cipolla, CVPR 2018, arXiv:1705.07115), ``core.nn.MTLWeightedLoss`` under MindElec's name.

``L = sum_i L_i / (2 s_i^2) + log(s_i^2 + 1)``, ``s_i`` trainable, initialised to 1.
"""

from diffsci import core
from diffsci.core.nn import MTLWeightedLoss

__all__ = ["MTLWeightedLossCell"]


class MTLWeightedLossCell(MTLWeightedLoss):
    """Weight ``num_losses`` loss terms with learnt uncertainties (MindElec's name).

    Args:
        num_losses: number of loss terms, a positive int.
        dtype: dtype of ``params`` (float32; float64 for float64 training).

    Inputs: a tuple/list of ``num_losses`` scalar Tensors (or a Tensor ``[num_losses]``).
    Outputs: a scalar Tensor; ``MTLWeightedLossCell(2)((1.0, 0.8))`` is ``2.2862945``
    (MindElec's documented value).
    """

    def __init__(self, num_losses, dtype=core.float32):
        super().__init__(num_losses, bound_param=0.0, dtype=dtype)
