"""2D Navier-Stokes vorticity (nu = 1e-3, 64^2): 10 frames in, the next 10 rolled out.

The FNO paper's case (Li et al., ICLR 2021, Section 5.3, Table 1: FNO-2D 0.0128 relative L2 at
nu = 1e-3 with 1000 training trajectories) with MindFlow's two apps
(``applications/data_driven/navier_stokes/{fno2d,fno3d}``: their configs, fno2d.yaml and
fno3d.yaml here):

- ``--model fno2d``: FNO2D maps the last 10 frames to the next one and is trained on its own
  10-step rollout (FNO-2D's recurrent training; ``OperatorTrainer(t_in=10, t_out=10)``);
- ``--model fno3d``: FNO3D maps the first 10 frames, repeated along a time axis, to the next 10
  at once (``SpaceTimeSource``), inputs and outputs scaled per point (MindFlow's
  ``UnitGaussianNormalizer``).

Data: ``datasets.pde.generators.generate_navier_stokes`` (FNO's forcing, and its initial
field at the amplitude of FNO's released data: ``grf_scale`` 2 * 7^3 in the configs) on the
first run, at 64^2 with dt = 5e-3, frames t = 0 .. 19, written to ``<out-dir>`` (default
``./navier_stokes_out``); ``--data 'dir/*.h5'`` takes trajectories from several PDEBench files
(e.g. made in parallel). The test set is the last ``n_test`` trajectories. It prints the test
relative L2 per rolled-out step and writes the loss curve and a sample rollout.

    python examples/mindflow/operators/navier_stokes/navier_stokes.py --model fno2d
    python examples/mindflow/operators/navier_stokes/navier_stokes.py --model fno3d
    python examples/mindflow/operators/navier_stokes/navier_stokes.py --tiny
"""

import glob
import pathlib
import time

import h5py
import numpy as np

from diffsci import core
from diffsci.datasets.pde.generators import generate_navier_stokes
from diffsci.mindflow import load_yaml_config
from diffsci.mindflow.cell import FNO2D, FNO3D
from diffsci.mindflow.train import OperatorTrainer, SpaceTimeSource, TrajectorySource
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent  # fno2d.yaml, fno3d.yaml

TINY = {
    "n_train": 6,
    "n_test": 2,
    "resolution": 16,
    "n_time": 8,
    "t_in": 4,
    "t_out": 4,
    "epochs": 6,
    "batch_size": 2,
    "modes": 4,
    "width": 6,
}
TINY_LR = {"fno2d": 5e-3, "fno3d": 2e-2}
# Li et al. 2021, Table 1, nu = 1e-3, 1000 training trajectories, 40 steps (T = 50) rolled out
PAPER = {
    "fno2d": "FNO paper, FNO-2D: 1.28e-2 over 40 steps with 1000",
    "fno3d": "FNO paper, FNO-3D: 8.6e-3 over 40 steps with 1000",
}


def ns_file(folder, n, resolution, n_time, nu, dt, scale, seed=0, verbose=True):
    """The PDEBench file of ``n`` vorticity trajectories (frames t = 0, 1, ..., n_time - 1;
    ``scale``: the initial field's covariance prefactor), written by
    ``generate_navier_stokes`` when missing; returns its path."""
    folder = pathlib.Path(folder)
    path = folder / f"ns_nu{nu:g}_s{resolution}_t{n_time}_scale{scale:g}_n{n}_seed{seed}.h5"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        generate_navier_stokes(
            n,
            resolution=resolution,
            subsample=1,
            nu=nu,
            t_final=float(n_time - 1),
            n_time=n_time,
            dt=dt,
            scale=scale,
            seed=seed,
            path=path,
            dtype=np.float32,
            progress=verbose,
        )
    return path


def load_trajectories(paths):
    """Vorticity ``[N, T, X, Y]`` float32 from one or more PDEBench ``single`` files."""
    arrays = []
    for path in paths:
        with h5py.File(path, "r") as f:
            arrays.append(np.asarray(f["tensor"], dtype=np.float32))
    shapes = {a.shape[1:] for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"navier_stokes: the files hold different [T, X, Y]: {sorted(shapes)}")
    return np.concatenate(arrays)


