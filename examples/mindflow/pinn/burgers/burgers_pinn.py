"""Burgers' equation by a PINN, the recommended way: ``mindflow.pinn.Trainer``, Adam then
L-BFGS in float64, the boundary and initial conditions built into the network, verified against
the Cole-Hopf solution.

The problem (Raissi, Perdikaris & Karniadakis 2019, sec. 3.1.1; MindFlow's
``physics_driven/burgers``)::

    u_t + u u_x - nu u_xx = 0,  x in [-1, 1], t in [0, 1],  nu = 0.01 / pi,
    u(x, 0) = -sin(pi x),  u(-1, t) = u(1, t) = 0.

The network ``N(x, t)`` (``mindflow.cell.FCSequential``, tanh) enters through the output
transform ``u = -sin(pi x) + t (1 - x^2) N(x, t)`` (Lagaris et al. 1998, eq. (11)), which meets
both conditions exactly, so the loss is the PDE residual alone: ``mean r^2`` over Sobol' points
in the space-time rectangle plus points clustered near the shock at x = 0 (where ``|u_x|``
reaches 152). The error is the relative L2 error on the 256 x 100 grid against
``mindflow.verify.burgers_cole_hopf_grid``, reported next to the loss while training.

Settings come from ``configs/burgers.yaml`` (MindFlow's keys; the ``pinn`` section is ours).
The script prints the error and the wall time and writes ``<out-dir>/burgers.png``
(prediction, reference, error, three time slices) and ``<out-dir>/loss.png`` (default
``--out-dir``: ``./burgers_pinn_out``).

    python examples/mindflow/pinn/burgers/burgers_pinn.py               # the full run
    python examples/mindflow/pinn/burgers/burgers_pinn.py --tiny        # seconds, no plot
    python examples/mindflow/pinn/burgers/burgers_pinn.py --adam-steps 2000 --lbfgs-steps 5000
"""

import math
import pathlib
import time

import numpy as np

from diffsci import core
from diffsci.core import ops
from diffsci.mindflow.cell import FCSequential
from diffsci.mindflow.geometry import Rectangle
from diffsci.mindflow.pde.residual import derivatives
from diffsci.mindflow.pinn import Trainer, hard_constraint
from diffsci.mindflow.utils import load_yaml_config
from diffsci.mindflow.verify import BURGERS_NU, burgers_cole_hopf_grid, relative_l2
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent
CONFIG = HERE / "configs" / "burgers.yaml"

TINY = {
    "adam_steps": 60,
    "lbfgs_steps": 60,
    "n_domain": 400,
    "n_shock": 100,
    "layers": 4,
    "neurons": 16,
}


def build_model(layers, neurons, dtype):
    """``u(x, t) = -sin(pi x) + t (1 - x^2) N(x, t)``: a Cell ``[N, 2] -> [N, 1]``."""
    net = FCSequential(
        2,
        1,
        layers=layers,
        neurons=neurons,
        residual=False,
        act="tanh",
        weight_init="XavierNormal",
        bias_init="zeros",
        dtype=dtype,
    )

    def g(xt):  # the initial condition, [N, 1]
        return -ops.sin(math.pi * xt[:, 0:1])

    def d(xt):  # zero at t = 0 and x = +-1, positive inside, [N, 1]
        x, t = xt[:, 0:1], xt[:, 1:2]
        return t * (1.0 - x * x)

    return hard_constraint(net, g=g, d=d)


def burgers_residual(model, xt):
    """``r = u_t + u u_x - nu u_xx`` at ``xt [N, 2]`` (columns x, t): ``[N, 1]``."""
    u, u_t, u_x, u_xx = derivatives(
        model, xt, "u", "u_t", "u_x", "u_xx", in_vars="xt", out_vars="u"
    )
    return u_t + u * u_x - BURGERS_NU * u_xx


