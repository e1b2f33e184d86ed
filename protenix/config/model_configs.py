"""Protenix's model configurations by name, with their published hyperparameters.

``get_model_config(name)`` resolves a variant the way Protenix 2.0.0's inference runner does
(``runner/inference.py::run``): the base defaults (``configs/configs_base.py``: model, loss
and inference settings) deep-updated with the variant's overrides (``model_configs[name]``,
``configs/configs_model_type.py``), then every value that refers to a top-level setting
(Protenix's ``GlobalConfigValue``, ``Top(...)`` below: ``model.pairformer.c_z`` is the
top-level ``c_z``) filled in from the updated top level. Keys are Protenix's, so
``cfg.model.msa_module.c_m`` reads as in Protenix.

Only settings a model, its loss or its inference read are kept: the training-run and
dataset settings of Protenix's base config (``project``, ``lr``, ``data`` ...) and the
training-free-guidance terms of ``sample_diffusion.guidance`` are not part of this port.

Variants (parameters in millions from Protenix's table; MSA, RNA MSA, templates):
``protenix_base_default_v1.0.0`` (368.48; templates, 2 template blocks),
``protenix_base_20250630_v1.0.0`` (368.48, 2025-06-30 PDB cutoff), ``protenix-v2`` (464.44;
c_z 256, ``hidden_scale_up``), ``protenix_base_default_v0.5.0`` (368.09),
``protenix_mini_default_v0.5.0`` (134.06; 16 Pairformer blocks, 5 diffusion steps),
``protenix_tiny_default_v0.5.0`` (109.50; 8 Pairformer blocks),
``protenix_mini_esm_v0.5.0`` / ``protenix_mini_ism_v0.5.0`` (ESM-2 embeddings, no MSA).
"""

import copy
from collections.abc import Mapping

from .config_dict import ConfigDict

__all__ = ["base_configs", "get_model_config", "model_configs", "model_names"]


