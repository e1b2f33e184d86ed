"""The bfloat16 trunk (protenix.model.precision): the Pairformer stack, the MSA module and the
template embedder run end to end in bfloat16 (ml_dtypes) with Protenix's float32 weights and
the fixtures' inputs cast down, as under Protenix's autocast.

Checked: every output is bfloat16; no primitive mixes a bfloat16 operand with a float32 one
(a silent promotion: masks, biases, features or parameters that were not cast); float32
appears only through explicit casts (LayerNorm statistics, the attention logits/softmax of
evoformer_attention: both float32 in Protenix too) and stays below the size of a bfloat16 pair
tensor per temporary on the block-wise path; the bf16 outputs are within BF16_RTOL of
PyTorch Protenix's float32 outputs (fixtures); the block-wise activation peak of a Pairformer
block drops (measured with tracemalloc).
"""

import gc
import os
import traceback
import tracemalloc

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops, primitive
from diffsci.core.dtypes import is_floating
from diffsci.protenix.model import precision
from diffsci.protenix.model.modules.msa import MSAModule
from diffsci.protenix.model.modules.pairformer import PairformerBlock, PairformerStack
from diffsci.protenix.model.modules.template import TemplateEmbedder
from diffsci.protenix.model.weights import load_weights

from ._trunk_fixture import case, load_strict

BF16 = core.bfloat16
F32 = np.dtype(np.float32)
WIDE = {F32, np.dtype(np.float64)}
# bfloat16 keeps 8 significant bits (relative spacing 2^-8 = 3.9e-3); through two blocks of
# layer norms, attention and residual sums the max error stays within a few spacings of the
# largest output value.
BF16_RTOL = 2e-2
FIX = os.path.join(os.path.dirname(__file__), "fixtures")


class DtypeLog:
    """Records promotions of bfloat16 with float32/64 (``core.dtypes.promote_types``, where
    every op that mixes dtypes decides its result dtype), and the float32/64 results of every
    eagerly run primitive."""

    def __init__(self):
        self.mixed = []  # (the op's caller, dtypes): a bf16 operand promoted with a float32 one
        self.f32 = []  # (prim, shape) of float32/64 results

    def promote(self, real):
        def promote_types(a, b):
            if BF16 in (np.dtype(a), np.dtype(b)) and {np.dtype(a), np.dtype(b)} & WIDE:
                where = [f"{os.path.basename(f.filename)}:{f.lineno}"
                         for f in traceback.extract_stack()[-6:-1]]  # fmt: skip
                self.mixed.append((where, str(a), str(b)))
            return real(a, b)

        return promote_types

    def eager(self, run):
        def eager(prim, args, params):
            out = run(prim, args, params)
            for o in out if isinstance(out, (tuple, list)) else (out,):
                v = getattr(o, "_value", None)
                if v is not None and is_floating(v.dtype) and v.dtype != BF16:
                    self.f32.append((prim.name, tuple(v.shape)))
            return out

        return eager


@pytest.fixture
def dtype_log(monkeypatch):
    log = DtypeLog()
    monkeypatch.setattr(primitive, "eager", log.eager(primitive.eager))
    monkeypatch.setattr(core.dtypes, "promote_types", log.promote(core.dtypes.promote_types))
    return log


def rel_err(got, want, valid=None):
    got = np.asarray(got.asnumpy(), dtype=np.float32)
    if valid is not None:
        got, want = got[valid], want[valid]
    scale = float(np.max(np.abs(want)))
    assert scale > 1e-3, "reference output is ~0: the case tests nothing"
    return float(np.max(np.abs(got - want))) / scale


def _npz(name, prefix):
    with np.load(os.path.join(FIX, name)) as f:
        return {k[len(prefix) :]: f[k] for k in f.files if k.startswith(prefix)}


def _check_log(log, pair_elems):
    assert not log.mixed, f"bf16 operands mixed with float32 (silent promotion): {log.mixed[:5]}"
    allowed = {"convert", "layer_norm", "matmul", "softmax", "add", "sub", "mul", "select",
               "getitem", "transpose", "stop_gradient", "exp", "logsumexp", "reduce_max",
               "concatenate", "reshape", "broadcast_in_dim"}  # fmt: skip
    odd = sorted({name for name, _ in log.f32} - allowed)
    assert not odd, f"float32 results from unexpected primitives: {odd}"
    if pair_elems is not None:
        big = max((int(np.prod(shape)) for _, shape in log.f32), default=0)
        assert big <= pair_elems, f"a float32 temporary of {big} elements > the pair tensor"


