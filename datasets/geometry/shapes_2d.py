"""2-D geometries with MindFlow's names and arguments (``mindflow/geometry/geometry_2d.py``):
``Rectangle``, ``Disk``, ``Triangle``, ``Pentagon``, ``Polygon``.

Every shape gives an exact signed distance, closed-set membership, uniform interior and boundary
sampling for all four samplers (each a measure-preserving map of unit-square points, so
quasi-random points stay well spread), and outward unit normals.
"""

import numbers

import numpy as np

from .base import Geometry, as_points
from .box import Box

_BOUNDARY_TYPES = ("uniform", "unweighted")


class Rectangle(Box):
    """The axis-aligned rectangle ``[coord_min, coord_max]``.

    Args:
        name: the geometry's name.
        coord_min, coord_max: the lower-left and upper-right corners, 2 numbers each.
        dtype: numpy dtype of sampled points. Default float32.
        sampling_config: a ``SamplingConfig`` or None. Grid sampling (``random_sampling=False``)
            lays ``size = [nx, ny]`` points on the domain (corners included) and about ``size``
            points on the boundary at cell centres of each edge (no corner, so every normal is
            an edge's).

    Raises:
        ValueError: inverted bounds (``coord_min >= coord_max`` in x or y).
    """

    def __init__(self, name, coord_min, coord_max, dtype=np.float32, sampling_config=None):
        super().__init__(name, 2, coord_min, coord_max, dtype, sampling_config)


class Disk(Geometry):
    """The closed disk ``|x - center| <= radius``.

    Interior sampling maps unit-square points ``(u, v)`` to ``r = radius sqrt(u)``,
    ``theta = 2 pi v`` (area-preserving: the density ``r dr dtheta`` is uniform); boundary sampling
    maps ``u`` to ``theta = 2 pi u``. Grid sampling: ``size = [n_r, n_theta]`` polar points at the
    radial cell centres ``r_i = radius (i + 1/2) / n_r`` (MindFlow lays ``r`` from 0, which puts
    ``n_theta`` copies of the centre in the set) and ``theta_j = 2 pi j / n_theta``; ``size``
    equally spaced boundary points.

    Args:
        name: the geometry's name.
        center: 2 numbers.
        radius: a number > 0.
        dtype: numpy dtype of sampled points. Default float32.
        sampling_config: a ``SamplingConfig`` or None.
    """

    def __init__(self, name, center, radius, dtype=np.float32, sampling_config=None):
        if isinstance(radius, bool) or not isinstance(radius, (numbers.Real, np.floating)):
            raise TypeError(f"Disk {name!r}: radius must be a number, got {radius!r}")
        if not np.isfinite(radius) or radius <= 0:
            raise ValueError(f"Disk {name!r}: radius must be > 0, got {radius}")
        self.radius = float(radius)
        centre = np.asarray(center, dtype=np.float64).reshape(-1)
        if centre.shape != (2,):
            raise ValueError(f"Disk {name!r}: center must be 2 numbers, got {center!r}")
        self.center = centre
        super().__init__(name, 2, centre - radius, centre + radius, dtype, sampling_config)

    def __repr__(self):
        return f"Disk({self.name!r}, center={self.center.tolist()}, radius={self.radius!r})"

    def _key(self):
        return (Disk, tuple(self.center), self.radius)

    @property
    def measure(self):
        return np.pi * self.radius**2

    @property
    def boundary_measure(self):
        return 2.0 * np.pi * self.radius

    def contains(self, points):
        """``|x - center| <= radius`` up to 1e-12 of the radius (a boundary sample, rounded,
        still counts as on the boundary)."""
        p = as_points(points, 2, "Disk.contains")
        r = np.hypot(p[:, 0] - self.center[0], p[:, 1] - self.center[1])
        return r <= self.radius * (1.0 + 1e-12)

    def _interior(self, points):
        r = np.hypot(points[:, 0] - self.center[0], points[:, 1] - self.center[1])
        return r < self.radius * (1.0 - 1e-12)

    def sdf(self, points):
        """Exact: ``|x - center| - radius``."""
        p = as_points(points, 2, "Disk.sdf")
        return np.hypot(p[:, 0] - self.center[0], p[:, 1] - self.center[1]) - self.radius

    def _sample_interior(self, n, stream):
        u = stream.draw(n, 2)
        r = self.radius * np.sqrt(u[:, 0])
        theta = 2.0 * np.pi * u[:, 1]
        return self.center + np.stack([r * np.cos(theta), r * np.sin(theta)], axis=-1)

    def _circle(self, theta):
        normals = np.stack([np.cos(theta), np.sin(theta)], axis=-1)
        return self.center + self.radius * normals, normals

    def _sample_boundary(self, n, stream):
        return self._circle(2.0 * np.pi * stream.draw(n, 1)[:, 0])

    def _grid_interior(self, size):
        size = list(size) if not isinstance(size, int) else [size]
        if len(size) != 2:
            raise ValueError(f"Disk {self.name!r}: grid size must be [n_r, n_theta], got {size}")
        r = self.radius * (np.arange(size[0]) + 0.5) / size[0]
        theta = 2.0 * np.pi * np.arange(size[1]) / size[1]
        rr, tt = np.meshgrid(r, theta)
        return self.center + np.stack(
            [(rr * np.cos(tt)).reshape(-1), (rr * np.sin(tt)).reshape(-1)], axis=-1
        )

    def _grid_boundary(self, size):
        return self._circle(2.0 * np.pi * np.arange(size) / size)


