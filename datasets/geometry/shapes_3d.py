"""3-D geometry with MindFlow's names and constructors (``mindflow/geometry/geometry_3d.py``):
``Cuboid``, ``Cylinder``, ``Cone``, ``Tetrahedron``.

Every shape maps unit-cube points of a ``samplers.UnitStream`` through a measure-preserving map
(the inverse CDFs below), so quasi-random samplers (Sobol', Halton, LHS) keep their spread, and
boundary sampling picks a face with the first unit coordinate in proportion to the face's area
(``boundary_type="uniform"``; ``"unweighted"`` gives every face the same expected count, as
MindFlow offers) and reuses that coordinate, rescaled, on the face. Normals point outwards and
have unit length; ``sdf`` is exact (negative inside) for all four shapes.

Two of MindFlow's formulas are wrong and are not followed (``shapes/rotating.py``): a cone's
volume is ``pi r^2 h / 3`` (MindFlow divides by 6) and its lateral area ``pi r sqrt(r^2 + h^2)``
(MindFlow uses ``pi r h``), which matters because the lateral area sets the share of boundary
points on the cone's side. MindFlow's bounding box of a cylinder or cone also puts the height
last whatever ``h_axis`` is; ours puts it on ``h_axis``.
"""

import numbers

import numpy as np

from .base import Geometry, as_points
from .shapes_nd import HyperCube

__all__ = ["Cone", "Cuboid", "Cylinder", "Tetrahedron"]

_BOUNDARY_TYPES = ("uniform", "unweighted")


class Cuboid(HyperCube):
    """The closed box ``[coord_min, coord_max]`` in 3-D (a ``HyperCube`` with ``dim=3``).

    Args:
        name: the geometry's name.
        coord_min, coord_max: 3 numbers each (the bottom-left-back and top-right-front
            corners), ``coord_min < coord_max``.
        dtype: numpy dtype of sampled points. Default float32.
        sampling_config: a ``SamplingConfig`` or None. Grid sampling:
            ``size = [nx, ny, nz]`` for the domain; about ``size`` boundary points at face-cell
            centres.

    Example::

        cuboid = Cuboid("cuboid", (-3.0, 1, 0), (1, 2, 1), sampling_config=generate_sampling_config(
            {"domain": {"random_sampling": False, "size": [50, 50, 25]},
             "BC": {"size": 1000, "with_normal": True}}))
        cuboid.sampling("domain").shape     # (62500, 3)
    """

    def __init__(self, name, coord_min, coord_max, dtype=np.float32, sampling_config=None):
        super().__init__(name, 3, coord_min, coord_max, dtype, sampling_config)


def _check_boundary_type(kind, name, boundary_type):
    if boundary_type not in _BOUNDARY_TYPES:
        raise ValueError(
            f"{kind} {name!r}: boundary_type must be one of {', '.join(_BOUNDARY_TYPES)}, "
            f"got {boundary_type!r}"
        )
    return boundary_type


def _positive(kind, name, what, value):
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{kind} {name!r}: {what} must be a number, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{kind} {name!r}: {what} must be > 0, got {value}")
    return value


def _pick_part(u, weights):
    """Choose a part for each unit coordinate ``u`` ``[n]`` with probabilities ``weights``
    (normalised here), and rescale ``u`` within the chosen part's interval to a fresh unit
    coordinate (the inverse-CDF trick, which keeps quasi-random points spread).

    Returns:
        ``(part [n] int, s [n] float64 in [0, 1))``.
    """
    w = np.asarray(weights, dtype=np.float64)
    cum = np.cumsum(w) / np.sum(w)
    part = np.minimum(np.searchsorted(cum, u, side="right"), len(w) - 1)
    lo = np.where(part > 0, cum[np.maximum(part - 1, 0)], 0.0)
    s = np.clip((u - lo) / (cum[part] - lo), 0.0, np.nextafter(1.0, 0.0))
    return part, s


