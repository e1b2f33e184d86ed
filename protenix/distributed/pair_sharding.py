"""Pair-axis sharding of the Pairformer: dynamic axial parallelism (DAP).

FastFold (Cheng et al. 2022, "FastFold: Reducing AlphaFold Training Time from 11 Days to 67
Hours", section 4.2) and ScaleFold split the pair representation ``z [N, N, c_z]`` by rows
over ``P`` ranks: rank ``r`` holds rows ``R_r = [r N/P, (r+1) N/P)``, the shard
``z[R_r] [N/P, N, c_z]``. Each update of a Pairformer block (AF3 supplement Algorithm 17) then
runs as follows; the single representation ``s [N, c_s]`` is replicated on every rank.

- Row-wise operations run on the local rows: the pair transition, the LayerNorms and every
  projection of the triangle updates.
- Outgoing triangle multiplication (Algorithm 12), ``x_ij = sum_k a_ik b_jk``: a row i needs
  every row j of ``b``. ``b`` is all-gathered one channel slice at a time (``c_hidden / P``
  channels per slice), so the gathered slice ``[N, N, c_hidden / P]`` is no larger than the
  local shard of ``b``; each slice of ``x`` is independent (the product is per channel).
- Incoming triangle multiplication (Algorithm 13) and ending-node triangle attention
  (Algorithm 15) are column-wise: the shard is transposed by an all-to-all
  (``w = z^T``, rank ``r`` gets the columns ``C_r`` as rows), the row-wise form runs on ``w``
  (incoming: ``x^T_ji = sum_k B_jk A_ik`` with ``A, B`` the projections of ``w``), and a second
  all-to-all brings the result back to rows.
- Triangle attention (Algorithms 14/15) needs the triangle bias ``b_h(j, k)`` of every pair:
  the projected bias heads ``[N/P, N, H]`` are all-gathered (``H`` = 4 channels, small).
- Attention with pair bias (Algorithm 24) on the replicated single track needs the full bias
  ``[H, N, N]``: each rank projects its rows and the heads are all-gathered.

Every step is written with core ops and ``core.communication``'s differentiable collectives,
so the result equals the unsharded block (to round-off) and gradients flow through it.
Within a rank the shard is processed in row blocks (``row_blocks``, as the single-device
block-wise inference path) so the temporaries stay a fraction of the shard; the per-rank peak
then scales as ``N^2 c_z / P``, apart from the gathered bias heads (``H N^2``) and the
all-gathered channel slice of the triangle multiplication.

Dropout: only inference (or training with ``dropout = 0``) is supported: row-wise dropout
would need the same random mask on every rank.
"""

import itertools

from diffsci.core import communication as comm
from diffsci.core import ops

from ..model.triangular.layers import _linear
from ..model.triangular.triangular import join_blocks, row_blocks

__all__ = [
    "ShardedPairformerStack",
    "gather_rows",
    "shard_rows",
    "sharded_pairformer_block",
    "transpose_shard",
]


def _world(group):
    return comm.get_rank(group), comm.get_group_size(group)


def shard_rows(x, axis=-3, group=None):
    """This rank's block of rows of ``x`` along ``axis`` (``x`` replicated: ``[..., N, ...]``
    -> ``[..., N / P, ...]``). ``N`` must be a multiple of the group size ``P``."""
    rank, size = _world(group)
    n = x.shape[axis]
    if n % size:
        raise ValueError(
            f"shard_rows: axis {axis} of shape {tuple(x.shape)} has length {n}, not a multiple "
            f"of the {size} ranks of the group"
        )
    r = n // size
    return ops.slice_axis(x, axis, rank * r, (rank + 1) * r)


def gather_rows(x_shard, axis=-3, group=None):
    """The full tensor of row shards (``all_gather`` along ``axis``, rank order)."""
    return comm.all_gather(x_shard, group=group, axis=axis)


