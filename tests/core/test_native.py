"""Native CPU kernels (core.backend.cc / cpu_kernels): values against scipy in float64, the
numpy fallback when no compiler is usable, and the on-disk cache (atomic, reused, errors)."""

import os

import numpy as np
import pytest
import scipy.special as sp

from diffsci.core import ops
from diffsci.core import tensor as T
from diffsci.core.backend import cc, cpu_kernels
from diffsci.core.prims import elementwise as E

needs_cc = pytest.mark.skipif(not cc.available(), reason="no working C compiler on this machine")


def _gelu_ref(x):
    x = x.astype(np.float64)
    return 0.5 * x * (1.0 + sp.erf(x / np.sqrt(2.0)))


def _gelu_grad_ref(g, x):
    x = x.astype(np.float64)
    cdf = 0.5 * (1.0 + sp.erf(x / np.sqrt(2.0)))
    return g.astype(np.float64) * (cdf + x * np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi))


def _inputs(dtype, n=5000):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(n) * 3.0).astype(dtype)
    x[:6] = [0.0, -0.0, 1e-30, -1e-30, 12.0, -12.0]
    return x


@needs_cc
@pytest.mark.parametrize("dtype, tol", [(np.float32, 4e-7), (np.float64, 1e-15)])
def test_native_erf_gelu_and_gelu_backward_match_scipy(dtype, tol):
    x = _inputs(dtype)
    g = np.random.default_rng(2).standard_normal(x.shape).astype(dtype)
    np.testing.assert_allclose(cpu_kernels.erf(x), sp.erf(x.astype(np.float64)), rtol=0, atol=tol)
    ref = _gelu_ref(x)
    out = cpu_kernels.gelu(x)
    assert out.dtype == dtype and out.shape == x.shape
    np.testing.assert_allclose(out, ref, rtol=4 * tol, atol=4 * tol)
    back = cpu_kernels.gelu_backward(g, x)
    np.testing.assert_allclose(back, _gelu_grad_ref(g, x), rtol=8 * tol, atol=8 * tol)


@needs_cc
def test_native_kernels_propagate_nan_and_saturate_at_infinity():
    x = np.array([np.nan, np.inf, -np.inf, 5.0] * 100, np.float32)
    e = cpu_kernels.erf(x)
    assert np.isnan(e[0]) and e[1] == 1.0 and e[2] == -1.0
    gl = cpu_kernels.gelu(x)
    assert np.isnan(gl[0]) and gl[1] == np.inf


@needs_cc
def test_native_kernels_take_strided_inputs_and_refuse_what_they_do_not_handle():
    x = _inputs(np.float32, 4000).reshape(40, 100)[:, ::2]  # not contiguous
    np.testing.assert_allclose(cpu_kernels.gelu(x), _gelu_ref(x), atol=2e-6, rtol=2e-6)
    assert cpu_kernels.gelu(x.astype(np.float16)) is None  # callers convert
    assert (
        cpu_kernels.gelu_backward(np.ones((3, 1), np.float32), np.ones((3, 4), np.float32)) is None
    )


def test_gelu_primitive_agrees_on_native_and_numpy_paths(monkeypatch):
    x = _inputs(np.float32, 20000)
    g = np.random.default_rng(3).standard_normal(x.shape).astype(np.float32)
    native_out = E.gelu.impl(np, x)
    native_back = E.gelu_backward.impl(np, g, x)
    monkeypatch.setitem(cc._state, "compiler", None)  # as on a machine without a compiler
    assert cpu_kernels.gelu(x) is None
    numpy_out = E.gelu.impl(np, x)
    numpy_back = E.gelu_backward.impl(np, g, x)
    for out, back in ((native_out, native_back), (numpy_out, numpy_back)):
        np.testing.assert_allclose(out, _gelu_ref(x), atol=2e-6, rtol=2e-6)
        np.testing.assert_allclose(back, _gelu_grad_ref(g, x), atol=4e-6, rtol=4e-6)
    big = T(x.reshape(100, 200))
    np.testing.assert_allclose(ops.gelu(big).asnumpy().ravel(), _gelu_ref(x), atol=2e-6, rtol=2e-6)


@needs_cc
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_native_tanh_backward_is_bit_identical_to_numpy(dtype):
    rng = np.random.default_rng(4)
    t = np.tanh(rng.standard_normal(3000) * 2).astype(dtype)
    g = rng.standard_normal(3000).astype(dtype)
    t[:3] = [1.0, -1.0, np.nan]
    out = cpu_kernels.tanh_backward(g, t)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, g * (1 - t * t))
    np.testing.assert_array_equal(E.tanh_backward.impl(np, g, t), out)
    c = rng.standard_normal(3000).astype(dtype)
    out_t = cpu_kernels.tanh_backward_t(c, g, t)
    np.testing.assert_array_equal(out_t, (-2 * c) * g * t)
    with cc.disabled():
        np.testing.assert_array_equal(E.tanh_backward_t.impl(np, c, g, t), out_t)


