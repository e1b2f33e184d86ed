"""core.ops.evoformer_attention: values against the naive formula written in numpy, gradients
against the whole-logits composite and float64 finite differences (orders 1 and 2), peak
memory of the row-chunked forward+backward well below the naive one, and errors."""

import gc
import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core.evoformer import naive_attention
from diffsci.core.ops import evoformer_attention
from diffsci.core.testing import gradcheck


def numpy_reference(q, k, v, biases, mask, gate, inf=1e9):
    """softmax(q k^T / sqrt(d) + sum(biases) + inf (mask - 1)) v * sigmoid(gate), in numpy,
    layout [..., N, h, d]."""
    d = q.shape[-1]
    qh, kh, vh = (np.swapaxes(x, -2, -3) for x in (q, k, v))  # [..., h, N, d]
    s = qh @ np.swapaxes(kh, -1, -2) / math.sqrt(d)
    for b in biases:
        s = s + b
    if mask is not None:
        s = s + inf * (mask - 1.0)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=-1, keepdims=True)
    o = np.swapaxes(p @ vh, -2, -3)
    if gate is not None:
        o = o / (1.0 + np.exp(-gate))
    return o


def _case(rng, lead, n_q, n_k, h, d, bias_kinds, with_mask, with_gate, dtype=np.float64):
    q = rng.normal(size=(*lead, n_q, h, d)).astype(dtype)
    k = rng.normal(size=(*lead, n_k, h, d)).astype(dtype)
    v = rng.normal(size=(*lead, n_k, h, d)).astype(dtype)
    biases = []
    for kind in bias_kinds:
        if kind == "full":  # a pair bias [..., h, N_q, N_k]
            shape = (*lead, h, n_q, n_k)
        elif kind == "shared":  # a triangle bias shared by the leading axes [1, h, N_q, N_k]
            shape = (h, n_q, n_k)
        else:  # "rowcast": broadcast along the query rows [..., 1, 1, N_k]
            shape = (*lead, 1, 1, n_k)
        biases.append(rng.normal(size=shape).astype(dtype))
    mask = None
    if with_mask:
        mask = (rng.random((*lead, 1, 1, n_k)) > 0.3).astype(dtype)
        mask[..., 0] = 1.0
    gate = rng.normal(size=(*lead, n_q, h, d)).astype(dtype) if with_gate else None
    return q, k, v, biases, mask, gate


def _t(x):
    return None if x is None else core.tensor(x)


@settings(max_examples=25, deadline=None)
@given(
    lead=st.lists(st.integers(1, 3), min_size=0, max_size=2),
    n_q=st.integers(1, 9),
    n_k=st.integers(1, 9),
    h=st.integers(1, 3),
    d=st.integers(1, 5),
    bias_kinds=st.lists(st.sampled_from(["full", "shared", "rowcast"]), max_size=2),
    with_mask=st.booleans(),
    with_gate=st.booleans(),
    chunk=st.one_of(st.none(), st.integers(1, 10)),
    seed=st.integers(0, 2**16),
)
def test_equals_the_naive_formula(
    lead, n_q, n_k, h, d, bias_kinds, with_mask, with_gate, chunk, seed
):
    rng = np.random.default_rng(seed)
    q, k, v, biases, mask, gate = _case(rng, lead, n_q, n_k, h, d, bias_kinds, with_mask, with_gate)
    got = evoformer_attention(
        _t(q), _t(k), _t(v), [_t(b) for b in biases], _t(mask), _t(gate), chunk
    )
    want = numpy_reference(q, k, v, biases, mask, gate)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("chunk", [1, 3, None])
def test_gradients_equal_the_whole_logits_composite(chunk):
    """Gradients w.r.t. q, k, v, gate and every bias (full, shared, row-broadcast) equal
    those of naive_attention (autodiff through the whole-logits softmax)."""
    rng = np.random.default_rng(1)
    q, k, v, biases, mask, gate = _case(
        rng, (2,), 7, 6, 2, 3, ["full", "shared", "rowcast"], True, True
    )
    args = [core.tensor(x) for x in (q, k, v, gate, *biases)]
    m = core.tensor(mask)
    w = core.tensor(rng.normal(size=(2, 7, 2, 3)))

    def f_chunked(q, k, v, g, *bs):
        return (evoformer_attention(q, k, v, list(bs), m, g, chunk) * w).sum()

    def f_naive(q, k, v, g, *bs):
        return (naive_attention(q, k, v, list(bs), m, g) * w).sum()

    pos = tuple(range(len(args)))
    g1 = core.grad(f_chunked, grad_position=pos)(*args)
    g2 = core.grad(f_naive, grad_position=pos)(*args)
    for a, b in zip(g1, g2, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-10, atol=1e-12)


