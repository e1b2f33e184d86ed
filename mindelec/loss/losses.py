"""Loss functions by name (MindElec's ``get_loss_metric``), as ``core.nn`` loss Cells with
``reduction='mean'``: ``loss(prediction [...], target [...]) -> scalar``."""

from core import nn

__all__ = ["get_loss_metric"]

_LOSS_METRIC = {
    "l1_loss": nn.L1Loss,
    "l1": nn.L1Loss,
    "l2_loss": nn.MSELoss,
    "l2": nn.MSELoss,
    "mse_loss": nn.MSELoss,
    "mse": nn.MSELoss,
    "rmse_loss": nn.RMSELoss,
    "rmse": nn.RMSELoss,
    "mae_loss": nn.MAELoss,
    "mae": nn.MAELoss,
    "smooth_l1_loss": nn.SmoothL1Loss,
    "smooth_l1": nn.SmoothL1Loss,
}


def get_loss_metric(name):
    """A new loss Cell by name: ``l1``/``l1_loss``, ``l2``/``l2_loss``/``mse``/``mse_loss``,
    ``rmse``/``rmse_loss``, ``mae``/``mae_loss``, ``smooth_l1``/``smooth_l1_loss``.

    Raises:
        TypeError: ``name`` is not a str.
        ValueError: an unknown name (the message lists the known ones).
    """
    if not isinstance(name, str):
        raise TypeError(f"get_loss_metric: name must be a str, got {type(name).__name__}")
    if name not in _LOSS_METRIC:
        raise ValueError(
            f"get_loss_metric: unknown loss function {name!r}; known: {sorted(_LOSS_METRIC)}"
        )
    return _LOSS_METRIC[name]()
