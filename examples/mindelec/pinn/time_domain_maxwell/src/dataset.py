"""Training points of the time-domain Maxwell case (MindElec's ``src/dataset.py``).

``create_random_dataset``: the source disc x [0, range_t] (``src``), the square less the disc
x [0, range_t] (``no_src``), each with equation (``domain``) and initial (``IC``) points, and the
square's edges x [0, range_t] (``bc``). Sub-datasets ``src_domain``, ``src_IC``,
``no_src_domain``, ``no_src_IC``, ``bc_BC``; columns ``<sub-dataset>_points`` ``[N, 3]``.

The optional config key ``src_sampling_radius`` (not in MindElec; default ``src_radius``) widens
the ``src`` disc of the sampling, and only of the sampling: the smoothed source term is the
same. MindElec's split puts a whole sub-dataset in the radius-0.01 disc and leaves the ring
around it, where the field is steepest, to the uniform ``no_src`` points (0.75% of them within
0.05 of the source).

The optional keys ``late_time_start`` (s) and ``late_time_fraction`` (not in MindElec; default
none: times uniform, as in MindElec) move a fraction of the ``no_src`` and ``bc`` times late
(``LateWeightedTimeDomain``): the field leaving through the absorbing boundary is small, and
with uniform times its residuals weigh little in the loss while its relative error is the
largest. The ``src`` times stay uniform (they carry the source's emission, which is early).
"""

import numpy as np

from diffsci.mindelec.data import Dataset
from diffsci.mindelec.geometry import (
    Disk,
    GeometryWithTime,
    Rectangle,
    TimeDomain,
    create_config_from_edict,
)

from .maxwell import check_source, disc_inside
from .sampling_config import bc_sampling_config, no_src_sampling_config, src_sampling_config

__all__ = [
    "LateWeightedTimeDomain",
    "check_source_sampling",
    "create_random_dataset",
    "get_test_data",
    "late_time_domain",
    "src_sampling_radius",
]


def create_random_dataset(config, src_config=None, no_src_config=None, bc_config=None):
    """The training ``Dataset`` (call ``create_dataset`` on it to sample).

    Args:
        config: the case's config dict (``src_radius``, ``src_pos``, ``coord_min``,
            ``coord_max``, ``range_t``).
        src_config, no_src_config, bc_config: sampling dicts (default: ``sampling_config``'s).

    Raises:
        ValueError: the source is outside the domain; the source region's sampling config has
            no equation (``domain``) points.
    """
    check_source(config)
    src_config = src_sampling_config if src_config is None else src_config
    no_src_config = no_src_sampling_config if no_src_config is None else no_src_config
    bc_config = bc_sampling_config if bc_config is None else bc_config
    domain = src_config.get("domain") or {}
    if int(domain.get("size", 0)) < 1:
        raise ValueError(
            "the sampling config of the source region puts no equation points in the source "
            f"disc (src_config['domain'] = {src_config.get('domain')!r}): the source would never "
            "enter the loss; give it a 'domain' entry with size >= 1"
        )
    disk = Disk("src", config["src_pos"], src_sampling_radius(config))
    rectangle = Rectangle("rect", config["coord_min"], config["coord_max"])
    time_interval = TimeDomain("time", 0.0, config["range_t"])
    late_times = late_time_domain(config)
    no_src_region = GeometryWithTime(rectangle - disk, late_times)
    no_src_region.set_name("no_src")
    no_src_region.set_sampling_config(create_config_from_edict(no_src_config))
    src_region = GeometryWithTime(disk, time_interval)
    src_region.set_name("src")
    src_region.set_sampling_config(create_config_from_edict(src_config))
    boundary = GeometryWithTime(rectangle, late_times)
    boundary.set_name("bc")
    boundary.set_sampling_config(create_config_from_edict(bc_config))
    geom_dict = {src_region: ["domain", "IC"], no_src_region: ["domain", "IC"], boundary: ["BC"]}
    return Dataset(geom_dict)


def src_sampling_radius(config):
    """The radius of the ``src`` sampling disc: ``config["src_sampling_radius"]`` when set (it
    must be >= ``src_radius`` and the disc must fit in the domain), else ``src_radius``."""
    radius = float(config["src_radius"])
    wide = config.get("src_sampling_radius")
    if wide is None:
        return radius
    wide = float(wide)
    if not wide >= radius:
        raise ValueError(
            f"src_sampling_radius={wide} must be >= src_radius={radius}: the source disc "
            "must lie in the src sampling region"
        )
    if not disc_inside(config, wide):
        raise ValueError(
            f"src_sampling_radius={wide} around src_pos={list(config['src_pos'])} crosses the "
            f"domain [{list(config['coord_min'])}, {list(config['coord_max'])}]: the sampling "
            "disc must fit in the domain"
        )
    return wide


