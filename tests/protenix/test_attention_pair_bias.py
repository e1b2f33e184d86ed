"""Parity of AttentionPairBias (AF3 Algorithm 24) with PyTorch Protenix 2.0.0: the
Pairformer form (no s), the conditioned form (with s) and local atom attention."""

import numpy as np

from protenix.model.modules.transformer import AttentionPairBias

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
