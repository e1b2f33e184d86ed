"""Protenix's dynamic chunk-size rule (protenix.model.chunk) against the reference's
thresholds, and ``chunk_size="auto"`` in the trunk modules."""

import ast
import os

import numpy as np
import pytest

from diffsci import core
from diffsci.protenix.model.chunk import (
    DEFAULT_CHUNK_SIZE_THRESHOLDS,
    get_dynamic_chunk_size,
    resolve_chunk_size,
)
from diffsci.protenix.model.modules import pairformer
from diffsci.protenix.model.modules.pairformer import PairformerBlock, PairformerStack

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REF_CONFIG = os.path.join(REPO, ".ref", "protenix-2.0.0", "configs", "configs_base.py")

# Protenix 2.0.0 configs_base.py: {"1024": -1, "1536": 512, "2048": 256, "2560": 128} and
# Protenix._get_dynamic_chunk_size: first threshold >= N_token, -1 -> None, 32 above all.
# (N_token, Protenix's chunk size), including every boundary and one past it.
REFERENCE_CASES = [
    (1, None), (64, None), (1024, None), (1025, 512), (1536, 512), (1537, 256),
    (2048, 256), (2049, 128), (2560, 128), (2561, 32), (3000, 32), (10_000, 32),
]  # fmt: skip


@pytest.mark.parametrize("n_token, want", REFERENCE_CASES)
def test_default_thresholds_match_protenix(n_token, want):
    assert get_dynamic_chunk_size(n_token) == want
    assert resolve_chunk_size("auto", n_token) == want


def test_thresholds_equal_the_reference_config():
    """Read the thresholds out of the reference's configs_base.py (its AST, no import)."""
    if not os.path.isfile(REF_CONFIG):
        pytest.skip(f"reference Protenix 2.0.0 not installed ({REF_CONFIG})")
    with open(REF_CONFIG) as f:
        tree = ast.parse(f.read())
    found = [
        ast.literal_eval(val)
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        for key, val in zip(node.keys, node.values)
        if isinstance(key, ast.Constant) and key.value == "chunk_size_thresholds"
    ]
    assert found == [DEFAULT_CHUNK_SIZE_THRESHOLDS]


def test_custom_thresholds_and_infer_setting():
    # keys as strings or ints, unsorted
    th = {2000: 64, "500": -1, "1000": 128}
    assert [get_dynamic_chunk_size(n, th) for n in (10, 500, 501, 1000, 2000, 2001)] == [
        None, None, 128, 128, 64, 32,
    ]  # fmt: skip
    on = {"dynamic_chunk_size": True, "chunk_size_thresholds": th, "chunk_size": 7}
    assert resolve_chunk_size("auto", 600, on) == 128
    # dynamic off, or no thresholds: the fixed infer_setting.chunk_size (Protenix)
    assert resolve_chunk_size("auto", 600, {**on, "dynamic_chunk_size": False}) == 7
    assert resolve_chunk_size("auto", 600, {"dynamic_chunk_size": True, "chunk_size": 7}) == 7
    # explicit sizes pass through
    assert resolve_chunk_size(None, 5000) is None
    assert resolve_chunk_size(16, 5000) == 16


def test_bad_values_are_named():
    with pytest.raises(ValueError, match="'big'"):
        resolve_chunk_size("big", 10)
    with pytest.raises(ValueError, match="n_token"):
        get_dynamic_chunk_size(-1)
    with pytest.raises(ValueError, match="'x'"):
        get_dynamic_chunk_size(10, {"x": 3})


def test_protenix_config_thresholds_resolve():
    """Our resolved model config carries the same infer_setting, and "auto" follows it."""
    from diffsci.protenix.config import get_model_config

    infer = get_model_config("protenix_mini_default_v0.5.0")["infer_setting"]
    assert {str(k): v for k, v in infer["chunk_size_thresholds"].items()} == (
        DEFAULT_CHUNK_SIZE_THRESHOLDS
    )
    assert infer["dynamic_chunk_size"] is True
    for n, want in REFERENCE_CASES:
        assert resolve_chunk_size("auto", n, infer) == want


