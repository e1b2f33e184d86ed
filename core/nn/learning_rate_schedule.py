"""Learning-rate schedules as Cells (MindSpore ``mindspore.nn.learning_rate_schedule``).

A schedule is called with the optimizer's ``global_step`` (an integer 0-d tensor: the number
of updates already made) and returns the learning rate of the coming update as a 0-d float64
tensor. Everything is written with core ops, so a schedule is traced along with the optimizer
inside ``core.jit``; the optimizer casts the rate to each parameter's dtype.

``ReduceLROnPlateau`` is different: it watches a metric from outside the training step and
rewrites the optimizer's (float) learning rate, like MindSpore's callback of that name.
"""

import math

from .. import dtypes as _dt
from .. import ops
from ..tensor import Tensor
from .cell import Cell

__all__ = [
    "CosineDecayLR",
    "ExponentialDecayLR",
    "InverseDecayLR",
    "LearningRateSchedule",
    "NaturalExpDecayLR",
    "PolynomialDecayLR",
    "ReduceLROnPlateau",
    "WarmUpLR",
    "WarmupCosineDecayLR",
]


def _check_float(name, value, cls, positive=True):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{cls}: {name} must be a float, got {type(value).__name__}")
    if positive and not value > 0:
        raise ValueError(f"{cls}: {name} must be > 0, got {value}")
    if not positive and not value >= 0:
        raise ValueError(f"{cls}: {name} must be >= 0, got {value}")
    return float(value)


