"""Attention with pair bias (AF3 supplement Algorithm 24), the attention of the Pairformer's
single track and of the diffusion and atom transformers; the conditioned transition
(Algorithm 25), the diffusion transformer (Algorithm 23), the atom transformer (Algorithm 7)
and the atom attention encoder and decoder (Algorithms 5 and 6).

Parameter names follow ``protenix.model.modules.transformer`` (Protenix 2.0.0).
"""

from diffsci import core
from diffsci.core import nn, ops

from ..utils import aggregate_atom_to_token, broadcast_token_to_atom
from .primitives import (
    AdaptiveLayerNorm,
    Attention,
    BiasInitLinear,
    DropPath,
    LayerNorm,
    LinearNoBias,
    broadcast_token_to_local_atom_pair,
    rearrange_qk_to_dense_trunk,
)

__all__ = [
    "AtomAttentionDecoder",
    "AtomAttentionEncoder",
    "AtomTransformer",
    "AttentionPairBias",
    "ConditionedTransitionBlock",
    "DiffusionTransformer",
    "DiffusionTransformerBlock",
]


class AttentionPairBias(nn.Cell):
    """Implements Algorithm 24 of the AlphaFold 3 supplement.

    ``a = LN(a)`` (or ``AdaLN(a, s)``), multi-head attention of ``a`` with the pair bias
    ``LinearNoBias(LN(z))`` per head and a sigmoid gate, then (with ``s``) the adaLN-Zero
    output gate ``sigmoid(Linear(s))``.

    Args:
        has_s: condition on ``s`` (AdaLN and the output gate); False for the Pairformer.
        create_offset_ln_z: the LayerNorm of ``z`` has a bias.
        n_heads: heads (``c_a`` must divide by it).
        c_a: channels of ``a``.
        c_s: channels of ``s``.
        c_z: channels of ``z``.
        biasinit: initial bias of ``linear_a_last`` (-2.0).
        cross_attention_mode: keys/values get their own (Ada)LN ``layernorm_kv``.
    """

    def __init__(
        self,
        has_s=True,
        create_offset_ln_z=False,
        n_heads=16,
        c_a=768,
        c_s=384,
        c_z=128,
        biasinit=-2.0,
        cross_attention_mode=False,
    ):
        super().__init__()
        if c_a % n_heads:
            raise ValueError(f"AttentionPairBias: c_a={c_a} is not divisible by n_heads={n_heads}")
        self.n_heads, self.has_s = n_heads, has_s
        self.create_offset_ln_z = create_offset_ln_z
        self.cross_attention_mode = cross_attention_mode
        if has_s:
            self.layernorm_a = AdaptiveLayerNorm(c_a=c_a, c_s=c_s)
            if cross_attention_mode:
                self.layernorm_kv = AdaptiveLayerNorm(c_a=c_a, c_s=c_s)
        else:
            self.layernorm_a = LayerNorm(c_a)
            if cross_attention_mode:
                self.layernorm_kv = LayerNorm(c_a)
        self.local_attention_method = "local_cross_attention"
        self.attention = Attention(
            c_q=c_a,
            c_k=c_a,
            c_v=c_a,
            c_hidden=c_a // n_heads,
            num_heads=n_heads,
            gating=True,
            q_linear_bias=True,
            local_attention_method=self.local_attention_method,
            zero_init=not has_s,
        )
        self.layernorm_z = LayerNorm(c_z, create_offset=create_offset_ln_z)
        self.linear_nobias_z = LinearNoBias(c_z, n_heads)
        if has_s:
            self.linear_a_last = BiasInitLinear(c_s, c_a, bias=True, biasinit=biasinit)

    def pair_bias(self, z):
        """z ``[..., I, J, c_z]`` -> per-head bias ``[..., n_heads, I, J]``."""
        b = self.linear_nobias_z(self.layernorm_z(z))  # [..., I, J, H]
        return ops.moveaxis(b, -1, -3)  # [..., H, I, J]

    def local_multihead_attention(
        self, q, kv, z, n_queries=32, n_keys=128, inplace_safe=False, chunk_size=None
    ):
        """Local attention of the atom transformer. q, kv ``[..., N_atom, c_a]``; z the
        trunked atom-pair representation ``[..., n_blocks, n_queries, n_keys, c_z]``.
        Returns ``[..., N_atom, c_a]``."""
        if z.shape[-3] != n_queries or z.shape[-2] != n_keys or z.ndim != q.ndim + 2:
            raise ValueError(
                f"AttentionPairBias: trunked z of shape {tuple(z.shape)} should be "
                f"[..., n_blocks, {n_queries}, {n_keys}, c_z] for a of shape {tuple(q.shape)}"
            )
        b = self.linear_nobias_z(self.layernorm_z(z))  # [..., n_blocks, n_q, n_k, H]
        b = ops.moveaxis(b, -1, -4)  # [..., H, n_blocks, n_q, n_k]
        return self.attention(
            q_x=q,
            kv_x=kv,
            trunked_attn_bias=b,
            n_queries=n_queries,
            n_keys=n_keys,
            inplace_safe=inplace_safe,
            chunk_size=chunk_size,
        )

    def standard_multihead_attention(
        self, q, kv, z, inplace_safe=False, enable_efficient_fusion=False, chunk_size=None
    ):
        """Global attention with pair bias. q, kv ``[..., N, c_a]``; z ``[..., N, N, c_z]``.
        Returns ``[..., N, c_a]``."""
        bias = self.pair_bias(z)  # [..., H, N, N]
        return self.attention(
            q_x=q, kv_x=kv, attn_bias=bias, inplace_safe=inplace_safe, chunk_size=chunk_size
        )

    def construct(
        self,
        a,
        s,
        z,
        n_queries=None,
        n_keys=None,
        inplace_safe=False,
        chunk_size=None,
        enable_efficient_fusion=False,
    ):
        """
        Args:
            a: ``[..., N, c_a]``.
            s: ``[..., N, c_s]`` (None when ``has_s`` is False).
            z: ``[..., N, N, c_z]``, or trunked ``[..., n_blocks, n_queries, n_keys, c_z]``
                with ``n_queries``/``n_keys`` (local attention).
            chunk_size: query rows per block of the attention kernel.

        Returns:
            The update of ``a``: ``[..., N, c_a]``.
        """
        a = self.layernorm_a(a, s) if self.has_s else self.layernorm_a(a)
        kv = a
        if self.cross_attention_mode:
            kv = self.layernorm_kv(a, s) if self.has_s else self.layernorm_kv(a)
        if n_queries and n_keys:
            a = self.local_multihead_attention(
                a, kv, z, n_queries, n_keys, inplace_safe=inplace_safe, chunk_size=chunk_size
            )
        else:
            a = self.standard_multihead_attention(
                a, kv, z, inplace_safe=inplace_safe, chunk_size=chunk_size
            )
        if self.has_s:
            a = ops.sigmoid(self.linear_a_last(s)) * a
        return a

    def bias_from_blocks(self, blocks):
        """The pair bias ``[..., H, N, N]`` of z held as row blocks ``[..., r, N, c_z]``
        (block-wise inference: only one block's LayerNorm output is alive at a time)."""
        rows = [self.pair_bias(b) for b in blocks]  # [..., H, r, N]
        return rows[0] if len(rows) == 1 else ops.concat(rows, axis=-2)

    def attend_with_bias(self, a, s, bias, chunk_size=None):
        """``construct`` for global attention with the pair bias ``[..., H, N, N]`` given
        (see ``bias_from_blocks``). Returns the update of ``a``."""
        a = self.layernorm_a(a, s) if self.has_s else self.layernorm_a(a)
        kv = a
        if self.cross_attention_mode:
            kv = self.layernorm_kv(a, s) if self.has_s else self.layernorm_kv(a)
        a = self.attention(q_x=a, kv_x=kv, attn_bias=bias, chunk_size=chunk_size)
        if self.has_s:
            a = ops.sigmoid(self.linear_a_last(s)) * a
        return a