class LateWeightedTimeDomain(TimeDomain):
    """``[start, end]`` sampled with a fraction ``late_fraction`` of the times moved to
    ``[late_start, end]``: the density is ``(1 - f) / D`` on ``[start, late_start)`` and
    ``(1 - f) / D + f / (end - late_start)`` on ``[late_start, end]`` (``D = end - start``).

    The base sampler's times (uniform or quasi-random) are mapped through the inverse of that
    mixture's CDF, which is piecewise linear, so a low-discrepancy sampler stays
    low-discrepancy in each piece; ``late_fraction = 0`` is the plain ``TimeDomain``. The warp
    applies to ``sampling`` (MindElec's API, what ``Dataset`` calls).

    Args:
        name, start, end: as ``TimeDomain``'s (seconds here).
        late_start: where the extra density begins, ``start < late_start < end``.
        late_fraction: the fraction of times moved, ``0 <= f < 1``.
    """

    def __init__(self, name, start, end, late_start, late_fraction, **kwargs):
        super().__init__(name, start, end, **kwargs)
        late_start, late_fraction = float(late_start), float(late_fraction)
        if not self.start < late_start < self.end:
            raise ValueError(
                f"late_time_start={late_start} must lie inside the time interval "
                f"({self.start}, {self.end})"
            )
        if not 0.0 <= late_fraction < 1.0:
            raise ValueError(f"late_time_fraction={late_fraction} must lie in [0, 1)")
        self.late_start, self.late_fraction = late_start, late_fraction

    def warp(self, t):
        """Map times of the uniform density on ``[start, end]`` to the mixture (same shape)."""
        t = np.asarray(t, dtype=np.float64)
        f, duration = self.late_fraction, self.end - self.start
        u = (t - self.start) / duration  # uniform quantiles
        knee = (1.0 - f) * (self.late_start - self.start) / duration  # CDF at late_start
        late_density = (1.0 - f) / duration + f / (self.end - self.late_start)
        early = self.start + u * duration / (1.0 - f)
        late = self.late_start + (u - knee) / late_density
        return np.clip(np.where(u < knee, early, late), self.start, self.end)

    def sampling(self, geom_type="domain", seed=None):
        t = super().sampling(geom_type, seed)
        return self.warp(t).astype(np.asarray(t).dtype)


def late_time_domain(config):
    """The time interval of the ``no_src`` and ``bc`` samples: a ``LateWeightedTimeDomain``
    when ``config`` sets ``late_time_start`` and ``late_time_fraction`` (both or neither),
    else MindElec's uniform ``TimeDomain``. Raises ValueError on a bad or half-given pair."""
    start, fraction = config.get("late_time_start"), config.get("late_time_fraction")
    if start is None and fraction is None:
        return TimeDomain("time", 0.0, config["range_t"])
    if start is None or fraction is None:
        raise ValueError(
            f"late_time_start={start} and late_time_fraction={fraction}: give both or neither"
        )
    return LateWeightedTimeDomain("time", 0.0, config["range_t"], start, fraction)


def check_source_sampling(dataset, config):
    """After ``create_dataset``: raise ValueError unless some equation point lies in the source
    disc (the smoothed source is ~0 elsewhere, so without such points the PINN never sees it).
    Returns the number of such points."""
    center = np.asarray(config["src_pos"], dtype=np.float64)
    radius = float(config["src_radius"])
    count, total = 0, 0
    for sub in dataset.all_datasets:
        if str(sub.constraint_type).lower() != "equation" or getattr(sub, "data", None) is None:
            continue
        pts = np.asarray(sub.data[0], dtype=np.float64).reshape(-1, 3)
        total += len(pts)
        count += int(np.sum(np.linalg.norm(pts[:, :2] - center, axis=1) <= radius * (1 + 1e-6)))
    if count == 0:
        raise ValueError(
            f"none of the {total} equation points lies in the source disc (center "
            f"{center.tolist()}, radius {radius}): check the sampling config of the source "
            "region (call create_dataset before this check)"
        )
    return count


def get_test_data(test_data_path):
    """``(inputs, label)`` from ``input.npy`` and ``output.npy`` (MindElec's layout:
    ``[T, X, Y, 3]`` each)."""
    inputs = np.load(test_data_path + "/input.npy")
    label = np.load(test_data_path + "/output.npy")
    return inputs, label
