"""examples/mindflow/pinn/burgers: the Trainer path reaches rel-L2 <= 5e-2 vs Cole-Hopf in a short
fixed budget, its network meets the initial and boundary conditions exactly, and MindFlow's
train.py runs tiny after changing only its imports and its command line (writing under
``--out-dir``)."""

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from diffsci import core

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "mindflow" / "pinn" / "burgers"

# The CI budget: float64, hard constraints, 1300 Sobol' points, Adam then L-BFGS.
BUDGET = {
    "adam_steps": 200,
    "lbfgs_steps": 2300,
    "n_domain": 1000,
    "n_shock": 300,
    "layers": 4,
    "neurons": 20,
    "eval_every": 500,
}


def _load():
    spec = importlib.util.spec_from_file_location(
        "example_burgers_pinn", EXAMPLE / "burgers_pinn.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_burgers_pinn_reaches_5e_2_in_a_short_budget(tmp_path):
    out = _load().main(**BUDGET, out_dir=tmp_path, verbose=False)
    assert out["error"] <= 5e-2
    # the error the trainer reports at the end is the final model's error
    assert out["history"]["error_step"][-1] == BUDGET["adam_steps"] + BUDGET["lbfgs_steps"]
    assert out["history"]["error"][-1] == pytest.approx(out["error"], rel=1e-9)
    assert out["history"]["error"][0] > out["error"]
    assert (tmp_path / "burgers.png").stat().st_size > 0
    assert (tmp_path / "loss.png").stat().st_size > 0


def test_burgers_pinn_conditions_hold_exactly_and_residual_matches_fd():
    example = _load()
    core.set_seed(3)
    model = example.build_model(4, 8, core.float64)
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 16)
    t = rng.uniform(0, 1, 16)

    def u(points):
        return model(core.tensor(points, dtype=core.float64)).asnumpy()[:, 0]

    np.testing.assert_allclose(u(np.stack([x, 0 * x], 1)), -np.sin(np.pi * x), atol=1e-14)
    np.testing.assert_allclose(u(np.stack([0 * t - 1, t], 1)), 0.0, atol=1e-14)
    np.testing.assert_allclose(u(np.stack([0 * t + 1, t], 1)), 0.0, atol=1e-14)

    pts = np.stack([x, t], 1)
    r = example.burgers_residual(model, core.tensor(pts, dtype=core.float64)).asnumpy()[:, 0]
    h = 1e-4
    ex, et = np.array([h, 0.0]), np.array([0.0, h])
    u0 = u(pts)
    u_t = (u(pts + et) - u(pts - et)) / (2 * h)
    u_x = (u(pts + ex) - u(pts - ex)) / (2 * h)
    u_xx = (u(pts + ex) - 2 * u0 + u(pts - ex)) / h**2
    np.testing.assert_allclose(r, u_t + u0 * u_x - 0.01 / np.pi * u_xx, rtol=1e-5, atol=1e-6)


def test_burgers_pinn_tiny_runs():
    out = _load().main(tiny=True, make_plot=False, verbose=False)
    assert np.isfinite(out["error"]) and out["pred"].shape == (256, 100)
    assert out["history"]["total"][-1] < out["history"]["total"][0]


def test_mindflow_train_py_runs_tiny(tmp_path):
    # the configs are copied to the working directory (found there first); the outputs go
    # under --out-dir
    shutil.copytree(EXAMPLE / "configs", tmp_path / "configs")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(EXAMPLE), str(ROOT)]))
    done = subprocess.run(
        [
            sys.executable,
            "-W",
            "error",
            str(EXAMPLE / "train.py"),
            "--config-file-path",
            "./configs/burgers_tiny.yaml",
            "--out-dir",
            "out",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    text = done.stdout + done.stderr
    losses = [float(v) for v in re.findall(r"train loss: Tensor\(([-\d.e+]+)", text)]
    assert len(losses) == 2 and all(np.isfinite(losses)) and losses[1] < losses[0]
    errors = [float(v) for v in re.findall(r"l2_error:\s+([-\d.e+]+)", text)]
    assert len(errors) == 2 and all(0 < e < 2 for e in errors)
    out = tmp_path / "out"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["configs", "out"]
    assert (out / "images" / "3-result.jpg").stat().st_size > 0
    # the test set written in Raissi's Burgers.npz layout: usol(x, t = 0) = -sin(pi x)
    data = np.load(out / "dataset" / "Burgers.npz")
    assert data["x"].shape == (256, 1) and data["t"].shape == (100, 1)
    assert data["usol"].shape == (256, 100)
    np.testing.assert_allclose(data["usol"][:, 0], -np.sin(np.pi * data["x"][:, 0]), atol=1e-14)
