"""Shape and indexing ops of ``core.ops`` against numpy, with gradchecks and vmap."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops
from diffsci.core.testing import gradcheck

RNG = np.random.default_rng(7)
X = RNG.standard_normal((2, 3, 4))
M = RNG.standard_normal((3, 4))


def _np(t):
    return t.asnumpy()


def T(a):
    return core.Tensor(np.asarray(a))


# name, op on tensors, numpy reference on arrays, inputs
CASES = [
    ("reshape", lambda x: ops.reshape(x, (4, -1)), lambda x: x.reshape(4, -1), [X]),
    ("reshape_varargs", lambda x: x.reshape(6, 4), lambda x: x.reshape(6, 4), [X]),
    ("view", lambda x: ops.view(x, -1), lambda x: x.reshape(-1), [X]),
    ("flatten", lambda x: ops.flatten(x, 1), lambda x: x.reshape(2, 12), [X]),
    ("transpose_default", ops.transpose, np.transpose, [X]),
    ("transpose_perm", lambda x: ops.transpose(x, (1, 2, 0)), lambda x: x.transpose(1, 2, 0), [X]),
    ("permute_negative", lambda x: ops.permute(x, -1, 0, 1), lambda x: x.transpose(2, 0, 1), [X]),
    ("swapaxes", lambda x: ops.swapaxes(x, 0, -1), lambda x: np.swapaxes(x, 0, -1), [X]),
    ("moveaxis", lambda x: ops.moveaxis(x, 0, -1), lambda x: np.moveaxis(x, 0, -1), [X]),
    ("T", lambda x: x.T, lambda x: x.T, [M]),
    ("expand_dims", lambda x: ops.expand_dims(x, 1), lambda x: np.expand_dims(x, 1), [X]),
    ("expand_dims_neg", lambda x: ops.expand_dims(x, -1), lambda x: np.expand_dims(x, -1), [X]),
    (
        "expand_dims_multi",
        lambda x: ops.expand_dims(x, (0, 3)),
        lambda x: np.expand_dims(x, (0, 3)),
        [M],
    ),
    ("squeeze_all", ops.squeeze, np.squeeze, [X[:1, :, None]]),
    ("squeeze_axis", lambda x: ops.squeeze(x, 0), lambda x: np.squeeze(x, 0), [X[:1]]),
    (
        "broadcast_to",
        lambda x: ops.broadcast_to(x, (2, 3, 4)),
        lambda x: np.broadcast_to(x, (2, 3, 4)),
        [M[:, :1]],
    ),
    (
        "concat",
        lambda a, b: ops.concat([a, b], axis=1),
        lambda a, b: np.concatenate([a, b], axis=1),
        [X, X[:, :2]],
    ),
    (
        "concat_neg_axis",
        lambda a, b, c: ops.concat([a, b, c], axis=-1),
        lambda a, b, c: np.concatenate([a, b, c], -1),
        [M, M[:, :1], M],
    ),
    ("stack", lambda a, b: ops.stack([a, b]), lambda a, b: np.stack([a, b]), [M, 2 * M]),
    (
        "stack_last",
        lambda a, b: ops.stack([a, b], axis=-1),
        lambda a, b: np.stack([a, b], -1),
        [M, 2 * M],
    ),
    ("split_int", lambda x: ops.split(x, 2, axis=2)[1], lambda x: np.split(x, 2, axis=2)[1], [X]),
    ("split_uneven", lambda x: ops.split(x, 2, axis=1)[1], lambda x: x[:, 2:], [X]),
    ("split_sizes", lambda x: ops.split(x, [1, 3], axis=-1)[1], lambda x: x[..., 1:], [X]),
    ("chunk", lambda x: ops.chunk(x, 2, axis=1)[0], lambda x: x[:, :2], [X]),
    ("tile", lambda x: ops.tile(x, (2, 1, 3)), lambda x: np.tile(x, (2, 1, 3)), [X]),
    ("tile_more_reps", lambda x: ops.tile(x, (2, 1, 2)), lambda x: np.tile(x, (2, 1, 2)), [M]),
    ("tile_int", lambda x: ops.tile(x, 2), lambda x: np.tile(x, 2), [M]),
    ("repeat", lambda x: ops.repeat(x, 2, axis=1), lambda x: np.repeat(x, 2, axis=1), [X]),
    ("repeat_flat", lambda x: ops.repeat(x, 3), lambda x: np.repeat(x, 3), [M]),
    (
        "repeat_array",
        lambda x: ops.repeat(x, [1, 0, 2], axis=0),
        lambda x: np.repeat(x, [1, 0, 2], axis=0),
        [M],
    ),
    ("flip", lambda x: ops.flip(x, 1), lambda x: np.flip(x, 1), [X]),
    ("flip_all", ops.flip, np.flip, [X]),
    ("roll", lambda x: ops.roll(x, 2, axis=2), lambda x: np.roll(x, 2, axis=2), [X]),
    ("roll_negative", lambda x: ops.roll(x, -1, axis=1), lambda x: np.roll(x, -1, axis=1), [X]),
    (
        "roll_multi",
        lambda x: ops.roll(x, (1, -3), axis=(0, 2)),
        lambda x: np.roll(x, (1, -3), axis=(0, 2)),
        [X],
    ),
    ("roll_flat", lambda x: ops.roll(x, 5), lambda x: np.roll(x, 5), [X]),
    (
        "pad_constant",
        lambda x: ops.pad(x, ((0, 1), (2, 0), (1, 1)), value=1.5),
        lambda x: np.pad(x, ((0, 1), (2, 0), (1, 1)), constant_values=1.5),
        [X],
    ),
    (
        "pad_reflect",
        lambda x: ops.pad(x, ((1, 2), (3, 2)), mode="reflect"),
        lambda x: np.pad(x, ((1, 2), (3, 2)), mode="reflect"),
        [M],
    ),
    (
        "pad_edge",
        lambda x: ops.pad(x, ((2, 1), (0, 3)), mode="edge"),
        lambda x: np.pad(x, ((2, 1), (0, 3)), mode="edge"),
        [M],
    ),
    (
        "pad_periodic",
        lambda x: ops.pad(x, ((2, 3), (1, 4)), mode="periodic"),
        lambda x: np.pad(x, ((2, 3), (1, 4)), mode="wrap"),
        [M],
    ),
    (
        "pad_int",
        lambda x: ops.pad(x, 1, mode="reflect"),
        lambda x: np.pad(x, 1, mode="reflect"),
        [M],
    ),
    ("tril", ops.tril, np.tril, [M]),
    ("tril_k", lambda x: ops.tril(x, -1), lambda x: np.tril(x, -1), [X]),
    ("triu", ops.triu, np.triu, [X]),
    ("triu_k", lambda x: ops.triu(x, 1), lambda x: np.triu(x, 1), [M]),
    ("slice_axis", lambda x: ops.slice_axis(x, 2, 1, 4, 2), lambda x: x[:, :, 1:4:2], [X]),
    (
        "take",
        lambda x: ops.take(x, T([[2, 0], [1, 1]]), axis=1),
        lambda x: np.take(x, [[2, 0], [1, 1]], axis=1),
        [X],
    ),
    ("take_flat", lambda x: ops.take(x, T([5, 0, 11])), lambda x: np.take(x, [5, 0, 11]), [M]),
    ("take_int", lambda x: ops.take(x, 2, axis=-1), lambda x: np.take(x, 2, axis=-1), [X]),
    (
        "gather",
        lambda x: ops.gather(x, T([3, 0, 3]), 2),
        lambda x: np.take(x, [3, 0, 3], axis=2),
        [X],
    ),
    (
        "take_along_axis",
        lambda x: ops.take_along_axis(x, T([[0, 2, 2, 1]]), 0),
        lambda x: np.take_along_axis(x, np.array([[0, 2, 2, 1]]), 0),
        [M],
    ),
    (
        "take_along_axis_last",
        lambda x: ops.take_along_axis(x, T(np.argsort(X, -1)), -1),
        lambda x: np.take_along_axis(x, np.argsort(X, -1), -1),
        [X],
    ),
    (
        "scatter_add",
        lambda x, u: ops.scatter_add(x, T([[0, 2, 2, 0], [1, 1, 1, 1]]), u, 0),
        None,
        [M, M[:2]],
    ),
    ("index_add_axis", lambda x, s: ops.index_add_axis(x, 1, T([0, 3, 0]), s), None, [M, M[:, :3]]),
    ("index_add", lambda x, v: ops.index_add(x, (T([0, 0, 2]),), v), None, [M, M]),
    (
        "index_update",
        lambda x, v: ops.index_update(x, (slice(None), T([3, 1])), v),
        None,
        [M, M[:, :2]],
    ),
]


def _scatter_ref(name, x, other):
    out = x.copy()
    if name == "scatter_add":
        idx = np.array([[0, 2, 2, 0], [1, 1, 1, 1]])
        np.add.at(out, (idx, np.arange(4)[None, :]), other)
    elif name == "index_add_axis":
        np.add.at(out, (slice(None), np.array([0, 3, 0])), other)
    elif name == "index_add":
        np.add.at(out, (np.array([0, 0, 2]),), other)
    else:
        out[:, [3, 1]] = other
    return out


@pytest.mark.parametrize(("name", "op", "ref", "inputs"), CASES, ids=[c[0] for c in CASES])
def test_value_and_gradient(name, op, ref, inputs):
    out = op(*[T(a) for a in inputs])
    expected = ref(*inputs) if ref is not None else _scatter_ref(name, *inputs)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(_np(out), expected)
    gradcheck(op, [T(a) for a in inputs], order=1)


@pytest.mark.parametrize(("name", "op", "ref", "inputs"), CASES, ids=[c[0] for c in CASES])
def test_vmap_against_loop(name, op, ref, inputs):
    batch = [np.stack([a, 2 * a + 1]) for a in inputs]
    out = core.vmap(op)(*[T(b) for b in batch])
    expected = np.stack([_np(op(*[T(b[k]) for b in batch])) for k in range(2)])
    np.testing.assert_allclose(_np(out), expected, rtol=1e-14)


def test_split_returns_all_pieces():
    parts = ops.split(T(X), [1, 2, 1], axis=2)
    assert [tuple(p.shape) for p in parts] == [(2, 3, 1), (2, 3, 2), (2, 3, 1)]
    np.testing.assert_array_equal(_np(ops.concat(parts, axis=2)), X)
    assert len(ops.split(T(X), 3, axis=1)) == 1
    with pytest.raises(ValueError, match="split"):
        ops.split(T(X), [1, 1], axis=2)


def test_one_hot():
    idx = np.array([[0, 2], [3, 1]])
    out = ops.one_hot(T(idx), 4)
    assert out.dtype == core.float32 and out.shape == (2, 2, 4)
    np.testing.assert_array_equal(_np(out), np.eye(4)[idx])
    assert ops.one_hot(T(idx), 4, dtype="int32").dtype == core.int32


def test_concat_promotes_dtypes():
    out = ops.concat([core.tensor([1, 2]), core.tensor([0.5])])
    assert out.dtype == core.float32
    np.testing.assert_array_equal(_np(out), [1.0, 2.0, 0.5])


def test_shape_errors_name_op_and_shapes():
    with pytest.raises(ValueError, match=r"reshape.*2, 3, 4.*5, 5"):
        ops.reshape(T(X), (5, 5))
    with pytest.raises(ValueError, match="only one dimension can be -1"):
        ops.reshape(T(X), (-1, -1))
    with pytest.raises(ValueError, match=r"broadcast_to.*3, 4.*2, 4"):
        ops.broadcast_to(T(M), (2, 4))
    with pytest.raises(ValueError, match=r"concat.*3, 4.*2, 3"):
        ops.concat([T(M), T(M[:2, :3])], axis=0)
    with pytest.raises(ValueError, match=r"stack.*\(3, 4\)"):
        ops.stack([T(M), T(M[:2])])
    with pytest.raises(ValueError, match=r"expand_dims: axis 5 out of range"):
        ops.expand_dims(T(M), 5)
    with pytest.raises(ValueError, match="squeeze"):
        ops.squeeze(T(X), 1)
    with pytest.raises(ValueError, match="transpose"):
        ops.transpose(T(X), (0, 0, 1))
    with pytest.raises(ValueError, match="pad: reflect"):
        ops.pad(T(M), ((3, 0), (0, 0)), mode="reflect")
    with pytest.raises(ValueError, match="unknown mode"):
        ops.pad(T(M), 1, mode="mirror")


def test_transpose_and_reshape_shortcuts_return_input():
    x = T(X)
    assert ops.reshape(x, (2, 3, 4)) is x
    assert ops.transpose(x, (0, 1, 2)) is x
    assert ops.broadcast_to(x, (2, 3, 4)) is x


def test_gradient_of_repeat_with_array_repeats_accumulates():
    x = T(np.array([1.0, 2.0, 3.0]))
    g = core.grad(lambda x: (ops.repeat(x, [2, 0, 3], axis=0) * T(np.arange(5.0))).sum())(x)
    np.testing.assert_array_equal(_np(g), [0 + 1, 0, 2 + 3 + 4])


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_pad_modes_random(shape, data):
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    mode = data.draw(st.sampled_from(["constant", "reflect", "edge", "periodic"]))
    limit = {"constant": 3, "reflect": None, "edge": 3, "periodic": None}[mode]
    pads = []
    for n in shape:
        hi = {"reflect": n - 1, "periodic": n}.get(mode, limit)
        pads.append((data.draw(st.integers(0, hi)), data.draw(st.integers(0, hi))))
    out = ops.pad(T(x), tuple(pads), mode=mode)
    np.testing.assert_array_equal(
        _np(out), np.pad(x, pads, mode={"periodic": "wrap"}.get(mode, mode))
    )
    # transpose of the (linear) pad map: <vjp(g), x> == <g, pad(x)>
    g = np.random.default_rng(1).standard_normal(out.shape)
    _, pull = core.vjp(lambda t: ops.pad(t, tuple(pads), mode=mode), T(x))
    np.testing.assert_allclose(
        np.sum(_np(pull(T(g))[0]) * x), np.sum(g * _np(out)), rtol=1e-10, atol=1e-12
    )


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_roll_flip_tile_random(shape, data):
    x = np.random.default_rng(0).standard_normal(shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    shift = data.draw(st.integers(-5, 5))
    np.testing.assert_array_equal(
        _np(ops.roll(T(x), shift, axis=axis)), np.roll(x, shift, axis=axis)
    )
    np.testing.assert_array_equal(_np(ops.flip(T(x), axis)), np.flip(x, axis))
    reps = tuple(data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=4)))
    np.testing.assert_array_equal(_np(ops.tile(T(x), reps)), np.tile(x, reps))
    r = data.draw(st.integers(1, 3))
    np.testing.assert_array_equal(_np(ops.repeat(T(x), r, axis=axis)), np.repeat(x, r, axis=axis))
