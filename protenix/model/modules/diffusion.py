"""Diffusion conditioning (AF3 supplement Algorithm 21) and the diffusion module (Algorithm 20,
the EDM preconditioned denoiser of Karras et al. 2022, eq. 7).

Parameter names follow ``protenix.model.modules.diffusion`` (Protenix 2.0.0). Coordinates are
in Angstrom; ``sigma_data`` (16 A) is the data scale of the EDM preconditioning.
"""

from diffsci import core
from diffsci.core import nn, ops

from .embedders import FourierEmbedding, RelativePositionEncoding
from .primitives import LayerNorm, LinearNoBias, Transition
from .transformer import AtomAttentionDecoder, AtomAttentionEncoder, DiffusionTransformer

__all__ = ["DiffusionConditioning", "DiffusionModule"]


class DiffusionConditioning(nn.Cell):
    """Implements Algorithm 21 of the AlphaFold 3 supplement: the pair conditioning
    ``z = LinearNoBias(LN([z_trunk, relpe(relp)]))`` plus two transitions, and the single
    conditioning ``s = LinearNoBias(LN([s_trunk, s_inputs]))`` plus the Fourier embedding of
    ``log(t / sigma_data) / 4``, plus two transitions.

    Args:
        sigma_data: data scale (Angstrom, 16).
        c_z, c_s, c_s_inputs: channels of the pair, single and input-single tracks.
        c_noise_embedding: Fourier embedding channels (256).
    """

    def __init__(self, sigma_data=16.0, c_z=128, c_s=384, c_s_inputs=449, c_noise_embedding=256):
        super().__init__()
        self.sigma_data, self.c_z, self.c_s, self.c_s_inputs = sigma_data, c_z, c_s, c_s_inputs
        f32 = core.float32
        self.relpe = RelativePositionEncoding(c_z=c_z)
        self.layernorm_z = LayerNorm(2 * c_z, create_offset=False)
        self.linear_no_bias_z = LinearNoBias(2 * c_z, c_z, precision=f32)
        self.transition_z1 = Transition(c_in=c_z, n=2)
        self.transition_z2 = Transition(c_in=c_z, n=2)
        self.layernorm_s = LayerNorm(c_s + c_s_inputs, create_offset=False)
        self.linear_no_bias_s = LinearNoBias(c_s + c_s_inputs, c_s, precision=f32)
        self.fourier_embedding = FourierEmbedding(c=c_noise_embedding)
        self.layernorm_n = LayerNorm(c_noise_embedding, create_offset=False)
        self.linear_no_bias_n = LinearNoBias(c_noise_embedding, c_s, precision=f32)
        self.transition_s1 = Transition(c_in=c_s, n=2)
        self.transition_s2 = Transition(c_in=c_s, n=2)

    def prepare_cache(self, relp_feature, z_trunk, inplace_safe=False):
        """Lines 1-5: relp ``[..., N, N, 4 r_max + 2 s_max + 7]``, z_trunk ``[..., N, N, c_z]``
        -> the pair conditioning ``[..., N, N, c_z]`` (independent of the noise level)."""
        pair_z = ops.concat([z_trunk, self.relpe(relp_feature)], axis=-1)
        pair_z = self.linear_no_bias_z(self.layernorm_z(pair_z))
        pair_z = pair_z + self.transition_z1(pair_z)
        return pair_z + self.transition_z2(pair_z)

    def construct(
        self,
        t_hat_noise_level,
        relp_feature,
        s_inputs,
        s_trunk,
        z_trunk,
        pair_z=None,
        inplace_safe=False,
        use_conditioning=True,
    ):
        """
        Args:
            t_hat_noise_level: ``[..., N_sample]`` noise levels (Angstrom).
            relp_feature: ``[..., N_token, N_token, 139]`` (RelativePositionEncoding.generate_relp).
            s_inputs: ``[..., N_token, c_s_inputs]``; s_trunk: ``[..., N_token, c_s]``;
            z_trunk: ``[..., N_token, N_token, c_z]``.
            pair_z: ``prepare_cache``'s output, when already computed (then z_trunk is unused).
            use_conditioning: False zeroes s_trunk and z_trunk (classifier-free dropout).

        Returns:
            ``(s [..., N_sample, N_token, c_s], z [..., N_token, N_token, c_z])``.
        """
        if pair_z is None:
            if not use_conditioning:
                s_trunk, z_trunk = s_trunk * 0.0, z_trunk * 0.0
            pair_z = self.prepare_cache(relp_feature, z_trunk)
        single_s = ops.concat([s_trunk, s_inputs], axis=-1)
        single_s = self.linear_no_bias_s(self.layernorm_s(single_s))  # [..., N_token, c_s]
        t = ops.astype(t_hat_noise_level, core.float32)
        noise_n = self.fourier_embedding(ops.log(t / self.sigma_data) / 4.0)
        noise_n = ops.astype(noise_n, single_s.dtype)  # [..., N_sample, c_noise]
        single_s = ops.expand_dims(single_s, -3) + ops.expand_dims(
            self.linear_no_bias_n(self.layernorm_n(noise_n)), -2
        )  # [..., N_sample, N_token, c_s]
        single_s = single_s + self.transition_s1(single_s)
        single_s = single_s + self.transition_s2(single_s)
        return single_s, pair_z


