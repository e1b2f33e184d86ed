"""Basic layers: Dense, Dropout, Flatten, Identity."""

import math

from ... import dtypes as _dt
from ... import ops
from ..cell import Cell
from ..init import HeUniform, Uniform
from ._common import make_parameter
from .activation import get_activation

__all__ = ["Dense", "Dropout", "Flatten", "Identity"]


class Dense(Cell):
    """Fully connected layer ``activation(x @ weight.T + bias)``.

    Args:
        in_channels, out_channels: feature sizes.
        weight_init: initializer of ``weight`` (name, number, Initializer, Tensor). None (the
            MindSpore 2.x default) is ``HeUniform(math.sqrt(5))``, i.e. U(+-1/sqrt(in_channels)).
        bias_init: initializer of ``bias``; None is ``Uniform(1 / sqrt(in_channels))``.
        has_bias: whether there is a bias.
        activation: None, an activation name ('relu', 'tanh', ...) or a Cell/callable.
        dtype: dtype of the parameters (float32).

    Shapes:
        x ``[..., in_channels]`` -> ``[..., out_channels]``. ``weight`` is
        ``[out_channels, in_channels]``, ``bias`` ``[out_channels]``.
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        weight_init=None,
        bias_init=None,
        has_bias=True,
        activation=None,
        dtype=_dt.float32,
    ):
        super().__init__()
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        if weight_init is None:
            weight_init = HeUniform(math.sqrt(5))
        if bias_init is None:
            bias_init = Uniform(1.0 / math.sqrt(self.in_channels))
        self.weight = make_parameter(
            weight_init, (self.out_channels, self.in_channels), dtype, "weight"
        )
        self.has_bias = bool(has_bias)
        self.bias = (
            make_parameter(bias_init, (self.out_channels,), dtype, "bias") if has_bias else None
        )
        self.activation = get_activation(activation) if isinstance(activation, str) else activation
        self.activation_flag = self.activation is not None

    def construct(self, x):
        if x.ndim < 1 or x.shape[-1] != self.in_channels:
            raise ValueError(
                f"Dense: input of shape {tuple(x.shape)} does not end in in_channels={self.in_channels}"
            )
        y = ops.linear(x, self.weight, self.bias)  # [..., out_channels]
        if self.activation is not None:
            y = self.activation(y)
        return y

    def extend_repr(self):
        s = f"input_channels={self.in_channels}, output_channels={self.out_channels}, has_bias={self.has_bias}"
        if self.activation is not None:
            s += f", activation={self.activation!r}"
        return s


class Dropout(Cell):
    """Zero each element with probability ``p`` in training mode and scale the rest by 1/(1-p).

    Identity in evaluation mode (``set_train(False)``) and when ``p == 0``.

    Args:
        keep_prob: deprecated MindSpore 1.x argument; ``p = 1 - keep_prob``.
        p: drop probability in [0, 1) (MindSpore 2.x). Default 0.5 when neither is given.
    """

    def __init__(self, keep_prob=None, p=None, dtype=_dt.float32):
        super().__init__()
        if keep_prob is not None and p is not None:
            raise ValueError("Dropout: give either keep_prob or p, not both")
        if p is None:
            p = 0.5 if keep_prob is None else 1.0 - float(keep_prob)
        p = float(p)
        if not 0.0 <= p < 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1), got {p}")
        self.p = p

    def construct(self, x):
        if not self.training or self.p == 0.0:
            return x
        return ops.dropout(x, self.p, True)

    def extend_repr(self):
        return f"p={self.p}"


class Flatten(Cell):
    """Flatten axes ``start_dim..end_dim`` into one (default: all but the first)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, x):
        return ops.flatten(x, self.start_dim, self.end_dim)


class Identity(Cell):
    """Returns its input."""

    def construct(self, x):
        return x