@pytest.mark.parametrize("blockwise", [False, True])
def test_pairformer_stack_bf16(dtype_log, blockwise):
    cfg, params, x, want = case("pairformer_stack")
    m = load_strict(PairformerStack(**cfg), params)
    m.set_train(False)
    s, z, mask = precision.cast_floats((x["s"], x["z"], x["pair_mask"]), BF16)
    with core.no_grad():
        s1, z1 = m(s, z, mask, inplace_safe=blockwise, chunk_size=4 if blockwise else None)
    assert s1.dtype == BF16 and z1.dtype == BF16
    _check_log(dtype_log, z.size if blockwise else None)
    es, ez = rel_err(s1, want["s"]), rel_err(z1, want["z"])
    print(f"PairformerStack bf16 vs PyTorch float32: s {es:.2e}, z {ez:.2e}")
    assert es <= BF16_RTOL and ez <= BF16_RTOL
    assert ez > 1e-5, "bf16 output equals float32: the trunk did not compute in bf16"


@pytest.mark.parametrize("blockwise", [False, True])
def test_msa_module_bf16(dtype_log, blockwise):
    from .test_msa import Replay

    fx = _npz("msa.npz", "module/")
    c = {k[4:]: v.item() for k, v in fx.items() if k.startswith("cfg/")}
    module = MSAModule(
        n_blocks=c["n_blocks"], c_m=c["c_m"], c_z=c["c_z"], c_s_inputs=c["c_s_inputs"],
        msa_chunk_size=1 if blockwise else c["msa_chunk_size"],
        msa_configs={"sample_cutoff": {"train": 512, "test": c["test_cutoff"]},
                     "min_size": {"train": 1, "test": c["test_lowerb"]}},
    )  # fmt: skip
    load_weights(module, {k[6:]: v for k, v in fx.items() if k.startswith("param/")})
    module.set_train(False)
    x = {k[3:]: core.tensor(v) for k, v in fx.items() if k.startswith("in/")}
    feats = {k: x[k] for k in ("msa", "has_deletion", "deletion_value")}
    z, s_in, mask = precision.cast_floats((x["z"], x["s_inputs"], x["pair_mask"]), BF16)
    rng = Replay(fx["draws/sample_size"], fx["draws/perm"])
    with core.no_grad():
        z1 = module(feats, z, s_in, mask, inplace_safe=blockwise,
                    chunk_size=3 if blockwise else None, rng=rng)  # fmt: skip
    assert z1.dtype == BF16
    _check_log(dtype_log, None)
    err = rel_err(z1, fx["out/z"])
    print(f"MSAModule bf16 vs PyTorch float32: {err:.2e}")
    assert 1e-5 < err <= BF16_RTOL


def test_template_embedder_bf16(dtype_log):
    fx = _npz("template.npz", "template/")
    c = {k[4:]: v.item() for k, v in fx.items() if k.startswith("cfg/")}
    emb = TemplateEmbedder(n_blocks=c["n_blocks"], c=c["c"], c_z=c["c_z"])
    load_weights(emb, {k[6:]: v for k, v in fx.items() if k.startswith("param/")})
    emb.set_train(False)
    x = {k[3:]: core.tensor(v) for k, v in fx.items() if k.startswith("in/")}
    feats = {k: v for k, v in x.items() if k.startswith("template_") or k == "asym_id"}
    # the template features stay float32: the embedder casts them to z's dtype itself
    z = precision.cast_floats(x["z"], BF16)
    with core.no_grad():
        u = emb(feats, z)
    assert u.dtype == BF16
    _check_log(dtype_log, None)
    err = rel_err(u, fx["out/u_nomask"])
    print(f"TemplateEmbedder bf16 vs PyTorch float32: {err:.2e}")
    assert 1e-5 < err <= BF16_RTOL


def test_the_check_sees_an_uncast_mask(dtype_log):
    """The promotion check can fail: a float32 pair mask next to a bf16 z is reported."""
    cfg, params, x, _ = case("pairformer_stack")
    m = load_strict(PairformerStack(**cfg), params)
    m.set_train(False)
    s, z = precision.cast_floats((x["s"], x["z"]), BF16)
    with core.no_grad():
        m(s, z, x["pair_mask"])  # the mask left float32
    with pytest.raises(AssertionError, match="silent promotion"):
        _check_log(dtype_log, None)


