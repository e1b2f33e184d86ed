"""examples/mindelec/pinn/{frequency_domain_maxwell, incremental_learning}: tiny training runs
(the loss falls, the error is measured and the plots are written), the incremental-learning
FDTD reference against the 2-D Green's function of the wave equation, the Maxwell residuals
on exact plane waves, and bad input (a source outside the domain, an unknown mode or case).
The complex-gradient checks are in tests/mindelec/pinn/test_complex_helmholtz.py."""

import importlib
import math
import pathlib
import sys

import numpy as np
import pytest
from scipy.integrate import quad

from diffsci import core
from diffsci.mindelec.common.constants import EPS, MU

ROOT = pathlib.Path(__file__).resolve().parents[2]
FREQ = ROOT / "examples" / "mindelec" / "pinn" / "frequency_domain_maxwell"
MAD = ROOT / "examples" / "mindelec" / "pinn" / "incremental_learning"


_SIBLINGS = ("solve", "helmholtz", "mad", "maxwell", "fdtd_reference")


def _import(folder, *names):
    """The example's scripts, imported with its folder first on the path; their top-level
    names (``maxwell``, ``solve`` ...) are dropped from ``sys.modules`` before and after, so
    another example's module of the same name is never picked up, nor left for others."""
    for n in _SIBLINGS:
        sys.modules.pop(n, None)
    sys.path.insert(0, str(folder))
    try:
        return [importlib.import_module(n) for n in names]
    finally:
        sys.path.remove(str(folder))
        for n in _SIBLINGS:
            sys.modules.pop(n, None)


@pytest.fixture(scope="module")
def solve():
    return _import(FREQ, "solve")[0]


@pytest.fixture(scope="module")
def mad_modules():
    return _import(MAD, "mad", "maxwell", "fdtd_reference")


def _falls(values, n=3):
    values = np.asarray(values)
    return values[-n:].mean() < values[:n].mean()


def test_real_helmholtz_tiny_run(solve, tmp_path):
    result = solve.main("real", tiny=True, out_dir=tmp_path, verbose=False, epochs=4)
    assert _falls(result["history"]["total"])
    assert np.isfinite(result["error"]) and result["error"] < 1.0
    assert (tmp_path / "helmholtz_real.png").exists()
    # the exact solution sin(kx) is the label on MindElec's grid
    x, u, _ = result["test"]
    np.testing.assert_allclose(u[:, 0], np.sin(2.0 * x[:, 0]))


def test_complex_helmholtz_tiny_run(solve, tmp_path):
    result = solve.main(
        "complex", tiny=True, out_dir=tmp_path, verbose=False, adam_steps=20, lbfgs_steps=10
    )
    h = result["history"]
    assert _falls(h["total"], n=5)
    assert np.iscomplexobj(result["test"][2])
    assert np.isfinite(result["error"])
    assert 0.0 < result["reflection"] < 0.2  # the absorbing condition's reflection
    assert (tmp_path / "helmholtz_complex.png").exists()


def test_unknown_case(solve):
    with pytest.raises(ValueError, match="unknown case"):
        solve.main("dielectric", tiny=True, verbose=False)


def test_mad_pretrain_and_reconstruct_tiny(mad_modules, tmp_path):
    mad, _, _ = mad_modules
    results = mad.main(
        "all",
        tiny=True,
        out_dir=tmp_path,
        verbose=False,
        pretrain_overrides={"train_epoch": 3},
        reconstruct_overrides={"train_epoch": 3},
    )
    assert _falls(results["pretrain"]["history"]["total"], n=2)
    rec = results["reconstruct"]
    assert _falls(rec["history"]["total"], n=2)
    assert set(rec["errors"]) == {"ex", "ey", "hz"}
    assert all(np.isfinite(v) for v in rec["errors"].values())
    assert rec["pred"].shape == rec["ref"].shape == (4, 121, 3)
    assert (tmp_path / "ckpt" / mad.CKPT_NAME).exists()
    assert (tmp_path / "reconstruct_fields.png").exists()
    assert (tmp_path / "reconstruct_error_over_time.png").exists()
    # the reconstruction's network started from the checkpoint, with a fresh zero code
    saved = core.load_checkpoint(str(tmp_path / "ckpt" / mad.CKPT_NAME))
    assert tuple(saved["latent_vector"].shape) == (9, 16)


def test_mad_bad_input(mad_modules):
    mad, maxwell, _ = mad_modules
    with pytest.raises(ValueError, match="unknown mode"):
        mad.main("finetune", tiny=True, verbose=False)
    config = mad.load_config("reconstruct", tiny=True, overrides={"src_pos": [0.995, 0.5]})
    with pytest.raises(ValueError, match="not inside the domain"):
        maxwell.Sampler(config)


