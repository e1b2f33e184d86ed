"""Train and evaluate the 2-D frequency-domain Maxwell PINNs (MindElec's ``solve.py``).

``--case real``: MindElec's Helmholtz case, ``(Delta + 4) u = 0`` on ``[0, 1]^2`` with
``u = sin(2 x)`` on the boundary; relative L2 error against the exact ``u = sin(2 x)`` on
MindElec's 101 x 101 test grid (MindElec: 0.0173 after 10 epochs; our target 0.01).

``--case complex``: a Gaussian-smoothed point source with the first-order absorbing
condition, complex ``u`` trained in complex arithmetic (Adam, then L-BFGS on a fixed point
set: Adam alone stalled near rel-L2 0.9 after 1500 steps at k = 6 and k = 10); relative L2 error against a
finite-difference solve with the same boundary condition (``helmholtz.fd_helmholtz``), and
the distance of that reference to the free-space field ``f * (i/4) H0^(1)(k r)`` (the
absorbing condition's reflection). See ``helmholtz.py`` for the equations.

Training follows MindElec: Adam on mini-batches (real: 128 grid points of the 100 x 100
domain grid and 128 random boundary points per step, ``len(grid) / 128`` steps an epoch),
the whole step (forward, input derivatives, backward, update) compiled by ``core.jit``.
The learning rate drops by ``lr_gamma`` at each of ``milestones`` (epochs for the real case,
steps for the complex one's Adam phase). Writes ``<out-dir>/helmholtz_<case>.png``
(prediction, reference, |error|) and ``<out-dir>/helmholtz_<case>_loss.png`` (default
``--out-dir``: ``./helmholtz_out``).

    python examples/mindelec/pinn/frequency_domain_maxwell/solve.py --case real
    python examples/mindelec/pinn/frequency_domain_maxwell/solve.py --case complex
    python examples/mindelec/pinn/frequency_domain_maxwell/solve.py --case complex --tiny
"""

import copy
import pathlib
import sys
import time

import numpy as np
import yaml

from diffsci import core
from diffsci.core import nn
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import helmholtz as hz  # noqa: E402

CONFIG = HERE / "config.yaml"
CASES = ("real", "complex")


def load_config(case, config_file=CONFIG, tiny=False, overrides=None):
    """The case's section of the YAML config (plus the sampling section for ``real``), with the
    ``tiny`` entries merged in when ``tiny`` and ``overrides`` (non-None values) last."""
    with open(config_file) as fh:
        raw = yaml.safe_load(fh)
    if case == "real":
        cfg = copy.deepcopy(raw["helmholtz_2d_config"])
        cfg.update(copy.deepcopy(raw["rectangle_sampling_config"]))
    elif case == "complex":
        cfg = copy.deepcopy(raw["complex_point_source"])
    else:
        raise ValueError(f"unknown case {case!r}; choose one of {', '.join(CASES)}")
    if tiny:
        cfg.update({k: v for k, v in raw.get("tiny", {}).items() if k in cfg})
        if case == "real":
            n = raw.get("tiny", {}).get("axis_size", 21)
            cfg["domain"] = dict(cfg["domain"], size=[n, n])
    cfg.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return cfg


def multistep_lr(lr, milestones, gamma, steps_per_unit, total_steps):
    """MindElec's ``MultiStepLR``: ``lr`` times ``gamma`` per milestone passed; a list of
    ``total_steps`` rates (milestones in units of ``steps_per_unit`` steps)."""
    rates, current = [], float(lr)
    marks = {int(m) * steps_per_unit for m in milestones}
    for i in range(total_steps):
        if i in marks:
            current *= float(gamma)
        rates.append(current)
    return rates


def make_step(loss_terms, params, rates):
    """One compiled Adam step ``(*batch) -> (total, terms)``; ``rates`` per step."""
    opt = nn.Adam(params, learning_rate=rates)

    def objective(*batch):
        terms = loss_terms(*batch)
        total = None
        for v in terms.values():
            total = v if total is None else total + v
        return total, terms

    grad_fn = core.value_and_grad(objective, None, opt.parameters, has_aux=True)

    @core.jit
    def step(*batch):
        (total, terms), grads = grad_fn(*batch)
        opt(grads)
        return total, terms

    return step


def predict(model, points, dtype, chunk=8192):
    """``model(points)`` as numpy ``[M, m]`` in chunks."""
    out = [
        model(core.tensor(points[i : i + chunk], dtype=dtype)).asnumpy()
        for i in range(0, len(points), chunk)
    ]
    return np.concatenate(out, axis=0)