def transpose_shard(blocks, group=None):
    """Row blocks of the transposed shard: ``blocks`` hold this rank's rows ``z[R_r]`` as row
    blocks ``[..., r, N, c]`` (the same split on every rank); the result holds
    ``w[C_r] = z[:, C_r]^T`` (rows of ``w = swapaxes(z, -3, -2)``) in the same split.

    One all-to-all per block (split along the columns, concatenated along the rows): block
    ``i`` of every rank arrives as ``[P r, N / P, c]``; its slices by source rank are swapped
    and placed at that rank's rows. The list passed in is consumed; the result's blocks are
    separate arrays (not views of one), so replacing them one by one frees memory as it goes.
    Peak: about two shards.
    """
    _, size = _world(group)
    sizes = [0]
    for b in blocks:
        sizes.append(sizes[-1] + b.shape[-3])
    pieces = []  # pieces[i][p]: [..., R, r, c] (w's rows C_r, z's rows of block i of rank p)
    for i in range(len(blocks)):
        b, blocks[i] = blocks[i], None
        r = b.shape[-3]
        got = comm.all_to_all(b, split_axis=-2, concat_axis=-3, group=group)  # [P r, R, c]
        del b
        pieces.append(
            [ops.swapaxes(ops.slice_axis(got, -3, p * r, (p + 1) * r), -2, -3) for p in range(size)]
        )
        del got
    # block j of the result: its rows of every piece, side by side in global column order
    out = []
    for a, b in itertools.pairwise(sizes):
        cols = [
            ops.slice_axis(pieces[i][p], -3, a, b) for p in range(size) for i in range(len(pieces))
        ]
        out.append(cols[0] if len(cols) == 1 else ops.concat(cols, axis=-2))  # [..., r, N, c]
    del pieces
    blocks.clear()
    return out


def _mask_rows(mask, blocks):
    """``mask [..., R, N]`` sliced like ``blocks`` along its row axis."""
    out, start = [], 0
    for b in blocks:
        r = b.shape[-3]
        out.append(ops.slice_axis(mask, -2, start, start + r))
        start += r
    return out


def _transpose_mask(mask_shard, group):
    """Rows ``C_r`` of the transposed mask: ``mask[:, C_r]^T`` ``[..., R, N]``."""
    m = ops.expand_dims(mask_shard, -1)  # [..., R, N, 1]
    (t,) = transpose_shard([m], group)
    return ops.squeeze(t, -1)


def _linear_rows(lin, x, a, b):
    """Output channels ``[a, b)`` of the linear layer ``lin`` (``x W[a:b]^T + bias[a:b]``)."""
    bias = None if lin.bias is None else ops.slice_axis(lin.bias, 0, a, b)
    return _linear(x, ops.slice_axis(lin.weight, 0, a, b), bias, lin.precision)


def _c_order(x):
    """x with its elements in C order (a copy when x is a permuted view): numpy keeps the
    memory order of its inputs through concatenation and element-wise ops."""
    return ops.reshape(ops.reshape(x, (-1,)), tuple(x.shape))


