"""``core.nn`` layers: dense, convolution, pooling, normalization, activation, containers,
embedding, attention. Re-exported by ``core.nn``."""

from .activation import ELU as ELU
from .activation import GELU as GELU
from .activation import LeakyReLU as LeakyReLU
from .activation import LogSoftmax as LogSoftmax
from .activation import ReLU as ReLU
from .activation import ReLU6 as ReLU6
from .activation import Sigmoid as Sigmoid
from .activation import SiLU as SiLU
from .activation import Sin as Sin
from .activation import Softmax as Softmax
from .activation import Softplus as Softplus
from .activation import Tanh as Tanh
from .activation import get_activation as get_activation
from .attention import MultiheadAttention as MultiheadAttention
from .basic import Dense as Dense
from .basic import Dropout as Dropout
from .basic import Flatten as Flatten
from .basic import Identity as Identity
from .container import CellDict as CellDict
from .container import CellList as CellList
from .container import SequentialCell as SequentialCell
from .conv import Conv1d as Conv1d
from .conv import Conv1dTranspose as Conv1dTranspose
from .conv import Conv2d as Conv2d
from .conv import Conv2dTranspose as Conv2dTranspose
from .conv import Conv3d as Conv3d
from .conv import Conv3dTranspose as Conv3dTranspose
from .embedding import Embedding as Embedding
from .normalization import BatchNorm1d as BatchNorm1d
from .normalization import BatchNorm2d as BatchNorm2d
from .normalization import BatchNorm3d as BatchNorm3d
from .normalization import GroupNorm as GroupNorm
from .normalization import LayerNorm as LayerNorm
from .pooling import MaxPool2d as MaxPool2d
