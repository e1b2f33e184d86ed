"""Shared helpers of the graph-mode tests: comparing pytrees, measuring peak memory."""

import gc
import tracemalloc

import numpy as np

from diffsci import core
from diffsci.core import tree


def leaves(x):
    return tree.flatten(x)[0]


def assert_tree_close(actual, expected, rtol=1e-12, atol=1e-12):
    """Same structure, dtypes and shapes; values equal (exactly for ints/bools)."""
    a_leaves, a_def = tree.flatten(actual)
    e_leaves, e_def = tree.flatten(expected)
    assert len(a_leaves) == len(e_leaves), f"{len(a_leaves)} leaves != {len(e_leaves)}"
    assert repr(a_def) == repr(e_def), f"structure {a_def} != {e_def}"
    for a, e in zip(a_leaves, e_leaves, strict=True):
        if not isinstance(e, core.Tensor):
            assert a == e
            continue
        assert isinstance(a, core.Tensor), type(a)
        assert a.dtype == e.dtype, f"dtype {a.dtype} != {e.dtype}"
        assert tuple(a.shape) == tuple(e.shape), f"shape {a.shape} != {e.shape}"
        an, en = a.asnumpy(), e.asnumpy()
        if en.dtype.kind in "biu":
            np.testing.assert_array_equal(an, en)
        else:
            np.testing.assert_allclose(an, en, rtol=rtol, atol=atol)


def peak_bytes(fn):
    """(peak bytes traced while ``fn()`` runs above what was live before, fn's result).

    numpy reports its data buffers to tracemalloc, so this counts array memory exactly and
    deterministically (no timing, no allocator noise)."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return peak, out