def test_modules_resolve_auto(monkeypatch):
    """chunk_size="auto" reaches the block-wise path as the rule's size for the pair's N, and
    gives the same numbers as the explicit size."""
    n, c_z, c_s = 12, 8, 8
    core.set_seed(0)
    blk = PairformerBlock(n_heads=2, c_z=c_z, c_s=c_s, c_hidden_mul=8, c_hidden_pair_att=4,
                          no_heads_pair=2)  # fmt: skip
    blk.set_train(False)
    stack = PairformerStack(n_blocks=2, n_heads=2, c_z=c_z, c_s=c_s)
    stack.set_train(False)
    rng = np.random.default_rng(0)
    s = core.tensor(rng.normal(size=(n, c_s)).astype(np.float32))
    z = core.tensor(rng.normal(size=(n, n, c_z)).astype(np.float32))
    mask = core.ops.ones((n, n))
    seen = []
    real = pairformer.row_blocks
    monkeypatch.setattr(pairformer, "row_blocks", lambda t, c: seen.append(c) or real(t, c))
    # a rule with a threshold below n: "auto" must give 5 rows here
    monkeypatch.setattr(
        "diffsci.protenix.model.chunk.DEFAULT_CHUNK_SIZE_THRESHOLDS", {"4": -1, "100": 5}
    )
    with core.no_grad():
        for cell in (blk, stack):
            seen.clear()
            z_in = core.tensor(z.asnumpy().copy())  # updated in place
            s_auto, z_auto = cell(s, z_in, mask, inplace_safe=True, chunk_size="auto")
            assert seen and set(seen) == {5}
            z_in = core.tensor(z.asnumpy().copy())
            s_five, z_five = cell(s, z_in, mask, inplace_safe=True, chunk_size=5)
            np.testing.assert_array_equal(z_auto.asnumpy(), z_five.asnumpy())
            np.testing.assert_array_equal(s_auto.asnumpy(), s_five.asnumpy())


def _traced_peak(fn):
    import gc
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    out = fn()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak, out


def test_outer_product_mean_blockwise_without_chunk_size_is_bounded():
    """chunk_size=None (what "auto" gives up to 1024 tokens) on the block-wise path still
    takes the outer products [r, N, C*C] in row blocks of ceil(N / MIN_BLOCKS): same numbers,
    a fraction of the unchunked peak (at N = 1024, C = 32 that peak is 8 pair tensors)."""
    from diffsci.protenix.model.modules.msa import OuterProductMean

    n, s, c_m, c = 64, 3, 8, 8
    core.set_seed(0)
    opm = OuterProductMean(c_m=c_m, c_z=4, c_hidden=c)
    rng = np.random.default_rng(1)
    # float64: the two paths sum the same terms in another order, and in float32 that order
    # shows (CPU-dependent BLAS blocking); in float64 "same numbers" can be held to rounding
    m = core.tensor(rng.normal(size=(s, n, c_m)))
    for p in opm.trainable_params():  # linear_out starts at zero in Protenix: randomize
        p.set_data(core.tensor(rng.normal(size=p.shape)))
    with core.no_grad():
        p_plain, plain = _traced_peak(lambda: opm(m))
        p_block, block = _traced_peak(lambda: opm(m, inplace_safe=True))
    assert block.dtype == core.float64
    # an output sums s * c * c products: reordering moves it by at most ~(terms) * eps * sum|terms|;
    # with sum|terms| within 100x the largest output for these normal draws
    scale = float(np.abs(plain.asnumpy()).max())
    bound = (s * c * c) * np.finfo(np.float64).eps * 100 * scale
    np.testing.assert_allclose(block.asnumpy(), plain.asnumpy(), rtol=0, atol=bound)
    assert scale > 1e-3
    assert p_block < 0.3 * p_plain, (p_block, p_plain)