def _check_steps(name, value, cls):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{cls}: {name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{cls}: {name} must be >= 1, got {value}")
    return value


def _step_f64(global_step):
    """``global_step`` (any integer/float tensor or Python number) as a float64 tensor."""
    if not isinstance(global_step, Tensor):
        global_step = ops.tensor(global_step)
    return ops.astype(global_step, _dt.float64)


class LearningRateSchedule(Cell):
    """Base class: ``construct(global_step) -> lr`` (a 0-d float64 tensor), written with core ops."""

    def construct(self, global_step):
        raise NotImplementedError(f"{type(self).__name__} does not define construct(global_step)")


class _DecayLR(LearningRateSchedule):
    """Base of the exponential, natural-exponential and inverse decays: their arguments
    ``(learning_rate, decay_rate, decay_steps, is_stair=False)`` and the decay periods."""

    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__()
        cls = type(self).__name__
        self.learning_rate = _check_float("learning_rate", learning_rate, cls)
        self.decay_rate = _check_float("decay_rate", decay_rate, cls)
        self.decay_steps = _check_steps("decay_steps", decay_steps, cls)
        self.is_stair = bool(is_stair)

    def _decay_periods(self, global_step):
        """``step / decay_steps``, floored when ``is_stair``."""
        p = _step_f64(global_step) / float(self.decay_steps)
        return ops.floor(p) if self.is_stair else p


class ExponentialDecayLR(_DecayLR):
    """``lr * decay_rate ** p`` with ``p = step / decay_steps`` (floored when ``is_stair``)."""

    def construct(self, global_step):
        return self.learning_rate * ops.pow(self.decay_rate, self._decay_periods(global_step))


class NaturalExpDecayLR(_DecayLR):
    """``lr * exp(-decay_rate * p)``, ``p = step`` (``floor(step / decay_steps) * decay_steps``
    when ``is_stair``), as in MindSpore."""

    def construct(self, global_step):
        p = _step_f64(global_step)
        if self.is_stair:
            p = ops.floor(p / float(self.decay_steps)) * float(self.decay_steps)
        return self.learning_rate * ops.exp(-self.decay_rate * p)


class InverseDecayLR(_DecayLR):
    """``lr / (1 + decay_rate * p)`` with ``p = step / decay_steps`` (floored when ``is_stair``)."""

    def construct(self, global_step):
        return self.learning_rate / (1.0 + self.decay_rate * self._decay_periods(global_step))


class CosineDecayLR(LearningRateSchedule):
    """``min_lr + 0.5 * (max_lr - min_lr) * (1 + cos(pi * min(step, decay_steps) / decay_steps))``."""

    def __init__(self, min_lr, max_lr, decay_steps):
        super().__init__()
        cls = type(self).__name__
        self.min_lr = _check_float("min_lr", min_lr, cls, positive=False)
        self.max_lr = _check_float("max_lr", max_lr, cls)
        self.decay_steps = _check_steps("decay_steps", decay_steps, cls)
        if self.min_lr >= self.max_lr:
            raise ValueError(f"{cls}: max_lr ({max_lr}) must be greater than min_lr ({min_lr})")

    def construct(self, global_step):
        p = ops.minimum(_step_f64(global_step), float(self.decay_steps))
        delta = 0.5 * (self.max_lr - self.min_lr)
        return self.min_lr + delta * (1.0 + ops.cos(math.pi * p / float(self.decay_steps)))


class PolynomialDecayLR(LearningRateSchedule):
    """``(lr - end_lr) * (1 - step / decay_steps) ** power + end_lr`` (MindSpore's formula;
    with ``update_decay_steps`` the horizon grows to ``decay_steps * ceil(step / decay_steps)``)."""

    def __init__(
        self, learning_rate, end_learning_rate, decay_steps, power, update_decay_steps=False
    ):
        super().__init__()
        cls = type(self).__name__
        self.learning_rate = _check_float("learning_rate", learning_rate, cls)
        self.end_learning_rate = _check_float(
            "end_learning_rate", end_learning_rate, cls, positive=False
        )
        self.decay_steps = _check_steps("decay_steps", decay_steps, cls)
        self.power = _check_float("power", power, cls)
        self.update_decay_steps = bool(update_decay_steps)

    def construct(self, global_step):
        step = _step_f64(global_step)
        horizon = float(self.decay_steps)
        if self.update_decay_steps:
            horizon = horizon * ops.maximum(ops.ceil(step / horizon), 1.0)
        else:
            step = ops.minimum(step, horizon)
        diff = self.learning_rate - self.end_learning_rate
        return diff * ops.pow(1.0 - step / horizon, self.power) + self.end_learning_rate


class WarmUpLR(LearningRateSchedule):
    """``learning_rate * min(step, warmup_steps) / warmup_steps`` (0 at step 0, as in MindSpore)."""

    def __init__(self, learning_rate, warmup_steps):
        super().__init__()
        cls = type(self).__name__
        self.learning_rate = _check_float("learning_rate", learning_rate, cls, positive=False)
        self.warmup_steps = _check_steps("warmup_steps", warmup_steps, cls)

    def construct(self, global_step):
        p = ops.minimum(_step_f64(global_step), float(self.warmup_steps)) / float(self.warmup_steps)
        return self.learning_rate * p


class WarmupCosineDecayLR(LearningRateSchedule):
    """Linear warm-up to ``max_lr`` over ``warmup_steps`` (``WarmUpLR``), then cosine decay to
    ``min_lr`` over ``decay_steps`` (``CosineDecayLR`` shifted by ``warmup_steps``); ``min_lr``
    after that.

    ``lr(s) = max_lr * s / W`` for ``s < W``; ``min_lr + (max_lr - min_lr) / 2 *
    (1 + cos(pi * min(s - W, D) / D))`` for ``s >= W``.
    """

    def __init__(self, min_lr, max_lr, warmup_steps, decay_steps):
        super().__init__()
        self.warmup = WarmUpLR(max_lr, warmup_steps)
        self.decay = CosineDecayLR(min_lr, max_lr, decay_steps)
        self.warmup_steps = warmup_steps

    def construct(self, global_step):
        step = _step_f64(global_step)
        w = float(self.warmup_steps)
        warm = self.warmup(step)
        cos = self.decay(ops.maximum(step - w, 0.0))
        return ops.where(step < w, warm, cos)


class ReduceLROnPlateau:
    """Multiply an optimizer's learning rate by ``factor`` when a metric stops improving.

    Use it from a plain loop (``sched.step(val_loss)`` once per epoch) or pass it to
    ``core.train.Model.train(..., callbacks=[sched])``: at the end of every epoch it reads
    ``cb_params.metrics[monitor]`` (``"loss"``: the epoch's mean training loss, ``"eval_loss"``
    when the model is evaluated on a validation set).

    Args:
        optimizer: an optimizer whose learning rate is a float (one Parameter per group).
        mode: ``"min"`` (lower is better) or ``"max"``.
        factor: multiplier in (0, 1).
        patience: epochs without improvement tolerated before reducing.
        threshold: the smallest change that counts as an improvement, relative
            (``threshold_mode="rel"``: ``best * (1 - threshold)``) or absolute (``"abs"``).
        cooldown: epochs to wait after a reduction before counting bad epochs again.
        min_lr: floor of the learning rate (a float, or one per group).
        eps: reductions smaller than this are skipped.
        monitor: the metric's name when used as a callback.
    """

    def __init__(
        self,
        optimizer,
        mode="min",
        factor=0.1,
        patience=10,
        threshold=1e-4,
        threshold_mode="rel",
        cooldown=0,
        min_lr=0.0,
        eps=1e-8,
        monitor="loss",
        verbose=False,
    ):
        if not 0.0 < factor < 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be in (0, 1), got {factor}")
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(
                f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}"
            )
        self.lr_params = optimizer.lr_parameters()
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(self.lr_params):
                raise ValueError(
                    f"ReduceLROnPlateau: {len(min_lr)} min_lr values for {len(self.lr_params)} learning rates"
                )
            self.min_lrs = [float(v) for v in min_lr]
        else:
            self.min_lrs = [float(min_lr)] * len(self.lr_params)
        self.optimizer = optimizer
        self.mode, self.factor, self.patience = mode, float(factor), int(patience)
        self.threshold, self.threshold_mode = float(threshold), threshold_mode
        self.cooldown, self.eps, self.monitor, self.verbose = (
            int(cooldown),
            float(eps),
            monitor,
            verbose,
        )
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0

    def _is_better(self, value):
        if self.mode == "min":
            ref = (
                self.best * (1.0 - self.threshold)
                if self.threshold_mode == "rel"
                else self.best - self.threshold
            )
            return value < ref
        ref = (
            self.best * (1.0 + self.threshold)
            if self.threshold_mode == "rel"
            else self.best + self.threshold
        )
        return value > ref

    def step(self, metric):
        """Record one epoch's ``metric``; returns True when the learning rate was reduced."""
        value = float(metric)
        if self._is_better(value):
            self.best = value
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs <= self.patience:
            return False
        reduced = False
        for p, floor in zip(self.lr_params, self.min_lrs, strict=True):
            old = float(p)
            new = max(old * self.factor, floor)
            if old - new > self.eps:
                p.set_data(ops.full_like(p, new))
                reduced = True
                if self.verbose:
                    print(f"ReduceLROnPlateau: {p.name} {old:.4e} -> {new:.4e}")
        self.cooldown_counter = self.cooldown
        self.num_bad_epochs = 0
        return reduced

    # callback protocol of core.train.Model
    def on_train_epoch_end(self, run_context):
        metrics = run_context.original_args().metrics
        if self.monitor not in metrics:
            raise KeyError(
                f"ReduceLROnPlateau: metric {self.monitor!r} not available; have {sorted(metrics)}"
            )
        self.step(metrics[self.monitor])
