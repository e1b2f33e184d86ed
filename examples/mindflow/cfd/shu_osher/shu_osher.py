"""Shu-Osher shock / entropy-wave interaction with mindflow.cfd, against a fine reference run.

A Mach 3 shock at x = -4 runs into a sinusoidal density field (Shu & Osher, J. Comput. Phys. 83
(1989) 32, example 8; gamma = 1.4, t = 1.8 on [-5, 5]):

    x < -4: (rho, u, p) = (3.857143, 2.629369, 10.33333)
    x >= -4:              (1 + 0.2 sin(5 x), 0, 1)

There is no exact solution: the script runs N cells and a fine reference (default 8 N cells,
the same scheme), prints the L1 distance of the density to the reference's cell averages and
the density range, and writes ``<out-dir>/shu_osher.png`` (default ``./shu_osher_out``).

    python examples/mindflow/cfd/shu_osher/shu_osher.py             # N=200, reference 1600
    python examples/mindflow/cfd/shu_osher/shu_osher.py --tiny      # N=100 to t = 0.2, no plot
"""

import pathlib
import sys

import numpy as np

from diffsci import core
from diffsci.mindflow import cfd, load_yaml_config, vis_1d
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # examples/mindflow/cfd: _common
import _common  # noqa: E402

LEFT = (3.857143, 2.629369, 10.33333)


def shu_osher_ic_1d(mesh_x):
    """Primitive initial state ``[5, nx, 1, 1]`` from the cell centres ``[nx, 1, 1]``."""
    x = mesh_x.asnumpy()
    pri = np.zeros((5, *x.shape))
    shocked = x < -4.0
    pri[0] = np.where(shocked, LEFT[0], 1.0 + 0.2 * np.sin(5.0 * x))
    pri[1] = np.where(shocked, LEFT[1], 0.0)
    pri[4] = np.where(shocked, LEFT[2], 1.0)
    return core.tensor(pri)


def solve(nx, end_time=None, dtype=core.float64, progress=False):
    """Run to ``end_time`` (default 1.8); return ``(pri_var numpy, cell edges, time)``."""
    config = load_yaml_config(HERE / "shu_osher.yaml")
    config["mesh"]["nx"] = nx
    simulator = cfd.Simulator(config)
    mesh_x, _, _ = simulator.mesh_info.mesh_xyz(dtype)
    con_var = cfd.cal_con_var(shu_osher_ic_1d(mesh_x).astype(dtype), simulator.material)
    con_var = simulator.run(con_var, end_time=end_time, progress=progress)
    pri_var, edges = _common.final_primitives(con_var, simulator)
    return pri_var, edges, simulator.last_runtime.current_time


def main(nx=200, refine=8, end_time=None, tiny=False, out_dir=None, plot=None, verbose=True):
    """Run Shu-Osher at ``nx`` cells and at ``refine * nx`` cells (the reference).

    Args:
        nx (int): cells (``tiny``: 100).
        refine (int): the reference has ``refine * nx`` cells (``tiny``: 4).
        end_time (float): default 1.8 (``tiny``: 0.2).
        tiny (bool): small and short, no plot (what the test suite runs).
        out_dir (str): folder for ``shu_osher.png`` (default ``shu_osher_out/`` in the working
            directory).
        plot (bool): write the plot (default: not tiny).
        verbose (bool): print the numbers.

    Returns:
        dict: ``pri_var``, ``x``, ``reference`` (its ``pri_var``), ``l1_rho`` (L1 distance to the
        reference's cell averages), ``rho_range``, ``p_range``.
    """
    if tiny:
        nx, refine, end_time = 100, 4, end_time or 0.2
    if plot is None:
        plot = not tiny
    pri_var, edges, t = solve(nx, end_time, progress=verbose and not tiny)
    ref, ref_edges, _ = solve(refine * nx, end_time, progress=verbose and not tiny)
    ref_avg = ref[0, :, 0, 0].reshape(nx, refine).mean(axis=1)
    l1_rho = float(np.sum(np.abs(pri_var[0, :, 0, 0] - ref_avg)) * (edges[1] - edges[0]))
    rho_range = (float(pri_var[0].min()), float(pri_var[0].max()))
    p_range = (float(pri_var[4].min()), float(pri_var[4].max()))
    if verbose:
        print(
            f"Shu-Osher N={nx} to t={t:.4g}: L1(rho) vs the N={refine * nx} reference = "
            f"{l1_rho:.3e}, rho in [{rho_range[0]:.4f}, {rho_range[1]:.4f}], "
            f"p in [{p_range[0]:.4f}, {p_range[1]:.4f}]"
        )
    x = _common.centres(edges)
    if plot:
        folder = _common.out_folder(out_dir, "shu_osher")
        x_ref = _common.centres(ref_edges)
        vis_1d(
            pri_var,
            str(folder / "shu_osher.png"),
            x=x,
            reference=(x_ref, ref[0, :, 0, 0], ref[1, :, 0, 0], ref[4, :, 0, 0]),
            reference_label=f"reference run, N={ref.shape[1]}",
        )
    return {
        "pri_var": pri_var,
        "x": x,
        "reference": ref,
        "l1_rho": l1_rho,
        "rho_range": rho_range,
        "p_range": p_range,
    }


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nx", type=int, default=200)
    parser.add_argument("--refine", type=int, default=8)
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("shu_osher"))
    parser.add_argument("--tiny", action="store_true", help="N=100 to t=0.2, no plot")
    args = parser.parse_args()
    main(nx=args.nx, refine=args.refine, tiny=args.tiny, out_dir=args.out_dir)
