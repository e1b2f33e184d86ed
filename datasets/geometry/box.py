"""``Box``: the axis-aligned box in any dimension, written once.

``Interval`` (1-D) and ``Rectangle`` (2-D) are boxes; MindFlow derives them, ``Cuboid`` and
``HyperCube`` from one class too (``mindflow/geometry/geometry_nd.py``), and ours may do the same
by subclassing ``Box`` with a fixed ``dim``.
"""

import numpy as np

from .base import Geometry, as_points


class Box(Geometry):
    """The closed box ``[coord_min, coord_max]`` in ``dim`` dimensions.

    Args:
        name: the geometry's name.
        dim: number of dimensions (int >= 1).
        coord_min, coord_max: the corners, ``dim`` numbers each, ``coord_min < coord_max``.
        dtype: numpy dtype of sampled points. Default float32 (MindFlow's).
        sampling_config: a ``SamplingConfig`` or None.

    Raises:
        ValueError: inverted or empty bounds (``coord_min >= coord_max`` in some axis).
    """

    def __init__(self, name, dim, coord_min, coord_max, dtype=np.float32, sampling_config=None):
        super().__init__(name, dim, coord_min, coord_max, dtype, sampling_config)
        if np.any(self.coord_min >= self.coord_max):
            raise ValueError(
                f"{self.geom_type} {name!r}: coord_min must be < coord_max in every axis "
                f"(inverted or empty bounds), got coord_min={self.coord_min.tolist()}, "
                f"coord_max={self.coord_max.tolist()}"
            )
        self.length = self.coord_max - self.coord_min  # [dim]
        self.vol = float(np.prod(self.length))
        # MindFlow's attribute: the boundary's measure (2 end points in 1-D)
        self.area = 2.0 if dim == 1 else float(2.0 * np.sum(self.vol / self.length))

    def __repr__(self):
        return (
            f"{self.geom_type}({self.name!r}, coord_min={self.coord_min.tolist()}, "
            f"coord_max={self.coord_max.tolist()})"
        )

    def _key(self):
        return (Box, self.dim, tuple(self.coord_min), tuple(self.coord_max))

    @property
    def measure(self):
        return self.vol

    @property
    def boundary_measure(self):
        return self.area

    def contains(self, points):
        """Inside the closed box, up to 1e-12 of its largest side."""
        p = as_points(points, self.dim, f"{self.geom_type}.contains")
        tol = 1e-12 * float(np.max(self.length))
        return np.all((p >= self.coord_min - tol) & (p <= self.coord_max + tol), axis=-1)

    def _interior(self, points):
        tol = 1e-12 * float(np.max(self.length))
        return np.all((points > self.coord_min + tol) & (points < self.coord_max - tol), axis=-1)

    def sdf(self, points):
        """Exact signed distance of a box: with ``q = |p - c| - h`` (``c`` the centre, ``h`` the
        half widths), ``|max(q, 0)| + min(max_i q_i, 0)`` (the standard box SDF)."""
        p = as_points(points, self.dim, f"{self.geom_type}.sdf")
        centre = 0.5 * (self.coord_min + self.coord_max)
        q = np.abs(p - centre) - 0.5 * self.length  # [N, dim]
        outside = np.linalg.norm(np.maximum(q, 0.0), axis=-1)
        inside = np.minimum(np.max(q, axis=-1), 0.0)
        return outside + inside

    def _sample_interior(self, n, stream):
        return self.coord_min + stream.draw(n, self.dim) * self.length

    def _face_areas(self):
        # faces in the order (axis 0 low, axis 0 high, axis 1 low, ...); in 1-D each "face" is a
        # point and counts 1
        per_axis = np.ones(1) if self.dim == 1 else self.vol / self.length
        return np.repeat(per_axis, 2)

    def _face_points(self, face, free):
        """Points on ``face`` (index into ``_face_areas``) from ``free``: ``(m, dim - 1)`` unit
        coordinates along the face's other axes; returns ``(points, normals)``, ``(m, dim)``."""
        axis, high = divmod(int(face), 2)
        m = free.shape[0]
        others = [a for a in range(self.dim) if a != axis]
        points = np.empty((m, self.dim))
        points[:, others] = self.coord_min[others] + free * self.length[others]
        points[:, axis] = self.coord_max[axis] if high else self.coord_min[axis]
        normals = np.zeros((m, self.dim))
        normals[:, axis] = 1.0 if high else -1.0
        return points, normals

    def _sample_boundary(self, n, stream):
        """A face is chosen with probability proportional to its area by the first unit
        coordinate; the other ``dim - 1`` coordinates place the point on it."""
        u = stream.draw(n, self.dim)
        areas = self._face_areas()
        cum = np.cumsum(areas) / np.sum(areas)
        face = np.minimum(np.searchsorted(cum, u[:, 0], side="right"), len(areas) - 1)
        points = np.empty((n, self.dim))
        normals = np.empty((n, self.dim))
        for f in np.unique(face):
            sel = face == f
            points[sel], normals[sel] = self._face_points(f, u[sel, 1:])
        return points, normals

    def _grid_interior(self, size):
        """MindFlow's mesh: ``size[i]`` points per axis, end points included, ``np.meshgrid``'s
        default ordering (axis 0 fastest in 2-D)."""
        size = [size] if isinstance(size, int) else list(size)
        if len(size) != self.dim:
            raise ValueError(
                f"{self.geom_type} {self.name!r}: grid size must give {self.dim} point counts "
                f"(one per axis), got {size}"
            )
        axes = [np.linspace(lo, hi, k) for lo, hi, k in zip(self.coord_min, self.coord_max, size)]
        mesh = np.meshgrid(*axes)
        return np.stack([m.reshape(-1) for m in mesh], axis=-1)

    def _grid_boundary(self, size):
        """About ``size`` points: each face gets a share proportional to its area, laid on a
        regular grid of cell centres (no point on an edge or corner, so every normal is that of
        its face). In 1-D: the two end points, alternately, ``size`` in all."""
        areas = self._face_areas()
        if self.dim == 1:
            face = np.arange(size) % 2
            pts, nrm = zip(*(self._face_points(f, np.empty((1, 0))) for f in face))
            return np.concatenate(pts), np.concatenate(nrm)
        counts = size * areas / np.sum(areas)
        all_pts, all_nrm = [], []
        for f, count in enumerate(counts):
            if count < 0.5:
                continue
            axis = f // 2
            lengths = np.delete(self.length, axis)
            spacing = (areas[f] / count) ** (1.0 / (self.dim - 1))
            per_axis = [max(1, round(length / spacing)) for length in lengths]
            centres = [(np.arange(k) + 0.5) / k for k in per_axis]
            grid = np.stack([g.reshape(-1) for g in np.meshgrid(*centres)], axis=-1)
            pts, nrm = self._face_points(f, grid)
            all_pts.append(pts)
            all_nrm.append(nrm)
        return np.concatenate(all_pts), np.concatenate(all_nrm)
