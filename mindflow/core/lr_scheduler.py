"""MindFlow's learning-rate schedules (``mindflow/core/lr_scheduler.py``): each returns the
learning rate of every step as a numpy float32 array, to pass to an optimizer as its
``learning_rate`` (a per-step list, MindSpore's dynamic learning rate)."""

import bisect

import numpy as np

from diffsci.core.nn.poly_lr import get_poly_lr as get_poly_lr

from ..utils.check_func import check_lr_param, check_param_type

__all__ = ["get_multi_step_lr", "get_poly_lr", "get_warmup_cosine_annealing_lr"]


def get_multi_step_lr(lr_init, milestones, gamma, steps_per_epoch, last_epoch):
    r"""Step decay (MindFlow's ``get_multi_step_lr``): ``lr_init`` until the first milestone
    epoch, then multiplied by ``gamma`` at each milestone, for ``last_epoch`` epochs of
    ``steps_per_epoch`` steps. With sorted milestones :math:`M_1 < M_2 < \dots`, the rate of
    step ``s`` in epoch :math:`e = \lfloor s / steps\_per\_epoch \rfloor` is
    :math:`lr\_init \cdot gamma^{\#\{t: M_t \le e\}}`; milestones at or past ``last_epoch``
    are ignored.

    Args:
        lr_init: float > 0.
        milestones: list or tuple of epoch indices (positive ints).
        gamma: decay factor, float > 0.
        steps_per_epoch: int > 0.
        last_epoch: number of epochs, int > 0.

    Returns:
        numpy float32 array ``[last_epoch * steps_per_epoch]``.
    """
    where = "get_multi_step_lr"
    check_lr_param(lr_init, "lr_init", float, 0.0, True, where)
    check_lr_param(gamma, "gamma", float, 0.0, True, where)
    check_lr_param(steps_per_epoch, "steps_per_epoch", int, 0, True, where)
    check_lr_param(last_epoch, "last_epoch", int, 0, True, where)
    check_param_type(milestones, f"{where}: milestones", (list, tuple))
    for m in milestones:
        check_lr_param(m, "each of milestones", int, 0, True, where)
    ordered = sorted(milestones)
    kept = ordered[: bisect.bisect_left(ordered, last_epoch)]
    epoch = np.arange(last_epoch * steps_per_epoch) // steps_per_epoch
    decays = np.searchsorted(np.asarray(kept, dtype=np.int64), epoch, side="right")
    return (lr_init * np.float64(gamma) ** decays).astype(np.float32)


def get_warmup_cosine_annealing_lr(
    lr_init, steps_per_epoch, last_epoch, warmup_epochs=0, warmup_lr_init=0.0, eta_min=1e-6
):
    r"""Linear warm-up, then cosine annealing by epoch (MindFlow's
    ``get_warmup_cosine_annealing_lr``; Loshchilov & Hutter 2017 without restarts).

    With ``W = warmup_epochs * steps_per_epoch`` warm-up steps, step ``i`` gets

    .. math::
        lr_i = warmup\_lr\_init + (lr\_init - warmup\_lr\_init)\frac{i + 1}{W} \quad (i < W),
        \qquad
        lr_i = eta\_min + \tfrac12 (lr\_init - eta\_min)
            \Big(1 + \cos\frac{\pi \lfloor i / steps\_per\_epoch \rfloor}{last\_epoch}\Big)

    for ``i`` in ``[0, last_epoch * steps_per_epoch)``.

    Args:
        lr_init: float > 0.
        steps_per_epoch: int > 0.
        last_epoch: number of epochs, int > 0.
        warmup_epochs: int >= 0. Default 0.
        warmup_lr_init: float >= 0. Default 0.0.
        eta_min: the final learning rate, float >= 0. Default 1e-6.

    Returns:
        numpy float32 array ``[max(last_epoch, warmup_epochs) * steps_per_epoch]``.
    """
    where = "get_warmup_cosine_annealing_lr"
    check_lr_param(lr_init, "lr_init", float, 0.0, True, where)
    check_lr_param(warmup_lr_init, "warmup_lr_init", float, 0.0, False, where)
    check_lr_param(eta_min, "eta_min", float, 0.0, False, where)
    check_lr_param(warmup_epochs, "warmup_epochs", int, 0, False, where)
    check_lr_param(steps_per_epoch, "steps_per_epoch", int, 0, True, where)
    check_lr_param(last_epoch, "last_epoch", int, 0, True, where)
    warmup_steps = warmup_epochs * steps_per_epoch
    step = np.arange(warmup_steps, dtype=np.float64)
    warm = warmup_lr_init + (lr_init - warmup_lr_init) / max(warmup_steps, 1) * (step + 1)
    epoch = np.arange(last_epoch * steps_per_epoch) // steps_per_epoch
    cosine = eta_min + 0.5 * (lr_init - eta_min) * (1.0 + np.cos(np.pi * epoch / last_epoch))
    return np.concatenate([warm, cosine[warmup_steps:]]).astype(np.float32)
