"""OpenFold-style layers of Protenix's trunk: LayerNorm, OpenfoldLinear, gated multi-head
Attention with a list of biases, row/column-shared Dropout.

Parameter names and layouts are Protenix's (``weight`` ``[out, in]``, ``bias``). Initializers
follow the AlphaFold 2 supplement, Section 1.11.4 (LeCun / He truncated normal, zero "final"
and "gating" weights); parity with PyTorch comes from loading its state dict, not from drawing
the same random numbers.
"""

import math

from diffsci import core
from diffsci.core import nn, ops

__all__ = [
    "Attention",
    "Dropout",
    "DropoutColumnwise",
    "DropoutRowwise",
    "LayerNorm",
    "OpenfoldLinear",
    "trunc_normal_init",
]

# standard deviation of N(0, 1) truncated to [-2, 2] (scipy.stats.truncnorm.std(-2, 2))
_TRUNCNORM_STD = 0.87962566103423978


def trunc_normal_init(shape, scale=1.0, fan="fan_in", dtype=core.float32):
    """AlphaFold's truncated-normal initializer (AF2 supplement 1.11.4): N(0, scale / fan)
    truncated at two standard deviations and rescaled so the variance is ``scale / fan``.

    Args:
        shape: ``[out, in]`` of a Linear weight.
        scale: 1.0 (LeCun, "default") or 2.0 (He, "relu").
        fan: "fan_in", "fan_out" or "fan_avg".

    Returns:
        Tensor of ``shape``.
    """
    fan_out, fan_in = shape
    f = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}.get(fan)
    if f is None:
        raise ValueError(f"trunc_normal_init: fan must be fan_in/fan_out/fan_avg, got {fan!r}")
    std = math.sqrt(scale / max(1, f)) / _TRUNCNORM_STD
    init = nn.init.TruncatedNormal(sigma=std, a=-2.0 * std, b=2.0 * std)
    return nn.init.initializer(init, tuple(shape), dtype)


def _param(value, name, requires_grad=True):
    return core.Parameter(value, name=name, requires_grad=requires_grad)


class OpenfoldLinear(nn.Cell):
    """``y = x W^T + b`` with AlphaFold's initializers (Protenix ``OpenfoldLinear``).

    Args:
        in_dim: input features.
        out_dim: output features.
        bias: whether there is a bias (zero-initialised; 1 for ``init="gating"``).
        init: "default" (LeCun truncated normal), "relu" (He), "glorot", "gating" (W = 0,
            b = 1), "normal" (N(0, 1/fan_in)) or "final" (W = 0).
        precision: a dtype to compute in (inputs and weights cast to it, output cast back).

    Shapes:
        x ``[..., in_dim]`` -> ``[..., out_dim]``; ``weight`` ``[out_dim, in_dim]``.
    """

    def __init__(self, in_dim, out_dim, bias=True, init="default", precision=None):
        super().__init__()
        self.in_features, self.out_features = int(in_dim), int(out_dim)
        shape = (self.out_features, self.in_features)
        if init == "default":
            w = trunc_normal_init(shape, 1.0)
        elif init == "relu":
            w = trunc_normal_init(shape, 2.0)
        elif init == "glorot":
            w = nn.init.initializer(nn.init.XavierUniform(), shape, core.float32)
        elif init in ("gating", "final"):
            w = ops.zeros(shape)
        elif init == "normal":
            w = ops.randn(shape) * (1.0 / math.sqrt(max(1, self.in_features)))
        else:
            raise ValueError(f"OpenfoldLinear: invalid init {init!r}")
        self.weight = _param(w, "weight")
        self.bias = None
        if bias:
            fill = 1.0 if init == "gating" else 0.0
            self.bias = _param(ops.full((self.out_features,), fill), "bias")
        self.precision = precision

    def construct(self, x):
        return _linear(x, self.weight, self.bias, self.precision)


def _linear(x, weight, bias, precision):
    """``x W^T + b``; bfloat16/float16 inputs use weights cast to their dtype (as Protenix)."""
    if precision is not None:
        d = x.dtype
        b = None if bias is None else ops.astype(bias, precision)
        y = ops.linear(ops.astype(x, precision), ops.astype(weight, precision), b)
        return ops.astype(y, d)
    if x.dtype != weight.dtype:
        weight = ops.astype(weight, x.dtype)
        bias = None if bias is None else ops.astype(bias, x.dtype)
    return ops.linear(x, weight, bias)


class LayerNorm(nn.Cell):
    """Layer normalization over the last axis (Protenix/OpenFold ``LayerNorm``).

    Args:
        c_in: channels of the last axis.
        create_scale: learn ``weight`` (ones at start); otherwise none.
        create_offset: learn ``bias`` (zeros at start); otherwise none.
        eps: added to the variance (1e-5).

    Shapes:
        ``[..., c_in]`` -> ``[..., c_in]``.
    """

    def __init__(self, c_in, create_scale=True, create_offset=True, eps=1e-5):
        super().__init__()
        self.c_in = int(c_in)
        self.create_scale, self.create_offset, self.eps = create_scale, create_offset, eps
        self.weight = _param(ops.ones((self.c_in,)), "weight") if create_scale else None
        self.bias = _param(ops.zeros((self.c_in,)), "bias") if create_offset else None

    def construct(self, x):
        d = x.dtype
        # bfloat16/float16 inputs are normalized in float32 and cast back (the statistics of
        # c_in values need more than 8 mantissa bits)
        compute = d if d in (core.float32, core.float64) else core.float32
        w, b = self.weight, self.bias
        w = None if w is None else ops.astype(w, compute)
        b = None if b is None else ops.astype(b, compute)
        y = ops.layer_norm(ops.astype(x, compute), self.c_in, w, b, self.eps)
        return ops.astype(y, d)


