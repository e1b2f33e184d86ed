"""Callbacks of :class:`core.train.Model` (MindSpore ``mindspore.train.callback`` names).

A callback is any object with some of the methods ``on_train_begin``,
``on_train_epoch_begin``, ``on_train_step_begin``, ``on_train_step_end``,
``on_train_epoch_end``, ``on_train_end`` (each called with a :class:`RunContext`);
subclassing :class:`Callback` is optional. ``run_context.original_args()`` is the
:class:`CallbackParams` of the run; ``run_context.request_stop()`` ends training after the
current step.
"""

import math
import os
import re
import time

from ..serialization import save_checkpoint

__all__ = [
    "Callback",
    "CallbackParams",
    "CheckpointCallback",
    "EarlyStopping",
    "LossMonitor",
    "ProgressBar",
    "RunContext",
    "TimeMonitor",
]


class CallbackParams:
    """What callbacks see of a training run.

    Attributes:
        network, optimizer, loss_fn: the Model's parts.
        epoch_num: epochs requested; cur_epoch_num: current epoch (1-based).
        cur_step_num: updates made since the start of training (global, 1-based after a step).
        step_in_epoch: updates made in the current epoch.
        batch_num: batches per epoch when the dataset has ``len()``, else None.
        net_outputs: the loss of the last step (0-d tensor).
        loss: ``float(net_outputs)`` (computed once per step).
        metrics: at epoch end, ``{"loss": mean training loss of the epoch}`` plus
            ``{"eval_loss": ..., "eval_<name>": ...}`` when a validation set is given.
    """

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


class RunContext:
    """Handed to every callback method: the run's parameters and a stop flag."""

    def __init__(self, cb_params):
        self._cb_params = cb_params
        self._stop = False

    def original_args(self):
        return self._cb_params

    def request_stop(self):
        self._stop = True

    def get_stop_requested(self):
        return self._stop


class Callback:
    """Base class with every hook as a no-op (subclassing it is optional)."""

    def on_train_begin(self, run_context):
        pass

    def on_train_epoch_begin(self, run_context):
        pass

    def on_train_step_begin(self, run_context):
        pass

    def on_train_step_end(self, run_context):
        pass

    def on_train_epoch_end(self, run_context):
        pass

    def on_train_end(self, run_context):
        pass


class LossMonitor(Callback):
    """Print the loss every ``per_print_times`` steps; keep every loss in ``self.losses``."""

    def __init__(self, per_print_times=1):
        if int(per_print_times) < 0:
            raise ValueError(f"LossMonitor: per_print_times must be >= 0, got {per_print_times}")
        self.per_print_times = int(per_print_times)
        self.losses = []

    def on_train_step_end(self, run_context):
        cb = run_context.original_args()
        loss = cb.loss
        self.losses.append(loss)
        if not math.isfinite(loss):
            raise ValueError(
                f"LossMonitor: loss is {loss} at epoch {cb.cur_epoch_num}, step {cb.cur_step_num}"
            )
        if self.per_print_times and cb.cur_step_num % self.per_print_times == 0:
            print(f"epoch: {cb.cur_epoch_num} step: {cb.step_in_epoch}, loss is {loss:.6g}")


class TimeMonitor(Callback):
    """Print each epoch's wall time and the mean time per step (``self.epoch_times``, seconds)."""

    def __init__(self, data_size=None):
        self.data_size = data_size
        self.epoch_times = []
        self._start = None

    def on_train_epoch_begin(self, run_context):
        self._start = time.perf_counter()

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        elapsed = time.perf_counter() - self._start
        self.epoch_times.append(elapsed)
        steps = self.data_size or cb.step_in_epoch or 1
        print(
            f"epoch {cb.cur_epoch_num}: {elapsed * 1e3:.1f} ms, {elapsed * 1e3 / steps:.2f} ms/step"
        )


