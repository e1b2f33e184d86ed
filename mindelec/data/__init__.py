"""MindElec's ``mindelec.data``: ``Dataset`` merging geometry point sets (``Equation``,
``BoundaryBC``, ``BoundaryIC``) and ``.npy`` files (``ExistedDataConfig``, ``ExistedDataset``).
They live in ``datasets.geometry.dataset`` (shared with ``mindflow.data``); see its docstring
for how sub-datasets are merged and named (``<geometry>_<domain|BC|IC>``, columns
``<sub-dataset>_points``)."""

from diffsci.datasets.geometry.dataset import BoundaryBC as BoundaryBC
from diffsci.datasets.geometry.dataset import BoundaryIC as BoundaryIC
from diffsci.datasets.geometry.dataset import Dataset as Dataset
from diffsci.datasets.geometry.dataset import Equation as Equation
from diffsci.datasets.geometry.dataset import ExistedDataConfig as ExistedDataConfig
from diffsci.datasets.geometry.dataset import ExistedDataset as ExistedDataset

__all__ = [
    "BoundaryBC",
    "BoundaryIC",
    "Dataset",
    "Equation",
    "ExistedDataConfig",
    "ExistedDataset",
]
