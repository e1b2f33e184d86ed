"""Thread settings (core.set_num_threads, DIFFSCI_NUM_THREADS) and the threaded native kernels:
the setting reaches BLAS (as threadpoolctl sees it), scipy.fft's workers and our kernels; a
kernel's result on several threads equals its one-thread result bit for bit; a forked child
after a threaded kernel does not deadlock. No timings are asserted."""

import concurrent.futures
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.fft
import scipy.special
from hypothesis import example, given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops
from diffsci.core.backend import cc, cpu_kernels, cpu_layout, threads

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIG = 2 * cc.PARALLEL_GRAIN + 4099  # splits into >= 2 chunks; not a multiple of the alignment
needs_pool = pytest.mark.skipif(not cc.parallel(), reason="no C compiler for the native kernels")


@pytest.fixture
def restore_threads():
    saved = core.get_num_threads()
    yield
    core.set_num_threads(saved)


def _run_python(code, env=None, timeout=120):
    """Run ``code`` in a fresh interpreter at the repository root; its stdout."""
    full_env = {**os.environ, **(env or {})}
    res = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout


def test_default_env_var_and_bad_values(restore_threads, monkeypatch):
    monkeypatch.setitem(threads._state, "n", None)  # as before the first read
    monkeypatch.delenv("DIFFSCI_NUM_THREADS", raising=False)
    assert core.get_num_threads() == len(os.sched_getaffinity(0))
    for raw, want in (("2", 2), (" 5 ", 5), ("", len(os.sched_getaffinity(0)))):
        monkeypatch.setitem(threads._state, "n", None)
        monkeypatch.setenv("DIFFSCI_NUM_THREADS", raw)
        assert core.get_num_threads() == want
    monkeypatch.setitem(threads._state, "n", None)
    monkeypatch.setenv("DIFFSCI_NUM_THREADS", "many")
    with pytest.raises(ValueError, match=r"DIFFSCI_NUM_THREADS.*'many'"):
        core.get_num_threads()
    monkeypatch.setitem(threads._state, "n", 2)
    with pytest.raises(ValueError, match=r"set_num_threads.*int >= 1.*0"):
        core.set_num_threads(0)
    with pytest.raises(ValueError, match="set_num_threads"):
        core.set_num_threads(2.0)
    # set before the first import, the variable also sizes BLAS
    out = _run_python(
        "from diffsci import core; from diffsci.core.backend import threads\n"
        "print(core.get_num_threads(), set(threads.blas_threads()))",
        env={"DIFFSCI_NUM_THREADS": "3"},
    )
    assert out.split(None, 1) == ["3", "{3}\n"]


def test_set_num_threads_reaches_blas_and_fft(restore_threads, monkeypatch):
    core.set_num_threads(3)
    assert core.get_num_threads() == 3
    # once core's threaded GEMM has run, BLAS is held at one thread (core.backend.cpu_gemm)
    want = {1} if threads.blas_held() else {3}
    assert threads.blas_threads() and set(threads.blas_threads()) == want
    seen = []
    real = scipy.fft.rfftn

    def spy(*args, **kwargs):
        seen.append(kwargs.get("workers"))
        return real(*args, **kwargs)

    monkeypatch.setattr(scipy.fft, "rfftn", spy)
    x = np.random.default_rng(0).standard_normal((4, 16))
    out = core.ops.fft.rfft2(core.tensor(x))
    np.testing.assert_allclose(out.asnumpy(), np.fft.rfft2(x), rtol=1e-12, atol=1e-12)
    core.set_num_threads(1)
    core.ops.fft.rfft2(core.tensor(x))
    assert seen == [3, 1]
    assert set(threads.blas_threads()) == {1}


def _both(fn):
    """``fn()`` on one thread and on three (odd, more than this machine may have)."""
    core.set_num_threads(1)
    one = fn()
    core.set_num_threads(3)
    return one, fn()


def _assert_same(pair):
    one, many = pair
    assert one is not None and many is not None
    assert one.dtype == many.dtype and one.shape == many.shape
    np.testing.assert_array_equal(one, many)  # NaN == NaN here, and bits must match


