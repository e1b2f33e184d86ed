"""PairformerBlock / PairformerStack: parity with PyTorch Protenix 2.0.0 (fixtures/trunk.npz),
block-wise inference equal to the plain path, recompute (same gradients, >= 3x lower peak),
and the peak memory of block-wise inference at N = 512."""

import gc
import os
import pathlib
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops
from diffsci.protenix.model.modules.pairformer import PairformerBlock, PairformerStack

from ._trunk_fixture import FIXTURE, assert_rel_close, case, load_strict

RTOL = 1e-4
N_RECOMPUTE = 16


def _eval(cell):
    cell.set_train(False)
    return cell


def test_block_matches_protenix_and_blockwise_path():
    cfg, params, x, want = case("pairformer_block")
    m = _eval(load_strict(PairformerBlock(**cfg), params))
    s, z = m(x["s"], x["z"], x["pair_mask"])
    assert_rel_close(s, want["s"], RTOL, "PairformerBlock s")
    assert_rel_close(z, want["z"], RTOL, "PairformerBlock z")
    with core.no_grad():
        for rows in (1, 5):
            z_in = core.tensor(x["z"].asnumpy().copy())  # updated in place, as in Protenix
            s2, z2 = m(x["s"], z_in, x["pair_mask"], inplace_safe=True, chunk_size=rows)
            assert z2 is z_in
            assert_rel_close(s2, want["s"], RTOL, f"block-wise s rows={rows}")
            assert_rel_close(z2, want["z"], RTOL, f"block-wise z rows={rows}")


def test_block_without_single_track_matches_protenix():
    cfg, params, x, want = case("pairformer_block_no_s")
    m = _eval(load_strict(PairformerBlock(**cfg), params))
    s, z = m(None, x["z"], x["pair_mask"])
    assert s is None
    assert_rel_close(z, want["z"], RTOL, "PairformerBlock(c_s=0) z")


def test_stack_matches_protenix():
    cfg, params, x, want = case("pairformer_stack")
    m = _eval(load_strict(PairformerStack(**cfg), params))
    s, z = m(x["s"], x["z"], x["pair_mask"])
    assert_rel_close(s, want["s"], RTOL, "PairformerStack s")
    assert_rel_close(z, want["z"], RTOL, "PairformerStack z")
    with core.no_grad():
        z_in = core.tensor(x["z"].asnumpy().copy())  # updated in place, as in Protenix
        s2, z2 = m(x["s"], z_in, x["pair_mask"], inplace_safe=True, chunk_size=4)
    assert_rel_close(s2, want["s"], RTOL, "PairformerStack block-wise s")
    assert_rel_close(z2, want["z"], RTOL, "PairformerStack block-wise z")


def _peak(fn):
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


def _randomize(cell, seed):
    core.set_seed(seed)
    for name, p in cell.parameters_and_names():
        if p.ndim == 2:
            p.set_data(ops.randn(tuple(p.shape)) / np.sqrt(p.shape[1]))
        elif name.endswith("weight"):
            p.set_data(1.0 + 0.1 * ops.randn(tuple(p.shape)))
        else:
            p.set_data(0.1 * ops.randn(tuple(p.shape)))
    return cell


def test_recompute_same_gradients_and_3x_lower_peak():
    """Training step of a 6-block stack with dropout: with blocks_per_ckpt=1 the gradients
    are identical (recompute replays the dropout draws) and the peak drops >= 3x; recomputing
    the triangle updates inside the blocks too (fine-grained) keeps the gradients and lowers
    the peak further."""
    n, c_z, c_s = N_RECOMPUTE, 8, 8

    def build(k, fine):
        st = PairformerStack(n_blocks=6, n_heads=2, c_z=c_z, c_s=c_s, dropout=0.25,
                             blocks_per_ckpt=k)  # fmt: skip
        return _randomize(st.set_fine_grained_recompute(fine), 0)

    rng = np.random.default_rng(0)
    s0 = core.tensor(rng.normal(size=(n, c_s)).astype(np.float32))
    z0 = core.tensor(rng.normal(size=(n, n, c_z)).astype(np.float32))
    mask = ops.ones((n, n))
    results = []
    for k, fine in ((None, False), (1, False), (1, True)):
        st = build(k, fine)

        def loss(s, z, st=st):
            s, z = st(s, z, mask)
            return (s**2).mean() + (z**2).mean()

        grad_fn = core.value_and_grad(loss, None, st.trainable_params())
        core.set_seed(7)
        peak, (val, grads) = _peak(lambda g=grad_fn: g(s0, z0))
        results.append((peak, float(val.asnumpy()), [g.asnumpy() for g in grads]))
    (p0, v0, g0), (p1, v1, g1), (p2, v2, g2) = results
    assert v0 == v1 == v2
    for a, b, c in zip(g0, g1, g2, strict=True):
        np.testing.assert_array_equal(b, a)
        np.testing.assert_array_equal(c, a)
    print(f"recompute: peak {p0} B -> {p1} B ({p0 / p1:.2f}x lower), fine-grained {p2} B")
    assert p1 * 3 <= p0, f"recompute peak {p1} B vs {p0} B: only {p0 / p1:.2f}x lower"
    assert p2 < p1


