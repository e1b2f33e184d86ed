"""Protenix trunk benchmarks: the Pairformer block against PyTorch Protenix at the default
thread count and at one thread, the mini model's trunk under block-wise inference (float32 or
bfloat16), and a PyTorch training step of the same Pairformer stack as
``bench.protenix_pairformer --train``.

    python -m bench.protenix_trunk block --n 128 256          # ours / PyTorch, threads 1 and all
    python -m bench.protenix_trunk mini --n 1024 --blocks 2   # mini trunk, 2 of its 16 blocks
    python -m bench.protenix_trunk mini --n 512 --dtype bf16
    python -m bench.protenix_trunk train --n 64 --c-z 32 --c-s 64 --blocks 8
    python -m bench.protenix_trunk --tiny                     # what a smoke test runs

``block`` rows: the plain (Protenix-equivalent) ``PairformerBlock`` forward under no-grad,
Protenix's default sizes (c_z 128, c_s 384, 16 single heads), best of 3 after a warm-up, ours in
this process (``core.set_num_threads``) and PyTorch Protenix 2.0.0 in a subprocess
(``torch.set_num_threads``) from outside the repository (``.ref/protenix-2.0.0``,
``LAYERNORM_TYPE=torch``), same thread count.

``mini`` rows: the trunk of ``protenix_mini_default_v0.5.0`` (random weights, its config from
``protenix.config.get_model_config``): the MSA module (1 block, c_m 64, an MSA of ``--msa``
random rows) then the Pairformer stack (16 blocks, or the first ``--blocks`` of them), one
recycle, ``inplace_safe=True`` and ``chunk_size="auto"`` (Protenix's dynamic rule), in
``--dtype`` (bf16: s, z, s_inputs cast to bfloat16; the weights stay float32 and are cast per
use, as under Protenix's autocast). Reported: seconds for the MSA module, per Pairformer block
(mean) and the 16-block stack (measured, or per-block mean x 16 when ``--blocks`` < 16, marked
"extrapolated"), the traced array peak above the inputs in pair tensors (float32 [N, N, c_z]),
and the process's peak RSS. Block-wise inference holds one block's temporaries at a time, so
the peak does not grow with the number of blocks.

``train`` rows: one forward+backward of ``PairformerStack`` (n_heads 4, dropout 0.25, the loss
mean(s^2) + mean(z^2) of bench.protenix_pairformer), ours (``core.value_and_grad``) and
PyTorch's (``backward``), with ``blocks_per_ckpt`` None and 1, each in a fresh one-thread
subprocess: seconds and the peak RSS growth over the step (torch's CPU allocator is not seen by
tracemalloc, so both sides are measured by RSS; ``bench.protenix_pairformer --train`` has our
traced peaks).

Measured on this machine (2 shared cores, load average ~10 from other jobs: wall-clock numbers
are taken under load, several times the idle figures), 2026-11-26:

- ``block --n 128 256 --threads 1 2`` (c_z 128, plain forward, best of 3): N=128 ours 2.49 s /
  PyTorch 4.07 s = 0.61 (1 thread), 1.69 / 3.97 = 0.43 (2 threads); N=256 13.95 / 10.11 = 1.38
  (1 thread), 9.60 / 10.56 = 0.91 (2 threads).
- ``mini --n 1024 --blocks 1`` (one recycle, MSA of 32 rows, chunk "auto" = none at 1024 ->
  row blocks of N/16), 1 thread. Float32 near idle (load 0.9, user 132 s of 138 s wall): MSA
  module 71 s, 65 s per Pairformer block, 16 blocks 1038 s extrapolated (1 of 16 run), total
  1109 s per recycle; traced peak 1.69 GiB (3.39x the pair tensor), peak RSS 2.28 GiB.
  Bfloat16 (load ~3, user 188 s of 198 s wall): 101 s + 94 s per block, 1600 s extrapolated
  (numpy has no bf16 BLAS: converted per matmul), traced peak 0.92 GiB (1.85x, 0.54x of
  float32's), peak RSS 1.36 GiB (0.60x).
- ``bench.protenix_pairformer --n 512 1024 --chunk 64`` (one block, c_z 128, 1 thread): peak
  above the inputs 2.38x the pair tensor at both N (61 s / 0.49 GiB RSS, 72 s / 1.76 GiB RSS).
  N = 3072 extrapolated (not run: 23 GiB shared): inputs 1x + 2.38x of 4.5 GiB = about 15.3
  GiB float32 (within 16 GiB, narrowly), about 27 x 72 s = 32 min on one thread.
- ``train --n 64 --c-z 32 --c-s 64 --blocks 8``: ours 3.5 s / 867 MiB RSS growth without
  recompute, 2.7 s / 145 MiB with blocks_per_ckpt=1 (6.0x lower); PyTorch 3.7 s / 798 MiB and
  5.5 s / 526 MiB (1.5x lower).
"""

