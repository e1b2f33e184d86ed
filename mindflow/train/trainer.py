"""``OperatorTrainer``: data-driven training of neural-operator surrogates on ``datasets`` data.

The recipe of the FNO paper (Li et al., ICLR 2021, arXiv 2010.08895) and MindFlow's
``applications/data_driven`` scripts, on the core engine:

- data: a :class:`~mindflow.train.TrajectorySource` (time-dependent: cut into windows of
  ``t_in`` input frames and ``t_out`` label frames), a :class:`~mindflow.train.PairSource`
  (steady input -> output pairs) or a :class:`~mindflow.train.SpaceTimeSource` (FNO-3D's
  first ``t_in`` frames -> next ``t_out`` frames at once); ``datasets.GeneratorDataset`` shuffles and batches them
  each epoch (a fresh pipeline per epoch, seeded by ``(seed, epoch)``, so a resumed run draws
  the same batches as an uninterrupted one);
- loss: one-step (``t_out=1``) or autoregressive rollout (``t_out > 1``: the model sees the
  last ``t_in`` frames, predicts one, and its prediction is fed back, as in FNO-2D's recurrent
  Navier-Stokes training); the loss is the mean over the rolled-out frames of ``loss_fn``
  (default ``RelativeRMSELoss(reduction="mean")``, the relative L2 error);
- Adam (or AdamW / MindSpore's AdamWeightDecay) with a per-step learning rate: ``"cosine"``
  (MindFlow's ``get_warmup_cosine_annealing_lr``), ``"step"`` (``get_multi_step_lr``: FNO's
  StepLR) or ``"constant"``;
- the whole step (forward, rollout, backward, update) is one ``core.jit`` call;
- memory: ``recompute="block"`` recomputes each FNO block in the backward pass
  (``Cell.recompute``), ``recompute="step"`` recomputes each rollout step (any model);
- checkpoints (core's HDF5 format, written atomically) hold the parameters, the optimizer
  state, the epoch and the history; :meth:`OperatorTrainer.resume` continues bit for bit;
- a tqdm bar shows the loss and the latest test error; :meth:`OperatorTrainer.evaluate` reports
  the one-step and the rollout errors separately, per time step (relative L2 and nRMSE).
"""

import math
import os

import numpy as np

from diffsci import core
from diffsci.core import nn
from diffsci.datasets import GeneratorDataset
from diffsci.datasets import metrics as _metrics

from ..core import (
    RelativeRMSELoss,
    get_loss_metric,
    get_multi_step_lr,
    get_warmup_cosine_annealing_lr,
)
from ..pde.flow_with_loss import UnsteadyFlowWithLoss
from .data import PairSource, TrajectorySource, WindowSource
from .normalizer import UnitGaussianNormalizer
from .report import EvaluationReport

__all__ = ["OperatorTrainer"]

CHECKPOINT_NAME = "operator.ckpt.h5"
_SCHEDULES = ("cosine", "step", "constant")
_OPTIMIZERS = {"adam": nn.Adam, "adamw": nn.AdamW, "adamweightdecay": nn.AdamWeightDecay}


