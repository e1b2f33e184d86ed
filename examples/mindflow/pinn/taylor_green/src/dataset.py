"""Data of MindFlow's 2-D Taylor-Green case (its ``src/dataset.py``): space-time sampling for
training, the exact solution on a grid for evaluation."""

import numpy as np

from diffsci.mindflow.data import Dataset
from diffsci.mindflow.geometry import GeometryWithTime, Rectangle, TimeDomain, generate_sampling_config
from diffsci.mindflow.verify import taylor_green_2d


def create_test_dataset(config, n_x=100, n_t=10):
    """``(inputs [n_t, n_x, n_x, 3], label [n_t, n_x, n_x, 3])`` float32: points ``(x, y, t)``
    and the exact ``(u, v, p)`` (``nu = 1 / Re``)."""
    geo = config["geometry"]
    axis_x = np.linspace(geo["coord_min"][0], geo["coord_max"][0], num=n_x, endpoint=True)
    axis_y = np.linspace(geo["coord_min"][1], geo["coord_max"][1], num=n_x, endpoint=True)
    axis_t = np.linspace(geo["time_min"], geo["time_max"], num=n_t, endpoint=True)
    mesh_t, mesh_x, mesh_y = np.meshgrid(axis_t, axis_x, axis_y, indexing="ij")
    inputs = np.stack([mesh_x, mesh_y, mesh_t], axis=-1).astype(np.float32)
    nu = 1.0 / float(config["summary"]["Re"])
    label = np.stack(taylor_green_2d(mesh_x, mesh_y, mesh_t, nu=nu), axis=-1).astype(np.float32)
    return inputs, label


def create_training_dataset(config):
    """A ``mindflow.data.Dataset`` of the space-time box with parts domain, IC and BC."""
    geom_config = config["geometry"]
    time_interval = TimeDomain("time", geom_config["time_min"], geom_config["time_max"])
    spatial_region = Rectangle("rect", geom_config["coord_min"], geom_config["coord_max"])
    domain_region = GeometryWithTime(spatial_region, time_interval)
    domain_region.set_sampling_config(generate_sampling_config(config["data"]))
    return Dataset({domain_region: ["domain", "IC", "BC"]})
