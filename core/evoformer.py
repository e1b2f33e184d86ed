"""``evoformer_attention``: row-chunked multi-head attention with additive biases.

The attention of AlphaFold's Evoformer/Pairformer (MSA row attention, triangle attention,
attention with pair bias), as DeepSpeed4Science's ``DS4Sci_EvoformerAttention`` and
MindSpore 2.8's ``EvoformerAttention`` compute it::

    o[..., i, h, :] = sum_j softmax_j(q_i . k_j * scale + sum_b bias_b[..., h, i, j]
                                      + inf * (mask[..., h, i, j] - 1)) v[..., j, h, :]
    o = o * sigmoid(gate)                                   (when a gate is given)

Memory: the logits ``[..., h, N_q, N_k]`` are never materialised whole. The forward pass runs
over blocks of query rows and keeps one block's logits alive, plus the row-wise log-sum-exp
``[..., h, N_q]``. The backward pass is a ``custom_vjp`` in the style of FlashAttention
(Dao et al. 2022, Algorithm 4 with the log-sum-exp of its Section 3.1): it recomputes each
block's probabilities from ``q``, ``k``, the biases and the stored log-sum-exp, so its peak is
one block of logits too, plus the gradients (a bias's gradient has the bias's own shape). The
backward is written with core ops, so it is itself differentiable (grad of grad).

This is a composite with a custom derivative rule (no new primitive): its speed comes from
BLAS batched matmuls per block, its memory bound from the blocking.
"""

import math

from . import dtypes as _dt
from .autodiff.custom import custom_vjp
from .ops._convert import as_tensor
from .ops.activation import softmax
from .ops.elementwise import astype, exp, sigmoid, stop_gradient
from .ops.linalg import matmul
from .ops.reduction import logsumexp
from .ops.reduction import sum as _sum
from .ops.shape import concat, reshape, slice_axis, sum_to_shape, swapaxes
from .tensor import Tensor

__all__ = ["evoformer_attention"]

# When chunk_size is None: query rows per block such that one block's logits hold about this
# many elements (16 MiB in float32).
AUTO_CHUNK_ELEMENTS = 1 << 22