@needs_pool
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementwise_and_row_kernels_match_one_thread(restore_threads, dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(BIG + 1) * 3).astype(dtype)[1:]  # starts mid-vector: misaligned
    g = rng.standard_normal(BIG).astype(dtype)
    x[7] = np.nan
    for name in ("erf", "gelu", "logistic"):
        _assert_same(_both(lambda name=name: getattr(cpu_kernels, name)(x)))
    _assert_same(_both(lambda: cpu_kernels.gelu_backward(g, x)))
    _assert_same(_both(lambda: cpu_kernels.tanh_backward_t(g, x, g)))
    # a transposed (non-contiguous) input goes through the threaded tiled copy first
    big = (rng.standard_normal(403 * 509 + 1) * 3).astype(dtype)
    xt = big[1 : 1 + 331 * 257].reshape(331, 257).T
    _assert_same(_both(lambda: cpu_kernels.tanh_backward(xt, xt)))
    rows = big[1:].reshape(403, 509)
    w, b = g[:509], g[509:1018]
    _assert_same(_both(lambda: cpu_kernels.softmax_last_axis(rows)))
    _assert_same(_both(lambda: cpu_kernels.layer_norm_rows(rows, 1e-5, w, b)))
    bias = rows[:1].reshape(1, 509)
    _assert_same(_both(lambda: cpu_kernels.softmax_add_last_axis(rows, bias)))


@needs_pool
@settings(max_examples=12, deadline=None)
@given(
    rows=st.integers(1, 300),
    cols=st.integers(200, 1500),
    which=st.sampled_from(["full", "row", "col", "scalar", "lead"]),
    dtype=st.sampled_from([np.float32, np.float64]),
)
@example(rows=300, cols=1001, which="col", dtype=np.float32)
@example(rows=97, cols=1499, which="row", dtype=np.float64)
def test_eager_arithmetic_equals_numpy_bit_for_bit(rows, cols, which, dtype):
    """core's add/sub/mul on large float arrays take the threaded native loop: numpy's bits,
    broadcasting included, and the engine's ops give the same."""
    rng = np.random.default_rng(rows * cols)
    x = rng.standard_normal((rows, cols)).astype(dtype)
    x[0, 0] = np.nan
    shape = {
        "full": (rows, cols),
        "row": (cols,),
        "col": (rows, 1),
        "scalar": (),
        "lead": (1, cols),
    }
    y = rng.standard_normal(shape[which]).astype(dtype)
    saved = core.get_num_threads()
    try:
        core.set_num_threads(3)
        big = x.size >= cpu_kernels.ARITH_MIN_SIZE
        for name, ufunc in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply)):
            out = cpu_kernels.arith(name, x, y)
            assert (out is not None) == big
            if big:
                np.testing.assert_array_equal(out, ufunc(x, y))
                # the broadcast operand first
                np.testing.assert_array_equal(cpu_kernels.arith(name, y, x), ufunc(y, x))
                x_view = np.ascontiguousarray(x.T).T  # x's values in a transposed layout
                np.testing.assert_array_equal(cpu_kernels.arith(name, x_view, y), ufunc(x, y))
        tx, ty = core.tensor(x), core.tensor(y)
        np.testing.assert_array_equal((tx * ty - tx + ty).asnumpy(), x * y - x + y)
    finally:
        core.set_num_threads(saved)


@needs_pool
@settings(max_examples=8, deadline=None)
@given(
    dims=st.tuples(
        st.integers(64, 150), st.integers(64, 150), st.integers(4, 24), st.integers(2, 3)
    ),
    perm=st.permutations([0, 1, 2]),
)
def test_tiled_transpose_matches_one_thread(dims, perm):
    a0, a1, a2, step = dims
    base = np.arange(a0 * a1 * a2 * step, dtype=np.float32).reshape(a0, a1, a2 * step)
    view = base[:, :, ::step].transpose(perm)  # strided and permuted
    saved = core.get_num_threads()
    try:
        one, many = _both(lambda: cpu_layout.ascontiguousarray(view))
    finally:
        core.set_num_threads(saved)
    np.testing.assert_array_equal(one, np.ascontiguousarray(view))
    np.testing.assert_array_equal(many, one)


@needs_pool
def test_fused_jit_kernels_match_one_thread(restore_threads):
    rng = np.random.default_rng(2)
    x = core.tensor(rng.standard_normal((311, 433)).astype(np.float32))
    y = core.tensor(rng.standard_normal((311, 433)).astype(np.float32))
    bias = core.tensor(rng.standard_normal(433).astype(np.float32))

    @core.jit
    def flat(x, y):  # one run: threads split the inner loop
        return ops.exp(x * 0.5) * y + ops.tanh(y) - x * x

    @core.jit
    def rows(x, bias):  # two runs (bias read once per row): threads split the rows
        return ops.tanh(x + bias) * bias - bias

    assert "fused" in flat.lower(x, y).as_text()
    assert "fused" in rows.lower(x, bias).as_text()
    _assert_same(_both(lambda: flat(x, y).asnumpy()))
    _assert_same(_both(lambda: rows(x, bias).asnumpy()))