class _Revolved(Geometry):
    """A solid of revolution about an axis parallel to ``e_{h_axis}``: the cylinder and the
    cone. Local coordinates of a point ``p``: ``rho = |p[plane] - centre|`` (``plane``: the two
    other axes in increasing order), ``h = p[h_axis]``."""

    _kind = "?"

    def __init__(
        self,
        name,
        centre,
        radius,
        h_min,
        h_max,
        h_axis,
        boundary_type="uniform",
        dtype=np.float32,
        sampling_config=None,
    ):
        kind = self._kind
        if isinstance(h_axis, bool) or not isinstance(h_axis, (numbers.Integral, np.integer)):
            raise TypeError(f"{kind} {name!r}: h_axis must be 0, 1 or 2, got {h_axis!r}")
        if int(h_axis) not in (0, 1, 2):
            raise ValueError(f"{kind} {name!r}: h_axis must be 0, 1 or 2, got {h_axis}")
        self.h_axis = int(h_axis)
        self.plane_axes = [a for a in range(3) if a != self.h_axis]
        centre_arr = np.asarray(
            centre.asnumpy() if hasattr(centre, "asnumpy") else centre, dtype=np.float64
        ).reshape(-1)
        if centre_arr.shape != (2,) or not np.all(np.isfinite(centre_arr)):
            raise ValueError(
                f"{kind} {name!r}: centre must be 2 finite numbers (the coordinates of the "
                f"axis on the axes {self.plane_axes}, i.e. the two other than h_axis="
                f"{self.h_axis}), got {np.asarray(centre).tolist()}"
            )
        self.centre = centre_arr
        self.radius = _positive(kind, name, "radius", radius)
        for value, what in ((h_min, "h_min"), (h_max, "h_max")):
            if isinstance(value, bool) or not isinstance(
                value, (numbers.Real, np.floating, np.integer)
            ):
                raise TypeError(f"{kind} {name!r}: {what} must be a number, got {value!r}")
        self.h_min, self.h_max = float(h_min), float(h_max)
        if not (np.isfinite(self.h_min) and np.isfinite(self.h_max)) or self.h_min >= self.h_max:
            raise ValueError(
                f"{kind} {name!r}: h_min must be < h_max (inverted or empty height), got "
                f"h_min={h_min}, h_max={h_max}"
            )
        self.height = self.h_max - self.h_min
        self.boundary_type = _check_boundary_type(kind, name, boundary_type)
        coord_min = np.empty(3)
        coord_max = np.empty(3)
        coord_min[self.plane_axes] = self.centre - self.radius
        coord_max[self.plane_axes] = self.centre + self.radius
        coord_min[self.h_axis], coord_max[self.h_axis] = self.h_min, self.h_max
        super().__init__(name, 3, coord_min, coord_max, dtype, sampling_config)

    def _key(self):
        return (
            type(self),
            tuple(self.centre),
            self.radius,
            self.h_min,
            self.h_max,
            self.h_axis,
            self.boundary_type,
        )

    def _local(self, points, where):
        """``(rho [N], h [N], a [N, 2])``: distance to the axis, height, in-plane offset."""
        p = as_points(points, 3, f"{self._kind}.{where}")
        a = p[:, self.plane_axes] - self.centre
        return np.hypot(a[:, 0], a[:, 1]), p[:, self.h_axis], a

    def _assemble(self, rho, theta, h):
        """Points ``[n, 3]`` and the radial unit vectors ``[n, 3]`` at polar ``(rho, theta)``
        and height ``h``."""
        n = rho.shape[0]
        radial = np.zeros((n, 3))
        radial[:, self.plane_axes[0]] = np.cos(theta)
        radial[:, self.plane_axes[1]] = np.sin(theta)
        points = rho[:, None] * radial
        points[:, self.plane_axes] += self.centre
        points[:, self.h_axis] = h
        return points, radial

    def _axis_vector(self, n, sign):
        e = np.zeros((n, 3))
        e[:, self.h_axis] = sign
        return e

    def _areas(self):
        """The areas of the boundary's parts, in sampling order ``[n_parts]``."""
        raise NotImplementedError

    @property
    def boundary_measure(self):
        return float(np.sum(self._areas()))

    def _part_weights(self, areas):
        return areas if self.boundary_type == "uniform" else np.ones(len(areas))


