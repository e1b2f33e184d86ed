"""The Tensor API: construction, dtypes and promotion, operators, indexing, in-place updates
inside differentiated functions, and core.random."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops
from diffsci.core.testing import gradcheck

from ._helpers import ALL_DTYPES


def _np(t):
    return t.asnumpy()


# ---- construction and default dtypes ------------------------------------------------------------
@pytest.mark.parametrize(
    ("data", "dtype"),
    [
        (1.5, core.float32),
        ([1.0, 2.0], core.float32),
        ([[1, 2], [3, 4]], core.int64),
        (3, core.int64),
        (True, core.bool_),
        ([True, False], core.bool_),
        (1 + 2j, core.complex64),
        (np.array([1.0, 2.0]), core.float64),
        (np.array([1, 2], dtype=np.int32), core.int32),
        (np.float32(2.0), core.float32),
    ],
)
def test_default_dtypes(data, dtype):
    for make in (core.tensor, core.Tensor):
        t = make(data)
        assert t.dtype == dtype
        np.testing.assert_array_equal(_np(t), np.asarray(data).astype(dtype))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_dtype_constructs_and_round_trips(dtype):
    t = core.tensor([0, 1, 1], dtype=dtype)
    dt = core.dtypes.canonical(dtype)
    assert t.dtype == dt
    assert _np(t).dtype == dt
    np.testing.assert_array_equal(
        _np(t).astype(np.float64) if dtype not in ("complex64", "complex128") else _np(t).real,
        [0, 1, 1],
    )
    assert getattr(core, dtype if dtype != "bool" else "bool_") == dt
    assert core.zeros(2, dtype=dtype).dtype == dt
    assert core.Tensor(t).dtype == dt


def test_bfloat16_is_ml_dtypes():
    assert core.bfloat16 == np.dtype(ml_dtypes.bfloat16)
    t = core.tensor([1.0, 2.0], dtype=core.bfloat16)
    assert (t * 2.0).dtype == core.bfloat16
    assert (t + t).dtype == core.bfloat16


def test_tensor_from_tensor_and_dtype_conversion():
    a = core.tensor([1.0, 2.0])
    b = core.Tensor(a)
    assert b.dtype == core.float32
    np.testing.assert_array_equal(_np(b), [1.0, 2.0])
    c = core.Tensor(np.array([1.7, -2.2]), dtype="int32")
    assert c.dtype == core.int32
    assert core.tensor([1, 2], dtype=float).dtype == core.float32
    assert core.tensor([1.0], dtype=int).dtype == core.int64
    assert core.tensor([1], dtype=bool).dtype == core.bool_


def test_creation_functions():
    assert core.zeros(2, 3).shape == (2, 3) and core.zeros((2, 3)).dtype == core.float32
    assert core.ones((2,), dtype="float64").dtype == core.float64
    np.testing.assert_array_equal(_np(core.ones(2, 2)), np.ones((2, 2)))
    f = core.full((2, 2), 7)
    assert f.dtype == core.int64 and _np(f).tolist() == [[7, 7], [7, 7]]
    assert core.full((2,), 1.5).dtype == core.float32
    assert core.full((2,), True).dtype == core.bool_
    assert core.full((2,), 1.5, dtype="float64").dtype == core.float64
    a = core.arange(5)
    assert a.dtype == core.int64 and _np(a).tolist() == [0, 1, 2, 3, 4]
    assert core.arange(1, 2, 0.25).dtype == core.float32
    np.testing.assert_allclose(_np(core.arange(1, 2, 0.25)), [1.0, 1.25, 1.5, 1.75])
    assert core.arange(2, 8, 3).tolist() == [2, 5]
    lin = core.linspace(0, 1, 5)
    assert lin.dtype == core.float32
    np.testing.assert_allclose(_np(lin), np.linspace(0, 1, 5), rtol=1e-7)
    np.testing.assert_allclose(
        _np(core.linspace(0, 1, 4, endpoint=False, dtype="float64")), [0, 0.25, 0.5, 0.75]
    )
    np.testing.assert_array_equal(_np(core.eye(3)), np.eye(3))
    np.testing.assert_array_equal(_np(core.eye(2, 3, k=1)), np.eye(2, 3, k=1))
    x = core.tensor([[1, 2]], dtype="int32")
    for fn, fill in ((core.zeros_like, 0), (core.ones_like, 1)):
        y = fn(x)
        assert y.dtype == core.int32 and y.shape == (1, 2) and np.all(_np(y) == fill)
    y = core.full_like(x, 2.5, dtype="float64")
    assert y.dtype == core.float64 and np.all(_np(y) == 2.5)
    assert core.zeros_like(x, dtype="float16").dtype == core.float16


def test_metadata():
    x = core.tensor(np.arange(6.0).reshape(2, 3))
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and len(x) == 2
    assert x.dtype == core.float64
    assert isinstance(x.asnumpy(), np.ndarray) and isinstance(x.numpy(), np.ndarray)
    np.testing.assert_array_equal(_np(x.T), np.arange(6.0).reshape(2, 3).T)
    np.testing.assert_array_equal(_np(core.ones(2, 3, 4).mT), np.ones((2, 4, 3)))
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert core.tensor(2.5).item() == 2.5
    assert float(core.tensor([2.5])) == 2.5 and int(core.tensor(3)) == 3
    assert "dtype=float64" in repr(x)
    assert [r.tolist() for r in x] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert x.device == "CPU"
    assert np.asarray(x).shape == (2, 3)
    with pytest.raises(TypeError, match="0-d"):
        len(core.tensor(1.0))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(core.tensor([1.0, 2.0]))
    assert bool(core.tensor([1.0]))
    assert list(range(10))[core.tensor(3)] == 3
    with pytest.raises(TypeError, match="integer"):
        list(range(10))[core.tensor(3.0)]


def test_methods_forward_to_ops():
    x = core.tensor(np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(_np(x.sum(1)), [3.0, 12.0])
    np.testing.assert_allclose(_np(x.mean()), 2.5)
    np.testing.assert_allclose(_np(x.reshape(3, 2)), np.arange(6.0).reshape(3, 2))
    np.testing.assert_allclose(_np(x.exp()), np.exp(np.arange(6.0).reshape(2, 3)))
    assert x.astype("int32").dtype == core.int32
    assert x.max().item() == 5.0 and x.argmax().item() == 5


# ---- operators ----------------------------------------------------------------------------------
A = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]])
Bv = np.array([2.0, -0.5, 1.25])


@pytest.mark.parametrize(
    ("fn", "ref"),
    [
        (lambda a, b: a + b, lambda a, b: a + b),
        (lambda a, b: a - b, lambda a, b: a - b),
        (lambda a, b: a * b, lambda a, b: a * b),
        (lambda a, b: a / b, lambda a, b: a / b),
        (lambda a, b: a // b, lambda a, b: a // b),
        (lambda a, b: a % b, lambda a, b: a % b),
        (lambda a, b: abs(a) ** b, lambda a, b: abs(a) ** b),
        (lambda a, b: a @ b, lambda a, b: a @ b),
        (lambda a, b: a == b, lambda a, b: a == b),
        (lambda a, b: a != b, lambda a, b: a != b),
        (lambda a, b: a < b, lambda a, b: a < b),
        (lambda a, b: a <= b, lambda a, b: a <= b),
        (lambda a, b: a > b, lambda a, b: a > b),
        (lambda a, b: a >= b, lambda a, b: a >= b),
    ],
)
def test_binary_operators(fn, ref):
    a, b = core.Tensor(A), core.Tensor(Bv)
    np.testing.assert_allclose(_np(fn(a, b)), ref(A, Bv), rtol=1e-14)
    if fn(a, b).ndim == 2:  # reflected forms with Python scalars
        np.testing.assert_allclose(_np(fn(2.0, a)), ref(2.0, A), rtol=1e-14)
        np.testing.assert_allclose(_np(fn(a, 3)), ref(A, 3), rtol=1e-14)


def test_unary_operators():
    a = core.Tensor(A)
    np.testing.assert_array_equal(_np(-a), -A)
    np.testing.assert_array_equal(_np(+a), A)
    np.testing.assert_array_equal(_np(abs(a)), np.abs(A))
    b = core.tensor([True, False])
    np.testing.assert_array_equal(_np(~b), [False, True])
    i = core.tensor([5, -2])
    np.testing.assert_array_equal(_np(~i), ~np.array([5, -2]))


def test_logical_operators():
    p, q = core.tensor([True, True, False]), core.tensor([True, False, False])
    np.testing.assert_array_equal(_np(p & q), [True, False, False])
    np.testing.assert_array_equal(_np(p | q), [True, True, False])
    np.testing.assert_array_equal(_np(p ^ q), [False, True, False])
    i, j = core.tensor([12, 5]), core.tensor([10, 3])
    np.testing.assert_array_equal(_np(i & j), [8, 1])
    np.testing.assert_array_equal(_np(i | j), [14, 7])
    np.testing.assert_array_equal(_np(i ^ j), [6, 6])
    np.testing.assert_array_equal(_np(p & True), [True, True, False])


def test_numpy_array_on_the_left_defers_to_tensor():
    t = core.Tensor(A)
    out = A + t
    assert isinstance(out, core.Tensor)
    np.testing.assert_array_equal(_np(out), 2 * A)
    assert isinstance(A < t, core.Tensor)


# ---- weak scalars and promotion -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("dtype", "scalar", "expected"),
    [
        ("float32", 2.0, "float32"),
        ("float32", 2, "float32"),
        ("float64", 2.0, "float64"),
        ("float16", 2.0, "float16"),
        ("bfloat16", 2.0, "bfloat16"),
        ("int32", 2.5, "float32"),
        ("int64", 2.5, "float32"),
        ("int32", 2, "int32"),
        ("bool", 1, "int64"),
        ("complex64", 2.0, "complex64"),
        ("float32", 1j, "complex64"),
        ("float64", 1j, "complex128"),
        ("float16", 2, "float16"),
    ],
)
def test_weak_scalars(dtype, scalar, expected):
    x = core.tensor([1, 2], dtype=dtype)
    for out in (x * scalar, scalar * x, x + scalar, scalar - x):
        assert out.dtype == core.dtypes.canonical(expected), (
            f"{dtype} with {scalar!r} gave {out.dtype}"
        )


def test_signed_zero_scalars_are_not_confused():
    x = core.tensor([1.0])
    assert (x * 0.0).item() == 0.0
    with np.errstate(divide="ignore"):
        assert (1.0 / (x * -0.0)).item() == -np.inf
        assert (1.0 / (x * 0.0)).item() == np.inf


def test_weak_scalar_values_are_exact():
    x = core.tensor([3], dtype="int32")
    np.testing.assert_allclose(_np(x * 2.5), [7.5])
    np.testing.assert_allclose(_np(x / 2), [1.5])
    assert (x / 2).dtype == core.float32


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("int32", "float32", "float32"),
        ("int64", "float32", "float32"),
        ("int64", "float16", "float16"),
        ("float16", "bfloat16", "float32"),
        ("float32", "float64", "float64"),
        ("float16", "float32", "float32"),
        ("bfloat16", "float64", "float64"),
        ("float32", "complex64", "complex64"),
        ("float64", "complex64", "complex128"),
        ("int32", "complex64", "complex64"),
        ("int32", "int64", "int64"),
        ("bool", "int32", "int32"),
        ("bool", "float16", "float16"),
        ("complex64", "complex128", "complex128"),
    ],
)
def test_promotion_between_tensors(a, b, expected):
    x, y = core.tensor([1, 0], dtype=a), core.tensor([1, 1], dtype=b)
    assert (x + y).dtype == core.dtypes.canonical(expected)
    assert (y * x).dtype == core.dtypes.canonical(expected)
    assert core.dtypes.promote_types(a, b) == core.dtypes.canonical(expected)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_arithmetic_in_every_dtype(dtype):
    x = core.tensor([1, 2, 3], dtype=dtype)
    if dtype == "bool":
        assert (x & x).dtype == core.bool_
        return
    y = x + x
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(np.real(_np(y)).astype(np.float64), [2, 4, 6])
    assert (x * x).dtype == x.dtype and (x - x).dtype == x.dtype
    assert ops.sum(x).dtype == x.dtype


# ---- indexing -----------------------------------------------------------------------------------
XI = np.arange(60.0).reshape(3, 4, 5)
INDICES = [
    1,
    -1,
    (1, 2),
    (slice(None), 2),
    slice(1, None),
    (slice(None, None, -1), slice(1, 4, 2)),
    (Ellipsis, 1),
    (None, 0),
    (1, None, Ellipsis, None),
    (slice(-2, None), Ellipsis, slice(None, 2)),
    [0, 2],
    (np.array([0, 2, 2]), np.array([1, 0, 3])),
    (slice(None), [3, 0]),
    (slice(None), np.array([[0, 1], [3, 3]]), 2),
    (np.array([0, 1]), slice(None), np.array([4, 0])),
    (Ellipsis, np.array([-1, 0])),
    (1, np.array([0, 3]), slice(1, 3)),
    (np.array([[2], [0]]), np.array([1, 3])),
    np.array([True, False, True]),
    (slice(None), np.array([True, False, True, True])),
    XI[..., 0] > 20,
    XI > 30,
    (np.array([True, False, True]), 2),
    (np.array([0, 2]), Ellipsis, 1),
    (0, Ellipsis, np.array([1, 4])),
    (slice(None), Ellipsis, np.array([True, False, True, False, True])),
]


@pytest.mark.parametrize("index", INDICES, ids=range(len(INDICES)))
def test_getitem_against_numpy(index):
    x = core.Tensor(XI)
    tidx = (
        tuple(core.tensor(i) if isinstance(i, np.ndarray) else i for i in index)
        if isinstance(index, tuple)
        else index
    )
    out = x[tidx]
    np.testing.assert_array_equal(_np(out), XI[index])
    out_np_index = x[index]
    np.testing.assert_array_equal(_np(out_np_index), XI[index])


@pytest.mark.parametrize("index", INDICES, ids=range(len(INDICES)))
def test_getitem_gradient(index):
    x = core.Tensor(XI * 0.1)
    g = core.grad(lambda t: (t[index] * t[index]).sum())(x)
    expected = np.zeros_like(XI)
    np.add.at(
        expected,
        index if not isinstance(index, np.ndarray) or index.dtype != bool else np.nonzero(index),
        2 * (XI * 0.1)[index],
    )
    np.testing.assert_allclose(_np(g), expected, rtol=1e-12)


@pytest.mark.parametrize("index", INDICES, ids=range(len(INDICES)))
def test_result_shape_rule_matches_numpy(index):
    from diffsci.core.ops.indexing import _parse_index
    from diffsci.core.prims.indexing import result_shape

    template, arrays = _parse_index(core.Tensor(XI), index)
    assert result_shape(XI.shape, [tuple(a.shape) for a in arrays], template) == XI[index].shape


def test_setitem_value_shapes():
    x = core.zeros(2, 3)
    x[0] = core.ones(1, 3)  # leading size-1 dims are dropped, as numpy does
    x[1, :2] = [5.0, 6.0]
    np.testing.assert_array_equal(_np(x), [[1, 1, 1], [5, 6, 0]])
    with pytest.raises(
        ValueError,
        match=r"index_update: a value of shape \(4,\) cannot be broadcast to x\[index\] of shape \(3,\)",
    ):
        x[0] = core.ones(4)
    g = core.grad(lambda v: (ops.index_update(core.zeros(2, 3), 0, v) ** 2).sum())(core.ones(1, 3))
    assert g.shape == (1, 3)
    np.testing.assert_allclose(_np(g), [[2.0, 2.0, 2.0]])


def test_index_errors():
    x = core.Tensor(XI)
    with pytest.raises(IndexError, match="out of range for axis 1 of size 4"):
        x[0, 4]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError, match="boolean mask of shape"):
        x[np.array([True, False])]
    with pytest.raises(IndexError, match="integer or bool"):
        x[core.tensor([0.5])]


@st.composite
def random_index(draw):
    shape = (3, 4, 5)
    entries = []
    dim = 0
    n = draw(st.integers(1, 3))
    k = draw(st.integers(1, 3))  # all index arrays have this length (they must broadcast)
    for _ in range(n):
        kind = draw(st.sampled_from(["int", "slice", "array", "none"]))
        if kind == "none":
            entries.append(None)
            continue
        size = shape[dim]
        if kind == "int":
            entries.append(draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            start = draw(st.one_of(st.none(), st.integers(-size, size)))
            stop = draw(st.one_of(st.none(), st.integers(-size, size)))
            step = draw(st.one_of(st.none(), st.sampled_from([1, 2, -1, -2])))
            entries.append(slice(start, stop, step))
        else:
            entries.append(
                np.array(draw(st.lists(st.integers(-size, size - 1), min_size=k, max_size=k)))
            )
        dim += 1
    if draw(st.booleans()) and dim < 3:
        entries.insert(draw(st.integers(0, len(entries))), Ellipsis)
    return tuple(entries)


@settings(max_examples=15, deadline=None)
@given(index=random_index())
def test_random_indices_against_numpy_and_vmap(index):
    x = core.Tensor(XI)
    np.testing.assert_array_equal(_np(x[index]), XI[index])
    batch = np.stack([XI, -XI, 2 * XI])
    out = core.vmap(lambda t: t[index])(core.Tensor(batch))
    np.testing.assert_array_equal(_np(out), np.stack([b[index] for b in batch]))


# ---- x[idx] = v inside differentiated functions -------------------------------------------------
def test_setitem_outside_transforms():
    x = core.Tensor(XI.copy())
    x[0, 1:3] = 7.0
    x[core.tensor([2, 1]), 0, 0] = core.tensor([-1.0, -2.0], dtype="float64")
    x[XI > 55] = 0.0
    ref = XI.copy()
    ref[0, 1:3] = 7.0
    ref[[2, 1], 0, 0] = [-1.0, -2.0]
    ref[XI > 55] = 0.0
    np.testing.assert_array_equal(_np(x), ref)
    assert x.dtype == core.float64
    y = core.tensor([1, 2, 3], dtype="int32")
    y[0] = 5
    assert y.dtype == core.int32 and y.tolist() == [5, 2, 3]


SET_INDICES = [
    (1, slice(1, 3)),
    (slice(None), 2),
    (np.array([2, 0]),),
    (np.array([0, 2]), slice(None), np.array([1, 4])),
    (slice(None), np.array([[0], [3]]), np.array([1, 2])),
    (Ellipsis, np.array([4, 0])),
]


@pytest.mark.parametrize("index", SET_INDICES, ids=range(len(SET_INDICES)))
def test_setitem_gradients(index):
    """f(x, v) = sum(w * y) with y = x; y[index] = v * v: the gradient reaches the kept part of x
    and v (through the overwritten slots) and nothing reaches the overwritten part of x."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal(XI.shape)
    v_shape = XI[index].shape
    v0 = rng.standard_normal(v_shape)
    x0 = rng.standard_normal(XI.shape)

    def f(x, v):
        y = x * 1.0
        y[index] = v * v
        return (y * core.Tensor(w)).sum()

    gx, gv = core.grad(f, (0, 1))(core.Tensor(x0), core.Tensor(v0))
    mask = np.ones_like(XI)
    mask[index] = 0.0
    np.testing.assert_allclose(_np(gx), w * mask, rtol=1e-12)
    np.testing.assert_allclose(_np(gv), 2 * v0 * w[index], rtol=1e-12)
    gradcheck(f, [core.Tensor(x0), core.Tensor(v0)], order=2)