def collocation_points(config, n_domain, n_shock, seed=0):
    """``[n_domain + n_shock, 2]`` float64 points (x, t): Sobol' in the space-time rectangle
    of the yaml's geometry, plus ``n_shock`` Sobol' points in the band ``|x| < 0.1`` where the
    shock forms.

    The rectangle is sampled as a 2-D ``Rectangle``: ``GeometryWithTime.sample_interior`` with
    a quasi-random sampler pairs two separate 1-D sequences, whose points lie near a line
    (x-t correlation -0.95 for Sobol'), and a PINN trained on them misses most of the domain.
    """
    geom = config["geometry"]
    t0, t1 = geom["time_min"], geom["time_max"]
    region = Rectangle("space_time", [geom["coord_min"], t0], [geom["coord_max"], t1])
    points = [np.asarray(region.sample_interior(n_domain, sampler="sobol", seed=seed))]
    if n_shock:
        band = Rectangle("shock_band", [-0.1, t0], [0.1, t1])
        points.append(np.asarray(band.sample_interior(n_shock, sampler="sobol", seed=seed + 1)))
    return np.concatenate(points).astype(np.float64)


def reference_grid():
    """Points ``[25600, 2]`` and the Cole-Hopf u ``[25600, 1]`` on the 256 x 100 grid."""
    x, t, u = burgers_cole_hopf_grid(256, 100)  # u [256, 100]
    xx, tt = np.meshgrid(x, t, indexing="ij")
    return np.stack([xx.ravel(), tt.ravel()], axis=1), u.reshape(-1, 1), (x, t)