class Cylinder(_Revolved):
    """A closed circular cylinder: the disk of ``radius`` about ``centre`` swept along the axis
    ``h_axis`` from ``h_min`` to ``h_max``.

    Interior: ``rho = radius sqrt(u0)``, ``theta = 2 pi u1``, ``h = h_min + (h_max - h_min) u2``
    (the Jacobian ``rho`` makes this uniform in volume). Boundary: the bottom cap, the side and
    the top cap (MindFlow's order) in proportion to their areas ``pi r^2``, ``2 pi r H``,
    ``pi r^2`` (``boundary_type="uniform"``) or one third each (``"unweighted"``); normals
    ``-e_h``, the radial unit vector, ``+e_h``. ``sdf``: exact, the 2-D box distance of
    ``(rho - r, |h - h_mid| - H / 2)``.

    Args:
        name: the geometry's name.
        centre: 2 numbers, the axis' coordinates on the two axes other than ``h_axis`` (in
            increasing axis order: ``(x, y)`` for ``h_axis=2``, ``(x, z)`` for ``h_axis=1``).
        radius: > 0.
        h_min, h_max: the heights of the bottom and top disks along ``h_axis``,
            ``h_min < h_max``.
        h_axis: 0, 1 or 2, the axis of the cylinder.
        boundary_type: ``"uniform"`` or ``"unweighted"``.
        dtype: numpy dtype of sampled points. Default float32.
        sampling_config: a ``SamplingConfig`` or None (random sampling only, as in MindFlow).

    Example::

        cylinder = Cylinder("cylinder", [0.0, 0.5], 1.5, -7.0, 7.0, 2)
        points, normals = cylinder.sample_boundary(300, sampler="sobol", seed=0)
    """

    _kind = "Cylinder"

    @property
    def measure(self):
        return np.pi * self.radius**2 * self.height

    def _areas(self):
        cap = np.pi * self.radius**2
        return np.array([cap, 2.0 * np.pi * self.radius * self.height, cap])

    def contains(self, points):
        rho, h, _ = self._local(points, "contains")
        return (rho <= self.radius) & (h >= self.h_min) & (h <= self.h_max)

    def sdf(self, points):
        """Exact: with ``q = (rho - r, |h - h_mid| - H/2)``, ``|max(q, 0)| + min(max(q), 0)``."""
        rho, h, _ = self._local(points, "sdf")
        q = np.stack([rho - self.radius, np.abs(h - 0.5 * (self.h_min + self.h_max))], axis=-1)
        q[:, 1] -= 0.5 * self.height
        return np.linalg.norm(np.maximum(q, 0.0), axis=-1) + np.minimum(q.max(axis=-1), 0.0)

    def _sample_interior(self, n, stream):
        u = stream.draw(n, 3)
        points, _ = self._assemble(
            self.radius * np.sqrt(u[:, 0]),
            2.0 * np.pi * u[:, 1],
            self.h_min + self.height * u[:, 2],
        )
        return points

    def _sample_boundary(self, n, stream):
        u = stream.draw(n, 2)
        part, s = _pick_part(u[:, 0], self._part_weights(self._areas()))
        cap = part != 1
        rho = np.where(cap, self.radius * np.sqrt(s), self.radius)
        theta = 2.0 * np.pi * np.where(cap, u[:, 1], s)
        h = np.select(
            [part == 0, part == 2],
            [np.full(n, self.h_min), np.full(n, self.h_max)],
            self.h_min + self.height * u[:, 1],
        )
        points, radial = self._assemble(rho, theta, h)
        normals = np.where(
            cap[:, None],
            self._axis_vector(n, 1.0) * np.where(part == 0, -1.0, 1.0)[:, None],
            radial,
        )
        return points, normals


