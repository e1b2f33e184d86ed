"""Triangle updates of the pair representation: multiplicative updates (AF3 supplement
Algorithms 12 and 13) and triangle attention (Algorithms 14 and 15).

Two evaluation paths give the same numbers:

- the plain path (training, differentiable), written once with core ops;
- the block-wise inference path (``inplace_safe=True``, no gradients), which updates the pair
  tensor in place (``core.ops.assign_add``), one block of rows at a time, as Protenix's
  ``inplace_safe`` path does (so the caller's z is overwritten, as there). The row-wise updates
  (outgoing, starting node) work on row blocks ``z[..., I, :, :]``; the column-wise ones
  (incoming, ending node) on column blocks seen in the transposed frame,
  ``swapaxes(z[..., :, J, :])`` (``col_blocks``): views, so nothing is transposed or copied.
  An update's peak is z plus one projection of it (the multiplications need all of b before
  the first row of output) plus a few row-block temporaries, about 1.2 pair tensors above z,
  instead of the five of the plain path.
"""

from diffsci import core
from diffsci.core import nn, ops

from .layers import Attention, LayerNorm, OpenfoldLinear

__all__ = [
    "TriangleAttention",
    "TriangleAttentionEndingNode",
    "TriangleAttentionStartingNode",
    "TriangleMultiplicationIncoming",
    "TriangleMultiplicationOutgoing",
    "TriangleMultiplicativeUpdate",
    "col_blocks",
    "join_blocks",
    "row_blocks",
]


# ---- the pair tensor in blocks of rows or columns (block-wise inference) --------------------
# Block-wise inference keeps about seven row-block-sized temporaries alive inside an update
# (projections, gates, LayerNorm outputs); blocks of at most N / MIN_BLOCKS rows keep them
# below half a pair tensor, whatever chunk_size asks for.
MIN_BLOCKS = 16


