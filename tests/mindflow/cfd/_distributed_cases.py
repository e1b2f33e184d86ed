"""Cases shared by test_distributed.py (serial references) and _distributed_worker.py (run
under mpiexec): small Sod and 2D Riemann (Lax & Liu configuration 3) problems."""

import pathlib

import numpy as np

from diffsci import core
from diffsci.mindflow import cfd, load_yaml_config

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples" / "mindflow" / "cfd"
SOD = ((1.0, 0.0, 1.0), (0.125, 0.0, 0.1))
# (rho, u, v, p) in the quadrants x>1/2 y>1/2, x<1/2 y>1/2, x<1/2 y<1/2, x>1/2 y<1/2
LAX_LIU_3 = ((1.5, 0.0, 0.0, 1.5), (0.5323, 1.206, 0.0, 0.3), (0.138, 1.206, 1.206, 0.029),
             (0.5323, 0.0, 1.206, 0.3))  # fmt: skip


def sod_config(nx=32, end_time=0.05):
    config = load_yaml_config(EXAMPLES / "sod" / "sod.yaml")
    config["mesh"]["nx"] = nx
    config["runtime"]["end_time"] = end_time
    return config


def riemann2d_config(nx=16, ny=8, end_time=0.06):
    config = load_yaml_config(EXAMPLES / "riemann2d" / "riemann2d.yaml")
    config["mesh"].update(nx=nx, ny=ny)
    config["runtime"]["end_time"] = end_time
    return config


def sod_state(mesh_info, material):
    return cfd.riemann_initial_state(mesh_info, material, *SOD, 0.5, dtype=core.float64)


def riemann2d_state(mesh_info, material):
    x, y, _ = (t.asnumpy() for t in mesh_info.mesh_xyz(core.float64))
    pri = np.zeros((5, *x.shape))
    quadrant = np.where(x > 0.5, np.where(y > 0.5, 0, 3), np.where(y > 0.5, 1, 2))
    for q, (rho, u, v, p) in enumerate(LAX_LIU_3):
        for k, value in ((0, rho), (1, u), (2, v), (4, p)):
            pri[k][quadrant == q] = value
    return cfd.utils.cal_con_var(core.tensor(pri), material)


def periodic_config():
    """Sod's states on a periodic x axis (the ranks form a ring; 2 cuts: x = 1/2 and x = 0)."""
    config = sod_config(nx=32, end_time=0.05)
    config["boundary_conditions"]["x_min"] = {"type": "Periodic"}
    config["boundary_conditions"]["x_max"] = {"type": "Periodic"}
    return config


CASES = {
    "sod": (sod_config, sod_state),
    "riemann2d": (riemann2d_config, riemann2d_state),
    "periodic": (periodic_config, sod_state),
}


def weights(shape):
    """Fixed random weights of the gradient checks' loss ``sum(w * sin(u))``."""
    return core.tensor(np.random.default_rng(7).standard_normal(shape))
