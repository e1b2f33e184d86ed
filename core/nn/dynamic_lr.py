"""Learning-rate lists, one value per step (MindSpore ``mindspore.nn.dynamic_lr``).

Pass the list as ``learning_rate`` to an optimizer: update ``i`` uses ``lr[i]`` (the last
value once the list runs out). Formulas are MindSpore's; ``current_epoch = floor(i /
step_per_epoch)``.
"""

import math

from .learning_rate_schedule import _check_float, _check_steps

__all__ = [
    "cosine_decay_lr",
    "exponential_decay_lr",
    "inverse_decay_lr",
    "natural_exp_decay_lr",
    "piecewise_constant_lr",
    "polynomial_decay_lr",
    "warmup_lr",
]


def _check_decay(fn, learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch):
    _check_float("learning_rate", learning_rate, fn)
    _check_float("decay_rate", decay_rate, fn)
    _check_steps("total_step", total_step, fn)
    _check_steps("step_per_epoch", step_per_epoch, fn)
    _check_steps("decay_epoch", decay_epoch, fn)


def piecewise_constant_lr(milestone, learning_rates):
    """``lr[i] = learning_rates[t]`` for ``milestone[t-1] <= i < milestone[t]``; length ``milestone[-1]``.

    Example: ``piecewise_constant_lr([2, 5], [0.1, 0.05]) == [0.1, 0.1, 0.05, 0.05, 0.05]``.
    """
    if not isinstance(milestone, (list, tuple)) or not isinstance(learning_rates, (list, tuple)):
        raise TypeError(
            "piecewise_constant_lr: milestone and learning_rates must be lists or tuples"
        )
    if len(milestone) != len(learning_rates):
        raise ValueError(
            f"piecewise_constant_lr: milestone has {len(milestone)} entries but learning_rates "
            f"has {len(learning_rates)}"
        )
    lr, last = [], 0
    for i, (m, rate) in enumerate(zip(milestone, learning_rates, strict=True)):
        _check_steps(f"milestone[{i}]", m, "piecewise_constant_lr")
        _check_float(f"learning_rates[{i}]", rate, "piecewise_constant_lr", positive=False)
        if m < last:
            raise ValueError(
                f"piecewise_constant_lr: milestone[{i}]={m} is smaller than milestone[{i - 1}]={last}"
            )
        lr += [rate] * (m - last)
        last = m
    return lr


def exponential_decay_lr(
    learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False
):
    """``lr[i] = learning_rate * decay_rate ** (current_epoch / decay_epoch)`` (the exponent
    floored when ``is_stair``); ``total_step`` values."""
    _check_decay(
        "exponential_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch
    )
    out = []
    for i in range(total_step):
        p = math.floor(i / step_per_epoch) / decay_epoch
        out.append(learning_rate * decay_rate ** (math.floor(p) if is_stair else p))
    return out


def natural_exp_decay_lr(
    learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False
):
    """``lr[i] = learning_rate * exp(-decay_rate * current_epoch)`` (``current_epoch`` rounded
    down to a multiple of ``decay_epoch`` when ``is_stair``)."""
    _check_decay(
        "natural_exp_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch
    )
    out = []
    for i in range(total_step):
        epoch = math.floor(i / step_per_epoch)
        if is_stair:
            epoch = math.floor(epoch / decay_epoch) * decay_epoch
        out.append(learning_rate * math.e ** (-decay_rate * epoch))
    return out


def inverse_decay_lr(
    learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False
):
    """``lr[i] = learning_rate / (1 + decay_rate * current_epoch / decay_epoch)`` (the ratio
    floored when ``is_stair``)."""
    _check_decay(
        "inverse_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch
    )
    out = []
    for i in range(total_step):
        epoch = math.floor(i / step_per_epoch)
        if is_stair:
            out.append(learning_rate / (1 + decay_rate * math.floor(epoch / decay_epoch)))
        else:
            out.append(learning_rate / (1 + decay_rate * epoch / decay_epoch))
    return out


def cosine_decay_lr(min_lr, max_lr, total_step, step_per_epoch, decay_epoch):
    """``lr[i] = min_lr + 0.5 * (max_lr - min_lr) * (1 + cos(pi * e / decay_epoch))`` with
    ``e = min(current_epoch, decay_epoch)``."""
    fn = "cosine_decay_lr"
    _check_float("min_lr", min_lr, fn, positive=False)
    _check_float("max_lr", max_lr, fn)
    _check_steps("total_step", total_step, fn)
    _check_steps("step_per_epoch", step_per_epoch, fn)
    _check_steps("decay_epoch", decay_epoch, fn)
    if min_lr >= max_lr:
        raise ValueError(f"{fn}: max_lr ({max_lr}) must be greater than min_lr ({min_lr})")
    delta = 0.5 * (max_lr - min_lr)
    out = []
    for i in range(total_step):
        epoch = min(math.floor(i / step_per_epoch), decay_epoch)
        out.append(min_lr + delta * (1 + math.cos(math.pi * epoch / decay_epoch)))
    return out


def polynomial_decay_lr(
    learning_rate,
    end_learning_rate,
    total_step,
    step_per_epoch,
    decay_epoch,
    power,
    update_decay_epoch=False,
):
    """``lr[i] = (learning_rate - end_learning_rate) * (1 - e / D) ** power + end_learning_rate``
    with ``e = min(current_epoch, decay_epoch)`` and ``D = decay_epoch``; with
    ``update_decay_epoch``, ``e = current_epoch`` and ``D = decay_epoch * max(ceil(e / decay_epoch), 1)``."""
    fn = "polynomial_decay_lr"
    _check_float("learning_rate", learning_rate, fn)
    _check_float("end_learning_rate", end_learning_rate, fn, positive=False)
    _check_float("power", power, fn)
    _check_steps("total_step", total_step, fn)
    _check_steps("step_per_epoch", step_per_epoch, fn)
    _check_steps("decay_epoch", decay_epoch, fn)
    delta = learning_rate - end_learning_rate
    out = []
    for i in range(total_step):
        epoch = math.floor(i / step_per_epoch)
        if update_decay_epoch:
            horizon = decay_epoch * max(math.ceil(epoch / decay_epoch), 1)
        else:
            horizon, epoch = decay_epoch, min(epoch, decay_epoch)
        out.append(delta * (1 - epoch / horizon) ** power + end_learning_rate)
    return out


def warmup_lr(learning_rate, total_step, step_per_epoch, warmup_epoch):
    """``lr[i] = learning_rate * min(current_epoch, warmup_epoch) / warmup_epoch`` (0 during the
    first epoch, as in MindSpore)."""
    fn = "warmup_lr"
    _check_float("learning_rate", learning_rate, fn, positive=False)
    _check_steps("total_step", total_step, fn)
    _check_steps("step_per_epoch", step_per_epoch, fn)
    _check_steps("warmup_epoch", warmup_epoch, fn)
    return [
        learning_rate * min(math.floor(i / step_per_epoch), warmup_epoch) / warmup_epoch
        for i in range(total_step)
    ]
