"""Incremental learning of 2-D TE Maxwell by a meta-auto-decoder PINN (MindElec's ``mad.py``).

``--mode pretrain``: one ``MultiScaleFCCell`` with a 16-number latent code per scenario is
trained on the nine ``(eps_r, mu_r) in {1, 3, 5}^2`` problems at once (``config/pretrain.yaml``);
the network, codes and loss weights go to ``<out-dir>/ckpt/pretrain_maxwell_frq1e9.ckpt.h5``
(default ``--out-dir``: ``./mad_out``; the reference cache and the plots go there too).

``--mode reconstruct``: the new scenario ``eps_r = mu_r = 2`` (``config/reconstruct.yaml``):
the pre-trained network with a fresh zero code, fine-tuned (the code and, with
``finetune_model``, the network; MindElec's two options); the error is the relative L2 of
``Ex, Ey, Hz`` against ``fdtd_reference`` (our ``mindelec.fdtd`` run, CPML, 1 mm cells) on
51 x 51 points x 20 times in ``(0, 4 ns]`` (MindElec: 0.060 / 0.066 / 0.059).
``--mode scratch``: the same reconstruction budget from a random network (the baseline that
shows what pre-training buys). ``--mode evaluate``: the pre-trained network with its own code
for the training scenario ``eps_r = mu_r = 1`` against that scenario's FDTD run.

Every loss is MindElec's: per column (source disk, its t = 0 slice, the rest of the square, its
t = 0 slice, the boundary) the smooth-L1 mean of the ``maxwell.Maxwell2DMur`` residuals, the
five combined by ``MTLWeightedLossCell`` (Kendall et al. 2018), plus ``latent_reg`` times the
mean square of the codes. Each Adam step (fresh random points, forward with three forward-mode
input derivatives, backward, update) is one ``core.jit`` call. The learning rate follows
MindElec's ``MultiStepLR``. Budgets: ``train_epoch`` x ``epoch_steps`` steps of
``train_batch_size`` points per scenario and column; MindElec's values are in the configs'
header comments. ``--amp-factor``, ``--pretrain-batch-size`` and ``--reconstruct-batch-size``
override the configs (the README's runs use them).

    python examples/mindelec/pinn/incremental_learning/mad.py --mode pretrain
    python examples/mindelec/pinn/incremental_learning/mad.py --mode reconstruct
    python examples/mindelec/pinn/incremental_learning/mad.py --mode all --tiny
"""

from __future__ import annotations

import pathlib
import sys
import time

import numpy as np
import yaml

from diffsci import core
from diffsci.core import nn
from diffsci.mindelec.architecture import MTLWeightedLossCell
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fdtd_reference  # noqa: E402
import maxwell  # noqa: E402

MODES = ("pretrain", "reconstruct", "scratch", "evaluate", "all")
CKPT_NAME = "pretrain_maxwell_frq1e9.ckpt.h5"
TINY = {
    "layers": 3,
    "neurons": 16,
    "num_scales": 2,
    "train_epoch": 2,
    "epoch_steps": 3,
    "train_batch_size": 8,
    "milestones": [1],
    "reference_cell": 0.01,
    "reference_pml": 8,
    "test_space_size": 11,
    "test_time_size": 4,
}


def load_config(mode, tiny=False, overrides=None, config_dir=HERE / "config"):
    """``config/pretrain.yaml`` or ``config/reconstruct.yaml`` (MindElec's keys), ``TINY``
    merged in when ``tiny``, then ``overrides`` (non-None values)."""
    name = "pretrain.yaml" if mode == "pretrain" else "reconstruct.yaml"
    with open(pathlib.Path(config_dir) / name) as fh:
        config = yaml.safe_load(fh)
    if tiny:
        config.update(TINY)
    config.update({k: v for k, v in (overrides or {}).items() if v is not None})
    config["num_scenarios"] = len(config["EPS_candidates"]) * len(config["MU_candidates"])
    return config


