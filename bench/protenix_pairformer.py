"""Pairformer block benchmarks: block-wise inference memory/time at large N, and the plain
forward against PyTorch Protenix 2.0.0 (same shapes, random weights, one thread each).

    python -m bench.protenix_pairformer --n 1024                 # block-wise, c_z = 128
    python -m bench.protenix_pairformer --torch --n 128 256      # ours vs PyTorch, plain forward
    python -m bench.protenix_pairformer --train --n 64 --c-z 32 --c-s 64 --blocks 8
    python -m bench.protenix_pairformer --tiny                   # what a smoke test runs

Block-wise rows report the wall time of one PairformerBlock (Protenix's default sizes:
c_z = 128, c_s = 384, 16 single heads, 4 pair heads of 32, c_hidden_mul = 128) under
``no_grad`` with ``inplace_safe=True, chunk_size=--chunk``, the traced array peak above the
inputs in units of the pair tensor, and the process's peak RSS. The PyTorch rows run the
reference in a subprocess from outside the repository (``.ref/protenix-2.0.0``,
``LAYERNORM_TYPE=torch``), best of 3 after a warm-up, like ours. ``--train`` rows: one
``value_and_grad`` step of a PairformerStack (dropout 0.25, 4 single heads, other sizes
Protenix's defaults) without recompute, with ``blocks_per_ckpt=1``, and with fine-grained
recompute too: traced peak and time (the loss is the same in the three).
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
from diffsci.core import ops
from diffsci.protenix.model.modules.pairformer import PairformerBlock

REPO = pathlib.Path(__file__).resolve().parents[1]
REF = REPO / ".ref" / "protenix-2.0.0"

_TORCH = r"""
import sys, time, torch
torch.set_num_threads(1)
from protenix.model.modules.pairformer import PairformerBlock
n, c_z, c_s = (int(a) for a in sys.argv[1:4])
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


def _block(c_z, c_s):
    blk = PairformerBlock(n_heads=16, c_z=c_z, c_s=c_s)
    blk.set_train(False)
    return blk


def _inputs(n, c_z, c_s):
    rng = np.random.default_rng(0)
    s = core.tensor(rng.standard_normal((n, c_s), dtype=np.float32))
    z = core.tensor(rng.standard_normal((n, n, c_z), dtype=np.float32))
    return s, z, ops.ones((n, n))


def blockwise(n, c_z=128, c_s=384, chunk=64):
    """(seconds, traced peak / pair tensor, peak RSS GiB) of one block-wise block."""
    blk = _block(c_z, c_s)
    s, z, m = _inputs(n, c_z, c_s)
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    t = time.perf_counter()
    with core.no_grad():
        _, z1 = blk(s, z, m, inplace_safe=True, chunk_size=chunk)
    sec = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    assert np.isfinite(z1.asnumpy()).all()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return sec, peak / (n * n * c_z * 4), rss


def plain(n, c_z=128, c_s=384):
    """Best of 3 seconds of the plain (Protenix-equivalent) forward, after a warm-up."""
    blk = _block(c_z, c_s)
    s, z, m = _inputs(n, c_z, c_s)
    with core.no_grad():
        blk(s, z, m)
        ts = []
        for _ in range(3):
            t = time.perf_counter()
            blk(s, z, m)
            ts.append(time.perf_counter() - t)
    return min(ts)


def torch_plain(n, c_z=128, c_s=384):
    """PyTorch Protenix's forward seconds (subprocess), or None when it is not installed."""
    if not REF.is_dir():
        return None
    env = dict(os.environ, PYTHONPATH=str(REF), LAYERNORM_TYPE="torch", OMP_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", _TORCH, str(n), str(c_z), str(c_s)],
        cwd="/",
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    return float(out.stdout.strip().splitlines()[-1])


def train_step(n, c_z, c_s, n_blocks):
    """[(label, loss, traced peak MiB, seconds)] of one training step, three recompute modes."""
    from diffsci.protenix.model.modules.pairformer import PairformerStack

    rng = np.random.default_rng(0)
    s0 = core.tensor(rng.standard_normal((n, c_s), dtype=np.float32))
    z0 = core.tensor(rng.standard_normal((n, n, c_z), dtype=np.float32))
    m = ops.ones((n, n))
    out = []
    for label, k, fine in (("none", None, False), ("per block", 1, False), ("fine", 1, True)):
        core.set_seed(0)
        st = PairformerStack(n_blocks=n_blocks, n_heads=4, c_z=c_z, c_s=c_s, blocks_per_ckpt=k)
        st.set_fine_grained_recompute(fine)

        def loss(s, z, st=st):
            s, z = st(s, z, m)
            return (s**2).mean() + (z**2).mean()

        grad_fn = core.value_and_grad(loss, None, st.trainable_params())
        core.set_seed(7)
        gc.collect()
        tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        t = time.perf_counter()
        val, _ = grad_fn(s0, z0)
        sec = time.perf_counter() - t
        peak = (tracemalloc.get_traced_memory()[1] - base) / 2**20
        tracemalloc.stop()
        out.append((label, float(val.asnumpy()), peak, sec))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1024])
    ap.add_argument("--c-z", type=int, default=128)
    ap.add_argument("--c-s", type=int, default=384)
    ap.add_argument("--chunk", type=int, default=64)
    ap.add_argument("--torch", action="store_true", help="plain forward, ours vs PyTorch")
    ap.add_argument("--train", action="store_true", help="training step, recompute modes")
    ap.add_argument("--blocks", type=int, default=4, help="stack depth of --train")
    ap.add_argument("--tiny", action="store_true", help="N = 32, c_z = 16, c_s = 32")
    args = ap.parse_args(argv)
    if args.tiny:
        args.n, args.c_z, args.c_s, args.chunk = [32], 16, 32, 8
    rows = []
    for n in args.n:
        if args.train:
            res = train_step(n, args.c_z, args.c_s, args.blocks)
            for label, val, peak, sec in res:
                rows.append(
                    f"train step N={n} c_z={args.c_z} blocks={args.blocks} recompute={label}: "
                    f"loss {val:.6f}, peak {peak:.1f} MiB ({res[0][2] / peak:.1f}x lower), "
                    f"{sec:.1f} s"
                )
        elif args.torch:
            ours = plain(n, args.c_z, args.c_s)
            ref = torch_plain(n, args.c_z, args.c_s)
            ratio = "-" if ref is None else f"{ours / ref:.2f}"
            ref_s = "not installed" if ref is None else f"{ref:.3f}"
            rows.append(f"plain forward N={n}: ours {ours:.3f} s, PyTorch {ref_s} s, ratio {ratio}")
        else:
            sec, peak, rss = blockwise(n, args.c_z, args.c_s, args.chunk)
            rows.append(
                f"block-wise N={n} c_z={args.c_z} chunk={args.chunk}: {sec:.1f} s, "
                f"peak {peak:.2f}x the pair tensor, peak RSS {rss:.2f} GiB"
            )
    for r in rows:
        print(r)
    return rows


if __name__ == "__main__":
    main()