class ConditionedTransitionBlock(nn.Cell):
    """Implements Algorithm 25 of the AlphaFold 3 supplement (SwiGLU transition with adaLN and
    the adaLN-Zero output gate).

    Args:
        c_a: channels of ``a``.
        c_s: channels of the conditioning ``s``.
        n: expansion factor (2).
        biasinit: initial bias of the output gate ``linear_s`` (-2.0).
    """

    def __init__(self, c_a, c_s, n=2, biasinit=-2.0):
        super().__init__()
        self.c_a, self.c_s, self.n = c_a, c_s, n
        self.adaln = AdaptiveLayerNorm(c_a=c_a, c_s=c_s)
        self.linear_nobias_a1 = LinearNoBias(c_a, n * c_a, initializer="relu")
        self.linear_nobias_a2 = LinearNoBias(c_a, n * c_a, initializer="relu")
        self.linear_nobias_b = LinearNoBias(n * c_a, c_a)
        self.linear_s = BiasInitLinear(c_s, c_a, bias=True, biasinit=biasinit)

    def construct(self, a, s):
        """a ``[..., N, c_a]``, s ``[..., N, c_s]`` -> update ``[..., N, c_a]``."""
        a = self.adaln(a, s)
        b = ops.silu(self.linear_nobias_a1(a)) * self.linear_nobias_a2(a)  # [..., N, n c_a]
        return ops.sigmoid(self.linear_s(s)) * self.linear_nobias_b(b)


