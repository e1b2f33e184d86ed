"""Protenix's primitives: Linear with AF3 initializers, AdaptiveLayerNorm (AF3 Algorithm 26),
Transition (Algorithm 11), gated multi-head Attention with pair bias and local (windowed)
attention, DropPath.

Parameter names and layouts are those of ``protenix.model.modules.primitives`` in Protenix
2.0.0 (torch ``[out, in]`` Linear weights), so state dicts load by name.
"""

import numpy as np

from diffsci import core
from diffsci.core import nn, ops

from ..triangular.layers import LayerNorm, _linear, _param, trunc_normal_init

__all__ = [
    "AdaptiveLayerNorm",
    "Attention",
    "BiasInitLinear",
    "DropPath",
    "LayerNorm",
    "Linear",
    "LinearNoBias",
    "Transition",
    "create_local_attn_bias",
    "gather_pair_embedding_in_dense_trunk",
    "broadcast_token_to_local_atom_pair",
    "rearrange_qk_to_dense_trunk",
]


class Linear(nn.Cell):
    """``y = x W^T + b`` with Protenix's initializers.

    Args:
        in_features: input features.
        out_features: output features.
        bias: whether there is a (zero-initialised) bias.
        precision: a dtype to compute in (inputs and weights cast to it, output cast back).
        initializer: "default" (LeCun truncated normal), "relu" (He truncated normal) or
            "zeros".

    Shapes:
        x ``[..., in_features]`` -> ``[..., out_features]``; ``weight``
        ``[out_features, in_features]``, ``bias`` ``[out_features]``.
    """

    def __init__(self, in_features, out_features, bias=True, precision=None, initializer="default"):
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.use_bias, self.precision, self.initializer = bool(bias), precision, initializer
        shape = (self.out_features, self.in_features)
        if initializer == "default":
            w = trunc_normal_init(shape, 1.0)
        elif initializer == "relu":
            w = trunc_normal_init(shape, 2.0)
        elif initializer == "zeros":
            w = ops.zeros(shape)
        else:
            raise ValueError(f"Linear: invalid initializer {initializer!r}")
        self.weight = _param(w, "weight")
        self.bias = _param(ops.zeros((self.out_features,)), "bias") if bias else None

    def construct(self, x):
        if x.shape[-1] != self.in_features:
            raise ValueError(
                f"Linear: input of shape {tuple(x.shape)} does not end in "
                f"in_features={self.in_features}"
            )
        return _linear(x, self.weight, self.bias, self.precision)


class LinearNoBias(Linear):
    """``Linear`` without a bias (Protenix ``LinearNoBias = partial(Linear, bias=False)``)."""

    def __init__(self, in_features, out_features, precision=None, initializer="default"):
        super().__init__(in_features, out_features, False, precision, initializer)


class BiasInitLinear(Linear):
    """Linear with zero weights and a constant initial bias ``biasinit`` (adaLN-Zero gates)."""

    def __init__(self, in_features, out_features, bias=True, biasinit=0.0, **kwargs):
        super().__init__(in_features, out_features, bias=bias, **kwargs)
        self.weight.set_data(ops.zeros(tuple(self.weight.shape)))
        if bias:
            self.bias.set_data(ops.full((self.out_features,), float(biasinit)))


class AdaptiveLayerNorm(nn.Cell):
    """Implements Algorithm 26 of the AlphaFold 3 supplement (AdaLN):
    ``a = sigmoid(Linear(LN(s))) * LN(a) + LinearNoBias(LN(s))``.

    Args:
        c_a: channels of ``a``.
        c_s: channels of the conditioning ``s``.
    """

    def __init__(self, c_a=768, c_s=384):
        super().__init__()
        self.layernorm_a = LayerNorm(c_a, create_scale=False, create_offset=False)
        self.layernorm_s = LayerNorm(c_s, create_offset=False)
        self.linear_s = Linear(c_s, c_a, initializer="zeros")
        self.linear_nobias_s = LinearNoBias(c_s, c_a, initializer="zeros")

    def construct(self, a, s):
        """a ``[..., N, c_a]``, s ``[..., N, c_s]`` -> ``[..., N, c_a]``."""
        a = self.layernorm_a(a)
        s = self.layernorm_s(s)
        return ops.sigmoid(self.linear_s(s)) * a + self.linear_nobias_s(s)


