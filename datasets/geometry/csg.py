"""Constructive solid geometry with MindFlow's names (``mindflow/geometry/csg.py``):
``CSGUnion`` (``a | b``), ``CSGIntersection`` (``a & b``), ``CSGDifference`` (``a - b``),
``CSGXOR`` (``a ^ b``), for geometries of any one dimension.

Signed distance: the standard min/max combination of the operands' distances ``a``, ``b``
(Ricci 1973; as in Quilez's and Hart's sphere-tracing notes):
union ``min(a, b)``, intersection ``max(a, b)``, difference ``max(a, -b)``, XOR
``max(min(a, b), -max(a, b))``. Its sign and its zero set are exact (``contains`` is
``sdf <= 0``, evaluated from the operands' closed and open memberships without distances, and
boundary points have ``sdf = 0``); its magnitude is a lower bound of the true
distance in general, exact where the nearest boundary point of the result is a nearest point of
one operand (e.g. a union outside both operands).

Interior sampling: rejection from the result's bounding box (``samplers.rejection_sample``),
exactly ``n`` points, in stream order (quasi-random samplers keep their spread).

Boundary sampling: the result's boundary is a subset of the union of its primitives' (its
"leaves'") boundaries. Each round draws candidates on every leaf's boundary, in numbers
proportional to the leaf's ``boundary_measure`` (so the density along the boundary is the same
everywhere), and keeps a candidate ``p`` with leaf normal ``m`` when the result's membership
changes across the leaf there: with ``h`` a tiny step (1e-9 of the largest leaf's or the
result's size), ``inside(p - h m) != inside(p + h m)``. The normal is ``m`` when the result lies
on the inner side and ``-m`` otherwise (a subtracted shape's boundary gets its normal flipped;
XOR flips the parts of one operand inside the other). Parts of a leaf's boundary removed by the
operations (inside the other operand of a union, outside it in an intersection...) fail the test
and are never returned. A candidate on an earlier leaf's boundary too (coinciding edges) is
dropped, so a shared piece of boundary is not sampled twice; equal leaves (the same disk used
twice) are one leaf. Limit: a sliver of the result thinner than ``h`` (two edges closer than
``h`` but not coinciding) is misjudged. Rounds repeat until ``n`` points are kept; candidates of
one round are shuffled before the last round is cut to size, so no leaf is favoured.
"""

import copy

import numpy as np

from .base import Geometry, as_points
from .samplers import draw_rounds, rejection_sample


