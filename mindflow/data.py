"""MindFlow's ``mindflow.data``: ``Dataset(geometry_dict=None, existed_data_list=None,
dataset_list=None)`` merging geometry point sets and ``.npy`` data into one pipeline dataset,
``create_dataset(batch_size, ..., shuffle, drop_remainder, prebatched_data, ...)``, and its
sub-datasets ``Equation``, ``BoundaryBC``, ``BoundaryIC``, ``ExistedDataset`` with
``ExistedDataConfig``; from ``datasets.geometry.dataset`` (its docstring says how the
sub-datasets are merged and where it differs from MindFlow).
"""

from diffsci.datasets.geometry.dataset import CONSTRAINT_TYPES as CONSTRAINT_TYPES
from diffsci.datasets.geometry.dataset import BoundaryBC as BoundaryBC
from diffsci.datasets.geometry.dataset import BoundaryIC as BoundaryIC
from diffsci.datasets.geometry.dataset import Data as Data
from diffsci.datasets.geometry.dataset import Dataset as Dataset
from diffsci.datasets.geometry.dataset import Equation as Equation
from diffsci.datasets.geometry.dataset import ExistedDataConfig as ExistedDataConfig
from diffsci.datasets.geometry.dataset import ExistedDataset as ExistedDataset