class DiffusionTransformerBlock(nn.Cell):
    """Implements Algorithm 23 (lines 2-3) of the AlphaFold 3 supplement: attention with pair
    bias conditioned on ``s``, then the conditioned transition, both residual.

    Args:
        c_a: channels of ``a``.
        c_s: channels of ``s``.
        c_z: channels of ``z``.
        n_heads: heads.
        biasinit: initial bias of the adaLN-Zero gates.
        drop_path_rate: stochastic depth of both branches (training only).
        cross_attention_mode: keys/values get their own adaLN.
    """

    def __init__(
        self, c_a, c_s, c_z, n_heads, biasinit=-2.0, drop_path_rate=0.0, cross_attention_mode=False
    ):
        super().__init__()
        self.n_heads, self.c_a, self.c_s, self.c_z = n_heads, c_a, c_s, c_z
        self.attention_pair_bias = AttentionPairBias(
            has_s=True,
            create_offset_ln_z=False,
            n_heads=n_heads,
            c_a=c_a,
            c_s=c_s,
            c_z=c_z,
            biasinit=biasinit,
            cross_attention_mode=cross_attention_mode,
        )
        self.conditioned_transition_block = ConditionedTransitionBlock(
            n=2, c_a=c_a, c_s=c_s, biasinit=biasinit
        )
        self.drop_path = DropPath(drop_path_rate)

    def construct(
        self,
        a,
        s,
        z,
        n_queries=None,
        n_keys=None,
        inplace_safe=False,
        chunk_size=None,
        enable_efficient_fusion=False,
    ):
        """a ``[..., N, c_a]``, s ``[..., N, c_s]``, z ``[..., N, N, c_z]`` (or trunked with
        ``n_queries``/``n_keys``) -> ``(a, s, z)`` with the updated ``a``."""
        attn = self.attention_pair_bias(
            a=a, s=s, z=z, n_queries=n_queries, n_keys=n_keys, chunk_size=chunk_size
        )
        attn = self.drop_path(attn) + a
        ff = self.drop_path(self.conditioned_transition_block(a=attn, s=s))
        return ff + attn, s, z


