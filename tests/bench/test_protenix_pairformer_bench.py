"""bench.protenix_pairformer: the block-wise and training rows run at toy size (no timing
asserted); the three recompute modes report the same loss."""

from bench import protenix_pairformer as bench


def test_blockwise_row_tiny():
    rows = bench.main(["--tiny"])
    assert len(rows) == 1 and rows[0].startswith("block-wise N=32")


def test_train_rows_tiny_same_loss():
    res = bench.train_step(8, 8, 8, 2)
    assert [r[0] for r in res] == ["none", "per block", "fine"]
    assert len({r[1] for r in res}) == 1
    assert all(r[2] > 0 for r in res)
