"""MindElec's ``mindelec.architecture``: the networks of physics-informed training.

``MultiScaleFCCell`` (multi-scale sine network), ``FCSequential``, ``LinearBlock``, ``ResBlock``,
``InputScaleNet``, activations by name (``get_activation``) and the multi-task loss weighting
``MTLWeightedLossCell``. The blocks live in ``core.nn.layers.fc`` (shared with
``mindflow.cell``); here they take MindElec's argument names.
"""

from .basic_block import FCSequential as FCSequential
from .basic_block import InputScaleNet as InputScaleNet
from .basic_block import LinearBlock as LinearBlock
from .basic_block import MultiScaleFCCell as MultiScaleFCCell
from .basic_block import ResBlock as ResBlock
from .basic_block import get_activation as get_activation
from .mtl_weighted_loss import MTLWeightedLossCell as MTLWeightedLossCell

__all__ = [
    "FCSequential",
    "InputScaleNet",
    "LinearBlock",
    "MTLWeightedLossCell",
    "MultiScaleFCCell",
    "ResBlock",
    "get_activation",
]
