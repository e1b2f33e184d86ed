"""Parity of the input embedders with PyTorch Protenix 2.0.0 (fixtures/embedders.npz, made by
fixtures/make_msa.py from the reference install)."""

import os

import numpy as np
import pytest

from diffsci import core
from diffsci.protenix.model.modules.embedders import FourierEmbedding, RelativePositionEncoding
from diffsci.protenix.model.weights import load_weights

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "embedders.npz")


@pytest.fixture(scope="module")
def fx():
    with np.load(FIX) as f:
        return {k: f[k] for k in f.files}


def part(fx, case, kind):
    prefix = f"{case}/{kind}/"
    return {k[len(prefix) :]: v for k, v in fx.items() if k.startswith(prefix)}


def cfg(fx, case):
    return {k: v.item() for k, v in part(fx, case, "cfg").items()}


def rel_err(got, ref):
    got = got.asnumpy() if hasattr(got, "asnumpy") else np.asarray(got)
    scale = float(np.max(np.abs(ref)))
    assert scale > 1e-3, "reference output is ~0: the case tests nothing"
    return float(np.max(np.abs(got - ref))) / scale


def test_relative_position_encoding(fx):
    rpe = RelativePositionEncoding(**cfg(fx, "rpe"))
    load_weights(rpe, part(fx, "rpe", "param"))
    feats = {k: core.tensor(v) for k, v in part(fx, "rpe", "in").items()}
    out = part(fx, "rpe", "out")
    d = rpe.generate_relp(dict(feats))
    # the features are exact (integers): two chains of one entity, a ligand, clipping at r_max
    np.testing.assert_array_equal(d["relp"].asnumpy(), out["relp"])
    assert rel_err(rpe(d["relp"]), out["z"]) <= 1e-4


def test_relative_position_features_by_hand():
    rpe = RelativePositionEncoding(r_max=2, s_max=1, c_z=4)
    f = {
        "asym_id": core.tensor([0, 0, 1]),
        "residue_index": core.tensor([1, 5, 1]),
        "entity_id": core.tensor([0, 0, 0]),
        "sym_id": core.tensor([0, 0, 1]),
        "token_index": core.tensor([0, 1, 2]),
    }
    relp = rpe.generate_relp(f)["relp"].asnumpy()  # [3, 3, 4*2 + 2*1 + 7 = 17]
    assert relp.shape == (3, 3, 17)
    # (0, 1): same chain, residue offset 1 - 5 = -4 clipped to -2 -> bin 0; other residue -> token
    # bin 2 r_max + 1 = 5; same entity; sym offset 0 -> bin 1
    np.testing.assert_array_equal(np.nonzero(relp[0, 1])[0], [0, 6 + 5, 12, 13 + 1])
    # (0, 2): other chain -> residue and token bins 5; same entity; sym offset -1 -> bin 0
    np.testing.assert_array_equal(np.nonzero(relp[0, 2])[0], [5, 6 + 5, 12, 13 + 0])


def test_fourier_embedding(fx):
    fe = FourierEmbedding(**cfg(fx, "fourier"))
    assert [(n, p.requires_grad) for n, p in fe.parameters_and_names()] == [
        ("w", False),
        ("b", False),
    ]
    assert fe.trainable_params() == []
    load_weights(fe, part(fx, "fourier", "param"))
    t = core.tensor(part(fx, "fourier", "in")["t"])
    assert rel_err(fe(t), part(fx, "fourier", "out")["emb"]) <= 1e-4


def input_features(fx):
    """The atom and token features of the input-embedder case, with the torch run's d_lm, v_lm
    and pad_info (as Protenix's rearrange_qk_to_dense_trunk returns it: ints and a mask)."""
    feats = {k: core.tensor(v) for k, v in part(fx, "input", "in").items()}
    feats.update({k: core.tensor(v) for k, v in part(fx, "input", "derived").items()})
    feats["pad_info"] = {
        k: int(v) if v.ndim == 0 else core.tensor(v)
        for k, v in part(fx, "input", "pad_info").items()
    }
    return feats


def test_input_feature_embedder(fx):
    try:
        from diffsci.protenix.model.modules.embedders import InputFeatureEmbedder

        ife = InputFeatureEmbedder(**cfg(fx, "input"))
    except ImportError as err:
        pytest.skip(f"AtomAttentionEncoder (protenix.model.modules.transformer) is missing: {err}")
    load_weights(ife, part(fx, "input", "param"))
    ife.set_train(False)
    feats = input_features(fx)
    s_inputs = ife(feats)
    ref = part(fx, "input", "out")["s_inputs"]
    assert tuple(s_inputs.shape) == ref.shape
    assert rel_err(s_inputs, ref) <= 1e-4


def test_input_feature_embedder_with_esm(fx):
    """ESM-enabled variants (protenix_mini_esm/ism): s_inputs += LinearNoBias(ESM embedding)."""
    try:
        from diffsci.protenix.model.modules.embedders import InputFeatureEmbedder

        esm = {"enable": True, "embedding_dim": 5}
        ife = InputFeatureEmbedder(**cfg(fx, "input"), esm_configs=esm)
    except ImportError as err:
        pytest.skip(f"AtomAttentionEncoder (protenix.model.modules.transformer) is missing: {err}")
    load_weights(ife, {**part(fx, "input", "param"), **part(fx, "input_esm", "param")})
    ife.set_train(False)
    feats = input_features(fx)
    feats["esm_token_embedding"] = core.tensor(part(fx, "input_esm", "in")["esm_token_embedding"])
    assert rel_err(ife(feats), part(fx, "input_esm", "out")["s_inputs"]) <= 1e-4
