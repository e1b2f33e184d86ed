"""Parameter initializers, MindSpore style (``mindspore.common.initializer``).

An :class:`Initializer` is a small value object: ``init(shape, dtype) -> Tensor``. Random
initializers draw from ``core.random`` (the current device's generator), so
``core.set_seed(s)`` makes every layer's initial weights repeatable.

    w = initializer("xavier_uniform", (64, 32), core.float32)
    w = initializer(HeUniform(negative_slope=math.sqrt(5)), (64, 3, 3, 3))
    w = XavierNormal(gain=2.0)((16, 16))

Fans follow MindSpore/PyTorch: for a weight of shape ``[d0, d1, *k]``
``fan_in = d1 * prod(k)`` and ``fan_out = d0 * prod(k)`` (so a Dense weight ``[out, in]`` has
``fan_in = in``; a conv weight ``[C_out, C_in / group, *k]`` has ``fan_in = C_in / group *
prod(k)``).

``with skip_init(): net = Net(...)`` builds a network without drawing its random initial
values (PyTorch's ``torch.nn.utils.skip_init``): every random initializer returns zeros and
the generator is left untouched, for a network whose parameters are all loaded from a
checkpoint next (a strict load, so none stays at zero unnoticed).
"""

import contextlib
import math
import numbers

import numpy as np

from .. import dtypes as _dt
from .. import ops as _ops
from .. import random as _random
from ..ops.creation import _shape
from ..tensor import Tensor

__all__ = [
    "Constant",
    "HeNormal",
    "HeUniform",
    "Identity",
    "Initializer",
    "Normal",
    "One",
    "Orthogonal",
    "TruncatedNormal",
    "Uniform",
    "XavierNormal",
    "XavierUniform",
    "skip_init",
    "Zero",
    "calculate_gain",
    "initializer",
]


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for ``nonlinearity`` (as in MindSpore/PyTorch).

    Args:
        nonlinearity: 'linear', 'conv1d'..'conv3d', 'conv_transpose1d'..'3d', 'sigmoid'
            (gain 1), 'tanh' (5/3), 'relu' (sqrt 2), 'leaky_relu' (sqrt(2 / (1 + slope^2))),
            'selu' (3/4).
        param: the negative slope of 'leaky_relu' (default 0.01).
    """
    linear = {
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "sigmoid",
    }
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3.0
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, numbers.Real) and not isinstance(param, bool):
            slope = float(param)
        else:
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a number")
        return math.sqrt(2.0 / (1.0 + slope**2))
    if nonlinearity == "selu":
        return 0.75
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _fans(shape, name):
    """``(fan_in, fan_out)`` of a weight of ``shape`` (at least 2-D)."""
    if len(shape) < 2:
        raise ValueError(
            f"{name}: fan_in and fan_out need a shape with at least 2 dimensions, got {tuple(shape)}"
        )
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _fan(shape, mode, name):
    fan_in, fan_out = _fans(shape, name)
    if mode == "fan_in":
        return fan_in
    if mode == "fan_out":
        return fan_out
    raise ValueError(f"{name}: mode must be 'fan_in' or 'fan_out', got {mode!r}")


_SKIP_DEPTH = [0]


@contextlib.contextmanager
def skip_init():
    """Inside, random initializers (``random = True``: Normal, Uniform, TruncatedNormal, the
    Xavier/He families, Orthogonal) return zeros of the asked shape and dtype without drawing;
    Zero, One, Constant and Identity still give their values. For building a network whose
    every parameter is then loaded from a checkpoint (the draws would be thrown away)."""
    _SKIP_DEPTH[0] += 1
    try:
        yield
    finally:
        _SKIP_DEPTH[0] -= 1


class Initializer:
    """Base class: ``init(shape, dtype=None) -> Tensor`` of ``shape`` (float32 by default).

    Subclasses implement ``_generate(shape, dtype)`` for dtype float32 or float64; other
    floating dtypes (float16, bfloat16) are drawn in float32 and rounded, integer dtypes are
    drawn in float64 and cast. ``random`` marks the initializers that draw (zeros under
    :func:`skip_init`).
    """

    random = False

    def __init__(self, **kwargs):
        self._kwargs = kwargs

    def __call__(self, shape, dtype=None):
        shape = _shape(shape)
        dtype = _dt.canonical(dtype) or _dt.default_float
        if self.random and _SKIP_DEPTH[0]:
            return _ops.zeros(shape, dtype=dtype)
        work = _dt.float32 if dtype in (_dt.float32, _dt.float16, _dt.bfloat16) else _dt.float64
        if _dt.is_complex(dtype):
            work = _dt.real_dtype(dtype)
        out = self._generate(shape, work)
        if out.dtype != dtype:
            out = _ops.astype(out, dtype)
        return out

    def _generate(self, shape, dtype):
        raise NotImplementedError(f"{type(self).__name__} does not define _generate()")

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        return type(self) is type(other) and self._kwargs == other._kwargs

    def __hash__(self):
        return hash((type(self).__name__, tuple(sorted(self._kwargs.items()))))


class Zero(Initializer):
    """All zeros."""

    def _generate(self, shape, dtype):
        return _ops.zeros(shape, dtype=dtype)


class One(Initializer):
    """All ones."""

    def _generate(self, shape, dtype):
        return _ops.ones(shape, dtype=dtype)


class Constant(Initializer):
    """Every element equal to ``value``."""

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _generate(self, shape, dtype):
        return _ops.full(shape, self.value, dtype=dtype)


class Normal(Initializer):
    """Samples of N(mean, sigma^2). MindSpore's default ``sigma=0.01``."""

    random = True

    def __init__(self, sigma=0.01, mean=0.0):
        super().__init__(sigma=sigma, mean=mean)
        self.sigma, self.mean = float(sigma), float(mean)

    def _generate(self, shape, dtype):
        return _random.normal(shape, self.mean, self.sigma, dtype=dtype)