def relative_l2(pred, ref):
    """``||pred - ref|| / ||ref||`` (complex-aware)."""
    return float(np.linalg.norm(pred - ref) / np.linalg.norm(ref))


# ---- the two cases -----------------------------------------------------------------------------


def run_real(cfg, seed=0, verbose=True):
    """MindElec's case; returns ``{"error", "history", "model", "test", "seconds"}``."""
    dtype = core.float32
    k = float(cfg["wave_number"])
    net = hz.FFNN(2, 1, int(cfg["neurons"]), int(cfg["layers"]), dtype=dtype)
    geom = hz.make_geometry(cfg["coord_min"], cfg["coord_max"], dtype=np.float32)
    nx, ny = cfg["domain"]["size"]
    lo, hi = cfg["coord_min"], cfg["coord_max"]
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], nx), np.linspace(lo[1], hi[1], ny))
    grid = np.stack([gx.ravel(), gy.ravel()], axis=1).astype(np.float32)  # [nx*ny, 2]
    batch = int(cfg["batch_size"])
    n_bc = int(cfg["BC"]["size"])
    steps_per_epoch = len(grid) // batch  # drop_remainder, as MindElec
    epochs = int(cfg["epochs"])
    rates = multistep_lr(
        cfg["lr"],
        cfg.get("milestones", []),
        cfg.get("lr_gamma", 1.0),
        steps_per_epoch,
        steps_per_epoch * epochs,
    )
    step = make_step(
        hz.real_loss_terms(net, k, float(cfg.get("bc_weight", 100.0))),
        net.trainable_params(),
        rates,
    )
    x_test, u_test = hz.real_test_data(lo, hi, int(cfg["axis_size"]), k)
    rng = np.random.default_rng(seed)
    history = {"total": [], "pde": [], "bc": [], "epoch_error": []}
    start = time.perf_counter()
    for epoch in range(epochs):
        order = rng.permutation(len(grid))
        xb_all, _ = geom.sample_boundary(n_bc * steps_per_epoch, seed=rng)
        for s in range(steps_per_epoch):
            x = core.tensor(grid[order[s * batch : (s + 1) * batch]], dtype=dtype)
            xb = core.tensor(xb_all[s * n_bc : (s + 1) * n_bc], dtype=dtype)
            total, terms = step(x, xb)
            history["total"].append(float(total.asnumpy()))
            history["pde"].append(float(terms["pde"].asnumpy()))
            history["bc"].append(float(terms["bc"].asnumpy()))
        err = relative_l2(predict(net, x_test, dtype), u_test)
        history["epoch_error"].append(err)
        if verbose:
            print(
                f"epoch {epoch + 1}/{epochs}: loss {history['total'][-1]:.3e} "
                f"rel-L2 {err:.4e} ({time.perf_counter() - start:.1f} s)",
                flush=True,
            )
    seconds = time.perf_counter() - start
    pred = predict(net, x_test, dtype)
    return {
        "error": relative_l2(pred, u_test),
        "history": history,
        "model": net,
        "test": (x_test, u_test, pred),
        "seconds": seconds,
        "steps": steps_per_epoch * epochs,
    }


def complex_reference(cfg):
    """The finite-difference reference on ``fd_nodes^2`` nodes: ``(xs, ys, u [ny, nx])``."""
    k = float(cfg["wave_number"])
    center, sigma = cfg["src_pos"], float(cfg["src_sigma"])
    return hz.fd_helmholtz(
        int(cfg["fd_nodes"]),
        k,
        lambda p: hz.gaussian_source(p, center, sigma),
        cfg["coord_min"],
        cfg["coord_max"],
    )


