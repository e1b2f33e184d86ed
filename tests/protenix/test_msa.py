"""Parity of the MSA module with PyTorch Protenix 2.0.0 (fixtures/msa.npz, made by
fixtures/make_msa.py from the reference install), and chunked == plain paths.

Each case loads the torch module's state dict by name (strict) into ours and compares the
outputs within 1e-4 relative (float32).
"""

import os

import numpy as np
import pytest

from diffsci import core
from diffsci.protenix.model.modules.msa import (
    MSAPairWeightedAveraging,
    MSAStack,
    OuterProductMean,
    sample_msa_indices,
)
from diffsci.protenix.model.weights import load_weights

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "msa.npz")
RTOL = 1e-4


@pytest.fixture(scope="module")
def fx():
    with np.load(FIX) as f:
        return {k: f[k] for k in f.files}


def part(fx, case, kind):
    prefix = f"{case}/{kind}/"
    return {k[len(prefix) :]: v for k, v in fx.items() if k.startswith(prefix)}


def cfg(fx, case):
    return {k: v.item() for k, v in part(fx, case, "cfg").items()}


def tensors(d):
    return {k: core.tensor(v) for k, v in d.items()}


def build(cls, fx, case, **kw):
    module = cls(**kw)
    load_weights(module, part(fx, case, "param"))  # strict: every name used, shapes checked
    module.set_train(False)
    return module


def close(got, ref, rtol=RTOL, valid=None):
    """Max-abs error relative to the largest reference value; ``valid`` ``[N, N]`` restricts a
    pair tensor to entries between unpadded tokens (see ``valid_pairs``)."""
    got = got.asnumpy() if hasattr(got, "asnumpy") else np.asarray(got)
    if valid is not None:
        got, ref = got[valid], ref[valid]
    scale = float(np.max(np.abs(ref)))
    assert scale > 1e-3, "reference output is ~0: the case tests nothing"
    err = float(np.max(np.abs(got - ref))) / scale
    assert err <= rtol, f"max |ours - torch| / max |torch| = {err:.2e} > {rtol}"
    return err


def valid_pairs(pair_mask):
    """Entries (i, j) between tokens that are not padding. A padded token's row of the pair
    mask is all zero, so triangle attention at it adds ``-1e9`` to every logit, and what is
    left of the pair bias after float32 rounding near -1e9 depends on the summation order:
    PyTorch's values there are not reproducible by any other implementation (nor used)."""
    tok = pair_mask.asnumpy().any(axis=-1)
    return np.logical_and.outer(tok, tok)


def test_outer_product_mean(fx):
    c = cfg(fx, "opm")
    opm = build(OuterProductMean, fx, "opm", c_m=c["c_m"], c_z=c["c_z"], c_hidden=c["c_hidden"])
    x = tensors(part(fx, "opm", "in"))
    out = part(fx, "opm", "out")
    close(opm(x["m"]), out["z"])
    close(opm(x["m"], mask=x["mask"]), out["z_masked"])
    # residue-row chunks and inplace_safe give the same numbers
    close(opm(x["m"], mask=x["mask"], chunk_size=3, inplace_safe=True), out["z_masked"])


def test_outer_product_mean_from_an_official_style_pt(fx):
    """torch.save'd file -> restricted unpickler -> a submodule's prefix -> same numbers."""
    c = cfg(fx, "opm")
    opm = OuterProductMean(c_m=c["c_m"], c_z=c["c_z"], c_hidden=c["c_hidden"])
    path = os.path.join(os.path.dirname(FIX), "opm_release.pt")
    load_weights(opm, path, prefix="msa_module.blocks.0.outer_product_mean_msa.")
    x = tensors(part(fx, "opm", "in"))
    close(opm(x["m"], mask=x["mask"]), part(fx, "opm", "out")["z_masked"])


def test_msa_pair_weighted_averaging(fx):
    c = cfg(fx, "pwa")
    pwa = build(MSAPairWeightedAveraging, fx, "pwa", **c)
    x = tensors(part(fx, "pwa", "in"))
    close(pwa(x["m"], x["z"]), part(fx, "pwa", "out")["m"])


def test_msa_stack_chunked_and_plain(fx):
    c = cfg(fx, "stack")
    x = tensors(part(fx, "stack", "in"))
    ref = part(fx, "stack", "out")["m"]
    chunked = build(MSAStack, fx, "stack", c_m=c["c_m"], c_z=c["c_z"], msa_chunk_size=3)
    plain = build(MSAStack, fx, "stack", c_m=c["c_m"], c_z=c["c_z"], msa_chunk_size=None)
    a, b = chunked(x["m"], x["z"]), plain(x["m"], x["z"])
    close(a, ref)
    close(b, ref)
    np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6, atol=1e-6)


