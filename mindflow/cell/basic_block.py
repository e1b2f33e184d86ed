"""MindFlow's ``mindflow/cell/basic_block.py``: the fully connected PINN networks, which live in
``core.nn.layers.fc`` (shared with ``mindelec.architecture``), re-exported."""

from diffsci.core.nn.layers.fc import DropPath as DropPath
from diffsci.core.nn.layers.fc import FCSequential as FCSequential
from diffsci.core.nn.layers.fc import InputScale as InputScale
from diffsci.core.nn.layers.fc import LinearBlock as LinearBlock
from diffsci.core.nn.layers.fc import MultiScaleFCSequential as MultiScaleFCSequential
from diffsci.core.nn.layers.fc import ResBlock as ResBlock

__all__ = [
    "DropPath",
    "FCSequential",
    "InputScale",
    "LinearBlock",
    "MultiScaleFCSequential",
    "ResBlock",
]
