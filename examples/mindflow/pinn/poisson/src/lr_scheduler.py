"""One-cycle learning rate (MindFlow's Poisson ``src/lr_scheduler.py``; Smith & Topin 2019,
"Super-convergence"): cosine warm-up from ``lr_max / init_factor`` to ``lr_max`` over the first
``pct_start`` of the steps, then cosine decay to ``lr_max / final_factor``."""

import math

import diffsci.core as ms
from diffsci.core import ops
from diffsci.core.nn.learning_rate_schedule import LearningRateSchedule


class OneCycleLR(LearningRateSchedule):
    """``construct(global_step) -> lr`` (a 0-d float32 Tensor).

    Args:
        lr_max: the peak learning rate.
        total_steps: the number of steps of the whole cycle.
        pct_start: the warm-up's share of the steps.
        init_factor: ``lr_max / lr_init``.
        final_factor: ``lr_max / lr_final``.
    """

    def __init__(self, lr_max, total_steps, pct_start=0.3, init_factor=25, final_factor=10000.0):
        super().__init__()
        self.lr_max = lr_max
        self.lr_init = lr_max / init_factor
        self.lr_final = lr_max / final_factor
        self.total_steps = total_steps
        self.step_mid = max(1, int(pct_start * total_steps))

    def construct(self, global_step):
        step = global_step.astype(ms.float32)
        # both branches, selected without Python control flow (the step is traced under jit)
        warm = 1 + ops.cos(math.pi * (step / self.step_mid - 1))
        lr_warm = 0.5 * (self.lr_max - self.lr_init) * warm + self.lr_init
        span = max(1, self.total_steps - self.step_mid)
        decay = 1 + ops.cos(math.pi * ((step - self.step_mid) / span))
        lr_decay = 0.5 * (self.lr_max - self.lr_final) * decay + self.lr_final
        return ops.where(step <= self.step_mid, lr_warm, lr_decay)
