"""Time and space-time: MindFlow's ``TimeDomain`` and ``GeometryWithTime``
(``mindflow/geometry/geometry_td.py``).

A ``GeometryWithTime`` is the product ``Omega x [t_start, t_end]`` of a space geometry and a
time interval; its points are ``[x_1, ..., x_d, t]`` (time last, as in MindFlow). MindFlow's
``sampling`` is kept:

- ``"domain"``: the config's ``domain`` entry samples space, its ``time`` entry samples time;
  with ``time.random_sampling`` the two sets are paired row by row (the shorter one padded with
  random repeats of its own points), otherwise every space point is combined with every time
  (space-major product, ``size_space * size_time`` rows);
- ``"BC"``: the spatial boundary ``dOmega x [t_start, t_end]`` paired with times the same way;
  with ``with_normal`` the normals are the space geometry's (``d`` columns, as in MindFlow);
- ``"IC"``: the config's ``IC`` entry samples space, at ``t = t_start``.

Ours besides: ``sample_interior`` and ``sample_boundary`` (the lateral boundary
``dOmega x [t_start, t_end]``, with the space-time unit normals ``(n_x, 0)``, ``d + 1``
columns), ``sample_initial``, ``contains`` and the exact ``sdf`` of the product. Unlike MindFlow,
``dim``, ``coord_min`` and ``coord_max`` include the time axis (``dim = d + 1``).
"""

import copy

import numpy as np

from .base import Geometry, SamplingConfig, as_points
from .samplers import check_sampler, make_rng
from .shapes_1d import Interval

__all__ = ["GeometryWithTime", "TimeDomain"]


class TimeDomain(Interval):
    """The time interval ``[start, end]`` (an ``Interval``; sampled as a column ``[n, 1]``).

    Args:
        name: the geometry's name.
        start, end: the interval's ends (numbers, ``start < end``). Defaults 0 and 1.
        dtype: numpy dtype of sampled points. Default float32.
        sampling_config: a ``SamplingConfig`` or None.

    Example::

        time = TimeDomain("time", 0.0, 1.0, sampling_config=generate_sampling_config(
            {"domain": {"size": 100, "sampler": "lhs"}}))
        time.sampling("domain").shape     # (100, 1)
    """

    def __init__(self, name, start=0.0, end=1.0, dtype=np.float32, sampling_config=None):
        super().__init__(name, start, end, dtype, sampling_config)
        self.start = float(self.coord_min[0])
        self.end = float(self.coord_max[0])


