"""examples/mindflow/operators/burgers, tiny: the data are generated once and cached, FNO1D's
loss falls, a model trained on one grid evaluates on a finer one, KNO1D and DeepONet train on
the same data, the plots are written, and DeepONet names the argument to change on a grid it
was not built for; MindFlow's fno1d train.py runs tiny after changing only its imports and its
command line (writing under ``--out-dir``)."""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from diffsci import core

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "mindflow" / "operators" / "burgers" / "burgers.py"
TINY = {"n_train": 16, "n_test": 4, "batch_size": 4, "solver_resolution": 64, "verbose": False}


def _load():
    spec = importlib.util.spec_from_file_location("example_operator_burgers", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example():
    return _load()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("burgers_data")


def test_fno1d_tiny_trains_and_evaluates_on_a_finer_grid(example, data_dir, tmp_path):
    out = example.main(
        "fno1d",
        epochs=4,
        train_resolution=32,
        eval_resolutions=[32, 64],
        data_dir=data_dir,
        out_dir=tmp_path,
        **TINY,
    )
    losses = out["history"]["epoch_loss"]
    assert len(losses) == 4 and losses[-1] < losses[0]
    assert set(out["errors"]) == {32, 64}
    assert all(np.isfinite(e) and 0 < e < 2 for e in out["errors"].values())
    assert (tmp_path / "fno1d_samples.png").stat().st_size > 0
    assert (tmp_path / "fno1d_loss.png").stat().st_size > 0
    # the cache: one PDEBench file of u(., 0) and u(., 1), reused by the next run
    (cached,) = data_dir.glob("*.h5")
    stamp = cached.stat().st_mtime_ns
    u0, u1 = example.burgers_data(20, 64, folder=data_dir, verbose=False)
    assert u0.shape == u1.shape == (20, 64) and cached.stat().st_mtime_ns == stamp
    # the viscous decay: ||u(., 1)|| < ||u(., 0)|| for every sample
    assert np.all(np.linalg.norm(u1, axis=1) < np.linalg.norm(u0, axis=1))


@pytest.mark.parametrize("model", ["kno1d", "deeponet"])
def test_kno1d_and_deeponet_tiny_losses_fall(example, data_dir, model):
    out = example.main(model, epochs=3, train_resolution=64, data_dir=data_dir, plot=False, **TINY)
    losses = out["history"]["epoch_loss"]
    assert losses[-1] < losses[0]
    assert list(out["errors"]) == [64] and np.isfinite(out["errors"][64])


def test_models_map_grid_to_grid_and_deeponet_rejects_another_grid(example):
    core.set_seed(0)
    x = core.Tensor(np.zeros((2, 32, 1), np.float32))
    for name in example.MODELS:
        config = example.load_yaml_config(example.HERE / "configs" / f"{name}.yaml")
        net = example.build_model(name, config, 32)
        assert net(x).shape == (2, 32, 1), name
    with pytest.raises(ValueError, match=r"branch_layers\[0\] to 32"):
        example.DeepONetOnGrid(32, [64, 8, 8], [1, 8, 8])
    with pytest.raises(ValueError, match="does not divide solver_resolution"):
        example.main("fno1d", train_resolution=48, **TINY)


def test_mindflow_fno1d_train_py_runs_tiny(tmp_path):
    # the config is found next to the script; everything is written under --out-dir
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(EXAMPLE.parent), str(ROOT)]))
    done = subprocess.run(
        [
            sys.executable,
            "-W",
            "error",
            str(EXAMPLE.parent / "train.py"),
            "--config-file-path",
            "./configs/fno1d_tiny.yaml",
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
    losses = [float(v) for v in re.findall(r"train loss: ([-\d.e+]+)", text)]
    assert len(losses) == 2 and all(np.isfinite(losses)) and losses[1] < losses[0]
    errors = [float(v) for v in re.findall(r"mean rms_error: Tensor\(([-\d.e+]+)", text)]
    assert len(errors) == 2 and all(np.isfinite(errors))
    out = tmp_path / "out"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert sorted(p.name for p in (out / "checkpoints").iterdir())[:2] == [
        "FNO1D_epoch1.ckpt",  # MindSpore's rule: save_checkpoint appends .ckpt
        "FNO1D_epoch2.ckpt",
    ]
    # MindFlow's files, written from the generator: u(., 0) -> u(., 1) at 8192 / 128 points
    for part, n in (("train", 16), ("test", 4)):
        for name in ("inputs", "label"):
            assert np.load(out / "dataset" / part / f"{name}.npy").shape == (n, 64, 1)
