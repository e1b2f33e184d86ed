"""core.ops.assign / assign_add / writable: in-place writes into eager tensors."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops


def test_assign_add_writes_through_views():
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    z = core.tensor(base.copy())
    cols = ops.swapaxes(ops.slice_axis(z, -2, 1, 3), -2, -3)  # [2 cols, 2, 4] view of z
    assert ops.assign_add(cols, np.full((2, 2, 4), 10.0)) is cols
    want = base.copy()
    want[:, 1:3] += 10.0
    np.testing.assert_array_equal(z.asnumpy(), want)
    ops.assign(ops.slice_axis(z, 0, 0, 1), core.tensor(np.zeros((1, 3, 4), np.float32)))
    want[0] = 0.0
    np.testing.assert_array_equal(z.asnumpy(), want)


def test_assign_casts_and_broadcasts_the_value():
    z = core.tensor(np.zeros((3, 2), np.float32))
    ops.assign_add(z, np.array([1.5, 2.5]))  # float64 row broadcast over rows
    assert z.dtype == core.float32
    np.testing.assert_array_equal(z.asnumpy(), [[1.5, 2.5]] * 3)


def test_bad_destinations_and_values_are_refused():
    z = core.tensor(np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match=r"assign_add: a value of shape \(4,\)"):
        ops.assign_add(z, np.ones(4))
    with pytest.raises(ValueError, match="would grow"):
        ops.assign(z, np.ones((2, 3, 2)))
    frozen = np.zeros((2, 2))
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only or a broadcast view"):
        ops.assign_add(core.tensor(frozen), 1.0)
    with pytest.raises(TypeError, match="must be a core Tensor"):
        ops.assign(np.zeros(2), 1.0)


def test_writable_copies_only_what_cannot_be_written():
    z = core.tensor(np.zeros((2, 2)))
    assert ops.writable(z) is z
    b = ops.broadcast_to(core.tensor(np.ones((1, 3))), (4, 3))
    w = ops.writable(b)
    assert w is not b
    ops.assign_add(w, 1.0)
    np.testing.assert_array_equal(w.asnumpy(), np.full((4, 3), 2.0))
    np.testing.assert_array_equal(b.asnumpy(), np.ones((4, 3)))


def test_traced_tensors_are_refused():
    x = core.tensor(np.ones(3))

    def f(x):
        ops.assign_add(x, 1.0)
        return x.sum()

    with pytest.raises(TypeError, match="traced tensor"):
        core.grad(f)(x)
    with pytest.raises(TypeError, match="traced tensor"):
        core.jit(f)(x)
    np.testing.assert_array_equal(x.asnumpy(), np.ones(3))
