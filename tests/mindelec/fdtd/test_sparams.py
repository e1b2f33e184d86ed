"""S-parameter extraction on synthetic networks whose port voltages and currents are known in
closed form: a lossy T network (any terminations), a matched delay line in the time domain,
reciprocity/passivity checks, gradients, the plot."""

import math

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops
from diffsci.mindelec.fdtd.sparams import (
    SParameterSolver,
    passivity,
    plot_sparams,
    power_waves,
    reciprocity_error,
    s_from_time_signals,
    s_matrix,
)
from diffsci.mindelec.fdtd.waveforms import Gaussian

Z0 = 50.0


def _t_network(freqs):
    """Z matrix [nf, 2, 2] of a T network: series R1 + j w L, R2 + 1/(j w C), shunt R3 || L3."""
    w = 2 * math.pi * np.asarray(freqs)
    z1 = 20.0 + 1j * w * 3e-9
    z2 = 35.0 + 1.0 / (1j * w * 2e-12)
    z3 = 1.0 / (1.0 / 80.0 + 1.0 / (1j * w * 5e-9))
    return np.stack([np.stack([z1 + z3, z3], -1), np.stack([z3, z2 + z3], -1)], -2)


def _excite(z, r_source):
    """Port voltages/currents [nf, exc, port] when each port in turn is driven by a 1 V source
    with internal resistance r_source and the others are terminated in r_source:
    (Z + R) I = V_s, V = Z I (currents into the network)."""
    n = z.shape[-1]
    k = z + r_source * np.eye(n)
    i = np.linalg.solve(k, np.broadcast_to(np.eye(n), z.shape))  # columns: excitations
    v = z @ i
    return np.swapaxes(v, -1, -2), np.swapaxes(i, -1, -2)


def _exact_s(z):
    n = z.shape[-1]
    e = np.eye(n)
    return (z - Z0 * e) @ np.linalg.inv(z + Z0 * e)


def test_t_network_matched_and_mismatched_terminations():
    f = np.linspace(0.5e9, 6e9, 12)
    z = _t_network(f)
    ref = _exact_s(z)
    v, i = _excite(z, Z0)
    for method in ("solve", "diagonal"):
        s = s_matrix(v, i, Z0, method=method).numpy()
        assert np.max(np.abs(s - ref)) < 1e-13
    # terminations of 25 ohm: incident waves at the unexcited port, only (2) is exact
    v, i = _excite(z, 25.0)
    s = s_matrix(v, i, Z0).numpy()
    assert np.max(np.abs(s - ref)) < 1e-13
    s_diag = s_matrix(v, i, Z0, method="diagonal").numpy()
    assert np.max(np.abs(s_diag - ref)) > 1e-2
    assert reciprocity_error(s) < 1e-13
    ok, sv = passivity(s)
    assert ok and sv < 1.0


def test_power_waves_of_a_matched_load():
    v = np.array([[2.0 + 1j, 1.0]])
    a, b = power_waves(v, v / Z0, Z0)
    assert np.allclose(b.numpy(), 0.0) and np.allclose(a.numpy(), v / math.sqrt(Z0))
    with pytest.raises(ValueError, match="z0"):
        power_waves(v, v, -50.0)


def test_delay_line_from_time_signals():
    """A matched line of delay m dt: V2(t) = V1(t - m dt), so S21 = S12 = exp(-i w m dt)."""
    dt, nt, m = 2e-12, 1200, 37
    g = Gaussian(20e9)
    t = np.arange(nt) * dt
    vs = g(t)  # source EMF; half of it drops on the 50-ohm source resistance
    vs_late = g(t - m * dt)
    v = np.zeros((nt, 2, 2))
    i = np.zeros((nt, 2, 2))
    for e, o in ((0, 1), (1, 0)):
        v[:, e, e], i[:, e, e] = vs / 2, vs / (2 * Z0)
        v[:, e, o], i[:, e, o] = vs_late / 2, -vs_late / (2 * Z0)  # leaving the line at port o
    freqs = np.linspace(1e9, 15e9, 8)
    solver = SParameterSolver(lambda e: (v[:, e], i[:, e]), 2, dt)
    solver.solve()
    s = solver.eval(freqs).numpy()
    delay = np.exp(-2j * math.pi * freqs * m * dt)
    assert np.max(np.abs(s[:, 1, 0] - delay)) < 1e-9 and np.max(np.abs(s[:, 0, 1] - delay)) < 1e-9
    assert np.max(np.abs(s[:, 0, 0])) < 1e-9
    s_direct = s_from_time_signals(v, i, dt, freqs, method="diagonal").numpy()
    assert np.allclose(s_direct, s, atol=1e-9)


def test_checks_flag_nonreciprocal_and_active():
    gyrator = np.array([[0.0, 1.0], [-1.0, 0.0]], dtype=complex)
    assert reciprocity_error(gyrator) == pytest.approx(2.0)
    ok, sv = passivity(1.2 * gyrator)
    assert not ok and sv == pytest.approx(1.2)
    with pytest.raises(ValueError, match="one excitation per port"):
        s_matrix(np.ones((3, 1, 2)), np.ones((3, 1, 2)))


def test_gradient_through_extraction():
    """d|S21|^2 / d R3 of a resistive T network, through the extraction, against FD."""

    def s21_power(r):
        z = ops.stack([ops.stack([20.0 + r, r]), ops.stack([r, 35.0 + r])])  # [2, 2]
        z = ops.complex(z, ops.zeros_like(z))
        k = z + core.tensor(np.eye(2) * Z0 + 0j)
        cur = ops.solve(k, core.tensor(np.eye(2) + 0j))
        v = ops.matmul(z, cur)
        s = s_matrix(
            ops.expand_dims(ops.swapaxes(v, 0, 1), 0),
            ops.expand_dims(ops.swapaxes(cur, 0, 1), 0),
            Z0,
        )
        return ops.abs(s[0, 1, 0]) ** 2

    r = core.tensor(80.0, dtype=core.float64)
    g = float(core.grad(s21_power)(r).numpy())
    h = 1e-4
    fd = (
        float(s21_power(core.tensor(80.0 + h, dtype=core.float64)).numpy())
        - float(s21_power(core.tensor(80.0 - h, dtype=core.float64)).numpy())
    ) / (2 * h)
    assert g == pytest.approx(fd, rel=1e-7)


def test_plot(tmp_path):
    f = np.linspace(0.5e9, 6e9, 30)
    s = _exact_s(_t_network(f))
    fig = plot_sparams(f, s, path=tmp_path / "s.png", reference={(2, 1): (f, np.full(30, -3.0))})
    assert len(fig.axes) == 2 and (tmp_path / "s.png").stat().st_size > 1000
    labels = [ln.get_label() for ln in fig.axes[0].get_lines()]
    assert labels == ["S11", "S21", "S21 reference", "S12", "S22"]
