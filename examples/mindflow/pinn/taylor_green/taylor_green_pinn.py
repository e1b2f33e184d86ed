"""The 2-D Taylor-Green vortex by a PINN, forward and inverse, with ``mindflow.pinn.Trainer``
(Adam then L-BFGS in float64), verified against the closed form
(``mindflow.verify.taylor_green_2d``).

MindFlow's case (``physics_driven/navier_stokes/taylor_green``): incompressible Navier-Stokes
on ``[0, 6.28]^2 x [0, 2]`` with ``nu = 1 / Re = 1`` (MindFlow's built-in ``NavierStokes``
equations, sympy), the exact solution ``u = -cos x sin y e^{-2 nu t}``,
``v = sin x cos y e^{-2 nu t}``, ``p = -(cos 2x + cos 2y) e^{-4 nu t} / 4``.

- ``forward``: PDE residuals in space-time, the initial condition at ``t = 0`` and the exact
  ``u, v, p`` on the spatial boundary (MindFlow's ``ic``/``bc``). Error: relative L2 of ``u``,
  ``v``, ``p`` on MindFlow's test grid (10 times x 100 x 100; MindFlow reports 1e-2 RMSE).
- ``inverse``: ``nu`` is unknown (a trainable ``Parameter`` entering the sympy equations as
  ``PDEWithLoss(params=[nu], params_val=...)``, started at ``nu_init``); the data are ``u, v``
  of the exact solution at ``n_data`` random space-time points, no initial or boundary
  condition. Target: ``nu`` within 1% of 1. Without pressure data ``p`` is determined up to a
  function of time only (its error is reported, not meaningful); the error shown while training
  is that of ``(u, v)``.

Writes ``<out-dir>/taylor_green_<mode>.png`` (prediction, exact, |error| of u, v, p at t = 1)
and the loss curves (default ``--out-dir``: ``./taylor_green_pinn_out``).

    python examples/mindflow/pinn/taylor_green/taylor_green_pinn.py --mode forward
    python examples/mindflow/pinn/taylor_green/taylor_green_pinn.py --mode inverse
    python examples/mindflow/pinn/taylor_green/taylor_green_pinn.py --mode inverse --tiny
"""

import copy
import pathlib
import sys

import numpy as np
from sympy import Function, Symbol, diff, symbols

from diffsci import core
from diffsci.core import ops
from diffsci.datasets.geometry import GeometryWithTime, Rectangle, TimeDomain
from diffsci.mindflow.pde import NavierStokes, PDEWithLoss, sympy_to_mindspore
from diffsci.mindflow.pinn import OutputTransform
from diffsci.mindflow.utils import load_yaml_config
from diffsci.mindflow.verify import taylor_green_2d
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # examples/mindflow/pinn: _pinn_common
import _pinn_common as common  # noqa: E402

CONFIG = HERE / "configs" / "taylor_green_2D.yaml"
MODES = ("forward", "inverse")


def exact_columns(points, nu):
    """The exact ``(u, v, p)`` at ``points [N, 3]`` (columns x, y, t) as ``[N, 3]``."""
    return np.stack(taylor_green_2d(points[:, 0], points[:, 1], points[:, 2], nu=nu), axis=1)


class NavierStokesUnknownNu(PDEWithLoss):
    """MindFlow's 2-D Navier-Stokes equations with the viscosity a trainable parameter::

        u_t + u u_x + v u_y + p_x - nu (u_xx + u_yy) = 0,
        v_t + u v_x + v v_y + p_y - nu (v_xx + v_yy) = 0,
        u_x + v_y = 0.

    Args:
        model: ``[N, 3] -> [N, 3]``, (x, y, t) -> (u, v, p).
        nu_init: the starting value of ``nu``.
        dtype: the parameter's dtype (the network's).
    """

    def __init__(self, model, nu_init, dtype=core.float64):
        self.x, self.y, self.t = symbols("x y t")
        self.nu = Symbol("nu")
        self.u, self.v, self.p = (Function(c)(self.x, self.y, self.t) for c in "uvp")
        nu_value = core.Parameter(core.tensor([float(nu_init)], dtype=dtype), name="nu")
        super().__init__(
            model,
            [self.x, self.y, self.t],
            [self.u, self.v, self.p],
            params=[self.nu],
            params_val=nu_value,
        )

    def pde(self):
        """``{"momentum_x", "momentum_y", "continuty"}`` with the symbol ``nu``."""
        u, v, p, x, y, t, nu = self.u, self.v, self.p, self.x, self.y, self.t, self.nu
        lap_u = diff(u, (x, 2)) + diff(u, (y, 2))
        lap_v = diff(v, (x, 2)) + diff(v, (y, 2))
        return {
            "momentum_x": diff(u, t) + u * diff(u, x) + v * diff(u, y) + diff(p, x) - nu * lap_u,
            "momentum_y": diff(v, t) + u * diff(v, x) + v * diff(v, y) + diff(p, y) - nu * lap_v,
            "continuty": diff(u, x) + diff(v, y),
        }