class Transition(nn.Cell):
    """Implements Algorithm 11 of the AlphaFold 3 supplement (SwiGLU transition):
    ``x = LN(x); LinearNoBias(silu(LinearNoBias_a(x)) * LinearNoBias_b(x))``.

    Args:
        c_in: channels.
        n: expansion factor of the hidden layer (``n * c_in``).
    """

    def __init__(self, c_in, n):
        super().__init__()
        self.n, self.c_in = n, c_in
        self.layernorm1 = LayerNorm(c_in)
        self.linear_no_bias_a = LinearNoBias(c_in, n * c_in, initializer="relu")
        self.linear_no_bias_b = LinearNoBias(c_in, n * c_in, initializer="relu")
        self.linear_no_bias = LinearNoBias(n * c_in, c_in, initializer="zeros")

    def _update(self, x):
        x = self.layernorm1(x)
        a = self.linear_no_bias_a(x)  # [..., n * c_in]
        b = self.linear_no_bias_b(x)  # [..., n * c_in]
        return self.linear_no_bias(ops.silu(a) * b)  # [..., c_in]

    def construct(self, x, chunk_size=None):
        """x ``[..., c_in]`` -> update ``[..., c_in]``.

        ``chunk_size`` (our addition; Protenix splits in 8 above 3200 rows at inference):
        evaluate slices of that many entries of the first axis of ``x`` (rows of a pair
        tensor ``[N, N, c]``, tokens of ``[N, c]``), so the hidden ``[..., n * c_in]`` lives
        one slice at a time.
        """
        if chunk_size is None or x.ndim < 2:
            return self._update(x)
        return core.chunk_map(self._update, int(chunk_size))(x)