class DiffusionModule(nn.Cell):
    """Implements Algorithm 20 of the AlphaFold 3 supplement: the denoiser
    ``D(x, t) = c_skip x + c_out F(c_in x, t)`` with ``c_in = 1 / sqrt(sigma_data^2 + t^2)``,
    ``c_skip = sigma_data^2 / (sigma_data^2 + t^2)``, ``c_out = t sigma_data / sqrt(...)``
    (EDM eq. 7), where F is conditioning -> atom attention encoder -> diffusion transformer ->
    atom attention decoder.

    Args:
        sigma_data: data scale (Angstrom, 16).
        c_atom, c_atompair, c_token, c_s, c_z, c_s_inputs: channels.
        atom_encoder, transformer, atom_decoder: dicts of ``n_blocks``, ``n_heads`` (and
            ``drop_path_rate`` for the transformer).
        drop_path_rate: unused (Protenix keeps the argument).
        blocks_per_ckpt: blocks per ``core.recompute`` group in training (None: none).
        use_fine_grained_checkpoint: also recompute the encoder and decoder as a whole.
    """

    def __init__(
        self,
        sigma_data=16.0,
        c_atom=128,
        c_atompair=16,
        c_token=768,
        c_s=384,
        c_z=128,
        c_s_inputs=449,
        atom_encoder=None,
        transformer=None,
        atom_decoder=None,
        drop_path_rate=0.0,
        blocks_per_ckpt=None,
        use_fine_grained_checkpoint=False,
    ):
        super().__init__()
        atom_encoder = dict(atom_encoder or {"n_blocks": 3, "n_heads": 4})
        transformer = dict(transformer or {"n_blocks": 24, "n_heads": 16, "drop_path_rate": 0})
        atom_decoder = dict(atom_decoder or {"n_blocks": 3, "n_heads": 4})
        self.sigma_data = sigma_data
        self.c_atom, self.c_atompair, self.c_token = c_atom, c_atompair, c_token
        self.c_s_inputs, self.c_s, self.c_z = c_s_inputs, c_s, c_z
        self.blocks_per_ckpt = blocks_per_ckpt
        self.use_fine_grained_checkpoint = use_fine_grained_checkpoint
        f32 = core.float32
        self.diffusion_conditioning = DiffusionConditioning(
            sigma_data=sigma_data, c_z=c_z, c_s=c_s, c_s_inputs=c_s_inputs
        )
        self.atom_attention_encoder = AtomAttentionEncoder(
            **atom_encoder,
            c_atom=c_atom,
            c_atompair=c_atompair,
            c_token=c_token,
            has_coords=True,
            c_s=c_s,
            c_z=c_z,
            blocks_per_ckpt=blocks_per_ckpt,
        )
        self.layernorm_s = LayerNorm(c_s, create_offset=False)
        self.linear_no_bias_s = LinearNoBias(c_s, c_token, precision=f32, initializer="zeros")
        self.diffusion_transformer = DiffusionTransformer(
            **transformer, c_a=c_token, c_s=c_s, c_z=c_z, blocks_per_ckpt=blocks_per_ckpt
        )
        self.layernorm_a = LayerNorm(c_token, create_offset=False)
        self.atom_attention_decoder = AtomAttentionDecoder(
            **atom_decoder,
            c_token=c_token,
            c_atom=c_atom,
            c_atompair=c_atompair,
            blocks_per_ckpt=blocks_per_ckpt,
        )

    def _encode(self, f, r_noisy, s_trunk, z_pair, p_lm, c_l, chunk_size):
        return self.atom_attention_encoder(
            f["atom_to_token_idx"],
            f["ref_pos"],
            f["ref_charge"],
            f["ref_mask"],
            f["ref_atom_name_chars"],
            f["ref_element"],
            f["d_lm"],
            f["v_lm"],
            f["pad_info"],
            r_l=r_noisy,
            s=s_trunk,
            z=z_pair,
            p_lm=p_lm,
            c_l=c_l,
            chunk_size=chunk_size,
        )

    def f_forward(
        self,
        r_noisy,
        t_hat_noise_level,
        input_feature_dict,
        s_inputs,
        s_trunk,
        z_trunk,
        pair_z=None,
        p_lm=None,
        c_l=None,
        inplace_safe=False,
        chunk_size=None,
        use_conditioning=True,
        enable_efficient_fusion=False,
    ):
        """The raw network F (EDM eq. 7): r_noisy ``[..., N_sample, N_atom, 3]`` (already
        scaled by c_in), t ``[..., N_sample]`` -> the update ``[..., N_sample, N_atom, 3]``."""
        n_sample = r_noisy.shape[-3]
        if t_hat_noise_level.shape[-1] != n_sample:
            raise ValueError(
                f"DiffusionModule: t_hat_noise_level of shape {tuple(t_hat_noise_level.shape)}"
                f" must end in N_sample={n_sample} (x_noisy {tuple(r_noisy.shape)})"
            )
        f = input_feature_dict
        s_single, z_pair = self.diffusion_conditioning(
            t_hat_noise_level, f["relp"], s_inputs, s_trunk, z_trunk, pair_z,
            use_conditioning=use_conditioning,
        )  # fmt: skip
        s_trunk = ops.expand_dims(s_trunk, -3)  # [..., 1, N_token, c_s]
        z_pair = ops.expand_dims(z_pair, -4)  # [..., 1, N_token, N_token, c_z]
        fine = bool(self.blocks_per_ckpt) and self.use_fine_grained_checkpoint
        if fine:
            # the caches are arguments of the recomputed function (a closed-over traced value
            # would escape the recompute under core.grad / core.jit)
            cache = [x for x in (p_lm, c_l) if x is not None]

            def encode(r, s, z, *c):
                it = iter(c)
                pl = None if p_lm is None else next(it)
                cl = None if c_l is None else next(it)
                return self._encode(f, r, s, z, pl, cl, chunk_size)

            a_token, q_skip, c_skip, p_skip = core.recompute(encode)(
                r_noisy, s_trunk, z_pair, *cache
            )
        else:
            a_token, q_skip, c_skip, p_skip = self._encode(
                f, r_noisy, s_trunk, z_pair, p_lm, c_l, chunk_size
            )
        a_token = ops.astype(a_token, core.float32)
        a_token = a_token + self.linear_no_bias_s(self.layernorm_s(s_single))
        a_token = self.diffusion_transformer(
            a=a_token,
            s=ops.astype(s_single, core.float32),
            z=ops.astype(z_pair, core.float32),
            chunk_size=chunk_size,
        )  # [..., N_sample, N_token, c_token]
        a_token = self.layernorm_a(a_token)
        return self.atom_attention_decoder(
            f["atom_to_token_idx"], a_token, q_skip, c_skip, p_skip, chunk_size=chunk_size
        )

    def construct(
        self,
        x_noisy,
        t_hat_noise_level,
        input_feature_dict,
        s_inputs,
        s_trunk,
        z_trunk,
        pair_z=None,
        p_lm=None,
        c_l=None,
        inplace_safe=False,
        chunk_size=None,
        use_conditioning=True,
        enable_efficient_fusion=False,
    ):
        """One denoising step (EDM eq. 7).

        Args:
            x_noisy: ``[..., N_sample, N_atom, 3]`` noisy coordinates (Angstrom).
            t_hat_noise_level: ``[..., N_sample]`` noise levels (Angstrom).
            input_feature_dict: needs ``relp``, ``atom_to_token_idx``, ``ref_pos``,
                ``ref_charge``, ``ref_mask``, ``ref_atom_name_chars``, ``ref_element``,
                ``d_lm``, ``v_lm``, ``pad_info`` (see ``protenix.model.protenix
                .update_input_feature_dict``).
            s_inputs ``[..., N_token, c_s_inputs]``, s_trunk ``[..., N_token, c_s]``, z_trunk
                ``[..., N_token, N_token, c_z]``: the trunk's outputs.
            pair_z, p_lm, c_l: caches from ``DiffusionConditioning.prepare_cache`` and
                ``AtomAttentionEncoder.prepare_cache`` (None: computed here).
            chunk_size: attention chunking.

        Returns:
            the denoised coordinates ``[..., N_sample, N_atom, 3]``.
        """
        t = t_hat_noise_level
        if t.shape[-1] != x_noisy.shape[-3]:
            raise ValueError(
                f"DiffusionModule: t_hat_noise_level of shape {tuple(t.shape)} must end in "
                f"N_sample={x_noisy.shape[-3]} (x_noisy {tuple(x_noisy.shape)})"
            )
        sd = self.sigma_data
        c_in = 1.0 / ops.sqrt(sd * sd + t * t)
        r_noisy = x_noisy * c_in[..., None, None]
        r_update = self.f_forward(
            r_noisy, t, input_feature_dict, s_inputs, s_trunk, z_trunk, pair_z, p_lm, c_l,
            chunk_size=chunk_size, use_conditioning=use_conditioning,
        )  # fmt: skip
        ratio2 = ((t / sd) ** 2)[..., None, None]
        return x_noisy / (1.0 + ratio2) + t[..., None, None] / ops.sqrt(1.0 + ratio2) * r_update
