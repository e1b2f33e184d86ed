"""The benchmark harness itself (runs without torch or jax installed)."""

from bench import WORKLOAD_MODULES, get_workload


def test_rows_of_missing_frameworks_are_left_out(monkeypatch):
    """Without torch and jax a workload still lists its "ours" (and numpy) rows, and only those."""
    monkeypatch.setattr("bench.common.have", lambda module: False)
    for key in WORKLOAD_MODULES:
        frameworks = {i.framework for i in get_workload(key).impls()}
        assert "ours" in frameworks and frameworks <= {"ours", "ours jit", "numpy"}, key


def test_rows_of_installed_frameworks_are_kept(monkeypatch):
    monkeypatch.setattr("bench.common.have", lambda module: True)
    frameworks = {i.framework for i in get_workload("W1").impls()}
    assert {"ours", "torch", "jax", "jax.jit"} <= frameworks