class Replay:
    """Replays recorded draws in Protenix's order (randint, then permutation)."""

    def __init__(self, size, perm):
        self.calls = []
        self._size, self._perm = int(size), [int(i) for i in perm]

    def randint(self, low, high):
        self.calls.append(("randint", low, high))
        assert low <= self._size < high
        return self._size

    def permutation(self, n):
        self.calls.append(("permutation", n))
        assert n == len(self._perm)
        return self._perm


def test_sample_msa_indices_order_and_cutoff():
    rng = Replay(5, [6, 2, 0, 4, 1, 3, 5])
    assert sample_msa_indices(7, lower_bound=2, cutoff=3, rng=rng) == [6, 2, 0]
    assert rng.calls == [("randint", 2, 8), ("permutation", 7)]
    assert sample_msa_indices(7, strategy="topk", rng=Replay(4, range(7))) == [0, 1, 2, 3]
    core.set_seed(0)
    idx = sample_msa_indices(50, lower_bound=50)  # core's generator: a full permutation
    assert sorted(idx) == list(range(50)) and idx != list(range(50))
    with pytest.raises(ValueError, match="strategy"):
        sample_msa_indices(3, strategy="greedy")


class NormalOnly:
    """The diffusion sampler's rng protocol: only ``randn(shape)``, recorded."""

    def __init__(self, draws):
        self.draws, self.shapes = list(draws), []

    def randn(self, shape):
        self.shapes.append(list(shape))
        return np.asarray(self.draws.pop(0), np.float32)


def test_sample_msa_indices_from_a_randn_only_rng():
    # size: Phi(0.0) = 0.5 -> 2 + floor(0.5 * (8 - 2)) = 5; order: argsort of the 7 draws
    draws = [[0.0], [0.3, -1.0, 2.0, 0.1, -0.5, 1.5, 0.0]]
    rng = NormalOnly(draws)
    assert sample_msa_indices(7, lower_bound=2, rng=rng) == [1, 4, 6, 3, 0]
    assert rng.shapes == [[1], [7]]
    assert sample_msa_indices(7, lower_bound=2, rng=NormalOnly([[-9.0], [0] * 7])) == [0, 1]
    assert len(sample_msa_indices(7, lower_bound=2, rng=NormalOnly([[9.0], range(7)]))) == 7
    with pytest.raises(TypeError, match="randn"):
        sample_msa_indices(3, rng=object())


def _pairformer_or_skip():
    try:
        from diffsci.protenix.model.modules.pairformer import PairformerBlock  # noqa: F401
    except ImportError as err:
        pytest.skip(f"protenix.model.modules.pairformer.PairformerBlock is not there yet: {err}")


@pytest.mark.parametrize("case", ["block", "block_last"])
def test_msa_block(fx, case):
    _pairformer_or_skip()
    from diffsci.protenix.model.modules.msa import MSABlock

    block = build(MSABlock, fx, case, **cfg(fx, case))
    x = tensors(part(fx, case, "in"))
    out = part(fx, case, "out")
    valid = valid_pairs(x["pair_mask"])
    assert not valid.all()  # the case has padded tokens
    m, z = block(x["m"], x["z"], x["pair_mask"])
    close(z, out["z"], valid=valid)
    if case == "block":
        close(m, out["m"])  # the MSA stack runs before the masked pair stack: all rows match
    else:
        assert m is None
    _, z2 = block(x["m"], x["z"], x["pair_mask"], inplace_safe=True, chunk_size=4)
    close(z2, out["z"], valid=valid)


def test_msa_module_with_replayed_subsample(fx):
    _pairformer_or_skip()
    from diffsci.protenix.model.modules.msa import MSAModule

    c = cfg(fx, "module")
    configs = {
        "sample_cutoff": {"train": 512, "test": c["test_cutoff"]},
        "min_size": {"train": 1, "test": c["test_lowerb"]},
    }
    kw = dict(
        n_blocks=c["n_blocks"],
        c_m=c["c_m"],
        c_z=c["c_z"],
        c_s_inputs=c["c_s_inputs"],
        msa_configs=configs,
    )
    module = build(MSAModule, fx, "module", msa_chunk_size=c["msa_chunk_size"], **kw)
    x = tensors(part(fx, "module", "in"))
    draws = part(fx, "module", "draws")
    feats = {k: x[k] for k in ("msa", "has_deletion", "deletion_value")}
    ref = part(fx, "module", "out")["z"]
    z = module(
        feats,
        x["z"],
        x["s_inputs"],
        x["pair_mask"],
        rng=Replay(draws["sample_size"], draws["perm"]),
    )
    close(z, ref)
    # block-wise inference (MSA rows one at a time, pair rows in chunks) gives the same z
    plain = build(MSAModule, fx, "module", msa_chunk_size=1, **kw)
    z2 = plain(
        feats,
        x["z"],
        x["s_inputs"],
        x["pair_mask"],
        inplace_safe=True,
        chunk_size=3,
        rng=Replay(draws["sample_size"], draws["perm"]),
    )
    close(z2, ref)
    # no MSA: z unchanged
    assert module({}, x["z"], x["s_inputs"], x["pair_mask"]) is x["z"]


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REF = os.path.join(REPO, ".ref", "protenix-2.0.0")