class ProgressBar(Callback):
    """A tqdm progress bar over the steps of each epoch, showing the loss."""

    def __init__(self, leave=False, file=None):
        self.leave = leave
        self.file = file
        self._bar = None

    def on_train_epoch_begin(self, run_context):
        from tqdm.auto import tqdm

        cb = run_context.original_args()
        self._bar = tqdm(
            total=cb.batch_num,
            desc=f"epoch {cb.cur_epoch_num}/{cb.epoch_num}",
            leave=self.leave,
            file=self.file,
        )

    def on_train_step_end(self, run_context):
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix(loss=f"{run_context.original_args().loss:.4g}", refresh=False)

    def on_train_epoch_end(self, run_context):
        self._close()

    def on_train_end(self, run_context):
        self._close()

    def _close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class EarlyStopping(Callback):
    """Stop training when ``monitor`` has not improved by ``min_delta`` for ``patience`` epochs.

    Args:
        monitor: a key of ``cb_params.metrics`` (``"loss"``, ``"eval_loss"``, ...).
        patience: epochs without improvement before stopping.
        min_delta: the smallest change that counts as an improvement.
        mode: ``"min"`` or ``"max"``.
        baseline: a value the metric must beat to count as an improvement at all.

    After training, ``stopped_epoch`` is the epoch at which training stopped (0 if it did not).
    """

    def __init__(self, monitor="loss", patience=0, min_delta=0.0, mode="min", baseline=None):
        if mode not in ("min", "max"):
            raise ValueError(f"EarlyStopping: mode must be 'min' or 'max', got {mode!r}")
        self.monitor, self.patience, self.min_delta = monitor, int(patience), abs(float(min_delta))
        self.mode, self.baseline = mode, baseline
        self.best = None
        self.wait = 0
        self.stopped_epoch = 0

    def on_train_begin(self, run_context):
        self.wait, self.stopped_epoch = 0, 0
        self.best = (
            self.baseline
            if self.baseline is not None
            else (math.inf if self.mode == "min" else -math.inf)
        )

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        if self.monitor not in cb.metrics:
            raise KeyError(
                f"EarlyStopping: metric {self.monitor!r} not available; have {sorted(cb.metrics)}"
            )
        value = float(cb.metrics[self.monitor])
        better = (
            value < self.best - self.min_delta
            if self.mode == "min"
            else value > self.best + self.min_delta
        )
        if better:
            self.best, self.wait = value, 0
            return
        self.wait += 1
        if self.wait > self.patience:
            self.stopped_epoch = cb.cur_epoch_num
            run_context.request_stop()


class CheckpointCallback(Callback):
    """Save network + optimizer every ``every_n_steps`` steps and at the end of training.

    Files are ``<directory>/<prefix>-<epoch>_<step>.ckpt.h5`` (MindSpore's naming; ``step``
    counts updates since the start of training). Each file holds the network's parameters,
    the optimizer's state and ``epoch_num`` (epochs completed), ``step_num`` (updates made)
    and ``step_in_epoch``, so ``Model.train(..., resume_from=path)`` continues exactly.

    Args:
        every_n_steps: save period in steps (None: only at epochs/end).
        every_n_epochs: save period in epochs (None: not per epoch).
        directory: where to write (created if missing).
        prefix: file name prefix.
        keep_max: how many of this callback's files to keep (oldest deleted first).
    """

    def __init__(
        self, every_n_steps=None, directory=".", prefix="ckpt", keep_max=5, every_n_epochs=None
    ):
        for name, v in (("every_n_steps", every_n_steps), ("every_n_epochs", every_n_epochs)):
            if v is not None and int(v) < 1:
                raise ValueError(f"CheckpointCallback: {name} must be >= 1 or None, got {v}")
        if int(keep_max) < 1:
            raise ValueError(f"CheckpointCallback: keep_max must be >= 1, got {keep_max}")
        if not re.fullmatch(r"[A-Za-z0-9_.\-]+", prefix):
            raise ValueError(
                f"CheckpointCallback: prefix {prefix!r} must be a plain file-name part"
            )
        self.every_n_steps = every_n_steps and int(every_n_steps)
        self.every_n_epochs = every_n_epochs and int(every_n_epochs)
        self.directory = os.fspath(directory)
        self.prefix = prefix
        self.keep_max = int(keep_max)
        self.saved = []  # paths written and still on disk, oldest first
        self._last_step = None

    @property
    def latest(self):
        """Path of the newest checkpoint written by this callback (None before the first)."""
        return self.saved[-1] if self.saved else None

    def on_train_begin(self, run_context):
        os.makedirs(self.directory, exist_ok=True)

    def on_train_step_end(self, run_context):
        cb = run_context.original_args()
        if self.every_n_steps and cb.cur_step_num % self.every_n_steps == 0:
            self._save(cb, epochs_done=cb.cur_epoch_num - 1)

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        if self.every_n_epochs and cb.cur_epoch_num % self.every_n_epochs == 0:
            self._save(cb, epochs_done=cb.cur_epoch_num)

    def on_train_end(self, run_context):
        cb = run_context.original_args()
        if self._last_step != cb.cur_step_num:
            self._save(cb, epochs_done=cb.epochs_done)

    def _save(self, cb, epochs_done):
        step_in_epoch = 0 if epochs_done >= cb.cur_epoch_num else cb.step_in_epoch
        path = os.path.join(
            self.directory, f"{self.prefix}-{cb.cur_epoch_num}_{cb.cur_step_num}.ckpt.h5"
        )
        objs = [cb.network] + ([cb.optimizer] if cb.optimizer is not None else [])
        save_checkpoint(
            objs,
            path,
            append_dict={
                "epoch_num": int(epochs_done),
                "step_num": int(cb.cur_step_num),
                "step_in_epoch": int(step_in_epoch),
            },
        )
        self._last_step = cb.cur_step_num
        if path in self.saved:
            self.saved.remove(path)
        self.saved.append(path)
        while len(self.saved) > self.keep_max:
            old = self.saved.pop(0)
            try:
                os.remove(old)
            except FileNotFoundError:
                pass
