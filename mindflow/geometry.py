"""MindFlow's ``mindflow.geometry``: geometries, CSG and point sampling, from
``datasets.geometry`` (shared with ``mindelec``; its module docstring describes the shapes and
the sampling configuration keys).

    from diffsci.mindflow.geometry import Rectangle, generate_sampling_config
    rect = Rectangle("rect", [-1, -1], [1, 1], sampling_config=generate_sampling_config(
        {"domain": {"size": 1000, "random_sampling": True, "sampler": "uniform"}}))
    rect.sampling("domain")   # numpy [1000, 2]
"""

from diffsci.datasets.geometry import CSG as CSG
from diffsci.datasets.geometry import CSGXOR as CSGXOR
from diffsci.datasets.geometry import DATA_TYPES as DATA_TYPES
from diffsci.datasets.geometry import GEOM_TYPES as GEOM_TYPES
from diffsci.datasets.geometry import SAMPLER_TYPES as SAMPLER_TYPES
from diffsci.datasets.geometry import Box as Box
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
from diffsci.datasets.geometry import Pentagon as Pentagon
from diffsci.datasets.geometry import Polygon as Polygon
from diffsci.datasets.geometry import Rectangle as Rectangle
from diffsci.datasets.geometry import SamplingConfig as SamplingConfig
from diffsci.datasets.geometry import Tetrahedron as Tetrahedron
from diffsci.datasets.geometry import TimeDomain as TimeDomain
from diffsci.datasets.geometry import Triangle as Triangle
from diffsci.datasets.geometry import generate_sampling_config as generate_sampling_config
from diffsci.datasets.geometry import rad as rad
from diffsci.datasets.geometry import rar as rar
from diffsci.datasets.geometry import sample as sample
