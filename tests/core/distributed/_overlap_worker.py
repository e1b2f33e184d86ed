"""Run under ``mpiexec -n 2``: one data-parallel gradient step reduced with the overlapped
buckets (``DistributedGradReducer.overlap``) and with the blocking path; rank 0 writes
``overlap.json`` (argv[1]): whether the reductions agree bitwise, and how many bucket
all-reduces had started when each gradient was reported during the backward sweep."""

import json
import sys

import numpy as np

from diffsci import core
from diffsci.core import communication as comm
from diffsci.core import nn

if __name__ == "__main__":
    comm.init()
    rank = comm.get_rank()
    core.set_seed(0)  # the same initial weights on every rank
    layers = [nn.Dense(4, 16), nn.Tanh(), nn.Dense(16, 16), nn.Tanh(), nn.Dense(16, 16)]
    net = nn.SequentialCell([*layers, nn.Tanh(), nn.Dense(16, 3)])
    params = net.trainable_params()
    x = core.tensor(np.random.default_rng(rank).random((6, 4)).astype(np.float32))
    grad_fn = core.value_and_grad(lambda: (net(x) ** 2).mean(), None, params)
    reducer = nn.DistributedGradReducer(params, mean=True, bucket_mb=1e-3)  # ~1 KB buckets

    started_at_report = []
    pending = reducer.overlap()
    on_ready = pending._on_ready

    def spy(param, ct):
        on_ready(param, ct)
        started_at_report.append(len(pending.pending))

    pending._on_ready = spy  # (installed by __enter__)
    with pending:
        _, grads = grad_fn()
        n_started_in_sweep = len(pending.pending)
    overlapped = pending.finish(grads)
    blocking = reducer(grads)
    same = all(
        np.array_equal(a.asnumpy(), b.asnumpy()) for a, b in zip(overlapped, blocking, strict=True)
    )
    local = [g.asnumpy() for g in grads]
    changed = any(not np.array_equal(a.asnumpy(), b) for a, b in zip(overlapped, local))
    if rank == 0:
        with open(f"{sys.argv[1]}/overlap.json", "w") as f:
            json.dump(
                {
                    "same": bool(same),
                    "n_buckets": len(pending.buckets),
                    "n_params": len(params),
                    "started_at_report": started_at_report,
                    "n_started_in_sweep": n_started_in_sweep,
                    "changed": bool(changed),
                },
                f,
            )
