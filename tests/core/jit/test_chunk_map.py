"""``core.chunk_map``: block-wise evaluation along one axis. Same values as the unchunked
function, differentiable, chunks visible in the jit IR, and the peak memory of a large
intermediate cut by the chunk ratio (measured with tracemalloc)."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops
from diffsci.core.testing import gradcheck

from ._helpers import assert_tree_close, peak_bytes

N, M, DIM, CHUNK = 256, 256, 32, 32  # pairwise intermediate [N, M, DIM]: 16 MiB in float64


def pairwise_sq_dist(x, y):
    """[N, DIM], [M, DIM] -> [N, M]: the [N, M, DIM] difference is the large intermediate."""
    return ops.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)


def data(n=N, m=M, dim=DIM, seed=0):
    rng = np.random.default_rng(seed)
    return core.tensor(rng.standard_normal((n, dim))), core.tensor(rng.standard_normal((m, dim)))


def test_chunk_map_values_equal_unchunked():
    x, y = data(10, 7, 3)
    expected = pairwise_sq_dist(x, y)
    for c in (1, 3, 4, 10, 64):  # 10 % 3 != 0: a shorter last chunk
        assert_tree_close(
            core.chunk_map(pairwise_sq_dist, c, in_axes=(0, None))(x, y), expected, rtol=0, atol=0
        )
    np.testing.assert_allclose(
        expected.asnumpy(), ((x.asnumpy()[:, None] - y.asnumpy()[None]) ** 2).sum(-1), rtol=1e-12
    )


def intermediate_bytes(rows):
    return rows * M * DIM * 8


@pytest.mark.parametrize("use_jit", [False, True])
def test_chunk_map_cuts_the_peak_by_the_chunk_ratio(use_jit):
    x, y = data()
    plain = pairwise_sq_dist
    chunked = core.chunk_map(pairwise_sq_dist, CHUNK, in_axes=(0, None))
    if use_jit:
        plain, chunked = core.jit(plain), core.jit(chunked)
        plain(x, y), chunked(x, y)  # compile outside the measurement
    base, expected = peak_bytes(lambda: plain(x, y))
    cut, got = peak_bytes(lambda: chunked(x, y))
    assert_tree_close(got, expected, rtol=1e-12, atol=1e-12)
    full, one_chunk, output = intermediate_bytes(N), intermediate_bytes(CHUNK), N * M * 8
    assert base >= full  # the unchunked function materializes the whole [N, M, DIM] array
    # chunked: at most two chunk-sized temporaries (difference, square) at a time, plus the
    # [N, M] result and its pieces before they are joined; CHUNK / N = 1/8 of the intermediate
    bound = 2 * one_chunk + 2 * output + 64 * 1024
    assert cut <= bound, f"chunked peak {cut} B > bound {bound} B (unchunked {base} B)"
    assert cut <= 0.3 * base


def test_chunk_map_is_differentiable():
    x, y = data(9, 5, 3)
    chunked = core.chunk_map(pairwise_sq_dist, 4, in_axes=(0, None))
    loss_plain = lambda x, y: ops.sum(ops.sqrt(pairwise_sq_dist(x, y) + 1.0))  # noqa: E731
    loss_chunk = lambda x, y: ops.sum(ops.sqrt(chunked(x, y) + 1.0))  # noqa: E731
    g = core.grad(loss_plain, grad_position=(0, 1))(x, y)
    assert_tree_close(core.grad(loss_chunk, grad_position=(0, 1))(x, y), g, rtol=1e-12, atol=1e-12)
    assert_tree_close(
        core.jit(core.grad(loss_chunk, grad_position=(0, 1)))(x, y), g, rtol=1e-12, atol=1e-12
    )
    assert gradcheck(loss_chunk, (x[:5], y), order=2)


def test_chunk_map_chunks_are_visible_in_the_ir():
    x, y = data(12, 5, 3)
    chunked = core.jit(core.chunk_map(pairwise_sq_dist, 4, in_axes=(0, None)))
    low = chunked.lower(x, y)
    names = [e.prim.name for e in low.graph.eqns]
    assert names.count("reduce_sum") == 3  # one reduction per chunk of 4 rows
    assert names[-1] == "concatenate"
    per_chunk = [e for e in low.graph.eqns if e.prim.name == "reduce_sum"]
    assert all(e.out.aval.shape == (4, 5) for e in per_chunk)
    assert "float64[4, 5, 3]" in low.as_text()  # the chunk-sized intermediate
    assert "float64[12, 5, 3]" not in low.as_text()  # never the full one


def test_chunk_map_pytrees_axes_and_errors():
    def fn(a, b):
        return {"s": a * 2.0, "t": ops.sum(a * b, axis=0)}

    a, b = data(3, 3, 6, seed=3)  # [3, 6] each, chunked along axis 1
    out = core.chunk_map(fn, 4, in_axes=1, out_axes=(1, 0))(a, b)  # leaves in order "s", "t"
    assert_tree_close(out, fn(a, b))
    with pytest.raises(ValueError, match="chunk_size"):
        core.chunk_map(fn, 0)
    with pytest.raises(ValueError, match="sizes"):
        core.chunk_map(fn, 2)(a, b[:2])
    with pytest.raises(ValueError, match="in_axes"):
        core.chunk_map(fn, 2, in_axes=(0,))(a, b)
    with pytest.raises(ValueError, match="slices no argument"):
        core.chunk_map(fn, 2, in_axes=None)(a, b)
    empty = core.chunk_map(pairwise_sq_dist, 2, in_axes=(0, None))(a[:0], b)
    assert empty.shape == (0, 3)


def test_chunk_map_with_recompute_bounds_the_memory_of_a_gradient():
    x, y = data(128, 128, 16)

    def loss(fn):
        return lambda x: ops.sum(ops.sqrt(fn(x, y) + 1.0))

    plain = core.grad(loss(pairwise_sq_dist))
    chunked = core.grad(
        loss(core.chunk_map(core.recompute(pairwise_sq_dist), 16, in_axes=(0, None)))
    )
    base, g0 = peak_bytes(lambda: plain(x))
    cut, g1 = peak_bytes(lambda: chunked(x))
    assert_tree_close(g1, g0, rtol=1e-12, atol=1e-12)
    assert cut <= 0.3 * base, f"{cut} vs {base}"
