"""Running DFT: exact against the closed-form sum of a sampled sinusoid, numpy's FFT at its
bins, the traced (scan) path, and gradients against central differences."""

import math

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops
from diffsci.mindelec.fdtd.dft import RunningDFT, dft_init, dft_update, dft_value


def _geometric(x, t0, dt, n):
    """sum_{m<n} exp(i x (t0 + m dt)), in closed form."""
    q = np.exp(1j * x * dt)
    out = np.where(np.abs(1 - q) < 1e-300, n + 0j, (1 - q**n) / np.where(q == 1, 2, 1 - q))
    return np.exp(1j * x * t0) * out


def test_sampled_sinusoid_is_exact():
    f0, amp, phi = 3.0e9, 1.7, 0.4
    dt, n, off = 1.0 / (23.7 * f0), 1500, 0.5
    t = (np.arange(n) + off) * dt
    u = amp * np.cos(2 * math.pi * f0 * t + phi)
    freqs = np.array([0.0, 1.0e9, 2.9e9, f0, 4.2e9])
    dft = RunningDFT(freqs, dt, field_shape=())
    for tn, un in zip(t, u):
        dft.update(core.tensor(un, dtype=core.float64), float(tn))
    w0, w = 2 * math.pi * f0, 2 * math.pi * freqs
    ref = (
        0.5
        * amp
        * dt
        * (
            np.exp(1j * phi) * _geometric(w0 - w, t[0], dt, n)
            + np.exp(-1j * phi) * _geometric(-w0 - w, t[0], dt, n)
        )
    )
    got = dft.value().numpy()
    assert got.shape == (5,)
    assert np.max(np.abs(got - ref)) < 1e-12 * np.max(np.abs(ref))
    # at f0 the transform grows like N dt A/2: the peak is where it belongs
    assert np.argmax(np.abs(got)) == 3


def test_fft_bins_and_field_shape():
    rng = np.random.default_rng(0)
    n, dt = 64, 1e-12
    u = rng.standard_normal((n, 3, 2))
    k = np.array([0, 1, 5, 31])
    freqs = k / (n * dt)
    dft = RunningDFT(freqs, dt, field_shape=(3, 2))
    for m in range(n):
        dft.update(u[m], m * dt)
    ref = np.fft.fft(u, axis=0)[k] * dt
    assert np.allclose(dft.value().numpy(), ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_traced_time_in_scan_matches_eager():
    freqs, dt, n = np.array([0.7e9, 1.3e9]), 2e-11, 200
    t = np.arange(n) * dt
    u = core.tensor(np.sin(2 * math.pi * 1.1e9 * t)[:, None] * np.ones((n, 4)), dtype=core.float64)

    def body(state, x):
        i, un = x
        return dft_update(state, un, ops.astype(i, core.float64) * dt, freqs, dt), None

    @core.jit
    def run(u):
        state, _ = ops.scan(body, dft_init(2, (4,)), (core.arange(n), u))
        return state

    traced = dft_value(run(u)).numpy()
    eager = RunningDFT(freqs, dt, (4,))
    for m in range(n):
        eager.update(u[m], float(t[m]))
    assert np.allclose(traced, eager.value().numpy(), rtol=1e-12, atol=1e-22)


def test_gradient_matches_finite_differences():
    freqs, dt, n = np.array([1.0e9, 2.0e9]), 2.5e-11, 60
    t = np.arange(n) * dt
    base = core.tensor(np.exp(-(((t - 0.5e-9) / 0.2e-9) ** 2)), dtype=core.float64)

    def power(scale):
        dft = RunningDFT(freqs, dt)
        for m in range(n):
            dft.update(base[m] * scale[m % 3] + scale[0] ** 2 * 0.1, float(t[m]))
        v = dft.value()
        return (ops.real(v) ** 2 + ops.imag(v) ** 2).sum() * 1e18

    x = core.tensor([1.0, 0.5, -0.3], dtype=core.float64)
    g = core.grad(power)(x).numpy()
    h = 1e-6
    fd = np.array(
        [
            (
                float(power(x + core.tensor(np.eye(3)[i] * h)).numpy())
                - float(power(x - core.tensor(np.eye(3)[i] * h)).numpy())
            )
            / (2 * h)
            for i in range(3)
        ]
    )
    assert np.allclose(g, fd, rtol=1e-6)


def test_bad_input():
    with pytest.raises(ValueError, match="frequencies"):
        RunningDFT([-1.0], 1e-12)
    with pytest.raises(ValueError, match="dt"):
        RunningDFT([1.0], 0.0)
    dft = RunningDFT([1.0, 2.0], 1e-12, field_shape=(3,))
    with pytest.raises(ValueError, match=r"accumulator shape \(2, 3\)"):
        dft.update(np.zeros(4), 0.0)


def test_dft_monitor_in_a_simulation():
    """The monitor's carry equals the DFT of a probe's history taken at the E/H sample times."""
    from diffsci.mindelec import fdtd
    from diffsci.mindelec.fdtd.dft import DFTMonitor
    from diffsci.mindelec.fdtd.waveforms import Gaussian

    grid = fdtd.Grid((60,), 1e-3, dtype="float64", courant=0.9)
    g = Gaussian(20e9)
    freqs = np.array([2e9, 5e9, 9e9])
    sim = fdtd.Simulation(
        grid,
        boundaries=fdtd.CPML(10),
        sources=[fdtd.PointSource("ez", (20,), g)],
        monitors=[
            fdtd.PointProbe("ez", (35,), name="ez_probe"),
            fdtd.PointProbe("hy", (35,), name="hy_probe"),
            DFTMonitor("ez", freqs, region=(slice(15, 45),), name="ez_dft"),
            DFTMonitor("hy", freqs, region=(35,), name="hy_dft"),
        ],
    )
    steps = 150
    _, res = sim.run(steps)
    n = np.arange(steps)
    for comp, shift in (("ez", 1.0), ("hy", 0.5)):
        hist = res[f"{comp}_probe"].numpy()
        ref = (hist[None] * np.exp(-2j * np.pi * freqs[:, None] * (n + shift) * grid.dt)).sum(1)
        got = res[f"{comp}_dft"].numpy()
        got = got[:, 35 - 15] if comp == "ez" else got
        assert np.allclose(got, ref * grid.dt, rtol=1e-12, atol=1e-12 * np.abs(ref).max() * grid.dt)
    assert res["ez_dft"].shape == (3, 30)
    with pytest.raises(ValueError, match="PML"):
        fdtd.Simulation(grid, boundaries=fdtd.CPML(10), monitors=[DFTMonitor("ez", freqs)])

    # differentiable through the loop: |DFT|^2 is quadratic in the source amplitude
    def power(amp):
        sim = fdtd.Simulation(
            grid,
            boundaries=fdtd.CPML(10),
            sources=[fdtd.PointSource("ez", (20,), g, amplitude=amp)],
            monitors=[DFTMonitor("ez", freqs, region=(35,), name="d")],
        )
        v = sim.run(60)[1]["d"]
        return (ops.real(v) ** 2 + ops.imag(v) ** 2).sum()

    amp = core.tensor(1.5, dtype=core.float64)
    value, grad = core.value_and_grad(power)(amp)
    assert float(value.numpy()) > 0
    assert float(grad.numpy()) == pytest.approx(2 * float(value.numpy()) / 1.5, rel=1e-10)