def _channel_slices(c, size):
    step = -(-c // size)
    return [(a, min(a + step, c)) for a in range(0, c, step)]


def _tri_mul_rows(mod, blocks, mask, row_p, full_p, group):
    """A triangle multiplication on row blocks (in the frame where it is row-wise):
    ``x_ij = sum_k P_ik F_jk`` with ``P`` the ``row_p`` projection of the local rows and ``F``
    the ``full_p`` projection of every rank's rows; replaces each block by
    ``block + gate * Linear(LN(x))``.

    The channels run in ``4 P`` slices (one on a single rank): per slice, the slice of ``F``
    of the local rows is projected (the rows ``[a, b)`` of the linear weights), laid out
    ``[..., c, k, j]`` and all-gathered along ``j`` (``[..., c, N, N]``, a quarter of a shard
    of ``F``), and each row block's slice of ``P`` is projected and multiplied with it; in the
    last slice each block is finished and replaced as soon as its product is complete. Only
    the LayerNorm is recomputed per slice, so neither ``F`` nor ``P`` is held whole."""
    _, size = _world(group)
    masks = [ops.expand_dims(m, -1) for m in _mask_rows(mask, blocks)]

    def proj(w, m, which, a, b):  # [..., r, N, c_z] -> channels [a, b) of the projection
        g, p = (
            (mod.linear_a_g, mod.linear_a_p) if which == "a" else (mod.linear_b_g, mod.linear_b_p)
        )
        w_ln = mod.layer_norm_in(w)
        return m * ops.sigmoid(_linear_rows(g, w_ln, a, b)) * _linear_rows(p, w_ln, a, b)

    nd = blocks[0].ndim
    perm = (*range(nd - 3), nd - 1, nd - 2, nd - 3)  # [..., j, k, c] -> [..., c, k, j]
    xs = [[] for _ in blocks]
    slices = _channel_slices(mod.c_hidden, 1 if size == 1 else 4 * size)
    for n_done, (a, b) in enumerate(slices, start=1):
        # F laid out [..., c, k, j] in C order (matmul would copy it per call otherwise)
        f = [
            _c_order(ops.permute(proj(w, m, full_p, a, b), perm))
            for w, m in zip(blocks, masks, strict=True)
        ]
        if size > 1:  # the slice of every rank's rows: [..., c, k, j]
            f = [comm.all_gather(ops.concat(f, axis=-1), group=group, axis=-1)]
        # (one rank: the blocks' parts as they are; joining them would double the peak)
        for i, (w, m) in enumerate(zip(blocks, masks, strict=True)):
            p = ops.moveaxis(proj(w, m, row_p, a, b), -1, -3)  # [..., c, r, k]
            x = [ops.matmul(p, fq) for fq in f]  # [..., c, r, j of the part]
            xs[i].append(x[0] if len(x) == 1 else ops.concat(x, axis=-1))  # [..., c, r, j]
            del p, x
            if n_done == len(slices):  # x of this block is complete: finish it now
                x = xs[i][0] if len(xs[i]) == 1 else ops.concat(xs[i], axis=-3)
                xs[i] = None
                x = mod._finish(ops.moveaxis(x, -3, -1), mod.layer_norm_in(w))  # [., r, N, c_z]
                blocks[i] = w + x
                del w, x
        del f
    return blocks


def _tri_att_rows(mod, blocks, mask, group, chunk_size=None):
    """Starting-node triangle attention on row blocks (the frame where it is row-wise): the
    triangle bias of every pair is all-gathered from the ranks' projected heads."""
    if chunk_size is None:
        chunk_size = max(8, mod.c_in // mod.no_heads)
    heads = join_blocks([mod.linear(mod.layer_norm(b)) for b in blocks])  # [..., R, N, H]
    tri = comm.all_gather(ops.moveaxis(heads, -1, -3), group=group, axis=-2)  # [..., H, N, N]
    del heads
    tri = ops.expand_dims(tri, -4)  # [..., 1, H, N, N]
    for i, m in enumerate(_mask_rows(mask, blocks)):
        upd = mod._attend(mod.layer_norm(blocks[i]), m, tri, chunk_size)
        blocks[i] = blocks[i] + upd
        del upd
    return blocks


def _check_block(block):
    if block.training and block.p_drop > 0:
        raise NotImplementedError(
            "sharded_pairformer_block: row-wise dropout in training is not supported on a "
            "sharded pair tensor (each rank would draw its own mask); call set_train(False) "
            "or build the block with dropout=0"
        )


def _shard_blocks(block_list, s, blocks, mask, mask_t, group):
    """The pair and single updates of each block in ``block_list`` on the row blocks of this
    rank's shard. Returns ``(s, blocks)``."""
    for block in block_list:
        _check_block(block)
        blocks = _tri_mul_rows(block.tri_mul_out, blocks, mask, "a", "b", group)
        blocks = transpose_shard(blocks, group)
        blocks = _tri_mul_rows(block.tri_mul_in, blocks, mask_t, "b", "a", group)
        blocks = transpose_shard(blocks, group)
        blocks = _tri_att_rows(block.tri_att_start, blocks, mask, group)
        blocks = transpose_shard(blocks, group)
        blocks = _tri_att_rows(block.tri_att_end, blocks, mask_t, group)
        blocks = transpose_shard(blocks, group)
        for i in range(len(blocks)):
            rows = max(1, blocks[i].shape[-3] // 8)
            blocks[i] = blocks[i] + block.pair_transition(blocks[i], chunk_size=rows)
        if block.c_s > 0:
            apb = block.attention_pair_bias
            local = apb.bias_from_blocks(blocks)  # [..., H, R, N]
            bias = comm.all_gather(local, group=group, axis=-2)  # [..., H, N, N]
            del local
            s = s + apb.attend_with_bias(s, None, bias)
            del bias
            s = s + block.single_transition(s)
    return s, blocks


def _prepare(z_shard, pair_mask_shard, chunk_size, group):
    _, size = _world(group)
    r, n = z_shard.shape[-3], z_shard.shape[-2]
    if r * size != n:
        raise ValueError(
            f"sharded Pairformer: z shard of shape {tuple(z_shard.shape)} should be "
            f"[..., N / P, N, c_z] with P = {size} ranks, i.e. {n // size} rows of N = {n}"
        )
    if pair_mask_shard is None:
        pair_mask_shard = ops.ones(tuple(z_shard.shape[:-1]), dtype=z_shard.dtype)
    elif tuple(pair_mask_shard.shape) != tuple(z_shard.shape[:-1]):
        raise ValueError(
            f"sharded Pairformer: pair mask shard of shape {tuple(pair_mask_shard.shape)} "
            f"should be the z shard's rows {tuple(z_shard.shape[:-1])}"
        )
    mask_t = _transpose_mask(pair_mask_shard, group)
    return row_blocks(z_shard, chunk_size), pair_mask_shard, mask_t


def sharded_pairformer_block(block, s, z_shard, pair_mask_shard=None, chunk_size=None, group=None):
    """One ``PairformerBlock`` on this rank's rows of the pair tensor (module docstring).

    Args:
        block: a ``protenix.model.modules.pairformer.PairformerBlock`` (its weights are used
            as they are; the same on every rank). Eval mode or ``dropout = 0``.
        s: ``[..., N, c_s]`` replicated (None when ``c_s == 0``).
        z_shard: ``[..., N / P, N, c_z]``: rows ``[rank N / P, (rank + 1) N / P)`` of z
            (``shard_rows``).
        pair_mask_shard: the same rows of the pair mask ``[..., N / P, N]`` (None: ones).
        chunk_size: rows per block inside the rank (None: ``row_blocks``'s default,
            at most ``ceil(N / P / 16)`` rows).
        group: the communication group (None: the world).

    Returns:
        ``(s, z_shard)``: the replicated single update and this rank's rows of the new z.
    """
    return sharded_pairformer_stack([block], s, z_shard, pair_mask_shard, chunk_size, group)


def sharded_pairformer_stack(blocks, s, z_shard, pair_mask_shard=None, chunk_size=None,
                             group=None):  # fmt: skip
    """``sharded_pairformer_block`` over a sequence of blocks (a ``PairformerStack``'s
    ``blocks``), the shard kept in row blocks from one block to the next."""
    rows, mask, mask_t = _prepare(z_shard, pair_mask_shard, chunk_size, group)
    del z_shard
    s, rows = _shard_blocks(list(blocks), s, rows, mask, mask_t, group)
    return s, join_blocks(rows)


class ShardedPairformerStack:
    """A ``PairformerStack`` (its parameters, shared) run on a row-sharded pair tensor.

        stack = PairformerStack(...)          # same weights on every rank
        sharded = ShardedPairformerStack(stack)
        z_shard = shard_rows(z)               # or built sharded from the start
        s, z_shard = sharded(s, z_shard, shard_rows(pair_mask, axis=-2))
        z = gather_rows(z_shard)              # only if the full tensor is wanted

    Args:
        stack: a ``PairformerStack`` (or a single ``PairformerBlock``).
        group: the communication group over which z is sharded (None: the world).
        chunk_size: rows per block inside a rank (see ``sharded_pairformer_block``).
    """

    def __init__(self, stack, group=None, chunk_size=None):
        self.stack, self.group, self.chunk_size = stack, group, chunk_size
        self.blocks = list(stack.blocks) if hasattr(stack, "blocks") else [stack]

    def __call__(self, s, z_shard, pair_mask_shard=None):
        """``(s, z_shard)`` after every block; arguments as ``sharded_pairformer_block``."""
        return sharded_pairformer_stack(
            self.blocks, s, z_shard, pair_mask_shard, self.chunk_size, self.group
        )
