"""Worker of test_distributed.py, run as ``mpiexec -n P python _distributed_worker.py OUT CASE...``.

CASE ``sod`` / ``riemann2d``: the CFL-adaptive run (jit) on P slabs, gathered; ``grad``: the
gradient of ``sum_r sum(w_r * sin(u_r(T)))`` (3 fixed RK3 steps of Sod) with respect to each
rank's initial slab; ``bad31`` / ``bad4``: a world size that does not divide 31 cells, slabs of
2 cells under a 3-cell halo. Each rank writes ``OUT/<CASE>_rank<r>.npz`` (or ``.txt``).
"""

import pathlib
import sys

import numpy as np

from diffsci import core
from diffsci.core import communication as comm
from diffsci.mindflow.cfd.distributed import DistributedSimulator

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _distributed_cases as cases

out = pathlib.Path(sys.argv[1])
comm.init()
rank = comm.get_rank()


def run_case(case):
    if case.startswith("bad"):
        bad(case)
    elif case == "grad":
        grad(case)
    else:
        run(case)


def bad(case):
    config = cases.sod_config(nx=31 if case == "bad31" else 4)
    try:
        DistributedSimulator(config)
        message = "no error"
    except ValueError as exc:
        message = str(exc)
    (out / f"{case}_rank{rank}.txt").write_text(message)


def grad(case):
    config = cases.sod_config(nx=32)
    dsim = DistributedSimulator(config)
    u0 = dsim.scatter(cases.sod_state(dsim.global_simulator.mesh_info, dsim.material))
    w = dsim.scatter(cases.weights((5, 32, 1, 1)))

    def loss(u):
        return (w * core.ops.sin(dsim.rollout(u, 2e-3, 3))).sum()

    g = core.grad(loss)(u0)
    gj = core.jit(core.grad(loss))(u0)
    np.savez(out / f"{case}_rank{rank}.npz", g=dsim.gather(g).asnumpy(),
             gj=dsim.gather(gj).asnumpy())  # fmt: skip


def run(case):
    make_config, make_state = cases.CASES[case]
    dsim = DistributedSimulator(make_config())
    u = dsim.scatter(make_state(dsim.global_simulator.mesh_info, dsim.material))
    u = dsim.run(u)
    np.savez(out / f"{case}_rank{rank}.npz", u=dsim.gather(u).asnumpy(),
             steps=dsim.last_runtime.step, slab=[dsim.start, dsim.stop])  # fmt: skip


for name in sys.argv[2:]:
    run_case(name)