class Top:
    """A value taken from the top-level key ``key`` when the config is resolved."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __repr__(self):
        return f"Top({self.key!r})"


# ---- base defaults (Protenix configs_base.py model/loss parts, configs_inference.py) ---------
base_configs = {
    # shared sizes (AF3 supplement: c_s 384, c_z 128, c_atom 128, c_atompair 16)
    "c_s": 384,
    "c_z": 128,
    "c_s_inputs": 449,  # c_token + 32 (restype) + 32 (profile) + 1 (deletion_mean)
    "c_atom": 128,
    "c_atompair": 16,
    "c_token": 384,
    "n_blocks": 48,
    "max_atoms_per_token": 24,
    "no_bins": 64,
    "sigma_data": 16.0,
    "diffusion_batch_size": 48,
    "diffusion_chunk_size": 4,
    "blocks_per_ckpt": 1,  # blocks per activation checkpoint; None: no checkpointing
    "hidden_scale_up": False,
    "mc_dropout_apply_rate": 0.4,
    "mc_dropout_rate": 0.4,
    "triangle_multiplicative": "cuequivariance",
    "triangle_attention": "cuequivariance",
    # kernel switches: configs_inference.py turns these on for inference (base: off)
    "enable_diffusion_shared_vars_cache": True,
    "enable_efficient_fusion": True,
    "enable_tf32": True,
    "dtype": "bf16",
    "loss_metrics_sparse_enable": True,
    "load_strict": True,
    "skip_amp": {
        "sample_diffusion": True,
        "confidence_head": False,
        "sample_diffusion_training": True,
        "loss": True,
    },
    "esm": {"enable": False, "model_name": "esm2-3b", "embedding_dim": 2560},
    "infer_setting": {
        "chunk_size": 256,
        "dynamic_chunk_size": True,
        # N_token upper bound -> chunk size (-1: no chunking); see protenix.model.utils
        "chunk_size_thresholds": {"1024": -1, "1536": 512, "2048": 256, "2560": 128},
        "sample_diffusion_chunk_size": 5,
        "lddt_metrics_sparse_enable": Top("loss_metrics_sparse_enable"),
        "lddt_metrics_chunk_size": 1,
    },
    "train_noise_sampler": {"p_mean": -1.2, "p_std": 1.5, "sigma_data": 16.0},
    "inference_noise_scheduler": {"s_max": 160.0, "s_min": 4e-4, "rho": 7, "sigma_data": 16.0},
    "sample_diffusion": {
        "gamma0": 0.8,
        "gamma_min": 1.0,
        "noise_scale_lambda": 1.003,
        "step_scale_eta": 1.5,
        "N_step": 200,
        "N_sample": 5,
        "N_step_mini_rollout": 20,
        "N_sample_mini_rollout": 1,
    },
    "model": {
        "N_model_seed": 1,
        "N_cycle": 4,
        "condition_embedding_drop_rate": 0.0,
        "confidence_embedding_drop_rate": 0.0,
        "input_embedder": {
            "c_atom": Top("c_atom"),
            "c_atompair": Top("c_atompair"),
            "c_token": Top("c_token"),
        },
        "relative_position_encoding": {"r_max": 32, "s_max": 2, "c_z": Top("c_z")},
        "template_embedder": {
            "c": 64,
            "c_z": Top("c_z"),
            "n_blocks": 0,
            "dropout": 0.25,
            "blocks_per_ckpt": Top("blocks_per_ckpt"),
            "hidden_scale_up": Top("hidden_scale_up"),
        },
        "msa_module": {
            "c_m": 64,
            "c_z": Top("c_z"),
            "c_s_inputs": Top("c_s_inputs"),
            "n_blocks": 4,
            "msa_dropout": 0.15,
            "pair_dropout": 0.25,
            "blocks_per_ckpt": Top("blocks_per_ckpt"),
            "hidden_scale_up": Top("hidden_scale_up"),
            "msa_chunk_size": 2048,
            "msa_max_size": 16384,
        },
        "constraint_embedder": {
            "pocket_embedder": {"enable": False, "c_s_input": 3, "c_z_input": 1},
            "contact_embedder": {"enable": False, "c_z_input": 2},
            "substructure_embedder": {
                "enable": False,
                "n_classes": 4,
                "architecture": "transformer",
                "hidden_dim": 128,
                "n_layers": 1,
            },
            "contact_atom_embedder": {"enable": False, "c_z_input": 2},
            "c_constraint_z": Top("c_z"),
            "c_constraint_s": Top("c_s_inputs"),
            "c_constraint_atom_pair": Top("c_atompair"),
            "initialize_method": "zero",
        },
        "pairformer": {
            "n_blocks": Top("n_blocks"),
            "c_z": Top("c_z"),
            "c_s": Top("c_s"),
            "n_heads": 16,
            "dropout": 0.25,
            "blocks_per_ckpt": Top("blocks_per_ckpt"),
            "hidden_scale_up": Top("hidden_scale_up"),
        },
        "diffusion_module": {
            "use_fine_grained_checkpoint": True,
            "sigma_data": Top("sigma_data"),
            "c_token": 768,
            "c_atom": Top("c_atom"),
            "c_atompair": Top("c_atompair"),
            "c_z": Top("c_z"),
            "c_s": Top("c_s"),
            "c_s_inputs": Top("c_s_inputs"),
            "atom_encoder": {"n_blocks": 3, "n_heads": 4},
            "transformer": {"n_blocks": 24, "n_heads": 16},
            "atom_decoder": {"n_blocks": 3, "n_heads": 4},
            "blocks_per_ckpt": Top("blocks_per_ckpt"),
        },
        "confidence_head": {
            "c_z": Top("c_z"),
            "c_s": Top("c_s"),
            "c_s_inputs": Top("c_s_inputs"),
            "n_blocks": 4,
            "max_atoms_per_token": Top("max_atoms_per_token"),
            "pairformer_dropout": 0.0,
            "blocks_per_ckpt": Top("blocks_per_ckpt"),
            "hidden_scale_up": Top("hidden_scale_up"),
            "distance_bin_start": 3.25,
            "distance_bin_end": 52.0,
            "distance_bin_step": 1.25,
            "stop_gradient": True,
        },
        "distogram_head": {"c_z": Top("c_z"), "no_bins": Top("no_bins")},
    },
    "loss": {
        "diffusion_lddt_chunk_size": 1,
        "diffusion_bond_chunk_size": 1,
        "diffusion_chunk_size_outer": 1,
        "diffusion_sparse_loss_enable": Top("loss_metrics_sparse_enable"),
        "diffusion_lddt_loss_dense": True,
        "resolution": {"min": 0.1, "max": 4.0},
        "weight": {
            "alpha_confidence": 1e-4,
            "alpha_pae": 0.0,
            "alpha_except_pae": 1.0,
            "alpha_diffusion": 4.0,
            "alpha_distogram": 3e-2,
            "alpha_bond": 0.0,
            "smooth_lddt": 1.0,
        },
        "plddt": {"min_bin": 0, "max_bin": 1.0, "no_bins": 50, "normalize": True, "eps": 1e-6},
        "pde": {"min_bin": 0, "max_bin": 32, "no_bins": 64, "eps": 1e-6},
        "resolved": {"eps": 1e-6},
        "pae": {"min_bin": 0, "max_bin": 32, "no_bins": 64, "eps": 1e-6},
        "diffusion": {
            "mse": {
                "weight_mse": 1 / 3,
                "weight_dna": 5.0,
                "weight_rna": 5.0,
                "weight_ligand": 10.0,
                "eps": 1e-6,
            },
            "bond": {"eps": 1e-6},
            "smooth_lddt": {"eps": 1e-6},
        },
        "distogram": {"min_bin": 2.3125, "max_bin": 21.6875, "no_bins": 64, "eps": 1e-6},
    },
    "metrics": {
        "lddt": {"eps": 1e-6},
        "complex_ranker_keys": ["plddt", "gpde", "ranking_score"],
        "chain_ranker_keys": ["chain_ptm", "chain_plddt"],
        "interface_ranker_keys": ["chain_pair_iptm", "chain_pair_iptm_global", "chain_pair_plddt"],
        "clash": {"af3_clash_threshold": 1.1, "vdw_clash_threshold": 0.75},
    },
    # inference defaults (configs_inference.py)
    "model_name": "protenix_base_default_v1.0.0",
    "seeds": [101],
    "dump_dir": "./output",
    "need_atom_confidence": False,
    "sorted_by_ranking_score": True,
    "use_msa": True,
    "msa_pair_as_unpair": True,
    "use_template": False,
    "use_rna_msa": False,
    "use_seeds_in_json": False,
}

_FEW_STEPS = {"gamma0": 0, "step_scale_eta": 1.0, "N_step": 5}  # mini/tiny sampler
_SMALL_DIFFUSION = {
    "atom_encoder": {"n_blocks": 1},
    "transformer": {"n_blocks": 8},
    "atom_decoder": {"n_blocks": 1},
}


def _small(pairformer_blocks, **extra):
    return {
        "sample_diffusion": dict(_FEW_STEPS),
        "model": {
            "N_cycle": 4,
            "msa_module": {"n_blocks": 1},
            "pairformer": {"n_blocks": pairformer_blocks},
            "diffusion_module": copy.deepcopy(_SMALL_DIFFUSION),
        },
        "load_strict": False,
        **extra,
    }


def _base_v1():
    return {
        "model": {"N_cycle": 10, "template_embedder": {"n_blocks": 2}},
        "sample_diffusion": {"N_step": 200},
    }


# ---- per-variant overrides (Protenix configs_model_type.py) ----------------------------------
model_configs = {
    "protenix-v2": {
        "c_z": 256,
        "diffusion_batch_size": 64,
        "model": {
            "N_cycle": 10,
            "relative_position_encoding": {"c_z": 256},
            "template_embedder": {"c_z": 256, "n_blocks": 2, "hidden_scale_up": True},
            "msa_module": {"c_m": 128, "c_z": 256, "hidden_scale_up": True},
            "pairformer": {"c_z": 256, "hidden_scale_up": True},
            "diffusion_module": {"c_z": 256},
            "confidence_head": {"c_z": 256, "hidden_scale_up": True},
            "distogram_head": {"c_z": 256},
        },
        "sample_diffusion": {"N_step": 200},
    },
    "protenix_base_default_v1.0.0": _base_v1(),
    "protenix_base_20250630_v1.0.0": _base_v1(),
    "protenix_base_default_v0.5.0": {"model": {"N_cycle": 10}, "sample_diffusion": {"N_step": 200}},
    "protenix_mini_default_v0.5.0": _small(16),
    "protenix_tiny_default_v0.5.0": _small(8),
    "protenix_mini_esm_v0.5.0": _small(
        16, esm={"enable": True, "model_name": "esm2-3b"}, use_msa=False
    ),
    "protenix_mini_ism_v0.5.0": _small(
        16, esm={"enable": True, "model_name": "esm2-3b-ism"}, use_msa=False
    ),
}


def model_names():
    """The variant names :func:`get_model_config` knows."""
    return list(model_configs)


def _deep_update(d, u):
    for key, value in u.items():
        if isinstance(value, Mapping) and isinstance(d.get(key), Mapping):
            _deep_update(d[key], value)
        else:
            d[key] = copy.deepcopy(value)
    return d


def _resolve(node, top):
    if isinstance(node, Top):
        value = top[node.key]
        return _resolve(value, top) if isinstance(value, Top) else value
    if isinstance(node, dict):
        return {k: _resolve(v, top) for k, v in node.items()}
    return node


def get_model_config(name=None, overrides=None):
    """The resolved configuration of a Protenix variant.

    Args:
        name: a key of :data:`model_configs`; None gives the base defaults (with
            ``model_name`` the default variant, without its overrides).
        overrides: a nested dict deep-updated last (before top-level references resolve), e.g.
            ``{"c_z": 16, "model": {"pairformer": {"n_blocks": 1}}}`` for a tiny test model.

    Returns:
        A :class:`ConfigDict` with Protenix's keys (``cfg.model.pairformer.n_blocks``).

    Raises:
        KeyError: an unknown name, listing the known ones.
    """
    cfg = copy.deepcopy(base_configs)
    if name is not None:
        if name not in model_configs:
            raise KeyError(
                f"get_model_config: unknown Protenix model {name!r}; known: {model_names()}"
            )
        _deep_update(cfg, model_configs[name])
        cfg["model_name"] = name
    if overrides:
        _deep_update(cfg, overrides)
    top = {k: v for k, v in cfg.items() if not isinstance(v, dict)}
    return ConfigDict(_resolve(cfg, top))
