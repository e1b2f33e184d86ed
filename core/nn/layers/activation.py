"""Activation cells. Each acts elementwise (or along ``axis``) on a tensor of any shape ``[...]``
and returns the same shape."""

from ... import ops
from ..cell import Cell

__all__ = [
    "ELU",
    "GELU",
    "LeakyReLU",
    "LogSoftmax",
    "ReLU",
    "ReLU6",
    "SiLU",
    "Sigmoid",
    "Sin",
    "Softmax",
    "Softplus",
    "Tanh",
    "get_activation",
]


class ReLU(Cell):
    """``max(x, 0)``."""

    def construct(self, x):
        return ops.relu(x)


class ReLU6(Cell):
    """``min(max(x, 0), 6)``."""

    def construct(self, x):
        return ops.clip(x, 0.0, 6.0)


class GELU(Cell):
    """Gaussian error linear unit (Hendrycks & Gimpel 2016).

    Args:
        approximate: True (MindSpore's default) uses the tanh form
            ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``; False the exact
            ``x Phi(x)``. The strings 'tanh' / 'none' are accepted too.
    """

    def __init__(self, approximate=True):
        super().__init__()
        if isinstance(approximate, str):
            if approximate not in ("tanh", "none"):
                raise ValueError(
                    f"GELU: approximate must be True/False, 'tanh' or 'none', got {approximate!r}"
                )
            approximate = approximate == "tanh"
        self.approximate = bool(approximate)

    def construct(self, x):
        return ops.gelu(x, approximate="tanh" if self.approximate else "none")

    def extend_repr(self):
        return f"approximate={self.approximate}"


class Tanh(Cell):
    """``tanh(x)``."""

    def construct(self, x):
        return ops.tanh(x)


class Sigmoid(Cell):
    """``1 / (1 + exp(-x))``."""

    def construct(self, x):
        return ops.sigmoid(x)


class SiLU(Cell):
    """``x * sigmoid(x)`` (swish)."""

    def construct(self, x):
        return ops.silu(x)


class Softplus(Cell):
    """``log(1 + exp(beta x)) / beta``; linear where ``beta x > threshold``."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = float(beta), float(threshold)

    def construct(self, x):
        y = ops.softplus(x, beta=self.beta)
        return ops.where(x * self.beta > self.threshold, x, y)  # MindSpore/PyTorch: linear above

    def extend_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class LeakyReLU(Cell):
    """``x`` for ``x >= 0``, ``alpha * x`` otherwise; MindSpore's default ``alpha=0.2``."""

    def __init__(self, alpha=0.2):
        super().__init__()
        self.alpha = float(alpha)

    def construct(self, x):
        return ops.leaky_relu(x, self.alpha)

    def extend_repr(self):
        return f"alpha={self.alpha}"


class ELU(Cell):
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = float(alpha)

    def construct(self, x):
        return ops.where(x > 0, x, self.alpha * ops.expm1(ops.minimum(x, 0.0)))


class Sin(Cell):
    """``sin(omega * x)``: the periodic activation of PINNs and SIREN (Sitzmann et al. 2020)."""

    def __init__(self, omega=1.0):
        super().__init__()
        self.omega = float(omega)

    def construct(self, x):
        return ops.sin(x if self.omega == 1.0 else self.omega * x)

    def extend_repr(self):
        return f"omega={self.omega}"


class Softmax(Cell):
    """``exp(x) / sum(exp(x))`` along ``axis``."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return ops.softmax(x, self.axis)


class LogSoftmax(Cell):
    """``x - logsumexp(x)`` along ``axis``."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return ops.log_softmax(x, self.axis)


_ACTIVATIONS = {
    "relu": ReLU,
    "relu6": ReLU6,
    "gelu": GELU,
    "tanh": Tanh,
    "sigmoid": Sigmoid,
    "silu": SiLU,
    "swish": SiLU,
    "softplus": Softplus,
    "leakyrelu": LeakyReLU,
    "leaky_relu": LeakyReLU,
    "elu": ELU,
    "sin": Sin,
    "softmax": Softmax,
    "logsoftmax": LogSoftmax,
    "log_softmax": LogSoftmax,
}


def get_activation(name, prim_name=None):
    """A new activation Cell by (case-insensitive) name, e.g. ``get_activation('relu')``.

    ``None`` gives None. Names: relu relu6 gelu tanh sigmoid silu swish softplus leakyrelu elu
    sin softmax logsoftmax.
    """
    if name is None:
        return None
    if not isinstance(name, str):
        raise TypeError(f"get_activation: name must be a str, got {type(name).__name__}")
    cls = _ACTIVATIONS.get(name.lower())
    if cls is None:
        where = f"{prim_name}: " if prim_name else ""
        raise KeyError(f"{where}unknown activation {name!r}; known: {sorted(_ACTIVATIONS)}")
    return cls()