import argparse
import gc
import os
import pathlib
import resource
import subprocess
import sys
import time
import tracemalloc

import numpy as np

from diffsci import core

REPO = pathlib.Path(__file__).resolve().parents[1]
REF = REPO / ".ref" / "protenix-2.0.0"

_TORCH_BLOCK = r"""
import sys, time, torch
n, c_z, c_s, threads = (int(a) for a in sys.argv[1:5])
torch.set_num_threads(threads)
from protenix.model.modules.pairformer import PairformerBlock
torch.manual_seed(0)
b = PairformerBlock(n_heads=16, c_z=c_z, c_s=c_s).eval()
s, z, m = torch.randn(n, c_s), torch.randn(n, n, c_z), torch.ones(n, n)
with torch.no_grad():
    b(s, z, m)
    ts = []
    for _ in range(3):
        t = time.perf_counter(); b(s, z, m); ts.append(time.perf_counter() - t)
print(min(ts))
"""

_TORCH_TRAIN = r"""
import resource, sys, time, torch
n, c_z, c_s, blocks, ckpt = (int(a) for a in sys.argv[1:6])
torch.set_num_threads(1)
from protenix.model.modules.pairformer import PairformerStack
torch.manual_seed(0)
st = PairformerStack(n_blocks=blocks, n_heads=4, c_z=c_z, c_s=c_s,
                     blocks_per_ckpt=ckpt if ckpt > 0 else None).train()
g = torch.Generator().manual_seed(0)
s0 = torch.randn(n, c_s, generator=g, requires_grad=True)
z0 = torch.randn(n, n, c_z, generator=g, requires_grad=True)
m = torch.ones(n, n)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
s, z = st(s0, z0, m)
loss = (s ** 2).mean() + (z ** 2).mean()
loss.backward()
sec = time.perf_counter() - t
grow = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(float(loss), grow, sec)
"""


_OURS_TRAIN = r"""
import resource, sys, time
import numpy as np
from diffsci import core
from diffsci.core import ops
from diffsci.protenix.model.modules.pairformer import PairformerStack
n, c_z, c_s, blocks, ckpt = (int(a) for a in sys.argv[1:6])
core.set_num_threads(1)
core.set_seed(0)
st = PairformerStack(n_blocks=blocks, n_heads=4, c_z=c_z, c_s=c_s,
                     blocks_per_ckpt=ckpt if ckpt > 0 else None)
rng = np.random.default_rng(0)
s0 = core.tensor(rng.standard_normal((n, c_s), dtype=np.float32))
z0 = core.tensor(rng.standard_normal((n, n, c_z), dtype=np.float32))
m = ops.ones((n, n))
def loss(s, z):
    s, z = st(s, z, m)
    return (s ** 2).mean() + (z ** 2).mean()
grad_fn = core.value_and_grad(loss, None, st.trainable_params())
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
val, _ = grad_fn(s0, z0)
sec = time.perf_counter() - t
grow = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(float(val.asnumpy()), grow, sec)
"""


def _rss_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _torch_env(threads):
    env = dict(os.environ, PYTHONPATH=str(REF), LAYERNORM_TYPE="torch")
    env["OMP_NUM_THREADS"] = str(threads)
    return env


def _run_torch(script, args, threads=1):
    if not REF.is_dir():
        return None
    out = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        cwd="/",
        env=_torch_env(threads),
        check=True,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    return [float(x) for x in out.stdout.strip().splitlines()[-1].split()]


