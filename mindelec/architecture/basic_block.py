"""MindElec's ``mindelec/architecture/basic_block.py`` names over ``core.nn.layers.fc``.

MindElec spells the channel arguments of ``FCSequential`` and ``MultiScaleFCCell``
``in_channel``/``out_channel`` (MindFlow: ``in_channels``/``out_channels``) and calls the input
scaling ``InputScaleNet``; the layers are the same (inputs ``[..., in_channel]``, outputs
``[..., out_channel]``). ``dtype`` (float32 default, float64 for float64 training) is ours.
"""

from diffsci import core
from diffsci.core.nn.layers.fc import FCSequential as _FCSequential
from diffsci.core.nn.layers.fc import InputScale as _InputScale
from diffsci.core.nn.layers.fc import LinearBlock as LinearBlock
from diffsci.core.nn.layers.fc import MultiScaleFCSequential as _MultiScaleFCSequential
from diffsci.core.nn.layers.fc import ResBlock as ResBlock
from diffsci.core.nn.layers.pinn_activation import get_activation as get_activation

__all__ = [
    "FCSequential",
    "InputScaleNet",
    "LinearBlock",
    "MultiScaleFCCell",
    "ResBlock",
    "get_activation",
]


class InputScaleNet(_InputScale):
    """``(x - input_center) * input_scale`` per input channel (MindElec's ``InputScaleNet``).

    Args:
        input_scale: list of per-channel scales.
        input_center: list of per-channel offsets, or None (zeros).

    Inputs ``[..., channels]``; outputs ``[..., channels]``.
    """


class FCSequential(_FCSequential):
    """``layers`` dense layers, residual hidden blocks, sine activations (MindElec's
    ``FCSequential``; see ``core.nn.layers.fc.FCSequential``).

    Args:
        in_channel, out_channel: features in and out.
        layers: number of dense layers (>= 3); neurons: hidden width.
        residual, act, weight_init, has_bias, bias_init: as MindElec (defaults True, ``'sin'``,
            ``'normal'``, True, ``'default'``).
        dtype: parameters' dtype.

    Inputs ``[..., in_channel]``; outputs ``[..., out_channel]``.
    """

    def __init__(
        self,
        in_channel,
        out_channel,
        layers,
        neurons,
        residual=True,
        act="sin",
        weight_init="normal",
        has_bias=True,
        bias_init="default",
        dtype=core.float32,
    ):
        super().__init__(
            in_channel,
            out_channel,
            layers,
            neurons,
            residual=residual,
            act=act,
            weight_init=weight_init,
            has_bias=has_bias,
            bias_init=bias_init,
            dtype=dtype,
        )


class MultiScaleFCCell(_MultiScaleFCSequential):
    r"""Multi-scale fully connected network (MindElec's ``MultiScaleFCCell``; Liu, Cai & Xu,
    "Multi-scale deep neural network (MscaleDNN) for solving Poisson-Boltzmann equation in
    complex domains", 2020):

    .. math:: u(x) = \sum_{i=0}^{S-1} \mathrm{FC}_i\big(a\, s^i\, (x - c) \odot \sigma\big)

    with ``S = num_scales``, ``a = amp_factor``, ``s = scale_factor``, ``sigma = input_scale``
    and ``c = input_center``. The sub-networks are ``cell_list`` (as in MindElec, so
    ``model.cell_list`` names them).

    Args:
        in_channel, out_channel, layers, neurons, residual, act, weight_init, has_bias,
            bias_init: as :class:`FCSequential`.
        num_scales: ``S``. Default 4. amp_factor: ``a``. Default 1.0.
        scale_factor: ``s``. Default 2.0.
        input_scale, input_center: lists of per-channel values, or None.
        latent_vector: a Parameter ``[num_scenarios, latent_size]`` appended to the inputs (the
            meta-auto-decoder of MindElec's incremental learning), or None.
        dtype: parameters' dtype.

    Inputs ``[N, in_channel]``; outputs ``[N, out_channel]``.
    """

    def __init__(
        self,
        in_channel,
        out_channel,
        layers,
        neurons,
        residual=True,
        act="sin",
        weight_init="normal",
        has_bias=True,
        bias_init="default",
        num_scales=4,
        amp_factor=1.0,
        scale_factor=2.0,
        input_scale=None,
        input_center=None,
        latent_vector=None,
        dtype=core.float32,
    ):
        super().__init__(
            in_channel,
            out_channel,
            layers,
            neurons,
            residual=residual,
            act=act,
            weight_init=weight_init,
            has_bias=has_bias,
            bias_init=bias_init,
            num_scales=num_scales,
            amp_factor=amp_factor,
            scale_factor=scale_factor,
            input_scale=input_scale,
            input_center=input_center,
            latent_vector=latent_vector,
            dtype=dtype,
        )
        self.in_channel, self.out_channel = in_channel, out_channel
