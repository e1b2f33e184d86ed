"""The command's tests run the real network with random weights; at the variants' sizes that
would take minutes on a CPU, so every config ``protenix predict`` resolves here is shrunk to
tiny channel sizes and one block per stack (same keys, recycles, steps and output bins)."""

import pytest

from diffsci.protenix.cli import predict
from diffsci.protenix.config import get_model_config

TINY = {
    "c_s": 32,
    "c_z": 8,
    "c_token": 16,
    "c_s_inputs": 16 + 65,
    "c_atom": 8,
    "c_atompair": 4,
    "model": {
        "input_embedder": {"c_token": 16},
        "msa_module": {"c_m": 8, "n_blocks": 1},
        "template_embedder": {"c": 8},
        "pairformer": {"n_blocks": 1},
        "diffusion_module": {
            "c_token": 16,
            "atom_encoder": {"n_blocks": 1, "n_heads": 2},
            "transformer": {"n_blocks": 1, "n_heads": 2},
            "atom_decoder": {"n_blocks": 1, "n_heads": 2},
        },
        "confidence_head": {"n_blocks": 1},
    },
}


@pytest.fixture(autouse=True)
def tiny_network(monkeypatch):
    def tiny_config(name=None, overrides=None):
        cfg = get_model_config(name, overrides=TINY)
        if overrides:
            raise AssertionError("tests/protenix/cli: unexpected config overrides")
        return cfg

    monkeypatch.setattr(predict, "get_model_config", tiny_config)
