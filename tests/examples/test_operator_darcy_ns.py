"""examples/mindflow/operators/{darcy,navier_stokes}: the tiny modes train (the loss falls),
report errors of the right shapes, write their data, checkpoint and plots, and name the
argument to change on bad input; MindFlow's fno3d and fno2d train.py run tiny after changing only
their imports and command line (writing under ``--out-dir``)."""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

OPERATORS = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mindflow" / "operators"


def _load(relpath):
    path = OPERATORS / relpath
    spec = importlib.util.spec_from_file_location(f"example_operator_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _falls(history, factor):
    losses = history["epoch_loss"]
    return losses[-1] < factor * losses[0]


def test_darcy_fno2d_tiny_trains_and_writes_data_checkpoint_and_plots(tmp_path, capsys):
    out = _load("darcy/darcy.py").main(tiny=True, data=tmp_path / "data", out_dir=tmp_path)
    assert _falls(out["history"], 0.7), out["history"]["epoch_loss"]
    assert np.isfinite(out["relative_l2"]) and out["epochs"] == 8
    assert out["trainer"].train_data.spatial_shape == (17, 17)
    assert len(out["trainer"].test_data) == 4
    assert list((tmp_path / "data").glob("darcy_r17_s17_n12_seed0.h5"))
    for name in ("checkpoints_fno2d/operator.ckpt.h5", "darcy_fno2d_loss.png"):
        assert (tmp_path / name).exists(), name
    assert "Darcy s=17 fno2d: 8 train / 4 test, 8 of 8 epochs" in capsys.readouterr().out


def test_darcy_unet2d_tiny_trains(tmp_path):
    out = _load("darcy/darcy.py").main(
        "unet2d", tiny=True, data=tmp_path, plot=False, verbose=False
    )
    assert _falls(out["history"], 0.7), out["history"]["epoch_loss"]


def test_darcy_time_budget_stops_after_the_first_epoch(tmp_path):
    out = _load("darcy/darcy.py").main(
        tiny=True, data=tmp_path, time_budget=1e-3, plot=False, verbose=False
    )
    assert out["epochs"] == 1


def test_darcy_rejects_a_solve_grid_that_does_not_hold_the_training_grid(tmp_path):
    with pytest.raises(ValueError, match="solve_resolution - 1"):
        _load("darcy/darcy.py").main(
            tiny=True, solve_resolution=20, data=tmp_path, plot=False, verbose=False
        )


@pytest.mark.parametrize("model", ["fno2d", "fno3d"])
def test_navier_stokes_tiny_reports_the_error_per_rolled_out_step(model, tmp_path):
    # fno2d trains on one-step windows every other frame; its test error is the 4-step rollout
    out = _load("navier_stokes/navier_stokes.py").main(
        model,
        tiny=True,
        out_dir=tmp_path,
        plot=model == "fno2d",
        verbose=False,
        train_rollout=1 if model == "fno2d" else None,
        stride=2,
    )
    assert _falls(out["history"], 0.8), out["history"]["epoch_loss"]
    errors = out["rollout_relative_l2"]
    assert errors.shape == (4,) and np.all(np.isfinite(errors))
    assert out["mean"] == pytest.approx(errors.mean())
    assert list(tmp_path.glob("ns_nu0.001_s16_t8_scale686_n8_seed0.h5"))
    if model == "fno2d":
        assert (tmp_path / "ns_fno2d_sample.png").exists()


def test_navier_stokes_reads_several_files_and_rejects_too_few_frames(tmp_path):
    ns = _load("navier_stokes/navier_stokes.py")
    ns.main(tiny=True, out_dir=tmp_path, plot=False, verbose=False, epochs=1)
    (tmp_path / "ns_nu0.001_s16_t8_scale686_n8_seed0.h5").rename(tmp_path / "part1.h5")
    out = ns.main(tiny=True, data=str(tmp_path / "part*.h5"), plot=False, verbose=False, epochs=1)
    assert out["n_train"] == 6
    with pytest.raises(ValueError, match="t_in \\+ t_out = 10"):
        ns.main(tiny=True, data=str(tmp_path / "part*.h5"), t_out=6, plot=False, verbose=False)
    with pytest.raises(ValueError, match="train_rollout must be in \\[1, t_out=4\\]"):
        ns.main(tiny=True, data=str(tmp_path / "part*.h5"), train_rollout=5, verbose=False)
    with pytest.raises(FileNotFoundError, match="--data"):
        ns.main(tiny=True, data=str(tmp_path / "none*.h5"), plot=False, verbose=False)


def test_mindflow_fno3d_train_py_runs_tiny_on_prepared_data(tmp_path):
    folder = OPERATORS / "navier_stokes" / "fno3d"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(OPERATORS.parents[2])]))
    # the config is found next to the scripts; both work in --out-dir
    config = ["--config-file-path", "./configs/fno3d_tiny.yaml", "--out-dir", "out"]
    for script, extra in (
        ("prepare_data.py", ["--n-train", "4", "--n-test", "2"]),
        ("train.py", []),
    ):
        done = subprocess.run(
            [sys.executable, "-W", "error", str(folder / script), *config, *extra],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
    out = tmp_path / "out"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert np.load(out / "dataset_tiny" / "train_a.npy").shape == (4, 16, 16, 4)
    assert np.load(out / "dataset_tiny" / "test_u.npy").shape == (2, 16, 16, 4)
    text = done.stdout + done.stderr
    loss = float(re.search(r"epoch: 1 train loss: ([-\d.e+]+)", text).group(1))
    error = float(re.search(r"mean rms_error: Tensor\(([-\d.e+]+)", text).group(1))
    assert np.isfinite(loss) and 0 < error < 1, (loss, error)
    assert list(out.glob("summary_tiny/*/ckpt/FNO3D_time*"))


def test_mindflow_fno2d_train_py_runs_tiny_on_prepared_data(tmp_path):
    folder = OPERATORS / "navier_stokes" / "fno2d"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(OPERATORS.parents[2])]))
    config = ["--config-file-path", "./configs/fno2d_tiny.yaml", "--out-dir", "out"]
    # prepare_data.py in MindFlow's snake_case spellings: still accepted
    data = ["--n_train", "4", "--n_test", "2", "--nu", "1e-3", "--solve_resolution", "16"]
    for script, extra in (("prepare_data.py", [*data, "--dt", "0.02"]), ("train.py", [])):
        done = subprocess.run(
            [sys.executable, "-W", "error", str(folder / script), *config, *extra],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
    out = tmp_path / "out"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert np.load(out / "dataset_tiny" / "train" / "inputs.npy").shape == (76, 16, 16, 1, 1)
    assert np.load(out / "dataset_tiny" / "test" / "label.npy").shape == (2, 19, 16, 16, 1, 1)
    text = done.stdout + done.stderr
    losses = [float(v) for v in re.findall(r"train loss: ([-\d.e+]+)", text)]
    error = float(re.search(r"mean rel_rmse_error: ([-\d.e+]+)", text).group(1))
    assert len(losses) == 2 and losses[1] < losses[0], losses
    assert np.isfinite(error) and error > 0
    assert list(out.glob("checkpoints_tiny/FNO2D_time_epoch2*"))