def test_setitem_with_broadcast_value_and_repeated_accumulation():
    def f(x, v):
        y = x + 0.0
        y[:, 1] = v  # v is broadcast over the rows
        return (y * y).sum()

    x0, v0 = np.ones((3, 2)), 2.0
    gx, gv = core.grad(f, (0, 1))(core.Tensor(x0), core.tensor(v0, dtype="float64"))
    np.testing.assert_allclose(_np(gx), [[2.0, 0.0]] * 3)
    assert gv.shape == () and gv.item() == pytest.approx(3 * 2 * v0)


REPEATED_INDICES = [
    (np.array([1, 1, 2]),),  # 1-D, a repeated row
    (np.array([[0, 2], [2, 0]]), slice(None), np.array([1, 1])),  # 2-D, two entries repeat
    (np.array([0, 0, 0]), 1, np.array([3, 3, 4])),  # separated advanced indices
]


@pytest.mark.parametrize("index", REPEATED_INDICES, ids=range(len(REPEATED_INDICES)))
def test_setitem_with_repeated_indices_gives_no_gradient_to_overwritten_values(index):
    """``y[[1, 1]] = v``: numpy keeps the last write; the first v slot never reaches the output,
    so its gradient is zero, in reverse mode, under jit, and by finite differences."""
    rng = np.random.default_rng(1)
    w = rng.standard_normal(XI.shape)
    v0 = rng.standard_normal(XI[index].shape)
    x0 = rng.standard_normal(XI.shape)

    def f(x, v):
        y = x * 1.0
        y[index] = v * v
        return (y * core.Tensor(w)).sum()

    # the reference: which write slot's value ends up in the array, found by tagging each slot
    slots = np.arange(v0.size).reshape(v0.shape)
    tagged = np.full(XI.shape, -1)
    tagged[index] = slots
    survives = tagged[index] == slots
    assert not survives.all()  # the case really repeats an index
    expected_gv = np.where(survives, 2 * v0 * w[index], 0.0)
    x, v = core.Tensor(x0), core.Tensor(v0)
    for grad in (core.grad(f, (0, 1)), core.jit(core.grad(f, (0, 1)))):
        gx, gv = grad(x, v)
        np.testing.assert_allclose(_np(gv), expected_gv, rtol=1e-12)
        np.testing.assert_allclose(_np(gx), np.where(tagged >= 0, 0.0, w), rtol=1e-12)
    gradcheck(f, [x, v], order=2)


