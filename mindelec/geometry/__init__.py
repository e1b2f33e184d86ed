"""MindElec's ``mindelec.geometry``: shapes, CSG, space-time domains and sampling configs.

They live in ``datasets.geometry`` (shared with ``mindflow.geometry``) and are re-exported with
MindElec's names: ``Rectangle``, ``Disk``, ``Interval``, ``Cuboid``, ``TimeDomain``,
``GeometryWithTime``, CSG (``CSGDifference``, ``CSGUnion``, ... and the operators ``- | & ^``),
and ``create_config_from_edict`` (MindElec's name of ``generate_sampling_config``: a dict such
as ``{"domain": {"size": 1000, "sampler": "uniform"}, "IC": ..., "time": ...}`` becomes a
``SamplingConfig``).
"""

from diffsci.datasets.geometry import CSG as CSG
from diffsci.datasets.geometry import CSGXOR as CSGXOR
from diffsci.datasets.geometry import Cone as Cone
from diffsci.datasets.geometry import CSGDifference as CSGDifference
from diffsci.datasets.geometry import CSGIntersection as CSGIntersection
from diffsci.datasets.geometry import CSGUnion as CSGUnion
from diffsci.datasets.geometry import Cuboid as Cuboid
from diffsci.datasets.geometry import Cylinder as Cylinder
from diffsci.datasets.geometry import Disk as Disk
from diffsci.datasets.geometry import Geometry as Geometry
from diffsci.datasets.geometry import GeometryWithTime as GeometryWithTime
from diffsci.datasets.geometry import HyperCube as HyperCube
from diffsci.datasets.geometry import Interval as Interval
from diffsci.datasets.geometry import PartSamplingConfig as PartSamplingConfig
from diffsci.datasets.geometry import Polygon as Polygon
from diffsci.datasets.geometry import Rectangle as Rectangle
from diffsci.datasets.geometry import SamplingConfig as SamplingConfig
from diffsci.datasets.geometry import TimeDomain as TimeDomain
from diffsci.datasets.geometry import Triangle as Triangle
from diffsci.datasets.geometry import generate_sampling_config as generate_sampling_config

create_config_from_edict = generate_sampling_config

__all__ = [
    "CSG",
    "CSGXOR",
    "CSGDifference",
    "CSGIntersection",
    "CSGUnion",
    "Cone",
    "Cuboid",
    "Cylinder",
    "Disk",
    "Geometry",
    "GeometryWithTime",
    "HyperCube",
    "Interval",
    "PartSamplingConfig",
    "Polygon",
    "Rectangle",
    "SamplingConfig",
    "TimeDomain",
    "Triangle",
    "create_config_from_edict",
    "generate_sampling_config",
]
