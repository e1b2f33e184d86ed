"""MindFlow's ``mindflow.cell``: the networks of physics-informed training.

``FCSequential`` and ``MultiScaleFCSequential`` (fully connected, residual, multi-scale),
their blocks ``LinearBlock``, ``ResBlock``, ``InputScale``, ``DropPath``, and activations by
name (``get_activation``). Neural operators (FNO, KNO, ...) will sit beside them.
"""

from .activation import get_activation as get_activation
from .basic_block import DropPath as DropPath
from .basic_block import FCSequential as FCSequential
from .basic_block import InputScale as InputScale
from .basic_block import LinearBlock as LinearBlock
from .basic_block import MultiScaleFCSequential as MultiScaleFCSequential
from .basic_block import ResBlock as ResBlock
