"""bench.protenix_pred --tiny: the end-to-end ``protenix pred`` comparison at tiny sizes.

Our half runs without torch (a random HDF5 checkpoint written by ``core.save_checkpoint``,
loaded by ``protenix pred --weights``); the comparison with PyTorch Protenix's runner path
runs only where the reference (``.ref/protenix-2.0.0``, torch, rdkit) is installed."""

import pytest

from bench import protenix_pred as bench


def _check_stages(stages):
    for k in ("startup", "features", "load", "trunk", "diffusion", "confidence", "metrics",
              "forward", "write", "process"):
        assert stages[k]["wall"] is not None and stages[k]["wall"] >= 0, k
    parts = sum(stages[k]["wall"] for k in ("trunk", "diffusion", "confidence", "metrics"))
    assert parts <= stages["forward"]["wall"] * 1.05 + 1e-3
    inner = sum(stages[k]["wall"] for k in ("startup", "features", "load", "forward", "write"))
    assert inner <= stages["process"]["wall"] * 1.05 + 1e-3
    assert stages["forward"]["cpu"] > 0


def test_pred_bench_tiny_ours_without_torch():
    text, res = bench.run(8, (1,), 1, 1, 1, tiny=True, torch=False)
    rows = res[1]
    assert set(rows) == {"ours"}
    _check_stages(rows["ours"])
    assert "made by ours" in text and "threads=1" in text and "ours/torch" not in text


@pytest.mark.parity
def test_pred_bench_tiny_against_pytorch():
    ok, why = bench.reference_available()
    if not ok:
        pytest.skip(why)
    text, res = bench.run(8, (1,), 1, 1, 1, tiny=True, torch=True)
    rows = res[1]
    assert set(rows) == {"ours", "torch"}
    _check_stages(rows["ours"])
    _check_stages(rows["torch"])
    assert "made by PyTorch" in text and "ours / PyTorch: process" in text
