"""Fully connected PINN networks (MindFlow's ``mindflow/cell/basic_block.py``, MindElec's
``mindelec/architecture/basic_block.py``). They live in ``core`` because both domains re-export
them (``mindflow.cell``, ``mindelec.architecture``) and a domain never imports another.

Every cell acts on the last axis: inputs ``[..., in_channels]``, outputs
``[..., out_channels]``. Constructor arguments and defaults are MindFlow's (the example scripts
pass them by keyword from their YAML files); each cell also takes ``dtype`` (the parameters'
dtype, float32 by default, float64 for float64 training), as MindSpore's ``nn.Dense`` does.

Beyond MindFlow: ``weight_norm=True`` is weight normalisation (Salimans & Kingma 2016),
``w = g * v / ||v||`` per output row, where MindFlow accepts the flag and ignores it; and
``MultiScaleFCSequential`` keeps its inputs' dtype (MindFlow casts every sub-network's output
to float32).
"""

import math

from ... import dtypes as _dt
from ... import ops
from ...tensor import Parameter
from .. import init as _init
from ..cell import Cell
from ..check_args import check_param_type
from .basic import Dense, Dropout
from .container import CellList, SequentialCell
from .pinn_activation import get_activation

__all__ = [
    "DropPath",
    "FCSequential",
    "InputScale",
    "LinearBlock",
    "MultiScaleFCSequential",
    "ResBlock",
]


def _activation_cell(activation, where):
    """A str becomes its Cell; a Cell or another callable (a core op) is kept; None is None."""
    act = get_activation(activation) if isinstance(activation, str) else activation
    if act is not None and not callable(act):
        raise TypeError(
            f"{where}: activation must be a name, a Cell or a callable, got "
            f"{type(activation).__name__}"
        )
    return act


def _check_channels(value, name, where):
    check_param_type(value, f"{where}: {name}", int, bool)
    if value < 1:
        raise ValueError(f"{where}: {name} must be a positive int, got {value}")


class LinearBlock(Cell):
    r"""A dense layer followed by an optional activation: ``act(x W^T + b)``.

    Args:
        in_channels: features in, a positive int.
        out_channels: features out, a positive int.
        weight_init: initializer of the weight ``[out_channels, in_channels]`` (name, number,
            Initializer or Tensor). Default ``'normal'`` (N(0, 0.01^2), MindSpore's).
        bias_init: initializer of the bias ``[out_channels]``. Default ``'zeros'``.
        has_bias: whether there is a bias. Default True.
        activation: None, a name for :func:`get_activation`, a Cell or a callable.
        weight_norm: weight normalisation, ``W = g * V / ||V||_row`` with ``g [out_channels]``
            initialised to the row norms of the initial ``V`` (so the initial function is the
            same). Default False.
        dtype: dtype of the parameters. Default float32.

    Inputs ``[..., in_channels]``; outputs ``[..., out_channels]``.
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        weight_init="normal",
        bias_init="zeros",
        has_bias=True,
        activation=None,
        weight_norm=False,
        dtype=_dt.float32,
    ):
        super().__init__()
        _check_channels(in_channels, "in_channels", "LinearBlock")
        _check_channels(out_channels, "out_channels", "LinearBlock")
        check_param_type(weight_norm, "LinearBlock: weight_norm", bool)
        self.activation = _activation_cell(activation, "LinearBlock")
        self.dense = Dense(
            in_channels,
            out_channels,
            weight_init=weight_init,
            bias_init=bias_init,
            has_bias=has_bias,
            dtype=dtype,
        )
        self.weight_norm = weight_norm
        if weight_norm:
            v = self.dense.weight  # [out, in]
            self.weight_g = Parameter(ops.sqrt(ops.sum(v * v, axis=1)), name="weight_g")  # [out]

    def construct(self, x):
        if self.weight_norm:
            v = self.dense.weight  # [out, in]
            row_norm = ops.sqrt(ops.sum(v * v, axis=1, keepdims=True))  # [out, 1]
            weight = ops.reshape(self.weight_g, (-1, 1)) * v / row_norm  # [out, in]
            out = ops.linear(x, weight, self.dense.bias)  # [..., out]
        else:
            out = self.dense(x)  # [..., out]
        if self.activation is not None:
            out = self.activation(out)
        return out


class ResBlock(Cell):
    r"""A residual dense block: ``act(x W^T + b + x)`` (He et al. 2016), so ``in_channels``
    must equal ``out_channels``.

    Args:
        in_channels, out_channels: features (equal), positive ints.
        weight_init: weight initializer. Default ``'normal'``.
        bias_init: bias initializer. Default ``'zeros'``.
        has_bias: Default True.
        activation: None (identity), a name, a Cell or a callable.
        weight_norm: weight normalisation of the dense layer (see :class:`LinearBlock`).
        dtype: parameters' dtype. Default float32.

    Raises:
        ValueError: ``in_channels != out_channels``.
        TypeError: an activation that is neither a name, a Cell nor a callable.
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        weight_init="normal",
        bias_init="zeros",
        has_bias=True,
        activation=None,
        weight_norm=False,
        dtype=_dt.float32,
    ):
        super().__init__()
        _check_channels(in_channels, "in_channels", "ResBlock")
        _check_channels(out_channels, "out_channels", "ResBlock")
        if in_channels != out_channels:
            raise ValueError(
                f"ResBlock: in_channels must equal out_channels for the residual connection, "
                f"got in_channels={in_channels}, out_channels={out_channels}"
            )
        self.dense = LinearBlock(
            in_channels,
            out_channels,
            weight_init=weight_init,
            bias_init=bias_init,
            has_bias=has_bias,
            activation=None,
            weight_norm=weight_norm,
            dtype=dtype,
        )
        self.activation = _activation_cell(activation, "ResBlock")

    def construct(self, x):
        out = self.dense(x) + x  # [..., channels]
        return out if self.activation is None else self.activation(out)


