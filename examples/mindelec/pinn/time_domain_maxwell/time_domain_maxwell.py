"""Time-domain Maxwell PINN (MindElec's ``physics_driven/time_domain_maxwell``) on our engine.

2D TE fields (Ex, Ey, Hz) on ``[0, 1]^2 x [0, 4 ns]`` from a Gaussian-pulse point source
(f0 = 1 GHz at (0.4975, 0.4975), smoothed over a disc of radius 0.01), Mur's second-order
absorbing boundary in the loss, MindElec's multi-scale sine network (4 scales x 7 layers x 64)
and MTL adaptive loss weights (``src/maxwell.py``, ``config.yaml``). The result is compared
with our own FDTD run of the same problem (``src/reference.py``: 1000 x 1000 Yee cells and a
CPML outside the square) at 41 times on a 101 x 101 grid; the relative L2 error of each field
is printed and written to ``<out-dir>/results.json`` with the plots, the FDTD reference and the
checkpoint (default ``--out-dir``: ``./time_domain_maxwell_out``; with ``--tiny``
``./time_domain_maxwell_tiny_out``).

    python examples/mindelec/pinn/time_domain_maxwell/time_domain_maxwell.py            # full
    python examples/mindelec/pinn/time_domain_maxwell/time_domain_maxwell.py --tiny     # CI

Full-run knobs (the CPU cannot run MindElec's 6000 epochs x 8 steps of 5 x 8192 points):
``--batch-size`` points per sub-dataset per step, ``--points`` sampled per sub-dataset,
``--epochs``; the learning-rate milestones are MindElec's (2000, 4000, 5000 of 6000 epochs)
scaled to ``--epochs`` unless ``--milestones`` names the epochs; ``--time-budget`` (s) stops
training early and still evaluates; ``--src-sampling-radius`` widens the disc that the ``src``
sub-dataset samples and ``--late-time-start``/``--late-time-fraction`` move a fraction of the
``no_src`` and ``bc`` times late (see ``src/dataset.py``).
"""

import json
import math
import os
import pathlib
import sys
import time

import numpy as np
import yaml

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from src import (  # noqa: E402
    Maxwell2DMur,
    MultiStepLR,
    check_source_sampling,
    create_random_dataset,
    late_time_domain,
    load_or_make_reference,
)
from src import src_sampling_radius as check_sampling_radius  # noqa: E402
from src.sampling_config import (  # noqa: E402
    bc_sampling_config,
    no_src_sampling_config,
    scaled,
    src_sampling_config,
)
from src.utils import l2_over_time, plot_fields, plot_l2_over_time, plot_loss  # noqa: E402

from diffsci import core  # noqa: E402
from diffsci.core import nn  # noqa: E402
from diffsci.core.train import Callback  # noqa: E402
from diffsci.mindelec.architecture import MTLWeightedLossCell, MultiScaleFCCell  # noqa: E402
from diffsci.mindelec.loss import Constraints  # noqa: E402
from diffsci.mindelec.solver import EvalCallback, LossAndTimeMonitor, Solver  # noqa: E402
from diffsci.scripts import ArgumentParser, default_out_dir  # noqa: E402

TINY = {
    "epochs": 3,
    "points": 256,
    "batch_size": 128,
    "layers": 3,
    "neurons": 16,
    "num_scales": 2,
    "ref_cells": 100,
    "ref_times": 5,
    "ref_points": 21,
    "jit": False,
}


def load_config(path=HERE / "config.yaml"):
    """The case's settings (MindElec's ``config.json`` keys, in YAML)."""
    with open(path) as f:
        return yaml.safe_load(f)


