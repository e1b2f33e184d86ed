"""``core.train.Model``: a training loop with callbacks and exact resume (MindSpore ``Model``).

The loop it runs is the plain one every script can write itself::

    grad_fn = core.value_and_grad(forward, None, optimizer.parameters)
    for epoch in range(epochs):
        for *inputs, label in dataset:
            loss, grads = grad_fn(*inputs, label)
            optimizer(grads)

``Model`` only adds callbacks (logging, checkpoints, early stopping), evaluation and resume.
"""

import math

import numpy as np

from ..autodiff.api import no_grad, value_and_grad
from ..nn.grad_reducer import reducer_from_context
from ..serialization import load_checkpoint, load_param_into_net
from ..tensor import Tensor
from .callbacks import CallbackParams, RunContext

__all__ = ["Model", "restore_checkpoint"]

_HOOKS = (
    "on_train_begin",
    "on_train_epoch_begin",
    "on_train_step_begin",
    "on_train_step_end",
    "on_train_epoch_end",
    "on_train_end",
)
_META = ("epoch_num", "step_num", "step_in_epoch")


def _as_tensor(x):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (tuple, list)):
        return type(x)(_as_tensor(v) for v in x)
    return Tensor(np.asarray(x)) if isinstance(x, (np.ndarray, np.generic)) else Tensor(x)


def _split_batch(batch):
    """``(inputs tuple, label)`` from a batch ``(x, y)`` / ``(x1, x2, ..., y)``."""
    if not isinstance(batch, (tuple, list)) or len(batch) < 2:
        raise TypeError(
            f"Model: a batch must be a tuple (inputs..., labels), got {type(batch).__name__}"
            + (f" of length {len(batch)}" if isinstance(batch, (tuple, list)) else "")
        )
    batch = [_as_tensor(b) for b in batch]
    return tuple(batch[:-1]), batch[-1]


def restore_checkpoint(path, network, optimizer=None, strict_load=True):
    """Load network parameters and optimizer state from a checkpoint of both.

    Args:
        path: a file written by ``CheckpointCallback`` or ``save_checkpoint([net, opt], path)``.
        network: the Cell to restore.
        optimizer: the optimizer to restore (its state: moments, step, learning rate).
        strict_load: every Parameter of network/optimizer must be in the file.

    Returns:
        ``{"epoch_num": int, "step_num": int, "step_in_epoch": int}`` (0 where absent).
    """
    params = load_checkpoint(path)
    load_param_into_net(network, params, strict_load=strict_load)
    if optimizer is not None:
        load_param_into_net(optimizer, params, strict_load=strict_load)
    return {k: int(params[k].item()) if k in params else 0 for k in _META}


