"""Parity with PyTorch Protenix 2.0.0 of AttentionPairBias (AF3 Algorithm 24: the Pairformer
form without s, the conditioned form, local atom attention), ConditionedTransitionBlock
(Algorithm 25), DiffusionTransformer (Algorithm 23), AtomTransformer (Algorithm 7) and the
atom attention encoder/decoder (Algorithms 5 and 6)."""

import numpy as np
import pytest

from diffsci import core
from diffsci.protenix.model.modules.transformer import (
    AtomAttentionDecoder,
    AtomAttentionEncoder,
    AtomTransformer,
    AttentionPairBias,
    ConditionedTransitionBlock,
    DiffusionTransformer,
)

from ._trunk_fixture import assert_rel_close, case, load_strict

RTOL = 1e-4


def test_pairformer_form_matches_protenix():
    cfg, params, x, want = case("apb_no_s")
    m = load_strict(AttentionPairBias(**cfg), params)
    y = m(a=x["a"], s=None, z=x["z"])
    assert_rel_close(y, want["y"], RTOL, "AttentionPairBias(has_s=False)")
    y2 = m(a=x["a"], s=None, z=x["z"], chunk_size=5)
    np.testing.assert_allclose(y2.asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)


def test_conditioned_form_matches_protenix():
    cfg, params, x, want = case("apb_s")
    m = load_strict(AttentionPairBias(**cfg), params)
    assert_rel_close(m(a=x["a"], s=x["s"], z=x["z"]), want["y"], RTOL, "AttentionPairBias")


def test_local_attention_matches_protenix():
    cfg, params, x, want = case("apb_local")
    nq, nk = cfg.pop("n_queries"), cfg.pop("n_keys")
    m = load_strict(AttentionPairBias(**cfg), params)
    y = m(a=x["a"], s=x["s"], z=x["z"], n_queries=nq, n_keys=nk)
    assert_rel_close(y, want["y"], RTOL, "AttentionPairBias local")


def test_conditioned_transition_matches_protenix():
    cfg, params, x, want = case("cond_transition")
    m = load_strict(ConditionedTransitionBlock(**cfg), params)
    assert_rel_close(m(a=x["a"], s=x["s"]), want["y"], RTOL, "ConditionedTransitionBlock")


def test_diffusion_transformer_matches_protenix_with_and_without_recompute():
    cfg, params, x, want = case("diffusion_transformer")
    m = load_strict(DiffusionTransformer(**cfg), params)
    m.set_train(False)
    y = m(a=x["a"], s=x["s"], z=x["z"])
    assert_rel_close(y, want["y"], RTOL, "DiffusionTransformer")
    m.blocks_per_ckpt = 1

    def loss(a, m=m):
        return (m(a=a, s=x["s"], z=x["z"]) ** 2).sum()

    g_rc = core.grad(loss)(x["a"])
    m.blocks_per_ckpt = None
    np.testing.assert_array_equal(g_rc.asnumpy(), core.grad(loss)(x["a"]).asnumpy())


def test_atom_transformer_matches_protenix():
    cfg, params, x, want = case("atom_transformer")
    m = load_strict(AtomTransformer(**cfg), params)
    m.set_train(False)
    assert_rel_close(m(q=x["q"], c=x["c"], p=x["p"]), want["y"], RTOL, "AtomTransformer")


@pytest.mark.parametrize("has_coords", [0, 1])
def test_atom_attention_encoder_matches_protenix(has_coords):
    cfg, params, x, want = case(f"atom_encoder_{has_coords}")
    m = load_strict(AtomAttentionEncoder(**cfg), params)
    m.set_train(False)
    pad_info = {"mask_trunked": x.pop("mask_trunked")}
    a, q_l, c_l, p_lm = m(**x, pad_info=pad_info)
    for name, got in (("a", a), ("q_l", q_l), ("c_l", c_l), ("p_lm", p_lm)):
        assert_rel_close(got, want[name], RTOL, f"AtomAttentionEncoder {name}")


def test_atom_attention_decoder_matches_protenix():
    cfg, params, x, want = case("atom_decoder")
    m = load_strict(AtomAttentionDecoder(**cfg), params)
    m.set_train(False)
    assert_rel_close(m(**x), want["r"], RTOL, "AtomAttentionDecoder")
