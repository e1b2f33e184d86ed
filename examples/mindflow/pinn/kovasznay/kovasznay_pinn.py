"""Kovasznay flow (Re = 20) by a PINN, forward and inverse, the recommended way:
``mindflow.pinn.Trainer``, Adam then L-BFGS in float64, verified against the closed form
(``mindflow.verify.kovasznay``).

The problem (Kovasznay 1948; MindFlow ``physics_driven/navier_stokes/kovasznay``): steady
incompressible Navier-Stokes on the unit square, ``nu = 1 / Re``::

    u u_x + v u_y + p_x - nu (u_xx + u_yy) = 0,
    u v_x + v v_y + p_y - nu (v_xx + v_yy) = 0,
    u_x + v_y = 0,

The residuals are written as a plain Python function of the network
(``mindflow.pde.residual.derivatives``: one derivative tower for all nine derivatives).

- ``forward``: Dirichlet data for ``u, v, p`` on the boundary from the exact solution (as
  MindFlow's ``bc``). The error is the relative L2 error of ``u``, ``v`` and ``p`` on a
  101 x 101 grid (MindFlow reports a validation loss of 3e-3 and shows no per-field error).
- ``inverse``: ``nu = 1 / Re`` is unknown, a trainable ``core.Parameter`` (passed to the
  Trainer as ``extra_params``) started at ``nu_init`` (0.1, twice the true 0.05); the data are
  ``u, v`` of the exact solution at ``n_data`` random points of the square, no boundary
  condition and no pressure data. The momentum equations hold ``p`` only through its
  gradient, so ``p`` is recovered up to a constant: its error is reported after removing the
  mean of both fields. Target: ``Re`` within 1% of 20.

Writes ``<out-dir>/kovasznay.png`` (``kovasznay_inverse.png`` for the inverse mode: prediction,
exact, |error| for each field) and the loss curves (default ``--out-dir``:
``./kovasznay_pinn_out``).

    python examples/mindflow/pinn/kovasznay/kovasznay_pinn.py
    python examples/mindflow/pinn/kovasznay/kovasznay_pinn.py --tiny
    python examples/mindflow/pinn/kovasznay/kovasznay_pinn.py --mode inverse
    python examples/mindflow/pinn/kovasznay/kovasznay_pinn.py --mode inverse --tiny
"""

import copy
import pathlib
import sys

import numpy as np

from diffsci import core
from diffsci.datasets.geometry import Rectangle
from diffsci.mindflow.pde.residual import derivatives
from diffsci.mindflow.utils import load_yaml_config
from diffsci.mindflow.verify import kovasznay
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # examples/mindflow/pinn: _pinn_common
import _pinn_common as common  # noqa: E402

CONFIG = HERE / "configs" / "kovasznay_cfg.yaml"
MODES = ("forward", "inverse")
KEYS = ["u", "v", "p", "u_x", "u_y", "v_x", "v_y", "p_x", "p_y", "u_xx", "u_yy", "v_xx", "v_yy"]


def navier_stokes_residuals(model, xy, re, nu=None):
    """``(momentum_x, momentum_y, continuity)`` at ``xy [N, 2]``, each ``[N, 1]``.

    The viscosity is ``1 / re``, or ``nu`` when given (a float or a trainable ``[1]``
    Parameter: the inverse problem's unknown; ``re`` is then ignored).
    """
    u, v, _, u_x, u_y, v_x, v_y, p_x, p_y, u_xx, u_yy, v_xx, v_yy = derivatives(
        model, xy, KEYS, in_vars="xy", out_vars="uvp"
    )
    if nu is None:
        nu = 1.0 / re
    mom_x = u * u_x + v * u_y + p_x - nu * (u_xx + u_yy)
    mom_y = u * v_x + v * v_y + p_y - nu * (v_xx + v_yy)
    return mom_x, mom_y, u_x + v_y


def exact_columns(points, re):
    """The exact ``(u, v, p)`` at ``points [N, 2]`` as ``[N, 3]``."""
    return np.stack(kovasznay(points[:, 0], points[:, 1], re=re), axis=1)


def loss_terms(model, re):
    """``batch -> {"pde", "bc"}``; the batch is ``(xy [N, 2], xb [M, 2], uvp_b [M, 3])``."""

    def terms(batch):
        xy, xb, uvp_b = batch
        mom_x, mom_y, cont = navier_stokes_residuals(model, xy, re)
        pde = (mom_x**2).mean() + (mom_y**2).mean() + (cont**2).mean()
        return {"pde": pde, "bc": ((model(xb) - uvp_b) ** 2).sum(axis=1).mean()}

    return terms


