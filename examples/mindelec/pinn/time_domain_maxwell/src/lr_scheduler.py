"""MindElec's ``MultiStepLR`` of this case: the learning rate of every step, multiplied by
``gamma`` at each milestone epoch."""

import numpy as np

__all__ = ["MultiStepLR"]


class MultiStepLR:
    """Per-step learning rates: ``lr * gamma**k`` after the ``k``-th milestone epoch.

    Args:
        lr: initial rate. milestones: increasing epochs. gamma: decay factor.
        steps_per_epoch, max_epoch: ints >= 1.

    ``get_lr()`` returns float32 ``[steps_per_epoch * max_epoch]``.
    """

    def __init__(self, lr, milestones, gamma, steps_per_epoch, max_epoch):
        if list(milestones) != sorted(milestones):
            raise ValueError(f"MultiStepLR: milestones must increase, got {milestones}")
        self.base_lr, self.milestones, self.gamma = lr, list(milestones), gamma
        self.steps_per_epoch = int(steps_per_epoch)
        self.total_steps = int(max_epoch * steps_per_epoch)

    def get_lr(self):
        epoch = np.arange(self.total_steps) // self.steps_per_epoch  # [steps]
        passed = np.searchsorted(np.asarray(self.milestones), epoch, side="right")
        return (self.base_lr * self.gamma**passed).astype(np.float32)