class DiffusionTransformer(nn.Cell):
    """Implements Algorithm 23 of the AlphaFold 3 supplement: ``n_blocks``
    DiffusionTransformerBlocks, ``core.recompute`` over groups of ``blocks_per_ckpt`` in
    training.

    Args:
        c_a, c_s, c_z: channels of ``a``, ``s``, ``z``.
        n_blocks: blocks.
        n_heads: heads.
        cross_attention_mode: see ``AttentionPairBias``.
        drop_path_rate: the last block's stochastic depth (linear from 0 over the blocks).
        blocks_per_ckpt: blocks per recompute group (None: no recompute).
    """

    def __init__(
        self,
        c_a,
        c_s,
        c_z,
        n_blocks,
        n_heads,
        cross_attention_mode=False,
        drop_path_rate=0.0,
        blocks_per_ckpt=None,
    ):
        super().__init__()
        self.n_blocks, self.n_heads = n_blocks, n_heads
        self.c_a, self.c_s, self.c_z = c_a, c_s, c_z
        self.blocks_per_ckpt = blocks_per_ckpt
        rates = [drop_path_rate * i / (n_blocks - 1) if n_blocks > 1 else 0.0
                 for i in range(n_blocks)]  # fmt: skip
        self.blocks = nn.CellList(
            [
                DiffusionTransformerBlock(
                    n_heads=n_heads,
                    c_a=c_a,
                    c_s=c_s,
                    c_z=c_z,
                    cross_attention_mode=cross_attention_mode,
                    drop_path_rate=rates[i],
                )
                for i in range(n_blocks)
            ]
        )

    def construct(
        self,
        a,
        s,
        z,
        n_queries=None,
        n_keys=None,
        inplace_safe=False,
        chunk_size=None,
        enable_efficient_fusion=False,
    ):
        """a ``[..., N, c_a]``, s ``[..., N, c_s]``, z ``[..., N, N, c_z]`` (or trunked) ->
        the updated ``a`` ``[..., N, c_a]``."""
        blocks = list(self.blocks)
        k = self.blocks_per_ckpt
        if k is not None and not 1 <= k <= len(blocks):
            raise ValueError(
                f"DiffusionTransformer: blocks_per_ckpt={k} must be between 1 and {len(blocks)}"
            )
        kw = {"n_queries": n_queries, "n_keys": n_keys, "chunk_size": chunk_size}
        step = len(blocks) if k is None else k
        for start in range(0, len(blocks), step):
            group = blocks[start : start + step]

            def run(a, s, z, group=group):
                for b in group:
                    a, s, z = b(a, s, z, **kw)
                return a

            a = run(a, s, z) if k is None else core.recompute(run)(a, s, z)
        return a


class AtomTransformer(nn.Cell):
    """Implements Algorithm 7 of the AlphaFold 3 supplement: a DiffusionTransformer over atoms
    with local attention (query blocks of ``n_queries``, key windows of ``n_keys``) and the
    pair bias from the trunked atom-pair representation.

    Args:
        c_atom: atom channels.
        c_atompair: atom-pair channels.
        n_blocks: blocks.
        n_heads: heads.
        n_queries, n_keys: local window sizes (32, 128).
        blocks_per_ckpt: blocks per recompute group in training.
    """

    def __init__(
        self,
        c_atom=128,
        c_atompair=16,
        n_blocks=3,
        n_heads=4,
        n_queries=32,
        n_keys=128,
        blocks_per_ckpt=None,
    ):
        super().__init__()
        self.n_blocks, self.n_heads = n_blocks, n_heads
        self.n_queries, self.n_keys = n_queries, n_keys
        self.c_atom, self.c_atompair = c_atom, c_atompair
        self.diffusion_transformer = DiffusionTransformer(
            n_blocks=n_blocks,
            n_heads=n_heads,
            c_a=c_atom,
            c_s=c_atom,
            c_z=c_atompair,
            cross_attention_mode=True,
            blocks_per_ckpt=blocks_per_ckpt,
        )

    def construct(self, q, c, p, inplace_safe=False, chunk_size=None):
        """q, c ``[..., N_atom, c_atom]``; p ``[..., n_blocks, n_queries, n_keys, c_atompair]``
        -> ``[..., N_atom, c_atom]``."""
        if tuple(p.shape[-3:-1]) != (self.n_queries, self.n_keys):
            raise ValueError(
                f"AtomTransformer: p of shape {tuple(p.shape)} should be [..., n_blocks, "
                f"{self.n_queries}, {self.n_keys}, c_atompair]"
            )
        return self.diffusion_transformer(
            a=q, s=c, z=p, n_queries=self.n_queries, n_keys=self.n_keys, chunk_size=chunk_size
        )


