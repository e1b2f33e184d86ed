"""Attention with pair bias (AF3 supplement Algorithm 24), the attention of the Pairformer's
single track and of the diffusion and atom transformers.

Parameter names follow ``protenix.model.modules.transformer`` (Protenix 2.0.0).
"""

from core import nn, ops

from .primitives import AdaptiveLayerNorm, Attention, BiasInitLinear, LayerNorm, LinearNoBias

__all__ = ["AttentionPairBias"]


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
