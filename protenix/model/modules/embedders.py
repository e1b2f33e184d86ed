"""Input embedders of AlphaFold 3 as in Protenix 2.0.0 (``protenix.model.modules.embedders``):
``InputFeatureEmbedder`` (supplement Algorithm 2), ``RelativePositionEncoding`` (Algorithm 3)
and ``FourierEmbedding`` (Algorithm 22, with non-trainable ``w``/``b``).

Parameter names are Protenix's (``linear_no_bias.weight``, ``atom_attention_encoder...``,
``linear_esm.weight``, ``w``, ``b``), so its state dicts load by name.
"""

import math

import numpy as np

from diffsci import core
from diffsci.core import ops

from .primitives import LinearNoBias

__all__ = ["FourierEmbedding", "InputFeatureEmbedder", "RelativePositionEncoding"]


class InputFeatureEmbedder(core.nn.Cell):
    """Implements Algorithm 2 of the AlphaFold 3 supplement (input feature embedder):
    ``s_inputs = [AtomAttentionEncoder(atom features), restype (32), profile (32),
    deletion_mean (1)]`` (plus ``LinearNoBias(esm_token_embedding)`` when ESM is enabled).

    Args:
        c_atom: atom channels.
        c_atompair: atom-pair channels.
        c_token: token channels of the atom encoder's output.
        esm_configs: ``{"enable": bool, "embedding_dim": int}`` (ESM-2 3B: 2560).

    Output width: ``c_token + 65`` (Protenix's ``c_s_inputs`` 449 for ``c_token`` 384).
    """

    def __init__(self, c_atom=128, c_atompair=16, c_token=384, esm_configs=None):
        super().__init__()
        from .transformer import AtomAttentionEncoder

        esm_configs = dict(esm_configs or {})
        self.c_atom, self.c_atompair, self.c_token = c_atom, c_atompair, c_token
        self.atom_attention_encoder = AtomAttentionEncoder(
            c_atom=c_atom, c_atompair=c_atompair, c_token=c_token, has_coords=False
        )
        self.esm_configs = {
            "enable": esm_configs.get("enable", False),
            "embedding_dim": esm_configs.get("embedding_dim", 2560),
        }
        if self.esm_configs["enable"]:
            self.linear_esm = LinearNoBias(
                self.esm_configs["embedding_dim"], c_token + 32 + 32 + 1, initializer="zeros"
            )
        self.input_feature = {"restype": 32, "profile": 32, "deletion_mean": 1}

    def construct(self, input_feature_dict, inplace_safe=False, chunk_size=None):
        """input_feature_dict: the atom features of ``AtomAttentionEncoder`` (``atom_to_token_idx,
        ref_pos, ref_charge, ref_mask, ref_atom_name_chars, ref_element, d_lm, v_lm,
        pad_info``), ``restype`` ``[..., N_token, 32]``, ``profile`` ``[..., N_token, 32]``,
        ``deletion_mean`` ``[..., N_token]`` (and ``esm_token_embedding`` with ESM) ->
        ``s_inputs`` ``[..., N_token, c_token + 65]``."""
        f = input_feature_dict
        a = self.atom_attention_encoder(
            f["atom_to_token_idx"],
            f["ref_pos"],
            f["ref_charge"],
            f["ref_mask"],
            f["ref_atom_name_chars"],
            f["ref_element"],
            f["d_lm"],
            f["v_lm"],
            f["pad_info"],
            inplace_safe=inplace_safe,
            chunk_size=chunk_size,
        )[0]  # [..., N_token, c_token]
        batch_shape = tuple(f["restype"].shape[:-1])
        parts = [a]
        for name, d in self.input_feature.items():
            parts.append(ops.astype(f[name], a.dtype).reshape(*batch_shape, d))
        s_inputs = ops.concat(parts, axis=-1)  # [..., N_token, c_token + 65]
        if self.esm_configs["enable"]:
            s_inputs = s_inputs + self.linear_esm(f["esm_token_embedding"])
        return s_inputs


