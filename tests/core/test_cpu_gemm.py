"""The pool-threaded GEMM (core.backend.cpu_gemm): equal to numpy's matmul (another
implementation) for every dtype, operand layout, batch broadcast and panel split; BLAS held
at one thread once it has run, and given back to large LAPACK calls. No timings asserted."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops
from diffsci.core.backend import cc, cpu_gemm, threads

needs_pool = pytest.mark.skipif(not cc.parallel(), reason="no C compiler for the native kernels")
RNG = np.random.default_rng(0)
TOL = {np.float32: 2e-5, np.float64: 1e-12, np.complex64: 2e-5, np.complex128: 1e-12}


@pytest.fixture
def restore_threads():
    saved = core.get_num_threads()
    yield
    core.set_num_threads(saved)


def _array(shape, dtype, transposed=False):
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    a = a.astype(dtype)
    if transposed:  # same values, the two last axes column-contiguous
        a = np.ascontiguousarray(np.swapaxes(a, -1, -2)).swapaxes(-1, -2)
    return a


CASES = [
    # (x shape, y shape, x transposed, y transposed)
    ((300, 70), (70, 90), False, False),  # cut along m (rows)
    ((40, 70), (70, 300), False, True),  # cut along n (columns), y column-contiguous
    ((64, 900), (900, 48), True, False),  # long k, x column-contiguous
    ((7, 33, 40), (7, 40, 29), True, True),  # a batch: whole matrices per panel
    ((33, 40), (5, 40, 61), False, False),  # x broadcast over y's batch
    ((3, 1, 37, 20), (4, 20, 50), False, False),  # batch axes broadcast both ways
    ((2, 300, 24), (24, 17), False, False),  # [..., M, K] @ [K, N]: one folded GEMM
    ((1, 50), (50, 400), False, False),  # one row
    ((256, 1), (6, 1, 300), False, False),  # k = 1: an outer product per batch entry
]


@needs_pool
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_numpy(monkeypatch, dtype, case):
    monkeypatch.setattr(cpu_gemm, "PARALLEL_MACS", 1)  # every case takes the pool
    sx, sy, tx, ty = CASES[case]
    x, y = _array(sx, dtype, tx), _array(sy, dtype, ty)
    want = np.matmul(x, y)
    for n_threads in (2, 3, 5):
        got = cpu_gemm.matmul(x, y, n_threads)
        assert got is not None and got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype] * np.abs(want).max())


@needs_pool
def test_falls_back_where_it_does_not_apply():
    x, y = _array((200, 200), np.float32), _array((200, 200), np.float32)
    assert cpu_gemm.matmul(x, y, 1) is None  # one thread: numpy
    assert cpu_gemm.matmul(x[:4, :4], y[:4, :4], 4) is None  # small: numpy
    assert cpu_gemm.matmul(x, y.astype(np.float64), 4) is None  # mixed dtypes
    assert cpu_gemm.matmul(x.astype(np.int64), y.astype(np.int64), 4) is None
    assert cpu_gemm.matmul(x[::2, ::2], y[:100, :100], 4) is None  # neither axis contiguous


@needs_pool
def test_op_matmul_on_threads_and_blas_held(restore_threads):
    core.set_num_threads(3)
    x, y = _array((4, 256, 96), np.float32), _array((4, 96, 128), np.float32)
    got = ops.matmul(core.tensor(x), core.tensor(y)).asnumpy()
    np.testing.assert_allclose(got, x @ y, rtol=2e-5, atol=2e-5 * np.abs(x @ y).max())
    assert threads.blas_held() and set(threads.blas_threads()) == {1}
    # gradients go through the same kernel
    gx = core.grad(lambda a: ops.matmul(a, core.tensor(y)).sum())(core.tensor(x)).asnumpy()
    want = np.broadcast_to(y.sum(-1)[:, None, :], x.shape)
    np.testing.assert_allclose(gx, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())
    # a large LAPACK call gets the BLAS threads back for its duration only
    seen = []
    big = np.eye(1024) * 2.0
    from diffsci.core.backend.linalg import lapack_call

    lapack_call("inv", lambda a: seen.append(set(threads.blas_threads())) or np.linalg.inv(a), big)
    assert seen == [{3}] and set(threads.blas_threads()) == {1}
