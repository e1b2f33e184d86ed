"""The benchmark workloads compute the same numbers in every framework (tiny sizes).

A ratio in ``python -m bench`` only means something if both rows do the same work, so each
workload's first step (outputs: losses, gradients, updated weights, or the forward result) is
compared between our rows and the PyTorch row. No timing is asserted. "ours jit" rows are not
checked here (core.jit has its own tests); they are checked against "ours" in every bench run.
"""

import numpy as np
import pytest

from bench import WORKLOAD_MODULES, get_workload
from bench.common import to_numpy

pytest.importorskip(
    "torch",
    reason="parity test: torch is not installed (make test-parity installs torch==2.13.0)",
)
pytestmark = pytest.mark.parity  # compares with PyTorch

CASES = [(key, i) for key in WORKLOAD_MODULES for i in range(len(get_workload(key).tiny))]


def _first_step(impl, cfg, data):
    return [to_numpy(o).copy() for o in impl.make(cfg, data)()]


def _assert_close(outs, refs, rtol, what):
    assert len(outs) == len(refs), f"{what}: {len(outs)} outputs vs {len(refs)}"
    for k, (a, b) in enumerate(zip(outs, refs, strict=True)):
        assert a.shape == b.shape, f"{what}: output {k} has shape {a.shape} vs {b.shape}"
        scale = max(float(np.max(np.abs(b))), 1e-30)
        err = float(np.max(np.abs(a.astype(np.complex128) - b)))
        assert err <= rtol * scale, f"{what}: output {k} differs by {err:.3g} (scale {scale:.3g})"


def _rows(wl, framework):
    return [i for i in wl.impls() if i.framework == framework]


@pytest.mark.parametrize(("key", "i"), CASES)
def test_ours_matches_torch(key, i):
    wl = get_workload(key)
    cfg = wl.tiny[i]
    data = wl.data(cfg)
    (torch_ref, *_) = _rows(wl, "torch")
    refs = _first_step(torch_ref, cfg, data)
    assert refs and all(np.all(np.isfinite(r)) for r in refs)
    for impl in _rows(wl, "ours"):
        _assert_close(
            _first_step(impl, cfg, data), refs, wl.rtol, f"{key} {impl.label} vs {torch_ref.label}"
        )


@pytest.mark.parametrize(("key", "i"), CASES)
def test_comparison_rows_agree(key, i):
    """Every PyTorch/numpy/JAX formulation of a workload agrees with the first PyTorch row."""
    wl = get_workload(key)
    cfg = wl.tiny[i]
    data = wl.data(cfg)
    (torch_ref, *others) = _rows(wl, "torch")
    refs = _first_step(torch_ref, cfg, data)
    others += _rows(wl, "numpy")
    try:
        import jax  # noqa: F401

        others += _rows(wl, "jax") + _rows(wl, "jax.jit")
    except ImportError:
        pass
    for impl in others:
        _assert_close(
            _first_step(impl, cfg, data), refs, wl.rtol, f"{key} {impl.label} vs {torch_ref.label}"
        )


def test_outputs_depend_on_the_inputs():
    """The check is not vacuous: perturbing the data changes W1's outputs beyond tolerance."""
    wl = get_workload("W1")
    cfg = wl.tiny[0]
    data = wl.data(cfg)
    (ours,) = _rows(wl, "ours")
    base = _first_step(ours, cfg, data)
    data["x"] = data["x"] + 0.01
    with pytest.raises(AssertionError):
        _assert_close(_first_step(ours, cfg, data), base, wl.rtol, "perturbed")
