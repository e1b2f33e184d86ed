"""PINN benchmark: Burgers training with the core engine against DeepXDE (PyTorch backend).

The problem is the issue's Burgers case: ``u_t + u u_x = nu u_xx`` on x in [-1, 1], t in [0, 1],
nu = 0.01/pi, u(x, 0) = -sin(pi x), u(+-1, t) = 0 (Raissi et al. 2019, sec. 3.1). Both sides
train the same thing:

- network 2 -> [64] x 4 -> 1, tanh, the same Glorot-normal initial weights (drawn once with
  numpy, copied into both) and zero biases;
- the same points: 2540 uniform interior points, 80 on x = +-1, 160 at t = 0 (DeepXDE's Burgers
  example sizes), given to DeepXDE as anchors, so its PDE term is the mean squared residual over
  all 2780 points (DeepXDE evaluates the PDE on boundary points too) and ours is the same sum;
- loss = mean r^2 + mean u(+-1, t)^2 + mean (u(x, 0) + sin(pi x))^2, weights 1;
- Adam (lr 1e-3, betas 0.9/0.999, eps 1e-8), then L-BFGS (history 100, strong Wolfe).

Ours is one ``core.jit`` step (forward-over-forward input derivatives, backward, Adam update);
its L-BFGS is ``core.nn.LBFGS`` with its loss and gradient compiled (GRAPH_MODE). DeepXDE's residual uses ``dde.grad.jacobian/hessian``
(reverse over reverse, torch.autograd), its L-BFGS is ``torch.optim.LBFGS``.

Two measurements per dtype (float32, float64), in one run:

(a) seconds per Adam step: median of ``REPEATS`` blocks of ``--steps`` steps after a warm-up
    (which compiles our graph);
(b) wall time to rel-L2 <= ``--target`` (default 1e-2) over the 256 x 100 grid (x = linspace(-1,
    1, 256), t = linspace(0, 1, 100)) against the Cole-Hopf solution
    (``mindflow.verify.burgers_cole_hopf_grid``): Adam for up to ``--adam-max`` steps, then L-BFGS
    for up to ``--lbfgs-max`` iterations, the error checked every ``--check-every`` steps /
    iterations; the clock stops while the error is computed. Both sides start from the same
    weights, so their Adam trajectories agree up to rounding, and (b) mostly measures speed.

Run:

    python -m bench.pinn                  # float32 and float64, DeepXDE if installed
    python -m bench.pinn --dtype float64 --target 5e-3
    python -m bench.pinn --tiny           # toy sizes (what tests/bench runs)

``DDE_BACKEND=pytorch`` is set before DeepXDE is imported. A missing DeepXDE is a skipped row.
"""

import argparse
import contextlib
import importlib.util
import io
import itertools
import math
import os
import statistics
import time
import warnings

import numpy as np

from diffsci import core

__all__ = [
    "PROBLEM",
    "DeepXDEPinn",
    "OursPinn",
    "format_table",
    "glorot_params",
    "main",
    "reference_grid",
    "run",
    "time_per_adam_step",
    "time_to_target",
    "training_points",
]

NU = 0.01 / math.pi
LR = 1e-3
# seconds: wall clock, or this process's CPU time (``--clock cpu``: with both sides at one
# thread, a fair measure on a shared machine whose load stretches wall time)
CLOCK = {"now": time.perf_counter}
REPEATS = 3
PROBLEM = {
    "width": 64,
    "depth": 4,
    "n_domain": 2540,
    "n_boundary": 80,
    "n_initial": 160,
}
TINY = {"width": 8, "depth": 2, "n_domain": 64, "n_boundary": 8, "n_initial": 16}


# ---- the problem ------------------------------------------------------------------------------


