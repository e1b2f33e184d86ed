"""The MSA module of AlphaFold 3 (supplement Section 3.3, Algorithms 8-10) as in Protenix 2.0.0.

``OuterProductMean`` (Algorithm 9; Protenix keeps it in ``triangular/layers.py``),
``MSAPairWeightedAveraging`` (Algorithm 10), ``MSAStack`` (Algorithm 8 lines 7-8),
``MSABlock`` (Algorithm 8 lines 6-13) and ``MSAModule`` (Algorithm 8) with Protenix's
random MSA subsampling. Class names, constructor and forward arguments and parameter names
are Protenix's (``outer_product_mean_msa.linear_out.weight``, ``msa_stack.
msa_pair_weighted_averaging.linear_no_bias_mv.weight``, ``pair_stack.tri_mul_out...``), so its
state dicts load by name; ``protenix.model.modules.pairformer`` re-exports ``MSAModule``.

Memory: the MSA stack runs in blocks of ``msa_chunk_size`` MSA rows (``core.chunk_map``; the
pair-weighted average of one row only reads that row, so this is exact), the outer product
mean in blocks of ``chunk_size`` residue rows, and training recomputes each group of
``blocks_per_ckpt`` blocks in the backward pass (``core.recompute``).
"""

import math

import numpy as np

from diffsci import core
from diffsci.core import ops

from ..chunk import resolve_chunk_size
from ..triangular.layers import DropoutRowwise, LayerNorm, OpenfoldLinear, dropout_add_rowwise
from ..triangular.triangular import MIN_BLOCKS
from .primitives import LinearNoBias, Transition

__all__ = [
    "MSABlock",
    "MSAModule",
    "MSAPairWeightedAveraging",
    "MSAStack",
    "OuterProductMean",
    "sample_msa_indices",
]


