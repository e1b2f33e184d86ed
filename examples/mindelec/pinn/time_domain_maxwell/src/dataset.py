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
"""

import numpy as np

from mindelec.data import Dataset
from mindelec.geometry import (
    Disk,
    GeometryWithTime,
    Rectangle,
    TimeDomain,
    create_config_from_edict,
)

from .maxwell import check_source, disc_inside
from .sampling_config import bc_sampling_config, no_src_sampling_config, src_sampling_config

__all__ = [
    "check_source_sampling",
    "create_random_dataset",
    "get_test_data",
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
    no_src_region = GeometryWithTime(rectangle - disk, time_interval)
    no_src_region.set_name("no_src")
    no_src_region.set_sampling_config(create_config_from_edict(no_src_config))
    src_region = GeometryWithTime(disk, time_interval)
    src_region.set_name("src")
    src_region.set_sampling_config(create_config_from_edict(src_config))
    boundary = GeometryWithTime(rectangle, time_interval)
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
