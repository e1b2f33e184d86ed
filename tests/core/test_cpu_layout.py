"""The tiled transpose copy (core.backend.cpu_layout): bit-identical to np.ascontiguousarray on
every layout a view can have, and used where operands reach BLAS or a reshape needs a copy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops
from diffsci.core.backend import cc, cpu_layout

needs_cc = pytest.mark.skipif(not cc.available(), reason="no working C compiler on this machine")

DTYPES = [np.uint8, np.float16, np.float32, np.int64, np.complex128, np.bool_]


@st.composite
def views(draw):
    """A strided view of a random array: permuted axes, steps (negative too), and size-1 or
    broadcast axes, large enough for the native path."""
    ndim = draw(st.integers(2, 5))
    shape = [draw(st.integers(1, 24)) for _ in range(ndim)]
    shape[draw(st.integers(0, ndim - 1))] = draw(st.integers(40, 70))  # enough elements
    dtype = draw(st.sampled_from(DTYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    base = (rng.standard_normal(shape) * 100).astype(dtype)
    index = tuple(slice(None, None, draw(st.sampled_from([1, 2, -1, -3]))) for _ in shape)
    view = base[index]
    if draw(st.booleans()):
        view = np.broadcast_to(view[:, None], (view.shape[0], 3) + view.shape[1:])
    perm = draw(st.permutations(range(view.ndim)))
    return view.transpose(perm)


@needs_cc
@settings(max_examples=80, deadline=None)
@given(views())
def test_contiguous_copy_matches_numpy_on_any_view(view):
    out = cpu_layout.ascontiguousarray(view)
    ref = np.ascontiguousarray(view)
    assert out.flags.c_contiguous and out.dtype == ref.dtype and out.shape == ref.shape
    np.testing.assert_array_equal(out, ref)


@needs_cc
def test_the_tiled_kernel_takes_the_transposed_layouts_and_leaves_the_rest_to_numpy():
    a = np.arange(64 * 48 * 32, dtype=np.float32).reshape(64, 48, 32)
    t = a.transpose(2, 0, 1)  # the source's unit-stride axis comes first
    out = cpu_layout.contiguous(t)
    assert out is not None
    np.testing.assert_array_equal(out, np.ascontiguousarray(t))
    assert cpu_layout.contiguous(a) is None  # already contiguous
    assert cpu_layout.contiguous(a[:, ::2]) is None  # rows still read in order: numpy is fine
    assert cpu_layout.contiguous(a[:4, :4].T) is None  # small: numpy is as fast
    assert cpu_layout.plan((8, 8), (4, 33), 4) is None  # strides not whole elements


@needs_cc
def test_einsum_and_reshape_of_transposed_tensors_give_numpy_results():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((40, 36, 24)).astype(np.float32)
    b = rng.standard_normal((30, 36, 24)).astype(np.float32)
    out = ops.einsum("ikc,jkc->ijc", core.tensor(a), core.tensor(b))
    np.testing.assert_allclose(out.asnumpy(), np.einsum("ikc,jkc->ijc", a, b), rtol=1e-5, atol=1e-4)
    r = ops.reshape(ops.transpose(core.tensor(a), (2, 0, 1)), (24, -1))
    np.testing.assert_array_equal(r.asnumpy(), a.transpose(2, 0, 1).reshape(24, -1))
    with cc.disabled():
        r2 = ops.reshape(ops.transpose(core.tensor(a), (2, 0, 1)), (24, -1))
    np.testing.assert_array_equal(r2.asnumpy(), r.asnumpy())