def initial_condition(xyt):
    """The vortex at ``t = 0``, ``[N, 3] -> [N, 3]`` in core ops: with ``hard_ic`` the model is
    ``initial_condition(x) + t * net(x)`` (``mindflow.pinn.OutputTransform``), exact at t = 0."""
    x, y = xyt[:, 0:1], xyt[:, 1:2]
    u = -ops.cos(x) * ops.sin(y)
    v = ops.sin(x) * ops.cos(y)
    p = -0.25 * (ops.cos(2.0 * x) + ops.cos(2.0 * y))
    return ops.concat([u, v, p], axis=1)


def _mean_sq(residuals):
    total = (residuals[0] ** 2).mean()
    for r in residuals[1:]:
        total = total + (r**2).mean()
    return total


def forward_terms(problem, ic_nodes, bc_nodes):
    """``batch -> {"pde", "ic", "bc"}``; the batch is ``(xyt [N, 3], ic [M, 3], bc [K, 3])``."""

    def terms(batch):
        xyt, ic, bc = batch
        return {
            "pde": _mean_sq(problem.parse_node(problem.pde_nodes, inputs=xyt)),
            "ic": _mean_sq(problem.parse_node(ic_nodes, inputs=ic)),
            "bc": _mean_sq(problem.parse_node(bc_nodes, inputs=bc)),
        }

    return terms


def inverse_terms(problem):
    """``batch -> {"pde", "data"}``; the batch is ``(xyt [N, 3], xyt_data [M, 3],
    uv_data [M, 2])``."""

    def terms(batch):
        xyt, xyt_data, uv_data = batch
        pde = _mean_sq(problem.parse_node(problem.pde_nodes, inputs=xyt))
        uv = problem.model(xyt_data)[:, 0:2]
        return {"pde": pde, "data": ((uv - uv_data) ** 2).sum(axis=1).mean()}

    return terms


def exact_conditions(problem):
    """MindFlow's initial and boundary residuals (``u - u_exact`` ...) on the problem's
    symbols, for ``nu = 1 / Re``."""
    import sympy

    x, y, t, nu = problem.x, problem.y, problem.t, problem.number
    f1, f2 = sympy.exp(-2 * nu * t), sympy.exp(-4 * nu * t)
    exact = {
        "u": -sympy.cos(x) * sympy.sin(y) * f1,
        "v": sympy.sin(x) * sympy.cos(y) * f1,
        "p": -sympy.Rational(1, 4) * (sympy.cos(2 * x) + sympy.cos(2 * y)) * f2,
    }
    outputs = {"u": problem.u, "v": problem.v, "p": problem.p}
    bc = {f"bc_{c}": outputs[c] - e for c, e in exact.items()}
    ic = {f"ic_{c}": outputs[c] - e.subs(t, 0) for c, e in exact.items()}
    return ic, bc


def settings(config, tiny, overrides):
    """The ``pinn`` section, with its ``tiny`` entries merged in when ``tiny``."""
    cfg = copy.deepcopy(config["pinn"])
    small = cfg.pop("tiny", {})
    if tiny:
        cfg.update(small)
    cfg.update({k: v for k, v in overrides.items() if v is not None})
    return cfg


def test_grid(config, n_x=100, n_t=10):
    """MindFlow's test points ``[n_t * n_x * n_x, 3]`` and the shape ``(n_t, n_x, n_x)``."""
    geo = config["geometry"]
    ax = np.linspace(geo["coord_min"][0], geo["coord_max"][0], n_x)
    ay = np.linspace(geo["coord_min"][1], geo["coord_max"][1], n_x)
    at = np.linspace(geo["time_min"], geo["time_max"], n_t)
    tt, xx, yy = np.meshgrid(at, ax, ay, indexing="ij")
    return np.stack([xx.ravel(), yy.ravel(), tt.ravel()], axis=1), (n_t, n_x, n_x), (ax, ay)


