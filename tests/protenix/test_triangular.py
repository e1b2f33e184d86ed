"""Parity of the triangle updates with PyTorch Protenix 2.0.0 (fixtures/trunk.npz); the
chunked and block-wise inference paths equal the plain path."""

import numpy as np
import pytest

from diffsci import core
from diffsci.protenix.model.triangular.triangular import (
    TriangleAttention,
    TriangleMultiplicationIncoming,
    TriangleMultiplicationOutgoing,
    col_blocks,
    join_blocks,
    row_blocks,
)

from ._trunk_fixture import assert_rel_close, case, load_strict

RTOL = 1e-4
MUL = {"tri_mul_out": TriangleMultiplicationOutgoing, "tri_mul_in": TriangleMultiplicationIncoming}


@pytest.mark.parametrize("name", sorted(MUL))
def test_triangle_multiplication_matches_protenix(name):
    cfg, params, x, want = case(name)
    m = load_strict(MUL[name](**cfg), params)
    y = m(x["z"], mask=x["mask"])
    assert_rel_close(y, want["y"], RTOL, name)
    z0 = x["z"].asnumpy()
    with core.no_grad():
        for rows in (1, 5, 12):
            z = core.tensor(z0.copy())
            got = m(z, mask=x["mask"], inplace_safe=True, _add_with_inplace=True,
                    _inplace_chunk_size=rows)  # fmt: skip
            assert got is z  # Protenix's in-place contract: z itself is updated
            assert_rel_close(got, want["y"] + z0, 1e-5, f"{name} rows={rows}")
            upd = m(x["z"], mask=x["mask"], inplace_safe=True, _inplace_chunk_size=rows)
            assert_rel_close(upd, want["y"], 1e-5, f"{name} update rows={rows}")
            np.testing.assert_array_equal(x["z"].asnumpy(), z0)  # left alone without the add


@pytest.mark.parametrize("name", ["tri_att_start", "tri_att_end"])
def test_triangle_attention_matches_protenix(name):
    cfg, params, x, want = case(name)
    m = load_strict(TriangleAttention(**cfg), params)
    y = m(x["x"], mask=x["mask"])
    assert_rel_close(y, want["y"], RTOL, name)
    np.testing.assert_allclose(
        m(x["x"], mask=x["mask"], chunk_size=5).asnumpy(), y.asnumpy(), rtol=1e-6, atol=1e-6
    )


@pytest.mark.parametrize("name", ["tri_att_start", "tri_att_end"])
def test_triangle_attention_inplace_equals_protenix(name):
    """Block-wise in place: the starting node along rows, the ending node along columns
    (Protenix's own ending-node module is a starting-node one run on the transpose: the
    ``transpose=True`` form of the same call)."""
    cfg, params, x, want = case(name)
    m = load_strict(TriangleAttention(**cfg), params)
    x0 = x["x"].asnumpy()
    with core.no_grad():
        z = core.tensor(x0.copy())
        assert m.update_inplace(z, x["mask"], block_rows=5, chunk_size=3) is z
        assert_rel_close(z, want["y"] + x0, 1e-5, f"{name} in place")
        if name == "tri_att_end":  # the same module run as Protenix's PairformerBlock does
            m_start = load_strict(TriangleAttention(**{**cfg, "starting": True}), params)
            zt = core.tensor(x0.copy())
            m_start.update_inplace(zt, x["mask"], block_rows=4, transpose=True)
            assert_rel_close(zt, want["y"] + x0, 1e-5, f"{name} transpose=True")


def test_row_and_column_blocks_are_views():
    """Blocks of at most chunk_size rows and at most ceil(N / 16) rows; column blocks are
    the transposed frame's rows; writing into either writes z."""
    z = core.tensor(np.arange(40 * 40 * 2, dtype=np.float32).reshape(40, 40, 2))
    assert [b.shape[0] for b in row_blocks(z, 2)] == [2] * 20
    blocks = row_blocks(z, None)
    assert [b.shape[0] for b in blocks] == [3] * 13 + [1]
    cols = col_blocks(z, None)
    assert [b.shape[0] for b in cols] == [3] * 13 + [1]
    np.testing.assert_array_equal(join_blocks(cols).asnumpy(), z.asnumpy().transpose(1, 0, 2))
    want = z.asnumpy().copy()
    want[:, 3:6] += 1.0
    core.ops.assign_add(cols[1], 1.0)
    np.testing.assert_array_equal(z.asnumpy(), want)


def test_triangle_multiplication_gradient_fd_float64():
    """Float64 finite differences of the plain path (the training path)."""
    core.set_seed(1)
    m = TriangleMultiplicationIncoming(c_z=4, c_hidden=3)
    for _, p in m.parameters_and_names():
        p.set_data(core.ops.randn(tuple(p.shape)) * 0.5 + 0.2)
    m.to_float(core.float64)
    z = core.tensor(np.random.default_rng(0).normal(size=(5, 5, 4)))
    mask = core.tensor((np.random.default_rng(1).random((5, 5)) > 0.3).astype(np.float64))

    def f(z):
        return (m(z, mask=mask) ** 2).sum()

    g = core.grad(f)(z).asnumpy()
    rng = np.random.default_rng(2)
    for _ in range(4):
        d = rng.normal(size=z.shape)
        eps = 1e-6
        fd = f(core.tensor(z.asnumpy() + eps * d)) - f(core.tensor(z.asnumpy() - eps * d))
        fd = float(fd.asnumpy()) / (2 * eps)
        assert abs(fd - float((g * d).sum())) <= 1e-6 * max(1.0, abs(fd))