# ---- block: ours vs PyTorch ------------------------------------------------------------------
def block_rows(ns, c_z, c_s, thread_counts):
    from bench.protenix_pairformer import plain

    rows = []
    saved = core.get_num_threads()
    try:
        for threads in thread_counts:
            core.set_num_threads(threads)
            for n in ns:
                ours = plain(n, c_z, c_s)
                ref = _run_torch(_TORCH_BLOCK, (n, c_z, c_s, threads), threads)
                ref_s = "not installed" if ref is None else f"{ref[0]:.3f} s"
                ratio = "-" if ref is None else f"{ours / ref[0]:.2f}"
                rows.append(
                    f"Pairformer block N={n} c_z={c_z} threads={threads}: ours {ours:.3f} s, "
                    f"PyTorch {ref_s}, ours/PyTorch {ratio}"
                )
    finally:
        core.set_num_threads(saved)
    return rows


# ---- mini trunk ------------------------------------------------------------------------------
def mini_trunk(n, n_msa=32, blocks=None, dtype="fp32", model="protenix_mini_default_v0.5.0",
               c_z=None):  # fmt: skip
    """Dict of timings/peaks of the variant's trunk (MSA module + Pairformer stack) on N tokens."""
    from diffsci.protenix.config import get_model_config
    from diffsci.protenix.model.modules.msa import MSAModule
    from diffsci.protenix.model.modules.pairformer import PairformerStack

    cfg = get_model_config(model)
    mm, pf = dict(cfg["model"]["msa_module"]), dict(cfg["model"]["pairformer"])
    if c_z is not None:
        mm["c_z"] = pf["c_z"] = c_z
    total_blocks = pf["n_blocks"]
    run_blocks = total_blocks if blocks is None else min(blocks, total_blocks)
    core.set_seed(0)
    msa = MSAModule(
        n_blocks=mm["n_blocks"], c_m=mm["c_m"], c_z=mm["c_z"], c_s_inputs=mm["c_s_inputs"],
        msa_chunk_size=mm["msa_chunk_size"], msa_max_size=mm["msa_max_size"],
    )  # fmt: skip
    stack = PairformerStack(
        n_blocks=run_blocks, n_heads=pf["n_heads"], c_z=pf["c_z"], c_s=pf["c_s"],
        dropout=pf["dropout"],
    )  # fmt: skip
    msa.set_train(False)
    stack.set_train(False)
    rng = np.random.default_rng(0)
    dt = core.bfloat16 if dtype == "bf16" else core.float32
    z = core.tensor(rng.standard_normal((n, n, pf["c_z"]), dtype=np.float32)).astype(dt)
    s = core.tensor(rng.standard_normal((n, pf["c_s"]), dtype=np.float32)).astype(dt)
    s_in = core.tensor(rng.standard_normal((n, mm["c_s_inputs"]), dtype=np.float32)).astype(dt)
    feats = {
        "msa": core.tensor(rng.integers(0, 32, size=(n_msa, n)), dtype=core.int64),
        "has_deletion": core.tensor(np.zeros((n_msa, n), np.float32)),
        "deletion_value": core.tensor(np.zeros((n_msa, n), np.float32)),
    }
    pair_bytes = n * n * pf["c_z"] * 4
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    t0 = time.perf_counter()
    with core.no_grad():
        z = msa(feats, z, s_in, None, inplace_safe=True, chunk_size="auto")
        t1 = time.perf_counter()
        print(f"[mini N={n} {dtype}] MSA module {t1 - t0:.1f} s", file=sys.stderr, flush=True)
        per_block = []
        for blk in stack.blocks:  # the stack's loop, timed per block
            tb = time.perf_counter()
            s, z = blk(s, z, None, inplace_safe=True, chunk_size="auto")
            per_block.append(time.perf_counter() - tb)
            print(f"[mini N={n} {dtype}] block {len(per_block)}: {per_block[-1]:.1f} s",
                  file=sys.stderr, flush=True)  # fmt: skip
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    zn = z.asnumpy()
    assert np.isfinite(zn.astype(np.float32)).all(), "non-finite trunk output"
    assert z.dtype == dt, f"trunk output dtype {z.dtype}, expected {dt}"
    mean_block = float(np.mean(per_block))
    return {
        "n": n,
        "dtype": dtype,
        "msa_s": t1 - t0,
        "block_s": mean_block,
        "blocks_run": run_blocks,
        "blocks_total": total_blocks,
        "stack_s": mean_block * total_blocks if run_blocks < total_blocks else sum(per_block),
        "extrapolated": run_blocks < total_blocks,
        "peak_pair": peak / pair_bytes,
        "peak_gib": peak / 2**30,
        "rss_gib": _rss_gib(),
    }


