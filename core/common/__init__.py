"""``core.common``: MindSpore-compatible module paths (``core.common.initializer``,
``core.common.dtype``, ``from diffsci.core.common import Parameter, Tensor``)."""

from ..tensor import Parameter as Parameter
from ..tensor import Tensor as Tensor
from . import dtype as dtype
from . import initializer as initializer
