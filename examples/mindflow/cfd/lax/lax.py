"""Lax's shock tube with mindflow.cfd against Toro's exact Riemann solution.

Left state (rho, u, p) = (0.445, 0.698, 3.528), right (0.5, 0, 0.571), diaphragm at x = 0.5,
gamma = 1.4, t = 0.14 on [0, 1] (Lax 1954; MindFlow's applications/cfd/lax). The config is
MindFlow's (lax.yaml, WENO5 + Roe). Characteristic-wise reconstruction (our default) removes the
post-shock oscillations that MindFlow's component-wise reconstruction leaves; the script prints
the L1 error of the density cell averages for both and writes ``<out-dir>/lax.png``
(default ``./lax_out``).

    python examples/mindflow/cfd/lax/lax.py                 # N=200, characteristic and conservative
    python examples/mindflow/cfd/lax/lax.py --tiny          # N=50, no plot
"""

import pathlib
import sys

from diffsci import core
from diffsci.mindflow import cfd, load_yaml_config
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # examples/mindflow/cfd: _common
import _common  # noqa: E402

LEFT, RIGHT = (0.445, 0.698, 3.528), (0.5, 0.0, 0.571)


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
    _common.override_convective_flux(config, reconstructor, riemann_computer, variables)
    simulator = cfd.Simulator(config)
    con_var = cfd.riemann_initial_state(
        simulator.mesh_info, simulator.material, LEFT, RIGHT, 0.5, dtype=dtype
    )
    con_var = simulator.run(con_var, progress=progress)
    pri_var, edges = _common.final_primitives(con_var, simulator)
    return pri_var, edges, config


def main(
    nx=200,
    tiny=False,
    variables=("characteristic", "conservative"),
    out_dir=None,
    plot=None,
    verbose=True,
):
    """Run Lax with each reconstruction variable set; return the states and L1 errors.

    Args:
        nx (int): cells (``tiny``: 50).
        tiny (bool): small grid, no plot (what the test suite runs).
        variables (tuple): ``reconstruction_variables`` to compare; the first is plotted.
        out_dir (str): folder for ``lax.png`` (default ``lax_out/`` in the working directory).
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
        errors[var] = _common.exact_l1_errors(pri_var, edges, LEFT, RIGHT, t)
        states[var] = pri_var
        if verbose:
            flux = config["space_solver"]["convective_flux"]
            print(
                f"Lax N={nx} {flux['reconstructor']} ({var}) + {flux['riemann_computer']} "
                f"to t={t}: {_common.format_l1(errors[var])}"
            )
    x = _common.centres(edges)
    if plot:
        folder = _common.out_folder(out_dir, "lax")
        _common.plot_against_exact(states[variables[0]], folder / "lax.png", x, LEFT, RIGHT, t)
    return {"errors": errors, "pri_var": states, "x": x}


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nx", type=int, default=200)
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("lax"))
    parser.add_argument("--tiny", action="store_true", help="N=50, no plot")
    args = parser.parse_args()
    main(nx=args.nx, tiny=args.tiny, out_dir=args.out_dir)