def test_finite_differences_float64_orders_1_and_2():
    rng = np.random.default_rng(2)
    q, k, v, biases, mask, gate = _case(rng, (2,), 4, 3, 2, 2, ["full", "rowcast"], True, True)
    m = core.tensor(mask)

    def fn(q, k, v, g, b0, b1):
        return evoformer_attention(q, k, v, [b0, b1], m, g, chunk_size=3)

    assert gradcheck(fn, [core.tensor(x) for x in (q, k, v, gate, *biases)], order=1)
    # order 2 (the backward is differentiable): a smaller case, chunked by single rows
    q, k, v, biases, _, _ = _case(rng, (), 2, 3, 1, 2, ["full"], False, False)

    def fn2(q, k, v, b0):
        return evoformer_attention(q, k, v, [b0], None, None, chunk_size=1)

    assert gradcheck(fn2, [core.tensor(x) for x in (q, k, v, *biases)], order=2)


def test_float32_and_jit():
    rng = np.random.default_rng(3)
    q, k, v, biases, mask, gate = _case(rng, (3,), 8, 8, 2, 4, ["shared"], True, True,
                                        dtype=np.float32)  # fmt: skip
    f = core.jit(lambda q, k, v, b, m, g: evoformer_attention(q, k, v, [b], m, g, 3))
    got = f(_t(q), _t(k), _t(v), _t(biases[0]), _t(mask), _t(gate))
    assert got.dtype == core.float32
    want = numpy_reference(*(x.astype(np.float64) for x in (q, k, v)), [biases[0]], mask, gate)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)


def _peak(fn):
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return peak, out


def test_chunked_forward_backward_peak_well_below_naive():
    """Triangle-attention shape [I, N, h, d] with N = 96: the naive forward+backward holds
    several [I, h, N, N] logits-sized tensors; the chunked one (16 query rows) a fraction."""
    rng = np.random.default_rng(4)
    i_rows, n, h, d = 8, 96, 2, 8
    q, k, v, _, mask, gate = _case(rng, (i_rows,), n, n, h, d, [], True, True, np.float32)
    tri = core.tensor(rng.normal(size=(1, h, n, n)).astype(np.float32))
    args = [core.tensor(x) for x in (q, k, v, gate)]
    m = core.tensor(mask)
    logits_bytes = i_rows * h * n * n * 4

    def step(attn):
        def loss(q, k, v, g, b):
            return (attn(q, k, v, b, g) ** 2).sum()

        return core.grad(loss, grad_position=(0, 1, 2, 3, 4))(*args, tri)

    naive, g_naive = _peak(lambda: step(lambda q, k, v, b, g: naive_attention(q, k, v, [b], m, g)))
    chunked, g_chunk = _peak(
        lambda: step(lambda q, k, v, b, g: evoformer_attention(q, k, v, [b], m, g, 16))
    )
    for a, b in zip(g_chunk, g_naive, strict=True):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=2e-4, atol=2e-5)
    print(f"evoformer_attention peak: naive {naive / logits_bytes:.2f}, "
          f"chunked {chunked / logits_bytes:.2f} logits tensors")  # fmt: skip
    assert naive >= 3 * logits_bytes
    assert chunked <= naive / 3, (chunked, naive)
    # the forward alone never holds the whole [I, h, N, N] logits (one chunk is 1/6 of them)
    with core.no_grad():
        fwd, _ = _peak(lambda: evoformer_attention(*args[:3], [tri], m, args[3], 16))
    assert fwd < 0.9 * logits_bytes, fwd / logits_bytes


def test_errors_name_the_argument():
    q = core.ops.ones((4, 2, 3))
    with pytest.raises(ValueError, match="k of shape"):
        evoformer_attention(q, core.ops.ones((4, 3, 3)), q)
    with pytest.raises(ValueError, match=r"biases\[0\] of shape"):
        evoformer_attention(q, q, q, [core.ops.ones((3, 4, 4))])
    with pytest.raises(ValueError, match="chunk_size"):
        evoformer_attention(q, q, q, chunk_size=0)


def test_vmap_and_its_gradient():
    rng = np.random.default_rng(6)
    q = core.tensor(rng.normal(size=(3, 5, 2, 4)))
    k = core.tensor(rng.normal(size=(5, 2, 4)))
    b = core.tensor(rng.normal(size=(2, 5, 5)))

    def mapped(q):
        return core.vmap(lambda qi: evoformer_attention(qi, k, k, [b], None, None, 2))(q)

    def whole(q):
        kk = core.ops.broadcast_to(k, (3, 5, 2, 4))
        return naive_attention(q, kk, kk, [b])

    np.testing.assert_allclose(mapped(q).asnumpy(), whole(q).asnumpy(), rtol=1e-12, atol=1e-12)
    g1 = core.grad(lambda q: (mapped(q) ** 2).sum())(q)
    g2 = core.grad(lambda q: (whole(q) ** 2).sum())(q)
    np.testing.assert_allclose(g1.asnumpy(), g2.asnumpy(), rtol=1e-10, atol=1e-12)
