"""MindFlow's ``mindflow/cell/activation.py``: activations by name, which live in
``core.nn.layers.pinn_activation`` (shared with ``mindelec.architecture``), re-exported."""

from core.nn.layers.pinn_activation import FastGelu as FastGelu
from core.nn.layers.pinn_activation import HSigmoid as HSigmoid
from core.nn.layers.pinn_activation import HSwish as HSwish
from core.nn.layers.pinn_activation import LogSigmoid as LogSigmoid
from core.nn.layers.pinn_activation import PReLU as PReLU
from core.nn.layers.pinn_activation import SReLU as SReLU
from core.nn.layers.pinn_activation import get_activation as get_activation

__all__ = [
    "FastGelu",
    "HSigmoid",
    "HSwish",
    "LogSigmoid",
    "PReLU",
    "SReLU",
    "get_activation",
]
