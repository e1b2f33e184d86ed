"""Couette start-up flow with mindflow.cfd's viscous flux against the series solution.

Gas at rest (rho = p = 1) between a fixed wall at y = 0 and a wall that starts moving with
u = U = 0.1 at y = h = 1 (periodic in x); nu = mu / rho = 0.1. The x-velocity obeys
u_t = nu u_yy, whose solution is

    u(y, t) = U y / h - (2 U / pi) sum_n sin(n pi (1 - y / h)) exp(-n^2 pi^2 nu t / h^2) / n.

The config is MindFlow's (couette.yaml: 4 x 100 cells, fixed dt = 2e-4, RK3, viscous flux
only). The script prints the relative L2 error of u at t = 0.005, 0.05, 0.5 and 5 and writes
``<out-dir>/couette.png`` (profiles against the series; default ``./couette_out``).

    python examples/mindflow/cfd/couette/couette.py           # ny = 100 to t = 5 (25000 steps)
    python examples/mindflow/cfd/couette/couette.py --tiny    # ny = 20 to t = 0.5, no plot
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


def couette_ic_2d(mesh_x):
    """Primitive state at rest ``[5, nx, ny, 1]``: rho = p = 1, u = v = w = 0."""
    shape = mesh_x.shape
    pri = np.zeros((5, *shape))
    pri[0] = 1.0
    pri[4] = 1.0
    return core.tensor(pri)


def couette_series(y, t, nu=0.1, h=1.0, u_wall=0.1, terms=2000):
    """Series solution of the Couette start-up problem (float64 numpy)."""
    y = np.asarray(y, dtype=np.float64)
    n = np.arange(1, terms + 1, dtype=np.float64)[:, None]
    decay = np.exp(-(n**2) * np.pi**2 * nu * t / h**2)
    series = np.sum(np.sin(n * np.pi * (1.0 - y[None] / h)) * decay / n, axis=0)
    return u_wall * y / h - 2.0 * u_wall / np.pi * series


def rel_l2(u, u_ref):
    return float(np.sqrt(np.sum((u - u_ref) ** 2) / np.sum(u_ref**2)))


def main(
    tiny=False, ny=None, end_time=None, timestep=None, out_dir=None, plot=True, verbose=True
):
    """Run the Couette start-up; return the errors at the checkpoint times.

    Args:
        tiny (bool): ny = 20, t = 0.5 (a second), no plot.
        ny (int), end_time (float), timestep (float): override couette.yaml.
        out_dir (str): folder for ``couette.png`` (default ``couette_out/`` in the working
            directory).
        plot (bool): write the plot (off when tiny).
        verbose (bool): print the errors.

    Returns:
        dict with ``times``, ``errors`` (relative L2 of u per time), ``error`` (the last),
        ``y``, ``u`` (profiles per time), ``steps``.
    """
    config = load_yaml_config(HERE / "couette.yaml")
    if tiny:
        ny = ny or 20
        end_time = end_time or 0.5
        plot = False
    if ny is not None:
        config["mesh"]["ny"] = ny
    if end_time is not None:
        config["runtime"]["end_time"] = end_time
    if timestep is not None:
        config["runtime"]["timestep"] = timestep
    end_time = config["runtime"]["end_time"]
    ny = config["mesh"]["ny"]
    mat = config["material"]
    nu = mat["dynamic_viscosity"]  # rho = 1
    u_wall = config["boundary_conditions"]["y_max"]["velocity_x"]
    dt = config["runtime"]["timestep"]

    simulator = cfd.Simulator(config)
    mesh_x, mesh_y, _ = simulator.mesh_info.mesh_xyz(core.float64)
    y = mesh_y.asnumpy()[0, :, 0]
    con_var = cfd.cal_con_var(couette_ic_2d(mesh_x), simulator.material)

    checkpoints = [t for t in (0.005, 0.05, 0.5, 5.0) if t <= end_time + 0.5 * dt]
    if not checkpoints or abs(checkpoints[-1] - end_time) > 0.5 * dt:
        checkpoints.append(end_time)
    times, errors, profiles, steps, t_now = [], [], [], 0, 0.0
    for t in checkpoints:
        con_var = simulator.run(con_var, end_time=t - t_now, progress=verbose)
        steps += simulator.last_runtime.step
        t_now = t
        pri = cfd.cal_pri_var(con_var, simulator.material).asnumpy()
        u = pri[1].mean(axis=(0, 2))  # x-periodic: every column is the same
        err = rel_l2(u, couette_series(y, t, nu=nu, u_wall=u_wall))
        times.append(t)
        errors.append(err)
        profiles.append(u)
        if verbose:
            print(f"Couette ny={ny} t={t:g}: rel-L2(u) = {err:.3e}")
    if plot:
        plt = _common.pyplot()
        folder = _common.out_folder(out_dir, "couette")
        y_ref = np.linspace(0.0, 1.0, 201)
        fig, ax = plt.subplots(figsize=(5, 4))
        for t, u in zip(times, profiles):
            (line,) = ax.plot(y, u, label=f"mindflow.cfd t={t:g}")
            ax.plot(
                y_ref,
                couette_series(y_ref, t, nu=nu, u_wall=u_wall),
                "o",
                ms=2,
                markevery=8,
                color=line.get_color(),
                label=f"series t={t:g}",
            )
        ax.set_xlabel("y")
        ax.set_ylabel("velocity-x")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(folder / "couette.png", dpi=120)
        plt.close(fig)
    return {
        "times": times,
        "errors": errors,
        "error": errors[-1],
        "y": y,
        "u": profiles,
        "steps": steps,
    }


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="ny = 20 to t = 0.5, no plot")
    parser.add_argument("--ny", type=int, default=None)
    parser.add_argument("--end-time", type=float, default=None)
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("couette"))
    args = parser.parse_args()
    main(tiny=args.tiny, ny=args.ny, end_time=args.end_time, out_dir=args.out_dir)