class OuterProductMean(core.nn.Cell):
    """Implements Algorithm 9 of the AlphaFold 3 supplement (outer product mean):
    ``z_ij = Linear(mean_s a_si (x) b_sj)``, the mean over MSA rows weighted by the mask.

    Args:
        c_m: MSA channels.
        c_z: pair channels.
        c_hidden: channels of ``a`` and ``b`` (the outer product has ``c_hidden**2``).
        eps: added to the mask-count normaliser (1e-3).

    Parameters: ``layer_norm.{weight,bias}``, ``linear_1.weight``, ``linear_2.weight``
    ``[c_hidden, c_m]``, ``linear_out.{weight,bias}`` ``[c_z, c_hidden**2]``.
    """

    def __init__(self, c_m, c_z, c_hidden, eps=1e-3):
        super().__init__()
        self.c_m, self.c_z, self.c_hidden, self.eps = c_m, c_z, c_hidden, eps
        self.layer_norm = LayerNorm(c_m)
        self.linear_1 = OpenfoldLinear(c_m, c_hidden, bias=False)
        self.linear_2 = OpenfoldLinear(c_m, c_hidden, bias=False)
        self.linear_out = OpenfoldLinear(c_hidden**2, c_z, init="final")

    def _opm(self, a, b):
        # a [..., I, S, C], b [..., J, S, C]
        outer = ops.einsum("...bac,...dae->...bdce", a, b)  # [..., I, J, C, C]
        outer = outer.reshape(*outer.shape[:-2], self.c_hidden**2)  # [..., I, J, C * C]
        return self.linear_out(outer)  # [..., I, J, c_z]

    def construct(self, m, mask=None, chunk_size=None, inplace_safe=False):
        """m ``[..., N_seq, N_res, c_m]``, mask ``[..., N_seq, N_res]`` (None: all ones) ->
        the pair update ``[..., N_res, N_res, c_z]``.

        ``chunk_size`` evaluates the outer product for that many residue rows at a time;
        with ``inplace_safe`` (block-wise inference) and no ``chunk_size``, ceil(N /
        ``MIN_BLOCKS``) rows (same numbers).
        """
        if mask is None:
            mask = ops.ones(tuple(m.shape[:-1]), dtype=m.dtype)
        ln = self.layer_norm(m)  # [..., S, N, c_m]
        mask = ops.expand_dims(ops.astype(mask, ln.dtype), -1)  # [..., S, N, 1]
        a = self.linear_1(ln) * mask  # [..., S, N, C]
        b = self.linear_2(ln) * mask  # [..., S, N, C]
        a = ops.swapaxes(a, -2, -3)  # [..., N, S, C]
        b = ops.swapaxes(b, -2, -3)  # [..., N, S, C]
        if chunk_size is None and inplace_safe:
            # block-wise inference bounds the [r, N, C * C] products like the pair updates'
            # row blocks (at most N / MIN_BLOCKS rows): unchunked, N = 1024 with C = 32 would
            # hold 8 pair tensors of them
            chunk_size = -(-a.shape[-3] // MIN_BLOCKS)
        if chunk_size is None:
            outer = self._opm(a, b)  # [..., N, N, c_z]
        else:
            row_axis = a.ndim - 3
            outer = core.chunk_map(
                lambda a_rows: self._opm(a_rows, b),
                int(chunk_size),
                in_axes=row_axis,
                out_axes=row_axis,
            )(a)  # [..., N, N, c_z]
        norm = ops.einsum("...abc,...adc->...bdc", mask, mask)  # [..., N, N, 1]
        return outer / (norm + self.eps)


class MSAPairWeightedAveraging(core.nn.Cell):
    """Implements Algorithm 10 of the AlphaFold 3 supplement (MSA pair-weighted averaging):
    each MSA row is averaged over tokens with per-head weights ``softmax_j(b_ijh)`` taken from
    the pair representation, then gated.

    Args:
        c_m: MSA channels.
        c: channels per head.
        c_z: pair channels.
        n_heads: heads.
    """

    def __init__(self, c_m=64, c=32, c_z=128, n_heads=8):
        super().__init__()
        self.c_m, self.c, self.c_z, self.n_heads = c_m, c, c_z, n_heads
        self.layernorm_m = LayerNorm(c_m)
        self.linear_no_bias_mv = LinearNoBias(c_m, c * n_heads)
        self.layernorm_z = LayerNorm(c_z)
        self.linear_no_bias_z = LinearNoBias(c_z, n_heads)
        self.linear_no_bias_mg = LinearNoBias(c_m, c * n_heads, initializer="zeros")
        self.linear_no_bias_out = LinearNoBias(c * n_heads, c_m, initializer="zeros")

    def construct(self, m, z):
        """m ``[..., N_msa, N_token, c_m]``, z ``[..., N_token, N_token, c_z]`` -> the MSA
        update ``[..., N_msa, N_token, c_m]``."""
        m = self.layernorm_m(m)
        v = self.linear_no_bias_mv(m)  # [..., S, N, H * c]
        v = v.reshape(*v.shape[:-1], self.n_heads, self.c)  # [..., S, N, H, c]
        b = self.linear_no_bias_z(self.layernorm_z(z))  # [..., N, N, H]
        g = ops.sigmoid(self.linear_no_bias_mg(m))  # [..., S, N, H * c]
        g = g.reshape(*g.shape[:-1], self.n_heads, self.c)  # [..., S, N, H, c]
        w = ops.softmax(b, axis=-2)  # [..., N(i), N(j), H], normalised over j
        wv = ops.einsum("...ijh,...mjhc->...mihc", w, v)  # [..., S, N, H, c]
        o = g * wv
        o = o.reshape(*o.shape[:-2], self.n_heads * self.c)  # [..., S, N, H * c]
        return self.linear_no_bias_out(o)  # [..., S, N, c_m]


class MSAStack(core.nn.Cell):
    """Implements Algorithm 8 lines 7-8 of the AlphaFold 3 supplement:
    ``m += DropoutRowwise(MSAPairWeightedAveraging(m, z)); m += Transition(m)``.

    Args:
        c_m: MSA channels.
        c_z: pair channels.
        c: channels per head of the pair-weighted averaging (8 heads).
        dropout: row-wise dropout rate (training).
        msa_chunk_size: MSA rows per block (None: all at once).
        msa_max_size: Protenix pads the MSA to this many rows in training (for DDP's static
            graph); padding rows never change the others, so it is kept only as a setting.
    """

    def __init__(self, c_m=64, c_z=128, c=8, dropout=0.15, msa_chunk_size=2048, msa_max_size=16384):
        super().__init__()
        self.c = c
        self.msa_pair_weighted_averaging = MSAPairWeightedAveraging(c_m=c_m, c=c, c_z=c_z)
        self.dropout_row = DropoutRowwise(dropout)
        self.p_drop = dropout
        self.transition_m = Transition(c_in=c_m, n=4)
        self.msa_chunk_size = msa_chunk_size
        self.msa_max_size = msa_max_size

    def _rows(self, fn, m, z=None):
        """``fn(m_rows, z)`` over blocks of ``msa_chunk_size`` MSA rows of m
        ``[..., S, N, c_m]``. In training each block is recomputed in the backward pass
        (``core.recompute``, as Protenix checkpoints each chunk), so one block's activations
        are alive at a time there too."""
        if self.msa_chunk_size is None:
            return fn(m, z)
        if self.training:
            fn = core.recompute(fn)
        axis = m.ndim - 3
        chunked = core.chunk_map(fn, int(self.msa_chunk_size), in_axes=(axis, None), out_axes=axis)
        return chunked(m, z)

    def _pwa(self, m_rows, z):
        return self.msa_pair_weighted_averaging(m_rows, z)

    def _transition(self, m_rows, z):
        return self.transition_m(m_rows)

    def _inference_rows(self, m_rows, z):
        m_rows = m_rows + self.msa_pair_weighted_averaging(m_rows, z)
        return m_rows + self.transition_m(m_rows)

    def construct(self, m, z):
        """m ``[..., N_msa, N_token, c_m]``, z ``[..., N_token, N_token, c_z]`` -> the new m."""
        if not self.training:
            return self._rows(self._inference_rows, m, z)
        update = self._rows(self._pwa, m, z)
        m = dropout_add_rowwise(m, update, self.p_drop, self.training)
        return m + self._rows(self._transition, m, z)


def _pairformer():
    # pairformer.py re-exports MSAModule from here at its end: import it when first needed
    from . import pairformer

    return pairformer


class MSABlock(core.nn.Cell):
    """Implements Algorithm 8 lines 6-13 of the AlphaFold 3 supplement: the outer product mean
    into z, the MSA stack (all blocks but the last), then a Pairformer block on z alone.

    Args:
        c_m: MSA channels.
        c_z: pair channels.
        c_hidden: channels of the outer product mean.
        is_last_block: the last block has no MSA stack and returns ``(None, z)``.
        msa_dropout: dropout of the MSA stack.
        pair_dropout: dropout of the Pairformer block.
        msa_chunk_size, msa_max_size: see :class:`MSAStack`.
        hidden_scale_up: Protenix-v2's wider triangle layers (see ``PairformerBlock``).
    """

    def __init__(
        self,
        c_m=64,
        c_z=128,
        c_hidden=32,
        is_last_block=False,
        msa_dropout=0.15,
        pair_dropout=0.25,
        msa_chunk_size=2048,
        msa_max_size=16384,
        hidden_scale_up=False,
    ):
        super().__init__()
        self.c_m, self.c_z, self.c_hidden = c_m, c_z, c_hidden
        self.is_last_block = is_last_block
        self.outer_product_mean_msa = OuterProductMean(c_m=c_m, c_z=c_z, c_hidden=c_hidden)
        if not is_last_block:
            self.msa_stack = MSAStack(
                c_m=c_m,
                c_z=c_z,
                dropout=msa_dropout,
                msa_chunk_size=msa_chunk_size,
                msa_max_size=msa_max_size,
            )
        self.pair_stack = _pairformer().PairformerBlock(
            c_z=c_z, c_s=0, dropout=pair_dropout, hidden_scale_up=hidden_scale_up
        )

    def construct(
        self,
        m,
        z,
        pair_mask,
        triangle_multiplicative="torch",
        triangle_attention="torch",
        inplace_safe=False,
        chunk_size=None,
    ):
        """m ``[..., N_msa, N_token, c_m]``, z ``[..., N_token, N_token, c_z]``, pair_mask
        ``[..., N_token, N_token]`` -> ``(m, z)`` (``(None, z)`` for the last block)."""
        z = z + self.outer_product_mean_msa(m, inplace_safe=inplace_safe, chunk_size=chunk_size)
        if not self.is_last_block:
            m = self.msa_stack(m, z)
        _, z = self.pair_stack(
            s=None,
            z=z,
            pair_mask=pair_mask,
            triangle_multiplicative=triangle_multiplicative,
            triangle_attention=triangle_attention,
            inplace_safe=inplace_safe,
            chunk_size=chunk_size,
        )
        return (None, z) if self.is_last_block else (m, z)


class _CoreDraws:
    """The default random source of MSA subsampling: core's seeded generator."""

    @staticmethod
    def randint(low, high):
        return int(core.random.randint(low, high, (1,)).asnumpy()[0])

    @staticmethod
    def permutation(n):
        return core.random.permutation(n).asnumpy()


class _FromNormal:
    """Integer draws made from an ``rng`` that only has ``randn(shape)`` (the sampler's
    protocol): a uniform ``Phi(x)`` of one normal draw picks the size, the order of ``n``
    normal draws the permutation (uniform over permutations, as the draws are i.i.d.)."""

    def __init__(self, rng):
        self.rng = rng

    def randint(self, low, high):
        x = float(np.asarray(_numpy(self.rng.randn([1]))).reshape(-1)[0])
        u = 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))  # Phi(x) in [0, 1]
        return min(high - 1, low + int(u * (high - low)))

    def permutation(self, n):
        return np.argsort(np.asarray(_numpy(self.rng.randn([n]))).reshape(-1), kind="stable")


