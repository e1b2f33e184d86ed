"""MindFlow's burgers/kno1d and burgers/sno1d train.py run tiny after changing only their
imports and command line (writing under ``--out-dir``): KNO1D with MindFlow's prediction +
reconstruction loss, SNO1D on Chebyshev-Gauss points with gradient clipping; losses fall,
errors are finite, checkpoints and plots are written."""

import os
import pathlib
import re
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
BURGERS = ROOT / "examples" / "mindflow" / "operators" / "burgers"


def _run(folder, config, cwd):
    """train.py run from ``cwd`` with ``--out-dir out``: the config is found next to the
    script, and everything (data, checkpoints, logs, images) is written under ``cwd/out``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(ROOT)]))
    args = ["--config-file-path", config, "--out-dir", "out"]
    done = subprocess.run(
        [sys.executable, "-W", "error", str(folder / "train.py"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(p.name for p in cwd.iterdir()) == ["out"]
    assert (cwd / "out" / "images" / "result.jpg").stat().st_size > 0
    return done.stdout + done.stderr


def test_mindflow_kno1d_train_py_runs_tiny(tmp_path):
    text = _run(BURGERS / "kno1d", "./configs/kno1d_tiny.yaml", tmp_path)
    rows = re.findall(
        r"recons loss: ([-\d.e+]+) pred loss: ([-\d.e+]+) train loss: ([-\d.e+]+)", text
    )
    assert len(rows) == 2
    recons, pred, total = (np.array([float(r[k]) for r in rows]) for k in range(3))
    # MindFlow's weighting: 5 x prediction MSE + 0.5 x reconstruction MSE (epoch means)
    np.testing.assert_allclose(total, 5 * pred + 0.5 * recons, rtol=1e-4)
    assert total[1] < total[0]
    evals = [float(v) for v in re.findall(r"relative pred loss: ([-\d.e+]+)", text)]
    assert len(evals) == 2 and all(np.isfinite(evals))
    out = tmp_path / "out"
    assert (out / "summary_dir" / "kno1d.ckpt").exists()
    # MindFlow's shapes: inputs [N, s, 1], labels [N, s] at s = 8192 / step points
    assert np.load(out / "dataset" / "train" / "inputs.npy").shape == (16, 64, 1)
    assert np.load(out / "dataset" / "test" / "label.npy").shape == (8, 64)


def test_mindflow_sno1d_train_py_runs_tiny(tmp_path):
    text = _run(BURGERS / "sno1d", "./configs/sno1d_tiny.yaml", tmp_path)
    losses = [float(v) for v in re.findall(r"train loss: ([-\d.e+]+)", text)]
    assert len(losses) == 2 and losses[1] < losses[0]
    grid = re.findall(r"on Gauss grid: Tensor\(([-\d.e+]+).*on regular grid: ([-\d.e+]+)", text)
    assert len(grid) == 2 and all(np.isfinite([float(a) for g in grid for a in g]))
    out = tmp_path / "out"
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == [
        "SNO1D_epoch2.ckpt",
        "SNO1D_epoch4.ckpt",
    ]
    assert np.load(out / "dataset" / "train" / "inputs_interp.npy").shape == (20, 1, 1, 64)
