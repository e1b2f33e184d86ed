"""Pair-axis sharding of the Pairformer (``protenix.distributed``): per-rank memory of one
PairformerBlock on 1 and on P MPI ranks, and the sequence length that fits per GiB.

    python -m bench.protenix_sharded --n 1024 2048 --ranks 1 2      # c_z = 16 (default)
    python -m bench.protenix_sharded --n 512 --c-z 128 --ranks 1 2  # Protenix's c_z
    python -m bench.protenix_sharded --tiny                         # what the smoke test runs

For each (ranks, N) the script starts ``mpiexec -n ranks`` on itself (``--worker``); every
rank builds the block (random weights, the same on every rank; ``--heads`` single heads, 4
pair heads of 8 channels unless ``--pair-heads``; ``c_hidden_mul = c_z``), its rows of a
random z ``[N / P, N, c_z]`` (float32) and runs ``sharded_pairformer_block`` once under
``core.no_grad``. Reported per rank (the largest over the ranks):

- ``peak``: the traced peak of numpy allocations above the inputs (``tracemalloc``);
- ``resident``: peak + the rank's inputs (z shard, its mask rows, s): the memory the block
  needs on that rank;
- ``x 1 rank``: resident / resident on 1 rank at the same N;
- ``N per GiB``: the N at which ``resident`` would be 1 GiB, from this row's measurement
  (``resident`` grows as N^2 at fixed c_z and P: ``N sqrt(1 GiB / resident)``);
- ``RSS``: the process's peak resident set (``ru_maxrss``: includes the interpreter, the
  libraries and the MPI buffers; the largest over the ranks), and the block's wall time.

Wall times are on this machine's cores shared with other jobs: compare memory, not time.
"""

import argparse
import gc
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
GIB = 2**30
MIB = 2**20


def worker(n, c_z, heads, pair_heads, out):
    from diffsci import core
    from diffsci.core import communication as comm
    from diffsci.core import ops
    from diffsci.protenix.distributed import sharded_pairformer_block
    from diffsci.protenix.model.modules.pairformer import PairformerBlock

    comm.init()
    rank, size = comm.get_rank(), comm.get_group_size()
    c_s = 32
    blk = PairformerBlock(n_heads=heads, c_z=c_z, c_s=c_s, c_hidden_mul=c_z, c_hidden_pair_att=8,
                          no_heads_pair=pair_heads)  # fmt: skip
    blk.set_train(False)
    core.set_seed(0)
    for _, p in blk.parameters_and_names():
        p.set_data(0.1 * ops.randn(tuple(p.shape)) + (1.0 if p.ndim == 1 else 0.0))
    rng = np.random.default_rng(rank)
    z = core.tensor(rng.standard_normal((n // size, n, c_z), dtype=np.float32))
    s = core.tensor(np.random.default_rng(99).standard_normal((n, c_s), dtype=np.float32))
    mask = ops.ones((n // size, n))
    inputs = (z.size + s.size + mask.size) * 4
    comm.barrier()
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    t0 = time.perf_counter()
    with core.no_grad():
        _, z1 = sharded_pairformer_block(blk, s, z, mask)
    wall = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    if not np.isfinite(z1.asnumpy()).all():
        raise RuntimeError(f"rank {rank}: non-finite z at N={n}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    row = {"peak": peak, "inputs": inputs, "rss": rss, "seconds": wall}
    rows = comm.all_gather(core.tensor(np.array([list(row.values())], dtype=np.float64)))
    if rank == 0:
        worst = rows.asnumpy().max(axis=0)
        pathlib.Path(out).write_text(json.dumps(dict(zip(row, worst.tolist(), strict=True))))


def measure(ranks, n, c_z, heads, pair_heads, timeout):
    from diffsci.core.launch import find_mpiexec

    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "row.json"
        cmd = [find_mpiexec(), "-n", str(ranks), sys.executable, "-m", "bench.protenix_sharded",
               "--worker", "--n", str(n), "--c-z", str(c_z), "--heads", str(heads),
               "--pair-heads", str(pair_heads), "--out", str(out)]  # fmt: skip
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
        env.update(DIFFSCI_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        env.setdefault("DIFFSCI_COMM_TIMEOUT", str(timeout))
        proc = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True,
                              timeout=timeout)  # fmt: skip
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}")
        return json.loads(out.read_text())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1024, 2048])
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--c-z", type=int, default=16)
    ap.add_argument("--heads", type=int, default=4, help="single-track heads")
    ap.add_argument("--pair-heads", type=int, default=4, help="triangle-attention heads")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per mpiexec run")
    ap.add_argument("--tiny", action="store_true", help="N = 64, c_z = 8 (a smoke test)")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args.n[0], args.c_z, args.heads, args.pair_heads, args.out)
    if args.tiny:
        args.n, args.c_z, args.heads, args.pair_heads = [64], 8, 2, 2
    rows = []
    print(f"PairformerBlock, c_z = {args.c_z}, {args.heads} single heads, {args.pair_heads} pair "
          f"heads, float32, no-grad; per rank (largest over the ranks)")  # fmt: skip
    print(
        "| N | ranks | pair tensor | peak (x shard) | resident | x 1 rank | N per GiB | RSS | s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    one = {}
    for n in args.n:
        for p in args.ranks:
            r = measure(p, n, args.c_z, args.heads, args.pair_heads, args.timeout)
            pair = n * n * args.c_z * 4
            resident = r["peak"] + r["inputs"]
            if p == 1:
                one[n] = resident
            rel = f"{resident / one[n]:.2f}" if n in one else "-"
            per_gib = n * np.sqrt(GIB / resident)
            row = {"n": n, "ranks": p, "c_z": args.c_z, "pair_bytes": pair, **r,
                   "resident": resident, "n_per_gib": per_gib}  # fmt: skip
            rows.append(row)
            print(f"| {n} | {p} | {pair / MIB:.1f} MiB | {r['peak'] / MIB:.1f} MiB "
                  f"({r['peak'] * p / pair:.2f}) | {resident / MIB:.1f} MiB | {rel} | "
                  f"{per_gib:.0f} | {r['rss'] / MIB:.0f} MiB | {r['seconds']:.1f} |",
                  flush=True)  # fmt: skip
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    return rows


if __name__ == "__main__":
    main()