class _Recomputed(nn.Cell):
    """``model`` whose activations are recomputed in the backward pass (one rollout step)."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self._fn = core.recompute(model)

    def construct(self, x):
        return self._fn(x)


class OperatorTrainer:
    """Train a neural operator on trajectories or input -> output pairs.

    Args:
        model: a ``core.nn.Cell`` taking channels-last batches: ``[N, *spatial, t_in * C]
            -> [N, *spatial, C]`` for trajectories (frame-major channels, as
            ``UnsteadyFlowWithLoss``'s ``"NHWTC"``), ``[N, *spatial, C_in] -> [N, *spatial,
            C_out]`` for pairs. ``FNO1D/2D/3D(in_channels=t_in * C, out_channels=C, ...)``.
        train_data: a :class:`TrajectorySource`, a :class:`PairSource` or a
            :class:`SpaceTimeSource` (a PairSource whose errors are also reported per frame).
        test_data: the same kind (optional): evaluated every ``eval_every`` epochs; for
            trajectories the whole trajectory after the first ``t_in`` frames is rolled out.
        t_in: input frames (trajectories only). Default 1.
        t_out: frames rolled out in training (1: one-step training). Default 1.
        stride: frames between training windows. Default 1.
        loss_fn: a loss Cell, a name for ``get_loss_metric``, or ``"relative_l2"`` (default:
            ``RelativeRMSELoss(reduction="mean")``).
        optimizer: ``"adam"`` (default), ``"adamw"`` or ``"adamweightdecay"``.
        lr: the initial learning rate. weight_decay: the optimizer's weight decay.
        schedule: ``"cosine"`` (default; ``warmup_epochs``, ``eta_min``), ``"step"``
            (multiply by ``gamma`` every ``step_size`` epochs) or ``"constant"``.
        epochs: epochs in the whole run. batch_size: training batch.
        test_batch_size: evaluation batch (default ``batch_size``).
        drop_remainder: drop the last short training batch (keeps one compiled shape).
        seed: shuffling seed (epoch e is shuffled with ``SeedSequence([seed, e])``).
        jit: compile the training step and the evaluation forward with ``core.jit``.
        recompute: None, ``"block"`` (every ``FNOBlocks`` in the model) or ``"step"``.
        checkpoint_dir: where :meth:`save` writes ``operator.ckpt.h5``: at the end of each
            :meth:`fit` and, with ``checkpoint_every`` > 0, every that many epochs.
        eval_every: evaluate ``test_data`` every this many epochs (0: never during fit).
        progress: show a tqdm bar.
        normalize: pairs only: scale inputs and labels per grid point to zero mean and unit
            variance over the training set (FNO's ``UnitGaussianNormalizer``); the model
            learns in the scaled variables, the loss and every reported error are in the
            original ones. The statistics are saved in checkpoints.

    Raises:
        ValueError: the data's channels do not fit the model's (the message names both), an
            unknown schedule/optimizer/recompute option, or no training batch.
    """

    def __init__(
        self,
        model,
        train_data,
        test_data=None,
        *,
        t_in=1,
        t_out=1,
        stride=1,
        loss_fn="relative_l2",
        optimizer="adam",
        lr=1e-3,
        weight_decay=0.0,
        schedule="cosine",
        warmup_epochs=0,
        eta_min=1e-6,
        step_size=100,
        gamma=0.5,
        epochs=100,
        batch_size=20,
        test_batch_size=None,
        drop_remainder=False,
        seed=0,
        jit=True,
        recompute=None,
        checkpoint_dir=None,
        checkpoint_every=0,
        eval_every=1,
        progress=True,
        normalize=False,
    ):
        if not isinstance(model, nn.Cell):
            raise TypeError(f"OperatorTrainer: model must be a core.nn.Cell, got {type(model)}")
        if schedule not in _SCHEDULES:
            raise ValueError(
                f"OperatorTrainer: schedule must be one of {_SCHEDULES}, got {schedule!r}"
            )
        if optimizer not in _OPTIMIZERS:
            raise ValueError(
                f"OperatorTrainer: optimizer must be one of {sorted(_OPTIMIZERS)}, got {optimizer!r}"
            )
        if recompute not in (None, "block", "step"):
            raise ValueError(
                f"OperatorTrainer: recompute must be None, 'block' or 'step', got {recompute!r}"
            )
        self.model = model
        self.unsteady = isinstance(train_data, TrajectorySource)
        if not self.unsteady and not isinstance(train_data, PairSource):
            raise TypeError(
                "OperatorTrainer: train_data must be a TrajectorySource, a PairSource or a "
                "SpaceTimeSource, got "
                f"{type(train_data).__name__}"
            )
        if test_data is not None and isinstance(test_data, TrajectorySource) != self.unsteady:
            raise TypeError(
                f"OperatorTrainer: test_data is a {type(test_data).__name__} but train_data a "
                f"{type(train_data).__name__}"
            )
        self.train_data, self.test_data = train_data, test_data
        self.t_in, self.t_out = int(t_in), int(t_out)
        self.windows = (
            WindowSource(train_data, t_in, t_out, stride) if self.unsteady else train_data
        )
        self.epochs, self.batch_size = int(epochs), int(batch_size)
        self.test_batch_size = int(test_batch_size or batch_size)
        self.drop_remainder = bool(drop_remainder)
        n = len(self.windows)
        self.steps_per_epoch = (
            n // self.batch_size if drop_remainder else math.ceil(n / self.batch_size)
        )
        if self.steps_per_epoch < 1:
            raise ValueError(
                f"OperatorTrainer: {n} training samples give no batch of {self.batch_size} "
                "(drop_remainder=True)"
            )
        self.seed = int(seed)
        self.jit = bool(jit)
        self.checkpoint_dir = checkpoint_dir
        self.checkpoint_every = int(checkpoint_every)
        self.eval_every = int(eval_every)
        self.progress = bool(progress)
        self.dtype = train_data.dtype
        self.x_normalizer = self.y_normalizer = None
        self._check_channels(train_data, "train_data")
        if test_data is not None:
            self._check_channels(test_data, "test_data")

        if recompute == "block":
            from ..cell.neural_operators.fno import FNOBlocks

            blocks = [c for _, c in model.cells_and_names() if isinstance(c, FNOBlocks)]
            if not blocks:
                raise ValueError(
                    "OperatorTrainer: recompute='block' found no FNOBlocks in the model; use "
                    "recompute='step' for other models"
                )
            for b in blocks:
                b.recompute()
        self.recompute = recompute
        if normalize:
            if self.unsteady:
                raise ValueError(
                    "OperatorTrainer: normalize=True is for pairs (PairSource / SpaceTimeSource);"
                    " rollouts feed predictions back and train in the data's own units"
                )

            def column(k):  # one streaming pass over the training set per column
                for batch in self._batches(train_data, 0, self.batch_size, False, False):
                    yield batch[k]

            self.x_normalizer = UnitGaussianNormalizer.fit(column(0))
            self.y_normalizer = UnitGaussianNormalizer.fit(column(1))
        step_model = _Recomputed(model) if recompute == "step" else model

        if isinstance(loss_fn, str):
            loss_fn = (
                RelativeRMSELoss(reduction="mean")
                if loss_fn in ("relative_l2", "relative_rmse")
                else get_loss_metric(loss_fn)
            )
        self.loss_fn = loss_fn
        if self.unsteady:
            self.problem = UnsteadyFlowWithLoss(
                step_model, t_in=self.t_in, t_out=self.t_out, loss_fn=loss_fn, data_format="NHWTC"
            )
        total = self.epochs * self.steps_per_epoch
        if schedule == "cosine":
            lrs = get_warmup_cosine_annealing_lr(
                float(lr), self.steps_per_epoch, self.epochs, int(warmup_epochs), eta_min=eta_min
            )
        elif schedule == "step":
            milestones = list(range(int(step_size), self.epochs, int(step_size)))
            lrs = (
                get_multi_step_lr(
                    float(lr), milestones, float(gamma), self.steps_per_epoch, self.epochs
                )
                if milestones
                else np.full(total, lr, np.float32)
            )
        else:
            lrs = np.full(total, lr, np.float32)
        self.learning_rates = np.asarray(lrs, dtype=np.float32)
        self.optimizer = _OPTIMIZERS[optimizer](
            model.trainable_params(),
            learning_rate=core.Tensor(self.learning_rates),
            weight_decay=weight_decay,
        )
        self._compile()
        self.epoch = 0
        self.step = 0
        self._partial = (0, 0.0, 0)  # (batches used, loss sum, samples) of the open epoch
        self.history = {"loss": [], "epoch_loss": [], "test_epoch": [], "test_rel_l2": []}
        self.last_report = None

    def _compile(self):
        """The training step (forward, rollout, backward, update) and the forward pass, each
        one ``core.jit`` call (rebuilt when the normalizers' constants change)."""
        grad_fn = core.value_and_grad(self._loss, None, self.optimizer.parameters)
        opt = self.optimizer

        def train_step(inputs, labels):
            loss, grads = grad_fn(inputs, labels)
            opt(grads)
            return loss

        self._train_step = core.jit(train_step) if self.jit else train_step
        self._predict = core.jit(self._forward) if self.jit else self._forward

    # ---- checks ----------------------------------------------------------------------------
    def _check_channels(self, data, name):
        if self.unsteady:
            c = data.n_channels
            want_in, want_out = self.t_in * c, c
            what = f"{name} has C={c} channel(s) {list(data.fields)} x t_in={self.t_in} frames"
        else:
            want_in, want_out = data.in_channels, data.out_channels
            what = (
                f"{name} has inputs with C_in={want_in} and labels with C_out={want_out} channels"
            )
        got_in = getattr(self.model, "in_channels", None)
        got_out = getattr(self.model, "out_channels", None)
        if got_in is not None and got_in != want_in:
            raise ValueError(
                f"OperatorTrainer: {what}, so the model needs in_channels={want_in}, but it has "
                f"in_channels={got_in}"
            )
        if got_out is not None and got_out != want_out:
            raise ValueError(
                f"OperatorTrainer: {what}, so the model needs out_channels={want_out}, but it "
                f"has out_channels={got_out}"
            )
        # a model without channel attributes: one forward pass on one sample
        x = self._sample_input(data)
        try:
            with core.no_grad():
                y = self._forward(x)
        except (ValueError, TypeError) as e:
            raise ValueError(
                f"OperatorTrainer: {what}; the model fails on an input of shape "
                f"{tuple(x.shape)} (needs in_channels={want_in}): {e}"
            ) from e
        want = (1, *data.spatial_shape, want_out)
        if tuple(y.shape) != want:
            raise ValueError(
                f"OperatorTrainer: {what}; the model maps an input of shape {tuple(x.shape)} to "
                f"{tuple(y.shape)}, expected {want} (check the model's in/out channels)"
            )

    def _sample_input(self, data):
        if self.unsteady:
            u = data[0][..., : self.t_in, :]  # [*spatial, t_in, C]
            return core.Tensor(u.reshape(*u.shape[:-2], -1)[None])  # [1, *spatial, t_in*C]
        return core.Tensor(data[0][0][None])  # [1, *spatial, C_in]

    # ---- the step -------------------------------------------------------------------------
    def _forward(self, x):
        if self.x_normalizer is None:
            return self.model(x)
        return self.y_normalizer.decode(self.model(self.x_normalizer.encode(x)))

    def _rollout(self, inputs):
        """``[N, *spatial, t_in, C] -> [N, *spatial, t_out, C]`` (training rollout)."""
        return self.problem.step(inputs)

    def _loss(self, inputs, labels):
        if not self.unsteady:
            return self.loss_fn(self._forward(inputs), labels)
        pred = self._rollout(inputs)  # [N, *spatial, t_out, C]
        total = None
        for k in range(self.t_out):
            term = self.loss_fn(pred[..., k, :], labels[..., k, :])
            total = term if total is None else total + term
        return total / self.t_out

    def _batches(self, source, epoch, batch_size, shuffle, drop_remainder):
        """One epoch of ``(inputs, labels)`` numpy batches through the datasets pipeline."""
        seed = (
            int(np.random.SeedSequence([self.seed, epoch]).generate_state(1)[0])
            if shuffle
            else None
        )
        ds = GeneratorDataset(
            source, column_names=["inputs", "labels"], shuffle=shuffle, seed=seed
        ).batch(batch_size, drop_remainder=drop_remainder)
        it = ds.create_tuple_iterator(num_epochs=1, output_numpy=True)
        try:
            yield from it
        finally:
            it.stop()

    # ---- training -------------------------------------------------------------------------
    def fit(self, until=None, max_steps=None):
        """Train until epoch ``until`` (default ``epochs``) or, when given, until the global
        step ``max_steps`` (which may fall inside an epoch); returns the history.

        Work already done (after :meth:`resume`) is skipped: a run stopped by ``max_steps``
        writes a checkpoint (with a ``checkpoint_dir``) from which :meth:`resume` continues
        inside the epoch with the batches the uninterrupted run would have drawn.
        """
        until = self.epochs if until is None else min(int(until), self.epochs)
        from tqdm import tqdm

        bar = tqdm(
            total=self.epochs * self.steps_per_epoch,
            initial=self.step,
            disable=not self.progress,
            desc="OperatorTrainer",
            dynamic_ncols=True,
        )
        try:
            while self.epoch < until:
                self.model.set_train(True)
                done, total, count = self._partial  # batches of this epoch already used
                stopped = False
                batches = self._batches(
                    self.windows, self.epoch, self.batch_size, True, self.drop_remainder
                )
                for j, (inputs, labels) in enumerate(batches):
                    if j < done:
                        continue
                    if max_steps is not None and self.step >= max_steps:
                        self._partial = (j, total, count)
                        stopped = True
                        break
                    loss = self._train_step(core.Tensor(inputs), core.Tensor(labels))
                    value = float(loss.asnumpy())
                    if not math.isfinite(value):
                        raise FloatingPointError(
                            f"OperatorTrainer: the loss is {value} at step {self.step} "
                            f"(epoch {self.epoch})"
                        )
                    self.history["loss"].append(value)
                    total, count = total + value * len(inputs), count + len(inputs)
                    self.step += 1
                    bar.update(1)
                    bar.set_postfix_str(self._postfix(value))
                batches.close()  # stops the pipeline's reader when we left early
                if stopped:
                    if self.checkpoint_dir is not None:
                        self.save()
                    break
                self._partial = (0, 0.0, 0)
                self.epoch += 1
                self.history["epoch_loss"].append(total / count)
                if (
                    self.test_data is not None
                    and self.eval_every
                    and (self.epoch % self.eval_every == 0 or self.epoch == self.epochs)
                ):
                    self.last_report = self.evaluate()
                    self.history["test_epoch"].append(self.epoch)
                    self.history["test_rel_l2"].append(self.last_report.headline())
                    bar.set_postfix_str(self._postfix(self.history["loss"][-1]))
                every = self.checkpoint_every
                if self.checkpoint_dir is not None and (
                    (every and self.epoch % every == 0) or self.epoch == until
                ):
                    self.save()
                if max_steps is not None and self.step >= max_steps:
                    break
        finally:
            bar.close()
        return self.history

    def _postfix(self, loss):
        text = f"epoch {self.epoch} loss {loss:.3e}"
        if self.history["test_rel_l2"]:
            text += f" test relative L2 {self.history['test_rel_l2'][-1]:.3e}"
        return text

    # ---- evaluation -----------------------------------------------------------------------
    def predict(self, x):
        """The model on a numpy batch ``x`` (no gradients), as a numpy array."""
        self.model.set_train(False)
        with core.no_grad():
            return self._predict(core.Tensor(np.asarray(x, dtype=self.dtype))).asnumpy()

    def rollout(self, initial, steps):
        """Autoregressive prediction from ``initial [N, *spatial, t_in, C]`` for ``steps``
        frames: ``[N, *spatial, steps, C]`` (numpy)."""
        window = np.asarray(initial, dtype=self.dtype)
        frames = []
        for _ in range(steps):
            pred = self.predict(window.reshape(*window.shape[:-2], -1))  # [N, *spatial, C]
            frames.append(pred)
            window = np.concatenate([window[..., 1:, :], pred[..., None, :]], axis=-2)
        return np.stack(frames, axis=-2)

    def one_step(self, trajectories):
        """Teacher-forced predictions: frame k from the true frames ``k - t_in .. k - 1`` for
        every ``k >= t_in``: ``[N, *spatial, T - t_in, C]`` (numpy)."""
        u = np.asarray(trajectories, dtype=self.dtype)
        frames = []
        for k in range(self.t_in, u.shape[-2]):
            w = u[..., k - self.t_in : k, :]
            frames.append(self.predict(w.reshape(*w.shape[:-2], -1)))
        return np.stack(frames, axis=-2)

    def evaluate(self, data=None, batch_size=None):
        """Errors on ``data`` (default ``test_data``).

        For trajectories: the one-step (teacher-forced) and the rollout (autoregressive from
        the first ``t_in`` frames) predictions of every frame after the first ``t_in``, with
        the relative L2 error (``RelativeRMSELoss``, per sample over space and channels, then
        averaged over samples) and nRMSE (``datasets.metrics.nrmse``) per time step. For pairs:
        one relative L2 and one nRMSE.

        Returns:
            an :class:`~mindflow.train.EvaluationReport` (``print`` it for a table).
        """
        data = self.test_data if data is None else data
        if data is None:
            raise ValueError("OperatorTrainer.evaluate: no data given and no test_data")
        bs = int(batch_size or self.test_batch_size)
        rel = RelativeRMSELoss(reduction="none")
        sums = {}
        n = 0

        def add(key, values):
            sums[key] = sums.get(key, 0.0) + np.asarray(values, dtype=np.float64)

        if not self.unsteady:
            space_time = getattr(data, "space_time", False)
            for inputs, labels in self._batches(data, 0, bs, False, False):
                pred = self.predict(inputs)
                add("rel", rel(core.Tensor(pred), core.Tensor(labels)).asnumpy().sum())
                if space_time:  # [B, *spatial, t_out, C]: per output frame too
                    per_step = [
                        rel(core.Tensor(pred[..., k, :]), core.Tensor(labels[..., k, :]))
                        .asnumpy()
                        .sum()
                        for k in range(labels.shape[-2])
                    ]
                    add("rel_step", per_step)
                    nr = _metrics.nrmse(pred, labels, reduce="time")  # [t_out]
                    add("nrmse_step", nr * len(inputs))
                    add("nrmse", nr.mean() * len(inputs))
                else:
                    nr = _metrics.nrmse(pred[..., None, :], labels[..., None, :], reduce="none")
                    add("nrmse", nr.mean() * len(inputs))
                n += len(inputs)
            return EvaluationReport(
                relative_l2=float(sums["rel"] / n),
                nrmse=float(sums["nrmse"] / n),
                n_samples=n,
                t_in=getattr(data, "t_in", 0),
                relative_l2_per_step=sums["rel_step"] / n if space_time else None,
                nrmse_per_step=sums["nrmse_step"] / n if space_time else None,
            )

        ids = _Indexed(data)
        for (u,) in _tuple_batches(ids, bs):
            true = u[..., self.t_in :, :]  # [B, *spatial, T - t_in, C]
            for name, pred in (
                ("one_step", self.one_step(u)),
                ("rollout", self.rollout(u[..., : self.t_in, :], true.shape[-2])),
            ):
                per_step = [
                    rel(core.Tensor(pred[..., k, :]), core.Tensor(true[..., k, :])).asnumpy().sum()
                    for k in range(true.shape[-2])
                ]
                add(f"{name}_rel", per_step)
                # nRMSE per time step: mean over channels of [C, T'], times the batch for the sum
                add(f"{name}_nrmse", _metrics.nrmse(pred, true, reduce="time") * len(u))
            n += len(u)
        report = EvaluationReport(
            one_step_relative_l2=sums["one_step_rel"] / n,
            rollout_relative_l2=sums["rollout_rel"] / n,
            one_step_nrmse=sums["one_step_nrmse"] / n,
            rollout_nrmse=sums["rollout_nrmse"] / n,
            n_samples=n,
            t_in=self.t_in,
        )
        return report

    # ---- checkpoints ------------------------------------------------------------------------
    def _state(self):
        state = {}
        for name, p in self.model.parameters_and_names():
            state[f"net.{name}"] = p
        for name, p in self.optimizer.parameters_and_names():
            state[f"opt.{name}"] = p
        if self.x_normalizer is not None:
            for key, norm in (("x", self.x_normalizer), ("y", self.y_normalizer)):
                state[f"normalizer.{key}.mean"] = norm.mean_np
                state[f"normalizer.{key}.std"] = norm.std_np
        state["epoch"] = np.asarray(self.epoch, np.int64)
        state["step"] = np.asarray(self.step, np.int64)
        done, total, count = self._partial
        state["epoch_partial.batches"] = np.asarray(done, np.int64)
        state["epoch_partial.loss_sum"] = np.asarray(total, np.float64)
        state["epoch_partial.samples"] = np.asarray(count, np.int64)
        state["history.loss"] = np.asarray(self.history["loss"], np.float64)
        state["history.epoch_loss"] = np.asarray(self.history["epoch_loss"], np.float64)
        state["history.test_epoch"] = np.asarray(self.history["test_epoch"], np.int64)
        state["history.test_rel_l2"] = np.asarray(self.history["test_rel_l2"], np.float64)
        return state

    def save(self, path=None):
        """Write the model, optimizer state, epoch and history (atomically); returns the
        path (default ``checkpoint_dir/operator.ckpt.h5``)."""
        if path is None:
            if self.checkpoint_dir is None:
                raise ValueError("OperatorTrainer.save: give a path or a checkpoint_dir")
            os.makedirs(self.checkpoint_dir, exist_ok=True)
            path = os.path.join(self.checkpoint_dir, CHECKPOINT_NAME)
        core.save_checkpoint(self._state(), path)
        return path

    def resume(self, path=None):
        """Load a checkpoint written by :meth:`save`; :meth:`fit` then continues from its
        step (at an epoch boundary or inside an epoch) exactly as the uninterrupted run would
        have. Returns the epoch reached (complete epochs).

        Raises:
            ValueError: the checkpoint's parameters do not match the model's (a different
                architecture): the message names the parameter and both shapes, or the
                parameters only one side has.
        """
        if path is None:
            if self.checkpoint_dir is None:
                raise ValueError("OperatorTrainer.resume: give a path or a checkpoint_dir")
            path = os.path.join(self.checkpoint_dir, CHECKPOINT_NAME)
        values = core.load_checkpoint(path)
        if "epoch" not in values:
            raise ValueError(
                f"OperatorTrainer.resume: {path} holds no training state (no 'epoch'); use "
                "load_weights for a model-only checkpoint"
            )
        _put(path, "net.", list(self.model.parameters_and_names()), values, "model")
        _put(path, "opt.", list(self.optimizer.parameters_and_names()), values, "optimizer")
        if self.x_normalizer is not None:
            # the statistics the run was trained with
            self.x_normalizer, self.y_normalizer = (
                UnitGaussianNormalizer(
                    values[f"normalizer.{key}.mean"].asnumpy(),
                    values[f"normalizer.{key}.std"].asnumpy(),
                    eps=norm.eps,
                )
                for key, norm in (("x", self.x_normalizer), ("y", self.y_normalizer))
            )
            self._compile()
        self.epoch = int(values["epoch"].asnumpy())
        self.step = int(values["step"].asnumpy())
        self._partial = (
            int(values["epoch_partial.batches"].asnumpy()),
            float(values["epoch_partial.loss_sum"].asnumpy()),
            int(values["epoch_partial.samples"].asnumpy()),
        )
        h = self.history
        h["loss"] = values["history.loss"].asnumpy().tolist()
        h["epoch_loss"] = values["history.epoch_loss"].asnumpy().tolist()
        h["test_epoch"] = [int(e) for e in values["history.test_epoch"].asnumpy()]
        h["test_rel_l2"] = values["history.test_rel_l2"].asnumpy().tolist()
        return self.epoch

    def load_weights(self, path):
        """Load only the model's parameters from ``path``: a trainer checkpoint (``net.*``) or
        a model checkpoint (``core.save_checkpoint(model, ...)``, MindFlow's names).

        Raises:
            ValueError: as :meth:`resume`, naming the mismatched parameter and shapes.
        """
        values = core.load_checkpoint(path)
        prefix = "net." if any(k.startswith("net.") for k in values) else ""
        _put(path, prefix, list(self.model.parameters_and_names()), values, "model")

    # ---- plots ------------------------------------------------------------------------------
    def plot_history(self, path, title=None):
        """Loss curve per step and per epoch, with the test relative L2; returns ``path``."""
        from .plots import plot_history

        return plot_history(self.history, self.steps_per_epoch, path, title=title)

    def plot_sample(self, path, index=0, data=None, max_frames=4):
        """Truth, rollout prediction and error of sample ``index`` of ``data`` (default
        ``test_data``), at up to ``max_frames`` frames; returns ``path``."""
        from .plots import plot_sample

        data = self.test_data if data is None else data
        if self.unsteady:
            u = data[index][None]  # [1, *spatial, T, C]
            true = u[0, ..., self.t_in :, :]
            pred = self.rollout(u[..., : self.t_in, :], true.shape[-2])[0]
            return plot_sample(
                true, pred, path, unsteady=True, t_in=self.t_in, max_frames=max_frames
            )
        x, true = data[index]
        pred = self.predict(x[None])[0]
        if getattr(data, "space_time", False):  # [*spatial, t_out, C]: frames from t_in
            return plot_sample(
                true, pred, path, unsteady=True, t_in=data.t_in, max_frames=max_frames
            )
        return plot_sample(true, pred, path, unsteady=False)


class _Indexed:
    """A one-column view of a trajectory source for the pipeline."""

    def __init__(self, trajectories):
        self.trajectories = trajectories

    def __len__(self):
        return len(self.trajectories)

    def __getitem__(self, i):
        return (self.trajectories[i],)


def _tuple_batches(source, batch_size):
    ds = GeneratorDataset(source, column_names=["trajectory"], shuffle=False).batch(batch_size)
    yield from ds.create_tuple_iterator(num_epochs=1, output_numpy=True)


def _put(path, prefix, named, values, what):
    """Copy checkpoint entries ``prefix + name`` into the Parameters ``named``, after checking
    that the names and shapes match exactly."""
    keys = {k[len(prefix) :] for k in values if k.startswith(prefix)}
    names = [n for n, _ in named]
    missing = [n for n in names if n not in keys]
    extra = sorted(keys - set(names)) if prefix else []  # a bare model file may hold more
    if missing or extra:
        raise ValueError(
            f"{path}: the checkpoint does not match the {what}: parameters missing from the "
            f"checkpoint {missing[:8]}, parameters only in the checkpoint {extra[:8]} "
            "(a checkpoint of a different architecture?)"
        )
    for name, p in named:
        v = values[prefix + name]
        if tuple(v.shape) != tuple(p.shape):
            raise ValueError(
                f"{path}: {what} parameter {name!r} has shape {tuple(v.shape)} in the checkpoint "
                f"but {tuple(p.shape)} in the {what} (a checkpoint of a different architecture?)"
            )
    for name, p in named:
        p.set_data(core.Tensor(values[prefix + name].asnumpy()).astype(p.dtype))