def create_local_attn_bias(n, n_queries, n_keys, inf=1e10):
    """The ``[n, n]`` bias that lets query block ``i`` (``n_queries`` rows) see only its
    ``n_keys``-wide key window (0 inside, ``-inf`` outside), Protenix's
    "global_attention_with_bias" form of local attention."""
    n_trunks = -(-n // n_queries)
    padded = n_trunks * n_queries
    allowed = np.zeros((padded, padded), dtype=np.float32)
    for t in range(n_trunks):
        i = t * n_queries
        j1 = max(0, n_queries * t - (n_keys - n_queries) // 2)
        j2 = n_queries * t + (n_queries + n_keys) // 2
        allowed[i : i + n_queries, j1:j2] = 1.0
    return core.tensor(((1.0 - allowed) * -inf)[:n, :n])


def _key_windows(n, n_queries, n_keys):
    """Key indices of each query block's window and their validity, as Protenix's dense trunks:
    block ``t`` covers queries ``[t n_q, (t+1) n_q)`` and keys from ``t n_q - (n_k - n_q)/2``.

    Returns:
        (idx ``[n_trunks, n_keys]`` clipped into range, valid ``[n_trunks, n_keys]`` bool,
        n_trunks, q_pad).
    """
    if n_keys < n_queries or n_queries % 2 or n_keys % 2:
        raise ValueError(
            f"local attention: need even n_keys >= n_queries, got n_queries={n_queries}, "
            f"n_keys={n_keys}"
        )
    n_trunks = -(-n // n_queries)
    pad_left = (n_keys - n_queries) // 2
    idx = np.arange(n_trunks)[:, None] * n_queries - pad_left + np.arange(n_keys)[None, :]
    valid = (idx >= 0) & (idx < n)
    return np.clip(idx, 0, n - 1), valid, n_trunks, n_trunks * n_queries - n


def rearrange_qk_to_dense_trunk(q, k, dim_q, dim_k, n_queries=32, n_keys=128, compute_mask=True):
    """Query blocks and key windows (Protenix's dense trunks) of a tensor or a list of tensors.

    Args:
        q: tensor (or list of tensors) with the sequence axis ``n`` at ``dim_q`` (a list of
            axes for a list).
        k: likewise with ``dim_k``.
        n_queries, n_keys: block and window sizes (even, ``n_keys >= n_queries``).
        compute_mask: also return ``mask_trunked``.

    Returns:
        (q_trunked: ``[..., n_trunks, n_queries, ...]`` (zero-padded), k_trunked:
        ``[..., n_trunks, n_keys, ...]`` (zero outside the sequence), each a tensor or a list
        as given; padding_info: ``mask_trunked`` ``[n_trunks, n_queries, n_keys]`` bool (True
        for a real query-key pair; None without ``compute_mask``), ``q_pad``, ``k_pad_left``,
        ``k_pad_right``).
    """
    q_list, k_list = isinstance(q, (list, tuple)), isinstance(k, (list, tuple))
    qs, ks = (list(q) if q_list else [q]), (list(k) if k_list else [k])
    dqs = list(dim_q) if q_list else [dim_q]
    dks = list(dim_k) if k_list else [dim_k]
    n = qs[0].shape[dqs[0]]
    for x, d in [*zip(qs, dqs, strict=True), *zip(ks, dks, strict=True)]:
        if x.shape[d] != n:
            raise ValueError(
                f"rearrange_qk_to_dense_trunk: axis {d} of shape {tuple(x.shape)} is not n={n}"
            )
    idx, valid, n_trunks, q_pad = _key_windows(n, n_queries, n_keys)
    q_out = []
    for x, d in zip(qs, dqs, strict=True):
        d = d % x.ndim
        if q_pad:
            widths = [(0, 0)] * x.ndim
            widths[d] = (0, q_pad)
            x = ops.pad(x, widths)
        q_out.append(x.reshape(*x.shape[:d], n_trunks, n_queries, *x.shape[d + 1 :]))
    k_out = []
    for x, d in zip(ks, dks, strict=True):
        d = d % x.ndim
        w = ops.take(x, core.tensor(idx.reshape(-1)), axis=d)
        w = w.reshape(*x.shape[:d], n_trunks, n_keys, *x.shape[d + 1 :])
        vshape = [1] * w.ndim
        vshape[d], vshape[d + 1] = n_trunks, n_keys
        k_out.append(ops.where(core.tensor(valid.reshape(vshape)), w, ops.zeros_like(w)))
    pad_left = (n_keys - n_queries) // 2
    info = {
        "mask_trunked": None,
        "q_pad": q_pad,
        "k_pad_left": pad_left,
        "k_pad_right": int((n_trunks - 0.5) * n_queries + n_keys / 2 - n + 0.5),
    }
    if compute_mask:
        qvalid = (np.arange(n_trunks * n_queries) < n).reshape(n_trunks, n_queries)
        info["mask_trunked"] = core.tensor(qvalid[:, :, None] & valid[:, None, :])
    return (q_out if q_list else q_out[0]), (k_out if k_list else k_out[0]), info


def gather_pair_embedding_in_dense_trunk(x, idx_q, idx_k):
    """``y[..., b, i, j, :] = x[..., idx_q[b, i], idx_k[b, j], :]``.

    Args:
        x: ``[..., N, N, d]``.
        idx_q: ``[N_b, N_q]`` ints; idx_k: ``[N_b, N_k]`` ints.

    Returns:
        ``[..., N_b, N_q, N_k, d]``.
    """
    iq = np.asarray(idx_q.asnumpy() if isinstance(idx_q, core.Tensor) else idx_q, np.int64)
    ik = np.asarray(idx_k.asnumpy() if isinstance(idx_k, core.Tensor) else idx_k, np.int64)
    n, nb, nq, nk = x.shape[-2], iq.shape[0], iq.shape[1], ik.shape[1]
    flat = (iq[:, :, None] * n + ik[:, None, :]).reshape(-1)  # [N_b * N_q * N_k]
    xf = x.reshape(*x.shape[:-3], n * n, x.shape[-1])
    y = ops.take(xf, core.tensor(flat), axis=xf.ndim - 2)
    return y.reshape(*x.shape[:-3], nb, nq, nk, x.shape[-1])


def broadcast_token_to_local_atom_pair(
    z_token, atom_to_token_idx, n_queries, n_keys, compute_mask=True
):
    """Token-pair embedding gathered onto the local atom pairs of the dense trunks.

    Args:
        z_token: ``[..., N_token, N_token, d]``.
        atom_to_token_idx: ``[N_atom]`` ints.

    Returns:
        (``[..., n_trunks, n_queries, n_keys, d]``, padding_info as
        ``rearrange_qk_to_dense_trunk``).
    """
    idx = atom_to_token_idx
    idx = np.asarray(idx.asnumpy() if isinstance(idx, core.Tensor) else idx, np.int64)
    iq, ik, info = rearrange_qk_to_dense_trunk(
        core.tensor(idx), core.tensor(idx), -1, -1, n_queries, n_keys, compute_mask
    )
    return gather_pair_embedding_in_dense_trunk(z_token, iq, ik), info


class Attention(nn.Cell):
    """Gated multi-head attention with pair bias (AF3 Algorithm 24 lines 6-11), optionally
    local: query blocks of ``n_queries`` attend to ``n_keys``-wide key windows.

    Args:
        c_q, c_k, c_v: input channels of query and key/value data.
        c_hidden: channels per head.
        num_heads: heads.
        gating: gate the output with ``sigmoid(linear_g(q_x))``.
        q_linear_bias: ``linear_q`` has a bias (AF3) or not.
        local_attention_method: "global_attention_with_bias" (full attention plus the
            window bias) or "local_cross_attention" (dense blocks; needed for
            ``trunked_attn_bias``). Both give the same numbers.
        use_efficient_implementation: accepted for Protenix's signature (one kernel here).
        zero_init: zero ``linear_o.weight``.
    """

    def __init__(
        self,
        c_q,
        c_k,
        c_v,
        c_hidden,
        num_heads,
        gating=True,
        q_linear_bias=True,
        local_attention_method="global_attention_with_bias",
        use_efficient_implementation=True,
        zero_init=True,
    ):
        super().__init__()
        self.c_q, self.c_k, self.c_v = c_q, c_k, c_v
        self.c_hidden, self.num_heads, self.gating = c_hidden, num_heads, gating
        self.local_attention_method = local_attention_method
        self.use_efficient_implementation = use_efficient_implementation
        hc = c_hidden * num_heads
        self.linear_q = Linear(c_q, hc) if q_linear_bias else LinearNoBias(c_q, hc)
        self.linear_k = LinearNoBias(c_k, hc)
        self.linear_v = LinearNoBias(c_v, hc)
        self.linear_o = LinearNoBias(hc, c_q, initializer="zeros" if zero_init else "default")
        self.linear_g = LinearNoBias(c_q, hc, initializer="zeros") if gating else None
        self.zero_init = zero_init

    def _heads(self, x):
        return x.reshape(*x.shape[:-1], self.num_heads, self.c_hidden)  # [..., N, H, C]

    def construct(
        self,
        q_x,
        kv_x,
        attn_bias=None,
        trunked_attn_bias=None,
        n_queries=None,
        n_keys=None,
        inf=1e10,
        inplace_safe=False,
        chunk_size=None,
    ):
        """
        Args:
            q_x: ``[..., Q, c_q]``; kv_x: ``[..., K, c_k]``.
            attn_bias: ``[..., H, Q, K]`` or ``[..., Q, K]``.
            trunked_attn_bias: ``[..., (H,) n_trunks, n_queries, n_keys]`` (local attention).
            n_queries, n_keys: local window sizes (both or neither).
            inf: the masking value of local attention.
            inplace_safe: accepted for Protenix's signature.
            chunk_size: query rows per block of the attention kernel.

        Returns:
            ``[..., Q, c_q]``.
        """
        q = self._heads(self.linear_q(q_x))  # [..., Q, H, C]
        k = self._heads(self.linear_k(kv_x))  # [..., K, H, C]
        v = self._heads(self.linear_v(kv_x))  # [..., K, H, C]
        gate = self._heads(self.linear_g(q_x)) if self.linear_g is not None else None
        if attn_bias is not None and attn_bias.ndim == q.ndim - 1:
            attn_bias = ops.expand_dims(attn_bias, -3)  # [..., 1, Q, K]
        if n_queries and n_keys:
            if self.local_attention_method == "global_attention_with_bias":
                if trunked_attn_bias is not None:
                    raise ValueError(
                        "Attention: trunked_attn_bias needs local_attention_method="
                        "'local_cross_attention'"
                    )
                local = create_local_attn_bias(q.shape[-3], n_queries, n_keys, inf)
                biases = [local] if attn_bias is None else [local, attn_bias]
                o = ops.evoformer_attention(q, k, v, biases, None, gate, chunk_size)
            elif self.local_attention_method == "local_cross_attention":
                o = _local_attention(
                    q, k, v, n_queries, n_keys, attn_bias, trunked_attn_bias, inf, gate
                )
            else:
                raise ValueError(
                    f"Attention: invalid local_attention_method {self.local_attention_method!r}"
                )
        else:
            biases = None if attn_bias is None else [attn_bias]
            o = ops.evoformer_attention(q, k, v, biases, None, gate, chunk_size)  # [..., Q, H, C]
        o = o.reshape(*o.shape[:-2], self.num_heads * self.c_hidden)  # [..., Q, H * C]
        return self.linear_o(o)  # [..., Q, c_q]


def _local_attention(q, k, v, n_queries, n_keys, attn_bias, trunked_attn_bias, inf, gate):
    """Blocked local attention. q, k, v, gate ``[..., N, H, C]``; attn_bias
    ``[..., H|1, N, N]``; trunked_attn_bias ``[..., H|1, n_trunks, n_queries, n_keys]``.
    Returns ``[..., N, H, C]``."""
    n = q.shape[-3]
    idx, valid, n_trunks, q_pad = _key_windows(n, n_queries, n_keys)
    lead = q.shape[:-3]
    h, c = q.shape[-2], q.shape[-1]

    def blocks(x):  # [..., N, H, C] -> [..., n_trunks, n_queries, H, C]
        if q_pad:
            x = ops.pad(x, [(0, 0)] * (x.ndim - 3) + [(0, q_pad), (0, 0), (0, 0)])
        return x.reshape(*x.shape[:-3], n_trunks, n_queries, h, x.shape[-1])

    def windows(x):  # [..., N, H, C] -> [..., n_trunks, n_keys, H, C]
        w = ops.take(x, core.tensor(idx.reshape(-1)), axis=x.ndim - 3)
        return w.reshape(*x.shape[:-3], n_trunks, n_keys, h, x.shape[-1])

    # [n_trunks, n_queries, n_keys]: 0 for keys in the sequence, -inf for the padding
    bias = core.tensor(np.where(valid, 0.0, -inf).astype(np.float32)[:, None, :])
    bias = ops.expand_dims(ops.broadcast_to(bias, (n_trunks, n_queries, n_keys)), -4)
    biases = [bias]  # [1, n_trunks, n_queries, n_keys] (heads broadcast)
    if attn_bias is not None:
        # [..., H, N, N] -> [..., H, n_trunks, n_queries, n_keys]
        ab = attn_bias
        if q_pad:
            ab = ops.pad(ab, [(0, 0)] * (ab.ndim - 2) + [(0, q_pad), (0, 0)])
        flat = (
            np.arange(n_trunks * n_queries).reshape(n_trunks, n_queries, 1) * n + idx[:, None, :]
        )  # [n_trunks, n_queries, n_keys] into [N_q_pad * N]
        ab = ops.take(ab.reshape(*ab.shape[:-2], -1), core.tensor(flat.reshape(-1)), axis=-1)
        ab = ab.reshape(*ab.shape[:-1], n_trunks, n_queries, n_keys)
        biases.append(ab)
    if trunked_attn_bias is not None:
        if trunked_attn_bias.ndim == q.ndim:  # no head axis: [..., n_trunks, n_q, n_k]
            trunked_attn_bias = ops.expand_dims(trunked_attn_bias, -4)
        biases.append(trunked_attn_bias)
    # heads next to the blocks: [..., n_trunks, n_q, H, C] keeps the kernel's layout with
    # the trunk axis as a batch axis, and biases [..., H, n_trunks, ...] are moved to match
    biases = [ops.moveaxis(b, -4, -3) if b.ndim >= 4 else b for b in biases]
    qb, kb, vb = blocks(q), windows(k), windows(v)
    gb = blocks(gate) if gate is not None else None
    o = ops.evoformer_attention(qb, kb, vb, biases, None, gb)  # [..., n_trunks, n_q, H, C]
    o = o.reshape(*lead, n_trunks * n_queries, h, c)
    return o[..., :n, :, :] if q_pad else o


class DropPath(nn.Cell):
    """Stochastic depth: drop whole samples (axis 0) of a residual branch in training."""

    def __init__(self, drop_prob=0.0, scale_by_keep=True):
        super().__init__()
        self.drop_prob, self.scale_by_keep = float(drop_prob), scale_by_keep

    def construct(self, x):
        if self.drop_prob == 0.0 or not self.training:
            return x
        keep = 1.0 - self.drop_prob
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        mask = ops.dropout(ops.ones(shape, dtype=x.dtype), self.drop_prob, True)
        return x * (mask if self.scale_by_keep else mask * keep)
