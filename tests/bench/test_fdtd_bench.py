"""bench.fdtd: rows at toy size (no timing asserted), the roofline's byte count against a hand
count, and the table's ratios."""

import importlib.util
import math

import numpy as np
import pytest

from bench import fdtd as bench_fdtd


def test_bytes_per_cell_update_hand_count():
    # vacuum, CPML(p) on all faces of n^3: per half step 3 sources + 3 olds read, 3 news
    # written (float32), and 6 psi terms, each on 2p of the n cells of its axis, read + written
    n, p = 20, 3
    sim = bench_fdtd._simulation({"n": n, "pml": p, "steps": 1, "spacing": 1e-3})
    total, parts = bench_fdtd.bytes_per_cell(sim)
    assert total == pytest.approx(2 * (9 * 4 + 6 * 2 * 4 * (2 * p / n)))
    assert parts["e: coefficient maps read"] == 0.0  # Cb read as a number times wall masks


def test_bytes_per_cell_counts_material_maps():
    from diffsci.mindelec import fdtd

    n = 12
    grid = fdtd.Grid((n, n, n), 1e-3, dtype="float32")
    eps = 1 + np.random.default_rng(0).random((n, n, n))
    sim = fdtd.Simulation(grid, fdtd.Materials(eps_r=eps, sigma=0.1), fdtd.PEC())
    total, parts = bench_fdtd.bytes_per_cell(sim)
    # E: Ca and Cb maps of 3 components; H: lossless vacuum numbers
    assert parts["e: coefficient maps read"] == 6 * 4 and parts["h: coefficient maps read"] == 0
    assert total == pytest.approx(2 * 9 * 4 + 6 * 4)


def test_ours_and_fdtd_rows_run_tiny():
    r = bench_fdtd.run_row("ours", tiny=True, repeats=1)
    wall, cpu = bench_fdtd.rates(r)
    assert wall > 0 and math.isfinite(cpu) and r["bytes_per_cell"] > 0
    if importlib.util.find_spec("fdtd") is None:  # not importorskip: see the next test
        pytest.skip("the fdtd package is not installed (bench extra)")
    r = bench_fdtd.run_row("fdtd", tiny=True, steps=20, repeats=1)
    assert r["steps"] == 1 and r["wall"] > 0


def test_importing_fdtd_leaves_torch_as_it_was():
    """fdtd 0.3.5 switches autograd off and makes float64 torch's default on import; the bench
    undoes both, or every later torch comparison in the process fails."""
    torch = pytest.importorskip("torch")
    if importlib.util.find_spec("fdtd") is None:
        pytest.skip("the fdtd package is not installed (bench extra)")
    bench_fdtd._import_fdtd()
    assert torch.is_grad_enabled() and torch.get_default_dtype() == torch.float32


def test_copy_bandwidth_and_table():
    wall_bw, cpu_bw = bench_fdtd.copy_bandwidth(2, mib=4, repeats=2)
    assert wall_bw > 1e8 and cpu_bw > 1e8
    ours = {"wall": 1.0, "cpu": 2.0, "steps": 10, "cells": 10**6, "threads": 2}
    ours.update(bytes_per_cell=100.0, streaming=True)
    ref = {"wall": 4.0, "cpu": 4.0, "steps": 10, "cells": 10**6, "threads": 1}
    text = bench_fdtd.format_table(
        [("ours", ours, ""), ("fdtd", ref, ""), ("gprMax", None, "skipped: why")], (2e9, 1e9)
    )
    (line,) = [s for s in text.splitlines() if s.strip().startswith("fdtd")]
    assert line.split()[1:5] == ["2.5", "2.5", "4.00", "2.00"]
    # 2 GB/s / 100 bytes = 20 Mcell/s against ours 10 (wall); 1 GB/s: 10 against 5 (cpu)
    assert "(wall clock): 100.0 bytes/cell-update" in text
    assert "= 20 Mcell/s; ours 10 = 0.50 of it" in text
    assert "= 10 Mcell/s; ours 5 = 0.50 of it" in text
    assert "skipped: why" in text


def test_gprmax_row_runs_tiny_where_built():
    if not bench_fdtd._available("gprMax")[0]:
        pytest.skip("gprMax not built here (see bench/fdtd.py)")
    r = bench_fdtd.run_row("gprMax", tiny=True, steps=3, repeats=1)
    assert r["steps"] == 3 and 0 < r["wall"] < 60
