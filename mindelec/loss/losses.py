"""Loss functions by name (MindElec's ``get_loss_metric``): ``core.nn.get_loss_metric``, shared
with mindflow (a domain never imports another, so the table lives in core)."""

from diffsci.core.nn.loss import get_loss_metric as get_loss_metric

__all__ = ["get_loss_metric"]
