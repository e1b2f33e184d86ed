"""MindElec's learning-rate schedules (``mindelec/common/lr_scheduler.py``).

``LearningRate``: a linear warm-up (``core.nn.WarmUpLR``) then polynomial decay
(``core.nn.PolynomialDecayLR``), as a schedule Cell of the global step. ``get_poly_lr``: the
same shape as a precomputed per-step array (``core.nn.poly_lr``, shared with ``mindflow``).
"""

from diffsci.core import nn, ops
from diffsci.core.nn.poly_lr import get_poly_lr as get_poly_lr

__all__ = ["LearningRate", "get_poly_lr"]


def _check_number(value, name, where, lower, strict, kind=float):
    types = (int, float) if kind is float else (int,)
    if isinstance(value, bool) or not isinstance(value, types):
        raise TypeError(f"{where}: {name} must be {kind.__name__}, got {value!r}")
    if value < lower or (strict and value == lower):
        raise ValueError(f"{where}: {name} must be {'>' if strict else '>='} {lower}, got {value}")


class LearningRate(nn.LearningRateSchedule):
    """Warm-up then polynomial decay (MindElec's ``LearningRate``).

    For ``step < warmup_steps``: ``learning_rate * step / warmup_steps``; after:
    ``(learning_rate - end_learning_rate) * (1 - min(step, decay_steps) / decay_steps)**power
    + end_learning_rate``.

    Args:
        learning_rate: peak rate (> 0). end_learning_rate: final rate (>= 0).
        warmup_steps: int >= 0. decay_steps: int > 0. power: float > 0.

    Inputs: ``global_step`` (0-d int Tensor). Outputs: the rate, a 0-d float32 Tensor.
    """

    def __init__(self, learning_rate, end_learning_rate, warmup_steps, decay_steps, power):
        super().__init__()
        where = "LearningRate"
        _check_number(learning_rate, "learning_rate", where, 0.0, True)
        _check_number(end_learning_rate, "end_learning_rate", where, 0.0, False)
        _check_number(warmup_steps, "warmup_steps", where, 0, False, int)
        _check_number(decay_steps, "decay_steps", where, 0, True, int)
        _check_number(power, "power", where, 0.0, True)
        self.warmup_steps = warmup_steps
        self.warmup_lr = nn.WarmUpLR(learning_rate, warmup_steps) if warmup_steps > 0 else None
        self.decay_lr = nn.PolynomialDecayLR(learning_rate, end_learning_rate, decay_steps, power)

    def construct(self, global_step):
        decay = self.decay_lr(global_step)
        if self.warmup_lr is None:
            return decay
        is_warmup = ops.astype(global_step < self.warmup_steps, decay.dtype)
        return (1.0 - is_warmup) * decay + is_warmup * self.warmup_lr(global_step)
