"""Waveforms: closed-form spectra against sampled transforms, MindElec's parameters,
differentiability, and the cells-per-wavelength warning."""

import math

import numpy as np
import pytest

from diffsci import core
from diffsci.mindelec.fdtd.waveforms import (
    C0,
    ContinuousWave,
    CosineGaussian,
    Gaussian,
    ModulatedGaussian,
    NormDGaussian,
    ResolutionWarning,
    Ricker,
    check_resolution,
    numerical_spectrum,
)

WAVEFORMS = [
    Gaussian(10e9),
    ModulatedGaussian(5e9, 4e9),
    Ricker(3e9),
    NormDGaussian(8e9),
]


@pytest.mark.parametrize("w", WAVEFORMS, ids=lambda w: type(w).__name__)
def test_spectrum_matches_sampled_transform(w):
    fmax = w.max_frequency(1e-3)
    dt = 1.0 / (40.0 * fmax)
    t = np.arange(round(20.0 * float(w.t0) / dt) + 1) * dt
    f = np.linspace(0.0, fmax, 37)
    num = numerical_spectrum(w(t), t, f)
    ref = w.spectrum(f)
    peak = np.abs(ref).max()
    assert np.max(np.abs(num - ref)) < 1e-9 * peak


def test_mindelec_parameters():
    g = Gaussian(10e9)
    assert g.tau == pytest.approx(0.5e-10) and g.t0 == pytest.approx(4.5 * 0.5e-10)
    assert abs(g.spectrum(10e9)) / abs(g.spectrum(0.0)) == pytest.approx(
        math.exp(-(math.pi**2) / 4)
    )
    m = ModulatedGaussian(5e9, 4e9)
    # MindElec's CosineGaussian: the band edges fc +- df/2 sit at exp(-2.3) (-20 dB) of the peak
    edge = abs(m.spectrum(7e9)) / abs(m.spectrum(5e9))
    assert edge == pytest.approx(math.exp(-2.3), rel=1e-9)
    f10 = 5e9 + math.sqrt(math.log(10)) / (math.pi * m.tau)
    assert m.max_frequency(0.1) == pytest.approx(f10, rel=1e-7)
    # Gaussian -20 dB point: pi f tau = sqrt(ln 10)
    assert g.max_frequency(0.1) == pytest.approx(
        math.sqrt(math.log(10)) / (math.pi * g.tau), rel=1e-6
    )
    r = Ricker(3e9)
    f = np.linspace(1e9, 5e9, 40001)
    assert f[np.argmax(np.abs(r.spectrum(f)))] == pytest.approx(3e9, rel=1e-4)


def test_norm_d_gaussian_and_alias():
    w = NormDGaussian(10e9)
    peak_t = w.t0 - w.tau / math.sqrt(2.0)
    assert w(peak_t) == pytest.approx(1.0, rel=1e-14)
    assert abs(w.spectrum(0.0)) == 0.0
    assert CosineGaussian is ModulatedGaussian


def test_ricker_and_cw_values():
    r = Ricker(2.0)
    assert r(r.t0) == pytest.approx(1.0)
    # zeros of 1 - 2 (pi fp s)^2 at s = 1 / (sqrt(2) pi fp)
    assert abs(r(r.t0 + 1.0 / (math.sqrt(2.0) * math.pi * 2.0))) < 1e-15
    cw = ContinuousWave(1.0, ramp_periods=2.0)
    t = np.array([-0.5, 0.0, 0.25, 1.0, 2.25, 7.75])
    expected = np.array([0.0, 0.0, 0.0, 0.5 * (1 - math.cos(math.pi / 2)) * 0.0, 1.0, -1.0])
    expected[2] = 0.5 * (1 - math.cos(math.pi * 0.125)) * 1.0
    assert np.allclose(cw(t), expected, atol=1e-14)
    assert cw.max_frequency() == 1.0


def test_tensor_time_and_parameter_gradients():
    g = Gaussian(1.0)
    t = core.tensor(np.linspace(0.0, 5.0, 11), dtype=core.float64)
    assert np.allclose(g(t).numpy(), g(t.numpy()), atol=0, rtol=1e-15)

    # d/dtau of sum_n w(t_n) with a Tensor tau, against central differences
    def loss(tau):
        return (Gaussian(tau=tau, t0=2.25)(t) ** 2).sum()

    tau0 = core.tensor(0.5, dtype=core.float64)
    g_ad = float(core.grad(loss)(tau0).numpy())
    h = 1e-6
    g_fd = (
        float(loss(core.tensor(0.5 + h, dtype=core.float64)).numpy())
        - float(loss(core.tensor(0.5 - h, dtype=core.float64)).numpy())
    ) / (2 * h)
    assert g_ad == pytest.approx(g_fd, rel=1e-7)
    for w in (ModulatedGaussian(1.0, 0.5), Ricker(1.0), ContinuousWave(1.0, 1.0)):
        assert np.allclose(w(t).numpy(), w(t.numpy()), atol=1e-15)


def test_resolution_warning_names_the_number():
    g = Gaussian(10e9)
    fmax = g.max_frequency()
    d_ok = C0 / fmax / 12.0
    assert check_resolution(g, d_ok) == pytest.approx(12.0)
    with pytest.warns(ResolutionWarning, match=r"5 cells per wavelength"):
        cells = check_resolution(g, [C0 / fmax / 5.0, 1e-9])
    assert cells == pytest.approx(5.0)
    # a dielectric shortens the wavelength by sqrt(eps_r)
    with pytest.warns(ResolutionWarning, match=r"6 cells per wavelength"):
        check_resolution(3e9, C0 / 3e9 / 12.0, eps_r_max=4.0)
    with pytest.raises(ValueError, match="positive"):
        check_resolution(0.0, 1e-3)
    with pytest.raises(ValueError, match="fmax"):
        Gaussian()
