"""Worker of test_distributed.py: ``mpiexec -n P python _distributed_worker.py OUT CASE...``.

CASE ``2d`` / ``3d`` / ``tfsf``: the run on P x slabs, fields gathered, monitors reduced to rank 0;
``mixed`` / ``mixed_native``: ``case_mixed`` (Mur, CPML, dispersive media, lumped port and
resistor, port and flux monitors) on the composite / native update; ``grad``: the
gradient of ``grad_loss`` (rank 0's monitors) with respect to the eps map, summed over ranks
(each rank's gradient covers its slab); ``port_grad``: the same for ``port_grad_loss`` (a
lumped port's S11 and a flux), on the native update; ``amp_grad``: the gradient of
``amp_grad_loss`` with respect to the amplitude of a port and two plane waves, summed over
ranks; ``bad``: 2 ranks on 25 x cells. Each rank
writes ``OUT/<CASE>_rank<r>.npz`` (or ``.txt``).
"""

import pathlib
import sys

import numpy as np

from diffsci import core
import diffsci.core.native as native
from diffsci.core import communication as comm
from diffsci.mindelec import fdtd
from diffsci.mindelec.fdtd.distributed import DistributedSimulation

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


def port_grad(case):
    def loss(eps):
        grid, materials, kw, steps = cases.case_port_grad(eps)
        sim = DistributedSimulation(grid, materials, **kw)
        # the native update and its native adjoint, where a C compiler is
        assert sim.native == {"h": True, "e": True} or not native.available(), sim.native
        return cases.port_grad_loss(sim.run(steps, all_ranks=True)[1], grid.dt)

    eps0 = cases.port_grad_eps0()
    value = loss(eps0)
    # every rank holds the loss (all_ranks): core.grad differentiates the sum of the P copies
    g = comm.all_reduce(core.grad(loss)(eps0)) / comm.get_group_size()
    np.savez(out / f"{case}_rank{rank}.npz", g=g.asnumpy(), loss=value.asnumpy())


def amp_grad(case):
    def loss(amp):
        grid, kw, steps = cases.case_amp_grad(amp)
        return cases.amp_grad_loss(DistributedSimulation(grid, **kw).run(steps)[1])

    amp = core.tensor(1.3, dtype=core.float64)
    # a replicated parameter: each rank's gradient holds its slab's uses of it; sum them
    g = comm.all_reduce(core.grad(loss)(amp))
    np.savez(out / f"{case}_rank{rank}.npz", g=g.asnumpy(), loss=loss(amp).asnumpy())


def mixed(case):
    grid, materials, kw, media, steps = cases.case_mixed()
    native = case == "mixed_native"
    sim = DistributedSimulation(grid, materials, dispersive=media, native=native, **kw)
    assert sim.native == {"h": native, "e": native} or not native, sim.native
    state, results = sim.run(steps)
    fields = {k: v.asnumpy() for k, v in sim.gather(state).items()}
    res = {f"m_{k}": v.asnumpy() for k, v in results.items()}
    np.savez(out / f"{case}_rank{rank}.npz", slab=[sim.start, sim.stop], **fields, **res)


def run(case):
    make = {"2d": cases.case_2d, "3d": cases.case_3d, "tfsf": cases.case_tfsf}[case]
    grid, materials, kw, steps = make()
    sim = DistributedSimulation(grid, materials, **kw)
    state, results = sim.run(steps)
    fields = {k: v.asnumpy() for k, v in sim.gather(state).items()}
    res = {f"m_{k}": v.asnumpy() for k, v in results.items()}
    np.savez(out / f"{case}_rank{rank}.npz", slab=[sim.start, sim.stop], **fields, **res)


for name in sys.argv[2:]:
    workers = {"bad": bad, "grad": grad, "port_grad": port_grad, "amp_grad": amp_grad}
    workers.update(mixed=mixed, mixed_native=mixed)
    workers.get(name, run)(name)
