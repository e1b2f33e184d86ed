"""Data-parallel training: the same script on 1 process or on N.

    python examples/distributed/data_parallel.py                  # one process
    python -m diffsci.core.launch -n 2 examples/distributed/data_parallel.py
    mpiexec -n 2 python examples/distributed/data_parallel.py    # the same

A float64 MLP regresses ``y = sin(pi x0) x1`` with Adam. Each rank reads shard ``rank`` of the
data (``num_shards=get_group_size(), shard_id=get_rank()``: every N-th sample) in batches of
``global_batch / N``; ``set_auto_parallel_context(parallel_mode="data_parallel",
gradients_mean=True)`` makes ``nn.TrainOneStepCell`` average the gradients over the ranks
(``nn.DistributedGradReducer``: bucketed all-reduce), so every step is the step a single
process takes on the global batch: the losses (each rank's loss averaged over the ranks) equal
the one-process run's to round-off. Rank 0 writes the checkpoint; it loads on any world size.
"""

import json
import os
import time

import numpy as np

from diffsci import core
from diffsci import datasets
from diffsci.core import communication as comm
from diffsci.core.atomic import atomic_write
from diffsci.core import nn
from diffsci.scripts import ArgumentParser


def make_data(n_samples, seed=0):
    """``x [n, 2]`` uniform in [-1, 1]^2 and ``y [n, 1] = sin(pi x0) x1`` (float64)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, (n_samples, 2))
    return x, np.sin(np.pi * x[:, :1]) * x[:, 1:]


def main(
    steps=300, global_batch=16, n_samples=64, lr=3e-2, graph=False, out=None, ckpt=None, hidden=16
):
    """Train; returns ``{"losses": [global loss per step], "world": N, "seconds": ...}``.

    Args:
        steps: optimizer steps (the data repeats, unshuffled, every ``n_samples/global_batch``).
        global_batch: samples per step over all ranks (a multiple of the world size).
        graph: compile the training step (``set_context(mode=GRAPH_MODE)``).
        out: a JSON file rank 0 writes the result to.
        ckpt: a checkpoint path rank 0 writes at the end (every rank checks it reloads).
        hidden: width of the hidden layer.
    """
    comm.init()
    rank, world = comm.get_rank(), comm.get_group_size()
    if global_batch % world:
        raise ValueError(f"global_batch={global_batch} is not a multiple of the world size {world}")
    core.reset_auto_parallel_context()
    core.set_auto_parallel_context(
        parallel_mode=core.ParallelMode.DATA_PARALLEL,
        gradients_mean=True,
        parameter_broadcast=True,
    )
    core.set_context(mode=core.GRAPH_MODE if graph else core.PYNATIVE_MODE)
    x, y = make_data(n_samples)
    data = datasets.NumpySlicesDataset(
        {"x": x, "y": y}, shuffle=False, num_shards=world, shard_id=rank
    ).batch(global_batch // world, drop_remainder=True)
    core.set_seed(0)
    f64 = core.float64
    net = nn.SequentialCell(
        nn.Dense(2, hidden, dtype=f64), nn.Tanh(), nn.Dense(hidden, 1, dtype=f64)
    )
    opt = nn.Adam(net.trainable_params(), learning_rate=lr)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    losses, start = [], time.perf_counter()
    while len(losses) < steps:
        for xb, yb in data.create_tuple_iterator(num_epochs=1):
            local = step(xb, yb)  # this rank's mean loss over its shard of the batch
            losses.append(float(comm.all_reduce(local).asnumpy()) / world)
            if len(losses) == steps:
                break
    seconds = time.perf_counter() - start
    result = {"losses": losses, "world": world, "seconds": seconds}
    if ckpt is not None:
        core.save_checkpoint(net, ckpt)  # rank 0 writes, every rank returns when it is there
        loaded = core.load_checkpoint(ckpt)
        for p in net.trainable_params():
            np.testing.assert_array_equal(loaded[p.name].asnumpy(), p.asnumpy())
    if out is not None and rank == 0:
        atomic_write(out, json.dumps(result))
    core.set_context(mode=core.PYNATIVE_MODE)
    core.reset_auto_parallel_context()
    if rank == 0:
        print(
            f"world {world}: {steps} steps in {seconds:.2f} s, loss {losses[0]:.6f} -> "
            f"{losses[-1]:.6f}"
        )
    return result


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--global-batch", type=int, default=16)
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--graph", action="store_true")
    parser.add_argument("--out", help="a JSON file rank 0 writes the result to")
    parser.add_argument("--ckpt", help="a checkpoint file rank 0 writes at the end")
    parser.add_argument("--tiny", action="store_true", help="4 steps")
    a = parser.parse_args()
    main(
        4 if a.tiny else a.steps,
        a.global_batch,
        a.samples,
        graph=a.graph,
        out=a.out,
        ckpt=a.ckpt,
        hidden=a.hidden,
    )
