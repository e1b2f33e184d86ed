"""Time-domain Maxwell PINN step time (``examples/mindelec/pinn/time_domain_maxwell``): eager,
``core.jit``, and the same step in PyTorch (same weights, same points) in the same process.

The step is MindElec's: the multi-scale sine network (4 scales x 7 layers x 64 neurons, input
scale (1, 1, 2.5e8)), five sub-datasets of ``--batch`` points each (MindElec: 8192; source disc
and the rest of the square with equation and initial points, the edges with Mur's boundary),
first derivatives of the three fields at the equation and boundary points, the smooth-L1 loss of
each residual, MTL weighting, backward and Adam. MindElec reports about 60 ms per step on an
Ascend 910.

- **ours eager**: ``Solver.train_step`` op by op.
- **ours jit**: the same step as one ``core.jit`` graph (forward, input Jacobians, backward,
  Adam).
- **torch eager**: ``torch.autograd.grad(..., create_graph=True)`` per field, ``torch.optim.Adam``;
  its first loss equals ours (same weights and points), which the table reports.

    python -m bench.mindelec_pinn               # MindElec's batch, 3 timed steps per row
    python -m bench.mindelec_pinn --tiny        # toy sizes (tests/bench)

Times are the median of ``--repeats`` steps after ``--warmup`` steps (which compile the jit
graph).
"""

import argparse
import importlib.util
import math
import os
import pathlib
import statistics
import sys
import time

from diffsci import core

__all__ = ["main", "run"]

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples/mindelec/pinn/time_domain_maxwell"
FULL = {"batch": 8192, "layers": 7, "neurons": 64, "num_scales": 4}
TINY = {"batch": 64, "layers": 3, "neurons": 8, "num_scales": 2}


