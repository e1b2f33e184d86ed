"""MindSpore's training wrappers: ``nn.WithLossCell`` (network + loss) and
``nn.TrainOneStepCell`` (forward, backward and optimizer update as one call).

Both are plain Cells, so they run eagerly, under ``core.jit`` and in
``set_context(mode=GRAPH_MODE)``; the update writes the Parameters in place in every mode.
"""

from .. import ops
from .. import parallel as _parallel
from ..autodiff.api import value_and_grad
from .cell import Cell
from .grad_reducer import reducer_from_context

__all__ = ["TrainOneStepCell", "WithLossCell"]


class WithLossCell(Cell):
    """``loss_fn(backbone(data), label)`` as one Cell.

    Args:
        backbone: the network, called with ``data``.
        loss_fn: a loss Cell (or callable) called with ``(logits, label)``.

    The Parameters keep the backbone's names (``p.name``; ``auto_prefix=False``, as in
    MindSpore).
    """

    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        if not isinstance(backbone, Cell):
            raise TypeError(f"WithLossCell: backbone must be a Cell, got {type(backbone).__name__}")
        self._backbone = backbone
        self._loss_fn = loss_fn

    def construct(self, data, label):
        return self._loss_fn(self._backbone(data), label)

    @property
    def backbone_network(self):
        """The wrapped network."""
        return self._backbone


class TrainOneStepCell(Cell):
    """One training step: ``loss = network(*inputs)``, gradients of ``sens * loss`` with respect
    to ``optimizer.parameters``, then ``optimizer(grads)``; returns ``loss``.

    Args:
        network: a Cell returning the loss (usually a :class:`WithLossCell`). A non-scalar loss
            is differentiated as the sum of its elements times ``sens`` (MindSpore fills the
            output's cotangent with ``sens``).
        optimizer: an ``nn.Optimizer`` over (some of) the network's Parameters.
        sens: the scale of the loss's cotangent (a float; e.g. a fixed loss scale).
        return_grad: when True, return ``(loss, grads)``.

    Under ``core.set_auto_parallel_context(parallel_mode="data_parallel")`` the gradients go
    through ``self.grad_reducer`` (an ``nn.DistributedGradReducer``: all-reduced across the
    ranks, averaged when ``gradients_mean``) before the update; otherwise it is the identity.

    Parameter names are the network's and the optimizer's own (``auto_prefix=False``).
    """

    def __init__(self, network, optimizer, sens=1.0, return_grad=False):
        super().__init__(auto_prefix=False)
        if not isinstance(network, Cell):
            raise TypeError(
                f"TrainOneStepCell: network must be a Cell, got {type(network).__name__}"
            )
        if not callable(optimizer) or not hasattr(optimizer, "parameters"):
            raise TypeError(
                f"TrainOneStepCell: optimizer must be an nn.Optimizer, got {type(optimizer).__name__}"
            )
        if sens is None:
            sens = 1.0
        if isinstance(sens, bool) or not isinstance(sens, (int, float)):
            raise TypeError(f"TrainOneStepCell: sens must be a float, got {sens!r}")
        self.network = network
        self.optimizer = optimizer
        self.sens = float(sens)
        self.return_grad = bool(return_grad)
        object.__setattr__(self, "weights", tuple(optimizer.parameters))
        reducer = reducer_from_context(self.weights)  # data parallel: gradients all-reduced
        if reducer is None:
            object.__setattr__(self, "grad_reducer", lambda grads: grads)
        else:
            if _parallel.get_auto_parallel_context("parameter_broadcast"):
                _parallel.broadcast_parameters(self.weights)
            self.grad_reducer = reducer

        def scaled_loss(*inputs):
            loss = self.network(*inputs)
            total = loss if loss.ndim == 0 else ops.sum(loss)
            return total * self.sens if self.sens != 1.0 else total, loss

        object.__setattr__(
            self, "_grad_fn", value_and_grad(scaled_loss, None, self.weights, has_aux=True)
        )

    def construct(self, *inputs):
        overlap = getattr(self.grad_reducer, "overlap", None)
        if overlap is None:
            (_, loss), grads = self._grad_fn(*inputs)
        else:  # data parallel: buckets start their all-reduce during the backward sweep
            with overlap() as pending:
                (_, loss), grads = self._grad_fn(*inputs)
            grads = pending.finish(grads)
        self.optimizer(grads)
        if self.return_grad:
            return loss, grads
        return loss
