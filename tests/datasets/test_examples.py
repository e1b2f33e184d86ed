"""examples/datasets/ scripts run tiny and do what they claim."""

import importlib.util
import pathlib

import h5py
import numpy as np

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "datasets"


def _load(name):
    path = EXAMPLES / name
    spec = importlib.util.spec_from_file_location(f"example_datasets_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_burgers_dataset_tiny(tmp_path, capsys):
    out = _load("burgers_dataset.py").main(tiny=True, out_dir=tmp_path)
    assert out["tensor_shape"] == (4, 3, 32)
    assert out["read_back_equal"]
    assert out["batch_shapes"] == [((2, 32), (2, 32))] * 2  # 4 samples, batches of 2
    assert out["cole_hopf_error"] < 1e-6
    with h5py.File(out["path"]) as f:
        assert f["tensor"].shape == (4, 3, 32)
        np.testing.assert_allclose(f["t-coordinate"][...], [0.0, 0.5, 1.0])
    assert out["plot"].stat().st_size > 1000
    text = capsys.readouterr().out
    assert "read back equals generated: True" in text and "Cole-Hopf check" in text