def _block_bounds(n, chunk_size):
    step = -(-n // MIN_BLOCKS)
    if chunk_size is not None:
        step = min(step, max(1, int(chunk_size)))
    return [(i, min(i + step, n)) for i in range(0, n, step)]


def row_blocks(z, chunk_size):
    """``z [..., N, N, c]`` as a list of row blocks ``[..., r, N, c]`` (views of z) with
    ``r <= chunk_size`` (None: no limit) and ``r <= ceil(N / MIN_BLOCKS)``."""
    return [ops.slice_axis(z, -3, a, b) for a, b in _block_bounds(z.shape[-3], chunk_size)]


def col_blocks(z, chunk_size):
    """The column blocks of ``z [..., N, N, c]`` in the transposed frame: views
    ``[..., r, N, c]`` whose element ``[..., j, i, :]`` is ``z[..., i, j0 + j, :]``, split as
    ``row_blocks``. Writing into them writes z's columns."""
    n = z.shape[-2]
    return [
        ops.swapaxes(ops.slice_axis(z, -2, a, b), -2, -3) for a, b in _block_bounds(n, chunk_size)
    ]


def join_blocks(blocks):
    """The tensor ``[..., N, N, c]`` of a list of row blocks."""
    return blocks[0] if len(blocks) == 1 else ops.concat(blocks, axis=-3)


def _mask_rows(mask, blocks):
    """``mask [..., N, N]`` sliced like ``blocks`` along its row axis."""
    out, start = [], 0
    for b in blocks:
        r = b.shape[-3]
        out.append(ops.slice_axis(mask, -2, start, start + r))
        start += r
    return out


class TriangleMultiplicativeUpdate(nn.Cell):
    """Implements Algorithms 12 (outgoing edges) and 13 (incoming edges) of the AlphaFold 3
    supplement::

        z = LN(z);  a = mask * sigmoid(Linear(z)) * Linear(z);  b likewise
        outgoing: x_ij = sum_k a_ik b_jk;   incoming: x_ij = sum_k a_ki b_kj
        update = sigmoid(Linear(z)) * Linear(LN(x))

    Args:
        c_z: pair channels.
        c_hidden: channels of a and b.
        _outgoing: outgoing (True) or incoming (False) edges.
    """

    def __init__(self, c_z, c_hidden, _outgoing=True):
        super().__init__()
        self.c_z, self.c_hidden, self._outgoing = c_z, c_hidden, _outgoing
        self.linear_g = OpenfoldLinear(c_z, c_z, bias=False, init="gating")
        self.linear_z = OpenfoldLinear(c_hidden, c_z, bias=False, init="final")
        self.layer_norm_in = LayerNorm(c_z)
        self.layer_norm_out = LayerNorm(c_hidden)
        self.linear_a_p = OpenfoldLinear(c_z, c_hidden, bias=False)
        self.linear_a_g = OpenfoldLinear(c_z, c_hidden, bias=False, init="gating")
        self.linear_b_p = OpenfoldLinear(c_z, c_hidden, bias=False)
        self.linear_b_g = OpenfoldLinear(c_z, c_hidden, bias=False, init="gating")

    def _project(self, z_ln, mask, which):
        """``mask * sigmoid(linear_?_g(z)) * linear_?_p(z)``: ``[..., I, J, c_hidden]``."""
        g, p = (
            (self.linear_a_g, self.linear_a_p)
            if which == "a"
            else (self.linear_b_g, self.linear_b_p)
        )
        return mask * ops.sigmoid(g(z_ln)) * p(z_ln)

    def _finish(self, x, z_ln):
        """x ``[..., I, J, c_hidden]`` -> gated update ``[..., I, J, c_z]``."""
        x = self.linear_z(self.layer_norm_out(x))
        return x * ops.sigmoid(self.linear_g(z_ln))

    def construct(
        self,
        z,
        mask=None,
        inplace_safe=False,
        _add_with_inplace=False,
        _inplace_chunk_size=256,
        triangle_multiplicative="torch",
    ):
        """
        Args:
            z: ``[..., N, N, c_z]``.
            mask: ``[..., N, N]`` pair mask (None: all ones).
            inplace_safe: no-gradient block-wise path (rows of ``_inplace_chunk_size``).
            _add_with_inplace: with ``inplace_safe``, return ``z + update``.
            triangle_multiplicative: accepted for Protenix's signature ("torch").

        Returns:
            The update ``[..., N, N, c_z]`` (``z + update`` with both flags, as Protenix).
        """
        if mask is None:
            mask = ops.ones(tuple(z.shape[:-1]), dtype=z.dtype)
        if inplace_safe:
            if _add_with_inplace:
                z = ops.writable(z)
                return self.update_inplace(z, mask, _inplace_chunk_size)
            out = ops.writable(ops.zeros(tuple(z.shape), dtype=z.dtype))
            self.update_inplace(z, mask, _inplace_chunk_size, out=out)
            return out
        m = ops.expand_dims(mask, -1)  # [..., N, N, 1]
        z_ln = self.layer_norm_in(z)
        a = self._project(z_ln, m, "a")  # [..., N, N, c]
        b = self._project(z_ln, m, "b")  # [..., N, N, c]
        if self._outgoing:
            a = ops.moveaxis(a, -1, -3)  # [..., c, i, k]
            b = ops.permute(b, (*range(b.ndim - 3), b.ndim - 1, b.ndim - 2, b.ndim - 3))
        else:
            a = ops.permute(a, (*range(a.ndim - 3), a.ndim - 1, a.ndim - 2, a.ndim - 3))
            b = ops.moveaxis(b, -1, -3)  # [..., c, k, j]
        x = ops.moveaxis(ops.matmul(a, b), -3, -1)  # [..., i, j, c]
        x = self._finish(x, z_ln)  # [..., N, N, c_z]
        if inplace_safe and _add_with_inplace:
            x = x + z
        return x

    def update_inplace(self, z, mask, chunk_size=None, out=None):
        """Block-wise inference: ``z += update`` in z's memory (or ``out[...] = update``).

        Outgoing, ``x_ij = sum_k a_ik b_jk``: b is projected for all rows first (channel-first
        blocks ``[..., c, r, N]``: the one pair-sized temporary), then each output row block
        needs only its own rows of z, which are read before they are overwritten. Incoming,
        ``x_ij = sum_k a_ki b_kj``, is the same loop in the transposed frame (``col_blocks``,
        views of z's columns) with the roles of a and b swapped.

        Args:
            z: ``[..., N, N, c_z]``, writable (``core.ops.writable``) unless ``out`` is given.
            mask: ``[..., N, N]``.
            chunk_size: rows (columns) per block (``row_blocks``).
            out: None (z is updated), or a writable tensor like z that receives the update
                (z is left as it is).

        Returns:
            z (updated), or ``out``.
        """
        blocks_of = row_blocks if self._outgoing else col_blocks
        if not self._outgoing:
            mask = ops.swapaxes(mask, -1, -2)
        blocks = blocks_of(z, chunk_size)
        dest = blocks if out is None else blocks_of(out, chunk_size)
        row_p, full_p = ("a", "b") if self._outgoing else ("b", "a")
        masks = [ops.expand_dims(m, -1) for m in _mask_rows(mask, blocks)]
        full = [
            ops.moveaxis(self._project(self.layer_norm_in(w), m, full_p), -1, -3)  # [..., c, r, N]
            for w, m in zip(blocks, masks, strict=True)
        ]
        for i, w in enumerate(blocks):
            w_ln = self.layer_norm_in(w)  # [..., r, N, c_z]
            rp = ops.moveaxis(self._project(w_ln, masks[i], row_p), -1, -3)  # [..., c, r, N]
            x = [ops.matmul(rp, ops.swapaxes(f, -1, -2)) for f in full]  # [..., c, r, r_j]
            x = ops.moveaxis(x[0] if len(x) == 1 else ops.concat(x, axis=-1), -3, -1)
            x = self._finish(x, w_ln)  # [..., r, N, c_z]
            if out is None:
                ops.assign_add(dest[i], x)
            else:
                ops.assign(dest[i], x)
            del w_ln, rp, x
        return z if out is None else out


class TriangleMultiplicationOutgoing(TriangleMultiplicativeUpdate):
    """Implements Algorithm 12 of the AlphaFold 3 supplement (outgoing edges)."""

    def __init__(self, c_z, c_hidden):
        super().__init__(c_z, c_hidden, _outgoing=True)


class TriangleMultiplicationIncoming(TriangleMultiplicativeUpdate):
    """Implements Algorithm 13 of the AlphaFold 3 supplement (incoming edges)."""

    def __init__(self, c_z, c_hidden):
        super().__init__(c_z, c_hidden, _outgoing=False)


class TriangleAttention(nn.Cell):
    """Implements Algorithms 14 (starting node) and 15 (ending node) of the AlphaFold 3
    supplement: row-wise gated attention over the pair representation with the triangle
    bias ``b_h(j, k) = LinearNoBias(LN(z_jk))`` and the mask bias ``inf * (mask - 1)``.

    Args:
        c_in: pair channels.
        c_hidden: channels per head.
        no_heads: heads.
        starting: starting node (rows); False: ending node (on the transpose).
        inf: the mask's large value.
    """

    def __init__(self, c_in, c_hidden, no_heads, starting=True, inf=1e9):
        super().__init__()
        self.c_in, self.c_hidden, self.no_heads = c_in, c_hidden, no_heads
        self.starting, self.inf = starting, inf
        self.layer_norm = LayerNorm(c_in)
        self.linear = OpenfoldLinear(c_in, no_heads, bias=False)
        self.mha = Attention(c_in, c_in, c_in, c_hidden, no_heads)

    def _triangle_bias(self, x_ln):
        """x_ln ``[..., I, J, c]`` -> ``[..., 1, H, I, J]``."""
        b = self.linear(x_ln)  # [..., I, J, H]
        return ops.expand_dims(ops.moveaxis(b, -1, -3), -4)  # [..., 1, H, I, J]

    def _attend(self, x_ln, mask, tri_bias, chunk_size):
        """Rows of x_ln ``[..., r, J, c]`` with their mask ``[..., r, J]`` -> ``[..., r, J, c]``;
        ``chunk_size``: query rows per block of the attention kernel."""
        m = mask[..., :, None, None, :]  # [..., r, 1, 1, J]
        return self.mha(x_ln, x_ln, [tri_bias], mask=m, chunk_size=chunk_size)

    def construct(
        self, x, mask=None, chunk_size=None, triangle_attention="torch", inplace_safe=False
    ):
        """
        Args:
            x: ``[..., I, J, c_in]``.
            mask: ``[..., I, J]`` (None: all ones).
            chunk_size: rows of x attended at a time (``core.chunk_map``), as Protenix's
                ``chunk_layer``.
            triangle_attention: accepted for Protenix's signature (one kernel here:
                ``core.evoformer_attention``).
            inplace_safe: accepted for Protenix's signature.

        Returns:
            The update ``[..., I, J, c_in]``.
        """
        if mask is None:
            mask = ops.ones(tuple(x.shape[:-1]), dtype=x.dtype)
        if not self.starting:
            x = ops.swapaxes(x, -2, -3)
            mask = ops.swapaxes(mask, -1, -2)
        x = self.layer_norm(x)  # [..., I, J, c]
        tri_bias = self._triangle_bias(x)  # [..., 1, H, I, J]
        if chunk_size is None:
            out = self._attend(x, mask, tri_bias, None)
        else:
            ax = x.ndim - 3
            out = core.chunk_map(
                lambda xr, mr: self._attend(xr, mr, tri_bias, None),
                chunk_size,
                in_axes=(ax, ax),
                out_axes=ax,
            )(x, mask)
        if not self.starting:
            out = ops.swapaxes(out, -2, -3)
        return out

    def update_inplace(self, z, mask, block_rows=None, chunk_size=None, transpose=False):
        """Block-wise inference: ``z += update`` in z's memory, one block of rows at a time.

        The triangle bias ``[..., 1, H, N, N]`` is computed from every block first (it is
        ``H / c_in`` of a pair tensor); then each block's update needs only that block.

        Args:
            z: ``[..., N, N, c_in]``, writable (``core.ops.writable``).
            mask: ``[..., N, N]``.
            block_rows: rows per block (``row_blocks``).
            chunk_size: query rows per call of the attention kernel; None picks
                ``max(8, c_in // no_heads)``, so one call's logits ``[..., r, H, rows, N]`` are
                no larger than the block ``[..., r, N, c_in]`` itself (for c_in >= 8 no_heads).
            transpose: attend along z's columns (Protenix runs its ending-node module, a
                starting-node ``TriangleAttention``, on the transposed pair tensor). An
                ending-node module (``starting=False``) attends along columns by itself.

        Returns:
            z.
        """
        if chunk_size is None:
            chunk_size = max(8, self.c_in // self.no_heads)
        along_columns = bool(transpose) != (not self.starting)
        blocks = (col_blocks if along_columns else row_blocks)(z, block_rows)
        if along_columns:
            mask = ops.swapaxes(mask, -1, -2)
        bias_rows = [self.linear(self.layer_norm(b)) for b in blocks]  # [..., r, N, H]
        tri = bias_rows[0] if len(bias_rows) == 1 else ops.concat(bias_rows, axis=-3)
        del bias_rows
        tri = ops.expand_dims(ops.moveaxis(tri, -1, -3), -4)  # [..., 1, H, N, N]
        for block, m in zip(blocks, _mask_rows(mask, blocks), strict=True):
            x_ln = self.layer_norm(block)
            ops.assign_add(block, self._attend(x_ln, m, tri, chunk_size))
            del x_ln
        return z


# Algorithm 14
TriangleAttentionStartingNode = TriangleAttention


class TriangleAttentionEndingNode(TriangleAttention):
    """Implements Algorithm 15 of the AlphaFold 3 supplement (ending node)."""

    def __init__(self, c_in, c_hidden, no_heads, inf=1e9):
        super().__init__(c_in, c_hidden, no_heads, starting=False, inf=inf)