def training_points(sizes, seed=0):
    """Seeded points ``{"domain": [n_d, 2], "boundary": [n_b, 2], "initial": [n_i, 2]}`` (x, t),
    numpy float64: interior uniform in [-1, 1] x [0, 1], boundary x = -1 / +1 alternately with
    uniform t, initial uniform x at t = 0 (exactly 0, so DeepXDE's ``on_initial`` finds them)."""
    rng = np.random.default_rng(seed)
    n_d, n_b, n_i = sizes["n_domain"], sizes["n_boundary"], sizes["n_initial"]
    domain = np.stack([rng.uniform(-1, 1, n_d), rng.uniform(0, 1, n_d)], axis=1)
    side = np.where(np.arange(n_b) % 2 == 0, -1.0, 1.0)
    boundary = np.stack([side, rng.uniform(0, 1, n_b)], axis=1)
    initial = np.stack([rng.uniform(-1, 1, n_i), np.zeros(n_i)], axis=1)
    return {"domain": domain, "boundary": boundary, "initial": initial}


def glorot_params(sizes, seed=1):
    """Glorot-normal weights ``[out, in]`` (torch.nn.Linear's and core.nn.Dense's layout) and zero
    biases for 2 -> [width] x depth -> 1, as a list ``[W0, b0, W1, b1, ...]`` (numpy float64)."""
    rng = np.random.default_rng(seed)
    dims = [2] + [sizes["width"]] * sizes["depth"] + [1]
    params = []
    for fan_in, fan_out in itertools.pairwise(dims):
        std = math.sqrt(2.0 / (fan_in + fan_out))
        params += [rng.normal(0.0, std, (fan_out, fan_in)), np.zeros(fan_out)]
    return params


def reference_grid():
    """The evaluation grid and the exact solution (``mindflow.verify.burgers_cole_hopf_grid``:
    256 x in [-1, 1] by 100 t in [0, 1]): points ``[25600, 2]`` (x, t) and u ``[25600, 1]``."""
    from diffsci.mindflow.verify import burgers_cole_hopf_grid

    x, t, u = burgers_cole_hopf_grid(256, 100)  # u [256, 100]
    xx, tt = np.meshgrid(x, t, indexing="ij")
    return np.stack([xx.ravel(), tt.ravel()], axis=1), u.reshape(-1, 1)


def _rel_l2(pred, ref):
    from diffsci.mindflow.verify import relative_l2

    return relative_l2(np.asarray(pred, dtype=np.float64).reshape(ref.shape), ref)


# ---- ours -------------------------------------------------------------------------------------