class Uniform(Initializer):
    """Samples of U(-scale, scale). MindSpore's default ``scale=0.07``."""

    random = True

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = float(scale)

    def _generate(self, shape, dtype):
        return _random.uniform(shape, -self.scale, self.scale, dtype=dtype)


class TruncatedNormal(Initializer):
    """N(mean, sigma^2) restricted to ``[a, b]`` (absolute bounds, as in MindSpore).

    Drawn by rejection on the device: out-of-range samples are redrawn until none is left.
    """

    random = True

    def __init__(self, sigma=0.01, mean=0.0, a=-2.0, b=2.0):
        super().__init__(sigma=sigma, mean=mean, a=a, b=b)
        self.sigma, self.mean, self.a, self.b = float(sigma), float(mean), float(a), float(b)
        if not self.a < self.b:
            raise ValueError(f"TruncatedNormal: need a < b, got a={a}, b={b}")
        lo = (self.a - self.mean) / (self.sigma * math.sqrt(2.0))
        hi = (self.b - self.mean) / (self.sigma * math.sqrt(2.0))
        mass = 0.5 * (math.erf(hi) - math.erf(lo))
        if mass < 1e-3:
            raise ValueError(
                f"TruncatedNormal: [a, b] = [{a}, {b}] holds only {mass:.2e} of N({mean}, {sigma}^2); "
                "rejection sampling would not finish"
            )

    def _generate(self, shape, dtype):
        out = _random.normal(shape, self.mean, self.sigma, dtype=dtype)
        bad = (out < self.a) | (out > self.b)
        while bool(_ops.any(bad)):
            fresh = _random.normal(shape, self.mean, self.sigma, dtype=dtype)
            out = _ops.where(bad, fresh, out)
            bad = (out < self.a) | (out > self.b)
        return out


class XavierUniform(Initializer):
    """U(-bound, bound) with ``bound = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot 2010)."""

    random = True

    def __init__(self, gain=1.0):
        super().__init__(gain=gain)
        self.gain = float(gain)

    def _generate(self, shape, dtype):
        fan_in, fan_out = _fans(shape, "XavierUniform")
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return _random.uniform(shape, -bound, bound, dtype=dtype)


class XavierNormal(Initializer):
    """N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))`` (Glorot 2010)."""

    random = True

    def __init__(self, gain=1.0):
        super().__init__(gain=gain)
        self.gain = float(gain)

    def _generate(self, shape, dtype):
        fan_in, fan_out = _fans(shape, "XavierNormal")
        std = self.gain * math.sqrt(2.0 / (fan_in + fan_out))
        return _random.normal(shape, 0.0, std, dtype=dtype)


class HeUniform(Initializer):
    """U(-bound, bound) with ``bound = gain * sqrt(3 / fan)`` (He et al. 2015).

    Args:
        negative_slope: slope of the leaky ReLU that follows (used when
            ``nonlinearity='leaky_relu'``). ``HeUniform(math.sqrt(5))`` is the default weight
            initializer of Dense and Conv layers (``bound = 1 / sqrt(fan_in)``).
        mode: 'fan_in' (preserve forward variance) or 'fan_out' (backward).
        nonlinearity: see :func:`calculate_gain`.
    """

    random = True

    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def _generate(self, shape, dtype):
        fan = _fan(shape, self.mode, "HeUniform")
        gain = calculate_gain(self.nonlinearity, self.negative_slope)
        bound = gain * math.sqrt(3.0 / fan)
        return _random.uniform(shape, -bound, bound, dtype=dtype)


