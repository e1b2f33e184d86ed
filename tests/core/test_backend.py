"""Backends and devices: the registry, clear errors for missing hardware/libraries, device
mixing, and (where cupy and a GPU exist) the same results on GPU as on CPU."""

import importlib.util

import numpy as np
import pytest

from diffsci import core
from diffsci.core import backend as B
from diffsci.core import ops

from ..gpu._gpu import needs_gpu
from ._helpers import fake_device_tensor


def test_cpu_is_the_default_device():
    assert core.get_device() == "CPU"
    assert "CPU" in core.available_devices()
    x = core.tensor([1.0])
    assert x.device == "CPU" and isinstance(x._value, np.ndarray)


def test_set_device_round_trip_and_case_insensitive_names():
    core.set_device("cpu")
    assert core.get_device() == "CPU"
    core.set_device("CPU")
    assert B.get_backend() is B.get_backend("CPU")


def test_unknown_device():
    with pytest.raises(ValueError, match=r"unknown device 'TPU'.*'Ascend', 'CPU', 'GPU'"):
        core.set_device("TPU")
    assert core.get_device() == "CPU"


def test_ascend_without_its_library_says_what_is_missing():
    with pytest.raises(
        RuntimeError, match=r"set_device\('Ascend'\).*no Ascend array library is installed.*CANN"
    ):
        core.set_device("Ascend")
    assert core.get_device() == "CPU"
    assert "Ascend" not in core.available_devices()


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="cupy is installed here")
def test_gpu_without_cupy_says_what_is_missing():
    with pytest.raises(RuntimeError, match=r"set_device\('GPU'\) needs cupy.*pip install cupy"):
        core.set_device("GPU")
    assert core.get_device() == "CPU"


def test_backend_interface_is_checked_when_loading():
    class Incomplete(B.Backend):
        name = "X"

        def asarray(self, data, dtype=None):
            return np.asarray(data, dtype=dtype)

    with pytest.raises(TypeError, match=r"backend X does not implement \[.*'to_numpy'.*'seed'"):
        B.check_complete(Incomplete())
    assert B.check_complete(B.get_backend("CPU")) is B.get_backend("CPU")


def test_backend_of_unknown_array_type():
    with pytest.raises(TypeError, match="list is not an array of any loaded backend"):
        B.backend_of([1.0])


def test_tensor_to_cpu_copies_nothing_visible():
    x = core.tensor([1.0, 2.0])
    y = x.to("CPU")
    assert y.device == "CPU"
    np.testing.assert_array_equal(y.asnumpy(), [1.0, 2.0])


def test_set_seed_applies_to_backends_loaded_later(monkeypatch):
    class Recording(B.numpy_backend.NumpyBackend):
        name = "REC"
        seeds = []  # noqa: RUF012  (a record shared by the class on purpose)

        def seed(self, seed):
            self.seeds.append(seed)
            super().seed(seed)

    monkeypatch.setitem(B._FACTORIES, "REC", Recording)
    monkeypatch.setattr(B, "_LOADED", dict(B._LOADED))
    monkeypatch.setattr(B, "_BY_ARRAY_TYPE", dict(B._BY_ARRAY_TYPE))
    core.set_seed(123)
    B.get_backend("REC")
    assert Recording.seeds == [123]


def test_mixing_devices_raises_before_computing(monkeypatch):
    fake = fake_device_tensor(monkeypatch, np.ones(2))
    with pytest.raises(
        RuntimeError, match=r"matmul: inputs live on different devices \['FAKE', 'CPU'\].*Tensor.to"
    ):
        ops.matmul(fake, core.ones(2))
    with pytest.raises(RuntimeError, match="different devices"):
        ops.where(core.tensor([True, False]), fake, core.zeros(2))


# ---- GPU (skipped without cupy and a GPU) ---------------------------------------------------------
@needs_gpu
def test_gpu_tensors_ops_and_gradients_match_cpu():
    import cupy

    x_cpu = core.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype="float64")
    core.set_device("GPU")
    try:
        x = x_cpu.to("GPU")
        assert x.device == "GPU" and isinstance(x._value, cupy.ndarray)
        assert core.ones(2).device == "GPU"

        def f(t):
            return (ops.tanh(t @ t.T) * ops.logsumexp(t, axis=1)).sum() + t[
                0, ops.tensor([2, 0])
            ].sum()

        g = core.grad(f)(x)
        assert g.device == "GPU"
        core.set_device("CPU")
        g_cpu = core.grad(f)(x_cpu)
        np.testing.assert_allclose(g.asnumpy(), g_cpu.asnumpy(), rtol=1e-12)
        with pytest.raises(RuntimeError, match="different devices"):
            x + x_cpu
    finally:
        core.set_device("CPU")


@needs_gpu
def test_gpu_random_is_seeded():
    core.set_device("GPU")
    try:
        core.set_seed(5)
        a = core.random.normal((4,)).asnumpy()
        core.set_seed(5)
        b = core.random.normal((4,)).asnumpy()
        np.testing.assert_array_equal(a, b)
    finally:
        core.set_device("CPU")


def test_get_seed_returns_the_last_set_seed(monkeypatch):
    from diffsci.core import backend

    monkeypatch.setattr(backend, "_SEED", [None])  # as in a process that never seeded
    assert core.get_seed() is None
    core.set_seed(41)
    assert core.get_seed() == 41
    a = core.random.normal((3,)).asnumpy()
    core.set_seed(core.get_seed())  # reseeding with it repeats the draws
    np.testing.assert_array_equal(core.random.normal((3,)).asnumpy(), a)
