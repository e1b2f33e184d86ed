"""bench.protenix_trunk: the mini-trunk rows run at toy size in float32 and bfloat16 (no timing
asserted; the row reports the extrapolation it made)."""

from bench import protenix_trunk as bench


def test_mini_trunk_rows_tiny():
    for dtype in ("fp32", "bf16"):
        r = bench.mini_trunk(16, n_msa=3, blocks=1, dtype=dtype, c_z=8)
        assert r["blocks_total"] == 16 and r["blocks_run"] == 1 and r["extrapolated"]
        assert r["stack_s"] == r["block_s"] * 16
        row = bench.mini_row(r)
        assert row.startswith(f"mini trunk N=16 {dtype}:") and "extrapolated" in row


def test_torch_train_rows_without_reference(monkeypatch):
    monkeypatch.setattr(bench, "REF", bench.REPO / "no-such-reference")
    assert bench.torch_train_rows(8, 8, 16, 2) == [
        "PyTorch training step: reference not installed"
    ]