class CSG(Geometry):
    """Base of the four operations: two operands of one dimension and a boolean rule.

    Args:
        name: the result's name.
        geom1, geom2: ``Geometry`` operands (same ``dim``); the result's dtype is ``geom1``'s.
        coord_min, coord_max: the result's bounding box.
        sampling_config: a ``SamplingConfig`` or None; random sampling only (as in MindFlow).
    """

    _op = "?"

    def __init__(self, name, geom1, geom2, coord_min, coord_max, sampling_config=None):
        _check_operands(type(self).__name__, geom1, geom2)
        # copies, as in MindFlow: setting the result's config or name leaves the operands alone
        self.geom1 = copy.deepcopy(geom1)
        self.geom2 = copy.deepcopy(geom2)
        if np.any(np.asarray(coord_min) >= np.asarray(coord_max)):
            raise ValueError(
                f"{type(self).__name__}: the bounding boxes of {geom1.name!r} "
                f"({geom1.coord_min.tolist()}..{geom1.coord_max.tolist()}) and {geom2.name!r} "
                f"({geom2.coord_min.tolist()}..{geom2.coord_max.tolist()}) do not overlap (or "
                "only touch): the result has no interior"
            )
        super().__init__(name, geom1.dim, coord_min, coord_max, geom1.dtype, None)
        if sampling_config is not None:
            self.set_sampling_config(sampling_config)

    def __repr__(self):
        return f"({self.geom1!r} {self._op} {self.geom2!r})"

    def set_sampling_config(self, sampling_config):
        """Set the config of the result and of both operands (as MindFlow does); grid sampling
        is refused for CSG shapes."""
        super().set_sampling_config(sampling_config)
        for key in ("domain", "BC"):
            part = self.sampling_config.part(key)
            if part is not None and not part.random_sampling:
                raise ValueError(
                    f"{self.geom_type} {self.name!r}: only random sampling is supported for CSG "
                    f"shapes, but the {key!r} entry has random_sampling=False"
                )
        self.geom1.set_sampling_config(self.sampling_config)
        self.geom2.set_sampling_config(self.sampling_config)

    def _combine(self, a, b):
        """The result's signed distance from the operands' ``a``, ``b`` (arrays ``(N,)``)."""
        raise NotImplementedError

    def sdf(self, points):
        """Signed distance bound (see the module docstring): exact sign and zero set.

        Args:
            points: array-like ``(N, dim)``.

        Returns:
            float64 array ``(N,)``.
        """
        p = as_points(points, self.dim, f"{self.geom_type}.sdf")
        return self._combine(self.geom1.sdf(p), self.geom2.sdf(p))

    def _member(self, p, closed):
        """Closed (``sdf <= 0``) or open (``sdf < 0``) membership from the operands'; the same
        sets as the sdf's sign without computing distances."""
        raise NotImplementedError

    def contains(self, points):
        """Whether each point lies in the closed result, i.e. ``sdf <= 0`` (evaluated from the
        operands' ``contains`` and ``_interior``, without distances).

        Args:
            points: array-like ``(N, dim)``.

        Returns:
            bool array ``(N,)``.
        """
        p = as_points(points, self.dim, f"{self.geom_type}.contains")
        return self._member(p, closed=True)

    def _interior(self, points):
        return self._member(points, closed=False)

    def _leaves(self):
        leaves, seen = [], set()
        for leaf in self.geom1._leaves() + self.geom2._leaves():
            key = leaf._key()
            if key not in seen:
                seen.add(key)
                leaves.append(leaf)
        return leaves

    def _sample_interior(self, n, stream):
        return rejection_sample(
            n,
            stream,
            self.coord_min,
            self.coord_max,
            self.contains,
            f"{self.geom_type} {self.name!r}",
        )

    def _sample_boundary(self, n, stream):
        leaves = self._leaves()
        weights = np.array([float(leaf.boundary_measure) for leaf in leaves])
        weights = weights / np.sum(weights)
        streams = stream.spawn(len(leaves))
        # the step is far above the leaves' membership tolerance (1e-12 of their size) and the
        # rounding of coordinates; the tolerance for coinciding edges is at that rounding
        scale = max(float(np.max(g.coord_max - g.coord_min)) for g in [self, *leaves])
        step = 1e-9 * scale
        on_tol = 1e-12 * scale

        def draw(batch):
            counts = _split(batch, weights)
            round_p, round_n = [], []
            for k, (leaf, count) in enumerate(zip(leaves, counts)):
                if count == 0:
                    continue
                p, m = leaf._sample_boundary(count, streams[k])
                p = np.asarray(p, dtype=np.float64).reshape(count, self.dim)
                m = np.asarray(m, dtype=np.float64).reshape(count, self.dim)
                keep = np.ones(count, dtype=bool)
                for earlier in leaves[:k]:  # coinciding boundary pieces are sampled once
                    keep &= np.abs(earlier.sdf(p)) > on_tol
                p, m = p[keep], m[keep]
                inner = self.contains(p - step * m)
                outer = self.contains(p + step * m)
                flip = outer & ~inner
                keep = inner != outer
                m = np.where(flip[:, None], -m, m)
                round_p.append(p[keep])
                round_n.append(m[keep])
            p = np.concatenate(round_p, axis=0)
            m = np.concatenate(round_n, axis=0)
            order = stream.rng.permutation(len(p))
            return p[order], m[order]

        return draw_rounds(
            n,
            draw,
            lambda drawn: (
                f"{self.geom_type} {self.name!r}: none of {drawn} points drawn on its "
                "operands' boundaries lies on the result's boundary; the result looks empty"
            ),
        )


def _check_operands(kind, geom1, geom2):
    for i, geom in enumerate((geom1, geom2), start=1):
        if not isinstance(geom, Geometry):
            raise TypeError(f"{kind}: geom{i} must be a Geometry, got {geom!r}")
    if geom1.dim != geom2.dim:
        raise ValueError(
            f"{kind}: the operands' dimensions differ: {geom1.name!r} is {geom1.dim}-D, "
            f"{geom2.name!r} is {geom2.dim}-D"
        )


