"""Parity of Protenix's primitives with PyTorch Protenix 2.0.0 (fixtures/trunk.npz), and the
chunked Transition equal to the plain one."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops
from diffsci.protenix.model.modules.primitives import (
    AdaptiveLayerNorm,
    Attention,
    BiasInitLinear,
    Linear,
    LinearNoBias,
    Transition,
    broadcast_token_to_local_atom_pair,
    create_local_attn_bias,
    rearrange_qk_to_dense_trunk,
)
from diffsci.protenix.model.triangular.layers import LayerNorm

from ._trunk_fixture import assert_rel_close, case, load_strict

RTOL = 1e-4


def test_layernorm_matches_protenix():
    cfg, params, x, want = case("layernorm")
    m = load_strict(LayerNorm(**cfg), params)
    assert_rel_close(m(x["x"]), want["y"], RTOL, "LayerNorm")


def test_transition_matches_protenix_and_chunks_equal():
    cfg, params, x, want = case("transition")
    m = load_strict(Transition(**cfg), params)
    y = m(x["x"])
    assert_rel_close(y, want["y"], RTOL, "Transition")
    np.testing.assert_allclose(m(x["x"], chunk_size=5).asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)


def test_adaptive_layernorm_matches_protenix():
    cfg, params, x, want = case("adaln")
    m = load_strict(AdaptiveLayerNorm(**cfg), params)
    assert_rel_close(m(x["a"], x["s"]), want["y"], RTOL, "AdaptiveLayerNorm")


def test_attention_matches_protenix_and_chunks_equal():
    cfg, params, x, want = case("attention")
    m = load_strict(Attention(**cfg), params)
    y = m(x["q_x"], x["kv_x"], attn_bias=x["attn_bias"])
    assert_rel_close(y, want["y"], RTOL, "Attention")
    y3 = m(x["q_x"], x["kv_x"], attn_bias=x["attn_bias"], chunk_size=3)
    np.testing.assert_allclose(y3.asnumpy(), y.asnumpy(), rtol=1e-6, atol=1e-6)


def test_local_attention_methods_agree():
    """The dense-block local attention equals full attention with the window bias."""
    core.set_seed(3)
    a = Attention(8, 8, 8, 4, 2, zero_init=False)
    x, b = ops.randn((2, 21, 8)), ops.randn((2, 2, 21, 21))
    y1 = a(x, x, attn_bias=b, n_queries=4, n_keys=10)
    a.local_attention_method = "local_cross_attention"
    y2 = a(x, x, attn_bias=b, n_queries=4, n_keys=10)
    np.testing.assert_allclose(y2.asnumpy(), y1.asnumpy(), rtol=1e-5, atol=1e-6)


def test_local_attn_bias_window():
    """Query block t (rows 2t, 2t+1) sees keys [2t - 1, 2t + 3) (n_queries=2, n_keys=4)."""
    bias = create_local_attn_bias(6, 2, 4, inf=1e10).asnumpy()
    seen = bias == 0
    want = np.zeros((6, 6), bool)
    for i in range(6):
        t = i // 2
        want[i, max(0, 2 * t - 1) : 2 * t + 3] = True
    np.testing.assert_array_equal(seen, want)


def test_linear_initializers_and_names():
    core.set_seed(0)
    lin = Linear(64, 256)
    w = lin.weight.asnumpy()
    # LeCun truncated normal: variance 1/fan_in, no value beyond 2 std of the untruncated law
    assert abs(w.var() * 64 - 1.0) < 0.1, w.var() * 64
    assert np.abs(w).max() <= 2.0 / np.sqrt(64) / 0.8796 + 1e-6
    assert np.all(lin.bias.asnumpy() == 0)
    assert [n for n, _ in LinearNoBias(3, 4).parameters_and_names()] == ["weight"]
    bl = BiasInitLinear(3, 4, biasinit=-2.0)
    assert np.all(bl.weight.asnumpy() == 0) and np.all(bl.bias.asnumpy() == -2.0)
    with pytest.raises(ValueError, match="in_features=3"):
        lin2 = Linear(3, 4)
        lin2(ops.ones((2, 5)))


def test_dense_trunks_match_protenix():
    """rearrange_qk_to_dense_trunk (list form, int and float tensors, the pair mask and the
    padding sizes) and broadcast_token_to_local_atom_pair, against Protenix."""
    cfg, _, x, want = case("dense_trunk")
    nq, nk = cfg["n_queries"], cfg["n_keys"]
    (qp, qu), (kp, ku), info = rearrange_qk_to_dense_trunk(
        [x["pos"], x["uid"]], [x["pos"], x["uid"]], [-2, -1], [-2, -1], nq, nk, True
    )
    for name, got in (("q_pos", qp), ("q_uid", qu), ("k_pos", kp), ("k_uid", ku)):
        np.testing.assert_array_equal(got.asnumpy(), want[name], err_msg=name)
    mask = info["mask_trunked"].asnumpy()
    np.testing.assert_array_equal(mask, want["mask"].reshape(mask.shape))
    assert [info["q_pad"], info["k_pad_left"], info["k_pad_right"]] == list(want["pads"])
    z_loc, _ = broadcast_token_to_local_atom_pair(
        x["z_token"], x["atom_to_token_idx"], nq, nk, compute_mask=False
    )
    np.testing.assert_array_equal(z_loc.asnumpy(), want["z_local"])
