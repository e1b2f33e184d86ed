"""mindflow.utils (configuration, logging, timing) and the re-exports mindflow.geometry and
mindflow.data."""

import inspect
import logging
import os
import pathlib
import stat

import numpy as np
import pytest

from diffsci import datasets
from diffsci.mindflow import data as mf_data
from diffsci.mindflow import geometry as mf_geometry
from diffsci.mindflow.utils import load_yaml_config, log_config, log_timer, log_utils, print_log


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    level = root.level
    yield
    handler = log_utils._handler[0]
    if handler is not None:
        root.removeHandler(handler)
        handler.close()
        log_utils._handler[0] = None
    root.setLevel(level)


def test_load_yaml_config_makes_path_keys_absolute(tmp_path, monkeypatch):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(
        "model:\n  layers: 6\n  neurons: 128\n  activation: tanh\n"
        "data:\n  root_dir: ./dataset\n  train_path: ./dataset/train.npy\n"
        "  inner:\n    ckpt_path: ckpt/model.ckpt\n    abs_path: /opt/x.npy\n"
        "optimizer:\n  learning_rate: 1.0e-4\n"
    )
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    config = load_yaml_config(str(cfg))
    assert config["model"] == {"layers": 6, "neurons": 128, "activation": "tanh"}
    assert config["optimizer"]["learning_rate"] == 1.0e-4
    assert config["data"]["root_dir"] == "./dataset"  # not a *_path key: untouched
    assert config["data"]["train_path"] == os.path.join(str(work), "dataset", "train.npy")
    assert config["data"]["inner"]["ckpt_path"] == os.path.join(str(work), "ckpt", "model.ckpt")
    assert config["data"]["inner"]["abs_path"] == "/opt/x.npy"
    assert load_yaml_config(cfg) == config  # a Path works too


def test_load_yaml_config_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"no configuration file at .*missing\.yaml"):
        load_yaml_config(tmp_path / "missing.yaml")
    bad = tmp_path / "list.yaml"
    bad.write_text("- 1\n- 2\n")
    with pytest.raises(ValueError, match=r"must hold a mapping .* got list"):
        load_yaml_config(bad)


def test_print_log_and_log_config(tmp_path, capsys, restore_logging):
    print_log("before the log file", enable_log=False)
    path = log_config(str(tmp_path / "logs"), "burgers")
    assert path == os.path.join(str(tmp_path / "logs"), "burgers.log")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    line = inspect.currentframe().f_lineno + 1
    print_log("epoch: 1 train loss:", 0.25)
    print_log("a warning", level=logging.WARNING)
    out = capsys.readouterr().out
    assert out.splitlines() == ["before the log file", "epoch: 1 train loss: 0.25", "a warning"]
    log_utils._handler[0].flush()
    lines = pathlib.Path(path).read_text().splitlines()
    assert len(lines) == 2
    # MindFlow's format: "<time> <file>[line:<n>] <LEVEL> <message>", joined with ", "
    assert lines[0].endswith(f"test_utils.py[line:{line}] INFO epoch: 1 train loss:, 0.25")
    assert " WARNING a warning" in lines[1]
    # a second log_config switches to a new file
    path2 = log_config(str(tmp_path / "logs"), "second")
    print_log("to the second")
    capsys.readouterr()
    log_utils._handler[0].flush()
    assert "to the second" in pathlib.Path(path2).read_text()
    assert "to the second" not in pathlib.Path(path).read_text()


def test_log_timer(capsys, restore_logging):
    @log_timer
    def train(a, b=2):
        """docstring kept"""
        return a + b

    assert train(1, b=5) == 6
    assert train.__doc__ == "docstring kept"
    out = capsys.readouterr().out.strip()
    assert out.startswith("End-to-End total time: ") and out.endswith("s")
    float(out[len("End-to-End total time: ") : -1])


def test_geometry_and_data_are_the_datasets_ones():
    for name in (
        "Rectangle",
        "Disk",
        "Interval",
        "TimeDomain",
        "GeometryWithTime",
        "CSGUnion",
        "Cuboid",
        "HyperCube",
        "generate_sampling_config",
        "SamplingConfig",
    ):
        assert getattr(mf_geometry, name) is getattr(datasets.geometry, name)
    assert mf_data.Dataset is datasets.Dataset
    assert mf_data.ExistedDataConfig is datasets.ExistedDataConfig


def test_mindflow_dataset_in_mindflow_style():
    # MindFlow's burgers: a space-time domain, its boundary and initial condition
    time_interval = mf_geometry.TimeDomain("time", 0.0, 1.0)
    spatial = mf_geometry.Interval("domain", -1.0, 1.0)
    region = mf_geometry.GeometryWithTime(spatial, time_interval)
    region.set_name("domain")
    region.set_sampling_config(
        mf_geometry.generate_sampling_config(
            {
                "domain": {"size": 64, "random_sampling": True, "sampler": "uniform"},
                "BC": {"size": 16, "random_sampling": True, "sampler": "uniform"},
                "IC": {"size": 16, "random_sampling": True, "sampler": "uniform"},
                "time": {"size": 64, "random_sampling": True, "sampler": "uniform"},
            }
        )
    )
    ds = mf_data.Dataset({region: ["domain", "IC", "BC"]})
    train = ds.create_dataset(
        batch_size=16, shuffle=True, prebatched_data=True, drop_remainder=True
    )
    assert train.get_dataset_size() == 4
    pde, ic, bc = next(iter(train.create_tuple_iterator()))
    assert pde.shape == (16, 2) and ic.shape == (16, 2) and bc.shape == (16, 2)
    x = np.concatenate([pde.asnumpy(), ic.asnumpy(), bc.asnumpy()])
    assert np.all((x[:, 0] >= -1) & (x[:, 0] <= 1) & (x[:, 1] >= 0) & (x[:, 1] <= 1))
    np.testing.assert_allclose(ic.asnumpy()[:, 1], 0.0)  # the initial condition is at t = 0
    np.testing.assert_allclose(np.abs(bc.asnumpy()[:, 0]), 1.0)  # the boundary is x = +-1