class Cone(_Revolved):
    """A closed right circular cone: base disk of ``radius`` about ``centre`` at height
    ``h_min``, apex on the axis at ``h_max``; the radius at height ``h`` is
    ``r (h_max - h) / (h_max - h_min)``.

    Interior: the height fraction ``s = 1 - (1 - u2)^(1/3)`` (the cross-section's area goes as
    ``(1 - s)^2``), ``rho = r (1 - s) sqrt(u0)``, ``theta = 2 pi u1``. Boundary: the side and the
    base (MindFlow's order) in proportion to their areas ``pi r L`` (``L = sqrt(r^2 + H^2)``, the
    slant height) and ``pi r^2``, or half each (``"unweighted"``); on the side
    ``s = 1 - sqrt(1 - u)`` (the circumference goes as ``1 - s``). Normals: on the side
    ``(H e_rho + r e_h) / L`` (the gradient of ``rho + r (h - h_min) / H``), on the base ``-e_h``.
    ``sdf``: exact, the 2-D distance in the meridian half-plane ``(rho, h)`` to the profile (the
    base segment and the slanted segment).

    Args:
        name: the geometry's name.
        centre: 2 numbers, the axis' coordinates on the two axes other than ``h_axis``.
        radius: radius of the base, > 0.
        h_min: height of the base; h_max: height of the apex (``h_min < h_max``).
        h_axis: 0, 1 or 2.
        boundary_type: ``"uniform"`` or ``"unweighted"``.
        dtype: numpy dtype of sampled points. Default float32.
        sampling_config: a ``SamplingConfig`` or None (random sampling only, as in MindFlow).
    """

    _kind = "Cone"

    @property
    def slant(self):
        """The slant height ``L = sqrt(r^2 + H^2)``."""
        return float(np.hypot(self.radius, self.height))

    @property
    def measure(self):
        return np.pi * self.radius**2 * self.height / 3.0

    def _areas(self):
        return np.array([np.pi * self.radius * self.slant, np.pi * self.radius**2])

    def _radius_at(self, h):
        return self.radius * (self.h_max - h) / self.height

    def contains(self, points):
        rho, h, _ = self._local(points, "contains")
        return (h >= self.h_min) & (h <= self.h_max) & (rho <= self._radius_at(h))

    def sdf(self, points):
        """Exact: in the meridian half-plane ``(rho >= 0, y = h - h_min)`` the cone is the
        triangle ``(0, 0), (r, 0), (0, H)`` mirrored about ``rho = 0``; the distance to the
        solid's surface is the distance to the base segment ``[0, r] x {0}`` or to the slanted
        segment ``(r, 0)-(0, H)`` (the mirrored one is never nearer for ``rho >= 0``), negative
        inside."""
        rho, h, _ = self._local(points, "sdf")
        y = h - self.h_min
        r, H = self.radius, self.height
        # base segment
        d_base = np.hypot(rho - np.clip(rho, 0.0, r), y)
        # slanted segment from A = (r, 0) to B = (0, H)
        ex, ey = -r, H
        t = np.clip(((rho - r) * ex + y * ey) / (ex * ex + ey * ey), 0.0, 1.0)
        d_side = np.hypot(rho - (r + t * ex), y - t * ey)
        dist = np.minimum(d_base, d_side)
        inside = (y >= 0.0) & (rho * H + r * y <= r * H)
        return np.where(inside, -dist, dist)

    def _sample_interior(self, n, stream):
        u = stream.draw(n, 3)
        s = 1.0 - np.cbrt(1.0 - u[:, 2])
        rho = self.radius * (1.0 - s) * np.sqrt(u[:, 0])
        points, _ = self._assemble(rho, 2.0 * np.pi * u[:, 1], self.h_min + self.height * s)
        return points

    def _sample_boundary(self, n, stream):
        u = stream.draw(n, 2)
        part, s = _pick_part(u[:, 0], self._part_weights(self._areas()))
        side = part == 0
        frac = np.where(side, 1.0 - np.sqrt(1.0 - s), 0.0)  # height fraction on the side
        rho = np.where(side, self.radius * (1.0 - frac), self.radius * np.sqrt(s))
        points, radial = self._assemble(rho, 2.0 * np.pi * u[:, 1], self.h_min + self.height * frac)
        side_normal = (self.height * radial + self._axis_vector(n, self.radius)) / self.slant
        normals = np.where(side[:, None], side_normal, self._axis_vector(n, -1.0))
        return points, normals


