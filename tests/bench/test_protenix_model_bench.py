"""bench.protenix_model --tiny: ours at tiny sizes runs in its subprocess and reports a row."""

from bench import protenix_model as bench


def test_model_bench_tiny():
    rows = bench.main(["--tiny"])
    assert len(rows) == 1 and rows[0].startswith("ours ") and "s CPU" in rows[0]
