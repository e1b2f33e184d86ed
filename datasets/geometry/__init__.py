"""Geometries and point sampling with MindFlow's names (``mindflow.geometry``).

Shapes: ``Interval``; ``Rectangle``, ``Disk``, ``Triangle``, ``Polygon``; CSG
``CSGUnion | CSGIntersection | CSGDifference | CSGXOR`` (operators ``| & - ^``); sampling
configuration ``generate_sampling_config``, ``SamplingConfig``, ``PartSamplingConfig``. The base
class and the interface a shape implements are described in ``base.py``. 3-D and n-D:
``Cuboid``, ``Cylinder``, ``Cone``, ``Tetrahedron``, ``HyperCube``; space-time: ``TimeDomain``,
``GeometryWithTime``; adaptive refinement ``rar``, ``rad`` (``adaptive.py``). MindFlow's ``Dataset``
(``mindflow.data``) is in ``dataset.py`` and exported as ``datasets.Dataset``.
"""

from .adaptive import rad as rad
from .adaptive import rar as rar
from .base import DATA_TYPES as DATA_TYPES
from .base import GEOM_TYPES as GEOM_TYPES
from .base import SAMPLER_TYPES as SAMPLER_TYPES
from .base import Geometry as Geometry
from .base import PartSamplingConfig as PartSamplingConfig
from .base import SamplingConfig as SamplingConfig
from .base import generate_sampling_config as generate_sampling_config
from .box import Box as Box
from .csg import CSG as CSG
from .csg import CSGXOR as CSGXOR
from .csg import CSGDifference as CSGDifference
from .csg import CSGIntersection as CSGIntersection
from .csg import CSGUnion as CSGUnion
from .samplers import sample as sample
from .shapes_1d import Interval as Interval
from .shapes_2d import Disk as Disk
from .shapes_2d import Pentagon as Pentagon
from .shapes_2d import Polygon as Polygon
from .shapes_2d import Rectangle as Rectangle
from .shapes_2d import Triangle as Triangle
from .shapes_3d import Cone as Cone
from .shapes_3d import Cuboid as Cuboid
from .shapes_3d import Cylinder as Cylinder
from .shapes_3d import Tetrahedron as Tetrahedron
from .shapes_nd import HyperCube as HyperCube
from .time_domain import GeometryWithTime as GeometryWithTime
from .time_domain import TimeDomain as TimeDomain
