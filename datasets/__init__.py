"""diffsci's data layer: what every domain package (mindflow, mindelec, protenix) reads from.

- the pipeline (``mindspore.dataset``'s names): ``GeneratorDataset``, ``NumpySlicesDataset``
  and the chainable ``map / shuffle / batch / repeat / take``, with prefetching and sharding;
- ``datasets.pde``: PDE data in PDEBench's HDF5 layouts (lazy readers, atomic writers) and our
  own generators (Burgers, Darcy, Navier-Stokes, advection); ``datasets.download``;
- ``datasets.metrics``: PDEBench's error metrics;
- ``datasets.geometry``: MindFlow's geometries, CSG, point sampling, adaptive refinement.

Imports flow one way: ``examples -> domains -> datasets -> core``; this package imports
``core`` and nothing above it (``tests/datasets/test_layering.py``).
"""

from . import geometry as geometry
from . import metrics as metrics
from . import pde as pde
from .download import ChecksumError as ChecksumError
from .download import DownloadError as DownloadError
from .download import download as download
from .geometry.dataset import Dataset as Dataset
from .geometry.dataset import ExistedDataConfig as ExistedDataConfig
from .pde.generators import generate_advection as generate_advection
from .pde.generators import generate_burgers as generate_burgers
from .pde.generators import generate_darcy as generate_darcy
from .pde.generators import generate_navier_stokes as generate_navier_stokes
from .pipeline import DistributedSampler as DistributedSampler
from .pipeline import GeneratorDataset as GeneratorDataset
from .pipeline import NumpySlicesDataset as NumpySlicesDataset
from .pipeline import PipelineError as PipelineError
from .pipeline import RandomSampler as RandomSampler
from .pipeline import SequentialSampler as SequentialSampler
from .pipeline import SubsetRandomSampler as SubsetRandomSampler
from .pipeline import SubsetSampler as SubsetSampler
from .pipeline import config as config