class InputScale(Cell):
    r"""``(x - input_center) * input_scale`` per input channel (MindFlow's ``InputScale``).

    Args:
        input_scale: list of ``channels`` scale factors.
        input_center: list of ``channels`` offsets, or None (zeros). Default None.
        dtype: dtype of the two constants. Default float32.

    Inputs ``[..., channels]``; outputs ``[..., channels]``.

    Raises:
        TypeError: ``input_scale`` not a list, ``input_center`` neither a list nor None.
        ValueError: the two lists differ in length.
    """

    def __init__(self, input_scale, input_center=None, dtype=_dt.float32):
        super().__init__()
        check_param_type(input_scale, "InputScale: input_scale", list)
        check_param_type(input_center, "InputScale: input_center", (type(None), list))
        if input_center is not None and len(input_center) != len(input_scale):
            raise ValueError(
                f"InputScale: input_center has {len(input_center)} entries but input_scale "
                f"has {len(input_scale)}"
            )
        center = input_center if input_center is not None else [0.0] * len(input_scale)
        self.input_scale = ops.tensor([float(s) for s in input_scale], dtype=dtype)  # [C]
        self.input_center = ops.tensor([float(c) for c in center], dtype=dtype)  # [C]

    def construct(self, x):
        if x.shape[-1] != self.input_scale.shape[0]:
            raise ValueError(
                f"InputScale: input of shape {tuple(x.shape)} does not end in the "
                f"{self.input_scale.shape[0]} channels of input_scale"
            )
        return (x - self.input_center) * self.input_scale


