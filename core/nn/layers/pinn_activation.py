"""Activations by name for PINN networks (MindFlow's ``mindflow/cell/activation.py``; lives in
``core`` because ``mindflow.cell`` and ``mindelec.architecture`` both re-export it).

``get_activation(name)`` returns a new Cell acting elementwise on ``[...]`` (same shape out).
MindFlow's names (``softmax``, ``logsoftmax``, ``relu``, ``relu6``, ``tanh``, ``gelu``,
``fast_gelu``, ``elu``, ``sigmoid``, ``prelu``, ``leakyrelu``, ``hswish``, ``hsigmoid``,
``logsigmoid``, ``sin``, ``srelu``) plus those MindSpore's ``get_activation`` adds and PINNs
use (``silu``/``swish``, ``softplus``).
"""

import math

from ... import ops
from ...tensor import Parameter
from ..cell import Cell
from . import activation as nn

__all__ = [
    "FastGelu",
    "HSigmoid",
    "HSwish",
    "LogSigmoid",
    "PReLU",
    "SReLU",
    "get_activation",
]


class SReLU(Cell):
    """Sin rectified linear unit (MindFlow): ``sin(2 pi x) * relu(x) * relu(1 - x)``, nonzero
    only on ``(0, 1)``."""

    def construct(self, x):
        return ops.sin((2.0 * math.pi) * x) * ops.relu(x) * ops.relu(1.0 - x)


class FastGelu(Cell):
    """MindSpore's ``FastGelu``: ``x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|))``, which
    equals ``x * sigmoid(1.702 x)`` (written so, it is stable for both signs)."""

    def construct(self, x):
        return x * ops.sigmoid(1.702 * x)


class HSwish(Cell):
    """Hard swish (Howard et al. 2019, MobileNetV3): ``x * relu6(x + 3) / 6``."""

    def construct(self, x):
        return x * ops.clip(x + 3.0, 0.0, 6.0) / 6.0


class HSigmoid(Cell):
    """Hard sigmoid: ``relu6(x + 3) / 6``."""

    def construct(self, x):
        return ops.clip(x + 3.0, 0.0, 6.0) / 6.0


class LogSigmoid(Cell):
    """``log(sigmoid(x)) = -softplus(-x)`` (the stable form)."""

    def construct(self, x):
        return -ops.softplus(-x)


class PReLU(Cell):
    """Parametric ReLU (He et al. 2015): ``x`` for ``x > 0``, ``w * x`` otherwise, with a
    trainable slope ``w`` of shape ``[channel]`` (MindSpore: ``channel=1``, ``w=0.25``) that
    broadcasts against the last axis of ``x``."""

    def __init__(self, channel=1, w=0.25):
        super().__init__()
        if isinstance(channel, bool) or not isinstance(channel, int) or channel < 1:
            raise ValueError(f"PReLU: channel must be a positive int, got {channel!r}")
        self.channel = channel
        self.w = Parameter(ops.full((channel,), float(w)), name="w")

    def construct(self, x):
        return ops.where(x > 0, x, self.w * x)

    def extend_repr(self):
        return f"channel={self.channel}"


_ACTIVATIONS = {
    "softmax": nn.Softmax,
    "logsoftmax": nn.LogSoftmax,
    "relu": nn.ReLU,
    "relu6": nn.ReLU6,
    "tanh": nn.Tanh,
    "gelu": nn.GELU,
    "fast_gelu": FastGelu,
    "elu": nn.ELU,
    "sigmoid": nn.Sigmoid,
    "prelu": PReLU,
    "leakyrelu": nn.LeakyReLU,
    "leaky_relu": nn.LeakyReLU,
    "hswish": HSwish,
    "hsigmoid": HSigmoid,
    "logsigmoid": LogSigmoid,
    "sin": nn.Sin,
    "srelu": SReLU,
    "silu": nn.SiLU,
    "swish": nn.SiLU,
    "softplus": nn.Softplus,
}


def get_activation(name):
    """A new activation Cell by (case-insensitive) name; ``None`` gives ``None``.

    Args:
        name: one of ``fast_gelu elu gelu hsigmoid hswish leaky_relu leakyrelu logsigmoid
            logsoftmax prelu relu relu6 sigmoid silu sin softmax softplus srelu swish tanh``,
            or None.

    Returns:
        A Cell ``[...] -> [...]`` (or None).

    Raises:
        TypeError: ``name`` is neither a str nor None.
        ValueError: an unknown name; the message lists the accepted ones.
    """
    if name is None:
        return None
    if not isinstance(name, str):
        raise TypeError(f"get_activation: name must be a str or None, got {type(name).__name__}")
    cls = _ACTIVATIONS.get(name.lower())
    if cls is None:
        raise ValueError(
            f"get_activation: unknown activation {name!r}; accepted names: "
            f"{', '.join(sorted(_ACTIVATIONS))}"
        )
    return cls()
