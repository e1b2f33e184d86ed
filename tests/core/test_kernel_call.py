"""``ops.kernel_call``: the value from the kernel, every transformation from the reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops


def reference(x, y):
    return ops.sin(x) * y + x * x


def exact_kernel(calls):
    def kernel(xp, x, y):
        calls.append(x.shape)
        return np.sin(x) * y + x * x

    return kernel


def _call(kernel, x, y):
    return ops.kernel_call(reference, kernel, x, y, shape=x.shape)


def test_the_kernel_computes_the_value():
    calls = []
    marked = lambda xp, x, y: np.full(x.shape, 7.0)  # noqa: E731  (shows whose value it is)
    x = core.tensor(np.linspace(0, 1, 5))
    np.testing.assert_array_equal(_call(marked, x, x).asnumpy(), 7.0)
    out = _call(exact_kernel(calls), x, x)
    assert calls == [(5,)]
    np.testing.assert_allclose(out.asnumpy(), reference(x, x).asnumpy())


def test_a_declining_kernel_falls_back_to_the_reference():
    x = core.tensor(np.linspace(0, 1, 5))
    out = _call(lambda xp, x, y: None, x, x)
    np.testing.assert_allclose(out.asnumpy(), reference(x, x).asnumpy())
    out = _call(None, x, x)
    np.testing.assert_allclose(out.asnumpy(), reference(x, x).asnumpy())


def test_a_wrong_shape_is_an_error_naming_it():
    x = core.tensor(np.ones(4))
    with pytest.raises(ValueError, match=r"reference.*shape \(3,\).*declared \(4,\)"):
        _call(lambda xp, x, y: np.ones(3), x, x)


def test_jit_makes_it_one_equation_and_runs_the_kernel():
    calls = []
    kernel = exact_kernel(calls)
    y = core.tensor(np.full(6, 0.5))
    f = core.jit(lambda x: _call(kernel, x, y) * 2.0)
    x = core.tensor(np.linspace(-1, 1, 6))
    text = f.lower(x).as_text()
    assert text.count("kernel_call") == 1 and "sin" not in text
    np.testing.assert_allclose(f(x).asnumpy(), 2.0 * reference(x, y).asnumpy())
    assert calls  # the compiled graph called the kernel


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 6), m=st.integers(1, 4), seed=st.integers(0, 1000))
def test_derivatives_and_vmap_are_the_references(n, m, seed):
    rng = np.random.default_rng(seed)
    x = core.tensor(rng.normal(size=(m, n)))
    y = core.tensor(rng.normal(size=(m, n)))
    kernel = exact_kernel([])

    def with_kernel(x, y):
        return (_call(kernel, x, y) ** 2).sum()

    def plain(x, y):
        return (reference(x, y) ** 2).sum()

    for pos in (0, 1):
        a = core.grad(with_kernel, grad_position=pos)(x, y).asnumpy()
        b = core.grad(plain, grad_position=pos)(x, y).asnumpy()
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    # second order, forward mode, jit around grad and grad around jit
    h_a = core.grad(lambda x: core.grad(with_kernel)(x, y).sum())(x).asnumpy()
    h_b = core.grad(lambda x: core.grad(plain)(x, y).sum())(x).asnumpy()
    np.testing.assert_allclose(h_a, h_b, rtol=1e-12, atol=1e-12)
    t = core.tensor(rng.normal(size=(m, n)))
    _, ta = core.jvp(lambda x: _call(kernel, x, y), (x,), (t,))
    _, tb = core.jvp(lambda x: reference(x, y), (x,), (t,))
    np.testing.assert_allclose(ta.asnumpy(), tb.asnumpy(), rtol=1e-12, atol=1e-12)
    g = core.grad(plain)(x, y).asnumpy()
    np.testing.assert_allclose(core.jit(core.grad(with_kernel))(x, y).asnumpy(), g, rtol=1e-12)
    np.testing.assert_allclose(core.grad(core.jit(with_kernel))(x, y).asnumpy(), g, rtol=1e-12)
    # vmap over the rows: the reference batched
    v = core.vmap(lambda a, b: ops.kernel_call(reference, kernel, a, b, shape=(n,)))(x, y)
    np.testing.assert_allclose(v.asnumpy(), reference(x, y).asnumpy(), rtol=1e-12)


def test_derivative_of_finite_differences_in_float64():
    kernel = exact_kernel([])
    x0 = np.array([0.3, -0.7, 1.1])
    y = core.tensor(np.array([0.5, 2.0, -1.0]))
    f = lambda x: (_call(kernel, x, y) ** 3).sum()  # noqa: E731
    g = core.grad(f)(core.tensor(x0)).asnumpy()
    for i in range(3):
        e = np.zeros(3)
        e[i] = 1e-6
        fd = (
            float(f(core.tensor(x0 + e)).asnumpy()) - float(f(core.tensor(x0 - e)).asnumpy())
        ) / 2e-6
        np.testing.assert_allclose(g[i], fd, rtol=1e-7)
