"""The whole Protenix network (tiny config, 2 recycles, MSA, template, 3 diffusion steps, 2
samples, confidence) vs PyTorch Protenix 2.0.0 on the same random weights, the same features
(Protenix's own featurizer output, fixtures/features.npz) and replayed random draws
(fixtures/make_model.py), and the block-wise inference path vs the plain one."""

import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops
from diffsci.protenix.config.config_dict import ConfigDict
from diffsci.protenix.model.generator import ReplayRandom
from diffsci.protenix.model.protenix import Protenix

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


@pytest.mark.parity
@pytest.mark.parametrize(
    "script, fixture",
    [("make_model.py", "model.npz"), ("make_diffusion.py", "diffusion.npz"),
     ("make_confidence_head.py", "confidence_head.npz")],
)  # fmt: skip
def test_fixtures_regenerate_from_reference(tmp_path, script, fixture):
    """Re-run a fixture script against the PyTorch reference (a subprocess started outside the
    repository, so our package never shadows it) and check the committed fixture is what it
    produces (inputs, weights and recorded draws exactly; outputs to summation order): the
    parity tests then hold against live PyTorch."""
    repo = pathlib.Path(__file__).resolve().parents[2]
    ref = repo / ".ref" / "protenix-2.0.0"
    if not ref.is_dir():
        pytest.skip(f"the reference Protenix 2.0.0 is not installed at {ref}")
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed (the reference needs it)")
    env = dict(os.environ, PYTHONPATH=str(ref), LAYERNORM_TYPE="torch", OMP_NUM_THREADS="1")
    out = tmp_path / fixture
    subprocess.run([sys.executable, str(HERE / script), str(out)], cwd=tmp_path, env=env,
                   check=True, capture_output=True, timeout=600)  # fmt: skip
    with np.load(out) as new, np.load(HERE / fixture) as old:
        assert sorted(new.files) == sorted(old.files)
        for k in old.files:
            if k.startswith("out/") or "/out/" in k:
                scale = float(np.abs(old[k]).max()) if old[k].size else 0.0
                np.testing.assert_allclose(new[k], old[k], rtol=1e-4, atol=1e-5 * scale,
                                           err_msg=k)  # fmt: skip
            else:
                np.testing.assert_array_equal(new[k], old[k], err_msg=k)


def _variants():
    import gzip

    with gzip.open(HERE / "model_variants.json.gz", "rt") as f:
        return json.load(f)


@pytest.mark.parametrize("variant", sorted(_variants()))
def test_state_dict_names_and_shapes_of_variants(variant):
    """The whole network's parameter names and shapes equal PyTorch Protenix's state dict for
    variants that differ in structure (templates, scaled-up triangles, ESM input), so their
    checkpoints load by name (fixtures/make_model.py --variants)."""
    ref = _variants()[variant]
    model = Protenix(ConfigDict(ref["config"]))
    ours = {k: list(p.shape) for k, p in model.parameters_and_names()}
    assert sorted(set(ref["shapes"]) - set(ours)) == [], "missing in ours"
    assert sorted(set(ours) - set(ref["shapes"])) == [], "not in Protenix's state dict"
    wrong = {k: (ours[k], v) for k, v in ref["shapes"].items() if ours[k] != v}
    assert not wrong, f"shapes (ours, Protenix): {wrong}"


def test_default_rng_is_seeded_and_mc_dropout_draws_from_it(model):
    """rng=None draws from core's generator (core.random.set_seed repeats a run); MC dropout
    (mc_dropout_apply_rate=1) changes the trunk and repeats under the same seed."""
    runs = []
    for rate in (0.0, 0.0, 1.0, 1.0):
        core.random.set_seed(3)
        runs.append(model(_features(), N_step=2, N_sample=1, disable_inplace=True,
                          mc_dropout_apply_rate=rate)[0])  # fmt: skip
    np.testing.assert_array_equal(runs[0]["coordinate"].asnumpy(), runs[1]["coordinate"].asnumpy())
    np.testing.assert_array_equal(runs[2]["z"].asnumpy(), runs[3]["z"].asnumpy())
    assert np.abs(runs[2]["z"].asnumpy() - runs[0]["z"].asnumpy()).max() > 1e-3


def test_bf16_trunk_with_float32_diffusion_and_confidence(model):
    """dtype="bf16": the recycles run in bfloat16 (the trunk outputs are bfloat16), diffusion
    and confidence in float32. Against PyTorch's float32 run (2 recycles of template, MSA and
    Pairformer with random weights) the bfloat16 rounding of the activations accumulates to
    1.8e-2 (s) and 5.6e-2 (z) of the largest value (rms 1.3e-2, 3.0e-2), measured; an error
    in the dtype plumbing would be O(1)."""
    pred, _ = _run(model, disable_inplace=True, dtype="bf16")
    out = _part("out")
    assert pred["z"].dtype == core.bfloat16 and pred["s"].dtype == core.bfloat16
    assert pred["coordinate"].dtype == core.float32 and pred["pae"].dtype == core.float32
    for k, tol in (("s", 4e-2), ("z", 1e-1)):
        assert_rel_close(ops.astype(pred[k], core.float32), out[k], tol, k)
    x = pred["coordinate"].asnumpy()
    assert x.shape == out["coordinate"].shape and np.isfinite(x).all()
