"""examples/mindelec/pinn/time_domain_maxwell: the FDTD reference against the 2D Green's
function of the wave equation and against itself on a finer grid, the PINN's residuals on an
exact plane wave, the tiny training run (loss falls, fields and shapes consistent), the ported
``train.py``, and the bad inputs (source outside the domain, no points in the source region,
mismatched field counts)."""

import copy
import importlib
import math
import pathlib
import sys

import numpy as np
import pytest
import yaml

from diffsci import core
from diffsci.core import ops

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "mindelec" / "pinn" / "time_domain_maxwell"
CONFIG = yaml.safe_load((EXAMPLE / "config.yaml").read_text())


@pytest.fixture
def example():
    """The example's ``src`` package and scripts, imported with its folder first on the path
    (other examples have a ``src`` package too)."""
    saved = {k: v for k, v in sys.modules.items() if k == "src" or k.startswith("src.")}
    for k in saved:
        del sys.modules[k]
    sys.path.insert(0, str(EXAMPLE))
    try:
        src = importlib.import_module("src")
        script = importlib.import_module("time_domain_maxwell")
        train = importlib.import_module("train")
        yield src, script, train
    finally:
        sys.path.remove(str(EXAMPLE))
        for k in [k for k in sys.modules if k == "src" or k.startswith("src.")]:
            del sys.modules[k]
        for name in ("time_domain_maxwell", "train"):
            sys.modules.pop(name, None)
        sys.modules.update(saved)


def _hz_greens(r, t, eps0, c0):
    """Hz of a unit magnetic line current with the config's Gaussian pulse ``g(t)``: the 2D
    Green's function of ``Hz_tt - c^2 lap Hz = g'(t) delta(x) / mu0``,
    ``Hz = eps0 / (2 pi) * int_{r/c}^{t} g'(t - s) / sqrt(s^2 - (r/c)^2) ds``, by quadrature in
    ``s = (r/c) cosh(u)`` (smooth integrand)."""
    tau = math.sqrt(2.3) / (math.pi * CONFIG["src_frq"])
    t0 = 3.65 * tau
    a = r / c0
    out = np.zeros_like(t)
    for i, ti in enumerate(t):
        if ti > a:
            u = np.linspace(0.0, np.arccosh(ti / a), 4001)
            tt = ti - a * np.cosh(u) - t0
            gdot = -2.0 * tt / tau**2 * np.exp(-((tt / tau) ** 2))
            out[i] = eps0 / (2 * np.pi) * np.trapezoid(gdot, u)
    return out


def test_fdtd_reference_converges_to_the_greens_function(example):
    src, _, _ = example
    from diffsci.mindelec.fdtd import C0, EPS0

    kw = {"n_times": 41, "n_points": 11}
    coarse = src.maxwell_reference(CONFIG, cells=100, **kw)
    fine = src.maxwell_reference(CONFIG, cells=200, **kw)
    assert fine["ex"].shape == (41, 11, 11) and fine["t"][-1] == pytest.approx(4e-9)
    r = math.hypot(0.7 - CONFIG["src_pos"][0], 0.5 - CONFIG["src_pos"][1])
    exact = _hz_greens(r, fine["t"], EPS0, C0)  # the probe (0.7, 0.5): index (7, 5)
    err = [
        np.linalg.norm(ref["hz"][:, 7, 5] - exact) / np.linalg.norm(exact) for ref in (coarse, fine)
    ]
    assert err[1] < 5e-3 and err[1] < err[0] / 4, err
    # self-convergence: the coarse-fine difference bounds the fine grid's error
    self_diff = np.linalg.norm(coarse["hz"] - fine["hz"]) / np.linalg.norm(fine["hz"])
    assert err[1] < self_diff < 0.1
    # symmetry of the (almost) centred source: Ex(x, y) = -Ey(y, x) up to the 0.0025 offset
    np.testing.assert_allclose(
        fine["ex"], -np.swapaxes(fine["ey"], 1, 2), atol=0.05 * np.abs(fine["ex"]).max()
    )


