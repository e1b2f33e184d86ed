"""MindFlow's ``mindflow.cell.neural_operators``: data-driven surrogates of PDE solution maps.

Fourier neural operators (``FNO1D``, ``FNO2D``, ``FNO3D``, their layer ``FNOBlocks`` and the
spectral convolutions ``SpectralConv1d/2d/3d``) and Koopman neural operators (``KNO1D``,
``KNO2D``); one module per model family. ``dft`` holds MindFlow's truncated DFT cells
(``dft1/2/3``, ``idft1/2/3``) that some of its applications import directly.
"""

from .deeponet import DeepONet as DeepONet
from .fno import FNO1D as FNO1D
from .fno import FNO2D as FNO2D
from .fno import FNO3D as FNO3D
from .fno import FNOBlocks as FNOBlocks
from .kno import KNO1D as KNO1D
from .kno import KNO2D as KNO2D
from .sno import SNO as SNO
from .sno import SNO1D as SNO1D
from .sno import SNO2D as SNO2D
from .sno import SNO3D as SNO3D
from .sno_utils import get_poly_transform as get_poly_transform
from .sno_utils import interpolate_1d_dataset as interpolate_1d_dataset
from .sno_utils import interpolate_2d_dataset as interpolate_2d_dataset
from .sno_utils import poly_data as poly_data
from .spectral_conv import SpectralConv1d as SpectralConv1d
from .spectral_conv import SpectralConv1dDft as SpectralConv1dDft
from .spectral_conv import SpectralConv2d as SpectralConv2d
from .spectral_conv import SpectralConv2dDft as SpectralConv2dDft
from .spectral_conv import SpectralConv3d as SpectralConv3d
from .spectral_conv import SpectralConv3dDft as SpectralConv3dDft
from .unet import UNet2D as UNet2D