def _cross(a, b):
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def _segments_intersect(p1, p2, q1, q2, scale):
    """Whether the closed segments ``p1p2`` and ``q1q2`` meet (arrays of shape ``(2,)``)."""
    eps = 1e-12 * scale * scale
    d1 = _cross(q2 - q1, p1 - q1)
    d2 = _cross(q2 - q1, p2 - q1)
    d3 = _cross(p2 - p1, q1 - p1)
    d4 = _cross(p2 - p1, q2 - p1)
    if ((d1 > eps and d2 < -eps) or (d1 < -eps and d2 > eps)) and (
        (d3 > eps and d4 < -eps) or (d3 < -eps and d4 > eps)
    ):
        return True

    def on_segment(a, b, c, d):  # c on segment ab, given cross(b - a, c - a) = d ~ 0
        return abs(d) <= eps and (
            min(a[0], b[0]) - 1e-12 * scale <= c[0] <= max(a[0], b[0]) + 1e-12 * scale
            and min(a[1], b[1]) - 1e-12 * scale <= c[1] <= max(a[1], b[1]) + 1e-12 * scale
        )

    return (
        on_segment(q1, q2, p1, d1)
        or on_segment(q1, q2, p2, d2)
        or on_segment(p1, p2, q1, d3)
        or on_segment(p1, p2, q2, d4)
    )


def _ear_clip(vertices):
    """Triangulate a simple counter-clockwise polygon by ear clipping (Meisters 1975).

    Args:
        vertices: float64 array ``(V, 2)``, counter-clockwise, simple.

    Returns:
        int array ``(V - 2, 3)`` of vertex indices, each triangle counter-clockwise.
    """
    idx = list(range(len(vertices)))
    triangles = []
    scale = float(np.max(np.ptp(vertices, axis=0)))
    tol = 1e-14 * scale * scale
    while len(idx) > 3:
        for k in range(len(idx)):
            i, j, m = idx[k - 1], idx[k], idx[(k + 1) % len(idx)]
            a, b, c = vertices[i], vertices[j], vertices[m]
            if _cross(b - a, c - b) <= tol:  # reflex or flat corner: not an ear
                continue
            others = np.array([v for v in idx if v not in (i, j, m)])
            if len(others):
                q = vertices[others]
                inside = (
                    (_cross(b - a, q - a) >= -tol)
                    & (_cross(c - b, q - b) >= -tol)
                    & (_cross(a - c, q - c) >= -tol)
                )
                if np.any(inside):
                    continue
            triangles.append((i, j, m))
            del idx[k]
            break
        else:  # only reached with collinear remainders; a simple polygon always has an ear
            raise ValueError("Polygon: ear clipping found no ear (degenerate vertices?)")
    triangles.append(tuple(idx))
    return np.array(triangles, dtype=np.int64)


