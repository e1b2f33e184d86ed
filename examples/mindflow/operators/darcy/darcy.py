"""2D Darcy flow: FNO2D (or UNet2D) learns the map coefficient a(x) -> pressure u(x).

The FNO paper's benchmark (Li et al., ICLR 2021, Section 5.2, Table 4: FNO 0.0108 relative L2
at s = 85): ``-div(a grad u) = 1`` on (0, 1)^2, ``u = 0`` on the boundary, ``a`` = 12 / 3 where
a Gaussian random field N(0, (-Δ + 9 I)^-2) is >= / < 0. The data comes from
``datasets.pde.generators.generate_darcy`` on the first run (a PDEBench ``darcy`` file in
``<out-dir>``, default ``./darcy_out``, or ``--data``; darcy.yaml's ``data``), the model and
optimizer from darcy.yaml: FNO2D modes 12 width 32, Adam with FNO's step schedule, relative L2
loss, inputs and outputs scaled by a per-point ``UnitGaussianNormalizer`` (FNO's recipe), all
through ``mindflow.train``'s ``OperatorTrainer``. It prints the test relative L2 and writes the
loss curve and a sample.

    python examples/mindflow/operators/darcy/darcy.py                     # 1000/200, 500 epochs
    python examples/mindflow/operators/darcy/darcy.py --epochs 40 --time-budget 3000
    python examples/mindflow/operators/darcy/darcy.py --model unet2d      # UNet2D, same data
    python examples/mindflow/operators/darcy/darcy.py --tiny              # seconds (tests)
    python examples/mindflow/operators/darcy/darcy.py --device GPU        # cupy on a CUDA GPU
"""

import pathlib
import time

import numpy as np

from diffsci import core
from diffsci.datasets.pde.generators import generate_darcy
from diffsci.mindflow import load_yaml_config
from diffsci.mindflow.cell import FNO2D, UNet2D
from diffsci.mindflow.train import OperatorTrainer, PairSource
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent  # darcy.yaml

TINY = {
    "n_train": 8,
    "n_test": 4,
    "resolution": 17,
    "solve_resolution": 17,
    "epochs": 8,
    "batch_size": 2,
    "modes": 4,
    "width": 8,
    "unet_depth": 1,
    "lr": 1e-2,
    # 8 samples leave grid points where every coefficient is the same (std 0): FNO's
    # per-point normalizer would divide by its eps there
    "normalize": False,
}


def darcy_file(folder, n, resolution, solve_resolution, seed=0, verbose=True):
    """The PDEBench ``darcy`` file of ``n`` samples at ``resolution`` nodes per side, written
    by ``generate_darcy`` when missing; returns its path."""
    if (solve_resolution - 1) % (resolution - 1):
        raise ValueError(
            f"darcy: solve_resolution - 1 ({solve_resolution - 1}) must be a multiple of "
            f"resolution - 1 ({resolution - 1})"
        )
    folder = pathlib.Path(folder)
    path = folder / f"darcy_r{solve_resolution}_s{resolution}_n{n}_seed{seed}.h5"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        generate_darcy(
            n,
            resolution=solve_resolution,
            subsample=(solve_resolution - 1) // (resolution - 1),
            seed=seed,
            path=path,
            dtype=np.float32,
            progress=verbose,
        )
    return path


def build_model(name, config, resolution, modes=None, width=None, depth=None):
    """FNO2D or UNet2D from darcy.yaml's ``model`` / ``unet`` sections (``width``: UNet2D's
    base channels; ``depth``: its levels)."""
    m = config["model"]
    if name == "fno2d":
        return FNO2D(
            in_channels=m["in_channels"],
            out_channels=m["out_channels"],
            n_modes=[modes or m["modes"]] * 2,
            resolutions=[resolution, resolution],
            hidden_channels=width or m["width"],
            n_layers=m["depth"],
            projection_channels=m["projection_channels"] if width is None else 4 * width,
        )
    if name == "unet2d":
        u = config["unet"]
        return UNet2D(
            m["in_channels"],
            m["out_channels"],
            base_channels=width or u["base_channels"],
            n_layers=depth or u["depth"],
        )
    raise ValueError(f"darcy: model must be 'fno2d' or 'unet2d', got {name!r}")