def build_model(name, config, resolution, t_in, t_out, modes=None, width=None):
    """FNO2D (t_in frames -> 1) or FNO3D ([X, Y, t_out] space-time) from the config."""
    m = config["model"]
    width = width or m["width"]
    if name == "fno2d":
        return FNO2D(
            in_channels=t_in,
            out_channels=m["out_channels"],
            n_modes=[modes or m["modes"]] * 2,
            resolutions=[resolution, resolution],
            hidden_channels=width,
            n_layers=m["depth"],
            projection_channels=4 * width,
        )
    time_modes = min(m["time_modes"], t_out // 2 + 1)
    return FNO3D(
        in_channels=t_in,
        out_channels=m["out_channels"],
        n_modes=[modes or m["modes"], modes or m["modes"], time_modes],
        resolutions=[resolution, resolution, t_out],
        hidden_channels=width,
        n_layers=m["depth"],
        projection_channels=4 * width,
    )


def main(
    model="fno2d",
    n_train=None,
    n_test=None,
    resolution=None,
    n_time=None,
    t_in=None,
    t_out=None,
    epochs=None,
    batch_size=None,
    lr=None,
    modes=None,
    width=None,
    train_rollout=None,
    stride=1,
    time_budget=None,
    data=None,
    out_dir=None,
    plot=True,
    verbose=True,
    tiny=False,
):
    """Train FNO2D or FNO3D; return ``{"rollout_relative_l2" [t_out], "mean", "report", ...}``.

    Args:
        model (str): ``"fno2d"`` or ``"fno3d"`` (picks fno2d.yaml or fno3d.yaml).
        n_train, n_test, resolution, n_time, t_in, t_out, epochs, batch_size, lr: override the
            config (n_train / n_test: trajectories; with ``data``, all but the last ``n_test``
            trajectories train unless ``n_train`` is given).
        modes, width: override the model's spatial modes and width.
        train_rollout (int): fno2d: the frames rolled out per training window (default
            ``t_out``, FNO-2D's recurrent training; 1: one-step training, a tenth of the
            cost). The test error is always that of the whole ``t_out``-step rollout.
        stride (int): fno2d: frames between training windows.
        time_budget (float): seconds of training: no epoch starts that would end after it
            (judged by the last epoch's length).
        data (str): a glob of PDEBench files to read instead of generating.
        out_dir (str): folder of the generated data, the plots and the checkpoint (default
            ``navier_stokes_out/`` in the current working directory).
        plot, verbose (bool): write the plots; print the progress and the errors.
        tiny (bool): a few 16^2 trajectories and a small model (the tests).
    """
    if model not in ("fno2d", "fno3d"):
        raise ValueError(f"navier_stokes: model must be 'fno2d' or 'fno3d', got {model!r}")
    config = load_yaml_config(HERE / f"{model}.yaml")
    d, m, o = config["data"], config["model"], config["optimizer"]
    t = TINY if tiny else {}

    def pick(value, key, default):
        return value if value is not None else t.get(key, default)

    n_test = pick(n_test, "n_test", d["test_size"])
    resolution = pick(resolution, "resolution", d["resolution"])
    n_time = pick(n_time, "n_time", d["n_time"])
    t_in = pick(t_in, "t_in", m["input_timestep"])
    t_out = pick(t_out, "t_out", m["output_timestep"])
    epochs = pick(epochs, "epochs", o["epochs"])
    batch_size = pick(batch_size, "batch_size", d["batch_size"])
    lr = pick(lr, "lr", TINY_LR[model] if tiny else o["learning_rate"])
    modes, width = pick(modes, "modes", None), pick(width, "width", None)
    out = pathlib.Path(out_dir or default_out_dir("navier_stokes"))

    if data:
        paths = sorted(glob.glob(data))
        if not paths:
            raise FileNotFoundError(f"navier_stokes: no file matches --data {data!r}")
        u = load_trajectories(paths)  # [N, T, X, Y]
        n_train = pick(n_train, "n_train", u.shape[0] - n_test)
    else:
        n_train = pick(n_train, "n_train", d["train_size"])
        u = load_trajectories(
            [
                ns_file(
                    out,
                    n_train + n_test,
                    resolution,
                    n_time,
                    d["nu"],
                    d["dt"],
                    d["grf_scale"],
                    verbose=verbose,
                )
            ]
        )
    if n_train + n_test > u.shape[0] or u.shape[1] < t_in + t_out:
        raise ValueError(
            f"navier_stokes: {u.shape[0]} trajectories of {u.shape[1]} frames cannot give "
            f"{n_train} + {n_test} trajectories of t_in + t_out = {t_in + t_out} frames"
        )
    u = u[:, : t_in + t_out]
    train_rollout = t_out if train_rollout is None else train_rollout
    if not 1 <= train_rollout <= t_out:
        raise ValueError(
            f"navier_stokes: train_rollout must be in [1, t_out={t_out}], got {train_rollout}"
        )
    train = TrajectorySource.from_arrays(u[:n_train], 2)
    test = TrajectorySource.from_arrays(u[u.shape[0] - n_test :], 2)
    if model == "fno3d":  # first t_in frames -> next t_out frames at once
        train, test = SpaceTimeSource(train, t_in, t_out), SpaceTimeSource(test, t_in, t_out)

    core.set_seed(0)
    net = build_model(model, config, u.shape[-1], t_in, t_out, modes, width)
    trainer = OperatorTrainer(
        net,
        train,
        test,
        t_in=t_in,
        t_out=train_rollout,
        stride=stride,
        optimizer="adamweightdecay" if model == "fno2d" else "adam",  # as MindFlow's scripts
        lr=lr,
        weight_decay=o["weight_decay"],
        schedule="cosine",
        warmup_epochs=min(o["warmup_epochs"], epochs - 1),
        epochs=epochs,
        batch_size=batch_size,
        normalize=model == "fno3d",
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
    per_step = np.asarray(
        report.rollout_relative_l2 if model == "fno2d" else report.relative_l2_per_step
    )
    if verbose:
        print(report)
        how = (
            f"trained on {train_rollout}-step rollouts"
            if model == "fno2d"
            else "all predicted at once"
        )
        paper = PAPER[model]
        print(
            f"Navier-Stokes nu={d['nu']:g} {u.shape[-1]}^2 {model}: {n_train} train / {n_test} "
            f"test trajectories, {t_in} frames in, {t_out} out ({how}), {done} of {epochs} "
            f"epochs in {seconds:.0f} s; rollout relative L2 per step "
            + " ".join(f"{e:.3e}" for e in per_step)
            + f"; mean {per_step.mean():.4e} ({paper})"
        )
    if plot:
        out.mkdir(parents=True, exist_ok=True)
        trainer.save()
        trainer.plot_history(out / f"ns_{model}_loss.png", title=f"Navier-Stokes, {model}")
        if model == "fno2d":
            trainer.plot_sample(out / f"ns_{model}_sample.png")
    return {
        "rollout_relative_l2": per_step,
        "mean": float(per_step.mean()),
        "report": report,
        "epochs": done,
        "seconds": seconds,
        "n_train": n_train,
        "history": trainer.history,
        "trainer": trainer,
    }


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="fno2d", choices=["fno2d", "fno3d"])
    for name in ("n_train", "n_test", "resolution", "n_time", "t_in", "t_out", "epochs"):
        parser.add_argument(f"--{name.replace('_', '-')}", type=int)
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--modes", type=int)
    parser.add_argument("--width", type=int)
    parser.add_argument("--lr", type=float)
    parser.add_argument("--train-rollout", type=int)
    parser.add_argument("--stride", type=int, default=1)
    parser.add_argument(
        "--time-budget", aliases=["--time_limit", "--time-limit"], type=float, help="seconds"
    )
    parser.add_argument("--data", help="a glob of PDEBench files to read instead of generating")
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("navier_stokes"))
    parser.add_argument("--tiny", action="store_true")
    args = parser.parse_args()
    main(**vars(args), plot=True, verbose=True)
