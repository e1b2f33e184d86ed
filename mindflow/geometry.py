"""MindFlow's ``mindflow.geometry``: geometries, CSG and point sampling, from
``datasets.geometry`` (shared with ``mindelec``; its module docstring describes the shapes and
the sampling configuration keys).

    from mindflow.geometry import Rectangle, generate_sampling_config
    rect = Rectangle("rect", [-1, -1], [1, 1], sampling_config=generate_sampling_config(
        {"domain": {"size": 1000, "random_sampling": True, "sampler": "uniform"}}))
    rect.sampling("domain")   # numpy [1000, 2]
"""

from datasets.geometry import CSG as CSG
from datasets.geometry import CSGXOR as CSGXOR
from datasets.geometry import DATA_TYPES as DATA_TYPES
from datasets.geometry import GEOM_TYPES as GEOM_TYPES
from datasets.geometry import SAMPLER_TYPES as SAMPLER_TYPES
from datasets.geometry import Box as Box
from datasets.geometry import Cone as Cone
from datasets.geometry import CSGDifference as CSGDifference
from datasets.geometry import CSGIntersection as CSGIntersection
from datasets.geometry import CSGUnion as CSGUnion
from datasets.geometry import Cuboid as Cuboid
from datasets.geometry import Cylinder as Cylinder
from datasets.geometry import Disk as Disk
from datasets.geometry import Geometry as Geometry
from datasets.geometry import GeometryWithTime as GeometryWithTime
from datasets.geometry import HyperCube as HyperCube
from datasets.geometry import Interval as Interval
from datasets.geometry import PartSamplingConfig as PartSamplingConfig
from datasets.geometry import Pentagon as Pentagon
from datasets.geometry import Polygon as Polygon
from datasets.geometry import Rectangle as Rectangle
from datasets.geometry import SamplingConfig as SamplingConfig
from datasets.geometry import Tetrahedron as Tetrahedron
from datasets.geometry import TimeDomain as TimeDomain
from datasets.geometry import Triangle as Triangle
from datasets.geometry import generate_sampling_config as generate_sampling_config
from datasets.geometry import rad as rad
from datasets.geometry import rar as rar
from datasets.geometry import sample as sample
