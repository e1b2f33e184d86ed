"""``mindflow.cfd.distributed``: the x-slab decomposition on two MPI ranks against the serial
``Simulator`` (run here, in this process): the CFL-adaptive Sod, periodic Sod (a ring of
ranks) and 2D Riemann runs (same steps, same cells to round-off), the gradient through three RK3 steps (eager and jitted), and
the error on every rank for a world size that does not divide the grid or leaves slabs
thinner than the halo. Skipped, with the reason, only where MPI cannot start.
"""

import pathlib

import numpy as np
import pytest

from diffsci import core
from diffsci.mindflow.cfd import Simulator
from diffsci.mindflow.cfd.distributed import DistributedSimulator, slab_bounds

from ... import _mpi
from . import _distributed_cases as cases

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]


MPIEXEC, needs_mpi = _mpi.MPIEXEC, _mpi.needs_mpi


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    """Run every case of the worker under ``mpiexec -n 2``; returns the output folder."""
    out = tmp_path_factory.mktemp("cfd_distributed")
    cases_ = ("sod", "riemann2d", "periodic", "grad", "bad31", "bad4")
    _mpi.mpirun(HERE / "_distributed_worker.py", out, *cases_, wall=300, check=True)
    return out


def _serial_run(case):
    make_config, make_state = cases.CASES[case]
    sim = Simulator(make_config())
    u = sim.run(make_state(sim.mesh_info, sim.material), progress=False)
    return u.asnumpy(), sim.last_runtime.step


@needs_mpi
@pytest.mark.parametrize("case", ["sod", "riemann2d", "periodic"])
def test_two_ranks_equal_serial(launched, case):
    want, steps = _serial_run(case)
    assert steps >= 3
    for r in range(2):
        got = np.load(launched / f"{case}_rank{r}.npz")
        assert int(got["steps"]) == steps  # the global CFL step: the same step sequence
        assert list(got["slab"]) == [r * want.shape[1] // 2, (r + 1) * want.shape[1] // 2]
        np.testing.assert_allclose(got["u"], want, rtol=1e-13, atol=1e-13)
    # the 2D case really moved across the cut (x = 1/2 is the slab boundary)
    assert np.abs(want - _initial(case)).max() > 1e-2


def _initial(case):
    make_config, make_state = cases.CASES[case]
    sim = Simulator(make_config())
    return make_state(sim.mesh_info, sim.material).asnumpy()


@needs_mpi
def test_gradient_two_ranks_equal_serial(launched):
    sim = Simulator(cases.sod_config(nx=32))
    u0 = cases.sod_state(sim.mesh_info, sim.material)
    w = cases.weights((5, 32, 1, 1))

    def loss(u):
        return (w * core.ops.sin(sim.rollout(u, 2e-3, 3))).sum()

    want = core.grad(loss)(u0).asnumpy()
    assert np.abs(want[:, 12:20]).max() > 1e-3  # cotangents crossed the cut at cell 16
    for r in range(2):
        got = np.load(launched / f"grad_rank{r}.npz")
        np.testing.assert_allclose(got["g"], want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got["gj"], want, rtol=1e-10, atol=1e-12)


@needs_mpi
@pytest.mark.parametrize(
    ("case", "words"), [("bad31", "do not divide the 31 cells"), ("bad4", "thinner than the halo")]
)
def test_bad_world_size_errors_on_every_rank(launched, case, words):
    for r in range(2):
        assert words in (launched / f"{case}_rank{r}.txt").read_text()


def test_slab_bounds_and_world_of_one():
    assert slab_bounds(12, 3, 2, 3) == (8, 12)
    with pytest.raises(ValueError, match="5 ranks do not divide the 12 cells"):
        slab_bounds(12, 5, 0, 3)
    with pytest.raises(ValueError, match=r"slabs of 2 cells.*halo of 3"):
        slab_bounds(12, 6, 0, 3)
    # a plain process is a world of one: the distributed simulator is the serial one
    config = cases.sod_config(nx=16, end_time=0.02)
    dsim = DistributedSimulator(config)
    sim = Simulator(cases.sod_config(nx=16, end_time=0.02))
    u0 = cases.sod_state(sim.mesh_info, sim.material)
    np.testing.assert_allclose(
        dsim.gather(dsim.run(dsim.scatter(u0), jit=False)).asnumpy(),
        sim.run(u0, jit=False, progress=False).asnumpy(),
        rtol=1e-14, atol=1e-14,
    )  # fmt: skip