def _plane_wave(config):
    """A model (x, y, t) -> scaled (Ex, Ey, Hz) of the source-free plane wave travelling +x:
    Hz = cos(k x - w t), Ey = eta0 Hz, Ex = 0."""
    from diffsci.mindelec.fdtd import C0, ETA0

    k = 2 * math.pi * 1e9 / C0
    s_ex, s_ey, s_hz = config["output_scale"]

    def model(p):
        phase = k * p[:, 0:1] - k * C0 * p[:, 2:3]
        hz = ops.cos(phase)
        return ops.concat([0.0 * hz / s_ex, ETA0 * hz / s_ey, hz / s_hz], axis=1)

    return model


def test_residuals_vanish_on_an_exact_plane_wave(example):
    src, _, _ = example
    model = _plane_wave(CONFIG)
    prob = src.Maxwell2DMur(model, CONFIG, domain_name="d", bc_name="b", ic_name="i")
    rng = np.random.default_rng(0)
    # equation points away from the source disc (the source is ~0 there)
    pts = np.column_stack(
        [rng.uniform(0.7, 1.0, 64), rng.uniform(0, 1, 64), rng.uniform(0, 4e-9, 64)]
    )
    x = core.tensor(pts, dtype=core.float64)
    r = prob.governing_equation(model(x), d=x).asnumpy()
    scale = 2 * math.pi * 1e9 / CONFIG["input_scale"][2] / CONFIG["output_scale"][2]  # |dHz/dt|
    assert r.shape == (64, 3) and np.abs(r).max() < 1e-9 * scale
    # the wave leaves through x = 1: Mur's residual of that face vanishes, that of x = 0 does not
    right = pts.copy()
    right[:, 0] = 1.0
    left = pts.copy()
    left[:, 0] = 0.0
    rb = prob.boundary_condition(b=core.tensor(right, dtype=core.float64)).asnumpy()
    lb = prob.boundary_condition(b=core.tensor(left, dtype=core.float64)).asnumpy()
    assert rb.shape == (64, 4) and np.abs(rb).max() < 1e-9 * np.abs(lb).max()
    assert np.abs(lb[:, 0]).max() > 1.0 and np.all(lb[:, 1:] == 0)


def test_tiny_training_run(example, tmp_path):
    _, script, _ = example
    res = script.main(tiny=True, out_dir=tmp_path)
    losses = res["losses"]
    assert len(losses) == script.TINY["epochs"] and all(np.isfinite(losses))
    assert losses[-1] < losses[0]
    assert set(res["l2"]) == {"ex", "ey", "hz"} and all(np.isfinite(list(res["l2"].values())))
    n_t = script.TINY["ref_times"]
    assert np.asarray(res["l2_over_time"]).shape == (n_t, 3)
    assert res["n_src_points"] > 0
    for name in res["plots"]:
        assert (tmp_path / name).stat().st_size > 0
    assert (tmp_path / f"reference_cells{script.TINY['ref_cells']}.h5").exists()
    assert res["late_time_start"] is None and res["late_time_fraction"] is None
    # continuing from the saved network and MTL weights starts where the first run ended (here
    # with late-weighted times, which the results record)
    again = script.main(
        tiny=True,
        out_dir=tmp_path,
        plots=False,
        load_ckpt=tmp_path / "maxwell_pinn.ckpt.h5",
        milestones=[1],
        late_time_start=3e-9,
        late_time_fraction=0.25,
    )
    assert again["losses"][0] < losses[0]
    assert again["milestones"] == [1]
    assert again["late_time_start"] == 3e-9 and again["late_time_fraction"] == 0.25