def test_setitem_under_vmap_and_jvp():
    def f(x, i):
        y = x * 2.0
        y[i] = -1.0
        return y

    xs = np.arange(12.0).reshape(3, 4)
    idx = np.array([0, 3, 1])
    out = core.vmap(f)(core.Tensor(xs), core.tensor(idx))
    ref = xs * 2.0
    ref[np.arange(3), idx] = -1.0
    np.testing.assert_array_equal(_np(out), ref)
    _, t = core.jvp(
        lambda x: f(x, core.tensor(1)), (core.Tensor(xs[0]),), (core.Tensor(np.ones(4)),)
    )
    np.testing.assert_array_equal(_np(t), [2.0, 0.0, 2.0, 2.0])


def test_setitem_of_a_constant_with_a_traced_value():
    """``y = zeros(); y[i] = v`` with a traced v: y (a plain tensor) must follow v everywhere."""

    def build(v):
        y = core.zeros(3, dtype="float64")
        y[0] = v
        y[1:] = v * 2.0
        return y

    v = core.tensor(1.5, dtype="float64")
    assert core.grad(lambda v: (build(v) ** 2).sum())(v).item() == pytest.approx(18 * 1.5)
    np.testing.assert_allclose(_np(core.jacrev(build)(v)), [1.0, 2.0, 2.0])
    np.testing.assert_allclose(_np(core.jacfwd(build)(v)), [1.0, 2.0, 2.0])
    np.testing.assert_allclose(
        _np(core.vmap(build)(core.tensor([1.0, 2.0], dtype="float64"))), [[1, 2, 2], [2, 4, 4]]
    )
    assert core.hessian(lambda v: (build(v) ** 3).sum())(v).item() == pytest.approx(6 * 17 * 1.5)

    def inspect(v):
        y = core.zeros(2, dtype="float64")
        y[1] = v
        assert y.shape == (2,) and y.dtype == core.float64 and y.ndim == 2 - 1
        np.testing.assert_allclose(y.asnumpy(), [0.0, 1.5])
        assert "1.5" in repr(y)
        y[0] = 4.0  # a second assignment into the rebound tensor
        return y.sum() * y[0]

    assert core.grad(inspect)(v).item() == pytest.approx(4.0)