def multistep_lr(lr, milestones, gamma, steps_per_epoch, epochs):
    """MindElec's ``MultiStepLR(...).get_lr()``: a rate per step, times ``gamma`` at each
    milestone epoch."""
    rates, current = [], float(lr)
    marks = {int(m) for m in milestones}
    for i in range(int(steps_per_epoch) * int(epochs)):
        if i % steps_per_epoch == 0 and i // steps_per_epoch in marks:
            current *= float(gamma)
        rates.append(current)
    return rates


class Model:
    """The network, its latent codes, the loss weighting and the problem of one config."""

    def __init__(self, config, latent_init, dtype=core.float32):
        self.config = config
        self.dtype = dtype
        self.latent = core.Parameter(core.tensor(latent_init, dtype=dtype), name="latent_vector")
        self.network = maxwell.build_network(config, self.latent, dtype)
        self.mtl = (
            MTLWeightedLossCell(len(maxwell.COLUMNS), dtype=dtype)
            if config.get("enable_mtl", True)
            else None
        )
        eps_r, mu_r = maxwell.scenario_columns(config)
        self.problem = maxwell.Maxwell2DMur(self.network, config, eps_r, mu_r, dtype)
        self.latent_reg = float(config["latent_reg"])

    def loss_terms(self, *columns):
        """``(total, {column: smooth-L1 loss})`` for the batch columns in ``COLUMNS`` order."""
        res = self.problem.residuals(dict(zip(maxwell.COLUMNS, columns, strict=True)))
        terms = {name: maxwell.smooth_l1(res[name]) for name in maxwell.COLUMNS}
        values = [terms[n] for n in maxwell.COLUMNS]
        if self.mtl is not None:
            total = self.mtl(values)
        else:
            total = values[0]
            for v in values[1:]:
                total = total + v
        total = total + self.latent_reg * (self.latent**2).mean()
        return total, terms

    def network_params(self):
        """The network's weights and biases (everything but the latent codes)."""
        return [p for p in self.network.trainable_params() if p is not self.latent]


