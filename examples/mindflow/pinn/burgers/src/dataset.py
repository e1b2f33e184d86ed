"""Training points by online sampling and the test set on Raissi's grid.

MindFlow's ``create_test_dataset`` reads ``Burgers.npz`` (Raissi et al.'s file, downloaded
separately); when that file is missing we write it from the Cole-Hopf solution
(``mindflow.verify.burgers_cole_hopf``) on the same grid and with the same keys: ``x [256, 1]``
in [-1, 1], ``t [100, 1]`` = 0, 0.01, ..., 0.99, ``usol [256, 100]``.
"""

import os

import numpy as np

from diffsci.core import Tensor
from diffsci.core import dtype as mstype
from diffsci.core.atomic import atomic_path
from diffsci.mindflow.data import Dataset
from diffsci.mindflow.geometry import GeometryWithTime, Interval, TimeDomain, generate_sampling_config
from diffsci.mindflow.verify import burgers_cole_hopf

TEST_FILE = "Burgers.npz"


def create_training_dataset(config):
    """A ``mindflow.data.Dataset`` over the space-time rectangle with the yaml's ``domain``,
    ``IC`` and ``BC`` parts (columns: domain points, IC points, BC points, BC normals)."""
    geometry = config["geometry"]
    timeline = TimeDomain("time", geometry["time_min"], geometry["time_max"])
    line = Interval("domain", geometry["coord_min"], geometry["coord_max"])
    region = GeometryWithTime(line, timeline)
    region.set_sampling_config(generate_sampling_config(config["data"]))
    return Dataset({region: ["domain", "IC", "BC"]})


def write_reference(path):
    """Write Raissi's ``Burgers.npz`` layout from the Cole-Hopf solution; return the path."""
    x = np.linspace(-1.0, 1.0, 256)[:, None]  # [256, 1]
    t = (np.arange(100) * 0.01)[:, None]  # [100, 1]
    usol = burgers_cole_hopf(x, t.T)  # [256, 100]
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, x=x, t=t, usol=usol)
    return path


def create_test_dataset(test_dataset_path):
    """Test inputs ``Tensor [25600, 2]`` (x, t; x fastest) float32 and labels ``[25600, 1]``."""
    path = os.path.join(test_dataset_path, TEST_FILE)
    if not os.path.exists(path):
        write_reference(path)
    data = np.load(path)
    x, t, u = data["x"], data["t"], data["usol"].T  # u [100, 256]
    xx, tt = np.meshgrid(x, t)  # [100, 256]
    inputs = Tensor(np.stack([xx.ravel(), tt.ravel()], axis=1), mstype.float32)
    return inputs, u.reshape(-1, 1)