@pytest.mark.parity
def test_fixtures_regenerate_from_reference(tmp_path):
    """Re-run this helper's fixture scripts against the PyTorch reference (in subprocesses, from
    outside the repository so our package is never shadowed) and check the committed fixtures
    are exactly what they produce: the parity tests above then compare with live PyTorch."""
    import json
    import subprocess
    import sys

    if not os.path.isdir(REF):
        pytest.skip(f"the reference Protenix 2.0.0 is not installed at {REF}")
    env = dict(os.environ, PYTHONPATH=REF, LAYERNORM_TYPE="torch", OMP_NUM_THREADS="1")
    fixtures = os.path.join(REPO, "tests", "protenix", "fixtures")
    # one interpreter for the three scripts (torch and Protenix are imported once)
    runner = (
        "import runpy, sys\n"
        "out, scripts = sys.argv[1], sys.argv[2:]\n"
        "for script in scripts:\n"
        "    sys.argv = [script, out]\n"
        "    runpy.run_path(script, run_name='__main__')\n"
    )
    scripts = [os.path.join(fixtures, f"make_{x}.py") for x in ("msa", "configs", "weights")]
    subprocess.run(
        [sys.executable, "-c", runner, str(tmp_path), *scripts],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    for name in ("msa.npz", "template.npz", "embedders.npz", "weights_expected.npz"):
        with np.load(tmp_path / name) as new, np.load(os.path.join(fixtures, name)) as old:
            assert sorted(new.files) == sorted(old.files), name
            for k in old.files:
                # inputs and weights are the same draws; outputs may differ in the last bits
                # with torch's thread count (summation order)
                a, b = new[k], old[k]
                if "/out/" in k:
                    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"{name}:{k}")
                else:
                    np.testing.assert_array_equal(a, b, err_msg=f"{name}:{k}")
    with (
        open(tmp_path / "configs_reference.json") as a,
        open(os.path.join(fixtures, "configs_reference.json")) as b,
    ):
        assert json.load(a) == json.load(b)
    with (
        open(tmp_path / "shapes_reference.json") as a,
        open(os.path.join(fixtures, "shapes_reference.json")) as b,
    ):
        assert json.load(a) == json.load(b)
    from diffsci.protenix.model.weights import read_state_dict

    for name in ("weights_release.pt", "weights_plain.pt", "weights_train.pt", "opm_release.pt"):
        new, old = read_state_dict(tmp_path / name), read_state_dict(os.path.join(fixtures, name))
        assert list(new) == list(old)
        for k in old:
            np.testing.assert_array_equal(new[k], old[k])


def test_gradients_fd_float64():
    """Derivatives of the outer product mean and pair-weighted averaging with respect to their
    inputs match central differences (float64)."""
    from diffsci.core.testing import gradcheck

    rng = np.random.default_rng(3)
    m = core.tensor(rng.normal(size=(3, 4, 5)))
    z = core.tensor(rng.normal(size=(4, 4, 6)))
    mask = core.tensor((rng.random((3, 4)) > 0.3).astype(np.float64))
    opm = OuterProductMean(c_m=5, c_z=3, c_hidden=2)
    pwa = MSAPairWeightedAveraging(c_m=5, c=2, c_z=6, n_heads=2)
    for cell in (opm, pwa):
        for _, p in cell.parameters_and_names():  # non-zero weights everywhere
            p.set_data(core.tensor(rng.normal(size=tuple(p.shape)).astype(np.float32) * 0.5))
        cell.to_float(core.float64)
    assert gradcheck(lambda m: opm(m, mask=mask, chunk_size=2), [m])
    assert gradcheck(lambda m, z: pwa(m, z), [m, z])