def run_complex(cfg, seed=0, verbose=True):
    """The complex point-source case; returns ``{"error", "history", "model", ...}``.

    ``adam_steps`` Adam steps on fresh random points (``batch_size`` uniform, ``src_batch_size``
    from a normal law of width ``2 src_sigma`` about the source, ``bc_batch_size`` on the
    boundary), then ``lbfgs_steps`` L-BFGS iterations (strong Wolfe line search) on one fixed
    set drawn the same way (``lbfgs_points``: Sobol points in the square and on its boundary).
    """
    dtype = core.float64
    k = float(cfg["wave_number"])
    center, sigma = np.asarray(cfg["src_pos"], float), float(cfg["src_sigma"])
    net = hz.ComplexHeadNet(
        int(cfg["neurons"]),
        int(cfg["layers"]),
        float(cfg["input_scale"]),
        float(cfg["input_center"]),
        dtype=dtype,
    )
    geom = hz.make_geometry(cfg["coord_min"], cfg["coord_max"])
    terms_fn = hz.complex_loss_terms(
        net, k, float(cfg.get("bc_weight", 1.0)), float(cfg.get("residual_scale", 1.0))
    )
    xs, ys, u_fd = complex_reference(cfg)
    # test on an axis_size^2 sub-grid of the reference grid
    stride = max(1, (len(xs) - 1) // (int(cfg["test_axis_size"]) - 1))
    tx, ty = xs[::stride], ys[::stride]
    txx, tyy = np.meshgrid(tx, ty)
    x_test = np.stack([txx.ravel(), tyy.ravel()], axis=1)
    u_test = u_fd[::stride, ::stride].reshape(-1, 1)
    rng = np.random.default_rng(seed)
    lo, hi = np.asarray(cfg["coord_min"], float), np.asarray(cfg["coord_max"], float)

    def draw(n_dom, n_src, n_bc, sampler="uniform"):
        x_src = np.clip(center + 2.0 * sigma * rng.standard_normal((n_src, 2)), lo, hi)
        x = np.concatenate([geom.sample_interior(n_dom, sampler=sampler, seed=rng), x_src])
        xb, nb = geom.sample_boundary(n_bc, sampler=sampler, seed=rng)
        f = hz.gaussian_source(x, center, sigma)
        return tuple(core.tensor(a, dtype=dtype) for a in (x, f, xb, nb))

    history = {"total": [], "pde": [], "bc": [], "error": [], "error_step": []}

    def record(it, total, terms, start, force=False, every=1):
        history["total"].append(float(total.asnumpy()))
        history["pde"].append(float(terms["pde"].asnumpy()))
        history["bc"].append(float(terms["bc"].asnumpy()))
        if force or it % every == 0:
            err = relative_l2(predict(net, x_test, dtype), u_test)
            history["error"].append(err)
            history["error_step"].append(it)
            if verbose:
                print(
                    f"iteration {it}: loss {history['total'][-1]:.3e} "
                    f"(pde {history['pde'][-1]:.2e}, bc {history['bc'][-1]:.2e}) "
                    f"rel-L2 {err:.4e} ({time.perf_counter() - start:.1f} s)",
                    flush=True,
                )

    adam_steps = int(cfg.get("adam_steps", 0))
    lbfgs_steps = int(cfg.get("lbfgs_steps", 0))
    sizes = [int(cfg[k_]) for k_ in ("batch_size", "src_batch_size", "bc_batch_size")]
    start = time.perf_counter()
    if adam_steps:
        rates = multistep_lr(
            cfg["lr"], cfg.get("milestones", []), cfg.get("lr_gamma", 1.0), 1, adam_steps
        )
        step = make_step(terms_fn, net.trainable_params(), rates)
        for it in range(1, adam_steps + 1):
            total, terms = step(*draw(*sizes))
            record(it, total, terms, start, it == adam_steps, max(1, adam_steps // 10))
    if lbfgs_steps:
        fixed = draw(*(int(v) for v in cfg["lbfgs_points"]), sampler="sobol")
        lbfgs = nn.LBFGS(
            net.trainable_params(), history_size=50, tolerance_grad=1e-12, tolerance_change=1e-16
        )
        terms_jit = core.jit(terms_fn)

        def loss_fn():
            t = terms_fn(*fixed)
            return t["pde"] + t["bc"]

        chunk = max(1, int(cfg.get("lbfgs_chunk", 50)))
        done, mode = 0, core.get_context("mode")
        core.set_context(mode=core.GRAPH_MODE)
        try:
            while done < lbfgs_steps:
                n = min(chunk, lbfgs_steps - done)
                before = int(lbfgs.global_step)
                lbfgs.minimize(loss_fn, max_iter=n, max_eval=n * (lbfgs.max_ls + 1) + 1)
                ran = int(lbfgs.global_step) - before
                done += n
                terms = terms_jit(*fixed)
                record(adam_steps + done, terms["pde"] + terms["bc"], terms, start, True)
                if ran < n:  # converged
                    break
        finally:
            core.set_context(mode=mode)
    seconds = time.perf_counter() - start
    pred = predict(net, x_test, dtype)
    free = hz.free_space_solution(x_test, k, center, sigma).reshape(-1, 1)
    return {
        "error": relative_l2(pred, u_test),
        "reflection": relative_l2(u_test, free),
        "error_vs_free_space": relative_l2(pred, free),
        "history": history,
        "model": net,
        "test": (x_test, u_test, pred),
        "seconds": seconds,
        "steps": adam_steps + lbfgs_steps,
    }


# ---- plots -------------------------------------------------------------------------------------


def plot_result(path, case, result, title):
    """Prediction, reference and |error| images (real and imaginary rows for ``complex``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x, ref, pred = result["test"]
    n = round(np.sqrt(len(x)))
    extent = (x[:, 0].min(), x[:, 0].max(), x[:, 1].min(), x[:, 1].max())
    rows = [("u", np.real)] if case == "real" else [("Re u", np.real), ("Im u", np.imag)]
    fig, axes = plt.subplots(len(rows), 3, figsize=(12, 3.6 * len(rows)), squeeze=False)
    for r, (name, part) in enumerate(rows):
        p = part(pred[:, 0]).reshape(n, n)
        q = part(ref[:, 0]).reshape(n, n)
        lo, hi = q.min(), q.max()
        for c, (label, field, cmap, lims) in enumerate(
            (
                (f"{name} PINN", p, "RdBu_r", (lo, hi)),
                (f"{name} reference", q, "RdBu_r", (lo, hi)),
                (f"|{name} error|", np.abs(p - q), "magma", (None, None)),
            )
        ):
            im = axes[r, c].imshow(
                field, origin="lower", extent=extent, cmap=cmap, vmin=lims[0], vmax=lims[1]
            )
            axes[r, c].set(title=label, xlabel="x", ylabel="y")
            fig.colorbar(im, ax=axes[r, c], fraction=0.046)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_history(path, history, title):
    """Loss terms per step and the test error."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.8))
    for name in ("total", "pde", "bc"):
        a.semilogy(history[name], label=name, lw=0.8)
    a.set(xlabel="step", ylabel="loss", title="loss")
    a.legend()
    if "epoch_error" in history:
        b.semilogy(np.arange(1, len(history["epoch_error"]) + 1), history["epoch_error"], "o-")
        b.set(xlabel="epoch")
    else:
        b.semilogy(history["error_step"], history["error"], "o-")
        b.set(xlabel="iteration (Adam, then L-BFGS)")
    b.set(ylabel="relative L2", title="test error")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(
    case="real", tiny=False, out_dir=None, seed=0, config_file=CONFIG, verbose=True, **overrides
):
    """Train and evaluate one case; returns the run's dict (``error`` and more).

    ``overrides``: config keys (``epochs``, ``steps``, ``lr`` ...) replacing the file's values.
    ``out_dir``: folder for the plots (None: no plots).
    """
    cfg = load_config(case, config_file, tiny, overrides)
    core.set_seed(seed)
    np.random.seed(seed)
    result = (run_real if case == "real" else run_complex)(cfg, seed=seed, verbose=verbose)
    result["config"] = cfg
    if verbose:
        extra = ""
        if case == "complex":
            extra = (
                f"; FD reference vs free-space field (absorbing-boundary reflection) "
                f"{result['reflection']:.3e}"
            )
        print(
            f"helmholtz {case}: {result['steps']} steps, rel-L2 {result['error']:.4e} vs "
            f"{'sin(kx)' if case == 'real' else 'FD'}{extra}, {result['seconds']:.1f} s"
        )
    if out_dir is not None:
        folder = pathlib.Path(out_dir)
        folder.mkdir(parents=True, exist_ok=True)
        title = f"Helmholtz {case}, k = {cfg['wave_number']}: rel-L2 {result['error']:.2e}"
        result["plot"] = plot_result(folder / f"helmholtz_{case}.png", case, result, title)
        plot_history(folder / f"helmholtz_{case}_loss.png", result["history"], title)
    return result


def parse_args(argv=None):
    parser = ArgumentParser(description="2-D frequency-domain Maxwell PINNs")
    parser.add_argument("--case", default="real", choices=CASES)
    parser.add_argument("--tiny", action="store_true", help="seconds, small network")
    parser.add_argument("--epochs", type=int, default=None, help="real case")
    parser.add_argument("--adam-steps", type=int, default=None, help="complex case")
    parser.add_argument("--lbfgs-steps", type=int, default=None, help="complex case")
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("helmholtz"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config-file-path", default=str(CONFIG))
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = parse_args()
    main(
        args.case,
        tiny=args.tiny,
        out_dir=args.out_dir,
        seed=args.seed,
        config_file=args.config_file_path,
        epochs=args.epochs,
        adam_steps=args.adam_steps,
        lbfgs_steps=args.lbfgs_steps,
    )