class OursPinn:
    """The Burgers PINN on the core engine.

    Args:
        params: initial ``[W0, b0, ...]`` (numpy, ``[out, in]`` weights), see :func:`glorot_params`.
        points: :func:`training_points`'s dict.
        dtype: ``core.float32`` or ``core.float64``.
    """

    label = "ours jit"

    def __init__(self, params, points, dtype=core.float32):
        from diffsci.core import nn, ops

        self.dtype = dtype
        layers = []
        for k in range(0, len(params), 2):
            w, b = params[k], params[k + 1]
            dense = nn.Dense(w.shape[1], w.shape[0], dtype=dtype)
            dense.weight.set_data(core.tensor(w, dtype=dtype))
            dense.bias.set_data(core.tensor(b, dtype=dtype))
            layers.append(dense)
            if k + 2 < len(params):
                layers.append(nn.Tanh())
        self.net = nn.SequentialCell(*layers)
        self.params = self.net.trainable_params()

        x_all = np.concatenate([points["domain"], points["boundary"], points["initial"]])
        self.x_all = core.tensor(x_all, dtype=dtype)  # [n, 2]
        self.x_bc = core.tensor(points["boundary"], dtype=dtype)  # [n_b, 2]
        self.x_ic = core.tensor(points["initial"], dtype=dtype)  # [n_i, 2]
        self.u_ic = core.tensor(-np.sin(np.pi * points["initial"][:, :1]), dtype=dtype)
        n = x_all.shape[0]
        self.e_x = core.tensor(np.tile([[1.0, 0.0]], (n, 1)), dtype=dtype)  # d/dx direction
        self.e_t = core.tensor(np.tile([[0.0, 1.0]], (n, 1)), dtype=dtype)  # d/dt direction

        net, e_x, e_t = self.net, self.e_x, self.e_t

        def residual(x):
            # (u, u_x) and (u_x, u_xx): forward over forward along x; u_t: one forward pass
            (u, u_x), (_, u_xx) = core.jvp(lambda y: core.jvp(net, (y,), (e_x,)), (x,), (e_x,))
            _, u_t = core.jvp(net, (x,), (e_t,))
            return u_t + u * u_x - NU * u_xx  # [n, 1]

        def loss_fn():
            r = residual(self.x_all)
            loss_pde = ops.mean(r * r)
            loss_bc = ops.mean(net(self.x_bc) ** 2)
            loss_ic = ops.mean((net(self.x_ic) - self.u_ic) ** 2)
            return loss_pde + loss_bc + loss_ic

        self.loss_fn = loss_fn
        self.residual = residual
        self.adam = nn.Adam(self.params, learning_rate=LR)
        grad_fn = core.value_and_grad(loss_fn, None, self.params)
        adam = self.adam

        @core.jit
        def train_step():
            loss, grads = grad_fn()
            adam(grads)
            return loss

        self._train_step = train_step
        self.lbfgs = None

    def adam_steps(self, n):
        """``n`` Adam steps; the last loss (float)."""
        loss = None
        for _ in range(n):
            loss = self._train_step()
        return float(loss)

    def lbfgs_steps(self, n):
        """Up to ``n`` L-BFGS iterations (the optimizer keeps its history between calls)."""
        from diffsci.core import nn

        if self.lbfgs is None:
            self.lbfgs = nn.LBFGS(
                self.params,
                max_iter=n,
                history_size=100,
                tolerance_grad=1e-12,
                tolerance_change=0.0,
            )
        mode = core.get_context("mode")
        core.set_context(mode=core.GRAPH_MODE)  # loss and gradient compiled (as in Trainer)
        try:
            return float(self.lbfgs.minimize(self.loss_fn, max_iter=n))
        finally:
            core.set_context(mode=mode)

    def predict(self, x):
        """``[m, 2]`` numpy points -> ``[m, 1]`` numpy float64."""
        with core.no_grad():
            out = self.net(core.tensor(x, dtype=self.dtype))
        return np.asarray(out.asnumpy(), dtype=np.float64)


# ---- DeepXDE ----------------------------------------------------------------------------------


