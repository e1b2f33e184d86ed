"""MindFlow's ``mindflow/cell/activation.py``: activations by name, which live in
``core.nn.layers.pinn_activation`` (shared with ``mindelec.architecture``), re-exported."""

from diffsci.core.nn.layers.pinn_activation import FastGelu as FastGelu
from diffsci.core.nn.layers.pinn_activation import HSigmoid as HSigmoid
from diffsci.core.nn.layers.pinn_activation import HSwish as HSwish
from diffsci.core.nn.layers.pinn_activation import LogSigmoid as LogSigmoid
from diffsci.core.nn.layers.pinn_activation import PReLU as PReLU
from diffsci.core.nn.layers.pinn_activation import SReLU as SReLU
from diffsci.core.nn.layers.pinn_activation import get_activation as get_activation

__all__ = [
    "FastGelu",
    "HSigmoid",
    "HSwish",
    "LogSigmoid",
    "PReLU",
    "SReLU",
    "get_activation",
]
