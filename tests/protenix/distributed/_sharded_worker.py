"""Run under ``mpiexec -n P``: the sharded Pairformer on this rank's rows.

    _sharded_worker.py equal CASE.npz OUT_DIR   # stack of the case, outputs and gradients
    _sharded_worker.py memory N C_Z OUT_DIR     # traced peak of one block at N (no-grad)

``equal``: CASE.npz (written by test_sharded_pairformer.py) holds the stack's config and
parameters (by name), s, z, the pair mask and the loss weights; each rank writes
``rank<r>.npz`` with the gathered s and z of a no-grad run, and, from one value_and_grad of
``sum(w_s s) + sum(w_z z)`` (z's local rows on each rank; the s term on rank 0 only), the
parameter gradients summed over the ranks and this rank's rows of dL/dz.

``memory``: each rank writes ``mem<r>.json`` with the traced peak (numpy allocations,
``tracemalloc``) above its inputs while one block runs on its shard, and the shard's bytes.
"""

import gc
import json
import sys
import time
import tracemalloc

import numpy as np

from diffsci import core
from diffsci.core import communication as comm
from diffsci.core import ops
from diffsci.protenix.distributed import ShardedPairformerStack, gather_rows, shard_rows
from diffsci.protenix.model.modules.pairformer import PairformerBlock, PairformerStack


def equal(case, out_dir):
    rank = comm.get_rank()
    d = np.load(case)
    cfg = json.loads(str(d["config"]))
    stack = PairformerStack(**cfg)
    stack.set_train(False)
    names = []
    for name, p in stack.parameters_and_names():
        p.set_data(core.tensor(d[f"param/{name}"]))
        names.append(name)
    s, z, mask = (core.tensor(d[k]) for k in ("s", "z", "pair_mask"))
    sharded = ShardedPairformerStack(stack, chunk_size=int(d["chunk_size"]))
    z_shard, m_shard = shard_rows(z), shard_rows(mask, axis=-2)
    with core.no_grad():
        s1, z1 = sharded(s, z_shard, m_shard)
    saved = {"s": s1.asnumpy(), "z": gather_rows(z1).asnumpy()}
    w_s, w_z = core.tensor(d["w_s"]), shard_rows(core.tensor(d["w_z"]))
    params = stack.trainable_params()

    # the s term weighs 1 on rank 0 and 0 elsewhere: the same graph on every rank, so the
    # backward passes meet the collectives' transposes in the same order
    only0 = core.tensor(np.float32(rank == 0))

    def loss(z_shard):
        s2, z2 = sharded(s, z_shard, m_shard)
        return (w_z * z2).sum() + only0 * (w_s * s2).sum()

    value, grads = core.value_and_grad(loss, (0,), params)(z_shard)
    (g_z,), g_p = grads
    saved["loss"] = comm.all_reduce(value).asnumpy()
    saved["grad/z_rows"] = g_z.asnumpy()
    for p, g in zip(params, g_p, strict=True):
        saved[f"grad/{p.name}"] = comm.all_reduce(g).asnumpy()
    np.savez(f"{out_dir}/rank{rank}.npz", **saved)


def memory(n, c_z, out_dir):
    rank, size = comm.get_rank(), comm.get_group_size()
    blk = PairformerBlock(n_heads=2, c_z=c_z, c_s=16, c_hidden_mul=c_z, c_hidden_pair_att=8,
                          no_heads_pair=2, num_intermediate_factor=4)  # fmt: skip
    blk.set_train(False)
    core.set_seed(0)
    for _, p in blk.parameters_and_names():
        p.set_data(0.1 * ops.randn(tuple(p.shape)) + (1.0 if p.ndim == 1 else 0.0))
    rng = np.random.default_rng(rank)
    z_shard = core.tensor(rng.standard_normal((n // size, n, c_z), dtype=np.float32))
    s = core.tensor(np.random.default_rng(99).standard_normal((n, 16), dtype=np.float32))
    mask = ops.ones((n // size, n))
    sharded = ShardedPairformerStack(blk)
    comm.barrier()
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    t0 = time.perf_counter()
    with core.no_grad():
        _, z1 = sharded(s, z_shard, mask)
    wall = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    assert np.isfinite(z1.asnumpy()).all()
    out = {"rank": rank, "ranks": size, "n": n, "c_z": c_z, "peak_bytes": peak,
           "shard_bytes": int(z_shard.size) * 4, "seconds": wall}  # fmt: skip
    with open(f"{out_dir}/mem{rank}.json", "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    comm.init()
    if sys.argv[1] == "equal":
        equal(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "memory":
        memory(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    else:
        raise ValueError(f"unknown mode {sys.argv[1]!r}")
