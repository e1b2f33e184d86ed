"""Multi-head attention (Vaswani et al. 2017, "Attention Is All You Need", Sec. 3.2.2)."""

import math

import ml_dtypes
import numpy as np

from ... import dtypes as _dt
from ... import ops
from ...tensor import Tensor
from ..cell import Cell
from ..init import XavierNormal, XavierUniform
from ._common import make_parameter
from .basic import Dense

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Cell):
    """``MultiHead(Q, K, V) = Concat(head_1..head_h) W^O``, ``head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)``.

    The MindSpore 2.x (= PyTorch) layer: same arguments, parameter names and mask conventions.

    Args:
        embed_dim: E, the model width; split into ``num_heads`` heads of ``E // num_heads``.
        num_heads: H.
        dropout: drop probability of the attention weights (training mode only).
        has_bias: biases of the input and output projections.
        add_bias_kv: learnable ``bias_k``/``bias_v`` ``[1, 1, E]`` appended to the key/value
            sequences.
        add_zero_attn: append a zero key/value (after the projections) to every sequence.
        kdim, vdim: feature sizes of key and value (default E). When both equal E the input
            projection is one ``in_proj_weight [3E, E]``; otherwise ``q_proj_weight [E, E]``,
            ``k_proj_weight [E, kdim]``, ``v_proj_weight [E, vdim]``.
        batch_first: inputs/outputs are ``[N, L, E]`` instead of ``[L, N, E]``.
        dtype: parameter dtype.

    Inputs (``construct``):
        query ``[L, N, E]`` (or ``[N, L, E]`` with batch_first, or ``[L, E]`` unbatched);
        key ``[S, N, kdim]``; value ``[S, N, vdim]``;
        key_padding_mask ``[N, S]`` (or ``[S]``): bool, True = ignore that key; or float, added;
        need_weights: also return the attention weights;
        attn_mask ``[L, S]`` or ``[N * H, L, S]``: bool, True = not allowed; or float, added;
        average_attn_weights: average the returned weights over heads;
        is_causal: with ``attn_mask=None``, mask keys after each query (needs L == S).

    Returns:
        ``(attn_output, attn_weights)``: output shaped like ``query`` with E features; weights
        ``[N, L, S]`` (``[N, H, L, S]`` unaveraged; no N when unbatched) or None.
    """

    def __init__(
        self,
        embed_dim,
        num_heads,
        dropout=0.0,
        has_bias=True,
        add_bias_kv=False,
        add_zero_attn=False,
        kdim=None,
        vdim=None,
        batch_first=False,
        dtype=_dt.float32,
    ):
        super().__init__()
        self.embed_dim, self.num_heads = int(embed_dim), int(num_heads)
        if self.num_heads < 1 or self.embed_dim % self.num_heads:
            raise ValueError(
                f"MultiheadAttention: embed_dim={embed_dim} must be divisible by num_heads={num_heads}"
            )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"MultiheadAttention: dropout must be in [0, 1), got {dropout}")
        self.head_dim = self.embed_dim // self.num_heads
        self.kdim = self.embed_dim if kdim is None else int(kdim)
        self.vdim = self.embed_dim if vdim is None else int(vdim)
        self.dropout, self.batch_first = float(dropout), bool(batch_first)
        self.add_zero_attn, self.has_bias = bool(add_zero_attn), bool(has_bias)
        E = self.embed_dim
        self._qkv_same_embed_dim = self.kdim == E and self.vdim == E
        if self._qkv_same_embed_dim:
            self.in_proj_weight = make_parameter(
                XavierUniform(), (3 * E, E), dtype, "in_proj_weight"
            )
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.in_proj_weight = None
            self.q_proj_weight = make_parameter(XavierUniform(), (E, E), dtype, "q_proj_weight")
            self.k_proj_weight = make_parameter(
                XavierUniform(), (E, self.kdim), dtype, "k_proj_weight"
            )
            self.v_proj_weight = make_parameter(
                XavierUniform(), (E, self.vdim), dtype, "v_proj_weight"
            )
        self.in_proj_bias = (
            make_parameter("zeros", (3 * E,), dtype, "in_proj_bias") if has_bias else None
        )
        self.out_proj = Dense(E, E, has_bias=has_bias, bias_init="zeros", dtype=dtype)
        if add_bias_kv:
            self.bias_k = make_parameter(XavierNormal(), (1, 1, E), dtype, "bias_k")
            self.bias_v = make_parameter(XavierNormal(), (1, 1, E), dtype, "bias_v")
        else:
            self.bias_k = self.bias_v = None

    # ---- projections ------------------------------------------------------------------------
    def _project(self, query, key, value):
        E = self.embed_dim
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:E], b[E : 2 * E], b[2 * E :])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            wq, wk, wv = w[:E], w[E : 2 * E], w[2 * E :]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        return ops.linear(query, wq, bq), ops.linear(key, wk, bk), ops.linear(value, wv, bv)

    def _split_heads(self, x):
        n, length, _ = x.shape
        x = ops.reshape(x, (n, length, self.num_heads, self.head_dim))  # [N, T, H, D]
        return ops.transpose(x, (0, 2, 1, 3))  # [N, H, T, D]

    # ---- masks --------------------------------------------------------------------------------
    def _masks(self, attn_mask, key_padding_mask, n, tgt_len, src_len, dtype):
        """``(bias, allow)``: the float masks summed into an additive bias and the boolean masks
        combined into ``allow`` (True = may attend), each broadcastable to ``[N, H, L, S]`` or
        None."""
        bias = allow = None
        masks = []
        if attn_mask is not None:
            if attn_mask.ndim == 2 and tuple(attn_mask.shape) == (tgt_len, src_len):
                m = ops.reshape(attn_mask, (1, 1, tgt_len, src_len))
            elif attn_mask.ndim == 3 and tuple(attn_mask.shape) == (
                n * self.num_heads,
                tgt_len,
                src_len,
            ):
                m = ops.reshape(attn_mask, (n, self.num_heads, tgt_len, src_len))
            else:
                raise ValueError(
                    f"MultiheadAttention: attn_mask of shape {tuple(attn_mask.shape)} is neither "
                    f"[L={tgt_len}, S={src_len}] nor [N*H={n * self.num_heads}, L, S]"
                )
            masks.append(m)
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (n, src_len):
                raise ValueError(
                    f"MultiheadAttention: key_padding_mask of shape {tuple(key_padding_mask.shape)} "
                    f"is not [N={n}, S={src_len}]"
                )
            masks.append(ops.reshape(key_padding_mask, (n, 1, 1, src_len)))
        for m in masks:
            if m.dtype == _dt.bool_:
                keep = ops.logical_not(m)  # the layer's bool masks say True = masked out
                allow = keep if allow is None else ops.logical_and(allow, keep)
            else:
                m = m.astype(dtype) if m.dtype != dtype else m
                bias = m if bias is None else bias + m
        return bias, allow

    @staticmethod
    def _extend_masks(bias, allow):
        """Masks for one more key at the end (always allowed, zero bias)."""
        if bias is not None:
            bias = ops.pad(bias, ((0, 0),) * (bias.ndim - 1) + ((0, 1),))
        if allow is not None:
            ones = ops.ones((*allow.shape[:-1], 1), dtype=_dt.bool_)
            allow = ops.concat([allow, ones], axis=-1)
        return bias, allow

    # ---- forward ------------------------------------------------------------------------------
    def construct(
        self,
        query,
        key,
        value,
        key_padding_mask=None,
        need_weights=True,
        attn_mask=None,
        average_attn_weights=True,
        is_causal=False,
    ):
        batched = query.ndim == 3
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise ValueError(
                f"MultiheadAttention: query {tuple(query.shape)}, key {tuple(key.shape)} and value "
                f"{tuple(value.shape)} must all be 3-D (batched) or all 2-D (unbatched)"
            )
        if not batched:
            query, key, value = (ops.expand_dims(t, 0) for t in (query, key, value))  # [1, T, E]
            if key_padding_mask is not None:
                key_padding_mask = ops.expand_dims(key_padding_mask, 0)
        elif not self.batch_first:
            query, key, value = (ops.swapaxes(t, 0, 1) for t in (query, key, value))  # [N, T, E]
        n, tgt_len, e_q = query.shape
        src_len = key.shape[1]
        if e_q != self.embed_dim or key.shape[-1] != self.kdim or value.shape[-1] != self.vdim:
            raise ValueError(
                f"MultiheadAttention: feature sizes of query {e_q}, key {key.shape[-1]}, value "
                f"{value.shape[-1]} must be embed_dim={self.embed_dim}, kdim={self.kdim}, vdim={self.vdim}"
            )
        if key.shape[:2] != value.shape[:2] or key.shape[0] != n:
            raise ValueError(
                f"MultiheadAttention: key {tuple(key.shape)} and value {tuple(value.shape)} must "
                f"share batch {n} and source length"
            )
        dtype = query.dtype
        if is_causal and attn_mask is None:
            if tgt_len != src_len:
                raise ValueError(
                    f"MultiheadAttention: is_causal needs L == S, got L={tgt_len}, S={src_len}"
                )
            attn_mask = Tensor(
                np.triu(np.ones((tgt_len, src_len), dtype=bool), 1)
            )  # True above the diagonal
        bias, allow = self._masks(attn_mask, key_padding_mask, n, tgt_len, src_len, dtype)

        q, k, v = self._project(query, key, value)  # [N, L, E], [N, S, E], [N, S, E]
        if self.bias_k is not None:
            k = ops.concat(
                [k, ops.broadcast_to(self.bias_k, (n, 1, self.embed_dim))], axis=1
            )  # [N, S+1, E]
            v = ops.concat([v, ops.broadcast_to(self.bias_v, (n, 1, self.embed_dim))], axis=1)
            bias, allow = self._extend_masks(bias, allow)
        q, k, v = self._split_heads(q), self._split_heads(k), self._split_heads(v)  # [N, H, T, D]
        if self.add_zero_attn:
            zeros = ops.zeros((n, self.num_heads, 1, self.head_dim), dtype=k.dtype)
            k = ops.concat([k, zeros], axis=2)  # [N, H, S', D]
            v = ops.concat([v, zeros], axis=2)
            bias, allow = self._extend_masks(bias, allow)

        scale = 1.0 / math.sqrt(self.head_dim)
        use_dropout = self.training and self.dropout > 0.0
        weights = None
        if need_weights or use_dropout:
            scores = ops.matmul(q, ops.swapaxes(k, -1, -2)) * scale  # [N, H, L, S']
            if bias is not None:
                scores = scores + bias
            if allow is not None:  # masked scores: the most negative finite value, as ops.sdpa
                scores = ops.where(allow, scores, float(ml_dtypes.finfo(scores.dtype).min))
            weights = ops.softmax(scores, -1)
            probs = ops.dropout(weights, self.dropout, True) if use_dropout else weights
            out = ops.matmul(probs, v)  # [N, H, L, D]
        else:
            out = ops.scaled_dot_product_attention(
                q, k, v, bias=bias, mask=allow, scale=scale
            )  # [N, H, L, D]
        out = ops.reshape(
            ops.transpose(out, (0, 2, 1, 3)), (n, tgt_len, self.embed_dim)
        )  # [N, L, E]
        out = self.out_proj(out)
        if not batched:
            out = ops.squeeze(out, 0)  # [L, E]
        elif not self.batch_first:
            out = ops.swapaxes(out, 0, 1)  # [L, N, E]
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = ops.mean(weights, axis=1)  # [N, L, S']
        if not batched:
            weights = ops.squeeze(weights, 0)
        return out, weights

    def extend_repr(self):
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}, batch_first={self.batch_first}"