@pytest.mark.parametrize("milestones", [[2, 1], [0], [3]])
def test_milestones_outside_the_run_are_errors(example, tmp_path, milestones):
    _, script, _ = example
    assert script.TINY["epochs"] == 3
    with pytest.raises(
        ValueError, match=r"milestones .* must be increasing epochs inside \(0, 3\)"
    ):
        script.main(tiny=True, out_dir=tmp_path, milestones=milestones)
    assert not list(tmp_path.iterdir())  # rejected before anything is written


def test_long_runs_save_a_checkpoint_every_eval_period(example, tmp_path, monkeypatch):
    """A run stopped before its end can be continued: the network and MTL weights are written
    every ``eval_every`` epochs, not only at the end."""
    _, script, _ = example
    saved, real_save = [], core.save_checkpoint

    def spy(cells, path, *args, **kwargs):
        saved.append((len(saved), pathlib.Path(path).name, len(cells)))
        return real_save(cells, path, *args, **kwargs)

    monkeypatch.setattr(core, "save_checkpoint", spy)
    script.main(tiny=True, out_dir=tmp_path, plots=False, eval_every=1)
    # epochs 1, 2, 3 periodically, then the final save
    assert [name for _, name, _ in saved] == ["maxwell_pinn.ckpt.h5"] * (script.TINY["epochs"] + 1)
    assert all(n == 2 for _, _, n in saved)  # network and MTL weights


def test_ported_train_script_runs_tiny(example, tmp_path):
    _src, _, train = example
    from src.sampling_config import (
        bc_sampling_config,
        no_src_sampling_config,
        scaled,
        src_sampling_config,
    )

    config = dict(CONFIG, train_epoch=2, train_batch_size=32, layers=3, neurons=8, num_scales=2)
    config["save_ckpt_path"] = str(tmp_path / "ckpt")
    sampling = [
        scaled(c, 64) for c in (src_sampling_config, no_src_sampling_config, bc_sampling_config)
    ]
    _solver, monitor = train.train(config, sampling)
    assert len(monitor.losses) == 2 and all(np.isfinite(monitor.losses))
    assert list((tmp_path / "ckpt").glob("ckpt_maxwell_frq1e9-*.ckpt.h5"))


def test_a_wider_src_sampling_disc_moves_points_into_the_ring(example):
    """``src_sampling_radius`` widens the disc of the ``src`` sub-dataset (and only the
    sampling): its points fill the wider disc, the ``no_src`` points stay outside it."""
    src, _, _ = example
    from src.sampling_config import no_src_sampling_config, scaled, src_sampling_config

    center = np.asarray(CONFIG["src_pos"])

    def radii(config):
        ds = src.create_random_dataset(
            config, scaled(src_sampling_config, 4000), scaled(no_src_sampling_config, 4000)
        )
        ds.create_dataset(batch_size=4000, shuffle=False, prebatched_data=True)
        out = {}
        for sub in ds.all_datasets:
            pts = np.asarray(sub.data[0]).reshape(-1, 3)
            out[sub.name] = np.linalg.norm(pts[:, :2] - center, axis=1)
        return out

    mindelec = radii(CONFIG)
    assert mindelec["src_domain"].max() <= CONFIG["src_radius"] * (1 + 1e-6)
    wide = radii(dict(CONFIG, src_sampling_radius=0.03))
    r_src, r_rest = wide["src_domain"], wide["no_src_domain"]
    assert r_src.max() <= 0.03 * (1 + 1e-6) and r_rest.min() >= 0.03 * (1 - 1e-6)
    # uniform in the disc: the inner disc of the source holds (0.01 / 0.03)^2 of the points
    inner = np.mean(r_src <= CONFIG["src_radius"])
    assert abs(inner - 1 / 9) < 0.03
    assert src.src_sampling_radius(CONFIG) == CONFIG["src_radius"]