def main(
    model="fno2d",
    n_train=None,
    n_test=None,
    resolution=None,
    solve_resolution=None,
    epochs=None,
    batch_size=None,
    lr=None,
    modes=None,
    width=None,
    time_budget=None,
    data=None,
    out_dir=None,
    plot=True,
    verbose=True,
    seed=0,
    tiny=False,
    device=None,
):
    """Train on Darcy and return ``{"relative_l2", "epochs", "history", "trainer", ...}``.

    Args:
        model (str): ``"fno2d"`` or ``"unet2d"``.
        n_train, n_test, resolution, solve_resolution, epochs, batch_size, lr: override
            darcy.yaml (the step schedule's ``step_size`` is scaled by ``epochs / 500``).
        modes, width: override the model's modes and width (UNet2D: its base channels).
            FNO2D's projection then has ``4 * width`` channels, as darcy.yaml's 32 -> 128.
        time_budget (float): seconds of training: no epoch starts that would end after it
            (judged by the last epoch's length); the run is evaluated where it stopped and
            the schedule still assumes ``epochs``.
        data (str): the folder of the data file (default ``out_dir``).
        out_dir (str): folder of the plots and checkpoint (default ``darcy_out/`` in the
            current working directory).
        plot, verbose (bool): write the plots; print the progress and the errors.
        seed (int): the data's seed (test samples follow the training samples).
        tiny (bool): a few samples at s = 17 and a small model (the tests).
        device (str): ``"CPU"`` or ``"GPU"`` (cupy): where the model trains (default: the
            current device, the CPU unless ``core.set_device`` chose another).
    """
    if device is not None:
        core.set_device(device)
    config = load_yaml_config(HERE / "darcy.yaml")
    d, o = config["data"], config["optimizer"]
    t = TINY if tiny else {}

    def pick(value, key, default):
        return value if value is not None else t.get(key, default)

    n_train = pick(n_train, "n_train", d["train_size"])
    n_test = pick(n_test, "n_test", d["test_size"])
    resolution = pick(resolution, "resolution", d["resolution"])
    solve_resolution = pick(solve_resolution, "solve_resolution", d["solve_resolution"])
    epochs = pick(epochs, "epochs", o["epochs"])
    batch_size = pick(batch_size, "batch_size", d["batch_size"])
    lr = pick(lr, "lr", o["learning_rate"])
    modes, width = pick(modes, "modes", None), pick(width, "width", None)
    out = pathlib.Path(out_dir or default_out_dir("darcy"))
    folder = pathlib.Path(data) if data else out

    path = darcy_file(folder, n_train + n_test, resolution, solve_resolution, seed, verbose)
    # 1200 samples at s = 85 are 69 MB: held in memory, no HDF5 read per training sample
    train = PairSource.from_pdebench(path, indices=range(n_train), in_memory=True)
    test = PairSource.from_pdebench(path, indices=range(n_train, n_train + n_test), in_memory=True)

    core.set_seed(0)
    net = build_model(model, config, resolution, modes, width, t.get("unet_depth"))
    trainer = OperatorTrainer(
        net,
        train,
        test,
        lr=lr,
        weight_decay=o["weight_decay"],
        schedule="step",
        step_size=max(1, round(o["step_size"] * epochs / o["epochs"])),
        gamma=o["gamma"],
        epochs=epochs,
        batch_size=batch_size,
        normalize=t.get("normalize", True),
        eval_every=config["summary"]["test_interval"],
        checkpoint_dir=out / f"checkpoints_{model}" if plot else None,
        progress=verbose,
    )
    start = time.perf_counter()
    done, last = 0, start
    for epoch in range(1, epochs + 1):
        trainer.fit(until=epoch)
        done, now, last = epoch, time.perf_counter(), time.perf_counter() - last
        # stop when another epoch as long as the last one would pass the limit
        if time_budget is not None and now - start + last > time_budget:
            break
        last = now
    seconds = time.perf_counter() - start
    report = trainer.evaluate()
    if verbose:
        print(
            f"Darcy s={resolution} {model}: {n_train} train / {n_test} test, {done} of {epochs} "
            f"epochs in {seconds:.0f} s; test relative L2 {report.relative_l2:.4e} "
            f"(FNO paper: 1.08e-2 after 500 epochs)"
        )
    if plot:
        out.mkdir(parents=True, exist_ok=True)
        trainer.save()
        trainer.plot_history(out / f"darcy_{model}_loss.png", title=f"Darcy, {model}")
        trainer.plot_sample(out / f"darcy_{model}_sample.png")
    return {
        "relative_l2": float(report.relative_l2),
        "report": report,
        "epochs": done,
        "seconds": seconds,
        "history": trainer.history,
        "trainer": trainer,
    }


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="fno2d", choices=["fno2d", "unet2d"])
    for name in ("n_train", "n_test", "resolution", "solve_resolution", "epochs", "batch_size"):
        parser.add_argument(f"--{name.replace('_', '-')}", type=int)
    parser.add_argument("--modes", type=int)
    parser.add_argument("--width", type=int)
    parser.add_argument("--lr", type=float)
    parser.add_argument(
        "--time-budget", aliases=["--time_limit", "--time-limit"], type=float, help="seconds"
    )
    parser.add_argument("--data", help="folder of the data file (default: --out-dir)")
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("darcy"))
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--device", choices=["CPU", "GPU"])
    args = parser.parse_args()
    main(**{k: v for k, v in vars(args).items()}, plot=True, verbose=True)