def inverse_terms(model, nu):
    """``batch -> {"pde", "data"}`` with the trainable viscosity ``nu``; the batch is
    ``(xy [N, 2], xy_data [M, 2], uv_data [M, 2])`` (no pressure data)."""

    def terms(batch):
        xy, xy_data, uv_data = batch
        mom_x, mom_y, cont = navier_stokes_residuals(model, xy, None, nu=nu)
        pde = (mom_x**2).mean() + (mom_y**2).mean() + (cont**2).mean()
        uv = model(xy_data)[:, 0:2]
        return {"pde": pde, "data": ((uv - uv_data) ** 2).sum(axis=1).mean()}

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
    tiny=False,
    adam_steps=None,
    lbfgs_steps=None,
    out_dir=None,
    seed=0,
    progress=True,
    verbose=True,
    mode="forward",
):
    """Train and evaluate; returns ``{"errors": {"u", "v", "p", "all"}, "seconds", ...}`` and,
    for ``mode="inverse"``, ``"nu"``, ``"re"`` (``1 / nu``) and ``"re_error"`` (relative); the
    plots go to ``out_dir`` (None: no plots)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    config = load_yaml_config(str(CONFIG))
    cfg = settings(config, tiny, {})
    if mode == "inverse":
        cfg.update(cfg.pop("inverse"))
    cfg.pop("inverse", None)
    cfg.update(
        {
            k: v
            for k, v in {"adam_steps": adam_steps, "lbfgs_steps": lbfgs_steps}.items()
            if v is not None
        }
    )
    re = float(cfg["re"])
    core.set_seed(seed)
    square = Rectangle("rectangle", **config["geometry"]["rectangle"], dtype=np.float64)
    xy = np.asarray(square.sample_interior(int(cfg["n_domain"]), sampler="sobol", seed=seed))
    model = common.build_network(2, 3, cfg["net"])
    n = int(cfg["grid"])
    axis = np.linspace(0.0, 1.0, n)
    gx, gy = np.meshgrid(axis, axis)  # [n, n], row = y
    grid = np.stack([gx.ravel(), gy.ravel()], axis=1)
    ref = exact_columns(grid, re)
    f64 = core.float64
    if mode == "forward":
        xb, _ = square.sample_boundary(int(cfg["n_bc"]), sampler="sobol", seed=seed + 1)
        xb = np.asarray(xb)
        batch = tuple(core.tensor(a, dtype=f64) for a in (xy, xb, exact_columns(xb, re)))
        trainer, seconds = common.train(
            loss_terms(model, re), model, batch, cfg, reference=(grid, ref), progress=progress
        )
    else:
        nu = core.Parameter(core.tensor([float(cfg["nu_init"])], dtype=f64), name="nu")
        rng = np.random.default_rng(seed + 2)
        xy_data = rng.random((int(cfg["n_data"]), 2))  # the unit square
        uv_data = exact_columns(xy_data, re)[:, 0:2]
        batch = tuple(core.tensor(a, dtype=f64) for a in (xy, xy_data, uv_data))
        trainer, seconds = common.train(
            inverse_terms(model, nu),
            model,
            batch,
            cfg,
            # no pressure data: watch u, v while training
            reference=lambda: common.relative_l2(common.predict(model, grid)[:, :2], ref[:, :2]),
            progress=progress,
            extra_params=[nu],
        )
    pred = common.predict(model, grid)
    if mode == "inverse":  # p up to a constant: compare with the means removed
        pred[:, 2] += ref[:, 2].mean() - pred[:, 2].mean()
    errors = common.errors_by_component(pred, ref, "uvp")
    result = {"errors": errors, "seconds": seconds, "trainer": trainer, "model": model}
    name = "kovasznay" if mode == "forward" else "kovasznay inverse"
    line = (
        f"{name} Re={re:g}: {cfg['adam_steps']} Adam + {cfg['lbfgs_steps']} L-BFGS "
        f"steps, loss {trainer.history['total'][-1]:.3e}, rel-L2 u {errors['u']:.3e}, "
        f"v {errors['v']:.3e}, p {errors['p']:.3e}"
    )
    if mode == "inverse":
        nu_found = float(nu.asnumpy()[0])
        result.update(nu=nu_found, re=1.0 / nu_found, re_error=abs(1.0 / nu_found - re) / re)
        line += (
            f" (p up to a constant), nu {nu_found:.6f} (start {float(cfg['nu_init']):g}, "
            f"true {1.0 / re:g}), Re {1.0 / nu_found:.4f} (error {100 * result['re_error']:.3f}%)"
        )
    if verbose:
        print(f"{line}, {seconds:.1f} s")
    if out_dir is not None:
        folder = pathlib.Path(out_dir)
        folder.mkdir(parents=True, exist_ok=True)
        fields = {
            c: (pred[:, k].reshape(n, n), ref[:, k].reshape(n, n)) for k, c in enumerate("uvp")
        }
        title = f"Kovasznay Re=20 {mode}: rel-L2 " + ", ".join(
            f"{c} {errors[c]:.1e}" for c in "uvp"
        )
        if mode == "inverse":
            title += f", recovered Re {result['re']:.3f}"
        stem = "kovasznay" if mode == "forward" else "kovasznay_inverse"
        result["plot"] = common.plot_fields(folder / f"{stem}.png", axis, axis, fields, title)
        trainer.plot_history(str(folder / f"{stem}_loss.png"))
    return result


def parse_args(argv=None):
    parser = ArgumentParser(description="Kovasznay flow by a PINN")
    parser.add_argument("--mode", default="forward", choices=MODES)
    parser.add_argument("--tiny", action="store_true", help="a few seconds, small network")
    parser.add_argument("--adam-steps", type=int, default=None)
    parser.add_argument("--lbfgs-steps", type=int, default=None)
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("kovasznay_pinn"))
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = parse_args()
    main(args.tiny, args.adam_steps, args.lbfgs_steps, args.out_dir, args.seed, mode=args.mode)