@needs_pool
def test_jit_arithmetic_on_threads_equals_numpy(restore_threads):
    """Large add/subtract/multiply that no fusion absorbs (operands of matmuls, gradients'
    sums) run codegen's threaded loop, also into reused buffers: numpy's bits, any threads."""
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal((300, 257)).astype(np.float32) for _ in range(2))
    w = rng.standard_normal((257, 257)).astype(np.float32)

    @core.jit
    def f(a, b, w):
        s = ops.matmul(a, w) + ops.matmul(b, w)  # an add between two GEMMs: a ufunc equation
        return ops.matmul(s * s - a, w) - b  # its buffers reused in place (out=)

    source = f.lower(*map(core.tensor, (a, b, w))).source
    assert re.search(r"= u\d+\(", source), source
    for n in (1, 3):
        core.set_num_threads(n)
        s = (a @ w) + (b @ w)  # the products as numpy computes them at this thread count
        got = f(*map(core.tensor, (a, b, w))).asnumpy()
        want = (s * s - a) @ w - b
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-5 * np.abs(want).max())
    x, y = (rng.standard_normal((3, 40000)).astype(np.float32) for _ in range(2))
    out = np.empty_like(x)
    from diffsci.core.backend import numpy_backend

    run = numpy_backend.NumpyBackend().ufunc_kernel("subtract", x.shape, x.dtype)
    core.set_num_threads(3)
    np.testing.assert_array_equal(run(x, y, out=out), x - y)
    np.testing.assert_array_equal(run(x, y[:1], out=x.copy()), x - y[:1])  # broadcast row
    z = x.copy()
    np.testing.assert_array_equal(run(z, y, out=z), x - y)  # in place on an operand
    z = x.copy()
    np.testing.assert_array_equal(run(z[:, ::-1], y, out=z), x[:, ::-1] - y)  # aliased: numpy


@needs_pool
def test_kernels_called_from_several_python_threads_at_once(restore_threads):
    """ctypes releases the GIL: while one call holds the pool, the others run on their own
    thread, and every result is still the one-thread result."""
    core.set_num_threads(1)
    xs = [np.linspace(-4 + k, 4, BIG + k, dtype=np.float32) for k in range(6)]
    refs = [cpu_kernels.gelu(x) for x in xs]
    core.set_num_threads(3)
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        for _ in range(3):
            outs = list(pool.map(cpu_kernels.gelu, xs))
            for out, ref in zip(outs, refs):
                np.testing.assert_array_equal(out, ref)


@needs_pool
def test_fork_after_threaded_kernel_does_not_deadlock():
    """The pool's pthread_atfork handlers: a child forked after a threaded kernel (os.fork and
    multiprocessing's "fork") starts its own workers and gets the same results."""
    out = _run_python(
        """
        import multiprocessing, os
        import numpy as np
        from diffsci import core
        from diffsci.core.backend import cc, cpu_kernels

        core.set_num_threads(4)
        x = np.linspace(-3, 3, 1 << 20, dtype=np.float32)
        ref = cpu_kernels.gelu(x)
        print("parent workers", cc.pool_workers())

        def child():
            fresh = cc.pool_workers() == 0  # the parent's workers are gone
            ok = np.array_equal(cpu_kernels.gelu(x), ref) and cc.pool_workers() == 3
            os._exit(0 if fresh and ok else 3)

        pid = os.fork()
        if pid == 0:
            child()
        print("fork", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
        p = multiprocessing.get_context("fork").Process(target=child)
        p.start()
        p.join(60)
        print("mp", p.exitcode)
        print("parent again", cc.pool_workers(), np.array_equal(cpu_kernels.gelu(x), ref))
        """,
        timeout=90,
    )
    assert out.split("\n")[:4] == ["parent workers 3", "fork 0", "mp 0", "parent again 3 True"]


def test_numpy_fallback_ignores_threads(restore_threads):
    x = np.linspace(-2, 2, BIG, dtype=np.float64)
    core.set_num_threads(3)
    with cc.disabled():
        assert cpu_kernels.gelu(x) is None and cpu_layout.contiguous(x.reshape(-1, 5).T) is None
        out = ops.gelu(core.tensor(x)).asnumpy()
    exact = 0.5 * x * (1.0 + scipy.special.erf(x / np.sqrt(2.0)))
    np.testing.assert_allclose(out, exact, rtol=1e-14, atol=1e-15)
