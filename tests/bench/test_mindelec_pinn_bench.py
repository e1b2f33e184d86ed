"""bench.mindelec_pinn at toy size: every row runs (no timing asserted), and PyTorch's step of
the same network, points and weights starts from the same loss as ours."""

import importlib.util
import math

import pytest

from bench import mindelec_pinn


def test_rows_run_and_torch_loss_matches_ours():
    rows = mindelec_pinn.run(mindelec_pinn.TINY, warmup=1, repeats=1, torch_row=True)
    eager, jit = rows["ours eager"], rows["ours jit"]
    assert eager["ms"] > 0 and jit["ms"] > 0
    assert eager["loss"] == pytest.approx(jit["loss"], rel=1e-5)
    if importlib.util.find_spec("torch") is not None:
        assert rows["torch eager"]["loss"] == pytest.approx(jit["loss"], rel=1e-4)
    assert math.isfinite(jit["loss"]) and "ours jit" in mindelec_pinn.format_table(rows)
