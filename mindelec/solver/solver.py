"""MindElec's ``Solver``: training, evaluation and prediction of a network, for data-driven
(``mode="Data"``: ``loss_fn(network(inputs), label)``) or physics-informed training
(``mode="PINNs"``: ``NetWithLoss`` over ``train_constraints``).

One training step is ``loss, grads = value_and_grad(loss_net)(*batch); optimizer(grads)``;
with ``jit=True`` (or ``core.set_context(mode=core.GRAPH_MODE)``) the whole step, forward,
input derivatives, backward and the optimizer update, is one ``core.jit`` graph.

MindElec's mixed precision (``amp_level``, ``loss_scale_manager``) is accepted and ignored:
training here is in the network's dtype.
"""

import math

from diffsci import core
from diffsci.core import nn
from diffsci.core.train import CallbackParams, RunContext

from ..loss.constraints import Constraints
from ..loss.losses import get_loss_metric
from ..loss.net_with_loss import NetWithEval, NetWithLoss

__all__ = ["Solver"]

_MODES = ("Data", "PINNs")
_HOOKS = {
    "begin": "on_train_begin",
    "epoch_begin": "on_train_epoch_begin",
    "step_begin": "on_train_step_begin",
    "step_end": "on_train_step_end",
    "epoch_end": "on_train_epoch_end",
    "end": "on_train_end",
}


def _batches(dataset):
    """Iterate a pipeline dataset (``create_tuple_iterator``) or any iterable of tuples."""
    if hasattr(dataset, "create_tuple_iterator"):
        return dataset.create_tuple_iterator(num_epochs=1)
    return iter(dataset)


class _DataLoss(nn.Cell):
    def __init__(self, network, loss_fn):
        super().__init__()
        self.network, self.loss_fn = network, loss_fn

    def construct(self, *batch):
        return self.loss_fn(self.network(*batch[:-1]), batch[-1])


