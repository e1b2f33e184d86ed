"""Run under ``mpiexec -n 2``: every collective, its gradient (eager, jit, second order), JVP
and vmap on rank-dependent float64 inputs, groups, send/recv, then mismatched collectives; each rank writes ``rank<r>.npz`` to the directory
given as argv[1]. ``test_mpi.py`` compares them with serial references."""

import sys

import numpy as np

from diffsci import core
from diffsci.core import communication as comm
from diffsci.core import ops

SHAPE = (4, 6)


def cases():
    """name -> function of this rank's x [4, 6]."""
    return {
        "sum": lambda x: comm.all_reduce(x, "sum"),
        "max": lambda x: comm.all_reduce(x, comm.ReduceOp.MAX),
        "min": lambda x: comm.all_reduce(x, "min"),
        "prod": lambda x: comm.all_reduce(x, "prod"),
        "gather0": lambda x: comm.all_gather(x, axis=0),
        "gather1": lambda x: comm.all_gather(x, axis=-1),
        "rs0": lambda x: comm.reduce_scatter(x, "sum", axis=0),
        "rs1": lambda x: comm.reduce_scatter(x, "sum", axis=1),
        "bcast": lambda x: comm.broadcast(x, src=1),
        "reduce": lambda x: comm.reduce(x, dst=0),
        "a2a": lambda x: comm.all_to_all(x, split_axis=0, concat_axis=1),
        "ms_allreduce": lambda x: ops.AllReduce(ops.ReduceOp.SUM)(x),
        "ms_allgather": lambda x: ops.AllGather()(x),
        "ms_alltoall": lambda x: ops.AlltoAll(2, 1, 0)(x),
    }


def main(out_dir):
    comm.init()
    rank, size = comm.get_rank(), comm.get_group_size()
    assert size == 2, size
    x = core.Tensor(np.random.default_rng(rank).standard_normal(SHAPE))
    v = core.Tensor(np.random.default_rng(200 + rank).standard_normal(SHAPE))
    saved = {"world": np.array([rank, size, comm.get_local_rank(), comm.get_local_rank_size()])}
    for name, f in cases().items():
        out = f(x)
        w = core.Tensor(np.random.default_rng(100 + rank).standard_normal(out.shape))

        def loss(x, f=f, w=w):
            return (w * ops.sin(f(x))).sum()

        saved[f"{name}/out"] = out.asnumpy()
        saved[f"{name}/grad"] = core.grad(loss)(x).asnumpy()
        saved[f"{name}/jit_grad"] = core.jit(core.grad(loss))(x).asnumpy()
        saved[f"{name}/jvp"] = core.jvp(f, (x,), (v,))[1].asnumpy()
        if name in ("sum", "gather0", "rs1", "a2a", "bcast"):
            hvp = core.grad(lambda x, loss=loss: (core.grad(loss)(x) * v).sum())(x)
            saved[f"{name}/hvp"] = hvp.asnumpy()
    xb = core.Tensor(np.random.default_rng(300 + rank).standard_normal((3, *SHAPE)))
    saved["vmap_gather1"] = core.vmap(lambda x: comm.all_gather(x, axis=1))(xb).asnumpy()
    saved["vmap_a2a"] = core.vmap(lambda x: comm.all_to_all(x, 1, 0), in_axes=2)(xb).asnumpy()
    # a group in reverse rank order: group rank 0 is world rank 1
    comm.create_group("reversed", [1, 0])
    saved["group_rank"] = np.array(comm.get_rank("reversed"))
    saved["group_gather"] = comm.all_gather(x, group="reversed").asnumpy()
    # dtypes MPI has no type for travel as float32 / uint8
    for dt in ("float32", "float16", "bfloat16", "int32", "complex128", "bool"):
        y = ops.astype(x > 0, dt) if dt == "bool" else ops.astype(x * 4.0, dt)
        got = comm.all_reduce(y, "max" if dt == "bool" else "sum")
        assert got.dtype == y.dtype, (got.dtype, y.dtype)
        saved[f"dtype/{dt}"] = got.asnumpy().astype(
            np.complex128 if dt == "complex128" else np.float64
        )
    # a group that only its member calls: rank 1 alone
    if rank == 1:
        comm.create_group("only1", [1])
        saved["only1"] = comm.all_reduce(x, group="only1").asnumpy()
    # point to point (eager)
    if rank == 0:
        comm.send(x * 3.0, dst=1, tag=7)
    else:
        template = core.zeros(SHAPE, core.float64)
        saved["recv"] = comm.recv(template, src=0, tag=7).asnumpy()
        assert not template.asnumpy().any(), "recv wrote into its template"
    comm.barrier()
    # mismatched collectives: the same error on every rank, caught here, and the world goes on
    try:
        if rank == 0:
            comm.all_reduce(x)
        else:
            comm.all_gather(x)
    except RuntimeError as err:
        print(f"rank {rank} caught: {err}", flush=True)
    comm.barrier()
    np.savez(f"{out_dir}/rank{rank}.npz", **saved)
    print(f"rank {rank}: done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
