"""Adam (Kingma & Ba, 2015), AdamW (Loshchilov & Hutter, 2019) and MindSpore's
``AdamWeightDecay`` (decoupled decay, no bias correction)."""

from ... import dtypes as _dt
from ... import ops
from .decay import mindspore_decay_flags, normalize_params
from .optimizer import Optimizer, componentwise_div, componentwise_sqrt_plus, componentwise_square

__all__ = ["Adam", "AdamW", "AdamWeightDecay"]


def _check_betas(cls, beta1, beta2, eps):
    if not 0.0 <= beta1 < 1.0:
        raise ValueError(f"{cls}: beta1 must be in [0, 1), got {beta1}")
    if not 0.0 <= beta2 < 1.0:
        raise ValueError(f"{cls}: beta2 must be in [0, 1), got {beta2}")
    if not eps > 0:
        raise ValueError(f"{cls}: eps must be > 0, got {eps}")


class Adam(Optimizer):
    r"""Adam with bias correction (Algorithm 1 of Kingma & Ba, 2015).

    With gradient :math:`g` (conjugated when complex; plus :math:`\lambda p` when
    ``weight_decay`` is set: an L2 penalty, as in MindSpore/PyTorch ``Adam``) at update
    :math:`t = 1, 2, \dots`:

    .. math::
        m &\leftarrow \beta_1 m + (1 - \beta_1) g,\qquad
        v \leftarrow \beta_2 v + (1 - \beta_2) g^2 \\
        p &\leftarrow p - \eta\, \frac{m / (1 - \beta_1^t)}{\sqrt{v / (1 - \beta_2^t)} + \epsilon}

    A complex parameter is treated as its (real, imaginary) pair of real parameters, each
    with its own second moment.

    Args:
        params: list of Parameters or of group dicts (see :class:`Optimizer`).
        learning_rate: float, list per step, 1-D Tensor or LearningRateSchedule.
        beta1, beta2: moment decay rates in [0, 1).
        eps: added to the denominator.
        weight_decay: L2 coefficient (added to the gradient).

    State: ``adam_m.<key>``, ``adam_v.<key>`` and ``global_step``.
    """

    _decoupled = False

    def __init__(
        self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0
    ):
        _check_betas(type(self).__name__, beta1, beta2, eps)
        super().__init__(learning_rate, params, weight_decay)
        self.beta1, self.beta2, self.eps = float(beta1), float(beta2), float(eps)
        self.adam_m = self._slots("adam_m")
        self.adam_v = self._slots("adam_v")
        object.__setattr__(self, "_bias", None)

    def construct(self, grads):
        object.__setattr__(self, "_bias", {})  # bias corrections of this update, per dtype
        try:
            return super().construct(grads)
        finally:
            object.__setattr__(self, "_bias", None)

    def _corrections(self, step, dtype):
        """``(1 - beta1^t, sqrt(1 - beta2^t))`` for ``t = step + 1``, computed in float64."""
        hit = self._bias.get(dtype)
        if hit is None:
            t = ops.astype(step, _dt.float64) + 1.0
            bc1 = 1.0 - ops.pow(self.beta1, t)
            bc2_sqrt = ops.sqrt(1.0 - ops.pow(self.beta2, t))
            hit = self._bias[dtype] = (ops.astype(bc1, dtype), ops.astype(bc2_sqrt, dtype))
        return hit

    def _update(self, i, param, grad, lr, weight_decay, step):
        base = param
        if weight_decay:
            if self._decoupled:
                base = param * (1.0 - lr * weight_decay)
            else:
                grad = grad + weight_decay * param
        m, v = self.adam_m[i], self.adam_v[i]
        m_new = self.beta1 * m + (1.0 - self.beta1) * grad
        v_new = self.beta2 * v + (1.0 - self.beta2) * componentwise_square(grad)
        m.set_data(m_new)
        v.set_data(v_new)
        bc1, bc2_sqrt = self._corrections(step, _dt.real_dtype(param.dtype))
        denom = componentwise_sqrt_plus(v_new, bc2_sqrt, self.eps)
        param.set_data(base - (lr / bc1) * componentwise_div(m_new, denom))


class AdamW(Adam):
    r"""Adam with decoupled weight decay (Loshchilov & Hutter, 2019; PyTorch ``AdamW``).

    Before the Adam update of :class:`Adam` (without L2 term), the parameter shrinks:
    :math:`p \leftarrow p\,(1 - \eta \lambda)`.

    Args:
        params, learning_rate, beta1, beta2, eps: as for :class:`Adam`.
        weight_decay: decoupled decay :math:`\lambda` (default 0.01).
    """

    _decoupled = True

    def __init__(
        self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=1e-2
    ):
        super().__init__(params, learning_rate, beta1, beta2, eps, weight_decay)


class AdamWeightDecay(Optimizer):
    r"""MindSpore's ``nn.AdamWeightDecay``: Adam moments without bias correction and a
    decoupled weight decay added to the update.

    With gradient :math:`g` at each update:

    .. math::
        m &\leftarrow \beta_1 m + (1 - \beta_1) g,\qquad
        v \leftarrow \beta_2 v + (1 - \beta_2) g^2 \\
        p &\leftarrow p - \eta \left(\frac{m}{\sqrt{v} + \epsilon} + \lambda p\right)

    (:math:`\lambda p` only when weight decay applies to ``p``). Unlike :class:`AdamW` the
    moments are not bias-corrected, and the decay is scaled by :math:`\eta` alone.

    Args:
        params: list of Parameters or of group dicts ``{"params", "lr", "weight_decay"}``.
            Without groups, ``weight_decay`` skips parameters whose name contains ``"beta"``
            or ``"gamma"``, as in MindSpore; in groups it applies to every parameter.
        learning_rate: float, list per step, 1-D Tensor or LearningRateSchedule.
        beta1, beta2: moment decay rates in [0, 1).
        eps: added to :math:`\sqrt{v}` (MindSpore's default 1e-6).
        weight_decay: :math:`\lambda \ge 0`.

    State: ``adam_m.<key>``, ``adam_v.<key>`` (MindSpore's names) and ``global_step``.
    """

    def __init__(
        self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0
    ):
        _check_betas(type(self).__name__, beta1, beta2, eps)
        params, grouped = normalize_params(params)
        super().__init__(learning_rate, params, weight_decay)
        self.beta1, self.beta2, self.eps = float(beta1), float(beta2), float(eps)
        object.__setattr__(self, "_decay", mindspore_decay_flags(self.parameters, grouped))
        self.adam_m = self._slots("adam_m")
        self.adam_v = self._slots("adam_v")

    def _update(self, i, param, grad, lr, weight_decay, step):
        m, v = self.adam_m[i], self.adam_v[i]
        m_new = self.beta1 * m + (1.0 - self.beta1) * grad
        v_new = self.beta2 * v + (1.0 - self.beta2) * componentwise_square(grad)
        m.set_data(m_new)
        v.set_data(v_new)
        update = componentwise_div(m_new, componentwise_sqrt_plus(v_new, 1.0, self.eps))
        if weight_decay and self._decay[i]:
            update = update + weight_decay * param
        param.set_data(param - lr * update)
