"""Side-by-side benchmarks of diffsci's engine against PyTorch (eager) and JAX, in one process.

Run ``python -m bench`` (all workloads), ``python -m bench W1 W3``, ``python -m bench --quick``;
``python -m bench.profile W2`` profiles our side of a workload. See README.md, "Benchmarks".
"""

import importlib

WORKLOAD_MODULES = {
    "W1": "bench.w1_dispatch",
    "W2": "bench.w2_pinn",
    "W3": "bench.w3_fno",
    "W4": "bench.w4_triangle",
    "MM": "bench.mm_matmul",
}


def get_workload(key):
    """The :class:`bench.harness.Workload` registered under ``key`` (W1..W4, MM)."""
    if key not in WORKLOAD_MODULES:
        raise KeyError(f"unknown workload {key!r}; choose from {', '.join(WORKLOAD_MODULES)}")
    return importlib.import_module(WORKLOAD_MODULES[key]).WORKLOAD