def main(
    mode="forward",
    tiny=False,
    adam_steps=None,
    lbfgs_steps=None,
    out_dir=None,
    seed=0,
    progress=True,
    verbose=True,
    config_file=CONFIG,
):
    """Train and evaluate; returns ``{"errors", "seconds", "trainer", "nu" (inverse)}``; the
    plots go to ``out_dir`` (None: no plots)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    config = load_yaml_config(str(config_file))
    cfg = settings(config, tiny, {})
    if mode == "inverse":
        cfg.update(cfg.pop("inverse"))
    cfg.update(
        {k: v for k, v in {"adam_steps": adam_steps, "lbfgs_steps": lbfgs_steps}.items() if v}
    )
    nu_true = 1.0 / float(config["summary"]["Re"])
    core.set_seed(seed)
    geo = config["geometry"]
    box = GeometryWithTime(
        Rectangle("rect", geo["coord_min"], geo["coord_max"], dtype=np.float64),
        TimeDomain("time", geo["time_min"], geo["time_max"], dtype=np.float64),
    )
    xyt = np.asarray(box.sample_interior(int(cfg["n_domain"]), sampler="sobol", seed=seed))

    lo = np.array([*geo["coord_min"], geo["time_min"]], dtype=np.float64)
    hi = np.array([*geo["coord_max"], geo["time_max"]], dtype=np.float64)
    net_cfg = dict(
        cfg["net"], input_center=list(0.5 * (lo + hi)), input_scale=list(2.0 / (hi - lo))
    )
    model = common.build_network(3, 3, net_cfg)
    f64 = core.float64
    if mode == "forward":
        if cfg.get("hard_ic", False):
            model = OutputTransform(model, g=initial_condition, d=lambda xyt: xyt[:, 2:3])
        problem = NavierStokes(model, re=float(config["summary"]["Re"]))
        ic, bc = exact_conditions(problem)
        ic_nodes = sympy_to_mindspore(ic, problem.in_vars, problem.out_vars)
        bc_nodes = sympy_to_mindspore(bc, problem.in_vars, problem.out_vars)
        x_ic = np.asarray(box.sample_initial(int(cfg["n_ic"]), sampler="sobol", seed=seed + 1))
        x_bc, _ = box.sample_boundary(int(cfg["n_bc"]), sampler="sobol", seed=seed + 2)
        batch = tuple(core.tensor(a, dtype=f64) for a in (xyt, x_ic, np.asarray(x_bc)))
        terms_fn = forward_terms(problem, ic_nodes, bc_nodes)
        params = None
    else:
        problem = NavierStokesUnknownNu(model, cfg["nu_init"], dtype=f64)
        rng = np.random.default_rng(seed + 3)
        x_data = lo + (hi - lo) * rng.random((int(cfg["n_data"]), 3))
        uv_data = exact_columns(x_data, nu_true)[:, 0:2]
        batch = tuple(core.tensor(a, dtype=f64) for a in (xyt, x_data, uv_data))
        terms_fn = inverse_terms(problem)
        params = model.trainable_params() + problem.trainable_params()

    grid, shape, (ax, ay) = test_grid(config)
    ref = exact_columns(grid, nu_true)
    # without pressure data p is known up to a function of time: watch u, v in the inverse run
    cols = slice(0, 3) if mode == "forward" else slice(0, 2)
    trainer, seconds = common.train(
        terms_fn,
        model,
        batch,
        cfg,
        reference=(lambda: common.relative_l2(common.predict(model, grid)[:, cols], ref[:, cols])),
        params=params,
        progress=progress,
    )
    pred = common.predict(model, grid)
    errors = common.errors_by_component(pred, ref, "uvp")
    result = {"errors": errors, "seconds": seconds, "trainer": trainer, "model": model}
    line = (
        f"taylor-green {mode}: {cfg['adam_steps']} Adam + {cfg['lbfgs_steps']} L-BFGS steps, "
        f"loss {trainer.history['total'][-1]:.3e}, rel-L2 u {errors['u']:.3e}, "
        f"v {errors['v']:.3e}, p {errors['p']:.3e}"
    )
    if mode == "inverse":
        nu = float(problem.params_val.asnumpy()[0])
        result["nu"] = nu
        result["nu_error"] = abs(nu - nu_true) / nu_true
        line += f", nu {nu:.5f} (true {nu_true:g}, error {100 * result['nu_error']:.3f}%)"
    if verbose:
        print(f"{line}, {seconds:.1f} s")
    if out_dir is not None:
        folder = pathlib.Path(out_dir)
        folder.mkdir(parents=True, exist_ok=True)
        k = shape[0] // 2  # t = 1 of MindFlow's 10 times in [0, 2]
        fields = {
            c: (pred[:, j].reshape(shape)[k].T, ref[:, j].reshape(shape)[k].T)
            for j, c in enumerate("uvp")
        }
        title = (
            f"Taylor-Green {mode}, t={grid[k * shape[1] * shape[2], 2]:.2f}: rel-L2 "
            + ", ".join(f"{c} {errors[c]:.1e}" for c in "uvp")
        )
        result["plot"] = common.plot_fields(
            folder / f"taylor_green_{mode}.png", ax, ay, fields, title
        )
        trainer.plot_history(str(folder / f"taylor_green_{mode}_loss.png"))
    return result


def parse_args(argv=None):
    parser = ArgumentParser(description="2-D Taylor-Green vortex by a PINN")
    parser.add_argument("--mode", default="forward", choices=MODES)
    parser.add_argument("--tiny", action="store_true", help="a few seconds, small network")
    parser.add_argument("--adam-steps", type=int, default=None)
    parser.add_argument("--lbfgs-steps", type=int, default=None)
    parser.add_argument(
        "--out-dir", aliases=["--out"], default=default_out_dir("taylor_green_pinn")
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config-file-path", default=str(CONFIG))
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = parse_args()
    main(
        args.mode,
        args.tiny,
        args.adam_steps,
        args.lbfgs_steps,
        args.out_dir,
        args.seed,
        config_file=args.config_file_path,
    )
