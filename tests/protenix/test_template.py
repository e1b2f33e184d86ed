"""Parity of TemplateEmbedder with PyTorch Protenix 2.0.0 (fixtures/template.npz, made by
fixtures/make_msa.py from the reference install), and chunked == plain paths."""

import os

import numpy as np
import pytest

from diffsci import core
from diffsci.protenix.model.modules.template import TemplateEmbedder
from diffsci.protenix.model.weights import load_weights

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "template.npz")


@pytest.fixture(scope="module")
def fx():
    with np.load(FIX) as f:
        return {k: f[k] for k in f.files}


def part(fx, kind):
    prefix = f"template/{kind}/"
    return {k[len(prefix) :]: v for k, v in fx.items() if k.startswith(prefix)}


def rel_err(got, ref, valid=None):
    got = got.asnumpy()
    if valid is not None:
        got, ref = got[valid], ref[valid]
    scale = float(np.max(np.abs(ref)))
    assert scale > 1e-3, "reference output is ~0: the case tests nothing"
    return float(np.max(np.abs(got - ref))) / scale


@pytest.fixture(scope="module")
def embedder(fx):
    cfg = {k: v.item() for k, v in part(fx, "cfg").items()}
    emb = TemplateEmbedder(n_blocks=cfg["n_blocks"], c=cfg["c"], c_z=cfg["c_z"])
    load_weights(emb, part(fx, "param"))  # strict
    emb.set_train(False)
    return emb


def test_template_embedder_parity(fx, embedder):
    x = {k: core.tensor(v) for k, v in part(fx, "in").items()}
    out = part(fx, "out")
    feats = {k: v for k, v in x.items() if k.startswith("template_") or k == "asym_id"}
    assert rel_err(embedder(feats, x["z"]), out["u_nomask"]) <= 1e-4
    # with padded tokens: entries between real tokens (a padded token's fully masked
    # triangle-attention row is float32 rounding noise near -1e9 in any implementation)
    tok = part(fx, "in")["pair_mask"].any(-1)
    valid = np.logical_and.outer(tok, tok)
    assert not valid.all()
    u = embedder(feats, x["z"], pair_mask=x["pair_mask"])
    assert rel_err(u, out["u"], valid) <= 1e-4
    u2 = embedder(feats, x["z"], pair_mask=x["pair_mask"], inplace_safe=True, chunk_size=3)
    assert rel_err(u2, out["u"], valid) <= 1e-4


def test_template_embedder_off(fx, embedder):
    x = {k: core.tensor(v) for k, v in part(fx, "in").items()}
    assert embedder({"asym_id": x["asym_id"]}, x["z"]) == 0  # no templates
    off = TemplateEmbedder(n_blocks=0, c=6, c_z=8)
    assert off(dict(x), x["z"]) == 0  # Protenix v0.5 models: n_blocks = 0


def test_hdf5_round_trip(fx, embedder, tmp_path):
    """core.save_checkpoint of the loaded embedder (Protenix names) -> load_weights into a new
    one -> the same output."""
    path = tmp_path / "template.ckpt.h5"
    core.save_checkpoint(embedder, str(path))
    fresh = TemplateEmbedder(n_blocks=2, c=6, c_z=8)
    load_weights(fresh, str(path))
    fresh.set_train(False)
    x = {k: core.tensor(v) for k, v in part(fx, "in").items()}
    feats = {k: v for k, v in x.items() if k.startswith("template_") or k == "asym_id"}
    np.testing.assert_array_equal(fresh(feats, x["z"]).asnumpy(), embedder(feats, x["z"]).asnumpy())
