"""Neural-operator benchmark: FNO training step time and peak memory, ours against neuraloperator.

Two cases, the FNO paper's (Li et al., ICLR 2021) and issue 14's configurations:

- ``fno1d``: Burgers, s = 1024, batch 20, width 64, 16 modes, 4 Fourier layers, projection
  width 256 (MindFlow's burgers/fno1d: ``4 * hidden_channels``);
- ``fno2d``: Darcy/NS, 64^2, batch 8, width 32, 12 x 12 modes, 4 layers, projection 128.

One training step = forward, MSE loss, backward, Adam update, on one fixed random batch.
Rows:

- ``ours eager`` / ``ours jit``: ``mindflow.cell.FNO1D/FNO2D`` (channels-last, grid
  positional embedding), ``core.value_and_grad`` + ``core.nn.Adam``; the jit row compiles the
  whole step with ``core.jit`` (as ``mindflow.train.OperatorTrainer`` does);
- ``neuraloperator``: ``neuralop.models.FNO`` (PyTorch, channels-first) set up like MindFlow's
  FNO: ``use_channel_mlp=False`` (a plain pointwise skip per layer), ``fno_skip="linear"``,
  grid embedding, the same projection width. Differences that remain: its lifting is a
  two-layer channel MLP (``lifting_channel_ratio=1``; MindFlow's is one linear map) and its
  ``n_modes`` counts both signs along all but the last axis and is halved (+1) along the last:
  ``n_modes=(2m, ..., 2m)`` keeps m modes per sign (m + 1 along the last axis, one more than
  ours). Parameter counts (real numbers: a complex weight counts twice) are printed next to
  each row.

Each row runs in a fresh interpreter (so thread settings and memory do not leak between
rows): seconds per step is the median over ``--steps`` single steps after two warm-up steps
(which compile our graph); peak memory is the rise of the process's resident set (VmHWM - VmRSS
after ``/proc/self/clear_refs``) during one step (``bench.harness.rss_peak_in_this_process_mib``),
i.e. the step's working memory. FFTs: ours run ``scipy.fft`` (pocketfft) with
``workers = core.get_num_threads()``; PyTorch's CPU FFT is pocketfft as well (or MKL where the
build has it: the header line says which). GEMMs: ours split each product into panels on
core's thread pool, each a one-thread BLAS call (``core.backend.cpu_gemm``; BLAS is held at one
thread so that no spinning BLAS worker takes the cores the FFTs and kernels need next). Run:

    python -m bench.operators                      # both cases, default threads and 1 thread
    python -m bench.operators --case fno1d --threads 1 --clock cpu
    python -m bench.operators --tiny               # toy sizes (what tests/bench runs)
"""

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

__all__ = ["CASES", "ROWS", "format_table", "main", "run_case", "run_row"]

CASES = {
    "fno1d": {"grid": [1024], "batch": 20, "width": 64, "modes": 16, "projection": 256},
    "fno2d": {"grid": [64, 64], "batch": 8, "width": 32, "modes": 12, "projection": 128},
}
TINY = {
    "fno1d": {"grid": [64], "batch": 2, "width": 8, "modes": 4, "projection": 16},
    "fno2d": {"grid": [16, 16], "batch": 2, "width": 8, "modes": 4, "projection": 16},
}
ROWS = ("ours eager", "ours jit", "neuraloperator")


def _data(cfg):
    rng = np.random.default_rng(0)
    shape = (cfg["batch"], *cfg["grid"], 1)  # channels-last
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.standard_normal(shape).astype(np.float32)
    return x, y


def _ours(cfg, jit):
    from diffsci import core
    from diffsci.core import nn
    from diffsci.mindflow.cell import FNO1D, FNO2D

    core.set_seed(0)
    cls = FNO1D if len(cfg["grid"]) == 1 else FNO2D
    model = cls(
        1,
        1,
        n_modes=cfg["modes"],
        resolutions=cfg["grid"][0],
        hidden_channels=cfg["width"],
        projection_channels=cfg["projection"],
    )
    opt = nn.Adam(model.trainable_params(), learning_rate=1e-3)

    def loss_fn(x, y):
        return ((model(x) - y) ** 2).mean()

    grad_fn = core.value_and_grad(loss_fn, None, opt.parameters)

    def train_step(x, y):
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss

    step_fn = core.jit(train_step) if jit else train_step
    x, y = (core.Tensor(a) for a in _data(cfg))
    n_params = sum(int(np.prod(p.shape)) for p in model.trainable_params())

    def step():
        return float(step_fn(x, y).asnumpy())

    return step, n_params


