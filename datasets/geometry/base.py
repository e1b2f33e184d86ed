"""The ``Geometry`` base class and MindFlow's sampling configuration.

MindFlow's names and config keys (``mindflow/geometry/geometry_base.py``, ``geom_utils.py``):
``PartSamplingConfig``, ``SamplingConfig``, ``generate_sampling_config(dict)`` with the entries
``"domain" | "BC" | "IC" | "time"``, each a dict of ``size``, ``random_sampling``, ``sampler``
(``uniform | lhs | sobol | halton``), ``random_merge``, ``with_normal``, ``with_sdf``; and
``geom.sampling(geom_type)``, ``geom.set_sampling_config(config)``, ``geom.set_name(name)``,
``geom.columns_dict``, the operators ``| & - ^`` for CSG.

What a concrete geometry implements (all in float64, ``N`` points of dimension ``dim``):

- ``contains(points) -> (N,) bool``: closed-set membership (the boundary counts as inside, up
  to a relative 1e-12 so that rounded boundary samples count as on it);
  ``_interior(points)`` (open interior) defaults to ``sdf < -1e-12 size``, override it when
  cheaper;
- ``sdf(points) -> (N,) float64``: signed distance, negative inside, zero on the boundary;
- ``_sample_interior(n, stream) -> (n, dim)``: ``n`` points uniform in the interior, built from
  ``stream.draw(m, d)`` (a ``samplers.UnitStream``; one ``d`` per stream) and ``stream.rng``
  (``samplers.rejection_sample`` does rejection from a box);
- ``_sample_boundary(n, stream) -> (points (n, dim), normals (n, dim))``: ``n`` points uniform
  (in length / area) on the boundary, with outward unit normals;
- ``measure`` (length / area / volume, or None when unknown) and ``boundary_measure`` (number of
  boundary points / length / area): CSG shares boundary samples among its leaves by
  ``boundary_measure``, so a primitive used in CSG must give it;
- ``_key()``: a hashable (type, parameters) tuple, so that CSG recognises equal leaves;
- optional: ``_grid_interior(size)`` and ``_grid_boundary(size)`` for
  ``random_sampling=False`` (the base raises a ValueError naming the class otherwise).

The bounding box is ``coord_min``/``coord_max`` (float64 arrays of shape ``(dim,)``, set by
``Geometry.__init__``); CSG samples interiors by rejection from it.

What the base provides: ``sample_interior``, ``sample_boundary`` (dtype conversion, seeding),
``sampling(geom_type)`` driven by the config, ``set_sampling_config``, ``set_name``,
``union | intersection | difference | exclusive_or`` and their operators, ``_leaves()``
(the primitives a CSG tree is made of).
"""

import copy
import numbers

import numpy as np

from .samplers import SAMPLER_TYPES, UnitStream, check_sampler, make_rng

GEOM_TYPES = ("domain", "BC", "IC", "time")
DATA_TYPES = (np.int32, np.int64, np.float16, np.float32, np.float64)
_PART_KEYS = ("size", "random_sampling", "sampler", "random_merge", "with_normal", "with_sdf")


def _is_int(x):
    return isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, (bool, np.bool_))


def _check_bool(value, where):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{where}: expected a bool, got {value!r}")
    return bool(value)


class PartSamplingConfig:
    """How to sample one part (``domain``, ``BC``, ``IC`` or ``time``) of a geometry.

    Args:
        size: with ``random_sampling`` an int (the number of points); without it, the grid's
            points per axis (a list of ints, or one int in 1-D) for a domain, the total number
            for a boundary.
        random_sampling: draw points with ``sampler`` (True) or lay them on a grid (False).
        sampler: ``"uniform" | "lhs" | "halton" | "sobol"``.
        random_merge: for ``GeometryWithTime``: pair space and time points at random (True) or
            as a product (False).
        with_normal: boundary sampling also returns the outward unit normals.
        with_sdf: domain sampling also returns the signed distance of each point.
    """

    def __init__(
        self,
        size,
        random_sampling=True,
        sampler="uniform",
        random_merge=True,
        with_normal=False,
        with_sdf=False,
    ):
        self.random_sampling = _check_bool(random_sampling, "PartSamplingConfig.random_sampling")
        if _is_int(size):
            size = int(size)
            if size < 0:
                raise ValueError(f"PartSamplingConfig.size: expected an int >= 0, got {size}")
        elif isinstance(size, (list, tuple, np.ndarray)) and len(size) > 0:
            if not all(_is_int(s) and s > 0 for s in size):
                raise ValueError(
                    f"PartSamplingConfig.size: expected ints > 0 per grid axis, got {list(size)}"
                )
            if self.random_sampling:
                raise ValueError(
                    "PartSamplingConfig.size: with random_sampling=True expected one int "
                    f"(the number of points), got {list(size)}"
                )
            size = [int(s) for s in size]
        else:
            raise TypeError(
                f"PartSamplingConfig.size: expected an int or a list of ints, got {size!r}"
            )
        self.size = size
        self.sampler = check_sampler(sampler, "PartSamplingConfig.sampler")
        self.random_merge = _check_bool(random_merge, "PartSamplingConfig.random_merge")
        self.with_normal = _check_bool(with_normal, "PartSamplingConfig.with_normal")
        self.with_sdf = _check_bool(with_sdf, "PartSamplingConfig.with_sdf")

    def __repr__(self):
        return (
            f"PartSamplingConfig(size={self.size}, random_sampling={self.random_sampling}, "
            f"sampler={self.sampler!r}, random_merge={self.random_merge}, "
            f"with_normal={self.with_normal}, with_sdf={self.with_sdf})"
        )


