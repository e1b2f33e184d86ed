"""Callbacks of ``mindelec.solver.Solver`` (MindElec's ``LossAndTimeMonitor``, and an
``EvalCallback`` that measures the relative L2 error against reference fields).

A callback has any of the hooks ``begin``, ``epoch_begin``, ``step_begin``, ``step_end``,
``epoch_end``, ``end`` (MindSpore 1.x names, MindElec's) or ``on_train_*`` (``core.train``'s),
each called with a ``core.train.RunContext`` whose ``original_args()`` has ``cur_epoch_num``,
``cur_step_num``, ``batch_num``, ``net_outputs`` (the loss) and ``loss`` (a float).
"""

import time

import numpy as np

from diffsci import core
from diffsci.core.train import Callback

from ..common.metrics import L2

__all__ = ["EvalCallback", "LossAndTimeMonitor"]


class LossAndTimeMonitor(Callback):
    """Print the mean loss and the time of each epoch (MindElec's ``LossAndTimeMonitor``).

    Args:
        data_size: steps per epoch (for the per-step time).
        per_print_times: print every this many epochs (0: never). Default 1.

    Attributes:
        losses: the mean loss of each epoch; step_times: seconds per step of each epoch.
    """

    def __init__(self, data_size, per_print_times=1):
        if isinstance(data_size, bool) or not isinstance(data_size, int) or data_size < 1:
            raise ValueError(
                f"LossAndTimeMonitor: data_size must be a positive int, got {data_size!r}"
            )
        self.data_size = data_size
        self.per_print_times = per_print_times
        self.losses = []
        self.step_times = []
        self._epoch_losses = []
        self._start = None

    def epoch_begin(self, run_context):
        self._start = time.perf_counter()
        self._epoch_losses = []

    def step_end(self, run_context):
        self._epoch_losses.append(run_context.original_args().loss)

    def epoch_end(self, run_context):
        cb = run_context.original_args()
        elapsed = time.perf_counter() - self._start
        mean = float(np.mean(self._epoch_losses)) if self._epoch_losses else float("nan")
        if not np.isfinite(mean):
            raise ValueError(f"LossAndTimeMonitor: loss is {mean} at epoch {cb.cur_epoch_num}")
        self.losses.append(mean)
        self.step_times.append(elapsed / max(len(self._epoch_losses), 1))
        if self.per_print_times and cb.cur_epoch_num % self.per_print_times == 0:
            print(
                f"epoch: {cb.cur_epoch_num} step: {cb.cur_step_num}, loss is {mean:.6g}; "
                f"epoch time: {elapsed * 1e3:.1f} ms, per step time: "
                f"{self.step_times[-1] * 1e3:.1f} ms",
                flush=True,
            )


class EvalCallback(Callback):
    """Every ``predict_interval`` epochs, predict ``inputs`` and record the relative L2 error
    of each output field against ``label`` (MindElec's ``PredictCallback``, less the video).

    Args:
        model: the network ``[N, d] -> [N, m]``.
        inputs: ``[..., d]`` numpy points (one set for all fields), or a list of ``m`` such
            arrays (one per field, e.g. staggered Yee positions).
        label: ``[..., m]`` numpy reference fields.
        output_scale: ``m`` factors multiplying the network's outputs (physical units).
        predict_interval: epochs between evaluations. Default 10.
        batch_size: points per network call. Default 32768.
        field_names: names for the print and ``history``. Default ``f0, f1, ...``.

    Attributes:
        history: list of ``(epoch, {field: l2})``; l2_error: the last errors (a tuple).
    """

    def __init__(
        self,
        model,
        inputs,
        label,
        output_scale=None,
        predict_interval=10,
        batch_size=32768,
        field_names=None,
    ):
        label = np.asarray(label)
        m = label.shape[-1]
        self.model = model
        self.inputs = [np.asarray(a) for a in inputs] if isinstance(inputs, list) else None
        if self.inputs is None:
            self.inputs = [np.asarray(inputs)] * m
        if len(self.inputs) != m:
            raise ValueError(f"EvalCallback: {len(self.inputs)} input sets for {m} label fields")
        self.label = label.reshape(-1, m)
        for arr in self.inputs:
            if arr.reshape(-1, arr.shape[-1]).shape[0] != self.label.shape[0]:
                raise ValueError(
                    f"EvalCallback: inputs {arr.shape} and label {label.shape} hold different "
                    "numbers of points"
                )
        self.output_scale = np.ones(m) if output_scale is None else np.asarray(output_scale)
        self.predict_interval = predict_interval
        self.batch_size = batch_size
        self.field_names = list(field_names or [f"f{i}" for i in range(m)])
        self.history = []
        self.l2_error = (1.0,) * m

    def predict(self):
        """``[P, m]`` predictions in physical units."""
        m = self.label.shape[1]
        pred = np.zeros_like(self.label, dtype=np.float64)
        params = getattr(self.model, "trainable_params", list)()
        dtype = params[0].dtype if params else core.float32
        full = None
        with core.no_grad():
            for i in range(m):
                pts = self.inputs[i].reshape(-1, self.inputs[i].shape[-1])
                if full is not None and self.inputs[i] is self.inputs[0]:
                    pred[:, i] = full[:, i] * self.output_scale[i]
                    continue
                chunks = range(0, len(pts), self.batch_size)
                full = np.concatenate(
                    [
                        self.model(core.tensor(pts[s : s + self.batch_size], dtype=dtype)).asnumpy()
                        for s in chunks
                    ]
                )  # [P, m]
                pred[:, i] = full[:, i] * self.output_scale[i]
        return pred

    def evaluate(self, epoch=0):
        pred = self.predict()
        errors = []
        for i in range(self.label.shape[1]):
            metric = L2()
            metric.update(pred[:, i], self.label[:, i])
            errors.append(metric.eval())
        self.l2_error = tuple(errors)
        self.history.append((epoch, dict(zip(self.field_names, errors))))
        print(
            "l2_error, " + ", ".join(f"{n}: {e:.4g}" for n, e in zip(self.field_names, errors)),
            flush=True,
        )
        return self.l2_error

    def epoch_end(self, run_context):
        epoch = run_context.original_args().cur_epoch_num
        if self.predict_interval and epoch % self.predict_interval == 0:
            self.evaluate(epoch)

    def get_l2_error(self):
        return self.l2_error