def mini_row(r):
    stack = f"{r['stack_s']:.1f} s" + (
        f" (extrapolated: {r['blocks_run']} of {r['blocks_total']} blocks run)"
        if r["extrapolated"]
        else ""
    )
    return (
        f"mini trunk N={r['n']} {r['dtype']}: MSA module {r['msa_s']:.1f} s, "
        f"{r['block_s']:.1f} s per Pairformer block, {r['blocks_total']}-block stack {stack}, "
        f"total {r['msa_s'] + r['stack_s']:.1f} s; traced peak {r['peak_gib']:.2f} GiB "
        f"({r['peak_pair']:.2f}x the float32 pair tensor), peak RSS {r['rss_gib']:.2f} GiB"
    )


# ---- training step (PyTorch side) ------------------------------------------------------------
def _run_ours(script, args):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        cwd=str(REPO), env=env, check=True, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    return [float(x) for x in out.stdout.strip().splitlines()[-1].split()]


def torch_train_rows(n, c_z, c_s, blocks, ours=False):
    """Training-step rows of PyTorch (and with ``ours`` of this package, same protocol: a
    fresh one-thread subprocess per row, peak RSS growth over the step)."""
    rows = []
    sides = [("PyTorch", lambda a: _run_torch(_TORCH_TRAIN, a))]
    if ours:
        sides.insert(0, ("ours", lambda a: _run_ours(_OURS_TRAIN, a)))
    for name, run in sides:
        for ckpt in (0, 1):
            res = run((n, c_z, c_s, blocks, ckpt))
            if res is None:
                rows.append(f"{name} training step: reference not installed")
                break
            loss, grow, sec = res
            label = "none" if ckpt == 0 else "per block"
            rows.append(
                f"{name} train step N={n} c_z={c_z} blocks={blocks} blocks_per_ckpt={label}: "
                f"loss {loss:.6f}, peak RSS growth {grow:.1f} MiB, {sec:.1f} s"
            )
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", nargs="?", default="block", choices=["block", "mini", "train"])
    ap.add_argument("--n", type=int, nargs="+", default=[128, 256])
    ap.add_argument("--c-z", type=int, default=None, help="pair channels (default: the model's)")
    ap.add_argument("--c-s", type=int, default=384)
    ap.add_argument("--threads", type=int, nargs="+", default=None,
                    help="thread counts of `block` (default: 1 and this machine's default)")  # fmt: skip
    ap.add_argument("--blocks", type=int, default=None, help="Pairformer blocks to run")
    ap.add_argument("--msa", type=int, default=32, help="MSA rows of `mini`")
    ap.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--tiny", action="store_true", help="small sizes of every row kind")
    args = ap.parse_args(argv)
    rows = []
    if args.tiny:
        rows += block_rows([16], 16, 32, [1])
        for dtype in ("fp32", "bf16"):
            r = mini_trunk(24, n_msa=4, blocks=1, dtype=dtype, c_z=16)
            rows.append(mini_row(r))
        rows += torch_train_rows(8, 8, 16, 2)
    elif args.what == "block":
        threads = args.threads or sorted({1, core.get_num_threads()})
        rows += block_rows(args.n, args.c_z or 128, args.c_s, threads)
    elif args.what == "mini":
        for n in args.n:
            rows.append(mini_row(mini_trunk(n, args.msa, args.blocks, args.dtype, c_z=args.c_z)))
    else:
        rows += torch_train_rows(args.n[0], args.c_z or 128, args.c_s, args.blocks or 4, True)
    for r in rows:
        print(r, flush=True)
    return rows


if __name__ == "__main__":
    main()