class AtomAttentionEncoder(nn.Cell):
    """Implements Algorithm 5 of the AlphaFold 3 supplement: per-atom single and pair features
    from the reference conformer, (with coordinates) the trunk's s and z and the noisy
    positions, an AtomTransformer, and the mean over each token's atoms.

    Args:
        has_coords: the diffusion form (``r_l``, ``s`` and ``z`` given) or the input embedder's.
        c_token: channels of the token output ``a``.
        c_atom, c_atompair: atom and atom-pair channels.
        c_s, c_z: channels of the trunk's s and z.
        n_blocks, n_heads: of the AtomTransformer.
        n_queries, n_keys: local window sizes.
        blocks_per_ckpt: AtomTransformer blocks per recompute group in training.
    """

    def __init__(
        self,
        has_coords,
        c_token,
        c_atom=128,
        c_atompair=16,
        c_s=384,
        c_z=128,
        n_blocks=3,
        n_heads=4,
        n_queries=32,
        n_keys=128,
        blocks_per_ckpt=None,
    ):
        super().__init__()
        self.has_coords, self.c_atom, self.c_atompair = has_coords, c_atom, c_atompair
        self.c_token, self.c_s, self.c_z = c_token, c_s, c_z
        self.n_queries, self.n_keys = n_queries, n_keys
        self.local_attention_method = "local_cross_attention"
        self.input_feature = {"ref_mask": 1, "ref_element": 128, "ref_atom_name_chars": 4 * 64}
        f32 = core.float32
        self.linear_no_bias_ref_pos = LinearNoBias(3, c_atom, precision=f32)
        self.linear_no_bias_ref_charge = LinearNoBias(1, c_atom)
        self.linear_no_bias_f = LinearNoBias(sum(self.input_feature.values()), c_atom)
        self.linear_no_bias_d = LinearNoBias(3, c_atompair, precision=f32)
        self.linear_no_bias_invd = LinearNoBias(1, c_atompair)
        self.linear_no_bias_v = LinearNoBias(1, c_atompair)
        if has_coords:
            self.layernorm_s = LayerNorm(c_s, create_offset=False)
            self.linear_no_bias_s = LinearNoBias(c_s, c_atom, initializer="zeros", precision=f32)
            self.layernorm_z = LayerNorm(c_z, create_offset=False)
            self.linear_no_bias_z = LinearNoBias(
                c_z, c_atompair, initializer="zeros", precision=f32
            )
            self.linear_no_bias_r = LinearNoBias(3, c_atom, precision=f32)
        self.linear_no_bias_cl = LinearNoBias(c_atom, c_atompair)
        self.linear_no_bias_cm = LinearNoBias(c_atom, c_atompair)
        self.small_mlp = nn.SequentialCell(
            nn.ReLU(),
            LinearNoBias(c_atompair, c_atompair, initializer="relu"),
            nn.ReLU(),
            LinearNoBias(c_atompair, c_atompair, initializer="relu"),
            nn.ReLU(),
            LinearNoBias(c_atompair, c_atompair, initializer="zeros"),
        )
        self.atom_transformer = AtomTransformer(
            n_blocks=n_blocks,
            n_heads=n_heads,
            c_atom=c_atom,
            c_atompair=c_atompair,
            n_queries=n_queries,
            n_keys=n_keys,
            blocks_per_ckpt=blocks_per_ckpt,
        )
        self.linear_no_bias_q = LinearNoBias(c_atom, c_token)

    def prepare_cache(
        self,
        ref_pos,
        ref_charge,
        ref_mask,
        ref_element,
        ref_atom_name_chars,
        atom_to_token_idx,
        d_lm,
        v_lm,
        pad_info,
        r_l=None,
        z=None,
        inplace_safe=False,
    ):
        """Lines 1-6 (and 10): ``(p_lm [..., (1,) n_blocks, n_queries, n_keys, c_atompair],
        c_l [..., N_atom, c_atom])``, which do not depend on the noise level."""
        batch, n_atom = tuple(ref_pos.shape[:-2]), ref_pos.shape[-2]
        c_l = self.linear_no_bias_ref_pos(ref_pos) + self.linear_no_bias_ref_charge(
            ops.arcsinh(ref_charge).reshape(*batch, n_atom, 1)
        )  # [..., N_atom, c_atom]
        mask = ops.astype(ref_mask, c_l.dtype).reshape(*batch, n_atom, 1)
        feats = ops.concat(
            [
                mask,
                ops.astype(ref_element, c_l.dtype).reshape(*batch, n_atom, 128),
                ops.astype(ref_atom_name_chars, c_l.dtype).reshape(*batch, n_atom, 4 * 64),
            ],
            axis=-1,
        )  # [..., N_atom, 385]
        c_l = (c_l + self.linear_no_bias_f(feats)) * mask
        v = ops.astype(v_lm, c_l.dtype)  # [..., n_blocks, n_q, n_k, 1]
        valid = ops.expand_dims(ops.astype(pad_info["mask_trunked"], c_l.dtype), -1)
        p_lm = self.linear_no_bias_d(d_lm) * v * valid
        inv_d = 1.0 / (1.0 + ops.sum(d_lm * d_lm, axis=-1, keepdims=True))
        p_lm = p_lm + self.linear_no_bias_invd(inv_d) * v
        p_lm = p_lm + self.linear_no_bias_v(v)  # [..., n_blocks, n_q, n_k, c_atompair]
        if r_l is not None:
            z_loc, _ = broadcast_token_to_local_atom_pair(
                self.linear_no_bias_z(self.layernorm_z(z)),
                atom_to_token_idx,
                self.n_queries,
                self.n_keys,
                compute_mask=False,
            )
            p_lm = ops.expand_dims(p_lm, -5) + z_loc  # [..., 1, n_blocks, n_q, n_k, c]
        return p_lm, c_l

    def construct(
        self,
        atom_to_token_idx,
        ref_pos,
        ref_charge,
        ref_mask,
        ref_atom_name_chars,
        ref_element,
        d_lm,
        v_lm,
        pad_info,
        r_l=None,
        s=None,
        z=None,
        p_lm=None,
        c_l=None,
        inplace_safe=False,
        chunk_size=None,
    ):
        """
        Args:
            atom_to_token_idx: ``[N_atom]`` ints.
            ref_pos ``[..., N_atom, 3]``, ref_charge ``[..., N_atom]``, ref_mask
                ``[..., N_atom]``, ref_atom_name_chars ``[..., N_atom, 4, 64]``, ref_element
                ``[..., N_atom, 128]``: the reference conformer features.
            d_lm ``[n_blocks, n_queries, n_keys, 3]``, v_lm ``[..., 1]``, pad_info (with
                ``mask_trunked``): see ``rearrange_qk_to_dense_trunk``.
            r_l: noisy positions ``[..., N_sample, N_atom, 3]`` (has_coords).
            s: ``[..., N_token, c_s]``; z: ``[..., N_token, N_token, c_z]`` (has_coords).
            p_lm, c_l: ``prepare_cache``'s outputs, when already computed.

        Returns:
            ``(a [..., (N_sample,) N_token, c_token], q_l, c_l, p_lm)``.
        """
        if self.has_coords and (r_l is None or s is None or z is None):
            raise ValueError("AtomAttentionEncoder(has_coords=True) needs r_l, s and z")
        if p_lm is None or c_l is None:
            p_lm, c_l = self.prepare_cache(
                ref_pos, ref_charge, ref_mask, ref_element, ref_atom_name_chars,
                atom_to_token_idx, d_lm, v_lm, pad_info, r_l=r_l, z=z,
            )  # fmt: skip
        n_token = None
        if r_l is not None:
            n_token = s.shape[-2]
            c_l = ops.expand_dims(c_l, -3) + broadcast_token_to_atom(
                self.linear_no_bias_s(self.layernorm_s(s)), atom_to_token_idx
            )  # [..., N_sample | 1, N_atom, c_atom]
            q_l = c_l + self.linear_no_bias_r(r_l)  # [..., N_sample, N_atom, c_atom]
        else:
            q_l = c_l
        c_q, c_k, _ = rearrange_qk_to_dense_trunk(
            c_l, c_l, -2, -2, self.n_queries, self.n_keys, compute_mask=False
        )  # [..., n_blocks, n_queries | n_keys, c_atom]
        p_lm = (
            p_lm
            + self.linear_no_bias_cl(ops.relu(ops.expand_dims(c_q, -2)))
            + self.linear_no_bias_cm(ops.relu(ops.expand_dims(c_k, -3)))
        )  # [..., n_blocks, n_queries, n_keys, c_atompair]
        p_lm = p_lm + self.small_mlp(p_lm)
        q_l = self.atom_transformer(q_l, c_l, p_lm, chunk_size=chunk_size)
        a = aggregate_atom_to_token(
            ops.relu(self.linear_no_bias_q(q_l)), atom_to_token_idx, n_token, reduce="mean"
        )  # [..., (N_sample,) N_token, c_token]
        return a, q_l, c_l, p_lm


