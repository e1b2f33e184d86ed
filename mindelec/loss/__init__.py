"""MindElec's ``mindelec.loss``: ``Constraints`` (which ``Problem`` method constrains which
sub-dataset), ``NetWithLoss`` (the training loss of all sub-datasets, optionally weighted by
``MTLWeightedLossCell``), ``NetWithEval`` and ``get_loss_metric``."""

from .constraints import Constraints as Constraints
from .losses import get_loss_metric as get_loss_metric
from .net_with_loss import NetWithEval as NetWithEval
from .net_with_loss import NetWithLoss as NetWithLoss

__all__ = ["Constraints", "NetWithEval", "NetWithLoss", "get_loss_metric"]