def test_msa_module_recompute_same_gradients(fx):
    """Training with blocks_per_ckpt=1 (each block recomputed in the backward pass) gives the
    gradients of the plain run (dropout draws are replayed by core.recompute)."""
    _pairformer_or_skip()
    from diffsci.protenix.model.modules.msa import MSAModule

    c = cfg(fx, "module")
    x = tensors(part(fx, "module", "in"))
    feats = {k: x[k] for k in ("msa", "has_deletion", "deletion_value")}
    results = []
    for k in (None, 1):
        module = MSAModule(n_blocks=2, c_m=c["c_m"], c_z=c["c_z"], c_s_inputs=c["c_s_inputs"],
                           msa_chunk_size=3, blocks_per_ckpt=k)  # fmt: skip
        load_weights(module, part(fx, "module", "param"))
        module.set_train(True)
        params = module.trainable_params()

        def loss(z, module=module):
            out = module(feats, z, x["s_inputs"], x["pair_mask"], rng=Replay(6, range(7)))
            return (out**2).mean()

        core.set_seed(11)
        val, grads = core.value_and_grad(loss, None, params)(x["z"])
        results.append((float(val.asnumpy()), [g.asnumpy() for g in grads]))
    (v0, g0), (v1, g1) = results
    assert v0 == v1
    scale = max(float(np.abs(g).max()) for g in g0)
    assert scale > 0
    for a, b in zip(g0, g1, strict=True):
        # the same numbers up to float32 summation order (the backward re-runs the blocks)
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6 * scale)


def _peak_bytes(fn):
    """``(peak, fn())``: the peak of traced allocations (numpy's included) above the start
    while ``fn`` runs, and its result."""
    import gc
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        return tracemalloc.get_traced_memory()[1] - base, out
    finally:
        tracemalloc.stop()


def test_blockwise_inference_lowers_peak():
    """Inference (no grad): the MSA stack in blocks of 16 of 512 MSA rows, and the outer product
    mean in blocks of 4 of 32 residue rows, give the plain results with a >= 4x lower peak."""
    rng = np.random.default_rng(0)
    m = core.tensor(rng.normal(size=(512, 32, 8)).astype(np.float32))
    z = core.tensor(rng.normal(size=(32, 32, 8)).astype(np.float32))
    stack = MSAStack(c_m=8, c_z=8)
    for _, p in stack.parameters_and_names():
        p.set_data(core.tensor(rng.normal(size=tuple(p.shape)).astype(np.float32) * 0.3))
    stack.set_train(False)
    peaks, outs = {}, {}
    for chunk in (None, 16):
        stack.msa_chunk_size = chunk
        with core.no_grad():
            peaks[chunk], outs[chunk] = _peak_bytes(lambda: stack(m, z))
    np.testing.assert_allclose(outs[16].asnumpy(), outs[None].asnumpy(), rtol=1e-5, atol=1e-6)
    assert peaks[16] * 4 <= peaks[None], f"MSA stack peaks {peaks}"

    opm = OuterProductMean(c_m=8, c_z=8, c_hidden=32)
    for _, p in opm.parameters_and_names():
        p.set_data(core.tensor(rng.normal(size=tuple(p.shape)).astype(np.float32) * 0.3))
    m_small = core.tensor(rng.normal(size=(16, 32, 8)).astype(np.float32))
    peaks, outs = {}, {}
    for chunk in (None, 4):
        with core.no_grad():
            peaks[chunk], outs[chunk] = _peak_bytes(lambda c=chunk: opm(m_small, chunk_size=c))
    np.testing.assert_allclose(outs[4].asnumpy(), outs[None].asnumpy(), rtol=1e-5, atol=1e-6)
    assert peaks[4] * 4 <= peaks[None], f"outer product mean peaks {peaks}"


def test_msa_stack_training_chunks_recomputed():
    """Training the MSA stack in blocks of 16 of 128 MSA rows, each recomputed in the backward
    pass: the loss and gradients of the plain run, with a >= 3x lower peak."""
    rng = np.random.default_rng(0)
    m = core.tensor(rng.normal(size=(128, 16, 8)).astype(np.float32))
    z = core.tensor(rng.normal(size=(16, 16, 8)).astype(np.float32))
    stack = MSAStack(c_m=8, c_z=8)
    for _, p in stack.parameters_and_names():
        p.set_data(core.tensor(rng.normal(size=tuple(p.shape)).astype(np.float32) * 0.3))
    stack.set_train(True)
    grad_fn = core.value_and_grad(
        lambda m, z: (stack(m, z) ** 2).mean(), (0, 1), stack.trainable_params()
    )
    runs = {}
    for chunk in (None, 16):
        stack.msa_chunk_size = chunk
        core.set_seed(3)  # the same row-dropout mask in both runs
        peak, (val, (g_in, g_par)) = _peak_bytes(lambda: grad_fn(m, z))
        runs[chunk] = (peak, float(val.asnumpy()), [g.asnumpy() for g in (*g_in, *g_par)])
    (p0, v0, g0), (p1, v1, g1) = runs[None], runs[16]
    assert v0 == v1
    scale = max(float(np.abs(g).max()) for g in g0)
    for a, b in zip(g0, g1, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6 * scale)
    assert p1 * 3 <= p0, f"training peaks {p0} B plain vs {p1} B chunked"