class RelativePositionEncoding(core.nn.Cell):
    """Implements Algorithm 3 of the AlphaFold 3 supplement (relative position encoding).

    Features of token pairs (i, j): one-hot clipped residue offset within a chain (or "other
    chain"), one-hot clipped token offset within a residue, same-entity bit, one-hot clipped
    ``sym_id`` offset within an entity; ``4 r_max + 2 s_max + 7`` channels, then LinearNoBias.

    Args:
        r_max: residue/token offset clip (32).
        s_max: chain (``sym_id``) offset clip (2).
        c_z: pair channels.
    """

    def __init__(self, r_max=32, s_max=2, c_z=128):
        super().__init__()
        self.r_max, self.s_max, self.c_z = r_max, s_max, c_z
        self.linear_no_bias = LinearNoBias(4 * r_max + 2 * s_max + 7, c_z)
        self.input_feature = {
            "asym_id": 1,
            "residue_index": 1,
            "entity_id": 1,
            "sym_id": 1,
            "token_index": 1,
        }

    @staticmethod
    def _same(x):
        x = ops.astype(x, core.int64)
        return ops.astype(ops.equal(ops.expand_dims(x, -1), ops.expand_dims(x, -2)), core.int64)

    @staticmethod
    def _offset(x, clip_max):
        x = ops.astype(x, core.int64)
        d = ops.expand_dims(x, -1) - ops.expand_dims(x, -2) + clip_max  # [..., N, N]
        return ops.clip(d, 0, 2 * clip_max)

    def generate_relp(self, input_feature_dict):
        """Adds ``relp`` ``[..., N_token, N_token, 4 r_max + 2 s_max + 7]`` (float32) to the
        dict (as Protenix) from ``asym_id, residue_index, entity_id, sym_id, token_index``
        ``[..., N_token]``, and returns the dict."""
        f = input_feature_dict
        r, s = self.r_max, self.s_max
        same_chain = self._same(f["asym_id"])  # [..., N, N]
        same_residue = self._same(f["residue_index"])
        same_entity = self._same(f["entity_id"])
        d_residue = self._offset(f["residue_index"], r) * same_chain + (1 - same_chain) * (
            2 * r + 1
        )
        same_both = same_chain * same_residue
        d_token = self._offset(f["token_index"], r) * same_both + (1 - same_both) * (2 * r + 1)
        d_chain = self._offset(f["sym_id"], s) * same_entity + (1 - same_entity) * (2 * s + 1)
        relp = ops.concat(
            [
                ops.one_hot(d_residue, 2 * (r + 1), dtype=core.float32),  # [..., N, N, 2r+2]
                ops.one_hot(d_token, 2 * (r + 1), dtype=core.float32),  # [..., N, N, 2r+2]
                ops.expand_dims(ops.astype(same_entity, core.float32), -1),  # [..., N, N, 1]
                ops.one_hot(d_chain, 2 * (s + 1), dtype=core.float32),  # [..., N, N, 2s+2]
            ],
            axis=-1,
        )
        f["relp"] = core.stop_gradient(relp)
        return f

    def construct(self, relp_feature):
        """relp_feature ``[..., N_token, N_token, 4 r_max + 2 s_max + 7]`` (from
        :meth:`generate_relp`) -> ``[..., N_token, N_token, c_z]``."""
        return self.linear_no_bias(relp_feature)


class FourierEmbedding(core.nn.Cell):
    """Implements Algorithm 22 of the AlphaFold 3 supplement (Fourier embedding of the noise
    level): ``cos(2 pi (t w + b))`` with fixed ``w, b ~ N(0, 1)``.

    ``w`` and ``b`` are non-trainable Parameters (``requires_grad=False``), in the state dict
    as in Protenix. Protenix draws them with ``torch.randn`` from a generator seeded by
    ``seed``; we draw them from numpy's generator seeded the same way, so they match only
    once a Protenix checkpoint is loaded (which always carries them).

    Args:
        c: embedding channels.
        seed: seed of the ``w, b`` draws.
    """

    def __init__(self, c, seed=42):
        super().__init__()
        self.c, self.seed = c, seed
        draws = np.random.default_rng(seed).standard_normal((2, c)).astype(np.float32)
        self.w = core.Parameter(draws[0], name="w", requires_grad=False)
        self.b = core.Parameter(draws[1], name="b", requires_grad=False)

    def construct(self, t_hat_noise_level):
        """t_hat_noise_level ``[..., N_sample]`` -> ``[..., N_sample, c]``."""
        t = ops.expand_dims(t_hat_noise_level, -1)  # [..., N_sample, 1]
        return ops.cos(2 * math.pi * (t * self.w + self.b))