class Polygon(Geometry):
    """A simple polygon (no self-intersection), given by its vertices in order.

    The vertices may run either way round (MindFlow asks for anti-clockwise; a clockwise list is
    reversed). Interior sampling: ear-clipping triangulation, then one unit-square point per
    sample: ``u`` picks a triangle with probability proportional to its area and is rescaled to
    ``[0, 1)`` inside that choice, and ``(u', v)`` maps into the triangle by
    ``(1 - sqrt(u')) A + sqrt(u') (1 - v) B + sqrt(u') v C`` (uniform; Osada et al. 2002, eq. 1).
    Boundary sampling: ``u`` is the arc length along the perimeter (``boundary_type="uniform"``)
    or picks an edge uniformly and the position on it (``"unweighted"``: equal numbers per edge,
    as in MindFlow). Normals are the edges' outward normals.

    Args:
        name: the geometry's name.
        vertices: array-like ``(V, 2)``, V >= 3.
        boundary_type: ``"uniform"`` or ``"unweighted"``.
        dtype: numpy dtype of sampled points. Default float32.
        sampling_config: a ``SamplingConfig`` or None (random sampling only, as in MindFlow).

    Raises:
        ValueError: fewer than 3 vertices, repeated consecutive vertices, zero area, or a
            non-simple polygon (two edges that cross or touch), naming the edges.
    """

    def __init__(
        self, name, vertices, boundary_type="uniform", dtype=np.float32, sampling_config=None
    ):
        kind = type(self).__name__
        if hasattr(vertices, "asnumpy"):
            vertices = vertices.asnumpy()
        try:
            v = np.asarray(vertices, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                f"{kind} {name!r}: vertices must be numbers, got {vertices!r}"
            ) from None
        if v.ndim != 2 or v.shape[1] != 2 or v.shape[0] < 3:
            raise ValueError(
                f"{kind} {name!r}: vertices must have shape (V, 2) with V >= 3, got {v.shape}"
            )
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{kind} {name!r}: vertices must be finite, got {v.tolist()}")
        if boundary_type not in _BOUNDARY_TYPES:
            raise ValueError(
                f"{kind} {name!r}: boundary_type must be one of {_BOUNDARY_TYPES}, "
                f"got {boundary_type!r}"
            )
        self.boundary_type = boundary_type
        self.geom_type = kind
        self.name = name
        signed_area = 0.5 * np.sum(_cross(v, np.roll(v, -1, axis=0)))  # shoelace
        scale = float(np.max(np.ptp(v, axis=0)))
        edge_len = np.linalg.norm(np.roll(v, -1, axis=0) - v, axis=-1)
        if scale == 0 or np.any(edge_len <= 1e-12 * scale):
            k = int(np.argmin(edge_len))
            raise ValueError(
                f"{kind} {name!r}: vertices {k} and {(k + 1) % len(v)} coincide "
                f"({v[k].tolist()}); expected distinct consecutive vertices"
            )
        self._check_simple(v, scale)
        if abs(signed_area) <= 1e-12 * scale * scale:
            raise ValueError(f"{kind} {name!r}: the vertices enclose no area: {v.tolist()}")
        if signed_area < 0:
            v = v[::-1].copy()
        self.vertices = v  # [V, 2], counter-clockwise
        super().__init__(name, 2, v.min(axis=0), v.max(axis=0), dtype, sampling_config)
        self._start = v  # [E, 2]
        self._end = np.roll(v, -1, axis=0)  # [E, 2]
        self._edge = np.roll(v, -1, axis=0) - v  # [E, 2]
        self._edge_len = np.linalg.norm(self._edge, axis=-1)  # [E]
        # outward normal of a counter-clockwise edge (dx, dy) is (dy, -dx) / |e|
        self._normal = (
            np.stack([self._edge[:, 1], -self._edge[:, 0]], axis=-1) / self._edge_len[:, None]
        )
        self.area = abs(float(signed_area))
        self.perimeter = float(np.sum(self._edge_len))
        self._triangles = _ear_clip(v)  # [V - 2, 3]
        a, b, c = (v[self._triangles[:, k]] for k in range(3))
        tri_area = 0.5 * _cross(b - a, c - a)
        self._tri_cum = np.cumsum(tri_area) / np.sum(tri_area)

    def _check_simple(self, v, scale):
        count = len(v)
        for i in range(count):
            p1, p2 = v[i], v[(i + 1) % count]
            for j in range(i + 1, count):
                q1, q2 = v[j], v[(j + 1) % count]
                adjacent = j == i + 1 or (i == 0 and j == count - 1)
                if adjacent:
                    # adjacent edges share a vertex; they must not fold back onto each other
                    shared = p2 if j == i + 1 else p1
                    a = (p1 if j == i + 1 else p2) - shared
                    b = (q2 if j == i + 1 else q1) - shared
                    if abs(_cross(a, b)) <= 1e-12 * scale * scale and np.dot(a, b) > 0:
                        raise ValueError(
                            f"{self.geom_type} {self.name!r} is not simple: edges {i} and {j} "
                            "overlap; expected a simple polygon (no self-intersection)"
                        )
                    continue
                if _segments_intersect(p1, p2, q1, q2, scale):
                    raise ValueError(
                        f"{self.geom_type} {self.name!r} is not simple: edge {i} "
                        f"{p1.tolist()}-{p2.tolist()} meets edge {j} {q1.tolist()}-{q2.tolist()}; "
                        "expected a simple polygon (no self-intersection)"
                    )

    def __repr__(self):
        return f"{self.geom_type}({self.name!r}, vertices={self.vertices.tolist()})"

    def _key(self):
        return (Polygon, self.vertices.tobytes())

    @property
    def measure(self):
        return self.area

    @property
    def boundary_measure(self):
        return self.perimeter

    def _chunked(self, fn, p):
        """``fn`` over rows of ``p`` in chunks of about 4e6 point-edge pairs (bounded memory)."""
        chunk = max(1, 4_000_000 // len(self._edge_len))
        if len(p) <= chunk:
            return fn(p)
        return np.concatenate([fn(p[i : i + chunk]) for i in range(0, len(p), chunk)])

    def _distance(self, p):
        """Distance ``(N,)`` from each point to the nearest edge (projection clamped to it)."""

        def chunk(q):
            rel = q[:, None, :] - self._start[None, :, :]  # [N, E, 2]
            t = np.clip(
                np.einsum("nek,ek->ne", rel, self._edge) / self._edge_len**2, 0.0, 1.0
            )  # [N, E]
            diff = rel - t[..., None] * self._edge[None, :, :]  # [N, E, 2]
            return np.min(np.hypot(diff[..., 0], diff[..., 1]), axis=-1)  # [N]

        return self._chunked(chunk, p)

    def _odd_crossings(self, p):
        """Even-odd rule ``(N,)``: a ray from each point towards +x crosses an odd number of
        edges (points exactly on the boundary may go either way)."""
        y0 = self._start[:, 1]
        y1 = self._end[:, 1]  # the next vertex itself: y0 + dy may round to a different value

        def chunk(q):
            straddle = (y0[None, :] > q[:, 1:2]) != (y1[None, :] > q[:, 1:2])  # [N, E]
            # the crossing lies right of q iff cross(edge, q - start) has the sign of dy (no
            # division: a nearly horizontal edge would overflow the crossing's x)
            side = self._edge[None, :, 0] * (q[:, 1:2] - y0[None, :]) - self._edge[None, :, 1] * (
                q[:, 0:1] - self._start[None, :, 0]
            )  # [N, E]
            right = (side > 0) == (self._edge[None, :, 1] > 0)
            return np.sum(straddle & right, axis=-1) % 2 == 1

        return self._chunked(chunk, p)

    def _on_tol(self):
        return 1e-12 * float(np.max(self.coord_max - self.coord_min))

    def sdf(self, points):
        """Exact: the distance to the nearest edge, negative where the even-odd rule says
        inside."""
        p = as_points(points, 2, f"{self.geom_type}.sdf")
        return np.where(self._odd_crossings(p), -1.0, 1.0) * self._distance(p)

    def contains(self, points):
        """Inside by the even-odd rule, or within 1e-12 of the size from an edge. The distance
        is computed only for the points that the rule puts outside and that lie near the
        bounding box (the cheap test decides the rest)."""
        p = as_points(points, 2, f"{self.geom_type}.contains")
        inside = self._odd_crossings(p)
        tol = self._on_tol()
        check = ~inside & np.all((p >= self.coord_min - tol) & (p <= self.coord_max + tol), axis=1)
        if np.any(check):
            inside[check] = self._distance(p[check]) <= tol
        return inside

    def _interior(self, points):
        """Inside by the even-odd rule and farther than 1e-12 of the size from every edge."""
        inside = self._odd_crossings(points)
        if np.any(inside):
            inside[inside] = self._distance(points[inside]) > self._on_tol()
        return inside

    def _sample_interior(self, n, stream):
        u = stream.draw(n, 2)
        tri = np.minimum(
            np.searchsorted(self._tri_cum, u[:, 0], side="right"), len(self._tri_cum) - 1
        )
        lo = np.where(tri > 0, self._tri_cum[np.maximum(tri - 1, 0)], 0.0)
        s = np.clip((u[:, 0] - lo) / (self._tri_cum[tri] - lo), 0.0, 1.0)  # rescaled choice
        root = np.sqrt(s)[:, None]
        v = u[:, 1:2]
        a, b, c = (self.vertices[self._triangles[tri, k]] for k in range(3))
        return (1.0 - root) * a + root * (1.0 - v) * b + root * v * c

    def _sample_boundary(self, n, stream):
        u = stream.draw(n, 1)[:, 0]
        count = len(self._edge_len)
        if self.boundary_type == "uniform":
            s = u * self.perimeter
            cum = np.cumsum(self._edge_len)
            edge = np.minimum(np.searchsorted(cum, s, side="right"), count - 1)
            t = np.clip((s - (cum[edge] - self._edge_len[edge])) / self._edge_len[edge], 0.0, 1.0)
        else:
            scaled = u * count
            edge = np.minimum(scaled.astype(np.int64), count - 1)
            t = np.clip(scaled - edge, 0.0, 1.0)
        points = self._start[edge] + t[:, None] * self._edge[edge]
        return points, self._normal[edge].copy()


class _FixedPolygon(Polygon):
    """A ``Polygon`` of exactly ``_n_vertices`` vertices."""

    _n_vertices = 0

    def __init__(
        self, name, vertices, boundary_type="uniform", dtype=np.float32, sampling_config=None
    ):
        shape = (self._n_vertices, 2)
        if np.shape(vertices) != shape:
            raise ValueError(
                f"{type(self).__name__} {name!r}: vertices must have shape {shape}, got "
                f"{np.shape(vertices)}"
            )
        super().__init__(name, vertices, boundary_type, dtype, sampling_config)


class Triangle(_FixedPolygon):
    """A triangle (MindFlow's ``Triangle(name, vertices, boundary_type, dtype,
    sampling_config)``): a ``Polygon`` of 3 vertices, in either order."""

    _n_vertices = 3


class Pentagon(_FixedPolygon):
    """A pentagon (MindFlow's ``Pentagon``): a ``Polygon`` of 5 vertices."""

    _n_vertices = 5


__all__ = ["Disk", "Pentagon", "Polygon", "Rectangle", "Triangle"]