@needs_cc
def test_kernel_cache_is_written_once_reused_and_keyed_by_source(tmp_path, monkeypatch):
    monkeypatch.setenv("DIFFSCI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cc, "_libraries", {})
    src = "int diffsci_test_answer(void) { return 7; }\n"
    lib = cc.load(src)
    assert lib.diffsci_test_answer() == 7
    files = sorted(os.listdir(tmp_path / "kernels"))
    assert len(files) == 1 and files[0].endswith(".so")  # no temporary left behind
    stamp = os.stat(tmp_path / "kernels" / files[0]).st_mtime_ns
    monkeypatch.setattr(cc, "_libraries", {})  # a new process: only the disk cache remains
    assert cc.load(src).diffsci_test_answer() == 7
    assert os.stat(tmp_path / "kernels" / files[0]).st_mtime_ns == stamp
    cc.load(src.replace("7", "8"))
    assert len(os.listdir(tmp_path / "kernels")) == 2


@needs_cc
def test_a_kernel_that_does_not_compile_reports_the_compiler_message(tmp_path, monkeypatch):
    monkeypatch.setenv("DIFFSCI_CACHE_DIR", str(tmp_path))
    with pytest.raises(RuntimeError, match="failed to compile") as err:
        cc.load("int broken(void) { return undefined_name; }\n")
    assert "undefined_name" in str(err.value)
    assert os.listdir(tmp_path / "kernels") == []  # nothing half-written in the cache


def test_without_a_compiler_load_says_what_is_missing(monkeypatch):
    monkeypatch.setitem(cc._state, "compiler", None)
    assert not cc.available()
    with pytest.raises(RuntimeError, match="no C compiler"):
        cc.load("int f(void) { return 1; }\n")


@needs_cc
@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-6), (np.float64, 1e-14)])
def test_native_softmax_layer_norm_and_logistic_match_references(dtype, tol):
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((37, 6, 131)) * 4).astype(dtype)  # rows not a multiple of 16
    np.testing.assert_allclose(
        cpu_kernels.softmax_last_axis(x), sp.softmax(x.astype(np.float64), axis=-1), atol=tol
    )
    rows = x.reshape(-1, 131)
    w, b = rng.standard_normal(131).astype(dtype), rng.standard_normal(131).astype(dtype)
    xd = rows.astype(np.float64)
    xhat = (xd - xd.mean(1, keepdims=True)) / np.sqrt(xd.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(cpu_kernels.layer_norm_rows(rows, 1e-5), xhat, atol=20 * tol)
    np.testing.assert_allclose(
        cpu_kernels.layer_norm_rows(rows, 1e-5, w, b), xhat * w + b, atol=40 * tol
    )
    z = np.concatenate([x.ravel(), np.array([-200, -90, 0, 90, 200], dtype)])
    got = cpu_kernels.logistic(z)
    # relative precision down to the smallest normal number of the dtype (below: underflow)
    tiny = np.finfo(dtype).tiny
    np.testing.assert_allclose(got, sp.expit(z.astype(np.float64)), rtol=tol, atol=tiny)


@needs_cc
def test_native_softmax_rows_of_minus_infinity_and_nan_give_nan_like_numpy():
    x = np.zeros((4, 300), np.float32)
    x[1] = -np.inf
    x[2, 5] = np.nan
    x[3, :10] = -np.inf  # masked entries: exactly zero probability
    got = cpu_kernels.softmax_last_axis(x)
    assert np.isnan(got[1]).all() and np.isnan(got[2]).all()
    np.testing.assert_allclose(got[0], 1 / 300, rtol=1e-6)
    assert (got[3, :10] == 0).all()
    np.testing.assert_allclose(got[3].sum(), 1.0, rtol=1e-6)


def test_softmax_layer_norm_logistic_primitives_agree_on_native_and_numpy_paths():
    from diffsci.core.prims import normalize as prims_normalize
    from diffsci.core.prims import softmax as prims_softmax

    rng = np.random.default_rng(5)
    x = (rng.standard_normal((16, 4, 64)) * 3).astype(np.float32)
    w, b = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)

    def run_all():
        return (
            prims_softmax.softmax.impl(np, x, 2),
            prims_normalize.layer_norm.impl(np, x, w, b, 1, 1e-5),
            prims_normalize.normalize.impl(np, x, 2, 1e-5),
            E.logistic.impl(np, x),
        )

    native = run_all()
    with cc.disabled():
        plain = run_all()
    for a, b_ in zip(native, plain):
        np.testing.assert_allclose(a, b_, rtol=1e-5, atol=2e-6)


@needs_cc
def test_kernels_fall_back_to_numpy_when_the_library_cannot_be_built(monkeypatch):
    def broken(src):
        raise OSError("No space left on device")

    monkeypatch.setattr(cc, "load", broken)
    monkeypatch.setattr(cpu_kernels, "_functions", {})
    x = _inputs(np.float32, 3000)
    assert cpu_kernels.gelu(x) is None and cpu_kernels.softmax_last_axis(x) is None
    np.testing.assert_allclose(E.gelu.impl(np, x), _gelu_ref(x), atol=2e-6, rtol=2e-6)
