"""MindFlow's ``mindflow.cell``: the networks of physics-informed training.

``FCSequential`` and ``MultiScaleFCSequential`` (fully connected, residual, multi-scale),
their blocks ``LinearBlock``, ``ResBlock``, ``InputScale``, ``DropPath``, and activations by
name (``get_activation``); and the neural operators of ``mindflow.cell.neural_operators``
(``FNO1D/2D/3D``, ``FNOBlocks``, ``SpectralConv1d/2d/3d``, ``KNO1D/2D``, ...).
"""

from .activation import get_activation as get_activation
from .basic_block import DropPath as DropPath
from .basic_block import FCSequential as FCSequential
from .basic_block import InputScale as InputScale
from .basic_block import LinearBlock as LinearBlock
from .basic_block import MultiScaleFCSequential as MultiScaleFCSequential
from .basic_block import ResBlock as ResBlock
from .neural_operators import FNO1D as FNO1D
from .neural_operators import FNO2D as FNO2D
from .neural_operators import FNO3D as FNO3D
from .neural_operators import KNO1D as KNO1D
from .neural_operators import KNO2D as KNO2D
from .neural_operators import FNOBlocks as FNOBlocks
from .neural_operators import SpectralConv1d as SpectralConv1d
from .neural_operators import SpectralConv2d as SpectralConv2d
from .neural_operators import SpectralConv3d as SpectralConv3d
from .neural_operators.deeponet import DeepONet as DeepONet
from .neural_operators.sno import SNO as SNO
from .neural_operators.sno import SNO1D as SNO1D
from .neural_operators.sno import SNO2D as SNO2D
from .neural_operators.sno import SNO3D as SNO3D
from .neural_operators.sno_utils import get_poly_transform as get_poly_transform
from .neural_operators.sno_utils import interpolate_1d_dataset as interpolate_1d_dataset
from .neural_operators.sno_utils import interpolate_2d_dataset as interpolate_2d_dataset
from .neural_operators.sno_utils import poly_data as poly_data
from .neural_operators.unet import UNet2D as UNet2D
