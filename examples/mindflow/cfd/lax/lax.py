"""Lax's shock tube with mindflow.cfd against Toro's exact Riemann solution.

Left state (rho, u, p) = (0.445, 0.698, 3.528), right (0.5, 0, 0.571), diaphragm at x = 0.5,
gamma = 1.4, t = 0.14 on [0, 1] (Lax 1954; MindFlow's applications/cfd/lax). The config is
MindFlow's (lax.yaml, WENO5 + Roe). Characteristic-wise reconstruction (our default) removes the
post-shock oscillations that MindFlow's component-wise reconstruction leaves; the script prints
the L1 error of the density cell averages for both and writes ``lax_out/lax.png``.

    python examples/mindflow/cfd/lax/lax.py                 # N=200, characteristic and conservative
    python examples/mindflow/cfd/lax/lax.py --tiny          # N=50, no plot
"""

import argparse
import pathlib

import numpy as np

import core
from mindflow import cfd, load_yaml_config, vis_1d
from mindflow.cfd import exact_riemann
from mindflow.verify import l1_error

HERE = pathlib.Path(__file__).resolve().parent
LEFT, RIGHT = (0.445, 0.698, 3.528), (0.5, 0.0, 0.571)


def lax_ic_1d(mesh_x):
    """Primitive initial state ``[5, nx, 1, 1]`` from the cell centres ``[nx, 1, 1]``."""
    x = mesh_x.asnumpy()
    pri = np.zeros((5, *x.shape))
    for k, j in ((0, 0), (1, 1), (4, 2)):
        pri[k] = np.where(x <= 0.5, LEFT[j], RIGHT[j])
    return core.tensor(pri)


def solve(
    nx,
    variables=None,
    reconstructor=None,
    riemann_computer=None,
    dtype=core.float64,
    progress=False,
):
    """Run Lax to t = 0.14; return ``(pri_var [5, nx, 1, 1] numpy, cell edges, config)``."""
    config = load_yaml_config(HERE / "lax.yaml")
    config["mesh"]["nx"] = nx
    flux = config["space_solver"]["convective_flux"]
    for key, value in (
        ("reconstructor", reconstructor),
        ("riemann_computer", riemann_computer),
        ("reconstruction_variables", variables),
    ):
        if value is not None:
            flux[key] = value
    simulator = cfd.Simulator(config)
    mesh_x, _, _ = simulator.mesh_info.mesh_xyz(dtype)
    con_var = cfd.cal_con_var(lax_ic_1d(mesh_x).astype(dtype), simulator.material)
    con_var = simulator.run(con_var, progress=progress)
    pri_var = cfd.cal_pri_var(con_var, simulator.material).asnumpy().astype(np.float64)
    return pri_var, np.asarray(simulator.mesh_info.cell_edges(0)), config


def exact(t, component):
    """Exact Lax solution of one primitive component (0 rho, 1 u, 2 p) as a function of x."""
    return lambda x: exact_riemann(LEFT, RIGHT, 1.4, x, t, 0.5)[component]


def main(
    nx=200,
    tiny=False,
    variables=("characteristic", "conservative"),
    out=None,
    plot=None,
    verbose=True,
):
    """Run Lax with each reconstruction variable set; return the states and L1 errors.

    Args:
        nx (int): cells (``tiny``: 50).
        tiny (bool): small grid, no plot (what the test suite runs).
        variables (tuple): ``reconstruction_variables`` to compare; the first is plotted.
        out (str): folder for ``lax.png`` (default ``lax_out/`` next to this script).
        plot (bool): write the plot (default: not tiny).
        verbose (bool): print the errors.

    Returns:
        dict: ``errors[variables] = {"rho", "u", "p"}`` (L1 of cell averages), ``pri_var``
        per variable set, ``x`` (cell centres).
    """
    if tiny:
        nx = 50
    if plot is None:
        plot = not tiny
    errors, states = {}, {}
    for var in variables:
        pri_var, edges, config = solve(nx, variables=var, progress=verbose and not tiny)
        t = config["runtime"]["end_time"]
        errors[var] = {
            name: l1_error(pri_var[k, :, 0, 0], exact(t, j), edges)
            for name, k, j in (("rho", 0, 0), ("u", 1, 1), ("p", 4, 2))
        }
        states[var] = pri_var
        if verbose:
            flux = config["space_solver"]["convective_flux"]
            e = errors[var]
            print(
                f"Lax N={nx} {flux['reconstructor']} ({var}) + {flux['riemann_computer']} "
                f"to t={t}: L1(rho) = {e['rho']:.3e}, L1(u) = {e['u']:.3e}, "
                f"L1(p) = {e['p']:.3e}"
            )
    x = 0.5 * (edges[1:] + edges[:-1])
    if plot:
        folder = pathlib.Path(out) if out else HERE / "lax_out"
        folder.mkdir(parents=True, exist_ok=True)
        x_ref = np.linspace(0.0, 1.0, 2001)
        rho_ref, u_ref, p_ref = exact_riemann(LEFT, RIGHT, 1.4, x_ref, t, 0.5)
        vis_1d(
            states[variables[0]],
            str(folder / "lax.png"),
            x=x,
            reference=(x_ref, rho_ref, u_ref, p_ref),
        )
    return {"errors": errors, "pri_var": states, "x": x}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nx", type=int, default=200)
    parser.add_argument("--out", default=None)
    parser.add_argument("--tiny", action="store_true", help="N=50, no plot")
    args = parser.parse_args()
    main(nx=args.nx, tiny=args.tiny, out=args.out)
