"""Sod's shock tube with mindflow.cfd against Toro's exact Riemann solution.

Left state (rho, u, p) = (1, 0, 1), right (0.125, 0, 0.1), diaphragm at x = 0.5, gamma = 1.4,
t = 0.2 on [0, 1] (Sod 1978; Toro, Riemann Solvers, 3rd ed., test 1 of sec. 4.3.3). The config
is MindFlow's (sod.yaml); the script prints the L1 error of the density cell averages and
writes ``sod_out/sod.png`` (density, velocity, pressure against the exact solution).

    python examples/mindflow/cfd/sod/sod.py                       # N=100, WENO5 + HLLC
    python examples/mindflow/cfd/sod/sod.py --reconstructor WENO5-Z --riemann_computer Roe
    python examples/mindflow/cfd/sod/sod.py --tiny                # N=40, no plot
"""

import argparse
import pathlib

import numpy as np

import core
from mindflow import cfd, load_yaml_config, vis_1d
from mindflow.cfd import exact_riemann
from mindflow.verify import l1_error

HERE = pathlib.Path(__file__).resolve().parent
LEFT, RIGHT = (1.0, 0.0, 1.0), (0.125, 0.0, 0.1)


def sod_ic_1d(mesh_x):
    """Primitive initial state ``[5, nx, 1, 1]`` from the cell centres ``[nx, 1, 1]``."""
    x = mesh_x.asnumpy()
    pri = np.zeros((5, *x.shape))
    pri[0] = np.where(x < 0.5, LEFT[0], RIGHT[0])
    pri[4] = np.where(x < 0.5, LEFT[2], RIGHT[2])
    return core.tensor(pri)


def main(
    nx=100,
    reconstructor=None,
    riemann_computer=None,
    variables=None,
    out=None,
    plot=True,
    verbose=True,
    dtype=core.float64,
):
    """Run Sod to t = 0.2; return a dict with the final state and its errors.

    Args:
        nx (int): cells.
        reconstructor, riemann_computer, variables (str): override sod.yaml.
        out (str): folder for ``sod.png`` (default: ``sod_out/`` next to this script).
        plot (bool): write the plot.
        verbose (bool): print the errors.
        dtype: float64 or float32.
    """
    config = load_yaml_config(HERE / "sod.yaml")
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
    con_var = cfd.cal_con_var(sod_ic_1d(mesh_x).astype(dtype), simulator.material)
    con_var = simulator.run(con_var, progress=verbose)
    pri_var = cfd.cal_pri_var(con_var, simulator.material).asnumpy().astype(np.float64)

    t = config["runtime"]["end_time"]
    edges = np.asarray(simulator.mesh_info.cell_edges(0))

    def exact(component):
        return lambda x: exact_riemann(LEFT, RIGHT, 1.4, x, t, 0.5)[component]

    errors = {
        name: l1_error(pri_var[k, :, 0, 0], exact(j), edges)
        for name, k, j in (("rho", 0, 0), ("u", 1, 1), ("p", 4, 2))
    }
    if verbose:
        print(
            f"Sod N={nx} {flux['reconstructor']} ({flux.get('reconstruction_variables')}) + "
            f"{flux['riemann_computer']}, {simulator.last_runtime.step} steps to t={t}: "
            f"L1(rho) = {errors['rho']:.3e}, L1(u) = {errors['u']:.3e}, "
            f"L1(p) = {errors['p']:.3e}"
        )
    if plot:
        folder = pathlib.Path(out) if out else HERE / "sod_out"
        folder.mkdir(parents=True, exist_ok=True)
        x_ref = np.linspace(0.0, 1.0, 2001)
        rho_ref, u_ref, p_ref = exact_riemann(LEFT, RIGHT, 1.4, x_ref, t, 0.5)
        vis_1d(
            pri_var,
            str(folder / "sod.png"),
            x=0.5 * (edges[1:] + edges[:-1]),
            reference=(x_ref, rho_ref, u_ref, p_ref),
        )
    return {
        "pri_var": pri_var,
        "errors": errors,
        "steps": simulator.last_runtime.step,
        "x": 0.5 * (edges[1:] + edges[:-1]),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nx", type=int, default=100)
    parser.add_argument("--reconstructor", default=None)
    parser.add_argument("--riemann_computer", default=None)
    parser.add_argument("--variables", default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--tiny", action="store_true", help="N=40, no plot")
    args = parser.parse_args()
    main(
        nx=40 if args.tiny else args.nx,
        reconstructor=args.reconstructor,
        riemann_computer=args.riemann_computer,
        variables=args.variables,
        out=args.out,
        plot=not args.tiny,
    )