class Model:
    """Train and evaluate a network with a loss function and an optimizer.

    Args:
        network: a Cell; ``network(*inputs)`` gives predictions (or the loss itself when
            ``loss_fn`` is None).
        loss_fn: ``loss_fn(predictions, labels) -> scalar``; None when ``network`` returns
            the loss from ``network(*inputs, labels)``.
        optimizer: an optimizer over the network's parameters (needed for ``train``).
        metrics: ``{name: fn(predictions, labels) -> scalar}`` evaluated by :meth:`eval`.
        jit: compile the training step with ``core.jit`` (when available).
    """

    def __init__(self, network, loss_fn=None, optimizer=None, metrics=None, jit=False):
        self.network = network
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.metrics = dict(metrics or {})
        self.jit = bool(jit)
        self._train_step = None

    # ---- the step -----------------------------------------------------------------------------
    def _forward_loss(self, *batch):
        inputs, label = batch[:-1], batch[-1]
        if self.loss_fn is None:
            return self.network(*inputs, label)
        return self.loss_fn(self.network(*inputs), label)

    def _build_train_step(self):
        if self.optimizer is None:
            raise ValueError("Model.train: no optimizer was given")
        grad_fn = value_and_grad(self._forward_loss, None, self.optimizer.parameters)
        optimizer = self.optimizer
        reducer = reducer_from_context(optimizer.parameters)  # data parallel: all-reduced grads

        def train_step(*batch):
            if reducer is None:
                loss, grads = grad_fn(*batch)
            else:  # buckets start their all-reduce during the backward sweep (eager)
                with reducer.overlap() as pending:
                    loss, grads = grad_fn(*batch)
                grads = pending.finish(grads)
            optimizer(grads)
            return loss

        if self.jit:
            from .. import jit as _jit  # graph mode, once the engine has it

            train_step = _jit(train_step)
        return train_step

    # ---- training -----------------------------------------------------------------------------
    def train(self, epoch, train_dataset, callbacks=None, resume_from=None, valid_dataset=None):
        """Run ``epoch`` epochs over ``train_dataset`` (re-iterated each epoch).

        Args:
            epoch: total number of epochs (including those already done when resuming).
            train_dataset: an iterable of ``(inputs..., labels)`` batches; iterated once per
                epoch (so a list, or an object whose ``__iter__`` starts over).
            callbacks: a callback or a list of them (see ``core.train.callbacks``).
            resume_from: a checkpoint written by ``CheckpointCallback``: network and
                optimizer are restored and training continues after its last step (skipping
                the batches of the interrupted epoch that were already used).
            valid_dataset: when given, :meth:`eval` runs on it after every epoch and its
                results are in ``cb_params.metrics`` as ``eval_loss``, ``eval_<metric>``.

        Returns:
            The list of mean training losses, one per epoch run.
        """
        if callbacks is None:
            callbacks = []
        elif not isinstance(callbacks, (list, tuple)):
            callbacks = [callbacks]
        if self._train_step is None:
            self._train_step = self._build_train_step()
        start_epoch, step_num, skip = 0, 0, 0
        if resume_from is not None:
            meta = restore_checkpoint(resume_from, self.network, self.optimizer)
            start_epoch, step_num, skip = meta["epoch_num"], meta["step_num"], meta["step_in_epoch"]
        cb = CallbackParams(
            network=self.network,
            optimizer=self.optimizer,
            loss_fn=self.loss_fn,
            epoch_num=int(epoch),
            cur_epoch_num=start_epoch,
            cur_step_num=step_num,
            step_in_epoch=0,
            epochs_done=start_epoch,
            batch_num=len(train_dataset) if hasattr(train_dataset, "__len__") else None,
            net_outputs=None,
            loss=math.nan,
            metrics={},
        )
        ctx = RunContext(cb)

        def fire(hook):
            for c in callbacks:
                fn = getattr(c, hook, None)
                if fn is not None:
                    fn(ctx)

        self.network.set_train(True)
        fire("on_train_begin")
        history = []
        for ep in range(start_epoch, int(epoch)):
            cb.cur_epoch_num = ep + 1
            cb.step_in_epoch = 0
            cb.metrics = {}
            fire("on_train_epoch_begin")
            total, count = 0.0, 0
            for batch in train_dataset:
                if skip:
                    skip -= 1
                    cb.step_in_epoch += 1
                    continue
                fire("on_train_step_begin")
                inputs, label = _split_batch(batch)
                loss = self._train_step(*inputs, label)
                cb.cur_step_num += 1
                cb.step_in_epoch += 1
                cb.net_outputs = loss
                cb.loss = float(loss)
                total += cb.loss
                count += 1
                fire("on_train_step_end")
                if ctx.get_stop_requested():
                    break
            skip = 0
            if ctx.get_stop_requested() and cb.step_in_epoch != cb.batch_num:
                break  # stopped inside the epoch: it is not complete
            cb.epochs_done = ep + 1
            if count == 0:
                continue  # a resumed epoch whose batches were all used before the checkpoint
            cb.metrics = {"loss": total / count}
            history.append(total / count)
            if valid_dataset is not None:
                for name, value in self.eval(valid_dataset).items():
                    cb.metrics[f"eval_{name}"] = value
                self.network.set_train(True)
            fire("on_train_epoch_end")
            if ctx.get_stop_requested():
                break
        fire("on_train_end")
        return history

    # ---- evaluation ---------------------------------------------------------------------------
    def eval(self, valid_dataset):
        """Mean loss (and metrics) over ``valid_dataset``, weighted by batch size.

        Returns:
            ``{"loss": float, <metric name>: float, ...}`` (``loss`` only with a ``loss_fn``
            or a loss-returning network).
        """
        self.network.set_train(False)
        sums, n = {}, 0
        with no_grad():
            for batch in valid_dataset:
                inputs, label = _split_batch(batch)
                size = label.shape[0] if label.ndim else 1
                if self.loss_fn is None:
                    values = {"loss": self.network(*inputs, label)}
                else:
                    pred = self.network(*inputs)
                    values = {"loss": self.loss_fn(pred, label)}
                    for name, fn in self.metrics.items():
                        values[name] = fn(pred, label)
                for name, v in values.items():
                    sums[name] = sums.get(name, 0.0) + float(v) * size
                n += size
        if n == 0:
            raise ValueError("Model.eval: the dataset yielded no batches")
        return {name: s / n for name, s in sums.items()}

    def predict(self, *inputs):
        """``network(*inputs)`` in evaluation mode, without recording gradients."""
        self.network.set_train(False)
        with no_grad():
            return self.network(*[_as_tensor(x) for x in inputs])
