"""PDEBench's metrics against hand-computed cases and independent float64 formulas (loops over
samples, channels and times, written without the module's vectorised code)."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.datasets import metrics as M


def _mode_1d(nx, k, amplitude=1.0):
    x = np.arange(nx) / nx
    return amplitude * np.cos(2 * np.pi * k * x)


def _field(err, batch=3, times=4, channels=2, offset=1.0):
    """target = offset everywhere, pred = target + err (err: spatial) -> [b, *s, t, c]."""
    shape = (batch, *err.shape, times, channels)
    target = np.full(shape, offset)
    pred = target + err[(None, ..., None, None)]
    return pred, target


# ---- hand-computed cases ----------------------------------------------------------------------


def test_constant_error():
    target = np.random.default_rng(0).standard_normal((2, 32, 3, 1))
    pred = target + 0.5
    assert M.rmse(pred, target) == pytest.approx(0.5)
    assert M.max_error(pred, target) == pytest.approx(0.5)
    assert M.crmse(pred, target) == pytest.approx(0.5)
    assert M.brmse(pred, target) == pytest.approx(0.5)
    rms_target = np.sqrt((target**2).mean(axis=1))  # [b, t, c]
    assert M.nrmse(pred, target) == pytest.approx(float((0.5 / rms_target).mean()))
    # only the mean is wrong: all of the error is in Fourier mode 0 (low band)
    bands = M.frmse(pred, target)
    assert bands["low"] == pytest.approx(0.5 / 4)
    assert abs(bands["mid"]) < 1e-15 and abs(bands["high"]) < 1e-15


@pytest.mark.parametrize(("k", "band", "width"), [(2, "low", 4), (6, "mid", 8), (20, "high", 21)])
def test_single_fourier_mode_lands_in_one_band_1d(k, band, width):
    nx, amplitude = 64, 0.8
    pred, target = _field(_mode_1d(nx, k, amplitude))
    bands = M.frmse(pred, target)
    # rfft of a*cos(2 pi k x) has |E_k| = a nx / 2, so F_k = a / 2; the band averages `width` modes
    assert bands[band] == pytest.approx(amplitude / 2 / width, rel=1e-12)
    for other in {"low", "mid", "high"} - {band}:
        assert abs(bands[other]) < 1e-14
    assert M.crmse(pred, target) < 1e-14  # a zero-mean error conserves the mean
    assert M.rmse(pred, target) == pytest.approx(amplitude / math.sqrt(2))
    # PDEBench scales by the domain length
    assert M.frmse(pred, target, band=band, domain_lengths=2.0) == pytest.approx(
        2 * bands[band], rel=1e-12
    )


def test_single_fourier_mode_2d_and_3d():
    n = 32
    x = np.arange(n) / n
    X, Y = np.meshgrid(x, x, indexing="ij")
    err = np.cos(2 * np.pi * (5 * X + 3 * Y))  # |k| = 5.83: shell 5, the mid band (4..11)
    pred, target = _field(err, batch=2, times=1, channels=1)
    bands = M.frmse(pred, target)
    # one first-quadrant mode with |E| = n^2 / 2: F_5 = 1/2, averaged over 8 shells
    assert bands["mid"] == pytest.approx(0.5 / 8, rel=1e-12)
    assert abs(bands["low"]) < 1e-14 and abs(bands["high"]) < 1e-14
    assert M.frmse(pred, target, band="mid", domain_lengths=(2.0, 3.0)) == pytest.approx(
        6 * 0.5 / 8, rel=1e-12
    )
    n3 = 16
    g = np.arange(n3) / n3
    X3, Y3, Z3 = np.meshgrid(g, g, g, indexing="ij")
    err3 = np.cos(2 * np.pi * (1 * X3 + 1 * Y3 + 1 * Z3))  # |k| = 1.73: shell 1, low band
    p3, t3 = _field(err3, batch=1, times=1, channels=1)
    b3 = M.frmse(p3, t3)  # 8 shells (n3 // 2); low = shells 0..3
    assert b3["low"] == pytest.approx(0.5 / 4, rel=1e-12)
    assert abs(b3["mid"]) < 1e-14 and math.isnan(b3["high"])  # no shell >= 12 exists


def test_boundary_and_conserved_hand_cases():
    n = 8
    err = np.zeros((n, n))
    err[3, 4] = 5.0  # interior: invisible to bRMSE
    pred, target = _field(err, batch=1, times=1, channels=1)
    assert M.brmse(pred, target) == 0.0
    assert M.max_error(pred, target) == 5.0
    assert M.crmse(pred, target) == pytest.approx(5.0 / n**2)
    err[0, 0] = 1.0  # a corner lies on two edges: counted twice out of 2 nx + 2 ny
    pred, target = _field(err, batch=1, times=1, channels=1)
    assert M.brmse(pred, target) == pytest.approx(math.sqrt(2 / (4 * n)))
    # 1D: the two end points
    e1 = np.zeros(10)
    e1[0], e1[-1] = 3.0, 4.0
    p1, t1 = _field(e1, batch=1, times=1, channels=1)
    assert M.brmse(p1, t1) == pytest.approx(math.sqrt((9 + 16) / 2))
    # cRMSE: root mean square over the batch of each sample's mean error
    target = np.zeros((3, 5, 1, 1))
    pred = target + np.array([1.0, -2.0, 2.0])[:, None, None, None]
    assert M.crmse(pred, target) == pytest.approx(math.sqrt((1 + 4 + 4) / 3))


def test_relative_l2_is_a_ratio_of_norms_not_rmse():
    target = np.zeros((2, 4, 1, 1))
    target[0, :, 0, 0] = [1, 2, 2, 4]  # norm 5
    target[1, :, 0, 0] = [3, 4, 0, 0]  # norm 5
    pred = target.copy()
    pred[0, 0, 0, 0] += 3.0
    pred[1, 1, 0, 0] += 4.0
    assert M.relative_l2(pred, target) == pytest.approx((3 / 5 + 4 / 5) / 2)
    assert M.rmse(pred, target) == pytest.approx((3 / 2 + 4 / 2) / 2)  # sqrt(9/4), sqrt(16/4)
    names = M.pde_metrics(pred, target)
    assert set(names) == {
        "RMSE", "nRMSE", "relative_L2", "max_error", "cRMSE", "bRMSE",
        "fRMSE_low", "fRMSE_mid", "fRMSE_high",
    }  # fmt: skip
    assert names["relative_L2"] != names["RMSE"]


# ---- independent formulas ---------------------------------------------------------------------


def _loops(pred, target):
    """Every metric from loops over (b, c, t) on [b, *s, t, c] arrays, in plain float64."""
    nb, *spatial, nt, nc = pred.shape
    n = math.prod(spatial)
    rm = np.zeros((nb, nc, nt))
    nr = np.zeros((nb, nc, nt))
    mx = np.zeros((nc, nt))
    cs = np.zeros((nb, nc, nt))
    bd = np.zeros((nb, nc, nt))
    for b, c, t in itertools.product(range(nb), range(nc), range(nt)):
        e = (pred[b, ..., t, c] - target[b, ..., t, c]).ravel()
        u = target[b, ..., t, c].ravel()
        rm[b, c, t] = math.sqrt(sum(v * v for v in e) / n)
        nr[b, c, t] = rm[b, c, t] / math.sqrt(sum(v * v for v in u) / n)
        mx[c, t] = max(mx[c, t], max(abs(v) for v in e))
        cs[b, c, t] = sum(e) / n
        grid = (pred[b, ..., t, c] - target[b, ..., t, c]) ** 2
        total, count = 0.0, 0
        for idx in itertools.product(*(range(m) for m in spatial)):
            faces = sum((i == 0) + (i == m - 1) if m > 1 else 2 for i, m in zip(idx, spatial))
            total += faces * grid[idx]
            count += faces
        bd[b, c, t] = math.sqrt(total / count)
    rel = np.array(
        [np.linalg.norm(pred[b] - target[b]) / np.linalg.norm(target[b]) for b in range(nb)]
    )
    return {
        "RMSE": rm.mean(axis=0),
        "nRMSE": nr.mean(axis=0),
        "max_error": mx,
        "cRMSE": np.sqrt((cs**2).mean(axis=0)),
        "bRMSE": bd.mean(axis=0),
        "relative_L2": rel.mean(),
    }


def _fourier_loops(pred, target, lengths=1.0):
    """PDEBench's fRMSE spectrum by its own loops: rfft bins in 1D, shells of the first
    quadrant/octant in 2D/3D (per (c, t), summed over modes one by one)."""
    nb, *spatial, nt, nc = pred.shape
    d = len(spatial)
    e = pred - target
    if d == 1:
        out = np.zeros((nc, spatial[0] // 2 + 1, nt))
        for c, t in itertools.product(range(nc), range(nt)):
            for k in range(spatial[0] // 2 + 1):
                acc = 0.0
                for b in range(nb):
                    x = np.arange(spatial[0])
                    coef = np.sum(e[b, :, t, c] * np.exp(-2j * np.pi * k * x / spatial[0]))
                    acc += abs(coef) ** 2
                out[c, k, t] = math.sqrt(acc / nb) / spatial[0] * lengths
        return out
    nbins = min(m // 2 for m in spatial)
    out = np.zeros((nc, nbins, nt))
    axes = tuple(range(1, 1 + d))
    F = np.fft.fftn(e, axes=axes)
    for c, t in itertools.product(range(nc), range(nt)):
        acc = np.zeros((nb, nbins))
        for idx in itertools.product(*(range(m // 2) for m in spatial)):
            s = math.floor(math.sqrt(sum(i * i for i in idx)))
            if s < nbins:
                acc[:, s] += np.abs(F[(slice(None), *idx, t, c)]) ** 2
        out[c, :, t] = np.sqrt(acc.mean(axis=0)) / math.prod(spatial) * lengths**d
    return out


shapes = st.tuples(
    st.integers(1, 3),  # batch
    st.lists(st.integers(2, 9), min_size=1, max_size=3),  # spatial
    st.integers(1, 3),  # time
    st.integers(1, 2),  # channels
)


@settings(max_examples=25, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**16))
def test_metrics_match_loop_formulas(shape, seed):
    nb, spatial, nt, nc = shape
    rng = np.random.default_rng(seed)
    full = (nb, *spatial, nt, nc)
    target = rng.standard_normal(full) + 2.0
    pred = target + 0.3 * rng.standard_normal(full)
    ref = _loops(pred, target)
    got = M.pde_metrics(pred, target, reduce="none")
    for name in ("RMSE", "nRMSE", "max_error", "cRMSE", "bRMSE"):
        np.testing.assert_allclose(got[name], ref[name], rtol=1e-12, err_msg=name)
    assert M.relative_l2(pred, target) == pytest.approx(ref["relative_L2"], rel=1e-12)
    spectrum = _fourier_loops(pred, target)
    for band, (lo, hi) in {"low": (0, 4), "mid": (4, 12), "high": (12, None)}.items():
        part = spectrum[:, lo:hi]
        if part.shape[1]:
            np.testing.assert_allclose(
                got[f"fRMSE_{band}"], part.mean(axis=1), rtol=1e-10, atol=1e-14
            )
        else:
            assert np.isnan(got[f"fRMSE_{band}"]).all()
    # the reductions of one [c, t] table
    none = got["RMSE"]
    assert M.rmse(pred, target) == pytest.approx(none.mean())
    np.testing.assert_allclose(M.rmse(pred, target, reduce="channel"), none.mean(axis=1))
    np.testing.assert_allclose(M.rmse(pred, target, reduce="time"), none.mean(axis=0))


# ---- layouts, inputs, errors ------------------------------------------------------------------


def test_layouts_and_tensor_inputs():
    rng = np.random.default_rng(1)
    target = rng.standard_normal((2, 6, 5, 3, 2)) + 1  # [b, x, y, t, c]
    pred = target + 0.1 * rng.standard_normal(target.shape)
    ref = M.pde_metrics(pred, target, reduce="none")
    channel_first = (0, 4, 3, 1, 2)  # [b, c, t, x, y]
    got = M.pde_metrics(
        pred.transpose(channel_first), target.transpose(channel_first), layout="bctxy",
        reduce="none",
    )  # fmt: skip
    for name in ref:
        np.testing.assert_allclose(got[name], ref[name], rtol=1e-12, err_msg=name)
    tensors = M.nrmse(core.tensor(pred.astype(np.float32)), core.tensor(target.astype(np.float32)))
    assert tensors == pytest.approx(M.nrmse(pred, target), rel=1e-5)
    # no time and no channel axis (a Darcy-like field): one [1, 1] table
    darcy = M.rmse(pred[..., 0, 0], target[..., 0, 0], layout="bxy", reduce="none")
    assert darcy.shape == (1, 1)
    np.testing.assert_allclose(darcy[0, 0], ref["RMSE"][0, 0])
    # initial_step drops leading time steps
    np.testing.assert_allclose(
        M.rmse(pred, target, initial_step=1, reduce="none"), ref["RMSE"][:, 1:]
    )


def test_bad_input_is_named():
    a = np.zeros((2, 8, 3, 1))
    with pytest.raises(ValueError, match=r"pred has shape \(2, 8, 3, 1\) but target has shape"):
        M.rmse(a, np.zeros((2, 8, 3, 2)))
    with pytest.raises(ValueError, match="reduce must be one of"):
        M.rmse(a, a, reduce="sum")
    with pytest.raises(ValueError, match=r"layout 'bxytc' describes 5 axes, but the arrays have 4"):
        M.rmse(a, a, layout="bxytc")
    with pytest.raises(ValueError, match="spatial axes; expected 1, 2 or 3"):
        M.rmse(np.zeros((2, 3)), np.zeros((2, 3)), layout="b...tc")
    with pytest.raises(TypeError, match="expected a real array"):
        M.rmse(a + 1j, a)
    with pytest.raises(ValueError, match="band must be"):
        M.frmse(a, a, band="ultra")
    with pytest.raises(ValueError, match=r"initial_step must be an int in \[0, 3\)"):
        M.rmse(a, a, initial_step=3)
    # a zero target: infinite nRMSE, no warning (warnings are errors in this suite)
    assert M.nrmse(a + 1, a) == np.inf
