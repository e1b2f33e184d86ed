"""The whole Protenix network (tiny config, 2 recycles, MSA, template, 3 diffusion steps, 2
samples, confidence) vs PyTorch Protenix 2.0.0 on the same random weights, the same features
(Protenix's own featurizer output, fixtures/features.npz) and replayed random draws
(fixtures/make_model.py), and the block-wise inference path vs the plain one."""

import json
import pathlib

import numpy as np
import pytest

import core
from protenix.config.config_dict import ConfigDict
from protenix.model.generator import ReplayRandom
from protenix.model.protenix import Protenix

from ._trunk_fixture import assert_rel_close, load_strict

HERE = pathlib.Path(__file__).parent / "fixtures"
_CACHE = {}


def _fixture():
    if "d" not in _CACHE:
        with np.load(HERE / "model.npz") as f:
            _CACHE["d"] = {k: f[k] for k in f.files}
    return _CACHE["d"]


def _part(prefix):
    return {k[len(prefix) + 1 :]: v for k, v in _fixture().items() if k.startswith(prefix + "/")}


def _features():
    case = str(_fixture()["case"])
    feats, constraint = {}, {}
    with np.load(HERE / "features.npz") as f:
        for k in f.files:
            if k.startswith(f"{case}/feat/"):
                name = k[len(f"{case}/feat/") :]
                if name.startswith("constraint_feature."):
                    constraint[name.split(".", 1)[1]] = core.tensor(f[k])
                else:
                    feats[name] = core.tensor(f[k])
    feats["constraint_feature"] = constraint
    return feats


def _draws():
    rec = _part("draw")
    return [(k.split("/")[1], rec[k]) for k in sorted(rec)]


def _model():
    cfg = ConfigDict(json.loads(str(_fixture()["config"])))
    return load_strict(Protenix(cfg), _part("param")).set_train(False)


def _run(model, **kw):
    rng = ReplayRandom(_draws())
    pred, _, log = model(_features(), rng=rng, **kw)
    assert rng.pos == len(rng.draws), f"{len(rng.draws) - rng.pos} recorded draws left unused"
    return pred, log


@pytest.fixture(scope="module")
def model():
    return _model()


@pytest.fixture(scope="module")
def plain(model):
    return _run(model, disable_inplace=True)[0]


def test_trunk_matches_protenix(plain):
    out = _part("out")
    for k in ("s_inputs", "s", "z"):
        assert_rel_close(plain[k], out[k], 1e-4, k)


def test_structure_and_confidence_match_protenix(plain):
    out = _part("out")
    for k in ("coordinate", "plddt", "pae", "pde", "resolved"):
        assert_rel_close(plain[k], out[k], 1e-3, k)


def test_blockwise_inference_equals_plain(model, plain):
    pred, log = _run(model, chunk_size=4)
    assert log["N_cycle"] == 2
    for k in ("z", "coordinate", "plddt", "pae"):
        a, b = plain[k].asnumpy(), pred[k].asnumpy()
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-4 * np.abs(a).max(), err_msg=k)
