"""Every example's ``main`` runs tiny and does what it claims."""

import importlib.util
import pathlib

import numpy as np
import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _load(relpath):
    path = EXAMPLES / relpath
    spec = importlib.util.spec_from_file_location(f"example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quickstart(capsys):
    out = _load("quickstart.py").main(steps=40)
    np.testing.assert_allclose(out["grad"], out["exact_grad"], rtol=1e-5)
    assert out["final_loss"] < 0.5 * out["initial_loss"]
    text = capsys.readouterr().out
    assert "predictions match (True)" in text and "final loss" in text


def test_sgd_regression_with_model_checkpoint_and_resume():
    out = _load("optimizers/sgd_regression.py").main(
        steps=48, n_batches=4, batch_size=32, verbose=False
    )
    assert out["final_loss"] < 0.5 * out["initial_loss"]
    assert out["checkpoints"] >= 1


@pytest.mark.parametrize("optimizer", ["adam", "adamw"])
def test_adam_mlp(optimizer):
    out = _load("optimizers/adam_mlp.py").main(
        steps=40, optimizer=optimizer, batch_size=64, verbose=False
    )
    assert out["final_error"] < 0.9 * out["initial_error"]


def test_adam_mlp_rejects_unknown_optimizer():
    with pytest.raises(ValueError, match="adam"):
        _load("optimizers/adam_mlp.py").main(steps=1, optimizer="rmsprop", verbose=False)


def test_lbfgs_pinn():
    out = _load("optimizers/lbfgs_pinn.py").main(
        steps=20, adam_steps=20, n_points=16, verbose=False
    )
    assert out["final_error"] < out["adam_error"] < out["initial_error"]


@pytest.mark.parametrize("name", ["lax", "toro123", "riemann2d", "shu_osher"])
def test_mindflow_cfd_inviscid_examples_tiny(name, capsys):
    out = _load(f"mindflow/cfd/{name}/{name}.py").main(tiny=True)
    text = capsys.readouterr().out
    assert "L1(rho)" in text or "rho(y,x)" in text
    assert np.isfinite(out["pri_var"]["characteristic"] if name == "lax" else out["pri_var"]).all()


def test_mindflow_cfd_couette_tiny(capsys):
    out = _load("mindflow/cfd/couette/couette.py").main(tiny=True)
    assert "rel-L2(u)" in capsys.readouterr().out
    assert out["error"] < 5e-3  # ny = 20 at t = 0.5: 1.5e-3


def test_mindflow_cfd_taylor_green_tiny(capsys):
    out = _load("mindflow/cfd/taylor_green/taylor_green.py").main(tiny=True)
    assert "K decay rate" in capsys.readouterr().out
    assert 0.0 < out["rate"] and abs(out["rel_error"]) < 0.2  # 16^2: +9.5%