def test_setitem_across_nested_transformations():
    # x is a forward-mode tracer; the assignment happens inside an inner grad with its own v
    def outer(x):
        def inner(v):
            y = x * 1.0
            y[0] = v
            return (y * y * x).sum()

        return core.grad(inner)(core.tensor(2.0, dtype="float64"))

    x = core.tensor([3.0, 5.0], dtype="float64")
    g, t = core.jvp(outer, (x,), (core.tensor([1.0, 0.0], dtype="float64"),))
    # inner gradient = 2 v x[0]; its derivative along e_0 is 2 v = 4
    assert g.item() == pytest.approx(12.0) and t.item() == pytest.approx(4.0)


def test_setitem_into_a_parameter_inside_grad_is_refused():
    p = core.Parameter(core.tensor([1.0, 2.0]), name="p")

    def f(v):
        p[0] = v
        return p.sum()

    with pytest.raises(TypeError, match="Parameter 'p'"):
        core.grad(f)(core.tensor(3.0))
    p[1] = 5.0  # outside transformations it writes the value
    assert p.tolist() == [1.0, 5.0] and isinstance(p, core.Parameter)


def test_setitem_does_not_change_values_saved_for_backward():
    def f(x):
        y = x * x  # the backward pass of mul saves x
        x2 = x + 0.0
        x2[0] = 100.0
        return (y + x2).sum()

    g = core.grad(f)(core.tensor([1.0, 2.0], dtype="float64"))
    np.testing.assert_allclose(_np(g), [2.0, 5.0])