def _example():
    """The example's script module (its ``src`` package first on the path)."""
    if str(EXAMPLE) not in sys.path:
        sys.path.insert(0, str(EXAMPLE))
    spec = importlib.util.spec_from_file_location(
        "mindelec_maxwell_example", EXAMPLE / "time_domain_maxwell.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ours(sizes, jit):
    from diffsci.core import nn
    from diffsci.mindelec.solver import Solver

    ex = _example()
    config = ex.load_config()
    parts = ex.build(
        config,
        sizes["batch"],
        sizes["batch"],
        sizes["layers"],
        sizes["neurons"],
        sizes["num_scales"],
    )
    params = parts["model"].trainable_params() + parts["mtl"].trainable_params()
    opt = nn.Adam(params, learning_rate=config["lr"])
    solver = Solver(
        parts["model"],
        opt,
        mode="PINNs",
        train_constraints=parts["constraints"],
        loss_fn="smooth_l1_loss",
        mtl_weighted_cell=parts["mtl"],
        jit=jit,
    )
    batch = next(iter(parts["train"].create_tuple_iterator(num_epochs=1)))
    names = list(parts["dataset"].column_index_map)
    return solver, batch, names, parts, config


def _time(step, warmup, repeats):
    first = None
    for _ in range(warmup):
        value = float(step())
        first = value if first is None else first
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = float(step())
        times.append(time.perf_counter() - t0)
        first = value if first is None else first
    return statistics.median(times), first


def _torch_row(parts, batch, names, config, warmup, repeats):
    """The same step in PyTorch, from our initial weights."""
    import torch

    from diffsci.mindelec.common import EPS, LIGHT_SPEED, MU

    torch.set_num_threads(core.get_num_threads())
    dt = torch.float32
    model = parts["model"]
    weights = [
        torch.tensor(p.asnumpy(), dtype=dt, requires_grad=True) for p in model.trainable_params()
    ]
    mtl = torch.ones(len(names), dtype=dt, requires_grad=True)
    scale = torch.tensor(config["input_scale"], dtype=dt)
    coefs = model.scale_coef
    n_layers = len(weights) // (2 * len(coefs))

    def net(x):
        x = x * scale
        out = 0.0
        for s, coef in enumerate(coefs):
            w = weights[2 * n_layers * s : 2 * n_layers * (s + 1)]
            h = torch.sin(torch.nn.functional.linear(x * coef, w[0], w[1]))
            for i in range(1, n_layers - 1):
                h = torch.sin(torch.nn.functional.linear(h, w[2 * i], w[2 * i + 1]) + h)
            out = out + torch.nn.functional.linear(h, w[-2], w[-1])
        return out

    s_x, s_y, s_t = config["input_scale"]
    s_ex, s_ey, s_hz = config["output_scale"]
    tau = math.sqrt(2.3) / (math.pi * config["src_frq"])
    t0, sigma = 3.65 * tau, config["src_radius"] / 4.0
    x0, y0 = config["src_pos"]

    def jac(x):
        u = net(x)
        return u, [torch.autograd.grad(u[:, f].sum(), x, create_graph=True)[0] for f in range(3)]

    def pde(x):
        _, (gex, gey, ghz) = jac(x)
        r1 = s_hz * ghz[:, 1:2] / (s_ex * s_t * EPS) - gex[:, 2:3] / s_t
        r2 = -s_hz * ghz[:, 0:1] / (s_ey * s_t * EPS) - gey[:, 2:3] / s_t
        src = (
            torch.exp(-(((x[:, 2:3] - t0) / tau) ** 2))
            * torch.exp(-((x[:, 0:1] - x0) ** 2 + (x[:, 1:2] - y0) ** 2) / (2 * sigma**2))
            / (2 * math.pi * sigma**2)
        )
        r3 = (s_ey * gey[:, 0:1] - s_ex * gex[:, 1:2]) / (s_hz * s_t * MU) + ghz[:, 2:3] / s_t
        return torch.cat([r1, r2, r3 - src / (s_hz * s_t * MU)], dim=1)

    def mur(x):
        _, (gex, gey, ghz) = jac(x)
        c = LIGHT_SPEED
        kx = s_ex * c * EPS / (2 * s_hz * s_x)
        ky = s_ey * c * EPS / (2 * s_hz * s_y)
        hx, hy, ht = ghz[:, 0:1], ghz[:, 1:2], ghz[:, 2:3]
        rows = [
            (hx / s_x - ht / (c * s_x) + kx * gex[:, 1:2]) * (x[:, 0:1] == 0.0),
            (hx / s_x + ht / (c * s_x) - kx * gex[:, 1:2]) * (x[:, 0:1] == 1.0),
            (hy / s_y - ht / (c * s_y) - ky * gey[:, 0:1]) * (x[:, 1:2] == 0.0),
            (hy / s_y + ht / (c * s_y) + ky * gey[:, 0:1]) * (x[:, 1:2] == 1.0),
        ]
        return torch.cat(rows, dim=1)

    data = [torch.tensor(b.asnumpy(), dtype=dt, requires_grad=True) for b in batch]
    kinds = {
        name: str(parts["dataset"].dataset_constraint_map[name.removesuffix("_points")]).lower()
        for name in names
    }
    opt = torch.optim.Adam([*weights, mtl], lr=config["lr"])

    def step():
        opt.zero_grad()
        total = 0.0
        s2 = mtl * mtl
        for i, (name, x) in enumerate(zip(names, data)):
            kind = kinds[name]
            r = pde(x) if kind == "equation" else mur(x) if kind == "bc" else net(x)
            term = torch.nn.functional.smooth_l1_loss(r, torch.zeros_like(r))
            total = total + 0.5 * term / s2[i] + torch.log(s2[i] + 1.0)
        total.backward()
        opt.step()
        return total.detach()

    return _time(step, warmup, repeats)


def run(sizes, warmup=1, repeats=3, torch_row=True):
    """``{row: {"ms": ms per step, "loss": first loss}}``."""
    rows = {}
    for label, jit in (("ours eager", False), ("ours jit", True)):
        solver, batch, names, parts, config = _ours(sizes, jit)
        sec, loss = _time(lambda s=solver, b=batch: s.train_step(*b), warmup, repeats)
        rows[label] = {"ms": sec * 1e3, "loss": loss}
    if torch_row:
        if importlib.util.find_spec("torch") is None:
            rows["torch eager"] = {"ms": None, "loss": None, "note": "torch not installed"}
        else:
            solver, batch, names, parts, config = _ours(sizes, False)
            sec, loss = _torch_row(parts, batch, names, config, warmup, repeats)
            rows["torch eager"] = {"ms": sec * 1e3, "loss": loss}
    return rows


def format_table(rows):
    jit = rows["ours jit"]["ms"]
    lines = [f"{'row':<12} {'ms/step':>10} {'row/ours jit':>12} {'first loss':>12}"]
    for label, row in rows.items():
        if row["ms"] is None:
            lines.append(f"{label:<12} {'skipped':>10}  {row.get('note', '')}")
            continue
        lines.append(f"{label:<12} {row['ms']:10.1f} {row['ms'] / jit:12.2f} {row['loss']:12.6g}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--batch", type=int, default=None, help="points per sub-dataset")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-torch", action="store_true")
    a = parser.parse_args(argv)
    sizes = dict(TINY if a.tiny else FULL)
    if a.batch:
        sizes["batch"] = a.batch
    core.set_seed(0)
    rows = run(sizes, a.warmup, a.repeats, not a.no_torch)
    print(
        f"time-domain Maxwell PINN step, 5 x {sizes['batch']} points, network "
        f"{sizes['num_scales']} x {sizes['layers']} x {sizes['neurons']}, float32, "
        f"threads={core.get_num_threads()}, pid {os.getpid()}"
    )
    print(format_table(rows))
    return rows


if __name__ == "__main__":
    main()
