"""einsum, tensordot and matmul against numpy, with gradchecks and vmap."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops
from diffsci.core.testing import gradcheck


def _np(t):
    return t.asnumpy()


def T(a):
    return core.Tensor(np.asarray(a))


SIZES = {"a": 2, "b": 3, "c": 4, "d": 2, "e": 3, "i": 2, "j": 3, "k": 4, "l": 2, "m": 3, "n": 2, "o": 3}
SIZES.update({"x": 5, "y": 4})


def _operands(equation, seed=0, ell=(2, 3)):
    """Random float64 operands for ``equation`` (``...`` stands for dims ``ell``; an operand
    whose term starts with '...' and has a '1' marker gets a broadcasting size-1 dim)."""
    rng = np.random.default_rng(seed)
    lhs = equation.split("->")[0]
    out = []
    for term in lhs.split(","):
        shape = []
        if term.startswith("..."):
            shape += list(ell)
            term = term[3:]
        elif "..." in term:
            a, b = term.split("...")
            shape = [SIZES[c] for c in a] + list(ell)
            term = b
        shape += [SIZES[c] for c in term]
        out.append(rng.standard_normal(shape))
    return out


EQUATIONS = [
    "ij,jk->ik",  # matmul
    "ij,jk",  # implicit output
    "bij,bjk->bik",  # batch dims
    "bij,bkj->bik",  # batch with transposed rhs
    "i,j->ij",  # outer product
    "i,i->",  # inner product
    "ij->ji",  # transpose
    "ij->",  # sum all
    "ij->j",  # column sums
    "ijk->kij",  # permutation
    "ij,ij->ij",  # hadamard
    "ij,ij->i",  # row dots
    "ab,bc,cd->ad",  # chain of 3
    "ab,bc,cd,de->ae",  # chain of 4
    "abc,cd,be->ade",  # 3 operands with free dims everywhere
    "ij,kl->ijkl",  # pure outer of matrices
    "ij,k->ijk",
    "bi,bj,bk->bijk",  # batch outer of three
    "ij,jk,i->k",
    "ab,a->b",  # vector-matrix
    "abc,abc->",  # full contraction
    "ai,bi->ab",  # gram matrix
    "aij,bjk->abik",  # batch dims that do not pair
    "ij,j->i",
    "i->i",
    "ij,ik,il->jkl",  # summed index shared by 3
    "...ij,...jk->...ik",  # ellipsis batch
    "...i,...i->...",
    "ij...,jk...->ik...",  # trailing ellipsis
    "i...->...",
    "b...,b->b...",
    "...ij,jk->...ik",
    # a weight mixing a middle axis: the larger operand is not moved (w @ x broadcast)
    "bix,oi->box",
    "oi,bix->box",
    "bjix,oij->box",
    "ijb,oij->bo",
    "bixy,oi->boxy",
    "...ix,oi->...ox",
]


@pytest.mark.parametrize("equation", EQUATIONS)
def test_einsum_against_numpy(equation):
    arrays = _operands(equation)
    out = ops.einsum(equation, *[T(a) for a in arrays])
    ref = np.einsum(equation, *arrays)
    assert out.shape == ref.shape
    assert out.dtype == core.float64
    np.testing.assert_allclose(_np(out), ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "equation", [e for e in EQUATIONS if "..." not in e or e.startswith("...ij,...jk")]
)
def test_einsum_gradcheck(equation):
    arrays = _operands(equation, ell=(2,))
    gradcheck(lambda *xs: ops.einsum(equation, *xs), [T(a) for a in arrays], order=1)


def test_einsum_second_order_and_complex():
    a, b = _operands("ij,jk->ik", seed=2)
    gradcheck(lambda x, y: ops.einsum("ij,jk->ik", x, y) ** 3, [T(a), T(b)], order=2)
    za, zb = a + 1j * a[::-1], b - 2j * b
    out = ops.einsum("ij,jk->ik", T(za), T(zb))
    np.testing.assert_allclose(_np(out), np.einsum("ij,jk->ik", za, zb), rtol=1e-12)
    gradcheck(lambda x, y: ops.einsum("ij,jk->ik", x, y), [T(za), T(zb)], order=1)


def test_einsum_ellipsis_broadcasting():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 1, 2, 3)), rng.standard_normal((4, 3, 2))
    out = ops.einsum("...ij,...jk->...ik", T(a), T(b))
    np.testing.assert_allclose(_np(out), np.einsum("...ij,...jk->...ik", a, b), rtol=1e-12)


@pytest.mark.parametrize(
    ("equation", "shapes"),
    [
        ("ii->i", [(3, 3)]),
        ("ii->", [(3, 3)]),
        ("iij->j", [(2, 2, 3)]),
        ("ij,jj->i", [(2, 3), (3, 3)]),
        ("iji->ij", [(2, 3, 2)]),
        ("ij,ij->ij", [(1, 3), (2, 3)]),
        ("ij,jk->ik", [(2, 1), (3, 4)]),
    ],
)
def test_einsum_diagonals_and_size_one_broadcasting(equation, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    out = ops.einsum(equation, *[T(a) for a in arrays])
    if equation == "ij,jk->ik":  # numpy refuses a size-1 summed index against 3; we broadcast it
        ref = np.einsum("ij,jk->ik", np.broadcast_to(arrays[0], (2, 3)), arrays[1])
    else:
        ref = np.einsum(equation, *arrays)
    np.testing.assert_allclose(_np(out), ref, rtol=1e-12)
    gradcheck(lambda *xs: ops.einsum(equation, *xs), [T(a) for a in arrays], order=1)


def test_einsum_mixed_dtypes_promote():
    out = ops.einsum("i,i->", core.tensor([1, 2, 3]), core.tensor([0.5, 0.5, 0.5]))
    assert out.dtype == core.float32
    assert out.item() == 3.0


def test_einsum_errors():
    with pytest.raises(ValueError, match=r"einsum.*2 operands"):
        ops.einsum("ij,jk->ik", T(np.ones((2, 3))))
    with pytest.raises(ValueError, match=r"einsum.*'j'.*3.*4"):
        ops.einsum("ij,jk->ik", T(np.ones((2, 3))), T(np.ones((4, 2))))
    with pytest.raises(ValueError, match="einsum"):
        ops.einsum("ijk,jk->i", T(np.ones((2, 3))), T(np.ones((3, 2))))


def test_einsum_under_vmap_and_grad():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 2, 3)), rng.standard_normal((3, 2))
    out = core.vmap(lambda x: ops.einsum("ij,jk->ik", x, T(b)))(T(a))
    np.testing.assert_allclose(_np(out), np.einsum("bij,jk->bik", a, b), rtol=1e-12)
    g = core.grad(lambda x: ops.einsum("bij,jk->", x, T(b)))(T(a))
    np.testing.assert_allclose(_np(g), np.broadcast_to(b.sum(1), (4, 2, 3)), rtol=1e-12)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_einsum_random_equations(data):
    letters = "abcde"
    n_ops = data.draw(st.integers(1, 3))
    terms = []
    for _ in range(n_ops):
        k = data.draw(st.integers(0, 3))
        terms.append("".join(data.draw(st.permutations(letters))[:k]))
    used = sorted(set("".join(terms)))
    out = "".join(data.draw(st.permutations(used))[: data.draw(st.integers(0, len(used)))])
    equation = ",".join(terms) + "->" + out
    sizes = {c: 2 + i % 2 for i, c in enumerate(letters)}
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal([sizes[c] for c in t]) for t in terms]
    res = ops.einsum(equation, *[T(a) for a in arrays])
    np.testing.assert_allclose(_np(res), np.einsum(equation, *arrays), rtol=1e-11, atol=1e-12)


# ---- tensordot ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("shape_a", "shape_b", "axes"),
    [
        ((2, 3, 4), (3, 4, 2), 2),
        ((2, 3), (3, 2), 1),
        ((2, 3), (4, 2), 0),
        ((2, 3, 4), (4, 3), ([1, 2], [1, 0])),
        ((2, 3, 4), (2, 4), ([0, -1], [0, 1])),
        ((3,), (3,), ([0], [0])),
    ],
)
def test_tensordot(shape_a, shape_b, axes):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    out = ops.tensordot(T(a), T(b), axes)
    np.testing.assert_allclose(_np(out), np.tensordot(a, b, axes), rtol=1e-12)
    gradcheck(lambda x, y: ops.tensordot(x, y, axes), [T(a), T(b)], order=1)


def test_tensordot_shape_error():
    with pytest.raises(ValueError, match="tensordot"):
        ops.tensordot(T(np.ones((2, 3))), T(np.ones((2, 3))), 1)


# ---- matmul -------------------------------------------------------------------------------------
MATMUL_SHAPES = [
    ((3,), (3,)),
    ((3,), (3, 2)),
    ((2, 3), (3,)),
    ((2, 3), (3, 4)),
    ((4, 2, 3), (3,)),
    ((3,), (4, 3, 2)),
    ((4, 2, 3), (4, 3, 2)),
    ((4, 1, 2, 3), (5, 3, 2)),
    ((2, 3), (5, 3, 2)),
]


@pytest.mark.parametrize(("sa", "sb"), MATMUL_SHAPES, ids=str)
def test_matmul_against_numpy(sa, sb):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    out = ops.matmul(T(a), T(b))
    ref = np.matmul(a, b)
    assert out.shape == ref.shape
    np.testing.assert_allclose(_np(out), ref, rtol=1e-12)
    np.testing.assert_allclose(_np(T(a) @ T(b)), ref, rtol=1e-12)
    gradcheck(ops.matmul, [T(a), T(b)], order=2 if a.size * b.size < 100 else 1)


def test_matmul_dtypes_and_errors():
    assert ops.matmul(core.ones(2, 3), core.ones(3, dtype="float64")).dtype == core.float64
    assert ops.matmul(core.tensor([[1, 2]]), core.tensor([[3], [4]])).item() == 11
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(2, 3\)"):
        ops.matmul(core.ones(2, 3), core.ones(2, 3))
    with pytest.raises(ValueError, match=r"matmul.*\(3,\).*\(2,\)"):
        ops.matmul(core.ones(3), core.ones(2))
    with pytest.raises(ValueError, match="rank >= 1"):
        ops.matmul(core.ones(()), core.ones(2))


@pytest.mark.parametrize(("bx", "by"), [(0, None), (None, 0), (0, 0), (1, 2), (2, None)])
def test_matmul_vmap_variants(bx, by):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    batch = 3
    xa = np.stack([a + k for k in range(batch)], axis=bx) if bx is not None else a
    xb = np.stack([b - k for k in range(batch)], axis=by) if by is not None else b
    out = core.vmap(ops.matmul, in_axes=(bx, by))(T(xa), T(xb))
    expected = np.stack(
        [(a + k if bx is not None else a) @ (b - k if by is not None else b) for k in range(batch)]
    )
    np.testing.assert_allclose(_np(out), expected, rtol=1e-12)


def test_matmul_vmap_of_vectors():
    rng = np.random.default_rng(0)
    v, m = rng.standard_normal((5, 3)), rng.standard_normal((3, 2))
    out = core.vmap(ops.matmul, in_axes=(0, None))(T(v), T(m))
    np.testing.assert_allclose(_np(out), v @ m, rtol=1e-12)
    out = core.vmap(ops.matmul, in_axes=(None, 0))(T(m.T), T(v.T.copy().T))
    np.testing.assert_allclose(_np(out), (m.T @ v.T).T, rtol=1e-12)
    out = core.vmap(ops.matmul)(T(v), T(v))
    np.testing.assert_allclose(_np(out), np.sum(v * v, axis=1), rtol=1e-12)


def test_dot_inner_outer():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    assert ops.dot(T(a), T(b)).item() == pytest.approx(a @ b)
    np.testing.assert_allclose(_np(ops.inner(T(a), T(b))), np.inner(a, b))
    np.testing.assert_allclose(_np(ops.outer(T(a), T(b))), np.outer(a, b))


def test_einsum_weight_on_a_middle_axis_moves_only_the_weight():
    """"bix,oi->box" (a pointwise convolution, channels first) runs as w[o, i] @ x[b, i, x]:
    the graph transposes the small weight, never the activation (no copy in, none out)."""
    x, w = T(np.ones((4, 8, 32))), T(np.ones((6, 8)))
    text = core.jit(lambda x, w: ops.einsum("bix,oi->box", x, w)).lower(x, w).as_text()
    assert "transpose" not in text and "reshape" not in text
    assert text.count("matmul") == 1
