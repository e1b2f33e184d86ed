"""MindSpore's ``nn.Momentum``: heavy-ball momentum without dampening, optional Nesterov."""

from .decay import mindspore_decay_flags, normalize_params
from .optimizer import Optimizer

__all__ = ["Momentum"]


class Momentum(Optimizer):
    r"""Momentum SGD with MindSpore's ``nn.Momentum`` arguments and update rule.

    With gradient :math:`g` (plus :math:`\lambda p` when weight decay applies to ``p``, then
    divided by ``loss_scale``), momentum :math:`u` and learning rate :math:`\eta`:

    .. math::
        v &\leftarrow u\, v + g \\
        p &\leftarrow p - \eta\,(g + u\, v) \text{ (use_nesterov) or } p - \eta\, v

    The first update starts from :math:`v = 0` (so :math:`v_1 = g_1`; unlike ``nn.SGD`` there
    is no dampening).

    Args:
        params: list of Parameters or of group dicts ``{"params", "lr", "weight_decay"}``.
            Without groups, ``weight_decay`` skips parameters whose name contains ``"beta"``
            or ``"gamma"`` (normalization shifts and scales), as in MindSpore; in groups it
            applies to every parameter of the group.
        learning_rate: float, list per step, 1-D Tensor or LearningRateSchedule.
        momentum: :math:`u \ge 0`.
        weight_decay: L2 coefficient :math:`\lambda \ge 0` added to the gradient.
        loss_scale: gradients are divided by it (set it to the fixed loss scale used for the
            loss, MindSpore's ``FixedLossScaleManager(drop_overflow_update=False)`` case).
        use_nesterov: Nesterov accelerated gradient.

    State: ``moments.<key>`` (MindSpore's name) and ``global_step``.
    """

    def __init__(
        self,
        params,
        learning_rate,
        momentum,
        weight_decay=0.0,
        loss_scale=1.0,
        use_nesterov=False,
    ):
        if isinstance(momentum, bool) or not isinstance(momentum, (int, float)) or momentum < 0:
            raise ValueError(f"Momentum: momentum must be a float >= 0, got {momentum!r}")
        if (
            isinstance(loss_scale, bool)
            or not isinstance(loss_scale, (int, float))
            or not loss_scale > 0
        ):
            raise ValueError(f"Momentum: loss_scale must be a float > 0, got {loss_scale!r}")
        if not isinstance(use_nesterov, bool):
            raise TypeError(f"Momentum: use_nesterov must be a bool, got {use_nesterov!r}")
        params, grouped = normalize_params(params)
        super().__init__(learning_rate, params, weight_decay)
        self.momentum = float(momentum)
        self.loss_scale = float(loss_scale)
        self.use_nesterov = use_nesterov
        object.__setattr__(self, "_decay", mindspore_decay_flags(self.parameters, grouped))
        self.moments = self._slots("moments")

    def _update(self, i, param, grad, lr, weight_decay, step):
        if weight_decay and self._decay[i]:
            grad = grad + weight_decay * param
        if self.loss_scale != 1.0:
            grad = grad / self.loss_scale
        v = self.moments[i]
        v_new = self.momentum * v + grad
        v.set_data(v_new)
        if self.use_nesterov:
            param.set_data(param - lr * (grad + self.momentum * v_new))
        else:
            param.set_data(param - lr * v_new)
