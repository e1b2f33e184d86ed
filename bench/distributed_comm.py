"""Cost of core.communication against raw mpi4py, on N processes.

    python -m diffsci.core.launch -n 2 bench/distributed_comm.py [--tiny]

Rows: ``all_reduce`` (sum, float64) of 1 to 10^6 elements, timed as the median of repeated
calls: raw ``mpi4py`` ``Allreduce`` on numpy buffers (the transport's floor), ours with the
same-call check (the default: one extra 96-byte all-gather per collective), and ours without it
(``DIFFSCI_COMM_CHECK=0``). Then ``nn.DistributedGradReducer`` on the gradients of a 20-tensor
model, one bucket per tensor vs the default 25 MB buckets.
"""

import argparse
import os
import time

import numpy as np

from diffsci import core
from diffsci.core import communication as comm
from diffsci.core import nn


def _median_time(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        comm.barrier()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def main(tiny=False):
    comm.init()
    rank, world = comm.get_rank(), comm.get_group_size()
    mpi_world = comm.management._State.world
    sizes = [1, 1000] if tiny else [1, 1000, 100_000, 1_000_000]
    reps = 5 if tiny else 50
    rows = []
    for n in sizes:
        a = np.random.default_rng(rank).standard_normal(n)
        out = np.empty_like(a)
        x = core.Tensor(a)
        raw = (
            _median_time(lambda a=a, out=out: mpi_world.Allreduce(a, out), reps)
            if mpi_world
            else 0.0
        )
        os.environ["DIFFSCI_COMM_CHECK"] = "1"
        checked = _median_time(lambda x=x: comm.all_reduce(x), reps)
        os.environ["DIFFSCI_COMM_CHECK"] = "0"
        unchecked = _median_time(lambda x=x: comm.all_reduce(x), reps)
        os.environ.pop("DIFFSCI_COMM_CHECK")
        rows.append((n, raw, checked, unchecked))
    shapes = [(256, 256), (256,)] * 10 if not tiny else [(16, 16), (16,)] * 10
    params = [
        core.Parameter(core.zeros(s, core.float64), name=f"p{i}") for i, s in enumerate(shapes)
    ]
    grads = tuple(core.Tensor(np.ones(s)) for s in shapes)
    per_tensor = nn.DistributedGradReducer(params, bucket_mb=1e-9)
    bucketed = nn.DistributedGradReducer(params)
    t_per = _median_time(lambda: per_tensor(grads), reps)
    t_bucket = _median_time(lambda: bucketed(grads), reps)
    if rank == 0:
        print(f"core.communication on {world} processes (median of {reps}; microseconds)")
        print(f"{'elements':>10} {'mpi4py':>10} {'ours':>10} {'ours,nochk':>10} {'GB/s ours':>10}")
        for n, raw, chk, unchk in rows:
            print(
                f"{n:>10d} {raw * 1e6:>10.1f} {chk * 1e6:>10.1f} {unchk * 1e6:>10.1f} "
                f"{8 * n / chk / 1e9:>10.3f}"
            )
        total = sum(int(np.prod(s)) for s in shapes)
        print(
            f"DistributedGradReducer, {len(shapes)} tensors ({total} float64): one all_reduce "
            f"per tensor {t_per * 1e3:.2f} ms, bucketed ({len(bucketed.buckets(grads))} bucket) "
            f"{t_bucket * 1e3:.2f} ms"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true")
    main(parser.parse_args().tiny)
