"""The Pairformer (AF3 supplement Algorithm 17): PairformerBlock and PairformerStack.

Training runs the plain path, with ``core.recompute`` over groups of ``blocks_per_ckpt``
blocks (activation checkpointing, AF2 supplement 1.11.8). Inference with
``inplace_safe=True`` (no gradients) runs the block-wise path: every update is computed for
blocks of ``chunk_size`` rows (or columns) and added into the pair tensor in place
(``core.ops.assign_add``; the caller's z is overwritten, as in Protenix), so a block's peak
memory stays about 1.2 pair tensors above z itself.

Parameter names follow ``protenix.model.modules.pairformer`` (Protenix 2.0.0).
"""

from diffsci import core
from diffsci.core import nn, ops

from ..chunk import resolve_chunk_size
from ..triangular.layers import dropout_add_rowwise
from ..triangular.triangular import (
    TriangleAttention,
    TriangleMultiplicationIncoming,
    TriangleMultiplicationOutgoing,
    row_blocks,
)
from .msa import MSABlock, MSAModule, MSAPairWeightedAveraging, MSAStack
from .primitives import Transition
from .template import TemplateEmbedder
from .transformer import AttentionPairBias

# Protenix keeps the MSA module and the template embedder in pairformer.py; here they live in
# msa.py and template.py and are re-exported under Protenix's module path.
__all__ = [
    "MSABlock",
    "MSAModule",
    "MSAPairWeightedAveraging",
    "MSAStack",
    "PairformerBlock",
    "PairformerStack",
    "TemplateEmbedder",
]