class SamplingConfig:
    """The sampling configuration of a geometry: one ``PartSamplingConfig`` (or None) per part.

    Args:
        part_sampling_dict: dict with keys among ``"domain", "BC", "IC", "time"`` and
            ``PartSamplingConfig`` values.

    Attributes:
        domain, bc, ic, time: the parts (None where absent).
    """

    def __init__(self, part_sampling_dict):
        if not isinstance(part_sampling_dict, dict):
            raise TypeError(
                f"SamplingConfig: expected a dict of PartSamplingConfig, got {part_sampling_dict!r}"
            )
        for key, value in part_sampling_dict.items():
            if key not in GEOM_TYPES:
                raise ValueError(
                    f"SamplingConfig: unknown part {key!r}; expected one of {', '.join(GEOM_TYPES)}"
                )
            if not isinstance(value, PartSamplingConfig):
                raise TypeError(
                    f"SamplingConfig[{key!r}]: expected a PartSamplingConfig, got {value!r}"
                )
        self.domain = part_sampling_dict.get("domain")
        self.bc = part_sampling_dict.get("BC")
        self.ic = part_sampling_dict.get("IC")
        self.time = part_sampling_dict.get("time")

    def part(self, geom_type):
        """The ``PartSamplingConfig`` of ``geom_type`` (``"domain" | "BC" | "IC" | "time"``)."""
        attr = {"domain": "domain", "BC": "bc", "IC": "ic", "time": "time"}[geom_type]
        return getattr(self, attr)

    def __repr__(self):
        parts = ", ".join(f"{k}={self.part(k)!r}" for k in GEOM_TYPES if self.part(k) is not None)
        return f"SamplingConfig({parts})"


# keys MindFlow's own YAML files put inside an entry and MindFlow's sampler ignores (its
# poisson/continuous config: ``BC_type: "dirichlet"``, read by the application, not the sampler)
_MINDFLOW_IGNORED_KEYS = frozenset({"BC_type"})


def generate_sampling_config(dict_config):
    """A ``SamplingConfig`` from a plain dict (MindFlow's YAML ``geometry`` section).

    Top-level keys other than ``"domain" | "BC" | "IC" | "time"`` are ignored (MindFlow's own
    examples carry e.g. a top-level ``random_merge``); an entry that is None or empty is skipped.
    Inside an entry the keys are those of ``PartSamplingConfig`` (and MindFlow's ``BC_type``,
    which its sampler ignores too); ``size`` is required.

    Example::

        config = generate_sampling_config({
            "domain": {"random_sampling": True, "size": 1000, "sampler": "sobol"},
            "BC": {"random_sampling": True, "size": 200, "with_normal": True},
        })

    Raises:
        ValueError: no known entry, an unknown key inside an entry, a missing ``size``, an
            unknown sampler.
    """
    if not isinstance(dict_config, dict):
        raise TypeError(f"generate_sampling_config: expected a dict, got {dict_config!r}")
    parts = {}
    for geom_type in GEOM_TYPES:
        entry = dict_config.get(geom_type)
        if not entry:
            continue
        if not isinstance(entry, dict):
            raise TypeError(
                f"generate_sampling_config[{geom_type!r}]: expected a dict, got {entry!r}"
            )
        unknown = sorted(set(entry) - set(_PART_KEYS) - _MINDFLOW_IGNORED_KEYS)
        if unknown:
            raise ValueError(
                f"generate_sampling_config[{geom_type!r}]: unknown key(s) {unknown}; "
                f"expected among {list(_PART_KEYS)}"
            )
        if "size" not in entry:
            raise ValueError(
                f"generate_sampling_config[{geom_type!r}]: missing key 'size' (the number of "
                "points, or the grid's points per axis)"
            )
        parts[geom_type] = PartSamplingConfig(
            entry["size"],
            entry.get("random_sampling", True),
            entry.get("sampler", "uniform"),
            entry.get("random_merge", True),
            entry.get("with_normal", False),
            entry.get("with_sdf", False),
        )
    if not parts:
        raise ValueError(
            "generate_sampling_config: no sampling entry found; expected at least one of "
            f"{', '.join(GEOM_TYPES)} with a dict value, got keys {sorted(dict_config)}"
        )
    return SamplingConfig(parts)


