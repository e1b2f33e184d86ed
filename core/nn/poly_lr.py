"""``get_poly_lr``: linear warm-up then polynomial decay as a per-step learning-rate array
(MindFlow's and MindElec's ``get_poly_lr``). It lives in ``core`` because both domains export
it (``mindflow.core``, ``mindelec.common``) and a domain never imports another."""

import numpy as np

from .check_args import check_lr_param as _check_lr_param

__all__ = ["get_poly_lr"]


def get_poly_lr(global_step, lr_init, lr_end, lr_max, warmup_steps, total_steps, poly_power):
    r"""Linear warm-up, then polynomial decay (MindFlow's ``get_poly_lr``).

    For step ``i`` of ``total_steps``:

    .. math::
        lr_i = lr\_init + i \frac{lr\_max - lr\_init}{warmup\_steps}
            \quad (i < warmup\_steps), \qquad
        lr_i = lr\_end + (lr\_max - lr\_end)
            \Big(1 - \frac{i - warmup\_steps}{total\_steps - warmup\_steps}\Big)^{poly\_power}

    (negative values clipped to 0); the steps before ``global_step`` are dropped.

    Args:
        global_step: first step returned, int >= 0.
        lr_init: learning rate at step 0 of the warm-up, float > 0.
        lr_end: learning rate the decay tends to, float >= 0.
        lr_max: learning rate at the end of the warm-up, float > 0.
        warmup_steps: int >= 0.
        total_steps: int > 0.
        poly_power: float > 0.

    Returns:
        numpy float32 array ``[total_steps - global_step]``.
    """
    where = "get_poly_lr"
    _check_lr_param(global_step, "global_step", int, 0, False, where)
    _check_lr_param(lr_init, "lr_init", float, 0.0, True, where)
    _check_lr_param(lr_end, "lr_end", float, 0.0, False, where)
    _check_lr_param(lr_max, "lr_max", float, 0.0, True, where)
    _check_lr_param(warmup_steps, "warmup_steps", int, 0, False, where)
    _check_lr_param(total_steps, "total_steps", int, 0, True, where)
    _check_lr_param(poly_power, "poly_power", float, 0.0, True, where)
    i = np.arange(total_steps, dtype=np.float64)
    inc = (lr_max - lr_init) / warmup_steps if warmup_steps else 0.0
    warm = lr_init + inc * i
    with np.errstate(divide="ignore", invalid="ignore"):  # total_steps == warmup_steps
        base = 1.0 - (i - warmup_steps) / (total_steps - warmup_steps)
        decay = np.maximum((lr_max - lr_end) * base**poly_power + lr_end, 0.0)
    lr = np.where(i < warmup_steps, warm, decay)
    return lr.astype(np.float32)[global_step:]