def _numpy(x):
    return x.asnumpy() if hasattr(x, "asnumpy") else x


def sample_msa_indices(n, lower_bound=1, strategy="random", cutoff=-1, rng=None):
    """Protenix's MSA subsample (``protenix.model.utils.sample_indices``, then the cutoff):
    a size ``k ~ U{min(lower_bound, n), ..., n}``, then the first ``k`` of a random permutation
    (``"random"``) or rows ``0..k-1`` (``"topk"``), then at most ``cutoff`` of them (> 0).

    Args:
        n: MSA rows.
        lower_bound: smallest sample size.
        strategy: "random" or "topk".
        cutoff: keep at most this many (<= 0: no limit).
        rng: the random source, drawn in Protenix's order: ``rng.randint(low, high)`` (an int
            in ``[low, high)``), then for "random" ``rng.permutation(n)``; an ``rng`` with only
            ``randn(shape)`` (the diffusion sampler's protocol) has these made from its normal
            draws. None: core's seeded generator. A test passes an object that replays draws.

    Returns:
        A list of row indices.
    """
    if strategy not in ("random", "topk"):
        raise ValueError(
            f"sample_msa_indices: strategy must be 'random' or 'topk', got {strategy!r}"
        )
    if rng is None:
        rng = _CoreDraws
    elif not (hasattr(rng, "randint") and hasattr(rng, "permutation")):
        if not hasattr(rng, "randn"):
            raise TypeError(
                "sample_msa_indices: rng needs randint(low, high) and permutation(n), or "
                f"randn(shape); got a {type(rng).__name__}"
            )
        rng = _FromNormal(rng)
    size = int(rng.randint(min(lower_bound, n), n + 1))
    if strategy == "random":
        indices = [int(i) for i in rng.permutation(n)][:size]
    else:
        indices = list(range(size))
    return indices[:cutoff] if cutoff > 0 else indices