# ---- random -------------------------------------------------------------------------------------
def test_random_reproducible_under_set_seed():
    draws = []
    for _ in range(2):
        core.set_seed(42)
        draws.append(
            [
                core.random.normal((3, 2)),
                core.random.uniform((4,), -1.0, 2.0),
                core.random.randint(0, 10, (5,)),
                core.random.permutation(6),
            ]
        )
    for a, b in zip(*draws):
        np.testing.assert_array_equal(_np(a), _np(b))
    core.set_seed(43)
    assert not np.array_equal(_np(core.random.normal((3, 2))), _np(draws[0][0]))


def test_random_dtypes_shapes_and_ranges():
    n = core.random.normal((1000,), mean=2.0, stddev=0.5)
    assert n.dtype == core.float32 and n.shape == (1000,)
    assert abs(float(_np(n).mean()) - 2.0) < 0.1 and abs(float(_np(n).std()) - 0.5) < 0.1
    assert core.random.normal((2,), dtype="float64").dtype == core.float64
    u = core.random.uniform((1000,), -1.0, 2.0)
    assert u.dtype == core.float32 and _np(u).min() >= -1.0 and _np(u).max() < 2.0
    assert core.random.uniform((3,), dtype="float64").dtype == core.float64
    r = core.random.randint(3, 7, (1000,))
    assert r.dtype == core.int64 and set(np.unique(_np(r))) == {3, 4, 5, 6}
    assert core.random.randint(0, 2, (3,), dtype="int32").dtype == core.int32
    p = core.random.permutation(10)
    assert p.dtype == core.int64 and sorted(p.tolist()) == list(range(10))
    b = core.random.bernoulli((1000,), 0.25)
    assert (
        b.dtype == core.float32
        and set(np.unique(_np(b))) <= {0.0, 1.0}
        and 0.15 < _np(b).mean() < 0.35
    )


def test_numpy_ufuncs_on_tensors_run_core_ops_and_keep_gradients():
    x = core.tensor([0.5, 2.0], dtype="float64")
    y = np.exp(x)
    assert isinstance(y, core.Tensor)
    np.testing.assert_allclose(y.asnumpy(), np.exp([0.5, 2.0]))
    assert isinstance(np.ones(2) + x, core.Tensor)  # ndarray + Tensor is a Tensor, not an ndarray
    g = core.grad(lambda t: (np.sin(t) * np.sqrt(t)).sum())(x)
    t = np.array([0.5, 2.0])
    np.testing.assert_allclose(g.asnumpy(), np.cos(t) * np.sqrt(t) + np.sin(t) / (2 * np.sqrt(t)))
    with pytest.raises(TypeError, match=r"numpy\.add\.reduce on a diffsci Tensor"):
        np.add.reduce(x)
    with pytest.raises(TypeError, match=r"numpy\.exp on a diffsci Tensor"):
        np.exp(x, out=np.empty(2))
