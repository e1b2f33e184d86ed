"""2D Taylor-Green vortex: the kinetic-energy decay rate of mindflow.cfd's Navier-Stokes solver.

On the periodic square [0, 2 pi]^2 the incompressible solution

    u = U sin x cos y e^{-2 nu t},  v = -U cos x sin y e^{-2 nu t},
    p = p0 + rho U^2 / 4 (cos 2x + cos 2y) e^{-4 nu t}

has kinetic energy K(t) = K(0) e^{-4 nu t}. At low Mach number (p0 = 100, U = 1: Ma ~ 0.085)
the compressible solver (WENO5 + HLLC convective flux, fourth-order viscous flux, SSP-RK3)
should reproduce the rate 4 nu. The script fits log K(t) over the run, prints the measured
rate against 4 nu, and writes ``<out-dir>/taylor_green.png`` (K(t) and the vorticity; default
``./taylor_green_out``).

    python examples/mindflow/cfd/taylor_green/taylor_green.py           # 64^2 to t = 2
    python examples/mindflow/cfd/taylor_green/taylor_green.py --tiny    # 16^2, nu = 0.05, t = 0.2
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


def taylor_green_ic_2d(mesh_x, mesh_y, u0=1.0, rho0=1.0, p0=100.0):
    """Primitive state ``[5, nx, ny, 1]`` of the Taylor-Green vortex at t = 0."""
    x, y = mesh_x.asnumpy(), mesh_y.asnumpy()
    pri = np.zeros((5, *x.shape))
    pri[0] = rho0
    pri[1] = u0 * np.sin(x) * np.cos(y)
    pri[2] = -u0 * np.cos(x) * np.sin(y)
    pri[4] = p0 + rho0 * u0**2 / 4.0 * (np.cos(2.0 * x) + np.cos(2.0 * y))
    return core.tensor(pri)


def kinetic_energy(con_var, cell_area):
    """K = sum over cells of |rho u|^2 / (2 rho) * cell area (float64 numpy)."""
    c = np.asarray(con_var.asnumpy(), dtype=np.float64)
    return float(0.5 * np.sum((c[1] ** 2 + c[2] ** 2 + c[3] ** 2) / c[0]) * cell_area)


def main(
    tiny=False, n=None, end_time=None, nu=None, samples=8, out_dir=None, plot=True, verbose=True
):
    """Run the vortex; return the measured and exact kinetic-energy decay rates.

    Args:
        tiny (bool): 16^2, nu = 0.05, t = 0.2, no plot.
        n (int): cells per side; end_time (float); nu (float): mu (rho = 1). Override the YAML.
        samples (int): K is recorded at this many equal intervals for the fit.
        out_dir (str): folder for the plot (default ``taylor_green_out/`` in the working directory).
        plot (bool): write the plot (off when tiny).
        verbose (bool): print the rates.

    Returns:
        dict with ``rate`` (fitted -d log K / dt), ``exact_rate`` (4 nu), ``rel_error``,
        ``times``, ``energies``, ``steps``.
    """
    config = load_yaml_config(HERE / "taylor_green.yaml")
    if tiny:
        n, end_time, nu, plot = n or 16, end_time or 0.2, nu or 0.05, False
    if n is not None:
        config["mesh"]["nx"] = config["mesh"]["ny"] = n
    if end_time is not None:
        config["runtime"]["end_time"] = end_time
    if nu is not None:
        config["material"]["dynamic_viscosity"] = nu
    n = config["mesh"]["nx"]
    end_time = config["runtime"]["end_time"]
    nu = config["material"]["dynamic_viscosity"]  # rho0 = 1

    simulator = cfd.Simulator(config)
    mesh_x, mesh_y, _ = simulator.mesh_info.mesh_xyz(core.float64)
    con_var = cfd.cal_con_var(taylor_green_ic_2d(mesh_x, mesh_y), simulator.material)
    dx, dy = simulator.mesh_info.cell_sizes[:2]
    times, energies, steps = [0.0], [kinetic_energy(con_var, dx * dy)], 0
    for k in range(1, samples + 1):
        con_var = simulator.run(con_var, end_time=end_time / samples, progress=verbose)
        steps += simulator.last_runtime.step
        times.append(end_time * k / samples)
        energies.append(kinetic_energy(con_var, dx * dy))
    times, energies = np.array(times), np.array(energies)
    rate = -float(np.polyfit(times, np.log(energies), 1)[0])
    exact = 4.0 * nu
    rel = rate / exact - 1.0
    if verbose:
        print(
            f"Taylor-Green {n}^2 nu={nu:g} to t={end_time:g} ({steps} steps): "
            f"K decay rate {rate:.6f} vs 4 nu = {exact:.6f} (rel. error {rel:+.3%})"
        )
    if plot:
        plt = _common.pyplot()
        folder = _common.out_folder(out_dir, "taylor_green")
        pri = cfd.cal_pri_var(con_var, simulator.material).asnumpy()[:, :, :, 0]
        vort = np.gradient(pri[2], dx, axis=0) - np.gradient(pri[1], dy, axis=1)
        fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(9, 4))
        t_ref = np.linspace(0.0, end_time, 101)
        ax0.plot(t_ref, energies[0] * np.exp(-exact * t_ref), label="K(0) exp(-4 nu t)")
        ax0.plot(times, energies, "o", label="mindflow.cfd")
        ax0.set_xlabel("t")
        ax0.set_ylabel("kinetic energy")
        ax0.legend()
        im = ax1.imshow(vort.T, origin="lower", extent=(0, 2 * np.pi, 0, 2 * np.pi))
        fig.colorbar(im, ax=ax1)
        ax1.set_title(f"vorticity at t={end_time:g}")
        fig.tight_layout()
        fig.savefig(folder / "taylor_green.png", dpi=120)
        plt.close(fig)
    return {
        "rate": rate,
        "exact_rate": exact,
        "rel_error": rel,
        "times": times,
        "energies": energies,
        "steps": steps,
    }


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="16^2, nu = 0.05, t = 0.2, no plot")
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--end-time", type=float, default=None)
    parser.add_argument("--nu", type=float, default=None)
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("taylor_green"))
    args = parser.parse_args()
    main(tiny=args.tiny, n=args.n, end_time=args.end_time, nu=args.nu, out_dir=args.out_dir)
