"""bench.operators: our rows run at toy size in this process (no timing asserted), the table
gives ratios against neuraloperator, and a missing neuraloperator is a skipped row."""

import math

import pytest

from bench import operators


@pytest.mark.parametrize("case", sorted(operators.CASES))
def test_our_rows_run_tiny(case):
    for row in ("ours eager", "ours jit"):
        r = operators.run_row(case, row, steps=1, tiny=True)
        assert r["seconds"] > 0 and math.isfinite(r["seconds"])
        assert r["params"] > 0 and r["threads"] >= 1


def test_table_ratios_and_skipped_row(monkeypatch):
    ref = {"seconds": 0.2, "peak_mib": 40.0, "params": 10, "threads": 1}
    ours = {"seconds": 0.1, "peak_mib": 60.0, "params": 12, "threads": 1}
    text = operators.format_table("fno1d", [("ours jit", ours, ""), ("neuraloperator", ref, "")])
    (line,) = [s for s in text.splitlines() if "ours jit" in s]
    assert line.split()[2:4] == ["100.00", "0.50"] and line.split()[5] == "1.50"
    monkeypatch.setattr(operators, "have_neuraloperator", lambda: False)
    rows = operators.run_case("fno1d", tiny=True, rows=("neuraloperator",))
    assert rows == [("neuraloperator", None, "skipped: pip install neuraloperator")]
    assert "skipped" in operators.format_table("fno1d", rows)