class Tetrahedron(Geometry):
    """A closed tetrahedron given by its 4 vertices.

    Interior: barycentric weights ``(a, b, c)`` on the edges from vertex 0, with ``a + b + c =
    t = u0^(1/3)`` (the slice ``a + b + c = t`` has area ``~ t^2``) and ``(a, b, c) / t`` uniform
    on the triangle ``{p + q + r = 1}`` by ``p = 1 - sqrt(1 - u1)``, ``q = (1 - p) u2``.
    Boundary: the 4 faces (face ``i`` opposite vertex ``i``) in proportion to their areas
    (``"uniform"``) or a quarter each (``"unweighted"``), the same triangle map on the face;
    normals point away from the opposite vertex. ``sdf``: exact; inside, the largest signed
    distance to the face planes (a convex polytope's distance to its boundary); outside, the
    distance to the nearest face triangle.

    Args:
        name: the geometry's name.
        vertices: ``[4, 3]`` array-like, not coplanar.
        boundary_type: ``"uniform"`` or ``"unweighted"``.
        dtype: numpy dtype of sampled points. Default float32.
        sampling_config: a ``SamplingConfig`` or None (random sampling only, as in MindFlow).

    Raises:
        ValueError: vertices not of shape ``[4, 3]``, not finite, or coplanar (no volume).
    """

    def __init__(
        self, name, vertices, boundary_type="uniform", dtype=np.float32, sampling_config=None
    ):
        raw = vertices.asnumpy() if hasattr(vertices, "asnumpy") else vertices
        v = np.asarray(raw, dtype=np.float64)
        if v.shape != (4, 3):
            raise ValueError(
                f"Tetrahedron {name!r}: vertices must have shape [4, 3], got {v.shape}"
            )
        if not np.all(np.isfinite(v)):
            raise ValueError(f"Tetrahedron {name!r}: vertices must be finite, got {v.tolist()}")
        self.vertices = v
        edges = v[1:] - v[0]  # [3, 3]
        self.vol = abs(float(np.linalg.det(edges))) / 6.0
        scale = float(np.max(np.ptp(v, axis=0)))
        if self.vol <= 1e-12 * scale**3:
            raise ValueError(
                f"Tetrahedron {name!r}: the vertices are coplanar (volume {self.vol:g}); "
                f"expected 4 points spanning 3-D space, got {v.tolist()}"
            )
        self.boundary_type = _check_boundary_type("Tetrahedron", name, boundary_type)
        # face i is opposite vertex i: [4, 3 vertices, 3 coords]
        self._faces = np.stack([v[[j for j in range(4) if j != i]] for i in range(4)])
        cross = np.cross(
            self._faces[:, 1] - self._faces[:, 0], self._faces[:, 2] - self._faces[:, 0]
        )  # [4, 3]
        self.face_areas = 0.5 * np.linalg.norm(cross, axis=-1)  # [4]
        normals = cross / (2.0 * self.face_areas[:, None])
        towards_opposite = np.einsum("fk,fk->f", normals, v - self._faces[:, 0])
        self.face_normals = np.where(towards_opposite[:, None] > 0, -normals, normals)  # [4, 3]
        self._offsets = np.einsum("fk,fk->f", self.face_normals, self._faces[:, 0])  # [4]
        self._tol = 1e-12 * scale
        super().__init__(name, 3, v.min(axis=0), v.max(axis=0), dtype, sampling_config)

    def _key(self):
        return (Tetrahedron, tuple(self.vertices.reshape(-1)), self.boundary_type)

    @property
    def measure(self):
        return self.vol

    @property
    def boundary_measure(self):
        return float(np.sum(self.face_areas))

    def _plane_distances(self, p):
        # einsum, not ``@``: BLAS handles a [N, 3] x [3, 4] product erratically (up to 10x
        # slower than this loop, depending on its threads)
        return np.einsum("nd,fd->nf", p, self.face_normals) - self._offsets  # [N, 4]

    def contains(self, points):
        p = as_points(points, 3, "Tetrahedron.contains")
        return np.all(self._plane_distances(p) <= self._tol, axis=-1)

    def sdf(self, points):
        p = as_points(points, 3, "Tetrahedron.sdf")
        planes = self._plane_distances(p)  # [N, 4]
        inside_value = planes.max(axis=-1)
        outside = inside_value > 0.0
        result = inside_value.copy()
        if np.any(outside):
            q = p[outside]
            result[outside] = np.min(
                [_point_triangle_distance(q, *self._faces[f]) for f in range(4)], axis=0
            )
        return result

    def _sample_interior(self, n, stream):
        u = stream.draw(n, 3)
        t = np.cbrt(u[:, 0])
        p = 1.0 - np.sqrt(1.0 - u[:, 1])
        q = (1.0 - p) * u[:, 2]
        weights = t[:, None] * np.stack([p, q, 1.0 - p - q], axis=-1)  # [n, 3]
        edges = self.vertices[1:] - self.vertices[0]  # [3, 3]
        return self.vertices[0] + np.einsum("nk,kd->nd", weights, edges)

    def _sample_boundary(self, n, stream):
        u = stream.draw(n, 2)
        weights = self.face_areas if self.boundary_type == "uniform" else np.ones(4)
        face, s = _pick_part(u[:, 0], weights)
        p = 1.0 - np.sqrt(1.0 - s)
        q = (1.0 - p) * u[:, 1]
        corners = self._faces[face]  # [n, 3, 3]
        points = (
            p[:, None] * corners[:, 0]
            + q[:, None] * corners[:, 1]
            + (1.0 - p - q)[:, None] * corners[:, 2]
        )
        return points, self.face_normals[face]