@pytest.mark.parametrize(
    "radius, match", [(0.005, "must be >= src_radius=0.01"), (0.6, "crosses the domain")]
)
def test_a_bad_src_sampling_radius_is_an_error(example, tmp_path, radius, match):
    src, script, _ = example
    with pytest.raises(ValueError, match=rf"src_sampling_radius={radius} .*{match}"):
        src.create_random_dataset(dict(CONFIG, src_sampling_radius=radius))
    with pytest.raises(ValueError, match=match):
        script.main(tiny=True, out_dir=tmp_path, src_sampling_radius=radius)
    assert not list(tmp_path.iterdir())


def test_late_time_sampling_moves_the_stated_fraction_of_no_src_and_bc_times(example):
    """``late_time_start``/``late_time_fraction`` give the ``no_src`` and ``bc`` times the
    mixture density ``(1 - f) / T`` early plus ``f / (T - t_late)`` late; the ``src`` times stay
    uniform, and without the keys every time is uniform (MindElec's)."""
    src, _, _ = example
    from src.sampling_config import (
        bc_sampling_config,
        no_src_sampling_config,
        scaled,
        src_sampling_config,
    )

    n, t_end = 20000, CONFIG["range_t"]

    def late_share(config):
        ds = src.create_random_dataset(
            config,
            *[
                scaled(c, n)
                for c in (src_sampling_config, no_src_sampling_config, bc_sampling_config)
            ],
        )
        ds.create_dataset(batch_size=n, shuffle=False, prebatched_data=True)
        out = {}
        for sub in ds.all_datasets:
            t = np.asarray(sub.data[0]).reshape(-1, 3)[:, 2]
            if sub.name.endswith("IC"):
                assert np.all(t == 0.0)
                continue
            assert t.min() >= 0.0 and t.max() <= t_end * (1 + 1e-6)
            out[sub.name] = (np.mean(t >= 3e-9), np.mean(t < 1e-9))
        return out

    sigma = 3.0 / math.sqrt(n)  # three binomial standard deviations (p <= 0.5)
    uniform = late_share(CONFIG)
    for name in ("src_domain", "no_src_domain", "bc_BC"):
        assert abs(uniform[name][0] - 0.25) < sigma and abs(uniform[name][1] - 0.25) < sigma
    late = late_share(dict(CONFIG, late_time_start=3e-9, late_time_fraction=0.25))
    assert abs(late["src_domain"][0] - 0.25) < sigma
    for name in ("no_src_domain", "bc_BC"):
        # after 3 ns: 0.75 * 1/4 of the uniform part plus all of the moved quarter
        assert abs(late[name][0] - (0.75 * 0.25 + 0.25)) < sigma
        assert abs(late[name][1] - 0.75 * 0.25) < sigma  # the first ns keeps its uniform share
    # the warp is the identity at f = 0 and maps [0, T] onto itself, monotonically
    t = np.linspace(0.0, t_end, 101)
    same = src.LateWeightedTimeDomain("time", 0.0, t_end, 3e-9, 0.0)
    np.testing.assert_allclose(same.warp(t), t, rtol=0, atol=1e-24)
    warped = src.LateWeightedTimeDomain("time", 0.0, t_end, 3e-9, 0.25).warp(t)
    assert warped[0] == 0.0 and np.isclose(warped[-1], t_end) and np.all(np.diff(warped) > 0)


@pytest.mark.parametrize(
    "start, fraction, match",
    [
        (5e-9, 0.25, r"late_time_start=5e-09 must lie inside the time interval"),
        (3e-9, 1.0, r"late_time_fraction=1.0 must lie in \[0, 1\)"),
        (3e-9, None, "give both or neither"),
    ],
)
def test_bad_late_time_sampling_is_an_error(example, tmp_path, start, fraction, match):
    src, script, _ = example
    with pytest.raises(ValueError, match=match):
        src.create_random_dataset(dict(CONFIG, late_time_start=start, late_time_fraction=fraction))
    with pytest.raises(ValueError, match=match):
        script.main(tiny=True, out_dir=tmp_path, late_time_start=start, late_time_fraction=fraction)
    assert not list(tmp_path.iterdir())


