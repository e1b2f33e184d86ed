"""2D Riemann problem, Lax-Liu configuration 3 (MindFlow's riemann2d case), with mindflow.cfd.

Four constant quadrants on [0, 1]^2 meeting at (0.5, 0.5) (Lax & Liu, SIAM J. Sci. Comput. 19
(1998) 319, configuration 3; gamma = 1.4, t = 0.3):

    x >= 0.5, y >= 0.5: (rho, u, v, p) = (1.5,    0,     0,     1.5)
    x <  0.5, y >= 0.5:                  (0.5323, 1.206, 0,     0.3)
    x <  0.5, y <  0.5:                  (0.138,  1.206, 1.206, 0.029)
    x >= 0.5, y <  0.5:                  (0.5323, 0,     1.206, 0.3)

The data are symmetric about the diagonal x = y, and so is the exact solution: the script
prints max |rho(x, y) - rho(y, x)| (round-off) and the minimum density and pressure, and
writes ``<out-dir>/riemann2d.png`` (MindFlow's ``vis_2d``; default ``./riemann2d_out``).

    python examples/mindflow/cfd/riemann2d/riemann2d.py              # 256^2 as MindFlow
    python examples/mindflow/cfd/riemann2d/riemann2d.py --nx 128
    python examples/mindflow/cfd/riemann2d/riemann2d.py --tiny       # 32^2, t = 0.05, no plot
"""

import pathlib
import sys

import numpy as np

from diffsci import core
from diffsci.mindflow import cfd, load_yaml_config, vis_2d
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # examples/mindflow/cfd: _common
import _common  # noqa: E402

# (rho, u, v, p) in quadrants 1 (x >= .5, y >= .5), 2 (x < .5, y >= .5), 3, 4 (counter-clockwise)
QUADRANTS = (
    (1.5, 0.0, 0.0, 1.5),
    (0.5323, 1.206, 0.0, 0.3),
    (0.138, 1.206, 1.206, 0.029),
    (0.5323, 0.0, 1.206, 0.3),
)


def riemann2d_ic(mesh_x, mesh_y):
    """Primitive initial state ``[5, nx, ny, 1]`` from the cell centres (MindFlow's ic)."""
    x, y = mesh_x.asnumpy(), mesh_y.asnumpy()
    east, north = x >= 0.5, y >= 0.5
    masks = (east & north, ~east & north, ~east & ~north, east & ~north)
    pri = np.zeros((5, *x.shape))
    for mask, (rho, u, v, p) in zip(masks, QUADRANTS):
        for k, value in ((0, rho), (1, u), (2, v), (4, p)):
            pri[k] = np.where(mask, value, pri[k])
    return core.tensor(pri)


def main(
    nx=None, end_time=None, tiny=False, out_dir=None, plot=None, verbose=True, dtype=core.float64
):
    """Run configuration 3; return the final primitive state, its asymmetry and minima.

    Args:
        nx (int): cells per side (default: riemann2d.yaml's 256; ``tiny``: 32).
        end_time (float): default the config's 0.3 (``tiny``: 0.05).
        tiny (bool): small grid, short time, no plot (what the test suite runs).
        out_dir (str): folder for ``riemann2d.png`` (default ``riemann2d_out/`` in the working
            directory).
        plot (bool): write the plot (default: not tiny).
        verbose (bool): print the numbers.
        dtype: float64 or float32.
    """
    if tiny:
        nx, end_time = nx or 32, end_time or 0.05
    if plot is None:
        plot = not tiny
    config = load_yaml_config(HERE / "riemann2d.yaml")
    if nx is not None:
        config["mesh"]["nx"] = config["mesh"]["ny"] = nx
    simulator = cfd.Simulator(config)
    mesh_x, mesh_y, _ = simulator.mesh_info.mesh_xyz(dtype)
    con_var = cfd.cal_con_var(riemann2d_ic(mesh_x, mesh_y).astype(dtype), simulator.material)
    con_var = simulator.run(con_var, end_time=end_time, progress=verbose and not tiny)
    pri_var = cfd.cal_pri_var(con_var, simulator.material).asnumpy().astype(np.float64)
    rho = pri_var[0, :, :, 0]
    asymmetry = float(np.max(np.abs(rho - rho.T)))
    min_rho, min_p = float(pri_var[0].min()), float(pri_var[4].min())
    runtime = simulator.last_runtime
    if verbose:
        n = config["mesh"]["nx"]
        print(
            f"Riemann 2D config 3, {n}x{n}, {runtime.step} steps to t={runtime.current_time:.4g}:"
            f" max |rho(x,y) - rho(y,x)| = {asymmetry:.3e}, min rho = {min_rho:.4g}, "
            f"min p = {min_p:.4g}"
        )
    if plot:
        folder = _common.out_folder(out_dir, "riemann2d")
        vis_2d(pri_var, str(folder / "riemann2d.png"))
    return {
        "pri_var": pri_var,
        "asymmetry": asymmetry,
        "min_rho": min_rho,
        "min_p": min_p,
        "steps": runtime.step,
    }


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nx", type=int, default=None)
    parser.add_argument("--end-time", type=float, default=None)
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("riemann2d"))
    parser.add_argument("--tiny", action="store_true", help="32^2 to t = 0.05, no plot")
    args = parser.parse_args()
    main(nx=args.nx, end_time=args.end_time, tiny=args.tiny, out_dir=args.out_dir)