class PairformerBlock(nn.Cell):
    """Implements Algorithm 17 (lines 2-8) of the AlphaFold 3 supplement.

    Args:
        n_heads: heads of the single track's attention with pair bias.
        c_z: pair channels.
        c_s: single channels (0: no single track).
        c_hidden_mul: channels of the triangle multiplications.
        c_hidden_pair_att: channels per head of the triangle attentions.
        no_heads_pair: heads of the triangle attentions.
        num_intermediate_factor: expansion of the pair transition.
        dropout: row-wise dropout of the triangle updates (training only).
        hidden_scale_up: scale the triangle hidden sizes with ``c_z`` (protenix-v2).
    """

    def __init__(
        self,
        n_heads=16,
        c_z=128,
        c_s=384,
        c_hidden_mul=128,
        c_hidden_pair_att=32,
        no_heads_pair=4,
        num_intermediate_factor=4,
        dropout=0.25,
        hidden_scale_up=False,
    ):
        super().__init__()
        self.n_heads = n_heads
        if hidden_scale_up:
            no_heads_pair = c_z // c_hidden_pair_att
            c_hidden_mul = c_z
        self.tri_mul_out = TriangleMultiplicationOutgoing(c_z=c_z, c_hidden=c_hidden_mul)
        self.tri_mul_in = TriangleMultiplicationIncoming(c_z=c_z, c_hidden=c_hidden_mul)
        self.tri_att_start = TriangleAttention(
            c_in=c_z, c_hidden=c_hidden_pair_att, no_heads=no_heads_pair
        )
        self.tri_att_end = TriangleAttention(
            c_in=c_z, c_hidden=c_hidden_pair_att, no_heads=no_heads_pair
        )
        self.p_drop = dropout
        self.fine_grained_recompute = False  # see set_fine_grained_recompute
        self.pair_transition = Transition(c_in=c_z, n=num_intermediate_factor)
        self.c_s = c_s
        if c_s > 0:
            self.attention_pair_bias = AttentionPairBias(
                has_s=False, create_offset_ln_z=True, n_heads=n_heads, c_a=c_s, c_z=c_z
            )
            self.single_transition = Transition(c_in=c_s, n=4)

    def construct(
        self,
        s,
        z,
        pair_mask,
        triangle_multiplicative="torch",
        triangle_attention="torch",
        inplace_safe=False,
        chunk_size=None,
    ):
        """
        Args:
            s: ``[..., N, c_s]`` or None (``c_s == 0``).
            z: ``[..., N, N, c_z]``.
            pair_mask: ``[..., N, N]`` (None: all ones).
            triangle_multiplicative, triangle_attention: accepted for Protenix's signature.
            inplace_safe: block-wise inference path (no gradients), rows of ``chunk_size``;
                z is updated in place (a read-only or broadcast z is copied first).
            chunk_size: rows per block (triangle attention and, with ``inplace_safe``, every
                pair update); ``"auto"``: Protenix's dynamic rule by N
                (``protenix.model.chunk``).

        Returns:
            ``(s, z)``: the updated single (None without a single track) and pair tensors.
        """
        chunk_size = resolve_chunk_size(chunk_size, z.shape[-2])  # "auto": Protenix's rule
        if pair_mask is None:
            pair_mask = ops.ones(tuple(z.shape[:-1]), dtype=z.dtype)
        if inplace_safe:
            z = ops.writable(z)
            return self.forward_inplace(s, z, pair_mask, chunk_size), z
        else:
            p, train, rc = self.p_drop, self.training, self._sub_recompute
            z = dropout_add_rowwise(z, rc(self.tri_mul_out)(z, pair_mask), p, train)
            z = dropout_add_rowwise(z, rc(self.tri_mul_in)(z, pair_mask), p, train)
            upd = rc(self.tri_att_start)(z, pair_mask, chunk_size=chunk_size)
            z = dropout_add_rowwise(z, upd, p, train)
            z = ops.swapaxes(z, -2, -3)  # [..., j, i, c_z]
            mask_t = ops.swapaxes(pair_mask, -1, -2)
            upd = rc(self.tri_att_end)(z, mask_t, chunk_size=chunk_size)
            z = dropout_add_rowwise(z, upd, p, train)
            z = ops.swapaxes(z, -2, -3)  # [..., i, j, c_z]
            z = z + rc(self.pair_transition)(z)
        if self.c_s > 0:
            s = s + self.attention_pair_bias(a=s, s=None, z=z)
            s = s + self.single_transition(s)
        return s, z

    def set_fine_grained_recompute(self, mode=True):
        """Recompute each triangle update, triangle attention and the pair transition in the
        backward pass (``core.recompute`` around each; MindSpore's Protenix recomputes these
        activations). Inside a ``blocks_per_ckpt`` group this bounds the re-run's peak by one
        sub-module's activations instead of the whole block's. Returns self."""
        self.fine_grained_recompute = bool(mode)
        return self

    def _sub_recompute(self, cell):
        if self.fine_grained_recompute:
            return core.recompute(cell)
        return cell

    def forward_inplace(self, s, z, pair_mask, chunk_size=None):
        """Block-wise inference: updates ``z [..., N, N, c_z]`` (writable) in place, blocks of
        ``chunk_size`` rows, and returns the new s. A stack passes the same z from one block
        to the next."""
        self.pair_inplace(z, pair_mask, chunk_size)
        if self.c_s > 0:
            bias = self.attention_pair_bias.bias_from_blocks(row_blocks(z, chunk_size))
            s = s + self.attention_pair_bias.attend_with_bias(s, None, bias)  # bias [..., H, N, N]
            del bias
            s = s + self.single_transition(s)
        return s

    def pair_inplace(self, z, pair_mask, chunk_size=None):
        """The pair track, block-wise and in place (inference, no dropout). Returns z."""
        self.tri_mul_out.update_inplace(z, pair_mask, chunk_size)
        self.tri_mul_in.update_inplace(z, pair_mask, chunk_size)
        self.tri_att_start.update_inplace(z, pair_mask, block_rows=chunk_size)
        self.tri_att_end.update_inplace(z, pair_mask, block_rows=chunk_size, transpose=True)
        for rows in row_blocks(z, chunk_size):
            # the hidden [r, N, 4 c_z] in slices of an eighth of the block's rows
            ops.assign_add(rows, self.pair_transition(rows, chunk_size=max(1, rows.shape[-3] // 8)))
        return z


class PairformerStack(nn.Cell):
    """Implements Algorithm 17 of the AlphaFold 3 supplement: ``n_blocks`` PairformerBlocks.

    Args:
        n_blocks: number of blocks.
        n_heads: heads of the single track's attention with pair bias.
        c_z: pair channels.
        c_s: single channels.
        num_intermediate_factor: expansion of the pair transition.
        dropout: row-wise dropout of the triangle updates.
        blocks_per_ckpt: blocks per ``core.recompute`` group in training (None: no
            recompute); ignored without gradients.
        hidden_scale_up: scale the triangle hidden sizes with ``c_z``.
    """

    def __init__(
        self,
        n_blocks=48,
        n_heads=16,
        c_z=128,
        c_s=384,
        num_intermediate_factor=4,
        dropout=0.25,
        blocks_per_ckpt=None,
        hidden_scale_up=False,
    ):
        super().__init__()
        self.n_blocks, self.n_heads = n_blocks, n_heads
        self.blocks_per_ckpt = blocks_per_ckpt
        self.blocks = nn.CellList(
            [
                PairformerBlock(
                    n_heads=n_heads,
                    c_z=c_z,
                    c_s=c_s,
                    num_intermediate_factor=num_intermediate_factor,
                    dropout=dropout,
                    hidden_scale_up=hidden_scale_up,
                )
                for _ in range(n_blocks)
            ]
        )

    def set_fine_grained_recompute(self, mode=True):
        """``PairformerBlock.set_fine_grained_recompute`` on every block. Returns self."""
        for b in self.blocks:
            b.set_fine_grained_recompute(mode)
        return self

    def construct(
        self,
        s,
        z,
        pair_mask,
        triangle_multiplicative="torch",
        triangle_attention="torch",
        inplace_safe=False,
        chunk_size=None,
    ):
        """
        Args:
            s: ``[..., N, c_s]`` (None when ``c_s == 0``).
            z: ``[..., N, N, c_z]``.
            pair_mask: ``[..., N, N]``.
            inplace_safe, chunk_size: see ``PairformerBlock``.

        Returns:
            ``(s, z)``.
        """
        chunk_size = resolve_chunk_size(chunk_size, z.shape[-2])  # "auto": Protenix's rule
        blocks = list(self.blocks)
        k = self.blocks_per_ckpt
        if k is not None and not 1 <= k <= len(blocks):
            raise ValueError(
                f"PairformerStack: blocks_per_ckpt={k} must be between 1 and {len(blocks)}"
            )
        kwargs = {"inplace_safe": inplace_safe, "chunk_size": chunk_size}
        if inplace_safe:  # block-wise inference: every block updates the same z in place
            if pair_mask is None:
                pair_mask = ops.ones(tuple(z.shape[:-1]), dtype=z.dtype)
            z = ops.writable(z)
            for b in blocks:
                s = b.forward_inplace(s, z, pair_mask, chunk_size)
            return s, z
        if k is None:
            for b in blocks:
                s, z = b(s, z, pair_mask, **kwargs)
            return s, z
        for start in range(0, len(blocks), k):
            group = blocks[start : start + k]
            s, z = _unpack(core.recompute(_packed_run(group, kwargs))(s, z, pair_mask), s, z)
        return s, z


def _packed_run(group, kwargs):
    """The blocks of one recompute group as a function with ONE output, s and z flattened and
    joined: core.recompute re-runs a function once per output in the backward pass, so two
    outputs would cost two re-runs."""

    def run(s, z, pair_mask):
        for b in group:
            s, z = b(s, z, pair_mask, **kwargs)
        if s is None:
            return z
        return ops.concat([s.reshape(-1), z.reshape(-1)], axis=0)  # [N c_s + N^2 c_z]

    return run


def _unpack(out, s, z):
    """(s, z) of a packed group output, with the shapes of the group's inputs."""
    if s is None:
        return None, out
    ns = s.size
    return out[:ns].reshape(s.shape), out[ns:].reshape(z.shape)