def test_source_outside_the_domain_is_an_error(example):
    src, _, _ = example
    bad = dict(CONFIG, src_pos=[1.2, 0.5])
    with pytest.raises(ValueError, match=r"src_pos=\[1.2, 0.5\] .* not inside the domain"):
        src.create_random_dataset(bad)
    edge = dict(CONFIG, src_pos=[0.995, 0.5])  # the disc crosses x = 1
    with pytest.raises(ValueError, match="its disc must fit"):
        src.Maxwell2DMur(lambda x: x, edge)


def test_no_points_in_the_source_region_is_an_error(example):
    src, _, _ = example
    from src.sampling_config import bc_sampling_config, no_src_sampling_config, scaled

    no_domain = {"IC": {"size": 64}, "time": {"size": 64}}
    with pytest.raises(ValueError, match="puts no equation points in the source disc"):
        src.create_random_dataset(CONFIG, no_domain)
    # a dataset whose equation points all miss the disc: only the square less the disc
    from diffsci.mindelec.data import Dataset
    from diffsci.mindelec.geometry import (
        Disk,
        GeometryWithTime,
        Rectangle,
        TimeDomain,
        create_config_from_edict,
    )

    ring = Rectangle("rect", [0.0, 0.0], [1.0, 1.0]) - Disk("src", CONFIG["src_pos"], 0.02)
    region = GeometryWithTime(ring, TimeDomain("time", 0.0, 4e-9))
    region.set_name("no_src")
    region.set_sampling_config(create_config_from_edict(scaled(no_src_sampling_config, 256)))
    boundary = GeometryWithTime(
        Rectangle("rect", [0.0, 0.0], [1.0, 1.0]), TimeDomain("time", 0.0, 4e-9)
    )
    boundary.set_name("bc")
    boundary.set_sampling_config(create_config_from_edict(scaled(bc_sampling_config, 256)))
    data = Dataset({region: ["domain", "IC"], boundary: ["BC"]})
    data.create_dataset(batch_size=64, prebatched_data=True, drop_remainder=True, seed=0)
    with pytest.raises(
        ValueError, match=r"none of the 256 equation points lies in the source disc"
    ):
        src.check_source_sampling(data, CONFIG)


def test_mismatched_field_counts_are_errors(example):
    src, _, _ = example
    from diffsci.mindelec.architecture import MultiScaleFCCell
    from diffsci.mindelec.loss import Constraints, NetWithLoss

    two = MultiScaleFCCell(3, 2, layers=3, neurons=8, num_scales=1)
    with pytest.raises(
        ValueError, match=r"network has 2 output fields .* need 3 \['ex', 'ey', 'hz'\]"
    ):
        src.Maxwell2DMur(two, CONFIG)
    # a plain function (no out_channel attribute) is caught when the loss is evaluated
    from src.sampling_config import (
        bc_sampling_config,
        no_src_sampling_config,
        scaled,
        src_sampling_config,
    )

    cfg = copy.deepcopy(CONFIG)
    data = src.create_random_dataset(
        cfg,
        *[scaled(c, 32) for c in (src_sampling_config, no_src_sampling_config, bc_sampling_config)],
    )
    train = data.create_dataset(batch_size=16, prebatched_data=True, drop_remainder=True, seed=0)

    def four_fields(x):
        return two(x)[:, 0:1] * ops.ones((1, 4))

    probs = {
        s.name: src.Maxwell2DMur(
            four_fields, cfg, s.name + "_points", s.name + "_points", None, s.name + "_points"
        )
        for s in data.all_datasets
    }
    net = MultiScaleFCCell(3, 4, layers=3, neurons=8, num_scales=1)
    batch = next(iter(train.create_tuple_iterator(num_epochs=1)))
    with pytest.raises(ValueError, match=r"network gives 4 output fields .* written for 3"):
        NetWithLoss(net, Constraints(data, probs))(*batch)
