"""Plumbing the mindflow.cfd example scripts share (not part of the library).

Each script puts this folder on ``sys.path`` and imports it, so it runs both as
``python examples/mindflow/cfd/<case>/<case>.py`` and through the tests' file loader.
"""

import pathlib

import numpy as np

from diffsci.mindflow import cfd, vis_1d
from diffsci.mindflow.cfd import exact_riemann
from diffsci.mindflow.verify import l1_error
from diffsci.scripts import default_out_dir

# (name, component of pri_var [5, ...], component of exact_riemann's (rho, u, p))
PRIMITIVES = (("rho", 0, 0), ("u", 1, 1), ("p", 4, 2))


def override_convective_flux(config, reconstructor=None, riemann_computer=None, variables=None):
    """Set the ``space_solver.convective_flux`` keys that are not None; return that section."""
    flux = config["space_solver"]["convective_flux"]
    for key, value in (
        ("reconstructor", reconstructor),
        ("riemann_computer", riemann_computer),
        ("reconstruction_variables", variables),
    ):
        if value is not None:
            flux[key] = value
    return flux


def final_primitives(con_var, simulator):
    """``pri_var [5, nx, ny, nz]`` as float64 numpy and the x cell edges ``[nx + 1]``."""
    pri_var = cfd.cal_pri_var(con_var, simulator.material).asnumpy().astype(np.float64)
    return pri_var, np.asarray(simulator.mesh_info.cell_edges(0))


def centres(edges):
    """Cell centres ``[n]`` from the cell edges ``[n + 1]``."""
    return 0.5 * (edges[1:] + edges[:-1])


def exact_l1_errors(pri_var, edges, left, right, t, x0=0.5, gamma=1.4):
    """L1 errors of the cell averages of rho, u, p against the exact Riemann solution.

    Args:
        pri_var (ndarray): ``[5, nx, 1, 1]``.
        edges (ndarray): ``[nx + 1]`` cell edges.
        left, right: ``(rho, u, p)``; ``t`` the time, ``x0`` the diaphragm.

    Returns:
        dict: ``{"rho", "u", "p"}`` -> float.
    """

    def exact(component):
        return lambda x: exact_riemann(left, right, gamma, x, t, x0)[component]

    return {name: l1_error(pri_var[k, :, 0, 0], exact(j), edges) for name, k, j in PRIMITIVES}


def format_l1(errors):
    """``L1(rho) = ..., L1(u) = ..., L1(p) = ...``."""
    return ", ".join(f"L1({name}) = {errors[name]:.3e}" for name, _, _ in PRIMITIVES)


def out_folder(out_dir, name):
    """The output folder (``out_dir``, or ``<name>_out/`` in the current working directory),
    created."""
    folder = pathlib.Path(out_dir or default_out_dir(name))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def plot_against_exact(pri_var, path, x, left, right, t, x0=0.5, gamma=1.4, x_range=(0.0, 1.0)):
    """``vis_1d`` of ``pri_var [5, nx, 1, 1]`` at centres ``x`` with the exact solution."""
    x_ref = np.linspace(*x_range, 2001)
    rho_ref, u_ref, p_ref = exact_riemann(left, right, gamma, x_ref, t, x0)
    vis_1d(pri_var, str(path), x=x, reference=(x_ref, rho_ref, u_ref, p_ref))


def pyplot():
    """``matplotlib.pyplot`` on the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