def _point_triangle_distance(p, a, b, c):
    """Distance ``[N]`` from points ``p [N, 3]`` to the triangle ``abc`` (each ``[3]``): the
    distance to its plane where the projection falls inside the triangle (barycentric
    coordinates all >= 0), else the distance to the nearest edge."""
    e0, e1 = b - a, c - a
    normal = np.cross(e0, e1)
    normal = normal / np.linalg.norm(normal)
    rel = p - a
    height = rel @ normal  # [N]
    proj = rel - height[:, None] * normal
    d00, d01, d11 = e0 @ e0, e0 @ e1, e1 @ e1
    d20, d21 = proj @ e0, proj @ e1
    denom = d00 * d11 - d01 * d01
    beta = (d11 * d20 - d01 * d21) / denom
    gamma = (d00 * d21 - d01 * d20) / denom
    inside = (beta >= 0.0) & (gamma >= 0.0) & (beta + gamma <= 1.0)
    edges = np.min([_point_segment_distance(p, s, t) for s, t in ((a, b), (b, c), (c, a))], axis=0)
    return np.where(inside, np.abs(height), edges)


def _point_segment_distance(p, a, b):
    """Distance ``[N]`` from points ``p [N, 3]`` to the segment ``ab``."""
    e = b - a
    t = np.clip((p - a) @ e / (e @ e), 0.0, 1.0)
    return np.linalg.norm(p - a - t[:, None] * e, axis=-1)
