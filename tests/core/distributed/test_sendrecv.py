"""``core.communication.sendrecv`` and ``halo_exchange`` (the halo exchanges of domain decomposition) on two MPI
processes: values, the gradient (eager and under ``core.jit``) and a JVP against the same
computation written serially with both ranks' arrays in this process. Skipped, with the reason,
only where MPI cannot start."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops

from .test_mpi import MPIEXEC, WHY, _ok, mpirun

pytestmark = pytest.mark.skipif(MPIEXEC is None, reason=f"MPI cannot start: {WHY}")


def test_sendrecv_two_ranks(tmp_path):
    _ok(mpirun("_sendrecv_worker.py", tmp_path, comm_timeout=30))
    got = [dict(np.load(tmp_path / f"rank{r}.npz")) for r in range(2)]
    xs = [np.random.default_rng(10 + r).standard_normal((3, 4)) for r in range(2)]
    ws = [np.random.default_rng(20 + r).standard_normal((3, 4)) for r in range(2)]
    # ring of two: each rank receives the other's x; open ends: rank 0 gets 2 x_1, rank 1 zeros
    np.testing.assert_array_equal(got[0]["y"], xs[1])
    np.testing.assert_array_equal(got[1]["y"], xs[0])
    np.testing.assert_array_equal(got[0]["z"], 2 * xs[1])
    np.testing.assert_array_equal(got[1]["z"], 0 * xs[1])
    # halo_exchange: row 0 from prev (its 3 x[2:]), row 1 from next (its x[:1]); zeros at ends
    np.testing.assert_array_equal(got[0]["h"], np.stack([0 * xs[0][:1], xs[1][:1]]))
    np.testing.assert_array_equal(got[1]["h"], np.stack([3 * xs[0][2:], 0 * xs[0][:1]]))

    def total(x):  # x [2, 3, 4]: the sum over ranks of the per-rank losses
        y = [x[1], x[0]]
        z = [2.0 * x[1], ops.zeros_like(x[0])]
        zero = ops.zeros_like(x[0][:1])
        h = [ops.concat([zero, x[1][:1]], 0), ops.concat([3.0 * x[0][2:], zero], 0)]
        return sum(
            (core.Tensor(ws[r]) * ops.sin(y[r]) * x[r]).sum()
            + (z[r] * z[r]).sum()
            + (ops.sin(h[r]) * core.Tensor(ws[r][:2])).sum()
            for r in range(2)
        )

    want = core.grad(total)(core.Tensor(np.stack(xs))).asnumpy()
    for r in range(2):
        np.testing.assert_allclose(got[r]["g"], want[r], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got[r]["gj"], want[r], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got[0]["t"], ws[1])  # the JVP is the same exchange
    np.testing.assert_array_equal(got[1]["t"], ws[0])