def _rows_per_chunk(chunk_size, lead, h, n_q, n_k):
    if chunk_size is None:
        per_row = max(1, math.prod(lead) * h * n_k)
        return max(1, min(n_q, AUTO_CHUNK_ELEMENTS // per_row))
    chunk_size = int(chunk_size)
    if chunk_size < 1:
        raise ValueError(f"evoformer_attention: chunk_size must be >= 1, got {chunk_size}")
    return min(chunk_size, n_q)


def _bias_rows(b, r0, r1):
    """Rows r0:r1 of a bias padded to rank ``[..., h, N_q, N_k]`` (a row-broadcast bias as is)."""
    return b if b.shape[-2] == 1 else slice_axis(b, -2, r0, r1)


def _logits(qc, kt, biases, r0, r1):
    """One block's logits ``[..., h, c, N_k]`` (``qc`` already scaled)."""
    s = matmul(qc, kt)  # [..., h, c, N_k]
    for b in biases:
        s = s + _bias_rows(b, r0, r1)
    return s


def _forward(q, k, v, biases, chunk, with_lse):
    """q [..., h, N_q, d] (scaled), k/v [..., h, N_k, d] -> o [..., h, N_q, d_v], and with
    ``with_lse`` the row-wise log-sum-exp [..., h, N_q, 1] of the logits."""
    n_q = q.shape[-2]
    kt = swapaxes(k, -1, -2)  # [..., h, d, N_k]
    outs, lses = [], []
    for r0 in range(0, n_q, chunk):
        r1 = min(r0 + chunk, n_q)
        s = _logits(slice_axis(q, -2, r0, r1), kt, biases, r0, r1)  # [..., h, c, N_k]
        if with_lse:  # for the backward only: o must not depend on whether grads are taken
            lses.append(logsumexp(s, axis=-1, keepdims=True))  # [..., h, c, 1]
        p = softmax(s, axis=-1)  # one fused pass
        del s
        outs.append(matmul(astype(p, v.dtype), v))  # [..., h, c, d_v]
    o = outs[0] if len(outs) == 1 else concat(outs, axis=-2)
    if not with_lse:
        return o
    return o, (lses[0] if len(lses) == 1 else concat(lses, axis=-2))


def _attend(q, k, v, biases, fixed, chunk):
    """``biases`` get cotangents, ``fixed`` (the mask bias) do not."""
    return _forward(q, k, v, biases + fixed, chunk, False)


_attend = custom_vjp(_attend, nondiff_argnums=(5,))


def _attend_fwd(q, k, v, biases, fixed, chunk):
    o, lse = _forward(q, k, v, biases + fixed, chunk, True)
    return o, (q, k, v, biases, fixed, o, lse)


def _attend_bwd(chunk, res, g):
    """FlashAttention's backward, by blocks of query rows (q arrives scaled by s):
    dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(dO * O)), dQ = dS K, dK = dS^T Q,
    dbias = dS summed to the bias's shape."""
    q, k, v, biases, fixed, o, lse = res
    n_q = q.shape[-2]
    kt = swapaxes(k, -1, -2)
    vt = swapaxes(v, -1, -2)
    g = astype(g, o.dtype)
    delta = _sum(g * o, axis=-1, keepdims=True)  # [..., h, N_q, 1]
    dq_parts = []
    dk = dv = None
    db_rows = [[] for _ in biases]  # row blocks of biases that vary along N_q
    db_acc = [None] * len(biases)  # sums for biases broadcast along N_q
    for r0 in range(0, n_q, chunk):
        r1 = min(r0 + chunk, n_q)
        qc = slice_axis(q, -2, r0, r1)
        gc = slice_axis(g, -2, r0, r1)
        p = exp(_logits(qc, kt, biases + fixed, r0, r1) - slice_axis(lse, -2, r0, r1))
        pv = astype(p, v.dtype)
        dv_c = matmul(swapaxes(pv, -1, -2), gc)  # [..., h, N_k, d_v]
        dv = dv_c if dv is None else dv + dv_c
        dp = matmul(gc, vt)  # [..., h, c, N_k]
        ds = p * (astype(dp, p.dtype) - slice_axis(delta, -2, r0, r1))
        del p, pv, dp
        dq_parts.append(matmul(ds, k))  # [..., h, c, d]
        dk_c = matmul(swapaxes(ds, -1, -2), qc)  # [..., h, N_k, d]
        dk = dk_c if dk is None else dk + dk_c
        for i, b in enumerate(biases):
            if b.shape[-2] == 1:
                part = sum_to_shape(ds, b.shape)
                db_acc[i] = part if db_acc[i] is None else db_acc[i] + part
            else:
                db_rows[i].append(sum_to_shape(ds, (*b.shape[:-2], r1 - r0, b.shape[-1])))
    dq = dq_parts[0] if len(dq_parts) == 1 else concat(dq_parts, axis=-2)
    dbs = []
    for i, b in enumerate(biases):
        if b.shape[-2] == 1:
            dbs.append(astype(db_acc[i], b.dtype))
        else:
            rows = db_rows[i]
            dbs.append(astype(rows[0] if len(rows) == 1 else concat(rows, axis=-2), b.dtype))
    return (
        astype(dq, q.dtype),
        astype(dk, k.dtype),
        astype(dv, v.dtype),
        tuple(dbs),
        None,
    )


_attend.defvjp(_attend_fwd, _attend_bwd)


def _check(name, x, shape):
    if tuple(x.shape) != tuple(shape):
        raise ValueError(
            f"evoformer_attention: {name} of shape {tuple(x.shape)} should be {tuple(shape)}"
        )


def _pad_bias(b, name, target):
    """``b`` reshaped to the rank of ``target`` (leading 1s), checked to broadcast to it."""
    if b.ndim > len(target):
        raise ValueError(
            f"evoformer_attention: {name} of shape {tuple(b.shape)} has more axes than the "
            f"logits {tuple(target)}"
        )
    shape = (1,) * (len(target) - b.ndim) + tuple(b.shape)
    for s, t in zip(shape, target, strict=True):
        if s not in (1, t):
            raise ValueError(
                f"evoformer_attention: {name} of shape {tuple(b.shape)} does not broadcast to "
                f"the logits [..., h, N_q, N_k] = {tuple(target)}"
            )
    return reshape(b, shape) if shape != tuple(b.shape) else b


def evoformer_attention(
    q, k, v, biases=None, mask=None, gate=None, chunk_size=None, *, scale=None, inf=1e9
):
    """Multi-head attention with additive biases, a key mask and an output gate, computed by
    blocks of query rows with a memory-light backward (see the module docstring).

    Layout: DeepSpeed4Science's and Protenix's ``[..., N, h, d]`` (sequence, then heads), so
    the projections ``[..., N, h * d]`` are reshaped without a transpose.

    Args:
        q: queries ``[..., N_q, h, d]``.
        k: keys ``[..., N_k, h, d]`` (same leading axes ``...`` as ``q``).
        v: values ``[..., N_k, h, d_v]``.
        biases: a tensor or a sequence of tensors, each broadcastable to the logits
            ``[..., h, N_q, N_k]`` (a pair bias ``[..., h, N_q, N_k]``, a triangle bias
            ``[1, h, N_q, N_k]`` shared by the leading rows, ...). Differentiable.
        mask: broadcastable to ``[..., h, N_q, N_k]``; 1/True where a key may be attended.
            Adds ``inf * (mask - 1)`` to the logits (Protenix's mask bias; a fully masked row
            then attends uniformly, as there). Not differentiated.
        gate: pre-activation gate ``[..., N_q, h, d_v]``; the output is multiplied by
            ``sigmoid(gate)``. None: no gate.
        chunk_size: query rows per block; None picks the largest block whose logits hold about
            ``AUTO_CHUNK_ELEMENTS`` elements.
        scale: logit scale; default ``1 / sqrt(d)``.
        inf: the mask's large value (Protenix: 1e9 for triangle attention).

    Returns:
        ``[..., N_q, h, d_v]``. Logits and softmax are computed in float32 when the inputs are
        float16/bfloat16 (as Protenix does); the output has ``v``'s dtype.
    """
    q, k, v = as_tensor(q), as_tensor(k), as_tensor(v)
    if q.ndim < 3:
        raise ValueError(f"evoformer_attention: q of shape {tuple(q.shape)} is not [..., N, h, d]")
    *lead, n_q, h, d = q.shape
    n_k = k.shape[-3] if k.ndim >= 3 else -1
    _check("k", k, (*lead, n_k, h, d))
    _check("v", v, (*lead, n_k, h, v.shape[-1]))
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    target = (*lead, h, n_q, n_k)
    if biases is None:
        biases = ()
    elif isinstance(biases, Tensor):
        biases = (biases,)
    compute = q.dtype if q.dtype in (_dt.float32, _dt.float64) else _dt.float32
    bs = [astype(_pad_bias(as_tensor(b), f"biases[{i}]", target), compute)
          for i, b in enumerate(biases)]  # fmt: skip
    fixed = ()
    if mask is not None:
        mask = _pad_bias(as_tensor(mask), "mask", target)
        fixed = (stop_gradient((astype(mask, compute) - 1.0) * inf),)  # data: no cotangent
    qh = astype(swapaxes(q, -2, -3), compute) * scale  # [..., h, N_q, d], scaled once
    kh = astype(swapaxes(k, -2, -3), compute)  # [..., h, N_k, d]
    vh = swapaxes(v, -2, -3)  # [..., h, N_k, d_v]
    chunk = _rows_per_chunk(chunk_size, lead, h, n_q, n_k)
    o = _attend(qh, kh, vh, tuple(bs), fixed, chunk)  # [..., h, N_q, d_v]
    o = swapaxes(o, -2, -3)  # [..., N_q, h, d_v]
    if gate is not None:
        gate = as_tensor(gate)
        _check("gate", gate, o.shape)
        o = o * sigmoid(gate)
    return o


def naive_attention(q, k, v, biases=None, mask=None, gate=None, *, scale=None, inf=1e9):
    """The same formula with the whole logits tensor: the reference of the tests."""
    from .ops.activation import softmax

    q, k, v = as_tensor(q), as_tensor(k), as_tensor(v)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    s = matmul(swapaxes(q, -2, -3), swapaxes(swapaxes(k, -2, -3), -1, -2)) * scale
    if isinstance(biases, Tensor):
        biases = (biases,)
    for b in biases or ():
        s = s + b
    if mask is not None:
        s = s + (astype(as_tensor(mask), s.dtype) - 1.0) * inf
    o = swapaxes(matmul(softmax(s, axis=-1), swapaxes(v, -2, -3)), -2, -3)
    return o if gate is None else o * sigmoid(gate)