class HeNormal(Initializer):
    """N(0, std^2) with ``std = gain / sqrt(fan)`` (He et al. 2015); arguments as HeUniform."""

    random = True

    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def _generate(self, shape, dtype):
        fan = _fan(shape, self.mode, "HeNormal")
        std = calculate_gain(self.nonlinearity, self.negative_slope) / math.sqrt(fan)
        return _random.normal(shape, 0.0, std, dtype=dtype)


class Identity(Initializer):
    """The identity matrix (2-D shapes only; rectangular shapes get ones on the diagonal)."""

    def _generate(self, shape, dtype):
        if len(shape) != 2:
            raise ValueError(f"Identity: needs a 2-D shape, got {tuple(shape)}")
        return _ops.eye(shape[0], shape[1], dtype=dtype)


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times ``gain`` (Saxe et al. 2013); trailing dims are flattened.

    The Gaussian draw comes from ``core.random``; the QR factorization runs on the host.
    """

    random = True

    def __init__(self, gain=1.0):
        super().__init__(gain=gain)
        self.gain = float(gain)

    def _generate(self, shape, dtype):
        if len(shape) < 2:
            raise ValueError(f"Orthogonal: needs at least a 2-D shape, got {tuple(shape)}")
        rows, cols = shape[0], int(np.prod(shape[1:]))
        flat = _random.normal((max(rows, cols), min(rows, cols)), dtype=_dt.float64).asnumpy()
        q, r = np.linalg.qr(flat)
        q = q * np.sign(np.diag(r))  # make the factorization unique (uniform over O(n))
        if rows < cols:
            q = q.T
        out = Tensor((self.gain * q).reshape(shape).astype(dtype))
        return out


_ALIASES = {
    "zeros": Zero,
    "zero": Zero,
    "ones": One,
    "one": One,
    "normal": Normal,
    "uniform": Uniform,
    "truncatednormal": TruncatedNormal,
    "truncated_normal": TruncatedNormal,
    "xavieruniform": XavierUniform,
    "xavier_uniform": XavierUniform,
    "xaviernormal": XavierNormal,
    "xavier_normal": XavierNormal,
    "heuniform": HeUniform,
    "he_uniform": HeUniform,
    "henormal": HeNormal,
    "he_normal": HeNormal,
    "identity": Identity,
    "eye": Identity,
    "orthogonal": Orthogonal,
}


def get_initializer(init):
    """An :class:`Initializer` for a name ('normal', 'xavier_uniform', ...), a number
    (:class:`Constant`), an Initializer class or instance."""
    if isinstance(init, Initializer):
        return init
    if isinstance(init, type) and issubclass(init, Initializer):
        return init()
    if isinstance(init, str):
        cls = _ALIASES.get(init.lower())
        if cls is None:
            raise ValueError(f"initializer: unknown name {init!r}; known: {sorted(_ALIASES)}")
        return cls()
    if isinstance(init, numbers.Number) and not isinstance(init, bool):
        return Constant(init)
    raise TypeError(
        f"initializer: init must be a Tensor, str, number or Initializer, got {type(init).__name__}"
    )


def initializer(init, shape=None, dtype=None):
    """A Tensor of ``shape`` and ``dtype`` initialized by ``init`` (MindSpore's ``initializer``).

    Args:
        init: a Tensor or numpy array (returned as is after a shape check; its dtype is kept),
            a name ('normal', 'zeros', 'ones', 'uniform', 'truncatednormal', 'xavier_uniform',
            'xavier_normal', 'he_uniform', 'he_normal', 'identity', 'orthogonal'; any case),
            a number (constant fill), or an :class:`Initializer` (class or instance).
        shape: int or tuple of ints; may be omitted when ``init`` is a Tensor.
        dtype: float32 by default.

    Returns:
        Tensor of ``shape``.
    """
    if isinstance(init, (Tensor, np.ndarray)):
        t = init if isinstance(init, Tensor) else Tensor(np.array(init))  # a copy, never a view
        if shape is not None and tuple(t.shape) != _shape(shape):
            raise ValueError(
                f"initializer: the Tensor has shape {tuple(t.shape)} but shape {_shape(shape)} was asked for"
            )
        return Tensor._wrap(t._value) if type(t) is Tensor else Tensor(t)
    if shape is None:
        raise ValueError(f"initializer: shape is needed for init {init!r}")
    return get_initializer(init)(shape, dtype)
