"""A small training example for the Protenix model and a tiny training configuration.

:func:`helix_example` featurizes a protein sequence with :func:`protenix.data.featurize`
and gives it a "true" structure: an ideal alpha helix (backbone built by NeRF from the
standard bond lengths and angles, Engh & Huber 1991: N-CA 1.458, CA-C 1.525, C-N 1.329 A;
N-CA-C 111.2, CA-C-N 116.2, C-N-CA 121.7 degrees; phi -57, psi -47, omega 180) with each
residue's CCD reference conformer superposed (Kabsch) on its N, CA, C.

:func:`tiny_config` is a Protenix configuration with tiny channel sizes (one block per stack)
for training tests and benches; its loss weights are Protenix's fine-tuning ones.
"""

import numpy as np

from ..config import get_model_config
from ..data.featurizer import featurize

__all__ = ["helix_example", "ideal_helix_backbone", "tiny_config"]


def _place(a, b, c, bond, angle, torsion):
    """NeRF: the atom d with |cd| = bond, angle bcd, torsion abcd (degrees)."""
    angle, torsion = np.radians(angle), np.radians(torsion)
    bc = (c - b) / np.linalg.norm(c - b)
    n = np.cross(b - a, bc)
    n /= np.linalg.norm(n)
    m = np.stack([bc, np.cross(n, bc), n], axis=1)
    d2 = bond * np.array(
        [-np.cos(angle), np.sin(angle) * np.cos(torsion), np.sin(angle) * np.sin(torsion)]
    )
    return c + m @ d2


def ideal_helix_backbone(n_res):
    """[n_res, 3 (N, CA, C), 3] of an ideal alpha helix."""
    n = np.array([0.0, 1.458, 0.0])
    ca = np.zeros(3)
    c = np.array([1.525 * np.sin(np.radians(111.2)), 1.525 * np.cos(np.radians(111.2)), 0.0])
    out = [[n, ca, c]]
    for _ in range(n_res - 1):
        n = _place(out[-1][0], out[-1][1], out[-1][2], 1.329, 116.2, -47.0)  # psi
        ca = _place(out[-1][1], out[-1][2], n, 1.458, 121.7, 180.0)  # omega
        c = _place(out[-1][2], n, ca, 1.525, 111.2, -57.0)  # phi
        out.append([n, ca, c])
    return np.asarray(out)


def helix_example(seq="GSAKLVEAG"):
    """(features, labels) of ``seq`` as an ideal helix (see the module docstring)."""
    feat = featurize({"name": "helix", "sequences": [{"proteinChain": {"sequence": seq,
                                                                         "count": 1}}]},
                     use_msa=False)  # fmt: skip
    backbone = ideal_helix_backbone(len(seq))
    ref = feat["ref_pos"].astype(np.float64)
    tok = feat["atom_to_token_idx"]
    true = np.zeros_like(ref)
    for t, (i_n, i_ca, i_c) in enumerate(feat["frame_atom_index"]):
        atoms = np.flatnonzero(tok == t)
        src = ref[[i_n, i_ca, i_c]]
        # Kabsch of the conformer's N, CA, C onto the ideal backbone
        sc, dc = src.mean(0), backbone[t].mean(0)
        u, _, vt = np.linalg.svd((src - sc).T @ (backbone[t] - dc))
        d = np.sign(np.linalg.det(vt.T @ u.T))
        rot = vt.T @ np.diag([1, 1, d]) @ u.T
        true[atoms] = (ref[atoms] - sc) @ rot.T + dc
    label = {"coordinate": true.astype(np.float32),
             "coordinate_mask": feat["ref_mask"].astype(np.float32)}  # fmt: skip
    return feat, label


def tiny_config(c_z=8, c_s=16, c_token=16, n_blocks=1, n_sample=2, n_step_mini=2, N_cycle=1,
                recompute=True, dropout=0.0, overrides=None):  # fmt: skip
    """A tiny Protenix configuration (``protenix_mini_default_v0.5.0`` with small channels) for
    training: ``n_blocks`` blocks per stack, ``diffusion_batch_size = n_sample``, a mini-rollout
    of ``n_step_mini`` steps, dropout rates ``dropout`` (Protenix trains with 0.25 / 0.15; 0
    makes overfitting one example quick), recompute (``blocks_per_ckpt = 1`` everywhere and
    ``loss.diffusion_lddt_chunk_size = 1``) on or off (None). Loss weights: Protenix's
    fine-tuning stage (``configs_base.py``: ``alpha_bond`` 1, ``smooth_lddt`` 0; the smooth
    lDDT loss of one sample has a floor, so it would keep the total from falling much).
    ``overrides`` are deep-updated last."""
    bpc = 1 if recompute else None
    heads = {"n_heads": 2}
    over = {
        "c_s": c_s, "c_z": c_z, "c_token": c_token, "c_s_inputs": c_token + 65, "c_atom": 8,
        "c_atompair": 4, "diffusion_batch_size": n_sample, "diffusion_chunk_size": None,
        "triangle_attention": "torch", "triangle_multiplicative": "torch",
        "model": {
            "N_cycle": N_cycle,
            "input_embedder": {"c_token": c_token},
            "msa_module": {"c_m": 8, "n_blocks": n_blocks, "blocks_per_ckpt": bpc,
                           "msa_dropout": dropout, "pair_dropout": dropout},
            "template_embedder": {"n_blocks": n_blocks, "c": 8, "blocks_per_ckpt": bpc,
                                  "dropout": dropout},
            "pairformer": {"n_blocks": n_blocks, "n_heads": 4, "blocks_per_ckpt": bpc,
                           "dropout": dropout},
            "diffusion_module": {
                "c_token": c_token, "blocks_per_ckpt": bpc, "atom_encoder": dict(heads),
                "transformer": {"n_blocks": n_blocks, **heads}, "atom_decoder": dict(heads),
            },
            "confidence_head": {"n_blocks": n_blocks, "max_atoms_per_token": 24,
                                "blocks_per_ckpt": bpc},
        },
        "sample_diffusion": {"N_step_mini_rollout": n_step_mini, "N_sample_mini_rollout": 1},
        "loss": {"diffusion_lddt_chunk_size": bpc,
                 "weight": {"alpha_bond": 1.0, "smooth_lddt": 0.0}},
    }  # fmt: skip
    if overrides:
        from ..config.model_configs import _deep_update

        _deep_update(over, overrides)
    return get_model_config("protenix_mini_default_v0.5.0", overrides=over)