class GeometryWithTime(Geometry):
    """A space geometry times a ``TimeDomain``: points ``[x_1, ..., x_d, t]``.

    Args:
        geometry: the space geometry (any ``Geometry`` but a ``GeometryWithTime``); copied.
        timedomain: a ``TimeDomain``; copied.
        sampling_config: a ``SamplingConfig`` with a ``time`` entry (and ``domain``, ``BC``,
            ``IC`` as needed), or None: then, as in MindFlow, when both the geometry and the
            time domain have a config with a ``domain`` entry, the geometry's config is used with
            ``IC`` = the geometry's ``domain`` and ``time`` = the time domain's ``domain``.

    Attributes:
        geom, td: the copies of the space geometry and the time domain.
        start, end, duration: the time interval.
        name: ``timedomain.name + "_" + geometry.name`` (MindFlow's), so the columns are e.g.
            ``"time_rect_domain_points"``, ``"time_rect_BC_points"``, ``"time_rect_BC_normal"``,
            ``"time_rect_IC_points"``.

    Example::

        rect = Rectangle("rect", [-1.0, -0.5], [1.0, 0.5])
        rect_t = GeometryWithTime(rect, TimeDomain("time", 0.0, 1.0))
        rect_t.set_sampling_config(generate_sampling_config({
            "domain": {"size": 200}, "BC": {"size": 100, "with_normal": True},
            "IC": {"size": 100}, "time": {"size": 200}}))
        rect_t.sampling("domain").shape           # (200, 3)
        points, normals = rect_t.sampling("BC")   # (200, 3), (200, 2)
        rect_t.sampling("IC")[:, 2]               # all 0.0

    Raises:
        TypeError: ``geometry`` not a space ``Geometry`` or ``timedomain`` not a ``TimeDomain``.
        ValueError: a ``sampling_config`` without a ``time`` entry.
    """

    def __init__(self, geometry, timedomain, sampling_config=None):
        if not isinstance(geometry, Geometry) or isinstance(geometry, GeometryWithTime):
            raise TypeError(
                f"GeometryWithTime: geometry must be a space Geometry (not a GeometryWithTime), "
                f"got {geometry!r}"
            )
        if not isinstance(timedomain, TimeDomain):
            raise TypeError(
                f"GeometryWithTime: timedomain must be a TimeDomain, got {timedomain!r}"
            )
        self.geom = copy.deepcopy(geometry)
        self.td = copy.deepcopy(timedomain)
        self.start, self.end = self.td.start, self.td.end
        self.duration = self.end - self.start
        super().__init__(
            f"{self.td.name}_{self.geom.name}",
            self.geom.dim + 1,
            [*self.geom.coord_min, self.start],
            [*self.geom.coord_max, self.end],
            self.geom.dtype,
        )
        if sampling_config is not None:
            self.set_sampling_config(sampling_config)
        else:
            space = self.geom.sampling_config
            time = self.td.sampling_config
            if space is not None and time is not None and space.domain and time.domain:
                parts = {"domain": space.domain, "IC": space.domain, "time": time.domain}
                if space.bc is not None:
                    parts["BC"] = space.bc
                self.set_sampling_config(SamplingConfig(copy.deepcopy(parts)))

    def set_sampling_config(self, sampling_config):
        """Set the config (copied): its ``domain``/``BC`` go to the space geometry, its
        ``time`` entry is the time domain's ``domain``.

        Raises:
            TypeError: not a ``SamplingConfig``. ValueError: no ``time`` entry.
        """
        if not isinstance(sampling_config, SamplingConfig):
            raise TypeError(
                f"GeometryWithTime {self.name!r}: sampling_config must be a SamplingConfig "
                f"(see generate_sampling_config), got {sampling_config!r}"
            )
        if sampling_config.time is None:
            raise ValueError(
                f"GeometryWithTime {self.name!r}: the sampling config has no 'time' entry; "
                "expected e.g. {'time': {'size': 100}} next to 'domain', 'BC', 'IC'"
            )
        self.sampling_config = copy.deepcopy(sampling_config)
        self.geom.set_sampling_config(sampling_config)
        self.td.set_sampling_config(SamplingConfig({"domain": sampling_config.time}))

    # ----- shape --------------------------------------------------------------------------

    def _key(self):
        return (GeometryWithTime, self.geom._key(), self.start, self.end)

    @property
    def measure(self):
        """Space measure times duration (None when the space geometry's is unknown)."""
        space = self.geom.measure
        return None if space is None else space * self.duration

    @property
    def boundary_measure(self):
        """The lateral boundary's measure: the space boundary's times the duration."""
        return self.geom.boundary_measure * self.duration

    def _split(self, points, where):
        p = as_points(points, self.dim, f"GeometryWithTime.{where}")
        return p[:, :-1], p[:, -1]

    def contains(self, points):
        x, t = self._split(points, "contains")
        return self.geom.contains(x) & (t >= self.start) & (t <= self.end)

    def sdf(self, points):
        """Exact for the product ``Omega x [t0, t1]`` given an exact space ``sdf`` ``a`` and the
        interval's ``b = |t - t_mid| - T/2``: inside (both <= 0) ``max(a, b)``; outside
        ``sqrt(max(a, 0)^2 + max(b, 0)^2)`` (the Euclidean distance splits over the factors)."""
        x, t = self._split(points, "sdf")
        a = self.geom.sdf(x)
        b = np.abs(t - 0.5 * (self.start + self.end)) - 0.5 * self.duration
        outside = np.hypot(np.maximum(a, 0.0), np.maximum(b, 0.0))
        return np.where((a <= 0.0) & (b <= 0.0), np.maximum(a, b), outside)

    def _times(self, n, time):
        """``n`` times in ``[t_start, t_end)`` from their own stream, paired with the space
        points at random: two quasi-random streams (sobol, halton) drawn side by side run in
        lockstep (x and t correlated, |r| up to 0.95), so the low-discrepancy times are shuffled
        (each marginal stays low-discrepancy, the pairing is Latin-hypercube-like)."""
        t = self.start + self.duration * time.draw(n, 1)
        if time.sampler != "uniform":
            t = t[time.rng.permutation(n)]
        return t

    def _sample_interior(self, n, stream):
        space, time = stream.spawn(2)
        x = np.asarray(self.geom._sample_interior(n, space), dtype=np.float64)
        t = self._times(n, time)
        return np.concatenate([x.reshape(n, self.geom.dim), t], axis=-1)

    def _sample_boundary(self, n, stream):
        """The lateral boundary ``dOmega x [t0, t1]`` (where boundary conditions live), with
        normals ``(n_x, 0)``; the faces ``t = t0`` and ``t = t1`` are not sampled here (see
        ``sample_initial``)."""
        space, time = stream.spawn(2)
        x, nx = self.geom._sample_boundary(n, space)
        t = self._times(n, time)
        points = np.concatenate([np.asarray(x, dtype=np.float64).reshape(n, -1), t], axis=-1)
        normals = np.concatenate([np.asarray(nx, dtype=np.float64).reshape(n, -1), 0.0 * t], -1)
        return points, normals

    def sample_initial(self, n, sampler="uniform", seed=None):
        """``n`` points of the initial slice ``Omega x {t_start}``.

        Returns:
            array ``[n, d + 1]`` of dtype ``self.dtype``, last column ``t_start``.
        """
        check_sampler(sampler, "GeometryWithTime.sample_initial")
        x = self.geom.sample_interior(n, sampler, seed).astype(np.float64)
        return np.concatenate([x, np.full((len(x), 1), self.start)], -1).astype(self.dtype)

    # ----- MindFlow's sampling ------------------------------------------------------------

    def sampling(self, geom_type="domain", seed=None):
        """Sample a part as the config says (see the module docstring).

        Args:
            geom_type: ``"domain" | "BC" | "IC"`` (case-insensitive).
            seed: None (core's generator), an int or a ``numpy.random.Generator``.

        Returns:
            ``"domain"``: points ``[m, d + 1]`` (with ``with_sdf``: and the space geometry's sdf
            ``[m]`` of each point). ``"BC"``: points ``[m, d + 1]``, and with ``with_normal``
            the space normals ``[m, d]``. ``"IC"``: points ``[m, d + 1]`` at ``t_start``.
            Arrays of dtype ``self.dtype``.
        """
        key = self._geom_type_key(geom_type)
        if key == "time":
            raise ValueError(
                f"GeometryWithTime {self.name!r}: geom_type 'time' is not sampled on its own; "
                "expected 'domain', 'BC' or 'IC'"
            )
        self._part_config(key)
        time_part = self._part_config("time")
        space_rng, time_rng, merge_rng = make_rng(seed).spawn(3)
        if key == "IC":
            ic = copy.deepcopy(self.sampling_config.ic)
            ic.with_sdf = False
            space = copy.copy(self.geom)
            space.sampling_config = SamplingConfig({"domain": ic})
            space.columns_dict = {}
            x = np.asarray(space.sampling("domain", seed=space_rng), dtype=np.float64)
            data = np.concatenate([x, np.full((len(x), 1), self.start)], -1).astype(self.dtype)
            self.columns_dict["IC"] = [self.name + "_IC_points"]
            return data
        space = self.geom.sampling(key, seed=space_rng)
        space = list(space) if isinstance(space, tuple) else [space]
        times = np.asarray(self.td.sampling("domain", seed=time_rng), dtype=np.float64)
        if time_part.random_sampling:
            times, space = _random_merge(times, space, merge_rng)
        else:
            count = len(space[0])
            space = [np.repeat(s, len(times), axis=0) for s in space]
            times = np.tile(times, (count, 1))
        points = np.concatenate([space[0].astype(np.float64), times], axis=-1).astype(self.dtype)
        extra = [s.astype(self.dtype) for s in space[1:]]
        suffix = {"domain": ["_domain_points", "_domain_sdf"], "BC": ["_BC_points", "_BC_normal"]}
        self.columns_dict[key] = [self.name + s for s in suffix[key][: 1 + len(extra)]]
        return (points, *extra) if extra else points


def _random_merge(times, space, rng):
    """Pair time rows with space rows (MindFlow's ``_random_merge``): the shorter side is
    padded with rows drawn at random (with repetition) from itself.

    Args:
        times: ``[nt, 1]``; space: list of arrays with ``ns`` rows (points, then normals/sdf).

    Returns:
        ``(times [m, 1], space arrays with m rows)``, ``m = max(nt, ns)``.
    """
    nt, ns = len(times), len(space[0])
    if nt == 0 or ns == 0:  # nothing to pair with
        return times[:0], [s[:0] for s in space]
    if ns < nt:
        extra = rng.integers(0, ns, size=nt - ns)
        space = [np.concatenate([s, s[extra]], axis=0) for s in space]
    elif nt < ns:
        extra = rng.integers(0, nt, size=ns - nt)
        times = np.concatenate([times, times[extra]], axis=0)
    return times, space
