"""Toro's 123 problem (near vacuum) with the positivity limiter, against the exact solution.

Left state (rho, u, p) = (1, -2, 0.4), right (1, 2, 0.4), diaphragm at x = 0.5, gamma = 1.4,
t = 0.15 on [0, 1] (Toro, Riemann Solvers, 3rd ed., test 2 of sec. 4.3.3): two strong
rarefactions leave a middle state with density and pressure near 0.002. With
``positivity: true`` (toro123.yaml) density and pressure stay positive at every Runge-Kutta
stage; the script steps the stages itself through the public pieces (``Simulator.compute_rhs``,
``Simulator.integrator.integrate``, ``RunTime``) to record their minima, prints them and the L1
error of the density cell averages, and writes ``<out-dir>/toro123.png`` (default
``./toro123_out``).

    python examples/mindflow/cfd/toro123/toro123.py           # N=100
    python examples/mindflow/cfd/toro123/toro123.py --tiny    # N=50, no plot
"""

import pathlib
import sys

import numpy as np

from diffsci import core
from diffsci.mindflow import cfd, load_yaml_config
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # examples/mindflow/cfd: _common
import _common  # noqa: E402

LEFT, RIGHT = (1.0, -2.0, 0.4), (1.0, 2.0, 0.4)


def run_with_stage_minima(simulator, con_var, end_time=None, jit=True):
    """The CFL time loop, stage by stage, recording min density and pressure of every stage.

    Args:
        simulator (Simulator): the solver.
        con_var (Tensor): initial ``[5, nx, ny, nz]`` conservative state.
        end_time (float): overrides the config's.
        jit (bool): compile ``compute_rhs`` with ``core.jit``.

    Returns:
        ``(con_var, minima)`` with ``minima`` a numpy array ``[stages, 2]`` of
        (min rho, min p) after every stage of every step.
    """
    runtime_cfg = dict(simulator.config["runtime"])
    if end_time is not None:
        runtime_cfg["end_time"] = end_time
    runtime = cfd.RunTime(runtime_cfg, simulator.mesh_info, simulator.material)
    rhs_fn = core.jit(simulator.compute_rhs) if jit else simulator.compute_rhs
    integrator = simulator.integrator
    minima = []
    pri_var = cfd.cal_pri_var(con_var, simulator.material)
    while runtime.time_loop(pri_var):
        runtime.compute_timestep(pri_var)
        dt = core.tensor(runtime.timestep, dtype=con_var.dtype)
        init_con_var = con_var
        for stage in range(integrator.number_of_stages):
            con_var = integrator.integrate(con_var, init_con_var, rhs_fn(con_var), dt, stage)
            pri = cfd.cal_pri_var(con_var, simulator.material).asnumpy()
            minima.append((pri[0].min(), pri[4].min()))
        runtime.advance()
        pri_var = cfd.cal_pri_var(con_var, simulator.material)
    simulator.last_runtime = runtime
    return con_var, np.asarray(minima)


def main(
    nx=100,
    tiny=False,
    positivity=True,
    out_dir=None,
    plot=None,
    verbose=True,
    dtype=core.float64,
):
    """Run the 123 problem; return the final state, the stage minima and the L1 errors.

    Args:
        nx (int): cells (``tiny``: 50).
        tiny (bool): small grid, no plot (what the test suite runs).
        positivity (bool): the positivity limiters: Zhang-Shu on face values, then Hu-Adams-Shu on
            fluxes (toro123.yaml has them on).
        out_dir (str): folder for ``toro123.png`` (default ``toro123_out/`` in the working
            directory).
        plot (bool): write the plot (default: not tiny).
        verbose (bool): print the minima and errors.
        dtype: float64 or float32.
    """
    if tiny:
        nx = 50
    if plot is None:
        plot = not tiny
    config = load_yaml_config(HERE / "toro123.yaml")
    config["mesh"]["nx"] = nx
    config["space_solver"]["convective_flux"]["positivity"] = positivity
    simulator = cfd.Simulator(config)
    con_var = cfd.riemann_initial_state(
        simulator.mesh_info, simulator.material, LEFT, RIGHT, 0.5, dtype=dtype
    )
    con_var, minima = run_with_stage_minima(simulator, con_var)
    pri_var, edges = _common.final_primitives(con_var, simulator)

    t = config["runtime"]["end_time"]
    errors = _common.exact_l1_errors(pri_var, edges, LEFT, RIGHT, t)
    min_rho, min_p = minima.min(axis=0)
    if verbose:
        print(
            f"Toro 123 N={nx} positivity={positivity}, {simulator.last_runtime.step} steps "
            f"({len(minima)} stages) to t={t}: min rho = {min_rho:.3e}, min p = {min_p:.3e} "
            f"over all stages; {_common.format_l1(errors)}"
        )
    x = _common.centres(edges)
    if plot:
        folder = _common.out_folder(out_dir, "toro123")
        _common.plot_against_exact(pri_var, folder / "toro123.png", x, LEFT, RIGHT, t)
    return {"pri_var": pri_var, "minima": minima, "errors": errors, "x": x}


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nx", type=int, default=100)
    parser.add_argument("--no-positivity", action="store_true")
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("toro123"))
    parser.add_argument("--tiny", action="store_true", help="N=50, no plot")
    args = parser.parse_args()
    main(nx=args.nx, tiny=args.tiny, positivity=not args.no_positivity, out_dir=args.out_dir)
