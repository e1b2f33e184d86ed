"""Sod's shock tube with mindflow.cfd against Toro's exact Riemann solution.

Left state (rho, u, p) = (1, 0, 1), right (0.125, 0, 0.1), diaphragm at x = 0.5, gamma = 1.4,
t = 0.2 on [0, 1] (Sod 1978; Toro, Riemann Solvers, 3rd ed., test 1 of sec. 4.3.3). The config
is MindFlow's (sod.yaml); the script prints the L1 error of the density cell averages and
writes ``<out-dir>/sod.png`` (density, velocity, pressure against the exact solution; default
``./sod_out``).

    python examples/mindflow/cfd/sod/sod.py                       # N=100, WENO5 + HLLC
    python examples/mindflow/cfd/sod/sod.py --reconstructor WENO5-Z --riemann-computer Roe
    python examples/mindflow/cfd/sod/sod.py --tiny                # N=40, no plot
"""

import pathlib
import sys

from diffsci import core
from diffsci.mindflow import cfd, load_yaml_config
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # examples/mindflow/cfd: _common
import _common  # noqa: E402

LEFT, RIGHT = (1.0, 0.0, 1.0), (0.125, 0.0, 0.1)


def main(
    nx=100,
    reconstructor=None,
    riemann_computer=None,
    variables=None,
    out_dir=None,
    plot=True,
    verbose=True,
    dtype=core.float64,
):
    """Run Sod to t = 0.2; return a dict with the final state and its errors.

    Args:
        nx (int): cells.
        reconstructor, riemann_computer, variables (str): override sod.yaml.
        out_dir (str): folder for ``sod.png`` (default ``sod_out/`` in the working directory).
        plot (bool): write the plot.
        verbose (bool): print the errors.
        dtype: float64 or float32.
    """
    config = load_yaml_config(HERE / "sod.yaml")
    config["mesh"]["nx"] = nx
    flux = _common.override_convective_flux(config, reconstructor, riemann_computer, variables)

    simulator = cfd.Simulator(config)
    con_var = cfd.riemann_initial_state(
        simulator.mesh_info, simulator.material, LEFT, RIGHT, 0.5, dtype=dtype
    )
    con_var = simulator.run(con_var, progress=verbose)
    pri_var, edges = _common.final_primitives(con_var, simulator)

    t = config["runtime"]["end_time"]
    errors = _common.exact_l1_errors(pri_var, edges, LEFT, RIGHT, t)
    if verbose:
        print(
            f"Sod N={nx} {flux['reconstructor']} ({flux.get('reconstruction_variables')}) + "
            f"{flux['riemann_computer']}, {simulator.last_runtime.step} steps to t={t}: "
            f"{_common.format_l1(errors)}"
        )
    x = _common.centres(edges)
    if plot:
        folder = _common.out_folder(out_dir, "sod")
        _common.plot_against_exact(pri_var, folder / "sod.png", x, LEFT, RIGHT, t)
    return {
        "pri_var": pri_var,
        "errors": errors,
        "steps": simulator.last_runtime.step,
        "x": x,
    }


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nx", type=int, default=100)
    parser.add_argument("--reconstructor", default=None)
    parser.add_argument("--riemann-computer", default=None)
    parser.add_argument("--variables", default=None)
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("sod"))
    parser.add_argument("--tiny", action="store_true", help="N=40, no plot")
    args = parser.parse_args()
    main(
        nx=40 if args.tiny else args.nx,
        reconstructor=args.reconstructor,
        riemann_computer=args.riemann_computer,
        variables=args.variables,
        out_dir=args.out_dir,
        plot=not args.tiny,
    )