def test_cast_floats_keeps_ints_and_structure():
    t = {"a": core.tensor(np.ones(3, np.float32)), "b": core.tensor(np.arange(3)),
         "c": [core.tensor(np.zeros(2, np.float64))], "d": None, "e": 3}  # fmt: skip
    out = precision.cast_floats(t, BF16)
    assert out["a"].dtype == BF16 and out["c"][0].dtype == BF16
    assert out["b"].dtype == t["b"].dtype and out["d"] is None and out["e"] == 3
    back = precision.cast_floats(out, F32)
    assert back["a"].dtype == F32


def test_dtype_names_and_protenix_amp_rule():
    assert precision.compute_dtype("bf16") == BF16
    assert precision.compute_dtype("fp32") == F32
    assert precision.compute_dtype("fp16") == np.dtype(np.float16)
    with pytest.raises(ValueError, match="'bf17'"):
        precision.compute_dtype("bf17")
    # Protenix 2.0.0 runner/inference.py update_inference_configs
    rule = precision.skip_amp_for_inference
    assert rule(512, "protenix_mini_default_v0.5.0") == {
        "sample_diffusion": True, "confidence_head": True}  # fmt: skip
    assert rule(512, "protenix-v2") == {"sample_diffusion": True, "confidence_head": False}
    assert rule(3000, "protenix_base_default_v1.0.0") == {
        "sample_diffusion": True, "confidence_head": False}  # fmt: skip
    assert rule(4000, "protenix_base_default_v1.0.0") == {
        "sample_diffusion": False, "confidence_head": False}  # fmt: skip
    with pytest.raises(ValueError, match="2560"):
        rule(3000, "protenix-v2")


def test_float32_regions_cast_back():
    calls = []

    @precision.autocast_disabled(True)
    def head(a, b=None, n=2):
        calls.append((a.dtype, b.dtype, n))
        return a + b

    x = core.tensor(np.ones(2, np.float32)).astype(BF16)
    out = head(x, b=x, n=3)
    assert calls == [(F32, F32, 3)] and out.dtype == F32
    calls.clear()
    precision.autocast_disabled(False)(head.__wrapped__)(x, b=x)
    assert calls == [(BF16, BF16, 2)]


def _blockwise_peak(blk, s, z, mask):
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    with core.no_grad():
        _, z1 = blk(s, z, mask, inplace_safe=True, chunk_size=16)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    assert np.isfinite(np.asarray(z1.asnumpy(), np.float32)).all()
    return peak


def test_bf16_blockwise_block_peak_drops():
    """Block-wise PairformerBlock, N = 128, c_z = 32: the traced activation peak in bf16 is at
    most 0.65x the float32 one (measured 0.58: the pair-sized temporaries halve; the row
    blocks' LayerNorm inputs/outputs and logits stay float32, as in Protenix)."""
    n, c_z, c_s = 128, 32, 16
    core.set_seed(0)
    blk = PairformerBlock(n_heads=2, c_z=c_z, c_s=c_s, c_hidden_mul=32, c_hidden_pair_att=8,
                          no_heads_pair=2)  # fmt: skip
    blk.set_train(False)
    rng = np.random.default_rng(0)
    s = core.tensor(rng.normal(size=(n, c_s)).astype(np.float32))
    z = core.tensor(rng.normal(size=(n, n, c_z)).astype(np.float32))
    mask = ops.ones((n, n))
    threads = core.get_num_threads()
    core.set_num_threads(1)
    try:
        p32 = _blockwise_peak(blk, s, z, mask)
        p16 = _blockwise_peak(blk, *precision.cast_floats((s, z, mask), BF16))
    finally:
        core.set_num_threads(threads)
    pair = n * n * c_z * 4
    print(f"block-wise peak N={n} c_z={c_z}: float32 {p32 / pair:.2f}x, bf16 {p16 / pair:.2f}x "
          f"the float32 pair tensor ({p16 / p32:.2f})")  # fmt: skip
    assert p16 <= 0.65 * p32, f"bf16 peak {p16} B vs float32 {p32} B"