def _neuraloperator(cfg):
    import torch
    from neuralop.models import FNO

    torch.manual_seed(0)
    d = len(cfg["grid"])
    model = FNO(
        n_modes=(2 * cfg["modes"],) * d,
        in_channels=1,
        out_channels=1,
        hidden_channels=cfg["width"],
        n_layers=4,
        lifting_channel_ratio=1,
        projection_channel_ratio=cfg["projection"] / cfg["width"],
        use_channel_mlp=False,
        fno_skip="linear",
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = (torch.from_numpy(np.moveaxis(a, -1, 1).copy()) for a in _data(cfg))  # [B, 1, ...]
    # real numbers, as ours counts them (a complex spectral weight is two)
    n_params = sum(p.numel() * (2 if p.is_complex() else 1) for p in model.parameters())

    def step():
        opt.zero_grad(set_to_none=True)
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return float(loss.detach())

    return step, n_params


def have_neuraloperator():
    return importlib.util.find_spec("neuralop") is not None


def run_row(case, row, threads=None, steps=5, tiny=False, clock="wall"):
    """One row in this process: ``{"seconds": per step, "peak_mib", "params", "threads"}``.
    ``threads`` must be set before the first step (a fresh process: see :func:`run_case`)."""
    import warnings

    from diffsci import core

    cfg = (TINY if tiny else CASES)[case]
    if threads:
        core.set_num_threads(threads)
    if row == "neuraloperator":
        import torch

        if threads:
            torch.set_num_threads(threads)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # neuralop's import-time notices
            step, n_params = _neuraloperator(cfg)
        used = torch.get_num_threads()
    else:
        step, n_params = _ours(cfg, jit=row == "ours jit")
        used = core.get_num_threads()
    timer = time.process_time if clock == "cpu" else time.perf_counter
    for _ in range(2):  # warm-up: compiles our graph
        step()
    times = []
    for _ in range(steps):
        t0 = timer()
        step()
        times.append(timer() - t0)
    peak = float("nan")
    if os.path.exists("/proc/self/clear_refs"):
        from .harness import rss_peak_in_this_process_mib

        peak = rss_peak_in_this_process_mib(step, warmup=0)
    return {
        "seconds": statistics.median(times),
        "peak_mib": peak,
        "params": n_params,
        "threads": used,
    }


def run_case(case, threads=None, steps=5, tiny=False, clock="wall", rows=ROWS, timeout=600):
    """Every row of ``case``, each in a fresh interpreter: ``[(row, result dict or None,
    note)]`` (None: skipped or failed, with the reason in ``note``)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = []
    for row in rows:
        if row == "neuraloperator" and not have_neuraloperator():
            out.append((row, None, "skipped: pip install neuraloperator"))
            continue
        spec = json.dumps([case, row, threads, steps, tiny, clock])
        cmd = [sys.executable, "-m", "bench.operators", "--_row", spec]
        try:
            res = subprocess.run(
                cmd, cwd=root, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            out.append((row, None, "timed out"))
            continue
        lines = res.stdout.strip().splitlines()
        if res.returncode != 0 or not lines:
            tail = (res.stderr or res.stdout).strip().splitlines()
            out.append((row, None, tail[-1] if tail else f"exited {res.returncode}"))
            continue
        out.append((row, json.loads(lines[-1]), ""))
    return out


def format_table(case, results, title=""):
    """Rows with ms/step, peak MiB, parameters and the ratios ours / neuraloperator."""
    ref = next((r for name, r, _ in results if name == "neuraloperator" and r), None)
    lines = [
        f"{case} {title}".rstrip(),
        f"  {'row':<15} {'ms/step':>10} {'/ neuralop':>10} {'peak MiB':>9} "
        f"{'/ neuralop':>10} {'params':>9} {'threads':>7}",
    ]
    for name, r, note in results:
        if r is None:
            lines.append(f"  {name:<15} {note}")
            continue
        t_ratio = f"{r['seconds'] / ref['seconds']:.2f}" if ref else "-"
        m_ratio = f"{r['peak_mib'] / ref['peak_mib']:.2f}" if ref and ref["peak_mib"] > 0 else "-"
        lines.append(
            f"  {name:<15} {1e3 * r['seconds']:>10.2f} {t_ratio:>10} {r['peak_mib']:>9.1f} "
            f"{m_ratio:>10} {r['params']:>9} {r['threads']:>7}"
        )
    return "\n".join(lines)


def _header():
    import scipy

    from diffsci import core
    from diffsci.core.backend import cc

    text = f"core threads (default) {core.get_num_threads()}, FFT: scipy.fft {scipy.__version__}"
    if cc.parallel():
        text += " (pocketfft, workers = threads), GEMM: core's pool over one-thread BLAS"
    if have_neuraloperator():
        import torch

        mkl = torch.backends.mkl.is_available()
        text += (
            f"; torch {torch.__version__} (threads {torch.get_num_threads()}, FFT "
            f"{'MKL' if mkl else 'pocketfft'})"
        )
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES), action="append")
    parser.add_argument(
        "--threads",
        type=int,
        action="append",
        help="thread counts to run (default: the machine's default, then 1)",
    )
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--_row", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._row:
        case, row, threads, steps, tiny, clock = json.loads(args._row)
        print(json.dumps(run_row(case, row, threads, steps, tiny, clock)))
        return None
    print(_header(), flush=True)
    tables = {}
    for threads in args.threads or [None, 1]:
        for case in args.case or sorted(CASES):
            results = run_case(case, threads, args.steps, args.tiny, args.clock)
            label = "default threads" if threads is None else f"{threads} thread(s)"
            text = format_table(case, results, f"({label}, {args.clock} clock)")
            print(text, flush=True)
            tables[(case, threads)] = results
    return tables


if __name__ == "__main__":
    main()
