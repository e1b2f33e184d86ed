"""MindFlow's 2-D Darcy problem by a PINN, the recommended way: ``mindflow.pinn.Trainer``, Adam
then L-BFGS in float64, verified against the exact solution.

The problem (MindFlow ``physics_driven/darcy``), mixed form on the unit square::

    u_x + v_y = f,  u + p_x = 0,  v + p_y = 0,   f = 8 pi^2 sin(2 pi x) cos(2 pi y),

Dirichlet data for ``u, v, p`` from the exact solution ``p = sin(2 pi x) cos(2 pi y)``,
``(u, v) = -grad p``. The residuals are a plain Python function of the network
(``mindflow.pde.residual.derivatives``), each divided by its natural scale (``8 pi^2`` for the
mass balance, ``2 pi`` for the velocities) so that every term starts O(1). The error is the
relative L2 error of ``u``, ``v``, ``p`` on MindFlow's 101 x 101 test grid (MindFlow reports
the error of ``u``: 1e-2). Writes ``<out-dir>/darcy.png`` and the loss curves (default
``--out-dir``: ``./darcy_pinn_out``).

    python examples/mindflow/pinn/darcy/darcy_pinn.py
    python examples/mindflow/pinn/darcy/darcy_pinn.py --tiny
"""

import copy
import math
import pathlib
import sys

import numpy as np

from diffsci import core
from diffsci.core import ops
from diffsci.datasets.geometry import Rectangle
from diffsci.mindflow.pde.residual import derivatives
from diffsci.mindflow.utils import load_yaml_config
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # examples/mindflow/pinn: _pinn_common
import _pinn_common as common  # noqa: E402

CONFIG = HERE / "configs" / "darcy.yaml"
TWO_PI = 2.0 * math.pi


def exact_columns(points):
    """The exact ``(u, v, p)`` at ``points [N, 2]`` as ``[N, 3]``."""
    x, y = points[:, 0], points[:, 1]
    p = np.sin(TWO_PI * x) * np.cos(TWO_PI * y)
    u = -TWO_PI * np.cos(TWO_PI * x) * np.cos(TWO_PI * y)
    v = TWO_PI * np.sin(TWO_PI * x) * np.sin(TWO_PI * y)
    return np.stack([u, v, p], axis=1)


def darcy_residuals(model, xy):
    """Scaled residuals ``((u_x + v_y - f) / 8 pi^2, (u + p_x) / 2 pi, (v + p_y) / 2 pi)`` at
    ``xy [N, 2]``, each ``[N, 1]``."""
    u, v, u_x, v_y, p_x, p_y = derivatives(
        model, xy, ["u", "v", "u_x", "v_y", "p_x", "p_y"], in_vars="xy", out_vars="uvp"
    )
    f = 2.0 * TWO_PI**2 * ops.sin(TWO_PI * xy[:, 0:1]) * ops.cos(TWO_PI * xy[:, 1:2])
    return (u_x + v_y - f) / (2.0 * TWO_PI**2), (u + p_x) / TWO_PI, (v + p_y) / TWO_PI


def loss_terms(model):
    """``batch -> {"pde", "bc"}``; the batch is ``(xy [N, 2], xb [M, 2], uvp_b [M, 3],
    scale [1, 3])`` with ``scale = (2 pi, 2 pi, 1)`` dividing the boundary residuals."""

    def terms(batch):
        xy, xb, uvp_b, scale = batch
        r1, r2, r3 = darcy_residuals(model, xy)
        pde = (r1**2).mean() + (r2**2).mean() + (r3**2).mean()
        bc = (((model(xb) - uvp_b) / scale) ** 2).sum(axis=1).mean()
        return {"pde": pde, "bc": bc}

    return terms


def settings(config, tiny, overrides):
    """The ``pinn`` section, with its ``tiny`` entries merged in when ``tiny``."""
    cfg = copy.deepcopy(config["pinn"])
    small = cfg.pop("tiny", {})
    if tiny:
        cfg.update(small)
    cfg.update({k: v for k, v in overrides.items() if v is not None})
    return cfg


def main(
    tiny=False, adam_steps=None, lbfgs_steps=None, out_dir=None, seed=0, progress=True, verbose=True
):
    """Train and evaluate; returns ``{"errors": {"u", "v", "p", "all"}, "seconds", ...}``;
    the plots go to ``out_dir`` (None: no plots)."""
    config = load_yaml_config(str(CONFIG))
    cfg = settings(config, tiny, {"adam_steps": adam_steps, "lbfgs_steps": lbfgs_steps})
    core.set_seed(seed)
    geo = config["geometry"]
    square = Rectangle("flow_region", geo["coord_min"], geo["coord_max"], dtype=np.float64)
    xy = np.asarray(square.sample_interior(int(cfg["n_domain"]), sampler="sobol", seed=seed))
    xb, _ = square.sample_boundary(int(cfg["n_bc"]), sampler="sobol", seed=seed + 1)
    xb = np.asarray(xb)
    scale = np.array([[TWO_PI, TWO_PI, 1.0]])
    batch = tuple(core.tensor(a, dtype=core.float64) for a in (xy, xb, exact_columns(xb), scale))

    model = common.build_network(2, 3, cfg["net"])
    n = int(geo["axis_size"])
    axis = np.linspace(geo["coord_min"][0], geo["coord_max"][0], n)
    gx, gy = np.meshgrid(axis, axis)  # [n, n], row = y
    grid = np.stack([gx.ravel(), gy.ravel()], axis=1)
    ref = exact_columns(grid)
    trainer, seconds = common.train(
        loss_terms(model), model, batch, cfg, reference=(grid, ref), progress=progress
    )
    pred = common.predict(model, grid)
    errors = common.errors_by_component(pred, ref, "uvp")
    if verbose:
        print(
            f"darcy: {cfg['adam_steps']} Adam + {cfg['lbfgs_steps']} L-BFGS steps, "
            f"loss {trainer.history['total'][-1]:.3e}, rel-L2 u {errors['u']:.3e}, "
            f"v {errors['v']:.3e}, p {errors['p']:.3e}, {seconds:.1f} s"
        )
    result = {"errors": errors, "seconds": seconds, "trainer": trainer, "model": model}
    if out_dir is not None:
        folder = pathlib.Path(out_dir)
        folder.mkdir(parents=True, exist_ok=True)
        fields = {
            c: (pred[:, k].reshape(n, n), ref[:, k].reshape(n, n)) for k, c in enumerate("uvp")
        }
        title = "Darcy: rel-L2 " + ", ".join(f"{c} {errors[c]:.1e}" for c in "uvp")
        result["plot"] = common.plot_fields(folder / "darcy.png", axis, axis, fields, title)
        trainer.plot_history(str(folder / "darcy_loss.png"))
    return result


def parse_args(argv=None):
    parser = ArgumentParser(description="MindFlow's Darcy problem by a PINN")
    parser.add_argument("--tiny", action="store_true", help="a few seconds, small network")
    parser.add_argument("--adam-steps", type=int, default=None)
    parser.add_argument("--lbfgs-steps", type=int, default=None)
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("darcy_pinn"))
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = parse_args()
    main(args.tiny, args.adam_steps, args.lbfgs_steps, args.out_dir, args.seed)