class Attention(nn.Cell):
    """Gated multi-head attention with any number of additive biases (OpenFold ``Attention``,
    AF2 supplement Algorithm 7/13), computed by ``core.evoformer_attention``.

    Args:
        c_q, c_k, c_v: input channels of the query and key/value data.
        c_hidden: channels per head.
        no_heads: number of heads.
        gating: gate the output with ``sigmoid(linear_g(q_x))``.

    Parameters: ``linear_q/k/v.weight`` ``[no_heads * c_hidden, c_*]``, ``linear_o.weight``
    ``[c_q, no_heads * c_hidden]``, ``linear_g.weight`` (no biases anywhere).
    """

    def __init__(self, c_q, c_k, c_v, c_hidden, no_heads, gating=True):
        super().__init__()
        self.c_q, self.c_k, self.c_v = c_q, c_k, c_v
        self.c_hidden, self.no_heads, self.gating = c_hidden, no_heads, gating
        hc = c_hidden * no_heads
        self.linear_q = OpenfoldLinear(c_q, hc, bias=False)
        self.linear_k = OpenfoldLinear(c_k, hc, bias=False)
        self.linear_v = OpenfoldLinear(c_v, hc, bias=False)
        self.linear_o = OpenfoldLinear(hc, c_q, bias=False, init="final")
        self.linear_g = OpenfoldLinear(c_q, hc, bias=False, init="gating") if gating else None

    def construct(
        self, q_x, kv_x, biases=None, triangle_attention="torch", mask=None, chunk_size=None
    ):
        """
        Args:
            q_x: ``[..., Q, c_q]``.
            kv_x: ``[..., K, c_k]``.
            biases: list of tensors broadcastable to ``[..., H, Q, K]``.
            triangle_attention: accepted for Protenix's signature (one kernel here).
            mask: broadcastable to ``[..., H, Q, K]``, 1 where attended; adds ``1e9 (mask - 1)``
                (Protenix passes this as its first bias).
            chunk_size: query rows per block of the attention kernel (None: automatic).

        Returns:
            ``[..., Q, c_q]``.
        """
        h = self.no_heads
        q = self.linear_q(q_x)  # [..., Q, H * C]
        q = q.reshape(*q.shape[:-1], h, self.c_hidden)  # [..., Q, H, C]
        k = self.linear_k(kv_x)
        k = k.reshape(*k.shape[:-1], h, self.c_hidden)  # [..., K, H, C]
        v = self.linear_v(kv_x)
        v = v.reshape(*v.shape[:-1], h, self.c_hidden)  # [..., K, H, C]
        gate = None
        if self.linear_g is not None:
            gate = self.linear_g(q_x)
            gate = gate.reshape(*gate.shape[:-1], h, self.c_hidden)  # [..., Q, H, C]
        o = ops.evoformer_attention(q, k, v, biases, mask, gate, chunk_size)  # [..., Q, H, C]
        o = o.reshape(*o.shape[:-2], h * self.c_hidden)  # [..., Q, H * C]
        return self.linear_o(o)  # [..., Q, c_q]


class Dropout(nn.Cell):
    """Dropout whose mask is shared along ``batch_dim`` (OpenFold ``Dropout``).

    Args:
        r: drop probability.
        batch_dim: axis (or axes) along which one mask entry is shared.
    """

    def __init__(self, r, batch_dim):
        super().__init__()
        self.r = float(r)
        self.batch_dim = [batch_dim] if isinstance(batch_dim, int) else list(batch_dim)

    def mask(self, shape, dtype):
        """The scaled keep-mask (``0`` or ``1 / (1 - r)``) of ``shape`` with the shared axes 1."""
        shape = list(shape)
        for bd in self.batch_dim:
            shape[bd] = 1
        return ops.dropout(ops.ones(tuple(shape), dtype=dtype), self.r, True)

    def construct(self, x):
        if not self.training or self.r == 0.0:
            return x
        return x * self.mask(x.shape, x.dtype)


class DropoutRowwise(Dropout):
    """Dropout with one mask shared by all rows (axis -3) of ``[..., N_row, N_col, C]``."""

    def __init__(self, r):
        super().__init__(r, -3)


class DropoutColumnwise(Dropout):
    """Dropout with one mask shared by all columns (axis -2) of ``[..., N_row, N_col, C]``."""

    def __init__(self, r):
        super().__init__(r, -2)


def dropout_add_rowwise(z, x, p, training):
    """``z + DropoutRowwise(p)(x)`` (Protenix ``fused_ops.dropout_add_rowwise``)."""
    if not training or p == 0.0:
        return z + x
    shape = list(x.shape)
    shape[-3] = 1
    return z + x * ops.dropout(ops.ones(tuple(shape), dtype=x.dtype), p, True)


def __getattr__(name):
    # Protenix keeps OuterProductMean in this module; ours lives in modules/msa.py (imported
    # on first use: msa.py imports this module)
    if name == "OuterProductMean":
        from ..modules.msa import OuterProductMean

        return OuterProductMean
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