class TimeBudget(Callback):
    """Stop training (after the current step) once ``seconds`` of wall time have passed."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.start = time.perf_counter()
        self.stopped_at = None

    def step_end(self, run_context):
        if self.seconds and time.perf_counter() - self.start > self.seconds:
            cb = run_context.original_args()
            self.stopped_at = (cb.cur_epoch_num, cb.cur_step_num)
            run_context.request_stop()


class SaveEvery(Callback):
    """Write the network and the MTL weights to ``path`` every ``every`` epochs (atomically,
    overwriting), so a long run that is stopped can be continued with ``--load-ckpt``."""

    def __init__(self, cells, path, every):
        self.cells, self.path, self.every = cells, str(path), int(every)

    def epoch_end(self, run_context):
        if self.every > 0 and run_context.original_args().cur_epoch_num % self.every == 0:
            core.save_checkpoint(self.cells, self.path)


def build(config, points, batch_size, layers, neurons, num_scales, seed=123456):
    """Dataset, network, MTL cell, constraints for ``config``; returns a dict."""
    core.set_seed(seed)
    np.random.seed(seed)
    dataset = create_random_dataset(
        config,
        scaled(src_sampling_config, points),
        scaled(no_src_sampling_config, points),
        scaled(bc_sampling_config, points),
    )
    train = dataset.create_dataset(
        batch_size=batch_size, shuffle=True, prebatched_data=True, drop_remainder=True, seed=seed
    )
    n_src = check_source_sampling(dataset, config)
    model = MultiScaleFCCell(
        config["input_size"],
        config["output_size"],
        layers=layers,
        neurons=neurons,
        input_scale=config["input_scale"],
        residual=config["residual"],
        weight_init=nn.init.HeUniform(negative_slope=math.sqrt(5)),
        act="sin",
        num_scales=num_scales,
        amp_factor=config["amp_factor"],
        scale_factor=config["scale_factor"],
    )
    mtl = MTLWeightedLossCell(num_losses=dataset.num_dataset)
    problems = {
        sub.name: Maxwell2DMur(
            model,
            config,
            domain_name=sub.name + "_points",
            ic_name=sub.name + "_points",
            bc_name=sub.name + "_points",
        )
        for sub in dataset.all_datasets
    }
    constraints = Constraints(dataset, problems)
    return {
        "dataset": dataset,
        "train": train,
        "model": model,
        "mtl": mtl,
        "constraints": constraints,
        "n_src_points": n_src,
    }


def reference_points(ref):
    """``[T * P * P, 3]`` (x, y, t) and ``[T * P * P, 3]`` (Ex, Ey, Hz) of a reference."""
    t, x, y = ref["t"], ref["x"], ref["y"]
    tt, xx, yy = np.meshgrid(t, x, y, indexing="ij")  # [T, P, P]
    inputs = np.stack([xx, yy, tt], axis=-1).reshape(-1, 3)
    label = np.stack([ref["ex"], ref["ey"], ref["hz"]], axis=-1).reshape(-1, 3)
    return inputs, label


def main(
    tiny=False,
    epochs=70,
    points=65536,
    batch_size=1024,
    layers=None,
    neurons=None,
    num_scales=None,
    ref_cells=1000,
    ref_times=41,
    ref_points=101,
    jit=True,
    time_budget=None,
    eval_every=10,
    out_dir=None,
    config=None,
    plots=True,
    load_ckpt=None,
    lr=None,
    milestones=None,
    src_sampling_radius=None,
    late_time_start=None,
    late_time_fraction=None,
):
    """Train and evaluate; returns ``{"l2": {ex, ey, hz}, "losses": [...], ...}``."""
    config = dict(load_config() if config is None else config)
    if src_sampling_radius is not None:
        config["src_sampling_radius"] = src_sampling_radius
        check_sampling_radius(config)  # before anything is written
    if late_time_start is not None or late_time_fraction is not None:
        config.update(late_time_start=late_time_start, late_time_fraction=late_time_fraction)
        late_time_domain(config)  # before anything is written
    if tiny:
        epochs, points, batch_size = TINY["epochs"], TINY["points"], TINY["batch_size"]
        layers, neurons, num_scales = TINY["layers"], TINY["neurons"], TINY["num_scales"]
        ref_cells, ref_times, ref_points = TINY["ref_cells"], TINY["ref_times"], TINY["ref_points"]
        jit = TINY["jit"]
    layers = config["layers"] if layers is None else layers
    neurons = config["neurons"] if neurons is None else neurons
    num_scales = config["num_scales"] if num_scales is None else num_scales
    if milestones is None:  # MindElec's epochs, scaled to this run's length
        milestones = [
            max(1, round(epochs * m / config["train_epoch"])) for m in config["milestones"]
        ]
    elif list(milestones) != sorted(milestones) or not all(0 < m < epochs for m in milestones):
        raise ValueError(
            f"milestones {list(milestones)} must be increasing epochs inside (0, {epochs})"
        )
    name = "time_domain_maxwell_tiny" if tiny else "time_domain_maxwell"
    out = pathlib.Path(out_dir or default_out_dir(name))
    out.mkdir(parents=True, exist_ok=True)

    t0 = time.perf_counter()
    ref = load_or_make_reference(
        str(out / f"reference_cells{ref_cells}.h5"),
        config,
        cells=ref_cells,
        n_times=ref_times,
        n_points=ref_points,
    )
    print(f"reference: FDTD {ref_cells}^2 cells, {time.perf_counter() - t0:.1f} s", flush=True)
    parts = build(config, points, batch_size, layers, neurons, num_scales)
    model, mtl, dataset = parts["model"], parts["mtl"], parts["dataset"]
    steps_per_epoch = len(dataset)
    if load_ckpt:  # continue a run (MindElec's load_ckpt): network and MTL weights
        param_dict = core.load_checkpoint(str(load_ckpt))
        core.load_param_into_net(model, param_dict)
        core.load_param_into_net(mtl, param_dict)
    base_lr = config["lr"] if lr is None else lr
    lr = MultiStepLR(base_lr, milestones, config["lr_gamma"], steps_per_epoch, epochs).get_lr()
    params = model.trainable_params() + mtl.trainable_params()
    optim = nn.Adam(params, learning_rate=core.tensor(lr))
    solver = Solver(
        model,
        optimizer=optim,
        mode="PINNs",
        train_constraints=parts["constraints"],
        loss_fn="smooth_l1_loss",
        mtl_weighted_cell=mtl,
        jit=jit,
    )
    inputs, label = reference_points(ref)
    # a subsampled evaluation during training (every other time and point), the full one after
    shape = (len(ref["t"]), len(ref["x"]), len(ref["y"]), 3)
    sub = np.zeros(shape[:3], dtype=bool)
    sub[::2, ::2, ::2] = True
    sub = sub.reshape(-1)
    names = ["Ex", "Ey", "Hz"]
    scale = config["output_scale"]
    monitor = LossAndTimeMonitor(steps_per_epoch, per_print_times=1)
    evaluator = EvalCallback(model, inputs[sub], label[sub], scale, eval_every, 32768, names)
    budget = TimeBudget(time_budget)
    ckpt = out / "maxwell_pinn.ckpt.h5"
    saver = SaveEvery([model, mtl], ckpt, eval_every)
    print(
        f"training: {epochs} epochs x {steps_per_epoch} steps, 5 sub-datasets x {batch_size} "
        f"points per step, network {num_scales} x {layers} x {neurons}, jit={jit}, "
        f"milestones {milestones}",
        flush=True,
    )
    t_train = time.perf_counter()
    losses = solver.train(epochs, parts["train"], callbacks=[monitor, evaluator, budget, saver])
    train_s = time.perf_counter() - t_train
    core.save_checkpoint([model, mtl], str(ckpt))

    full = EvalCallback(model, inputs, label, scale, 1, 32768, names)
    l2 = dict(zip(("ex", "ey", "hz"), (float(e) for e in full.evaluate(len(losses)))))
    pred = full.predict().reshape(shape)
    ref_f = label.reshape(shape)
    results = {
        "l2": l2,
        "targets": {"ex": 0.035, "ey": 0.034, "hz": 0.023},
        "mindelec": {"ex": 0.0356, "ey": 0.0343, "hz": 0.0230},
        "epochs_run": len(losses),
        "steps_run": len(losses) * steps_per_epoch
        if budget.stopped_at is None
        else budget.stopped_at[1],
        "stopped_by_time_budget": budget.stopped_at,
        "steps_per_epoch": steps_per_epoch,
        "batch_size": batch_size,
        "points_per_subdataset": points,
        "network": [num_scales, layers, neurons],
        "jit": jit,
        "lr": base_lr,
        "milestones": list(milestones),
        "src_sampling_radius": config.get("src_sampling_radius", config["src_radius"]),
        "late_time_start": config.get("late_time_start"),
        "late_time_fraction": config.get("late_time_fraction"),
        "load_ckpt": str(load_ckpt) if load_ckpt else None,
        "train_seconds": train_s,
        "seconds_per_step": monitor.step_times,  # mean of each epoch
        "losses": losses,
        "eval_history": evaluator.history,
        "reference": {"cells": ref_cells, "times": ref_times, "points": ref_points},
        "n_src_points": parts["n_src_points"],
        "l2_over_time": l2_over_time(ref_f, pred).tolist(),
    }
    if plots:
        snaps = [shape[0] - 1] if tiny else None  # one snapshot keeps the CI run short
        results["plots"] = [os.path.basename(p) for p in plot_fields(ref_f, pred, str(out), snaps)]
        results["plots"].append(
            os.path.basename(plot_l2_over_time(ref["t"], ref_f, pred, str(out)))
        )
        results["plots"].append(os.path.basename(plot_loss(losses, str(out))))
    with open(out / "results.json", "w") as f:
        json.dump(results, f, indent=1, default=float)
    print("relative L2 vs FDTD: " + ", ".join(f"{k}: {v:.4f}" for k, v in l2.items()), flush=True)
    return results


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="the CI size (seconds)")
    parser.add_argument("--epochs", type=int, default=70)
    parser.add_argument("--points", type=int, default=65536)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--ref-cells", type=int, default=1000)
    parser.add_argument(
        "--eval-every", type=int, default=10, help="epochs between evaluations and checkpoints"
    )
    parser.add_argument("--time-budget", type=float, default=None, help="seconds of training")
    parser.add_argument("--no-jit", action="store_true")
    parser.add_argument(
        "--out-dir",
        default=None,
        help="output folder (default: ./time_domain_maxwell_out, ./time_domain_maxwell_tiny_out "
        "with --tiny)",
    )
    parser.add_argument("--load-ckpt", default=None, help="continue from a saved checkpoint")
    parser.add_argument("--lr", type=float, default=None, help="initial rate (config: 0.002)")
    parser.add_argument(
        "--milestones",
        type=int,
        nargs="+",
        default=None,
        help="epochs where the rate drops by lr_gamma (default: MindElec's, scaled to --epochs)",
    )
    parser.add_argument(
        "--src-sampling-radius",
        type=float,
        default=None,
        help="radius of the src sampling disc (default: src_radius, MindElec's split)",
    )
    parser.add_argument(
        "--late-time-start",
        type=float,
        default=None,
        help="seconds after which --late-time-fraction of the no_src and bc times are moved",
    )
    parser.add_argument(
        "--late-time-fraction",
        type=float,
        default=None,
        help="fraction of the no_src and bc times drawn after --late-time-start (default: "
        "none, uniform times as in MindElec)",
    )
    a = parser.parse_args()
    main(
        tiny=a.tiny,
        epochs=a.epochs,
        points=a.points,
        batch_size=a.batch_size,
        ref_cells=a.ref_cells,
        eval_every=a.eval_every,
        time_budget=a.time_budget,
        jit=not a.no_jit,
        out_dir=a.out_dir,
        load_ckpt=a.load_ckpt,
        lr=a.lr,
        milestones=a.milestones,
        src_sampling_radius=a.src_sampling_radius,
        late_time_start=a.late_time_start,
        late_time_fraction=a.late_time_fraction,
    )