def train(model, params, config, seed=0, verbose=True, label="train"):
    """Adam over ``params`` for ``train_epoch`` x ``epoch_steps`` steps; returns the history.

    ``config["time_budget"]`` (seconds, optional) ends training at the first epoch boundary
    past it (the history's ``steps`` says how many were run)."""
    steps_per_epoch, epochs = int(config["epoch_steps"]), int(config["train_epoch"])
    rates = multistep_lr(
        config["lr"], config["milestones"], config["lr_gamma"], steps_per_epoch, epochs
    )
    opt = nn.Adam(params, learning_rate=rates)
    grad_fn = core.value_and_grad(model.loss_terms, None, opt.parameters, has_aux=True)

    @core.jit
    def step(*columns):
        (total, terms), grads = grad_fn(*columns)
        opt(grads)
        return total, terms

    sampler = maxwell.Sampler(config, seed=seed)
    history = {"total": [], **{n: [] for n in maxwell.COLUMNS}}
    budget = config.get("time_budget")
    start = time.perf_counter()
    done = 0
    for epoch in range(epochs):
        if budget is not None and time.perf_counter() - start > float(budget):
            if verbose:
                print(f"{label}: time budget {budget} s reached after {epoch} epochs", flush=True)
            break
        for _ in range(steps_per_epoch):
            done += 1
            batch = sampler()
            cols = [core.tensor(batch[n], dtype=model.dtype) for n in maxwell.COLUMNS]
            total, terms = step(*cols)
            history["total"].append(float(total.asnumpy()))
            for n in maxwell.COLUMNS:
                history[n].append(float(terms[n].asnumpy()))
        if verbose and ((epoch + 1) % max(1, epochs // 20) == 0 or epoch + 1 == epochs):
            recent = np.mean(history["total"][-steps_per_epoch:])
            print(
                f"{label} epoch {epoch + 1}/{epochs}: loss {recent:.4e} "
                f"({time.perf_counter() - start:.1f} s)",
                flush=True,
            )
    history["seconds"] = time.perf_counter() - start
    history["steps"] = done
    return history


# ---- pre-training ------------------------------------------------------------------------------


def pretrain(config, ckpt_dir, seed=0, verbose=True):
    """Pre-train over the config's scenarios; writes the checkpoint, returns ``{"history", "path"}``.

    With ``load_ckpt`` (MindElec's key) the network, codes and loss weights start from
    ``load_ckpt_path`` (a checkpoint of this function): pre-training continues; the step count
    stored in the new checkpoint is the sum.
    """
    rng = np.random.default_rng(seed)
    size = int(config["latent_vector_size"])
    latent0 = rng.standard_normal((config["num_scenarios"], size)) / np.sqrt(size)
    model = Model(config, latent0)
    steps_before = 0
    if config.get("load_ckpt", False):
        saved = core.load_checkpoint(str(config["load_ckpt_path"]))
        missing, _ = core.load_param_into_net(model.network, saved)
        if model.mtl is not None:
            missing += core.load_param_into_net(model.mtl, saved)[0]
        if missing:
            raise ValueError(f"{config['load_ckpt_path']}: no values for {missing}")
        steps_before = int(saved["steps"].asnumpy()) if "steps" in saved else 0
    params = model.network.trainable_params() + (model.mtl.trainable_params() if model.mtl else [])
    history = train(
        model, params, config, seed=seed + steps_before, verbose=verbose, label="pretrain"
    )
    history["steps_total"] = steps_before + history["steps"]
    folder = pathlib.Path(ckpt_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / CKPT_NAME
    core.save_checkpoint(
        [model.network, model.mtl] if model.mtl else [model.network],
        str(path),
        append_dict={"steps": history["steps_total"]},
    )
    return {"history": history, "path": path, "model": model}


# ---- reconstruction ----------------------------------------------------------------------------


def reference(config, cache_dir=None, verbose=True):
    """FDTD fields of the config's (single) scenario at the test points: ``(points, times,
    fields [T, M, 3])``, cached as ``<cache_dir>/reference_eps<e>_mu<m>_<cell>.npz``."""
    eps, mu = config["EPS_candidates"][0], config["MU_candidates"][0]
    points, times = fdtd_reference.evaluation_set(
        int(config["test_space_size"]),
        int(config["test_time_size"]),
        float(config["range_t"]),
        config["coord_min"],
        config["coord_max"],
    )
    cell = float(config["reference_cell"])
    cache = None
    if cache_dir is not None:
        cache = pathlib.Path(cache_dir) / (
            f"reference_eps{eps}_mu{mu}_{cell * 1e3:g}mm_{len(points)}x{len(times)}.npz"
        )
        if cache.exists():
            data = np.load(cache)
            return data["points"], data["times"], data["fields"]
    start = time.perf_counter()
    run = fdtd_reference.solve(
        eps,
        mu,
        points,
        times,
        cell=cell,
        pml=int(config["reference_pml"]),
        coord_min=config["coord_min"],
        coord_max=config["coord_max"],
        src_pos=config["src_pos"],
        src_radius=config["src_radius"],
        f0=float(config.get("SrcFrq", 1e9)),
    )
    if verbose:
        print(
            f"FDTD reference eps_r={eps} mu_r={mu}: grid {run['shape']}, {run['steps']} steps, "
            f"{time.perf_counter() - start:.1f} s",
            flush=True,
        )
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(cache.stem + ".tmp.npz")
        np.savez(tmp, points=points, times=times, fields=run["fields"])
        tmp.replace(cache)
    return points, times, run["fields"]


def field_errors(pred, ref):
    """Relative L2 errors ``{"ex", "ey", "hz"}`` over all points and times of ``[T, M, 3]``."""
    return {
        name: float(np.linalg.norm(pred[..., c] - ref[..., c]) / np.linalg.norm(ref[..., c]))
        for c, name in enumerate(fdtd_reference.FIELDS)
    }


def reconstruct(config, ckpt_path=None, cache_dir=None, seed=0, verbose=True):
    """Fine-tune on the new scenario from the checkpoint (None: from a random network).

    Returns ``{"errors", "errors_before", "history", "model", "pred", "ref"}``.
    """
    size = int(config["latent_vector_size"])
    model = Model(config, np.zeros((config["num_scenarios"], size)))
    if ckpt_path is not None:
        saved = core.load_checkpoint(str(ckpt_path))
        net_values = {k: v for k, v in saved.items() if k != "latent_vector" and "mtl" not in k}
        missing, _ = core.load_param_into_net(model.network, net_values)
        missing = [m for m in missing if m != "latent_vector"]
        if missing:
            raise ValueError(f"{ckpt_path}: no values for network parameters {missing}")
        if verbose:
            codes = saved["latent_vector"].asnumpy()
            print(f"pre-trained codes: mean norm {np.linalg.norm(codes, axis=1).mean():.3f}")
    points, times, ref = reference(config, cache_dir, verbose)
    scale = config["output_scale"]
    before = field_errors(maxwell.predict_fields(model.network, points, times, scale), ref)
    if config.get("finetune_model", True) or ckpt_path is None:
        params = model.network.trainable_params()
    else:
        params = [model.latent]
    if model.mtl is not None:
        params = params + model.mtl.trainable_params()
    if ckpt_path is None:
        label = "scratch"
    else:
        label = "reconstruct" if config.get("finetune_model", True) else "reconstruct_code_only"
    history = train(model, params, config, seed=seed + 1, verbose=verbose, label=label)
    pred = maxwell.predict_fields(model.network, points, times, scale)
    errors = field_errors(pred, ref)
    if verbose:
        print(
            f"{label} eps_r = mu_r = {config['EPS_candidates'][0]}: rel-L2 Ex {errors['ex']:.4f}"
            f" Ey {errors['ey']:.4f} Hz {errors['hz']:.4f} (before fine-tuning: "
            f"{before['ex']:.3f} / {before['ey']:.3f} / {before['hz']:.3f}; MindElec after "
            f"fine-tuning 0.060 / 0.066 / 0.059), {history['steps']} steps, "
            f"{history['seconds']:.1f} s",
            flush=True,
        )
    return {
        "label": label,
        "errors": errors,
        "errors_before": before,
        "history": history,
        "model": model,
        "pred": pred,
        "ref": ref,
        "points": points,
        "times": times,
    }


def evaluate_pretrained(ckpt_path, config, eps_r, mu_r, cache_dir=None, verbose=True):
    """The pre-trained network with its own code for the training scenario ``(eps_r, mu_r)``
    against that scenario's FDTD run (how well pre-training fitted its own problems).

    Returns ``{"errors", "pred", "ref", "points", "times", "scenario"}``.
    """
    k = config["EPS_candidates"].index(eps_r) * len(config["MU_candidates"]) + config[
        "MU_candidates"
    ].index(mu_r)
    saved = core.load_checkpoint(str(ckpt_path))
    one = dict(config, EPS_candidates=[eps_r], MU_candidates=[mu_r], num_scenarios=1)
    for key in ("reference_cell", "reference_pml", "test_space_size", "test_time_size"):
        one.setdefault(key, load_config("reconstruct")[key])
    model = Model(one, saved["latent_vector"].asnumpy()[k : k + 1])
    net_values = {n: v for n, v in saved.items() if n != "latent_vector" and "mtl" not in n}
    core.load_param_into_net(model.network, net_values)
    points, times, ref = reference(one, cache_dir, verbose)
    pred = maxwell.predict_fields(model.network, points, times, one["output_scale"])
    errors = field_errors(pred, ref)
    if verbose:
        print(
            f"pre-trained, scenario eps_r = {eps_r}, mu_r = {mu_r} (code {k}): rel-L2 "
            f"Ex {errors['ex']:.4f} Ey {errors['ey']:.4f} Hz {errors['hz']:.4f}",
            flush=True,
        )
    return {
        "errors": errors,
        "pred": pred,
        "ref": ref,
        "points": points,
        "times": times,
        "scenario": (eps_r, mu_r),
    }


# ---- plots -------------------------------------------------------------------------------------


def plot_fields(path, result, title, n_times=3):
    """Rows: Ex, Ey, Hz at ``n_times`` times; columns: PINN, FDTD, |error| per time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pred, ref, times = result["pred"], result["ref"], result["times"]
    n = round(np.sqrt(pred.shape[1]))
    picks = np.linspace(len(times) // 3, len(times) - 1, n_times).astype(int)
    fig, axes = plt.subplots(3, 3 * n_times, figsize=(3.0 * 3 * n_times, 8.4), squeeze=False)
    for c, name in enumerate(("Ex", "Ey", "Hz")):
        lim = np.percentile(np.abs(ref[..., c]), 99.5)
        for j, k in enumerate(picks):
            p = pred[k, :, c].reshape(n, n)
            q = ref[k, :, c].reshape(n, n)
            for i, (label, field, cmap, lims) in enumerate(
                (
                    ("PINN", p, "RdBu_r", (-lim, lim)),
                    ("FDTD", q, "RdBu_r", (-lim, lim)),
                    ("|error|", np.abs(p - q), "magma", (0, lim)),
                )
            ):
                ax = axes[c, 3 * j + i]
                im = ax.imshow(
                    field,
                    origin="lower",
                    extent=(0, 1, 0, 1),
                    cmap=cmap,
                    vmin=lims[0],
                    vmax=lims[1],
                )
                ax.set_title(f"{name} {label}, t={times[k] * 1e9:.1f} ns", fontsize=8)
                ax.set_xticks([])
                ax.set_yticks([])
                fig.colorbar(im, ax=ax, fraction=0.046)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def plot_error_over_time(path, result, title):
    """Relative L2 error of Ex, Ey, Hz at each evaluation time (over the 2-D points)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pred, ref, times = result["pred"], result["ref"], result["times"]
    fig, ax = plt.subplots(figsize=(7, 4))
    for c, name in enumerate(("Ex", "Ey", "Hz")):
        num = np.linalg.norm(pred[..., c] - ref[..., c], axis=1)
        den = np.maximum(np.linalg.norm(ref[..., c], axis=1), 1e-300)
        ax.semilogy(times * 1e9, num / den, "o-", label=name)
    ax.set(xlabel="t (ns)", ylabel="relative L2 error", title=title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_history(path, histories, title):
    """Total loss per step of each run in ``{label: history}``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for label, h in histories.items():
        ax.semilogy(h["total"], lw=0.8, label=label)
    ax.set(xlabel="step", ylabel="loss (MTL-weighted smooth L1)", title=title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(
    mode="all",
    tiny=False,
    out_dir=None,
    seed=0,
    verbose=True,
    pretrain_overrides=None,
    reconstruct_overrides=None,
):
    """Run ``mode``; returns ``{"pretrain": ..., "reconstruct": ..., "scratch": ...}`` (those
    run). ``out_dir``: where checkpoints, the reference cache and plots go (default ``mad_out``
    in the current working directory)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    out = pathlib.Path(out_dir or default_out_dir("mad"))
    out.mkdir(parents=True, exist_ok=True)
    core.set_seed(seed)
    np.random.seed(seed)
    results = {}
    ckpt = out / "ckpt" / CKPT_NAME
    if mode in ("pretrain", "all"):
        config = load_config("pretrain", tiny, pretrain_overrides)
        results["pretrain"] = pretrain(config, out / "ckpt", seed, verbose)
    if mode in ("reconstruct", "all"):
        if not ckpt.exists():
            raise FileNotFoundError(f"reconstruct needs the pre-trained checkpoint {ckpt}")
        config = load_config("reconstruct", tiny, reconstruct_overrides)
        res = reconstruct(config, ckpt, out, seed, verbose)
        results[res["label"]] = res
    if mode == "scratch":
        config = load_config("reconstruct", tiny, reconstruct_overrides)
        results["scratch"] = reconstruct(config, None, out, seed, verbose)
    if mode == "evaluate":
        config = load_config("pretrain", tiny, pretrain_overrides)
        results["pretrained_eps1_mu1"] = evaluate_pretrained(ckpt, config, 1, 1, out, verbose)
    for label, res in results.items():
        if label == "pretrain":
            continue
        e = res["errors"]
        eps, mu = res.get("scenario", (2, 2))
        title = (
            f"{label} eps_r = {eps}, mu_r = {mu}: rel-L2 Ex {e['ex']:.3f} Ey {e['ey']:.3f} "
            f"Hz {e['hz']:.3f}"
        )
        res["plot"] = plot_fields(out / f"{label}_fields.png", res, title)
        plot_error_over_time(out / f"{label}_error_over_time.png", res, title)
    histories = {k: r["history"] for k, r in results.items() if "history" in r}
    if histories:
        plot_history(out / f"loss_{'_'.join(histories)}.png", histories, "meta-auto-decoder")
    return results


def parse_args(argv=None):
    parser = ArgumentParser(description="Meta Auto Decoder Simulation")
    parser.add_argument("--mode", default="pretrain", choices=MODES)
    parser.add_argument("--tiny", action="store_true", help="seconds, small network")
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("mad"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pretrain-epochs", type=int, default=None)
    parser.add_argument("--time-budget", type=float, default=None, help="pretrain seconds")
    parser.add_argument("--load-ckpt-path", default=None, help="pretrain: continue from it")
    parser.add_argument("--pretrain-lr", type=float, default=None)
    parser.add_argument("--pretrain-milestones", type=int, nargs="*", default=None)
    parser.add_argument(
        "--pretrain-batch-size", type=int, default=None, help="points per scenario and column"
    )
    parser.add_argument(
        "--amp-factor",
        type=float,
        default=None,
        help="both phases: the multi-scale amplification (config: MindElec's 2)",
    )
    parser.add_argument(
        "--reconstruct-time-budget", type=float, default=None, help="reconstruct seconds"
    )
    parser.add_argument("--reconstruct-epochs", type=int, default=None)
    parser.add_argument(
        "--reconstruct-batch-size", type=int, default=None, help="points per column and step"
    )
    parser.add_argument(
        "--finetune-model",
        type=int,
        default=None,
        choices=(0, 1),
        help="1: fine-tune the network and the code (MindElec's default); 0: the code only",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = parse_args()
    finetune = None if args.finetune_model is None else bool(args.finetune_model)
    main(
        args.mode,
        tiny=args.tiny,
        out_dir=args.out_dir,
        seed=args.seed,
        pretrain_overrides={
            "train_epoch": args.pretrain_epochs,
            "time_budget": args.time_budget,
            "load_ckpt": args.load_ckpt_path is not None or None,
            "load_ckpt_path": args.load_ckpt_path,
            "lr": args.pretrain_lr,
            "milestones": args.pretrain_milestones,
            "train_batch_size": args.pretrain_batch_size,
            "amp_factor": args.amp_factor,
        },
        reconstruct_overrides={
            "train_epoch": args.reconstruct_epochs,
            "finetune_model": finetune,
            "time_budget": args.reconstruct_time_budget,
            "amp_factor": args.amp_factor,
            "train_batch_size": args.reconstruct_batch_size,
        },
    )
