"""FNO1D (and KNO1D, DeepONet) on the FNO paper's Burgers problem: u(., 0) -> u(., 1).

Viscous Burgers, nu = 0.1, periodic on [0, 1), initial conditions from the GRF
N(0, 625 (-Laplacian + 25 I)^-2) (Li et al., ICLR 2021, arXiv 2010.08895, Section 5.1; the
paper's FNO-1D reaches relative L2 0.016 at s = 1024 with 1000 training samples). The data are
made on the first run by ``datasets.pde.generators.generate_burgers`` (ETDRK4, pseudo-spectral)
and cached as a PDEBench file under ``<out-dir>/data/`` (``--data-dir``; written atomically: an
interrupted run leaves no half file). The configs are MindFlow's (``configs/fno1d.yaml``,
``configs/kno1d.yaml`` from ``applications/data_driven/burgers``; ``deeponet.yaml`` is ours in
the same layout); training is ``mindflow.train.OperatorTrainer`` (relative L2 loss, Adam, a
``core.jit`` step). The script prints the test relative L2 at every resolution in
``eval_resolutions`` (zero-shot super-resolution: FNO/KNO trained at 256 points evaluate at
1024) and writes ``<out-dir>/<model>_samples.png`` and ``<model>_loss.png`` (default
``--out-dir``: ``./burgers_out``).

    python examples/mindflow/operators/burgers/burgers.py                       # FNO1D, s=1024
    python examples/mindflow/operators/burgers/burgers.py --train-resolution 256 \\
        --eval-resolutions 256 1024                                            # zero-shot
    python examples/mindflow/operators/burgers/burgers.py --nu 0.01           # with shocks
    python examples/mindflow/operators/burgers/burgers.py --model kno1d
    python examples/mindflow/operators/burgers/burgers.py --model deeponet
    python examples/mindflow/operators/burgers/burgers.py --tiny                # seconds
"""

import pathlib
import time

import numpy as np

from diffsci import core
from diffsci.core import nn
from diffsci.datasets.pde import open_pdebench
from diffsci.datasets.pde.generators import generate_burgers
from diffsci.mindflow import load_yaml_config
from diffsci.mindflow.cell import FNO1D, KNO1D, DeepONet
from diffsci.mindflow.train import OperatorTrainer, PairSource
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent
MODELS = ("fno1d", "kno1d", "deeponet")


class KNOPrediction(nn.Cell):
    """KNO1D's prediction only (``[B, n, 1] -> [B, n, 1]``), for a trainer that takes one output.

    MindFlow's kno1d app adds a reconstruction loss (``5 MSE(pred) + 0.5 MSE(recons)``); here
    the loss is the relative L2 of the prediction alone.
    """

    def __init__(self, kno):
        super().__init__()
        self.kno = kno

    def construct(self, u):
        pred, _ = self.kno(u)
        return pred


class DeepONetOnGrid(nn.Cell):
    """DeepONet on a fixed uniform grid: ``u0 [B, n, 1] -> u1 [B, n, 1]`` (branch: the n values
    of u0; trunk: x_j = j / n). Unlike FNO it is tied to its grid size n."""

    def __init__(self, n, branch_layers, trunk_layers, activation="tanh"):
        super().__init__()
        if branch_layers[0] != n:
            raise ValueError(
                f"DeepONetOnGrid: the branch net reads the {n} grid values, but branch_layers "
                f"starts with {branch_layers[0]}; set model.branch_layers[0] to {n}"
            )
        self.n = n
        self.net = DeepONet(list(branch_layers), list(trunk_layers), activation=activation)
        self.x = core.tensor(np.arange(n, dtype=np.float32)[:, None] / n)  # [n, 1]

    def construct(self, u):
        b = u.shape[0]
        out = self.net(u.reshape(b, self.n), self.x)  # [B, n]
        return out.reshape(b, self.n, 1)


def build_model(name, config, resolution):
    """The model of ``config["model"]`` for training at ``resolution`` points."""
    m = config["model"]
    if name == "fno1d":  # MindFlow's train.py: projection_channels = 4 * hidden_channels
        return FNO1D(
            in_channels=m["in_channels"],
            out_channels=m["out_channels"],
            n_modes=m["modes"],
            resolutions=resolution,
            hidden_channels=m["hidden_channels"],
            n_layers=m["depths"],
            projection_channels=4 * m["hidden_channels"],
        )
    if name == "kno1d":
        kno = KNO1D(
            in_channels=config["data"]["in_channels"],
            channels=m["channels"],
            modes=m["modes"],
            depths=m["depths"],
            resolution=resolution,
        )
        return KNOPrediction(kno)
    if name == "deeponet":
        branch = [resolution, *m["branch_layers"][1:]]
        return DeepONetOnGrid(resolution, branch, m["trunk_layers"], m["activation"])
    raise ValueError(f"burgers: model must be one of {MODELS}, got {name!r}")


