"""sort, argsort, topk: values against numpy (stability, descending order, NaN), derivatives
of the sorted values (order 1 and 2), vmap, errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops
from diffsci.core.prims import sort as prims_sort
from diffsci.core.testing import gradcheck


def _t(a):
    return core.Tensor(np.asarray(a))


def _np(x):
    return x.asnumpy()


def _stable_desc(x, axis):
    """Reference descending stable order: sort by (-value, position)."""
    n = x.shape[axis]
    return np.apply_along_axis(lambda r: np.lexsort((np.arange(n), -r)), axis, x)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_sort_and_argsort_values(axis, dtype):
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, (4, 5, 6)).astype(dtype)  # many ties
    vals, idx = ops.sort(_t(x), axis=axis)
    np.testing.assert_array_equal(_np(idx), np.argsort(x, axis=axis, kind="stable"))
    np.testing.assert_array_equal(_np(vals), np.sort(x, axis=axis))
    assert vals.dtype == dtype and idx.dtype == np.int64
    vals, idx = ops.sort(_t(x), axis=axis, descending=True)
    np.testing.assert_array_equal(_np(idx), _stable_desc(x, axis))
    np.testing.assert_array_equal(_np(vals), -np.sort(-x, axis=axis))
    np.testing.assert_array_equal(
        _np(ops.argsort(_t(x), axis, descending=True)), _stable_desc(x, axis)
    )


def test_sort_nan_placement():
    x = np.array([2.0, np.nan, -1.0, 5.0])
    np.testing.assert_array_equal(_np(ops.argsort(_t(x))), [2, 0, 3, 1])  # NaN last ascending
    np.testing.assert_array_equal(
        _np(ops.argsort(_t(x), descending=True)), [1, 3, 0, 2]
    )  # first descending


@pytest.mark.parametrize("largest", [True, False])
def test_topk(largest):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 7))
    for axis, k in [(-1, 3), (0, 2), (1, 0), (1, 7)]:
        vals, idx = ops.topk(_t(x), k, axis=axis, largest=largest)
        order = np.argsort(-x if largest else x, axis=axis, kind="stable")
        ref_idx = np.take(order, np.arange(k), axis=axis)
        np.testing.assert_array_equal(_np(idx), ref_idx)
        np.testing.assert_array_equal(_np(vals), np.take_along_axis(x, ref_idx, axis=axis))


def test_sorted_values_gradcheck():
    rng = np.random.default_rng(2)
    x = (
        rng.permutation(12).reshape(3, 4) * 0.3 + rng.standard_normal((3, 4)) * 0.01
    )  # distinct values
    gradcheck(lambda a: ops.sort(a, axis=0)[0] ** 2, [x], order=2)
    gradcheck(lambda a: ops.sort(a, descending=True)[0] ** 3, [x], order=2)
    gradcheck(lambda a: ops.topk(a, 2, largest=False)[0] ** 2, [x], order=2)
    # the gradient of a sorted value goes back to the element it came from
    g = _np(core.grad(lambda a: ops.topk(a, 1)[0].sum())(_t(np.array([1.0, 5.0, 3.0]))))
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0])


def test_argsort_abstract_rule():
    x = np.zeros((2, 3), np.float32)
    aval = prims_sort.argsort.abstract(
        core.primitive.ShapedArray(x.shape, x.dtype), axis=1, descending=True
    )
    out = prims_sort.argsort(_t(x), axis=1, descending=True)
    assert (aval.shape, aval.dtype) == (out.shape, out.dtype) == ((2, 3), np.int64)


def test_argsort_has_no_derivative():
    assert not prims_sort.argsort.differentiable
    x = _t(np.array([3.0, 1.0, 2.0]))
    g = core.grad(lambda a: (a * ops.astype(ops.argsort(a), a.dtype)).sum())(x)
    np.testing.assert_array_equal(_np(g), [1.0, 2.0, 0.0])  # argsort(a), held constant


def test_sort_vmap():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3, 5))
    for fn in (
        lambda a: ops.sort(a, axis=0)[0],
        lambda a: ops.sort(a, descending=True)[1],
        lambda a: ops.topk(a, 2)[0],
        lambda a: ops.argsort(a, axis=-1),
    ):
        got = _np(core.vmap(fn, in_axes=1)(_t(x)))
        ref = np.stack([_np(fn(_t(x[:, i]))) for i in range(3)])
        np.testing.assert_array_equal(got, ref)
    g = _np(core.vmap(core.grad(lambda a: ops.topk(a, 2)[0].sum()))(_t(x[0])))
    ref = np.stack([_np(core.grad(lambda a: ops.topk(a, 2)[0].sum())(_t(r))) for r in x[0]])
    np.testing.assert_array_equal(g, ref)


def test_sort_errors():
    x = _t(np.zeros((2, 3)))
    with pytest.raises(
        ValueError, match=r"topk: k=4 out of range for axis 1 of size 3 \(shape \(2, 3\)\)"
    ):
        ops.topk(x, 4)
    with pytest.raises(ValueError, match="argsort: axis 2 out of range"):
        ops.argsort(x, axis=2)
    with pytest.raises(ValueError, match="sort: cannot sort a 0-d tensor"):
        ops.sort(_t(np.float64(1.0)))


@settings(max_examples=15, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    seed=st.integers(0, 1000),
    descending=st.booleans(),
)
def test_sort_random(shape, seed, descending):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, shape).astype(np.float64)
    axis = int(rng.integers(0, len(shape)))
    vals, idx = ops.sort(_t(x), axis=axis, descending=descending)
    ref = _stable_desc(x, axis) if descending else np.argsort(x, axis=axis, kind="stable")
    np.testing.assert_array_equal(_np(idx), ref)
    np.testing.assert_array_equal(_np(vals), np.take_along_axis(x, ref, axis=axis))


@pytest.mark.parity
def test_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 6))
    vals, idx = ops.topk(_t(x), 3, axis=1)
    tv, ti = torch.topk(torch.tensor(x), 3, dim=1)
    np.testing.assert_array_equal(_np(vals), tv.numpy())
    np.testing.assert_array_equal(_np(idx), ti.numpy())
    vals, idx = ops.sort(_t(x), axis=0, descending=True)
    tv, ti = torch.sort(torch.tensor(x), dim=0, descending=True, stable=True)
    np.testing.assert_array_equal(_np(vals), tv.numpy())
    np.testing.assert_array_equal(_np(idx), ti.numpy())
