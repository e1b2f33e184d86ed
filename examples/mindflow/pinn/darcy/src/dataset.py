"""Data of MindFlow's Darcy case (its ``src/dataset.py``): the unit square on a grid for
training, the exact solution on an ``axis_size^2`` grid for evaluation."""

import numpy as np

from diffsci.mindflow.data import Dataset
from diffsci.mindflow.geometry import Rectangle, generate_sampling_config


def exact_solution(x, y):
    """``(u, v, p)`` of the Darcy problem at arrays ``x, y``."""
    two_pi = 2 * np.pi
    u = -two_pi * np.cos(two_pi * x) * np.cos(two_pi * y)
    v = two_pi * np.sin(two_pi * x) * np.sin(two_pi * y)
    p = np.sin(two_pi * x) * np.cos(two_pi * y)
    return u, v, p


def create_test_dataset(config):
    """``(inputs [n^2, 2], label [n^2, 3])`` float32 on the ``n = axis_size`` grid; row ``i * n +
    j`` is the point ``(axis[i], axis[j])`` (MindFlow's order)."""
    geo = config["geometry"]
    n = geo["axis_size"]
    axis_x = np.linspace(geo["coord_min"][0], geo["coord_max"][0], num=n, endpoint=True)
    axis_y = np.linspace(geo["coord_min"][1], geo["coord_max"][1], num=n, endpoint=True)
    mesh_x, mesh_y = np.meshgrid(axis_x, axis_y, indexing="ij")
    input_data = np.stack([mesh_x.ravel(), mesh_y.ravel()], axis=1).astype(np.float32)
    label = np.stack(exact_solution(mesh_x.ravel(), mesh_y.ravel()), axis=1).astype(np.float32)
    return input_data, label


def create_training_dataset(config, name):
    """A ``mindflow.data.Dataset`` of the rectangle ``name`` with parts domain and BC."""
    flow_region = Rectangle(
        name,
        coord_min=config["geometry"]["coord_min"],
        coord_max=config["geometry"]["coord_max"],
        sampling_config=generate_sampling_config(config["data"]),
    )
    return Dataset({flow_region: ["domain", "BC"]})
