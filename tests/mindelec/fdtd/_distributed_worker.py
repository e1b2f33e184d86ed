"""Worker of test_distributed.py: ``mpiexec -n P python _distributed_worker.py OUT CASE...``.

CASE ``2d`` / ``3d``: the run on P x slabs, fields gathered, monitors reduced to rank 0;
``grad``: the gradient of ``grad_loss`` (rank 0's monitors) with respect to the eps map, summed
over ranks (each rank's gradient covers its slab); ``bad``: 2 ranks on 25 x cells. Each rank
writes ``OUT/<CASE>_rank<r>.npz`` (or ``.txt``).
"""

import pathlib
import sys

import numpy as np

import core
from core import communication as comm
from mindelec import fdtd
from mindelec.fdtd.distributed import DistributedSimulation

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _distributed_cases as cases

out = pathlib.Path(sys.argv[1])
comm.init()
rank = comm.get_rank()


def bad(case):
    try:
        DistributedSimulation(fdtd.Grid((25, 8), 1e-3))
        message = "no error"
    except ValueError as exc:
        message = str(exc)
    (out / f"{case}_rank{rank}.txt").write_text(message)


def grad(case):
    def loss(eps):
        grid, materials, kw, steps = cases.case_grad(eps)
        return cases.grad_loss(DistributedSimulation(grid, materials, **kw).run(steps)[1])

    eps0 = cases.grad_eps0()
    value = loss(eps0)
    g = comm.all_reduce(core.grad(loss)(eps0))
    np.savez(out / f"{case}_rank{rank}.npz", g=g.asnumpy(), loss=value.asnumpy())


def run(case):
    grid, materials, kw, steps = cases.case_2d() if case == "2d" else cases.case_3d()
    sim = DistributedSimulation(grid, materials, **kw)
    state, results = sim.run(steps)
    fields = {k: v.asnumpy() for k, v in sim.gather(state).items()}
    res = {f"m_{k}": v.asnumpy() for k, v in results.items()}
    np.savez(out / f"{case}_rank{rank}.npz", slab=[sim.start, sim.stop], **fields, **res)


for name in sys.argv[2:]:
    {"bad": bad, "grad": grad}.get(name, run)(name)