def plot(pred, ref, x, t, path, error):
    """Prediction, reference and |error| over (t, x), and u(x) at t = 0.25, 0.5, 0.75."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(13, 7))
    grid = fig.add_gridspec(2, 3)
    extent = (t[0], t[-1], x[0], x[-1])
    panels = (
        ("PINN u(t, x)", pred, "RdBu_r"),
        ("Cole-Hopf u(t, x)", ref, "RdBu_r"),
        (f"|error| (rel-L2 {error:.2e})", np.abs(pred - ref), "magma"),
    )
    for k, (title, field, cmap) in enumerate(panels):
        ax = fig.add_subplot(grid[0, k])
        limits = {"vmin": -1.0, "vmax": 1.0} if k < 2 else {}  # one colour scale for u
        im = ax.imshow(field, origin="lower", aspect="auto", extent=extent, cmap=cmap, **limits)
        ax.set(title=title, xlabel="t", ylabel="x")
        fig.colorbar(im, ax=ax)
    for k, tc in enumerate((0.25, 0.5, 0.75)):
        j = int(np.argmin(np.abs(t - tc)))
        ax = fig.add_subplot(grid[1, k])
        ax.plot(x, ref[:, j], "k-", lw=2, label="Cole-Hopf")
        ax.plot(x, pred[:, j], "r--", lw=1.5, label="PINN")
        ax.set(title=f"t = {t[j]:.2f}", xlabel="x", ylabel="u")
        ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(
    adam_steps=None,
    lbfgs_steps=None,
    n_domain=None,
    n_shock=None,
    layers=None,
    neurons=None,
    lr=None,
    eval_every=None,
    dtype=core.float64,
    seed=0,
    tiny=False,
    out_dir=None,
    make_plot=True,
    checkpoint_dir=None,
    verbose=True,
):
    """Train and verify; return a dict with ``error`` (rel-L2 on the 256 x 100 grid),
    ``seconds`` (training wall time), ``history`` (the Trainer's) and ``pred``/``ref`` ``[256,
    100]``.

    Args:
        adam_steps, lbfgs_steps, n_domain, n_shock, layers, neurons, lr, eval_every: override
            the yaml's ``pinn`` section (``layers`` counts all dense layers, MindFlow's
            convention; the error is evaluated every ``eval_every`` steps).
        dtype: ``core.float64`` (default) or ``core.float32``.
        seed: seeds the weights and the points.
        tiny: a few steps on a small network (what the tests run).
        out_dir: folder for the plots (default ``burgers_pinn_out/`` in the current working
            directory).
        make_plot: write the plots.
        checkpoint_dir: where the Trainer keeps ``pinn.ckpt.h5`` (None: no checkpoints).
        verbose: progress bar and printed results.
    """
    config = load_yaml_config(CONFIG)
    settings = dict(config["pinn"])
    if tiny:
        settings.update(TINY)
    given = {
        "adam_steps": adam_steps,
        "lbfgs_steps": lbfgs_steps,
        "n_domain": n_domain,
        "n_shock": n_shock,
        "layers": layers,
        "neurons": neurons,
        "lr": lr,
        "eval_every": eval_every,
    }
    settings.update({k: v for k, v in given.items() if v is not None})

    core.set_seed(seed)
    model = build_model(settings["layers"], settings["neurons"], dtype)
    points = core.tensor(
        collocation_points(config, settings["n_domain"], settings["n_shock"], seed), dtype=dtype
    )
    grid_points, u_ref, (x, t) = reference_grid()

    def loss_terms(xt):
        r = burgers_residual(model, xt)
        return {"pde": ops.mean(r * r)}

    trainer = Trainer(
        loss_terms,
        model,
        lr=settings["lr"],
        adam_steps=settings["adam_steps"],
        lbfgs_steps=settings["lbfgs_steps"],
        dtype=dtype,
        reference=(grid_points, u_ref),
        eval_every=settings["eval_every"],
        lbfgs_options={"history_size": 100, "tolerance_grad": 1e-12, "tolerance_change": 0.0},
        lbfgs_chunk=settings["lbfgs_chunk"],
        checkpoint_dir=checkpoint_dir,
        progress=verbose,
    )
    t0 = time.perf_counter()
    history = trainer.fit(points)
    seconds = time.perf_counter() - t0

    with core.no_grad():
        pred = np.asarray(model(core.tensor(grid_points, dtype=dtype)).asnumpy(), np.float64)
    error = relative_l2(pred, u_ref)
    pred, ref = pred.reshape(256, 100), u_ref.reshape(256, 100)
    if verbose:
        adam_err = _error_at(history, trainer.adam_steps)
        print(
            f"Burgers PINN ({dtype}, {settings['layers']} layers x {settings['neurons']}, "
            f"{points.shape[0]} points): Adam {trainer.adam_steps} steps -> rel-L2 "
            f"{adam_err:.3e}, + L-BFGS {trainer.step - trainer.adam_steps} iterations -> "
            f"rel-L2 {error:.3e} (256 x 100 grid vs Cole-Hopf), loss {history['total'][-1]:.3e}, "
            f"{seconds:.1f} s"
        )
    if make_plot:
        folder = pathlib.Path(out_dir or default_out_dir("burgers_pinn"))
        folder.mkdir(parents=True, exist_ok=True)
        plot(pred, ref, x, t, folder / "burgers.png", error)
        trainer.plot_history(folder / "loss.png", title="Burgers PINN")
        if verbose:
            print(f"plots: {folder / 'burgers.png'}, {folder / 'loss.png'}")
    return {
        "error": error,
        "seconds": seconds,
        "history": history,
        "pred": pred,
        "ref": ref,
        "trainer": trainer,
    }


def _error_at(history, step):
    """The last recorded error at or before ``step`` (nan when none)."""
    found = [e for s, e in zip(history["error_step"], history["error"], strict=True) if s <= step]
    return found[-1] if found else float("nan")


def _parse(argv=None):
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("adam_steps", "lbfgs_steps", "n_domain", "n_shock", "layers", "neurons"):
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=None)
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--float32", action="store_true", help="train in float32")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tiny", action="store_true", help="a few steps, no plot")
    parser.add_argument(
        "--out-dir", aliases=["--out"], default=default_out_dir("burgers_pinn"),
        help="folder for the plots",
    )
    parser.add_argument(
        "--checkpoint-dir", default=None, help="where the Trainer keeps pinn.ckpt.h5"
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = _parse()
    main(
        adam_steps=args.adam_steps,
        lbfgs_steps=args.lbfgs_steps,
        n_domain=args.n_domain,
        n_shock=args.n_shock,
        layers=args.layers,
        neurons=args.neurons,
        lr=args.lr,
        dtype=core.float32 if args.float32 else core.float64,
        seed=args.seed,
        tiny=args.tiny,
        out_dir=args.out_dir,
        make_plot=not args.tiny,
        checkpoint_dir=args.checkpoint_dir,
    )