def burgers_data(n_samples, solver_resolution=1024, seed=0, folder=None, verbose=True, nu=0.1):
    """``(u0, u1)``, each ``[n_samples, solver_resolution]`` float32, from the cache file
    ``<folder>/burgers_nu<nu>_r<res>_n<N>_seed<seed>.h5`` (generated when missing; default
    ``burgers_out/data/`` in the current working directory)."""
    folder = pathlib.Path(folder or pathlib.Path(default_out_dir("burgers")) / "data")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"burgers_nu{nu:g}_r{solver_resolution}_n{n_samples}_seed{seed}.h5"
    if not path.exists():
        if verbose:
            print(f"generating {n_samples} Burgers samples at {solver_resolution} points -> {path}")
        generate_burgers(
            n_samples,
            resolution=solver_resolution,
            nu=nu,
            t_final=1.0,
            n_time=2,
            seed=seed,
            path=path,
            dtype=np.float32,
            progress=verbose,
        )
    with open_pdebench(path) as f:
        u = np.asarray(f.h5["tensor"][:], dtype=np.float32)  # [N, 2, s]
    return u[:, 0], u[:, 1]


def _pairs(u0, u1, stride):
    return PairSource(u0[:, ::stride], u1[:, ::stride], n_spatial=1)


def main(
    model="fno1d",
    n_train=None,
    n_test=None,
    train_resolution=None,
    eval_resolutions=None,
    epochs=None,
    batch_size=None,
    lr=None,
    schedule="cosine",
    solver_resolution=1024,
    seed=0,
    data_dir=None,
    out_dir=None,
    plot=True,
    verbose=True,
    config=None,
    time_budget=None,
    normalize=None,
    nu=0.1,
):
    """Train ``model`` on Burgers u(., 0) -> u(., 1); return the errors and the history.

    Args:
        model: ``"fno1d"``, ``"kno1d"`` or ``"deeponet"`` (reads ``configs/<model>.yaml``).
        n_train, n_test: samples (default the config's: 1000 / 200). The test samples are the
            last ``n_test`` of the generated set, the training samples the first ``n_train``.
        train_resolution: the training grid (default the config's ``data.resolution``); it
            must divide ``solver_resolution`` (the data are subsampled by point).
        eval_resolutions: the test grids (default the training grid): the zero-shot check.
        epochs, batch_size, lr: override the config. schedule: ``"cosine"`` (MindFlow's
            warm-up cosine), ``"step"`` (the FNO paper: halve every ``epochs / 5``).
        solver_resolution: the generator's grid. seed: data and initial weights.
        out_dir: the output folder (default ``burgers_out/`` in the current working
            directory): the figures, and the data cache unless ``data_dir``.
        data_dir: the data cache (default ``<out_dir>/data/``). plot, verbose: figures,
            printing.
        config: a dict replacing ``configs/<model>.yaml``.
        normalize: scale inputs and labels per grid point (``OperatorTrainer(normalize=True)``,
            FNO's ``UnitGaussianNormalizer``); default the config's ``data.normalize`` or False.
        nu: the viscosity (the FNO paper's 0.1 by default; u(., 1) keeps ~1.6% of the norm of
            u(., 0) there, a smaller nu keeps the steep fronts).
        time_budget: seconds; training stops after the first epoch that ends past it (the
            schedule is then cut short: the printed line gives the epochs reached).

    Returns:
        ``{"errors": {resolution: relative L2}, "history", "trainer", "seconds"}``.
    """
    if model not in MODELS:
        raise ValueError(f"burgers: model must be one of {MODELS}, got {model!r}")
    config = config or load_yaml_config(HERE / "configs" / f"{model}.yaml")
    data_cfg, opt_cfg = config["data"], config["optimizer"]
    n_train = int(n_train or data_cfg["train"]["num_samples"])
    n_test = int(n_test or data_cfg["test"]["num_samples"])
    train_resolution = int(
        train_resolution or data_cfg.get("resolution") or config["model"]["resolution"]
    )
    eval_resolutions = [int(r) for r in (eval_resolutions or [train_resolution])]
    for r in [train_resolution, *eval_resolutions]:
        if solver_resolution % r:
            raise ValueError(
                f"burgers: resolution {r} does not divide solver_resolution {solver_resolution}"
            )
    out_dir = pathlib.Path(out_dir or default_out_dir("burgers"))
    data_dir = data_dir or out_dir / "data"
    core.set_seed(seed)
    u0, u1 = burgers_data(n_train + n_test, solver_resolution, seed, data_dir, verbose, nu)
    train = _pairs(u0[:n_train], u1[:n_train], solver_resolution // train_resolution)
    test = _pairs(u0[-n_test:], u1[-n_test:], solver_resolution // train_resolution)

    epochs = int(epochs or opt_cfg["epochs"])
    net = build_model(model, config, train_resolution)
    trainer = OperatorTrainer(
        net,
        train,
        test,
        lr=float(lr or opt_cfg["learning_rate"]),
        weight_decay=float(opt_cfg.get("weight_decay", 0.0)),
        optimizer="adamweightdecay" if "weight_decay" in opt_cfg else "adam",
        schedule=schedule,
        warmup_epochs=1 if schedule == "cosine" else 0,
        step_size=max(1, epochs // 5),
        gamma=0.5,
        epochs=epochs,
        batch_size=int(batch_size or data_cfg["batch_size"]),
        test_batch_size=50,
        seed=seed,
        eval_every=max(1, epochs // 10),
        progress=verbose,
        normalize=bool(data_cfg.get("normalize", False) if normalize is None else normalize),
    )
    start = time.perf_counter()
    if time_budget is None:
        history = trainer.fit()
    else:
        for epoch in range(1, epochs + 1):
            history = trainer.fit(until=epoch)
            if time.perf_counter() - start > time_budget:
                break
    seconds = time.perf_counter() - start

    errors = {}
    for r in eval_resolutions:
        data = _pairs(u0[-n_test:], u1[-n_test:], solver_resolution // r)
        if r != train_resolution and model == "deeponet":
            continue  # DeepONet's branch net is tied to its grid
        errors[r] = trainer.evaluate(data).relative_l2
    if verbose:
        steps = trainer.step
        print(
            f"Burgers nu={nu:g} {model}: {n_train} train / {n_test} test samples, trained at "
            f"s={train_resolution}, {trainer.epoch} of {epochs} epochs ({steps} steps, "
            f"{seconds:.0f} s)"
        )
        for r, e in errors.items():
            tag = "" if r == train_resolution else " (zero-shot)"
            print(f"  test relative L2 at s={r}: {e:.4e}{tag}")
        if train_resolution in errors:
            for r, e in errors.items():
                if r != train_resolution:
                    growth = e / errors[train_resolution] - 1
                    print(f"  error growth s={train_resolution} -> s={r}: {100 * growth:+.1f}%")
    if plot:
        folder = out_dir
        folder.mkdir(parents=True, exist_ok=True)
        plot_samples(trainer, test, folder / f"{model}_samples.png", model)
        trainer.plot_history(folder / f"{model}_loss.png", title=f"Burgers {model}")
    return {"errors": errors, "history": history, "trainer": trainer, "seconds": seconds}


def plot_samples(trainer, test, path, name, count=4):
    """For ``count`` test samples: u(., 0) (top) and the true and predicted u(., 1) (bottom;
    at nu = 0.1 it is about 50 times smaller than u(., 0), hence its own axes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    inputs = np.stack([test[i][0] for i in range(count)])  # [count, s, 1]
    labels = np.stack([test[i][1] for i in range(count)])
    pred = trainer.predict(inputs)
    x = np.arange(inputs.shape[1]) / inputs.shape[1]
    fig, axes = plt.subplots(2, count, figsize=(4 * count, 5), sharex=True)
    for k in range(count):
        axes[0, k].plot(x, inputs[k, :, 0], color="0.4", lw=1)
        axes[0, k].set_title(f"test sample {k}: u(x, 0)")
        axes[1, k].plot(x, labels[k, :, 0], "k", lw=2, label="true")
        axes[1, k].plot(x, pred[k, :, 0], "r--", lw=1.5, label=name)
        axes[1, k].set_title("u(x, 1)")
        axes[1, k].set_xlabel("x")
    axes[1, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="fno1d", choices=MODELS)
    parser.add_argument("--n-train", type=int, default=None)
    parser.add_argument("--n-test", type=int, default=None)
    parser.add_argument("--train-resolution", type=int, default=None)
    parser.add_argument("--eval-resolutions", type=int, nargs="+", default=None)
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--schedule", default="cosine", choices=("cosine", "step"))
    parser.add_argument("--solver-resolution", type=int, default=1024)
    parser.add_argument("--nu", type=float, default=0.1)
    parser.add_argument("--data-dir", default=None, help="the data cache (default: <out-dir>/data)")
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("burgers"))
    parser.add_argument("--normalize", action="store_true", default=None)
    parser.add_argument(
        "--time-budget", aliases=["--time_limit", "--time-limit"], type=float, default=None,
        help="seconds",
    )
    parser.add_argument("--tiny", action="store_true", help="40/10 samples at 64 points, 3 epochs")
    args = parser.parse_args()
    kwargs = vars(args)
    if kwargs.pop("tiny"):
        kwargs.update(n_train=40, n_test=10, epochs=3, batch_size=10, solver_resolution=64)
        kwargs["train_resolution"] = kwargs["train_resolution"] or 64
    main(**kwargs)