def _import_deepxde():
    os.environ.setdefault("DDE_BACKEND", "pytorch")
    if os.environ["DDE_BACKEND"] != "pytorch":
        raise RuntimeError(f"bench.pinn needs DDE_BACKEND=pytorch, got {os.environ['DDE_BACKEND']}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation chatter of its optional dependencies
        import deepxde

    return deepxde


class DeepXDEPinn:
    """The same PINN in DeepXDE (PyTorch backend): ``dde.data.TimePDE`` with our points as
    anchors (no points of its own), ``dde.nn.FNN`` with our initial weights copied in."""

    label = "deepxde"

    def __init__(self, params, points, dtype=core.float32):
        dde = _import_deepxde()
        import torch

        self.dde, self.torch = dde, torch
        name = "float64" if dtype == core.float64 else "float32"
        with contextlib.redirect_stdout(io.StringIO()):
            dde.config.set_default_float(name)
        self.np_dtype = np.float64 if name == "float64" else np.float32

        def pde(x, y):
            dy_x = dde.grad.jacobian(y, x, i=0, j=0)
            dy_t = dde.grad.jacobian(y, x, i=0, j=1)
            dy_xx = dde.grad.hessian(y, x, i=0, j=0)
            return dy_t + y * dy_x - NU * dy_xx

        self.pde = pde
        geom = dde.geometry.Interval(-1, 1)
        geomtime = dde.geometry.GeometryXTime(geom, dde.geometry.TimeDomain(0, 1))
        bc = dde.icbc.DirichletBC(geomtime, lambda x: 0, lambda _, on_boundary: on_boundary)
        ic = dde.icbc.IC(
            geomtime, lambda x: -np.sin(np.pi * x[:, 0:1]), lambda _, on_initial: on_initial
        )
        anchors = np.concatenate([points["domain"], points["boundary"], points["initial"]])
        data = dde.data.TimePDE(
            geomtime,
            pde,
            [bc, ic],
            num_domain=0,
            num_boundary=0,
            num_initial=0,
            anchors=anchors.astype(self.np_dtype),
        )
        n_bc, n_ic = (
            len(data.bcs[0].filter(data.train_x_all)),
            len(data.bcs[1].filter(data.train_x_all)),
        )
        if (n_bc, n_ic) != (len(points["boundary"]), len(points["initial"])):
            raise RuntimeError(f"DeepXDE found {n_bc} boundary / {n_ic} initial points")
        widths = [params[0].shape[1]] + [w.shape[0] for w in params[::2]]
        net = dde.nn.FNN(widths, "tanh", "Glorot normal")
        with torch.no_grad():
            for k, linear in enumerate(net.linears):
                linear.weight.copy_(torch.from_numpy(params[2 * k]))
                linear.bias.copy_(torch.from_numpy(params[2 * k + 1]))
        self.model = dde.Model(data, net)
        with contextlib.redirect_stdout(io.StringIO()):
            self.model.compile("adam", lr=LR)
        self._lbfgs_compiled = False

    def adam_steps(self, n, callbacks=None):
        """``n`` Adam steps in one ``model.train`` call; the last loss (float)."""
        with contextlib.redirect_stdout(io.StringIO()):  # "Compiling model...", summaries
            self.model.train(iterations=n, display_every=10**9, verbose=0, callbacks=callbacks)
        return float(np.sum(self.model.train_state.loss_train))

    def timed_adam_blocks(self, blocks, steps, warmup):
        """Seconds of each of ``blocks`` blocks of ``steps`` Adam steps within one
        ``model.train`` call (as a user runs it), after ``warmup`` steps; and the last loss."""
        dde, marks = self.dde, []

        class Mark(dde.callbacks.Callback):
            def on_epoch_end(self):
                marks.append(CLOCK["now"]())

        self.adam_steps(warmup + blocks * steps, callbacks=[Mark()])
        edges = marks[warmup - 1 :: steps]
        return [b - a for a, b in itertools.pairwise(edges)], self.loss()

    def loss(self):
        return float(np.sum(self.model.train_state.loss_train))

    def lbfgs_steps(self, n, callbacks=None, check_every=None):
        """L-BFGS for up to ``n`` iterations; ``callbacks`` run every ``check_every``
        iterations (DeepXDE's ``iter_per_step``)."""
        dde = self.dde
        dde.optimizers.set_LBFGS_options(maxcor=100, ftol=0, gtol=1e-12, maxiter=n)
        dde.optimizers.config.LBFGS_options["iter_per_step"] = check_every or n
        dde.optimizers.config.LBFGS_options["fun_per_step"] = int((check_every or n) * 1.25) + 5
        if not self._lbfgs_compiled:
            with contextlib.redirect_stdout(io.StringIO()):
                self.model.compile("L-BFGS")
            self._lbfgs_compiled = True
        with contextlib.redirect_stdout(io.StringIO()):
            self.model.train(verbose=0, callbacks=callbacks)
        return self.loss()

    def lbfgs_iterations(self):
        """L-BFGS iterations done so far (torch.optim.LBFGS's counter)."""
        if not self._lbfgs_compiled:
            return 0
        state = self.model.opt.state_dict()["state"]
        return int(state[0]["n_iter"]) if state else 0

    def predict(self, x):
        return np.asarray(self.model.predict(x.astype(self.np_dtype)), dtype=np.float64)


# ---- measurements -----------------------------------------------------------------------------


def time_per_adam_step(impl, steps, warmup=5):
    """Median over ``REPEATS`` blocks of ``steps`` Adam steps, seconds per step (after
    ``warmup`` steps: compilation, caches); also checks the loss is finite."""
    if isinstance(impl, DeepXDEPinn):
        blocks, loss = impl.timed_adam_blocks(REPEATS, steps, warmup)
        samples = [b / steps for b in blocks]
    else:
        loss = impl.adam_steps(warmup)
        samples = []
        for _ in range(REPEATS):
            t0 = CLOCK["now"]()
            loss = impl.adam_steps(steps)
            samples.append((CLOCK["now"]() - t0) / steps)
    if not math.isfinite(loss):
        raise FloatingPointError(f"{impl.label}: Adam loss is {loss}")
    return statistics.median(samples)


class _Clock:
    """Training seconds with the error checks taken out."""

    def __init__(self):
        self.t0 = CLOCK["now"]()
        self.paused = 0.0

    def check(self, error_fn):
        t = CLOCK["now"]()
        err = error_fn()
        self.paused += CLOCK["now"]() - t
        return err

    def seconds(self):
        return CLOCK["now"]() - self.t0 - self.paused


def time_to_target(impl, grid, target, adam_max, lbfgs_max, check_every):
    """Train a fresh ``impl`` until rel-L2 <= ``target`` on ``grid = (points, u)``.

    Returns a dict: ``seconds`` (training time without the checks; None when not reached),
    ``error`` (the last one), ``adam`` steps and ``lbfgs`` iterations done, ``phase``.
    """
    points, ref = grid
    clock = _Clock()
    state = {"error": math.inf, "adam": 0, "lbfgs": 0, "phase": "adam"}

    def error():
        state["error"] = _rel_l2(impl.predict(points), ref)
        return state["error"]

    if isinstance(impl, DeepXDEPinn):
        dde = impl.dde

        class Check(dde.callbacks.Callback):
            def __init__(self, phase, every):
                super().__init__()
                self.phase, self.every, self.calls = phase, every, 0

            def on_epoch_end(self):
                self.calls += 1
                state[self.phase] += 1 if self.phase == "adam" else 0
                if self.phase == "adam" and self.calls % self.every:
                    return
                if self.phase == "lbfgs":
                    state["lbfgs"] = impl.lbfgs_iterations()
                if clock.check(error) <= target:
                    self.model.stop_training = True

        impl.adam_steps(adam_max, callbacks=[Check("adam", check_every)])
        if state["error"] > target and lbfgs_max:
            state["phase"] = "lbfgs"
            impl.lbfgs_steps(lbfgs_max, callbacks=[Check("lbfgs", 1)], check_every=check_every)
    else:
        while state["adam"] < adam_max and state["error"] > target:
            n = min(check_every, adam_max - state["adam"])
            loss = impl.adam_steps(n)
            state["adam"] += n
            if not math.isfinite(loss):
                break
            clock.check(error)
        if state["error"] > target and lbfgs_max:
            state["phase"] = "lbfgs"
            while state["lbfgs"] < lbfgs_max and state["error"] > target:
                n = min(check_every, lbfgs_max - state["lbfgs"])
                done = int(impl.lbfgs.global_step) if impl.lbfgs is not None else 0
                impl.lbfgs_steps(n)
                state["lbfgs"] += n
                clock.check(error)
                if int(impl.lbfgs.global_step) == done:  # converged or stalled
                    break
    seconds = clock.seconds()
    state["seconds"] = seconds if state["error"] <= target else None
    state["total_seconds"] = seconds
    return state


# ---- table ------------------------------------------------------------------------------------


def _have(module):
    return importlib.util.find_spec(module) is not None


def _torch_threads():
    if not _have("torch"):
        return "-"
    import torch

    return torch.get_num_threads()


def run(
    dtypes=("float32", "float64"),
    sizes=None,
    steps=50,
    target=1e-2,
    adam_max=2000,
    lbfgs_max=5000,
    check_every=100,
    deepxde=True,
    to_target=True,
    log=print,
):
    """Rows ``{dtype: {label: {"step": s, "target": dict or None, "note": str}}}``."""
    sizes = sizes or PROBLEM
    points = training_points(sizes)
    params = glorot_params(sizes)
    grid = reference_grid() if to_target else None
    impls = [OursPinn]
    if deepxde:
        impls.append(DeepXDEPinn)
    rows = {}
    for name in dtypes:
        dtype = getattr(core, name)
        rows[name] = {}
        for cls in impls:
            if cls is DeepXDEPinn and not _have("deepxde"):
                rows[name][cls.label] = {
                    "step": None,
                    "target": None,
                    "note": "not installed (pip install deepxde)",
                }
                continue
            step = time_per_adam_step(cls(params, points, dtype), steps)
            log(f"{name} {cls.label}: {step * 1e3:.2f} ms per Adam step")
            reached = None
            if to_target:
                reached = time_to_target(
                    cls(params, points, dtype), grid, target, adam_max, lbfgs_max, check_every
                )
                log(f"{name} {cls.label}: {reached}")
            rows[name][cls.label] = {"step": step, "target": reached, "note": ""}
    return rows


def format_table(rows, target):
    """One line per dtype and implementation with ours/row ratios."""
    lines = [
        f"{'dtype':<8} {'row':<9} {'ms/Adam step':>12} {'ours/row':>8}  "
        f"{'s to rel-L2<=' + format(target, '.0e'):>16} {'ours/row':>8}  adam+lbfgs, error",
    ]
    for name, by_label in rows.items():
        ours = by_label["ours jit"]
        for label, row in by_label.items():
            if row["step"] is None:
                lines.append(f"{name:<8} {label:<9} {'skipped':>12}  {row['note']}")
                continue
            ratio = ours["step"] / row["step"]
            reached = row["target"]
            if reached is None:
                tail = f"{'':>16} {'':>8}"
            else:
                secs = reached["seconds"]
                ours_secs = ours["target"]["seconds"] if ours["target"] else None
                s_txt = f"{secs:16.1f}" if secs is not None else f"{'not reached':>16}"
                r_txt = (
                    f"{ours_secs / secs:8.2f}"
                    if secs is not None and ours_secs is not None
                    else f"{'-':>8}"
                )
                tail = (
                    f"{s_txt} {r_txt}  {reached['adam']}+{reached['lbfgs']}, {reached['error']:.2e}"
                )
            lines.append(f"{name:<8} {label:<9} {row['step'] * 1e3:12.2f} {ratio:8.2f}  {tail}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dtype", nargs="+", choices=["float32", "float64"], default=["float32", "float64"]
    )
    parser.add_argument("--steps", type=int, default=50, help="Adam steps per timing block")
    parser.add_argument("--target", type=float, default=1e-2)
    parser.add_argument("--adam-max", type=int, default=2000)
    parser.add_argument("--lbfgs-max", type=int, default=5000)
    parser.add_argument("--check-every", type=int, default=100)
    parser.add_argument("--no-deepxde", action="store_true", help="our rows only")
    parser.add_argument("--no-target", action="store_true", help="only (a), time per step")
    parser.add_argument("--tiny", action="store_true", help="toy sizes, few steps")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="threads for both sides (core.set_num_threads and torch.set_num_threads); "
        "1 gives steadier timings on a shared machine",
    )
    parser.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="wall clock, or process CPU time (fair with --threads 1 on a loaded machine)",
    )
    args = parser.parse_args(argv)
    CLOCK["now"] = time.process_time if args.clock == "cpu" else time.perf_counter
    if args.threads:
        core.set_num_threads(args.threads)
        if _have("torch"):
            import torch

            torch.set_num_threads(args.threads)
    sizes = TINY if args.tiny else PROBLEM
    if args.tiny:
        args.steps, args.adam_max, args.lbfgs_max, args.check_every = 2, 4, 2, 2
    print(
        f"Burgers PINN, MLP 2-[{sizes['width']}]x{sizes['depth']}-1 tanh, "
        f"{sizes['n_domain']}+{sizes['n_boundary']}+{sizes['n_initial']} points; "
        f"core threads {core.get_num_threads()}, torch threads {_torch_threads()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, {args.clock} clock"
    )
    rows = run(
        args.dtype,
        sizes,
        args.steps,
        args.target,
        args.adam_max,
        args.lbfgs_max,
        args.check_every,
        not args.no_deepxde,
        not args.no_target,
    )
    print(format_table(rows, args.target), flush=True)
    return rows


if __name__ == "__main__":
    main()
