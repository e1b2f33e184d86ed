"""Shared GPU test helpers: the skip marker, a device context and weight copying."""

import contextlib

import pytest

from diffsci import core

needs_gpu = pytest.mark.skipif(
    "GPU" not in core.available_devices(), reason="needs cupy and a CUDA GPU"
)


@contextlib.contextmanager
def on_gpu():
    """New tensors go to the GPU inside the block; the CPU is the device again after it."""
    core.set_device("GPU")
    try:
        yield
    finally:
        core.set_device("CPU")


def build_on_both(build):
    """``(cpu_cell, gpu_cell)``: ``build()`` on each device, the GPU cell's parameters set to
    the CPU cell's values (the two devices' random streams differ)."""
    core.set_device("CPU")
    cpu = build()
    with on_gpu():
        gpu = build()
        pairs = zip(cpu.parameters_and_names(), gpu.parameters_and_names(), strict=True)
        for (name, p), (name_gpu, q) in pairs:
            assert name == name_gpu, (name, name_gpu)
            q.set_data(core.Tensor(p.asnumpy()))
    return cpu, gpu
