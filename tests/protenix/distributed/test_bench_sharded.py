"""bench/protenix_sharded.py --tiny: both rank counts run and every row is filled in."""

import numpy as np
import pytest

from bench import protenix_sharded

from .test_sharded_pairformer import MPIEXEC, WHY


@pytest.mark.skipif(MPIEXEC is None, reason=f"MPI cannot start: {WHY}")
def test_bench_tiny_runs(capsys):
    rows = protenix_sharded.main(["--tiny"])
    assert [(r["n"], r["ranks"]) for r in rows] == [(64, 1), (64, 2)]
    for r in rows:
        assert r["peak"] > 0 and r["inputs"] > 0 and np.isfinite(r["n_per_gib"])
    # the shard halves: the inputs of a rank of 2 are about half those of 1 rank
    assert rows[1]["inputs"] < 0.6 * rows[0]["inputs"]
    assert "| 64 | 2 |" in capsys.readouterr().out