class AtomAttentionDecoder(nn.Cell):
    """Implements Algorithm 6 of the AlphaFold 3 supplement: token activations broadcast to
    their atoms plus the encoder's skip, an AtomTransformer, and the position update.

    Args:
        n_blocks, n_heads: of the AtomTransformer.
        c_token, c_atom, c_atompair: channels.
        n_queries, n_keys: local window sizes.
        blocks_per_ckpt: AtomTransformer blocks per recompute group in training.
    """

    def __init__(
        self,
        n_blocks=3,
        n_heads=4,
        c_token=384,
        c_atom=128,
        c_atompair=16,
        n_queries=32,
        n_keys=128,
        blocks_per_ckpt=None,
    ):
        super().__init__()
        self.n_blocks, self.n_heads = n_blocks, n_heads
        self.c_token, self.c_atom, self.c_atompair = c_token, c_atom, c_atompair
        self.n_queries, self.n_keys = n_queries, n_keys
        self.linear_no_bias_a = LinearNoBias(c_token, c_atom)
        self.layernorm_q = LayerNorm(c_atom, create_offset=False)
        self.linear_no_bias_out = LinearNoBias(c_atom, 3, precision=core.float32)
        self.atom_transformer = AtomTransformer(
            n_blocks=n_blocks,
            n_heads=n_heads,
            c_atom=c_atom,
            c_atompair=c_atompair,
            n_queries=n_queries,
            n_keys=n_keys,
            blocks_per_ckpt=blocks_per_ckpt,
        )

    def construct(
        self, atom_to_token_idx, a, q_skip, c_skip, p_skip, inplace_safe=False, chunk_size=None
    ):
        """a ``[..., N_token, c_token]``; q_skip, c_skip ``[..., N_atom, c_atom]``; p_skip
        ``[..., n_blocks, n_queries, n_keys, c_atompair]`` -> position update
        ``[..., N_atom, 3]``."""
        q = broadcast_token_to_atom(self.linear_no_bias_a(a), atom_to_token_idx) + q_skip
        q = self.atom_transformer(q, c_skip, p_skip, chunk_size=chunk_size)
        return self.linear_no_bias_out(self.layernorm_q(q))