def test_scenario_rows_follow_mindelec_order(mad_modules):
    mad, maxwell, _ = mad_modules
    config = mad.load_config("pretrain", overrides={"train_batch_size": 2})
    eps, mu = maxwell.scenario_columns(config)
    assert eps.shape == mu.shape == (18, 1)
    # scenario k = i_eps * 3 + i_mu on rows [2k, 2k + 2)
    np.testing.assert_array_equal(eps[::2, 0], [1, 1, 1, 3, 3, 3, 5, 5, 5])
    np.testing.assert_array_equal(mu[::2, 0], [1, 3, 5] * 3)


@pytest.mark.parametrize("axis", [0, 1])
def test_maxwell_residuals_vanish_on_outgoing_plane_waves(mad_modules, axis):
    """``Hz = g(x - c t)``, ``Ey = eta Hz`` (or along y: ``Ex = -eta Hz``) solves the source-free
    equations, and Mur's condition holds on the face it leaves through (at normal incidence
    it is exact)."""
    mad, maxwell, _ = mad_modules
    config = mad.load_config("reconstruct")
    eps_r = mu_r = 2.0
    c = 1.0 / math.sqrt(eps_r * EPS * mu_r * MU)
    eta = math.sqrt(mu_r * MU / (eps_r * EPS))
    s = np.asarray(config["output_scale"])

    def wave(p, direction=1.0):
        arg = p[:, axis : axis + 1] - direction * c * p[:, 2:3]
        g = core.ops.exp(-((((arg - 0.7) if direction > 0 else (arg - 1.3)) / 0.1) ** 2))
        e = direction * eta * g / s[0] * (1.0 if axis == 0 else -1.0)
        zero = 0.0 * g
        cols = [zero, e, g / s[2]] if axis == 0 else [e, zero, g / s[2]]
        return core.ops.concat(cols, axis=1)

    rng = np.random.default_rng(0)
    n = 32
    pts = np.concatenate([rng.uniform(0.7, 1.0, (n, 2)), rng.uniform(0, 4e-9, (n, 1))], axis=1)
    prob = maxwell.Maxwell2DMur(
        wave, config, np.full((n, 1), eps_r), np.full((n, 1), mu_r), core.float64
    )
    r = prob.governing_equation(core.tensor(pts, dtype=core.float64)).asnumpy()
    _, _, _, dt = prob._jacobian(core.tensor(pts, dtype=core.float64))
    assert np.abs(r).max() < 1e-9 * np.abs(dt.asnumpy()).max() / 2.5e8
    exit_face = pts.copy()
    exit_face[:, axis] = 1.0
    rb = prob.boundary_condition(core.tensor(exit_face, dtype=core.float64)).asnumpy()
    assert np.abs(rb).max() < 1e-9
    # the same wave running the other way (coming in through that face) violates it
    prob.network = lambda p: wave(p, -1.0)
    r = prob.governing_equation(core.tensor(pts, dtype=core.float64)).asnumpy()
    assert np.abs(r).max() < 1e-9 * np.abs(dt.asnumpy()).max() / 2.5e8
    rb = prob.boundary_condition(core.tensor(exit_face, dtype=core.float64)).asnumpy()
    assert np.abs(rb).max() > 1.0


def test_fdtd_reference_matches_the_2d_greens_function(mad_modules):
    """``Hz`` of a point magnetic current in a uniform medium (``eps_r = mu_r = 2``) solves
    ``(1/v^2) Hz_tt - Delta Hz = eps dS/dt delta``, so (2-D wave Green's function,
    ``tau = (r / v) cosh(theta)``) ``Hz(r, t) = eps / (2 pi) int_0^acosh(v t / r)
    S'(t - (r / v) cosh theta) d theta``; the 4 mm grid agrees within 1 % (measured: 0.12 %)."""
    _, _, ref = mad_modules
    eps_r = mu_r = 2.0
    eps, v = eps_r * EPS, 1.0 / math.sqrt(eps_r * EPS * mu_r * MU)
    tau, t0 = ref.pulse_parameters(1e9)
    src = np.array([0.4975, 0.4975])
    probe = src + np.array([0.12, 0.09])  # r = 0.15 m
    r = float(np.linalg.norm(probe - src))
    times = 4e-9 * np.arange(1, 21) / 20

    def ds(t):
        return -2.0 * (t - t0) / tau**2 * math.exp(-(((t - t0) / tau) ** 2))

    exact = []
    for t in times:
        if v * t <= r:
            exact.append(0.0)
            continue
        top = math.acosh(v * t / r)
        val, _ = quad(lambda th, t=t: ds(t - r / v * math.cosh(th)), 0.0, top, limit=200)
        exact.append(eps / (2 * math.pi) * val)
    exact = np.asarray(exact)
    run = ref.solve(eps_r, mu_r, probe[None, :], times, cell=4e-3, pml=10)
    hz = run["fields"][:, 0, 2]
    assert np.abs(exact).max() > 1e-4
    assert np.linalg.norm(hz - exact) / np.linalg.norm(exact) < 0.01