def _split(total, weights):
    """``total`` split into integer counts proportional to ``weights`` (largest remainder)."""
    raw = total * weights
    counts = np.floor(raw).astype(np.int64)
    rest = int(total - counts.sum())
    if rest > 0:
        counts[np.argsort(-(raw - counts), kind="stable")[:rest]] += 1
    return counts


def _member_of(geom, p, closed):
    """``geom``'s closed (``contains``) or open (``_interior``) membership of ``p``."""
    return geom.contains(p) if closed else geom._interior(p)


def _hull(geom1, geom2):
    """The bounding box of both operands' boxes."""
    return (
        np.minimum(geom1.coord_min, geom2.coord_min),
        np.maximum(geom1.coord_max, geom2.coord_max),
    )


class _Operation(CSG):
    """The four operations' shared constructor: the name ``"<geom1>_<_word>_<geom2>"`` and the
    bounding box ``_bounds(geom1, geom2)``."""

    _word = "?"

    def __init__(self, geom1, geom2, sampling_config=None):
        _check_operands(type(self).__name__, geom1, geom2)
        coord_min, coord_max = self._bounds(geom1, geom2)
        super().__init__(
            f"{geom1.name}_{self._word}_{geom2.name}",
            geom1,
            geom2,
            coord_min,
            coord_max,
            sampling_config,
        )

    @staticmethod
    def _bounds(geom1, geom2):
        raise NotImplementedError


class CSGUnion(_Operation):
    """``geom1 | geom2``: the points in either operand. Name ``"<geom1>_add_<geom2>"``.

    Args:
        geom1, geom2: ``Geometry`` operands of the same dimension.
        sampling_config: a ``SamplingConfig`` or None.
    """

    _op = "|"
    _word = "add"
    _bounds = staticmethod(_hull)

    def _combine(self, a, b):
        return np.minimum(a, b)

    def _member(self, p, closed):
        # min(a, b) <= 0  <=>  a <= 0 or b <= 0 (likewise for < 0)
        return _member_of(self.geom1, p, closed) | _member_of(self.geom2, p, closed)


class CSGIntersection(_Operation):
    """``geom1 & geom2``: the points in both operands. Name ``"<geom1>_and_<geom2>"``.

    Raises:
        ValueError: the operands' bounding boxes do not overlap (the result is empty).
    """

    _op = "&"
    _word = "and"

    @staticmethod
    def _bounds(geom1, geom2):
        return (
            np.maximum(geom1.coord_min, geom2.coord_min),
            np.minimum(geom1.coord_max, geom2.coord_max),
        )

    def _combine(self, a, b):
        return np.maximum(a, b)

    def _member(self, p, closed):
        # max(a, b) <= 0  <=>  a <= 0 and b <= 0 (likewise for < 0)
        return _member_of(self.geom1, p, closed) & _member_of(self.geom2, p, closed)


class CSGDifference(_Operation):
    """``geom1 - geom2``: the points of ``geom1`` not inside ``geom2`` (closed: ``geom2``'s
    boundary inside ``geom1`` belongs to the result, with ``geom2``'s normals flipped).
    Name ``"<geom1>_sub_<geom2>"``."""

    _op = "-"
    _word = "sub"

    @staticmethod
    def _bounds(geom1, geom2):
        return geom1.coord_min, geom1.coord_max

    def _combine(self, a, b):
        return np.maximum(a, -b)

    def _member(self, p, closed):
        # max(a, -b) <= 0  <=>  a <= 0 and not b < 0;  max(a, -b) < 0  <=>  a < 0 and not b <= 0
        return _member_of(self.geom1, p, closed) & ~_member_of(self.geom2, p, not closed)


class CSGXOR(_Operation):
    """``geom1 ^ geom2``: the points in exactly one operand. Name ``"<geom1>_xor_<geom2>"``."""

    _op = "^"
    _word = "xor"
    _bounds = staticmethod(_hull)

    def _combine(self, a, b):
        return np.maximum(np.minimum(a, b), -np.maximum(a, b))

    def _member(self, p, closed):
        # max(min(a, b), -max(a, b)) <= 0  <=>  (a <= 0 or b <= 0) and not (a < 0 and b < 0);
        # < 0  <=>  (a < 0 or b < 0) and not (a <= 0 and b <= 0)
        either = _member_of(self.geom1, p, closed) | _member_of(self.geom2, p, closed)
        both = _member_of(self.geom1, p, not closed) & _member_of(self.geom2, p, not closed)
        return either & ~both
