"""bench.cfd: our rows run at toy size (no timing asserted)."""

import math

import pytest

from bench import cfd


@pytest.mark.parametrize("case", list(cfd.CASES))
def test_cfd_bench_our_rows_tiny(case):
    rows = cfd.run_case(case, steps=1, tiny=True, anchors=False)
    assert [r[0] for r in rows] == ["ours eager", "ours jit"]
    for _, _, speed, _ in rows:
        assert speed > 0 and math.isfinite(speed)
    table = cfd.format_table(case, rows)
    assert "ours jit" in table


def test_cfd_bench_skips_missing_anchor(monkeypatch):
    monkeypatch.setattr(cfd, "_have", lambda module: False)
    rows = cfd.run_case("sod", steps=1, tiny=True)
    skipped = [r for r in rows if r[2] is None]
    assert {r[0] for r in skipped} == {"pyro-hydro", "clawpack"}
    assert "skipped" in cfd.format_table("sod", rows)
