"""Stochastic gradient descent with momentum, dampening, Nesterov and L2 weight decay."""

from ... import ops
from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent (MindSpore ``nn.SGD``, same rule as PyTorch ``optim.SGD``).

    For each parameter :math:`p` with gradient :math:`g` (conjugated when complex), weight
    decay :math:`\lambda`, momentum :math:`\mu` and dampening :math:`\tau`:

    .. math::
        g &\leftarrow g + \lambda p \\
        v &\leftarrow g \text{ at the first update, else } \mu v + (1 - \tau) g \\
        p &\leftarrow p - \eta\,(g + \mu v) \text{ (Nesterov) or } p - \eta v

    With ``momentum=0`` there is no velocity state and the update is ``p - lr * g``.

    Args:
        params: list of Parameters or of group dicts (see :class:`Optimizer`).
        learning_rate: float, list per step, 1-D Tensor or LearningRateSchedule.
        momentum: :math:`\mu \ge 0`.
        dampening: :math:`\tau`.
        weight_decay: :math:`\lambda \ge 0` (L2 penalty added to the gradient).
        nesterov: Nesterov momentum (needs ``momentum > 0`` and ``dampening == 0``).

    State: ``sgd_momentum.<key>`` (velocity, when ``momentum > 0``) and ``global_step``.
    """

    def __init__(
        self,
        params,
        learning_rate=0.1,
        momentum=0.0,
        dampening=0.0,
        weight_decay=0.0,
        nesterov=False,
    ):
        if momentum < 0:
            raise ValueError(f"SGD: momentum must be >= 0, got {momentum}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(
                f"SGD: nesterov needs momentum > 0 and dampening == 0, got momentum={momentum}, "
                f"dampening={dampening}"
            )
        super().__init__(learning_rate, params, weight_decay)
        self.momentum = float(momentum)
        self.dampening = float(dampening)
        self.nesterov = bool(nesterov)
        if self.momentum > 0:
            self.sgd_momentum = self._slots("sgd_momentum")

    def _update(self, i, param, grad, lr, weight_decay, step):
        if weight_decay:
            grad = grad + weight_decay * param
        if self.momentum > 0:
            buf = self.sgd_momentum[i]
            new_buf = ops.where(
                step == 0, grad, self.momentum * buf + (1.0 - self.dampening) * grad
            )
            buf.set_data(new_buf)
            grad = grad + self.momentum * new_buf if self.nesterov else new_buf
        param.set_data(param - lr * grad)