def as_points(points, dim, where):
    """``points`` as a float64 array of shape ``(N, dim)`` (a ``(dim,)`` point becomes N=1).

    Accepts numpy arrays, lists and ``core.Tensor`` (anything with ``asnumpy``)."""
    if hasattr(points, "asnumpy"):
        points = points.asnumpy()
    arr = np.asarray(points, dtype=np.float64)
    if arr.ndim == 1 and arr.shape[0] == dim:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise ValueError(f"{where}: expected points of shape (N, {dim}), got {arr.shape}")
    return arr


class Geometry:
    """Base class of every geometry (see the module docstring for the subclass interface).

    Args:
        name: the geometry's name (MindFlow uses it for column names, e.g. ``"rect_BC_points"``).
        dim: number of space dimensions (int >= 1).
        coord_min, coord_max: the bounding box, a number (1-D) or a sequence of ``dim`` numbers.
        dtype: numpy dtype of sampled points (MindFlow's default float32).
        sampling_config: a ``SamplingConfig`` or None (set later with ``set_sampling_config``).

    Attributes:
        coord_min, coord_max: float64 arrays of shape ``(dim,)``.
        columns_dict: the column names of the last ``sampling`` of each part, as in MindFlow.
    """

    def __init__(self, name, dim, coord_min, coord_max, dtype=np.float32, sampling_config=None):
        if not isinstance(name, str):
            raise TypeError(f"{type(self).__name__}: name must be a str, got {name!r}")
        self.name = name
        if not _is_int(dim) or dim < 1:
            raise ValueError(
                f"{type(self).__name__} {name!r}: dim must be an int >= 1, got {dim!r}"
            )
        self.dim = int(dim)
        self.coord_min = self._coords(coord_min, "coord_min")
        self.coord_max = self._coords(coord_max, "coord_max")
        if np.any(self.coord_min > self.coord_max):
            raise ValueError(
                f"{type(self).__name__} {name!r}: coord_min must be <= coord_max in every axis "
                "(inverted bounds), "
                f"got coord_min={self.coord_min.tolist()}, coord_max={self.coord_max.tolist()}"
            )
        if not any(np.dtype(dtype) == np.dtype(t) for t in DATA_TYPES):
            raise TypeError(
                f"{type(self).__name__} {name!r}: dtype must be one of "
                f"{[np.dtype(t).name for t in DATA_TYPES]}, got {dtype!r}"
            )
        self.dtype = np.dtype(dtype).type
        if sampling_config is not None and not isinstance(sampling_config, SamplingConfig):
            raise TypeError(
                f"{type(self).__name__} {name!r}: sampling_config must be a SamplingConfig "
                f"(see generate_sampling_config), got {sampling_config!r}"
            )
        self.sampling_config = sampling_config
        self.geom_type = type(self).__name__
        self.columns_dict = {}

    def _coords(self, value, what):
        if hasattr(value, "asnumpy"):
            value = value.asnumpy()
        if isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{type(self).__name__} {self.name!r}: {what} must be numbers")
        try:
            arr = np.asarray(value, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise TypeError(
                f"{type(self).__name__} {self.name!r}: {what} must be numbers, got {value!r}"
            ) from None
        if arr.shape != (self.dim,):
            raise ValueError(
                f"{type(self).__name__} {self.name!r}: {what} must have {self.dim} coordinate(s), "
                f"got {np.asarray(value).tolist()}"
            )
        if not np.all(np.isfinite(arr)):
            raise ValueError(
                f"{type(self).__name__} {self.name!r}: {what} must be finite, got {arr.tolist()}"
            )
        return arr

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r}, dim={self.dim})"

    # ----- configuration (MindFlow) -------------------------------------------------------

    def set_name(self, name):
        """Rename the geometry (the column names of later ``sampling`` calls follow)."""
        if not isinstance(name, str):
            raise TypeError(f"{self.geom_type}.set_name: expected a str, got {name!r}")
        self.name = name

    def set_sampling_config(self, sampling_config):
        """Store a (deep) copy of ``sampling_config`` (a ``SamplingConfig``)."""
        if not isinstance(sampling_config, SamplingConfig):
            raise TypeError(
                f"{self.geom_type} {self.name!r}: sampling_config must be a SamplingConfig "
                f"(see generate_sampling_config), got {sampling_config!r}"
            )
        self.sampling_config = copy.deepcopy(sampling_config)

    # ----- what a subclass implements -----------------------------------------------------

    def contains(self, points):
        """Whether each point lies in the closed geometry.

        Args:
            points: array-like of shape ``(N, dim)``.

        Returns:
            bool array of shape ``(N,)``.
        """
        raise NotImplementedError(f"{self.geom_type}.contains")

    def sdf(self, points):
        """Signed distance to the boundary: negative inside, zero on it, positive outside.

        Args:
            points: array-like of shape ``(N, dim)``.

        Returns:
            float64 array of shape ``(N,)``.
        """
        raise NotImplementedError(f"{self.geom_type}.sdf")

    def _interior(self, points):
        """Whether each point lies in the open interior (``sdf < 0``, farther than 1e-12 of the
        size from the boundary, the tolerance ``contains`` grants): CSG's difference and XOR use
        it. ``points`` is already a float64 ``(N, dim)`` array; a shape may override this with a
        cheaper test.

        Returns:
            bool array of shape ``(N,)``.
        """
        tol = 1e-12 * float(np.max(self.coord_max - self.coord_min))
        return self.sdf(points) < -tol

    def _sample_interior(self, n, stream):
        raise NotImplementedError(f"{self.geom_type}._sample_interior")

    def _sample_boundary(self, n, stream):
        raise NotImplementedError(f"{self.geom_type}._sample_boundary")

    def _grid_interior(self, size):
        raise ValueError(
            f"{self.geom_type} {self.name!r}: grid sampling (random_sampling=False) of the "
            "domain is not supported; use random_sampling=True"
        )

    def _grid_boundary(self, size):
        raise ValueError(
            f"{self.geom_type} {self.name!r}: grid sampling (random_sampling=False) of the "
            "boundary is not supported; use random_sampling=True"
        )

    @property
    def measure(self):
        """Length (1-D), area (2-D) or volume (3-D) of the geometry; None when unknown."""
        return None

    @property
    def boundary_measure(self):
        """Size of the boundary: number of end points (1-D), perimeter (2-D), area (3-D)."""
        raise NotImplementedError(f"{self.geom_type}.boundary_measure")

    def _leaves(self):
        """The primitive geometries this one is built from (itself for a primitive)."""
        return [self]

    def _key(self):
        """A hashable description of the shape: CSG samples the boundary of two equal leaves
        (say the same disk used twice in a tree) once. Primitives return their type and
        parameters; the default is the object's identity."""
        return ("id", id(self))

    # ----- sampling (provided) ------------------------------------------------------------

    def sample_interior(self, n, sampler="uniform", seed=None):
        """``n`` points uniform in the geometry.

        Args:
            n: number of points (int >= 0).
            sampler: ``"uniform" | "lhs" | "halton" | "sobol"``.
            seed: None (drawn from core's generator: ``core.set_seed`` makes it repeatable),
                an int or a ``numpy.random.Generator``; the same seed gives the same points.

        Returns:
            array of shape ``(n, dim)`` and dtype ``self.dtype``.
        """
        n = self._check_count(n, "sample_interior")
        stream = UnitStream(
            check_sampler(sampler, f"{self.geom_type}.sample_interior"), make_rng(seed)
        )
        points = self._sample_interior(n, stream)
        return np.asarray(points, dtype=np.float64).reshape(n, self.dim).astype(self.dtype)

    def sample_boundary(self, n, sampler="uniform", seed=None):
        """``n`` points uniform on the boundary, with outward unit normals.

        Args:
            n, sampler, seed: as in ``sample_interior``.

        Returns:
            ``(points, normals)``, both of shape ``(n, dim)`` and dtype ``self.dtype``.
        """
        n = self._check_count(n, "sample_boundary")
        stream = UnitStream(
            check_sampler(sampler, f"{self.geom_type}.sample_boundary"), make_rng(seed)
        )
        points, normals = self._sample_boundary(n, stream)
        points = np.asarray(points, dtype=np.float64).reshape(n, self.dim)
        normals = np.asarray(normals, dtype=np.float64).reshape(n, self.dim)
        return points.astype(self.dtype), normals.astype(self.dtype)

    def _check_count(self, n, where):
        if not _is_int(n) or n < 0:
            raise ValueError(f"{self.geom_type}.{where}: n must be an int >= 0, got {n!r}")
        return int(n)

    def _part_config(self, geom_type):
        config = self.sampling_config
        if config is None:
            raise ValueError(
                f"{self.geom_type} {self.name!r} has no sampling_config; pass one to the "
                "constructor or call set_sampling_config(generate_sampling_config({...}))"
            )
        part = config.part(geom_type)
        if part is None:
            raise ValueError(
                f"{self.geom_type} {self.name!r}: its sampling_config has no {geom_type!r} entry"
            )
        return part

    def sampling(self, geom_type="domain", seed=None):
        """Sample a part of the geometry as its ``sampling_config`` says (MindFlow's method).

        Args:
            geom_type: ``"domain"`` (interior) or ``"BC"`` (boundary); ``"IC"`` belongs to
                ``GeometryWithTime``. Case-insensitive, as in MindFlow.
            seed: None (core's generator), an int or a ``numpy.random.Generator``.

        Returns:
            ``"domain"``: points ``(size, dim)``, or ``(points, sdf (size,))`` with
            ``with_sdf`` (our sdf: negative inside). ``"BC"``: points, or ``(points, normals)``
            with ``with_normal``. Arrays of dtype ``self.dtype``.
        """
        key = self._geom_type_key(geom_type)
        if key == "domain":
            part = self._part_config("domain")
            if part.random_sampling:
                points = self.sample_interior(part.size, part.sampler, seed)
            else:
                points = np.asarray(self._grid_interior(part.size), dtype=np.float64)
                points = points.reshape(-1, self.dim).astype(self.dtype)
            self.columns_dict["domain"] = [self.name + "_domain_points"]
            if part.with_sdf:
                self.columns_dict["domain"].append(self.name + "_domain_sdf")
                return points, self.sdf(points).astype(self.dtype)
            return points
        if key == "BC":
            part = self._part_config("BC")
            size = int(np.prod(part.size))
            if part.random_sampling:
                points, normals = self.sample_boundary(size, part.sampler, seed)
            else:
                points, normals = self._grid_boundary(size)
                points = np.asarray(points, dtype=np.float64).reshape(-1, self.dim)
                normals = np.asarray(normals, dtype=np.float64).reshape(-1, self.dim)
                points, normals = points.astype(self.dtype), normals.astype(self.dtype)
            self.columns_dict["BC"] = [self.name + "_BC_points"]
            if part.with_normal:
                self.columns_dict["BC"].append(self.name + "_BC_normal")
                return points, normals
            return points
        raise ValueError(
            f"{self.geom_type} {self.name!r}: geom_type {geom_type!r} is sampled by "
            "GeometryWithTime; a space geometry samples 'domain' or 'BC'"
        )

    def _geom_type_key(self, geom_type):
        if isinstance(geom_type, str):
            for key in GEOM_TYPES:
                if geom_type.lower() == key.lower():
                    return key
        raise ValueError(
            f"{self.geom_type} {self.name!r}: geom_type must be one of {', '.join(GEOM_TYPES)}, "
            f"got {geom_type!r}"
        )

    # ----- constructive solid geometry ----------------------------------------------------

    def union(self, geom, sampling_config=None):
        """``self | geom`` (``csg.CSGUnion``)."""
        from .csg import CSGUnion

        return CSGUnion(self, geom, sampling_config)

    def intersection(self, geom, sampling_config=None):
        """``self & geom`` (``csg.CSGIntersection``)."""
        from .csg import CSGIntersection

        return CSGIntersection(self, geom, sampling_config)

    def difference(self, geom, sampling_config=None):
        """``self - geom`` (``csg.CSGDifference``)."""
        from .csg import CSGDifference

        return CSGDifference(self, geom, sampling_config)

    def exclusive_or(self, geom, sampling_config=None):
        """``self ^ geom`` (``csg.CSGXOR``)."""
        from .csg import CSGXOR

        return CSGXOR(self, geom, sampling_config)

    def __or__(self, geom):
        return self.union(geom)

    def __and__(self, geom):
        return self.intersection(geom)

    def __sub__(self, geom):
        return self.difference(geom)

    def __xor__(self, geom):
        return self.exclusive_or(geom)


__all__ = [
    "DATA_TYPES",
    "GEOM_TYPES",
    "SAMPLER_TYPES",
    "Geometry",
    "PartSamplingConfig",
    "SamplingConfig",
    "as_points",
    "generate_sampling_config",
]