def _default_bias(fan_in):
    """MindFlow's ``bias_init='default'``: U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    return _init.Uniform(1.0 / math.sqrt(fan_in))


class FCSequential(Cell):
    r"""A stack of ``layers`` dense layers (MindFlow's ``FCSequential``):

    ``in_channels -> neurons`` (act), ``layers - 2`` hidden blocks ``neurons -> neurons``
    (act; a :class:`ResBlock` with ``residual=True``, a :class:`LinearBlock` otherwise), and
    ``neurons -> out_channels`` (no activation).

    Args:
        in_channels: features in.
        out_channels: features out.
        layers: total number of dense layers, an int >= 3.
        neurons: width of the hidden layers.
        residual: residual hidden blocks. Default True.
        act: activation of every layer but the last (name, Cell or callable). Default
            ``'sin'``.
        weight_init: weight initializer. Default ``'normal'``.
        has_bias: Default True.
        bias_init: bias initializer; ``'default'`` (MindFlow's default) draws each layer's
            bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
        weight_norm: weight normalisation of every layer (see :class:`LinearBlock`).
            Default False.
        dtype: parameters' dtype. Default float32.

    Inputs ``[..., in_channels]``; outputs ``[..., out_channels]``.

    Raises:
        TypeError: ``layers``/``neurons`` not ints, ``residual`` not a bool.
        ValueError: ``layers < 3``.
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        layers,
        neurons,
        residual=True,
        act="sin",
        weight_init="normal",
        has_bias=True,
        bias_init="default",
        weight_norm=False,
        dtype=_dt.float32,
    ):
        super().__init__()
        check_param_type(layers, "FCSequential: layers", int, bool)
        check_param_type(neurons, "FCSequential: neurons", int, bool)
        check_param_type(residual, "FCSequential: residual", bool)
        if layers < 3:
            raise ValueError(
                f"FCSequential: layers counts the input, hidden and output layers and must be "
                f">= 3, got {layers}"
            )
        self.in_channels, self.out_channels = in_channels, out_channels
        self.layers, self.neurons, self.residual = layers, neurons, residual
        self.act, self.weight_init, self.has_bias = act, weight_init, has_bias
        self.bias_init, self.weight_norm = bias_init, weight_norm

        def block(cls, fan_in, fan_out, activation):
            bias = _default_bias(fan_in) if _is_default(bias_init) else bias_init
            return cls(
                fan_in,
                fan_out,
                weight_init=weight_init,
                bias_init=bias,
                has_bias=has_bias,
                activation=activation,
                weight_norm=weight_norm,
                dtype=dtype,
            )

        hidden = ResBlock if residual else LinearBlock
        cells = [block(LinearBlock, in_channels, neurons, act)]
        cells += [block(hidden, neurons, neurons, act) for _ in range(layers - 2)]
        cells.append(block(LinearBlock, neurons, out_channels, None))
        self.network = SequentialCell(cells)

    def construct(self, x):
        return self.network(x)  # [..., in] -> [..., out]


def _is_default(init):
    return isinstance(init, str) and init == "default"


class MultiScaleFCSequential(Cell):
    r"""Multi-scale fully connected network (MindFlow's ``MultiScaleFCSequential``; the
    multi-scale DNN of Liu, Cai & Xu 2020): ``num_scales`` :class:`FCSequential` sub-networks,
    the ``i``-th fed the input multiplied by ``amp_factor * scale_factor**i``, summed:

    .. math::
        u(x) = \sum_{i=0}^{S-1} \mathrm{FC}_i\big(a\, s^i\, \tilde x\big), \qquad
        \tilde x = [(x - c) \odot \sigma,\ z]

    where ``(x - c) * sigma`` is :class:`InputScale` (when ``input_scale`` is given) and ``z``
    the row of ``latent_vector`` of the point's scenario (when given).

    Args:
        in_channels, out_channels, layers, neurons, residual, act, weight_init, weight_norm,
            has_bias, bias_init: as :class:`FCSequential` (for each sub-network).
        num_scales: number of sub-networks ``S``. Default 4.
        amp_factor: ``a``, int or float. Default 1.0.
        scale_factor: ``s``, int or float. Default 2.0.
        input_scale: list of per-channel scales, or None. Default None.
        input_center: list of per-channel centres, or None. Default None.
        latent_vector: a Parameter ``[num_scenarios, latent_size]``, or None. With it, a batch
            of ``N`` points is ``num_scenarios`` consecutive groups of ``N / num_scenarios``
            points, the ``k``-th group getting row ``k`` appended to its inputs.
        dtype: parameters' dtype. Default float32.

    Inputs ``[N, in_channels]`` (``[..., in_channels]`` without a latent vector); outputs
    ``[N, out_channels]``.

    Raises:
        TypeError: ``num_scales`` not an int, ``amp_factor``/``scale_factor`` not numbers,
            ``latent_vector`` neither a Parameter nor None.
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        layers,
        neurons,
        residual=True,
        act="sin",
        weight_init="normal",
        weight_norm=False,
        has_bias=True,
        bias_init="default",
        num_scales=4,
        amp_factor=1.0,
        scale_factor=2.0,
        input_scale=None,
        input_center=None,
        latent_vector=None,
        dtype=_dt.float32,
    ):
        super().__init__()
        check_param_type(num_scales, "MultiScaleFCSequential: num_scales", int, bool)
        check_param_type(amp_factor, "MultiScaleFCSequential: amp_factor", (int, float), bool)
        check_param_type(scale_factor, "MultiScaleFCSequential: scale_factor", (int, float), bool)
        if num_scales < 1:
            raise ValueError(f"MultiScaleFCSequential: num_scales must be >= 1, got {num_scales}")
        self.num_scales = num_scales
        self.scale_coef = [float(amp_factor) * float(scale_factor) ** i for i in range(num_scales)]
        self.latent_vector = latent_vector
        if latent_vector is not None:
            check_param_type(latent_vector, "MultiScaleFCSequential: latent_vector", Parameter)
            if latent_vector.ndim != 2:
                raise ValueError(
                    f"MultiScaleFCSequential: latent_vector must be [num_scenarios, "
                    f"latent_size], got shape {tuple(latent_vector.shape)}"
                )
            self.num_scenarios, self.latent_size = latent_vector.shape
            in_channels += self.latent_size
        else:
            self.num_scenarios, self.latent_size = 1, 0
        self.cell_list = CellList(
            [
                FCSequential(
                    in_channels=in_channels,
                    out_channels=out_channels,
                    layers=layers,
                    neurons=neurons,
                    residual=residual,
                    act=act,
                    weight_init=weight_init,
                    has_bias=has_bias,
                    bias_init=bias_init,
                    weight_norm=weight_norm,
                    dtype=dtype,
                )
                for _ in range(num_scales)
            ]
        )
        self.input_scale = (
            InputScale(input_scale, input_center, dtype=dtype) if input_scale is not None else None
        )

    def construct(self, x):
        if self.input_scale is not None:
            x = self.input_scale(x)  # [N, in]
        if self.latent_vector is not None:
            n = x.shape[0]
            if x.ndim != 2 or n % self.num_scenarios:
                raise ValueError(
                    f"MultiScaleFCSequential: with a latent vector the input must be [N, "
                    f"in_channels] with N a multiple of num_scenarios={self.num_scenarios}, got "
                    f"{tuple(x.shape)}"
                )
            per = n // self.num_scenarios
            z = ops.reshape(self.latent_vector, (self.num_scenarios, 1, self.latent_size))
            z = ops.reshape(
                ops.broadcast_to(z, (self.num_scenarios, per, self.latent_size)),
                (n, self.latent_size),
            )  # [N, latent]: scenario k on rows [k * per, (k + 1) * per)
            x = ops.concat([x, ops.astype(z, x.dtype)], axis=1)  # [N, in + latent]
        out = 0.0
        for coef, net in zip(self.scale_coef, self.cell_list):
            out = out + net(x * coef)  # [N, out]
        return out


class DropPath(Cell):
    """Stochastic depth (Huang et al. 2016) per sample: in training, each sample of the batch
    (axis 0) is zeroed with probability ``dropout_rate`` and the others scaled by
    ``1 / (1 - dropout_rate)``; the identity in evaluation. Inputs and outputs ``[N, ...]``."""

    def __init__(self, dropout_rate=0.0):
        super().__init__()
        if not 0.0 <= dropout_rate < 1.0:
            raise ValueError(f"DropPath: dropout_rate must be in [0, 1), got {dropout_rate!r}")
        self.drop = Dropout(p=dropout_rate)

    def construct(self, x):
        if not self.training:
            return x
        mask = self.drop(ops.ones((x.shape[0],) + (1,) * (x.ndim - 1), dtype=x.dtype))
        return mask * x  # [N, ...]
