"""Our Protenix variant configs against the reference Protenix 2.0.0's resolved configs.

The reference (fixtures/configs_reference.json) was dumped by fixtures/make_configs.py from
the PyTorch Protenix install, resolving each variant as its inference runner does.
"""

import copy
import json
import os

import pytest

from diffsci.protenix.config import ConfigDict, get_model_config, model_configs, model_names

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "configs_reference.json")
NAMES = [
    "protenix_base_default_v1.0.0",
    "protenix_base_20250630_v1.0.0",
    "protenix-v2",
    "protenix_mini_default_v0.5.0",
    "protenix_tiny_default_v0.5.0",
    "protenix_base_default_v0.5.0",
    "protenix_mini_esm_v0.5.0",
    "protenix_mini_ism_v0.5.0",
]
# sections that must be complete (every reference key present); "guidance" (training-free
# guidance) is the one part of sample_diffusion this port leaves out
COMPLETE = [
    "model",
    "infer_setting",
    "train_noise_sampler",
    "inference_noise_scheduler",
    "loss",
    "metrics",
    "skip_amp",
    "esm",
]


@pytest.fixture(scope="module")
def reference():
    with open(FIX) as f:
        return json.load(f)


def _leaves(tree, prefix=""):
    for k, v in tree.items():
        if isinstance(v, dict):
            yield from _leaves(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


def _same(a, b):
    """Equal, and of the same kind (a bool is not a number here; 4 and 4.0 are the same)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def _get(tree, dotted):
    for part in dotted.split("."):
        tree = tree[part]
    return tree


@pytest.mark.parametrize("name", NAMES)
def test_every_value_matches_reference(reference, name):
    ref = reference["resolved"][name]
    ours = get_model_config(name).to_dict()
    wrong = []
    for key, value in _leaves(ours):
        try:
            expect = _get(ref, key)
        except KeyError:
            wrong.append(f"{key}: not in the reference")
            continue
        if not _same(value, expect):
            wrong.append(f"{key}: ours {value!r}, reference {expect!r}")
    assert not wrong, "\n".join(wrong)
    for section in COMPLETE:
        assert ours[section] == ref[section], section
    sd = dict(ref["sample_diffusion"])
    sd.pop("guidance")
    assert ours["sample_diffusion"] == sd


def test_variant_overrides_are_protenix_s(reference):
    assert set(NAMES) == set(model_names()) == set(model_configs)
    for name in NAMES:
        assert model_configs[name] == reference["model_configs"][name], name


def test_published_hyperparameters_and_attribute_access():
    v2 = get_model_config("protenix-v2")
    assert v2.model.pairformer.c_z == 256 and v2.model.pairformer.hidden_scale_up is True
    assert v2.model.msa_module.c_m == 128 and v2.model.template_embedder.n_blocks == 2
    assert v2.model.constraint_embedder.c_constraint_z == 256  # follows the top-level c_z
    mini = get_model_config("protenix_mini_default_v0.5.0")
    assert (mini.model.pairformer.n_blocks, mini.sample_diffusion.N_step) == (16, 5)
    assert get_model_config("protenix_tiny_default_v0.5.0").model.pairformer.n_blocks == 8
    base = get_model_config("protenix_base_default_v1.0.0")
    assert base.model.pairformer.n_blocks == 48 and base.model.N_cycle == 10
    assert base["model"]["msa_module"]["c_s_inputs"] == 449
    with pytest.raises(AttributeError, match="no key 'c_zz'"):
        _ = base.model.pairformer.c_zz
    with pytest.raises(KeyError, match="unknown Protenix model 'protenix_huge'"):
        get_model_config("protenix_huge")


def test_overrides_resolve_top_level_references_and_do_not_leak():
    small = {"c_z": 16, "n_blocks": 2, "model": {"msa_module": {"n_blocks": 3}}}
    tiny = get_model_config("protenix_tiny_default_v0.5.0", overrides=small)
    assert tiny.model.relative_position_encoding.c_z == 16 == tiny.model.pairformer.c_z
    assert tiny.model.msa_module.n_blocks == 3
    # the variant sets pairformer.n_blocks itself, so the top-level n_blocks no longer reaches it
    assert tiny.model.pairformer.n_blocks == 8
    assert get_model_config(None, overrides=small).model.pairformer.n_blocks == 2
    again = get_model_config("protenix_tiny_default_v0.5.0")
    assert again.c_z == 128 and again.model.pairformer.n_blocks == 8


def test_config_dict():
    cfg = ConfigDict({"a": {"b": 1}})
    cfg.c = {"d": [1, 2]}
    assert isinstance(cfg.c, ConfigDict) and cfg.a.b == 1
    plain = cfg.to_dict()
    assert type(plain["a"]) is dict and plain == {"a": {"b": 1}, "c": {"d": [1, 2]}}
    dup = copy.deepcopy(cfg)
    dup.a.b = 2
    assert cfg.a.b == 1


SHAPES = os.path.join(os.path.dirname(__file__), "fixtures", "shapes_reference.json")
MODULES = ["msa_module", "template_embedder", "relative_position_encoding", "input_embedder"]


def _build(module, cfg):
    from diffsci.protenix.model.modules.embedders import RelativePositionEncoding
    from diffsci.protenix.model.modules.msa import MSAModule
    from diffsci.protenix.model.modules.template import TemplateEmbedder

    m = cfg.model
    if module == "msa_module":
        return MSAModule(**m.msa_module, msa_configs={})
    if module == "template_embedder":
        return TemplateEmbedder(**m.template_embedder)
    if module == "relative_position_encoding":
        return RelativePositionEncoding(**m.relative_position_encoding)
    try:
        from diffsci.protenix.model.modules.embedders import InputFeatureEmbedder

        return InputFeatureEmbedder(**m.input_embedder, esm_configs=cfg.esm)
    except ImportError as err:
        pytest.skip(f"AtomAttentionEncoder (protenix.model.modules.transformer) is missing: {err}")


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize(
    "name", ["protenix_base_default_v1.0.0", "protenix-v2", "protenix_mini_esm_v0.5.0"]
)
def test_full_size_modules_have_the_official_names_and_shapes(name, module):
    """Built from a variant's config at full size, each module has exactly the state-dict names
    and shapes of the reference module (what that variant's official checkpoint holds)."""
    with open(SHAPES) as f:
        ref = json.load(f)[name][module]
    ours = {
        n: list(p.shape) for n, p in _build(module, get_model_config(name)).parameters_and_names()
    }
    assert sorted(set(ref) - set(ours)) == [], "missing in ours"
    assert sorted(set(ours) - set(ref)) == [], "not in the reference"
    assert {n: s for n, s in ours.items() if ref[n] != s} == {}


def test_yaml_round_trip(tmp_path):
    from diffsci.protenix.config import load_config, save_config

    cfg = get_model_config("protenix-v2")
    save_config(cfg, str(tmp_path / "v2.yaml"))
    back = load_config(str(tmp_path / "v2.yaml"))
    assert back == cfg.to_dict()
    assert ConfigDict(back).model.pairformer.hidden_scale_up is True
