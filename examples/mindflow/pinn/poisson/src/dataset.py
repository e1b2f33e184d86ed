"""Training / test data of MindFlow's Poisson cases (its ``src/dataset.py``): a geometry from the
config, sampled by ``mindflow.data.Dataset`` into (domain, BC) batches."""

from copy import deepcopy

from diffsci.mindflow.data import Dataset
from diffsci.mindflow.geometry import (
    Cone,
    Cylinder,
    Disk,
    Interval,
    Pentagon,
    Polygon,
    Rectangle,
    Tetrahedron,
    Triangle,
    generate_sampling_config,
)

shape_factory = {
    "interval": Interval,
    "rectangle": Rectangle,
    "disk": Disk,
    "triangle": Triangle,
    "pentagon": Pentagon,
    "polygon": Polygon,
    "cylinder": Cylinder,
    "cone": Cone,
    "tetrahedron": Tetrahedron,
}


def create_dataset(geom_name, config, n_samps=None):
    """``(dataset, dim)``: batches ``(domain [B, dim], BC [B, dim])`` of the geometry
    ``geom_name``; ``n_samps`` makes one batch of that many points of each (the test set)."""
    if n_samps is not None:
        config = deepcopy(config)
        config["data"]["domain"]["size"] = n_samps
        config["data"]["BC"]["size"] = n_samps
        config["data"]["train"]["batch_size"] = n_samps
    # the BC entry also holds BC_type (read by train.py), which MindFlow's sampler ignores and
    # datasets' generate_sampling_config rejects as an unknown key: pass the sampling keys only
    data = {k: dict(v) for k, v in config["data"].items() if k in ("domain", "BC")}
    data["BC"].pop("BC_type", None)
    sampling_config = generate_sampling_config(data)
    if geom_name not in shape_factory:
        raise ValueError(
            f"unknown geometry {geom_name!r}; choose one of {', '.join(shape_factory)}"
        )
    region = shape_factory[geom_name](
        geom_name, **config["geometry"][geom_name], sampling_config=sampling_config
    )
    dataset = Dataset({region: ["domain", "BC"]})
    ds_create = dataset.create_dataset(
        batch_size=config["data"]["train"]["batch_size"],
        shuffle=True,
        prebatched_data=True,
        drop_remainder=True,
    )
    return ds_create, region.dim