class Solver:
    """Train, evaluate and predict (MindElec's ``Solver``).

    Args:
        network: the network (a Cell).
        optimizer: a ``core.nn`` optimizer over the trainable parameters (network, MTL weights,
            latent vector).
        loss_fn: a loss name (``get_loss_metric``), a loss Cell, or (PINNs) a dict per
            sub-dataset. Default ``"l2"``.
        mode: ``"Data"`` or ``"PINNs"``.
        train_constraints, test_constraints: ``Constraints`` (PINNs).
        train_input_map, test_input_map: ``{sub-dataset: [input columns]}`` (PINNs).
        mtl_weighted_cell: a ``MTLWeightedLossCell`` (PINNs), or None.
        latent_vector, latent_reg: a latent Parameter and its regularisation (PINNs).
        metrics: ``{name: metric}`` for ``eval`` in Data mode (objects with ``clear``,
            ``update(pred, label)``, ``eval``).
        jit: compile the training step with ``core.jit``; None follows
            ``core.get_context("mode")``.
        amp_level, loss_scale_manager, **kwargs: MindElec's, accepted and ignored.

    Raises:
        ValueError: an unknown mode; PINNs mode without ``train_constraints``.
        TypeError: arguments of the wrong type.
    """

    def __init__(
        self,
        network,
        optimizer,
        loss_fn="l2",
        mode="Data",
        train_constraints=None,
        test_constraints=None,
        train_input_map=None,
        test_input_map=None,
        mtl_weighted_cell=None,
        latent_vector=None,
        latent_reg=0.01,
        metrics=None,
        eval_network=None,
        eval_indexes=None,
        amp_level="O0",
        jit=None,
        **kwargs,
    ):
        if mode not in _MODES:
            raise ValueError(f"Solver: mode must be one of {_MODES}, got {mode!r}")
        if not isinstance(network, nn.Cell):
            raise TypeError(f"Solver: network must be a Cell, got {type(network).__name__}")
        if not isinstance(optimizer, nn.Optimizer):
            raise TypeError(
                f"Solver: optimizer must be a core.nn optimizer, got {type(optimizer).__name__}"
            )
        self.network, self.optimizer, self.mode = network, optimizer, mode
        self.metrics = dict(metrics or {})
        self.jit = (core.get_context("mode") == core.GRAPH_MODE) if jit is None else bool(jit)
        if mode == "PINNs":
            if not isinstance(train_constraints, Constraints):
                raise ValueError(
                    "Solver: mode='PINNs' needs train_constraints (a mindelec.loss.Constraints)"
                )
            self.train_network = NetWithLoss(
                network,
                train_constraints,
                loss_fn,
                train_input_map,
                mtl_weighted_cell,
                latent_vector,
                latent_reg,
            )
            self.eval_network = (
                NetWithEval(network, test_constraints, loss_fn, test_input_map)
                if test_constraints is not None
                else eval_network
            )
        else:
            loss = get_loss_metric(loss_fn) if isinstance(loss_fn, str) else loss_fn
            self.train_network = _DataLoss(network, loss)
            self.eval_network = eval_network
        self._train_step = None

    def _build_step(self):
        grad_fn = core.value_and_grad(self.train_network, None, self.optimizer.parameters)
        optimizer = self.optimizer

        def train_step(*batch):
            loss, grads = grad_fn(*batch)
            optimizer(grads)
            return loss

        return core.jit(train_step) if self.jit else train_step

    def train_step(self, *batch):
        """One optimisation step on a batch (Tensors in column order); returns the loss."""
        if self._train_step is None:
            self._train_step = self._build_step()
        return self._train_step(*batch)

    def train(self, epoch, train_dataset, callbacks=None, dataset_sink_mode=True, sink_size=-1):
        """Run ``epoch`` epochs over ``train_dataset``.

        Args:
            epoch: number of epochs (int >= 1).
            train_dataset: a pipeline dataset (``mindelec.data.Dataset.create_dataset``) or an
                iterable of batches (tuples of Tensors) that starts over each epoch.
            callbacks: a callback or a list (see ``mindelec.solver.callback``).
            dataset_sink_mode, sink_size: MindSpore's, accepted and ignored.

        Returns:
            The list of mean losses, one per epoch.
        """
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
            raise ValueError(f"Solver.train: epoch must be a positive int, got {epoch!r}")
        callbacks = [] if callbacks is None else callbacks
        callbacks = list(callbacks) if isinstance(callbacks, (list, tuple)) else [callbacks]
        cb = CallbackParams(
            network=self.network,
            optimizer=self.optimizer,
            epoch_num=epoch,
            cur_epoch_num=0,
            cur_step_num=0,
            step_in_epoch=0,
            epochs_done=0,
            net_outputs=None,
            loss=math.nan,
            batch_num=len(train_dataset) if hasattr(train_dataset, "__len__") else None,
        )
        ctx = RunContext(cb)

        def fire(hook):
            for c in callbacks:
                fn = getattr(c, hook, None) or getattr(c, _HOOKS[hook], None)
                if fn is not None:
                    fn(ctx)

        self.network.set_train(True)
        fire("begin")
        history = []
        for ep in range(epoch):
            cb.cur_epoch_num, cb.step_in_epoch = ep + 1, 0
            fire("epoch_begin")
            total = 0.0
            for batch in _batches(train_dataset):
                fire("step_begin")
                loss = self.train_step(*batch)
                cb.cur_step_num += 1
                cb.step_in_epoch += 1
                cb.net_outputs, cb.loss = loss, float(loss)
                total += cb.loss
                fire("step_end")
                if ctx.get_stop_requested():
                    break
            history.append(total / max(cb.step_in_epoch, 1))
            if not ctx.get_stop_requested():
                cb.epochs_done = ep + 1
            fire("epoch_end")
            if ctx.get_stop_requested():
                break
        fire("end")
        self.network.set_train(False)
        return history

    def eval(self, valid_dataset, callbacks=None, dataset_sink_mode=True):
        """Evaluate: PINNs mode with test constraints, the mean ``NetWithEval`` loss; Data
        mode, ``{"loss": mean loss, name: metric}`` for each metric.

        Returns a dict."""
        self.network.set_train(False)
        for metric in self.metrics.values():
            metric.clear()
        total, count = 0.0, 0
        with core.no_grad():
            for batch in _batches(valid_dataset):
                if self.mode == "PINNs":
                    if self.eval_network is None:
                        raise ValueError("Solver.eval: PINNs mode needs test_constraints")
                    loss, pred, label = self.eval_network(*batch)
                else:
                    pred, label = self.network(*batch[:-1]), batch[-1]
                    loss = self.train_network.loss_fn(pred, label)
                for metric in self.metrics.values():
                    metric.update(pred.asnumpy(), label.asnumpy())
                total += float(loss)
                count += 1
        result = {"loss": total / max(count, 1)}
        result.update({name: metric.eval() for name, metric in self.metrics.items()})
        return result

    def predict(self, *predict_data):
        """The network's output on ``predict_data`` (no gradients)."""
        self.network.set_train(False)
        with core.no_grad():
            return self.network(*predict_data)