def test_blockwise_block_peak_within_3x_pair_tensor():
    """PairformerBlock at N = 512 under no-grad, block-wise with chunk_size = 32: the peak
    above the inputs stays within 3x the pair tensor. c_z = 4 (and hidden sizes 4, one head)
    keeps it fast; the bound is in units of this small pair tensor, where the temporaries that
    do not scale with c_z (masks, per-head biases) weigh more than at c_z = 128."""
    n, c_z, c_s = 512, 4, 8
    blk = PairformerBlock(n_heads=1, c_z=c_z, c_s=c_s, c_hidden_mul=c_z, c_hidden_pair_att=4,
                          no_heads_pair=1, num_intermediate_factor=4)  # fmt: skip
    _eval(_randomize(blk, 1))
    rng = np.random.default_rng(0)
    z = core.tensor(rng.normal(size=(n, n, c_z)).astype(np.float32))
    s = core.tensor(rng.normal(size=(n, c_s)).astype(np.float32))
    mask = ops.ones((n, n))
    pair_bytes = n * n * c_z * 4

    def run():
        with core.no_grad():
            return blk(s, z, mask, inplace_safe=True, chunk_size=32)

    threads = core.get_num_threads()
    core.set_num_threads(1)  # many small matmuls: one thread avoids BLAS's thread hand-offs
    try:
        peak, (_, z1) = _peak(run)
    finally:
        core.set_num_threads(threads)
    assert z1.shape == z.shape and np.isfinite(z1.asnumpy()).all()
    print(f"block-wise N={n}: peak {peak / pair_bytes:.2f}x the pair tensor")
    assert peak <= 3 * pair_bytes, f"peak {peak / pair_bytes:.2f}x the pair tensor"


@pytest.mark.parity
def test_trunk_fixture_regenerates_from_reference(tmp_path):
    """Re-run fixtures/make_trunk.py against the PyTorch reference (a subprocess started outside
    the repository, so our package never shadows it) and check the committed fixture is what
    it produces: the parity tests above then hold against live PyTorch."""
    repo = pathlib.Path(__file__).resolve().parents[2]
    ref = repo / ".ref" / "protenix-2.0.0"
    if not ref.is_dir():
        pytest.skip(f"the reference Protenix 2.0.0 is not installed at {ref}")
    env = dict(os.environ, PYTHONPATH=str(ref), LAYERNORM_TYPE="torch", OMP_NUM_THREADS="1")
    out = tmp_path / "trunk.npz"
    script = repo / "tests" / "protenix" / "fixtures" / "make_trunk.py"
    subprocess.run([sys.executable, str(script), str(out)], cwd=tmp_path, env=env, check=True,
                   capture_output=True, timeout=300)  # fmt: skip
    with np.load(out) as new, np.load(FIXTURE) as old:
        assert sorted(new.files) == sorted(old.files)
        for k in old.files:
            if "/out/" in k:  # summation order may follow torch's thread count
                np.testing.assert_allclose(new[k], old[k], rtol=1e-5, atol=1e-6, err_msg=k)
            else:
                np.testing.assert_array_equal(new[k], old[k], err_msg=k)


def test_recompute_training_step_under_jit_equals_eager():
    """value_and_grad of a 2-block stack with recompute, compiled by core.jit, equals eager."""
    st = _randomize(PairformerStack(n_blocks=2, n_heads=2, c_z=8, c_s=8, dropout=0.0,
                                    blocks_per_ckpt=1), 2)  # fmt: skip
    rng = np.random.default_rng(5)
    s0 = core.tensor(rng.normal(size=(8, 8)).astype(np.float32))
    z0 = core.tensor(rng.normal(size=(8, 8, 8)).astype(np.float32))
    mask = core.tensor((rng.random((8, 8)) > 0.2).astype(np.float32))

    def loss(s, z):
        s, z = st(s, z, mask)
        return (s**2).mean() + (z**2).mean()

    grad_fn = core.value_and_grad(loss, None, st.trainable_params())
    v1, g1 = grad_fn(s0, z0)
    v2, g2 = core.jit(grad_fn)(s0, z0)
    np.testing.assert_allclose(v2.asnumpy(), v1.asnumpy(), rtol=1e-6)
    for a, b in zip(g2, g1, strict=True):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-4, atol=1e-6)
