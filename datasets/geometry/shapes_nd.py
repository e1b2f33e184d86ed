"""n-D geometry: MindFlow's ``HyperCube`` (``mindflow/geometry/geometry_nd.py``).

The box itself (sampling, normals, exact SDF, grids) is ``box.Box``; ``HyperCube`` is that box
under MindFlow's name and constructor, and ``shapes_3d.Cuboid`` is the 3-D ``HyperCube``.
"""

import numpy as np

from .box import Box

__all__ = ["HyperCube"]


class HyperCube(Box):
    """The closed axis-aligned box ``[coord_min, coord_max]`` in ``dim`` dimensions.

    Interior: ``coord_min + u * (coord_max - coord_min)`` from ``dim``-d sampler points ``u``.
    Boundary: each of the ``2 dim`` faces is chosen with probability proportional to its
    ``(dim - 1)``-volume ``vol / length_i`` (so the density per unit area is the same on every
    face), the point placed on it by the other ``dim - 1`` coordinates; the normal is the face's
    ``+-e_i``. ``sdf`` is exact (``box.Box.sdf``). Grid sampling (``random_sampling=False``):
    ``size = [n_0, ..., n_{dim-1}]`` points per axis for the domain, about ``size`` points at
    face-cell centres for the boundary.

    Args:
        name: the geometry's name.
        dim: number of dimensions (int >= 1).
        coord_min, coord_max: ``dim`` numbers each, ``coord_min < coord_max``.
        dtype: numpy dtype of sampled points (MindFlow's default float32).
        sampling_config: a ``SamplingConfig`` or None.

    Attributes:
        length: ``coord_max - coord_min`` ``[dim]``; ``vol``: the volume; ``area``: the boundary's
            ``(dim - 1)``-volume (MindFlow's names).

    Example::

        cube = HyperCube("cube", 4, [0, 0, 0, 0], [1, 2, 1, 1], sampling_config=
                         generate_sampling_config({"domain": {"size": 1000, "sampler": "sobol"}}))
        cube.sampling("domain").shape   # (1000, 4)

    Raises:
        ValueError: inverted or empty bounds, or bounds of the wrong length.
    """

    def __init__(self, name, dim, coord_min, coord_max, dtype=np.float32, sampling_config=None):
        super().__init__(name, dim, coord_min, coord_max, dtype, sampling_config)