class MSAModule(core.nn.Cell):
    """Implements Algorithm 8 of the AlphaFold 3 supplement (MSA module): embed a random
    subsample of the MSA (one-hot residue 32 + has_deletion + deletion_value, plus the
    projected single inputs), then ``n_blocks`` MSA blocks that update z.

    Args:
        n_blocks: MSA blocks (the last has no MSA stack).
        c_m: MSA channels.
        c_z: pair channels.
        c_s_inputs: channels of ``s_inputs`` (InputFeatureEmbedder output).
        msa_dropout, pair_dropout: dropout rates of the MSA stack and Pairformer blocks.
        blocks_per_ckpt: blocks per recompute group in training (None: no recompute).
        msa_chunk_size, msa_max_size: see :class:`MSAStack`.
        msa_configs: Protenix's ``data.msa`` settings: ``sample_cutoff`` ``{"train", "test"}``
            (rows kept at most; defaults 16384), ``min_size`` ``{"train", "test"}`` (smallest
            sample; defaults 1), ``strategy`` ("random").
        hidden_scale_up: see :class:`MSABlock`.
    """

    def __init__(
        self,
        n_blocks=4,
        c_m=64,
        c_z=128,
        c_s_inputs=449,
        msa_dropout=0.15,
        pair_dropout=0.25,
        blocks_per_ckpt=1,
        msa_chunk_size=2048,
        msa_max_size=16384,
        msa_configs=None,
        hidden_scale_up=False,
    ):
        super().__init__()
        msa_configs = dict(msa_configs or {})
        self.n_blocks, self.c_m, self.c_s_inputs = n_blocks, c_m, c_s_inputs
        self.blocks_per_ckpt = blocks_per_ckpt
        self.msa_chunk_size, self.msa_max_size = msa_chunk_size, msa_max_size
        self.input_feature = {"msa": 32, "has_deletion": 1, "deletion_value": 1}
        cutoff = msa_configs.get("sample_cutoff", {})
        lowerb = msa_configs.get("min_size", {})
        self.msa_configs = {
            "enable": msa_configs.get("enable", False),
            "strategy": msa_configs.get("strategy", "random"),
            "train_cutoff": cutoff.get("train", 16384),
            "test_cutoff": cutoff.get("test", 16384),
            "train_lowerb": lowerb.get("train", 1),
            "test_lowerb": lowerb.get("test", 1),
        }
        if "sample_cutoff" in msa_configs:
            self.msa_max_size = self.msa_configs["train_cutoff"]
        self.linear_no_bias_m = LinearNoBias(32 + 1 + 1, c_m)
        self.linear_no_bias_s = LinearNoBias(c_s_inputs, c_m)
        self.blocks = core.nn.CellList(
            [
                MSABlock(
                    c_m=c_m,
                    c_z=c_z,
                    is_last_block=(i + 1 == n_blocks),
                    msa_dropout=msa_dropout,
                    pair_dropout=pair_dropout,
                    msa_chunk_size=msa_chunk_size,
                    msa_max_size=self.msa_max_size,
                    hidden_scale_up=hidden_scale_up,
                )
                for i in range(n_blocks)
            ]
        )

    def _embed(self, input_feature_dict, s_inputs, rng):
        """The sampled MSA embedding ``[..., N_sample, N_token, c_m]``."""
        msa = input_feature_dict["msa"]  # [..., N_msa, N_token] residue ids
        mode = "train" if self.training else "test"
        indices = sample_msa_indices(
            msa.shape[-2],
            lower_bound=self.msa_configs[f"{mode}_lowerb"],
            strategy=self.msa_configs["strategy"],
            cutoff=self.msa_configs[f"{mode}_cutoff"],
            rng=rng,
        )
        idx = core.tensor(indices, dtype=core.int64)
        msa = ops.gather(msa, idx, msa.ndim - 2)  # [..., N_sample, N_token]
        dtype = s_inputs.dtype
        parts = [ops.one_hot(msa, self.input_feature["msa"], dtype=dtype)]  # [..., S, N, 32]
        for name in ("has_deletion", "deletion_value"):
            x = input_feature_dict[name]
            x = ops.gather(x, idx, x.ndim - 2)  # [..., S, N]
            parts.append(ops.expand_dims(ops.astype(x, dtype), -1))  # [..., S, N, 1]
        msa_sample = ops.concat(parts, axis=-1)  # [..., S, N, 34]
        msa_sample = self.linear_no_bias_m(msa_sample)  # [..., S, N, c_m]
        return msa_sample + ops.expand_dims(self.linear_no_bias_s(s_inputs), -3)

    def construct(
        self,
        input_feature_dict,
        z,
        s_inputs,
        pair_mask,
        triangle_multiplicative="torch",
        triangle_attention="torch",
        inplace_safe=False,
        chunk_size=None,
        rng=None,
    ):
        """Update z with the MSA.

        Args:
            input_feature_dict: ``msa`` ``[..., N_msa, N_token]`` (int residue ids < 32),
                ``has_deletion``, ``deletion_value`` ``[..., N_msa, N_token]``.
            z: pair embedding ``[..., N_token, N_token, c_z]``.
            s_inputs: ``[..., N_token, c_s_inputs]``.
            pair_mask: ``[..., N_token, N_token]``.
            inplace_safe, chunk_size: inference memory options of the blocks.
            rng: random source of the MSA subsample (see :func:`sample_msa_indices`).

        Returns:
            z ``[..., N_token, N_token, c_z]`` (unchanged without an MSA or blocks).
        """
        if self.n_blocks < 1 or "msa" not in input_feature_dict:
            return z
        if input_feature_dict["msa"].ndim < 2:
            return z
        chunk_size = resolve_chunk_size(chunk_size, z.shape[-2])  # "auto": Protenix's rule
        m = self._embed(input_feature_dict, s_inputs, rng)
        kwargs = dict(
            triangle_multiplicative=triangle_multiplicative,
            triangle_attention=triangle_attention,
            inplace_safe=inplace_safe,
            chunk_size=chunk_size,
        )
        blocks = list(self.blocks)
        group = self.blocks_per_ckpt if self.training else None
        if not group:
            for block in blocks:
                m, z = block(m, z, pair_mask, **kwargs)
            return z
        for start in range(0, len(blocks), int(group)):
            chunk = blocks[start : start + int(group)]
            out = core.recompute(_run_blocks(chunk, kwargs))(m, z, pair_mask)
            m, z = out if isinstance(out, tuple) else (None, out)
        return z


def _run_blocks(blocks, kwargs):
    """The blocks in sequence; returns ``(m, z)``, or z alone once the last block dropped m."""

    def run(m, z, pair_mask):
        for block in blocks:
            m, z = block(m, z, pair_mask, **kwargs)
        return z if m is None else (m, z)

    return run
