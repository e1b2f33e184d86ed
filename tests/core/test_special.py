"""``core.ops.special`` and the numpy-style additions (gradient, diff, linspace with tensor
endpoints) against scipy/numpy, with derivatives of order 1 and 2 against finite differences;
and the regressions the HIPS/autograd peer suite found (std at its kink, numpy conversion of a
traced tensor, ``np.sum(tensor)``)."""

import math

import numpy as np
import pytest
import scipy.special as sps
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops
from diffsci.core.ops import special
from diffsci.core.testing import gradcheck

from ._helpers import away_from_zero, normal, positive


def _t(a):
    return core.Tensor(np.asarray(a, dtype=np.float64))


def _uniform(lo, hi, *shape):
    return lambda rng: rng.uniform(lo, hi, shape)


S = (2, 3)
# name, op, scipy/numpy reference, input generators (float64 values must match to 1e-12)
CASES = [
    ("gammaln", special.gammaln, sps.gammaln, [positive(*S)]),
    ("digamma", special.digamma, sps.digamma, [positive(*S)]),
    ("psi", special.psi, sps.psi, [_uniform(-1.9, -1.1, *S)]),
    (
        "polygamma_2",
        lambda x: special.polygamma(2, x),
        lambda x: sps.polygamma(2, x),
        [positive(*S)],
    ),
    ("erfc", special.erfc, sps.erfc, [normal(*S)]),
    ("erfcx", special.erfcx, sps.erfcx, [normal(*S)]),
    ("erfinv", special.erfinv, sps.erfinv, [_uniform(-0.9, 0.9, *S)]),
    ("erfcinv", special.erfcinv, sps.erfcinv, [_uniform(0.1, 1.9, *S)]),
    ("ndtr", special.ndtr, sps.ndtr, [normal(*S)]),
    ("log_ndtr", special.log_ndtr, sps.log_ndtr, [normal(*S)]),
    ("ndtri", special.ndtri, sps.ndtri, [_uniform(0.05, 0.95, *S)]),
    ("logit", special.logit, sps.logit, [_uniform(0.05, 0.95, *S)]),
    ("expit", special.expit, sps.expit, [normal(*S)]),
    ("log_expit", special.log_expit, sps.log_expit, [normal(*S)]),
    ("i0", special.i0, sps.i0, [normal(*S)]),
    ("i1", special.i1, sps.i1, [normal(*S)]),
    ("i0e", special.i0e, sps.i0e, [away_from_zero(*S)]),
    ("i1e", special.i1e, sps.i1e, [away_from_zero(*S)]),
    ("entr", special.entr, sps.entr, [positive(*S)]),
    ("sinc", special.sinc, np.sinc, [normal(*S)]),
    ("xlogy", special.xlogy, sps.xlogy, [normal(*S), positive(3)]),
    ("xlog1py", special.xlog1py, sps.xlog1py, [normal(*S), _uniform(-0.5, 2.0, *S)]),
    ("rel_entr", special.rel_entr, sps.rel_entr, [positive(*S), positive(*S)]),
    ("logsumexp", special.logsumexp, sps.logsumexp, [normal(*S)]),
]
PARAMS = [pytest.param(op, ref, gens, id=name) for name, op, ref, gens in CASES]


def _make(gens, seed=0):
    rng = np.random.default_rng(seed)
    return [g(rng) for g in gens]


@pytest.mark.parametrize(("op", "ref", "gens"), PARAMS)
def test_value_against_scipy(op, ref, gens):
    arrays = _make(gens)
    out = op(*[_t(a) for a in arrays])
    assert out.dtype == core.float64
    np.testing.assert_allclose(out.asnumpy(), ref(*arrays), rtol=1e-12, atol=1e-14)
    out32 = op(*[core.tensor(a.astype(np.float32)) for a in arrays])
    assert out32.dtype == core.float32, f"float32 inputs gave {out32.dtype}"
    np.testing.assert_allclose(out32.asnumpy(), ref(*arrays), rtol=3e-5, atol=3e-6)


@pytest.mark.parametrize(("op", "ref", "gens"), PARAMS)
def test_derivatives_of_order_1_and_2(op, ref, gens):
    gradcheck(op, [_t(a) for a in _make(gens)], order=2)


@pytest.mark.parametrize("axis", [None, 1])
def test_logsumexp_with_scale_factors(axis):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((3, 4)), np.exp(rng.standard_normal((3, 4)))
    got = special.logsumexp(_t(a), axis=axis, b=_t(b), keepdims=axis is None)
    np.testing.assert_allclose(
        got.asnumpy(), sps.logsumexp(a, axis=axis, b=b, keepdims=axis is None), rtol=1e-14
    )
    assert special.logsumexp(_t([1000.0, 1000.0]), b=_t([0.5, 0.5])).item() == 1000.0
    gradcheck(lambda a, b: special.logsumexp(a, axis=axis, b=b), [_t(a), _t(b)], order=2)


def test_integer_inputs_are_computed_in_float32():
    out = special.gammaln(core.tensor([1, 2, 5]))
    assert out.dtype == core.float32
    np.testing.assert_allclose(out.asnumpy(), sps.gammaln([1, 2, 5]), rtol=1e-6)


@settings(max_examples=15, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=0, max_size=3),
    which=st.sampled_from(["gammaln", "digamma", "erfc", "i1", "ndtr", "sinc", "logit"]),
    seed=st.integers(0, 100),
)
def test_values_for_varying_shapes(shape, which, seed):
    op, ref, _ = next(c[1:] for c in CASES if c[0] == which)
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.05, 0.95, tuple(shape))
    np.testing.assert_allclose(op(_t(x)).asnumpy(), ref(x), rtol=1e-12, atol=1e-14)
    stacked = np.stack([x, x * 0.5 + 0.2])
    np.testing.assert_allclose(
        core.vmap(op)(_t(stacked)).asnumpy(), ref(stacked), rtol=1e-12, atol=1e-14
    )


# ---- derivative identities and conventions -------------------------------------------------------
def test_derivative_chain_of_the_gamma_family():
    x = _t([0.7, 1.5, 4.0])
    np.testing.assert_allclose(
        core.grad(lambda x: special.gammaln(x).sum())(x).asnumpy(), sps.digamma(x.asnumpy())
    )
    d2 = core.grad(lambda x: core.grad(lambda x: special.digamma(x).sum())(x).sum())(x)
    np.testing.assert_allclose(d2.asnumpy(), sps.polygamma(2, x.asnumpy()), rtol=1e-12)
    g = core.grad(lambda x: special.i0(x).sum())(x)
    np.testing.assert_allclose(g.asnumpy(), sps.i1(x.asnumpy()), rtol=1e-12)


def test_polygamma_with_an_array_of_orders():
    x = np.array([0.5, 1.5, 2.5, 3.5])
    n = np.array([0, 1, 2, 1])
    np.testing.assert_allclose(
        special.polygamma(n, _t(x)).asnumpy(), sps.polygamma(n, x), rtol=1e-12
    )
    gradcheck(lambda x: special.polygamma([0, 1, 3, 2], x), [_t(x)], order=2)
    with pytest.raises(ValueError, match="polygamma: n must be non-negative integers"):
        special.polygamma(-1, _t(x))


def test_bessel_i1_at_zero_has_finite_derivatives():
    # i1' = i0 - i1 / x is 0/0 at x = 0 without the Taylor branch; i1'(0) = 1/2, i1''(0) = 0
    x = _t([0.0, 1e-6, -2e-5])
    g = core.grad(lambda x: special.i1(x).sum())(x)
    np.testing.assert_allclose(
        g.asnumpy(), 0.5 * (sps.i0(x.asnumpy()) + sps.iv(2, x.asnumpy())), rtol=1e-12
    )
    h = core.grad(lambda x: core.grad(lambda x: special.i1(x).sum())(x).sum())(x)
    np.testing.assert_allclose(h.asnumpy(), [0.0, 0.375e-6, -0.75e-5], atol=1e-12)


def test_sinc_at_zero_to_second_order():
    x = _t([0.0])
    assert special.sinc(x).item() == 1.0
    assert core.grad(lambda x: special.sinc(x).sum())(x).item() == 0.0
    h = core.grad(core.grad(lambda x: special.sinc(x).sum()))(x).item()
    np.testing.assert_allclose(h, -(math.pi**2) / 3, rtol=1e-12)


def test_xlogy_conventions_at_zero():
    x = _t([0.0, 0.0, 0.0, 2.0])
    y = _t([0.0, 3.0, -1.0, 3.0])
    np.testing.assert_array_equal(
        special.xlogy(x, y).asnumpy(), sps.xlogy(x.asnumpy(), y.asnumpy())
    )
    gx, gy = core.grad(lambda x, y: special.xlogy(x, y).sum(), (0, 1))(x, y)
    # d/dx = log y wherever y > 0 (also at x == 0); 0 where x == 0 and y <= 0; d/dy = x / y
    np.testing.assert_allclose(gx.asnumpy(), [0.0, np.log(3.0), 0.0, np.log(3.0)])
    np.testing.assert_allclose(gy.asnumpy(), [0.0, 0.0, 0.0, 2.0 / 3.0])
    assert np.isnan(special.xlogy(_t(0.0), _t(np.nan)).item())  # as scipy
    np.testing.assert_array_equal(
        special.xlog1py(_t([0.0, 0.0]), _t([-1.0, -2.0])).asnumpy(), [0.0, 0.0]
    )


def test_entropies_at_the_edges_of_their_domains():
    x = np.array([-1.0, 0.0, 0.5, np.nan, np.inf])
    np.testing.assert_array_equal(special.entr(_t(x)).asnumpy(), sps.entr(x))
    a = np.array([0.0, 0.0, 1.0, 1.0, -1.0, np.nan, 2.0])
    b = np.array([0.0, 2.0, 0.0, -1.0, 1.0, 1.0, 3.0])
    np.testing.assert_allclose(
        special.rel_entr(_t(a), _t(b)).asnumpy(), sps.rel_entr(a, b), rtol=1e-15
    )
    g = core.grad(lambda x: special.entr(x).sum())(_t([0.0, 0.5]))
    np.testing.assert_allclose(g.asnumpy(), [0.0, -np.log(0.5) - 1.0])


def test_tails_keep_their_precision():
    x = np.array([-40.0, -20.0, 6.0, 9.0])
    np.testing.assert_allclose(special.log_ndtr(_t(x)).asnumpy(), sps.log_ndtr(x), rtol=1e-14)
    np.testing.assert_allclose(special.erfc(_t(x)).asnumpy(), sps.erfc(x), rtol=1e-14)
    p = np.array([1e-300, 1e-20, 0.5 + 1e-9, 1.0 - 1e-12])
    np.testing.assert_allclose(special.ndtri(_t(p)).asnumpy(), sps.ndtri(p), rtol=1e-13)
    np.testing.assert_allclose(special.logit(_t(p)).asnumpy(), sps.logit(p), rtol=1e-13)
    # d/dx log ndtr(x) is the Mills ratio, finite where ndtr underflows (x = -40: about 40)
    g = core.grad(lambda x: special.log_ndtr(x).sum())(_t([-40.0]))
    np.testing.assert_allclose(g.item(), 40.02497, rtol=1e-6)


def test_elementwise_extremes_match_numpy():
    x = np.array([-1e300, -1e9, -3.0, -1e-12, 0.0, 1e-12, 3.0, 1e9, 1e300, np.inf, -np.inf])
    np.testing.assert_allclose(ops.arcsinh(_t(x)).asnumpy(), np.arcsinh(x), rtol=1e-15)
    c = np.array([1.0, 1.0 + 1e-12, 1.5, 1e9, 1e300, np.inf])
    np.testing.assert_allclose(ops.arccosh(_t(c)).asnumpy(), np.arccosh(c), rtol=1e-15)
    t = np.array([-1.0 + 1e-15, -1e-12, 0.0, 0.5, 1.0 - 1e-15])
    np.testing.assert_allclose(ops.arctanh(_t(t)).asnumpy(), np.arctanh(t), rtol=1e-15)
    a = np.array([0.0, 1000.0, -np.inf, np.inf, 800.0, 3.0])
    b = np.array([0.0, -1000.0, -np.inf, np.inf, 800.0, -np.inf])
    np.testing.assert_allclose(
        ops.logaddexp(_t(a), _t(b)).asnumpy(), np.logaddexp(a, b), rtol=1e-15
    )
    np.testing.assert_allclose(
        ops.logaddexp2(_t(a), _t(b)).asnumpy(), np.logaddexp2(a, b), rtol=1e-15
    )
    assert np.isnan(ops.logaddexp(_t(np.nan), _t(1.0)).item())
    # exact at powers of the base, as numpy
    assert ops.log10(_t(1000.0)).item() == 3.0 and ops.log2(_t(2.0**-40)).item() == -40.0
    assert ops.exp2(_t(10.0)).item() == 1024.0


def test_numpy_and_scipy_ufuncs_dispatch_to_core_ops():
    x = _t([0.5, 1.5])
    g = core.grad(lambda x: (np.arcsinh(x) + sps.gammaln(x) + np.logaddexp(x, 1.0)).sum())(x)
    expected = (
        1 / np.sqrt(1 + x.asnumpy() ** 2) + sps.digamma(x.asnumpy()) + sps.expit(x.asnumpy() - 1)
    )
    np.testing.assert_allclose(g.asnumpy(), expected, rtol=1e-12)


def test_special_functions_under_jit():
    f = core.jit(
        core.grad(lambda x: (special.gammaln(x) * special.erfcx(x) + special.i1e(x)).sum())
    )
    x = _t([0.5, 2.0, 7.0])
    eager = core.grad(lambda x: (special.gammaln(x) * special.erfcx(x) + special.i1e(x)).sum())(x)
    np.testing.assert_allclose(f(x).asnumpy(), eager.asnumpy(), rtol=1e-14)


# ---- numpy.gradient and diff ---------------------------------------------------------------------
@settings(max_examples=15, deadline=None)
@given(
    shape=st.lists(st.integers(3, 5), min_size=1, max_size=3),
    edge_order=st.sampled_from([1, 2]),
    coords=st.booleans(),
    seed=st.integers(0, 100),
)
def test_gradient_against_numpy(shape, edge_order, coords, seed):
    rng = np.random.default_rng(seed)
    f = rng.standard_normal(tuple(shape))
    spacing = [
        np.cumsum(rng.uniform(0.5, 1.5, n)) if coords else 0.5 + k for k, n in enumerate(shape)
    ]
    got = ops.gradient(_t(f), *[_t(s) if coords else s for s in spacing], edge_order=edge_order)
    expected = np.gradient(f, *spacing, edge_order=edge_order)
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.asnumpy(), e, rtol=1e-12, atol=1e-12)


def test_gradient_axis_argument_and_derivatives():
    rng = np.random.default_rng(0)
    f = rng.standard_normal((4, 5))
    x = np.cumsum(rng.uniform(0.5, 1.5, 5))
    got = ops.gradient(_t(f), _t(x), axis=-1, edge_order=2)
    np.testing.assert_allclose(got.asnumpy(), np.gradient(f, x, axis=-1, edge_order=2), rtol=1e-12)
    pair = ops.gradient(_t(f), axis=(1, 0))
    for g, e in zip(pair, np.gradient(f, axis=(1, 0))):
        np.testing.assert_allclose(g.asnumpy(), e)
    # differentiable in the samples and in the coordinates
    gradcheck(lambda f, x: ops.gradient(f, x, axis=1, edge_order=2), [_t(f), _t(x)], order=2)
    with pytest.raises(ValueError, match="edge_order=2 needs at least 3"):
        ops.gradient(_t([1.0, 2.0]), edge_order=2)


def test_diff_against_numpy():
    f = np.random.default_rng(1).standard_normal((3, 5))
    np.testing.assert_allclose(ops.diff(_t(f), n=2).asnumpy(), np.diff(f, n=2))
    np.testing.assert_allclose(
        ops.diff(_t(f), axis=0, prepend=0.5, append=_t(f[:1])).asnumpy(),
        np.diff(f, axis=0, prepend=0.5, append=f[:1]),
    )
    gradcheck(lambda f: ops.diff(f, n=2), [_t(f)], order=1)


# ---- creation ops with tensor arguments are differentiable ---------------------------------------
def test_linspace_with_tensor_endpoints_matches_numpy_and_differentiates():
    start, stop = _t([0.5, -1.0]), _t([2.0, 3.0])
    got = core.linspace(start, stop, 5, axis=1)
    np.testing.assert_allclose(got.asnumpy(), np.linspace([0.5, -1.0], [2.0, 3.0], 5, axis=1))
    # d/dstart of sum(linspace) = sum(1 - i / (n - 1)) = n / 2 (the regression: it was 0)
    g = core.grad(lambda a: core.linspace(a, 3.0, 4).sum())(_t(1.0))
    assert g.item() == pytest.approx(2.0)
    gradcheck(lambda a, b: core.linspace(a, b, 4, endpoint=False) ** 2, [_t(0.3), _t(1.7)], order=2)
    assert core.linspace(np.float64(0.0), 1.0, 3).dtype == core.float64  # numpy endpoints' dtype
    assert core.linspace(0.0, 1.0, 3).dtype == core.float32  # Python numbers are weak
    np.testing.assert_allclose(
        core.jit(lambda a, b: core.linspace(a, b, 3))(_t(0.0), _t(1.0)).asnumpy(), [0.0, 0.5, 1.0]
    )


def test_arange_and_full_with_tensor_arguments_differentiate():
    g = core.grad(lambda s: core.arange(0.0, 2.0, s).sum())(_t(0.5))  # 0 + s + 2 s + 3 s
    assert g.item() == pytest.approx(6.0)
    np.testing.assert_allclose(core.arange(_t(1.5), 5.0, 0.5).asnumpy(), np.arange(1.5, 5.0, 0.5))
    g = core.grad(lambda v: core.full((2, 3), v).sum())(_t(1.5))
    assert g.item() == 6.0


# ---- regressions from the autograd peer suite ------------------------------------------------------
def test_numpy_conversion_of_a_traced_tensor_raises():
    # np.asarray(tracer) used to hand numpy the value and drop the derivative (grad gave x, not 2x)
    x = _t([1.0, 2.0])
    with pytest.raises(TypeError, match=r"numpy conversion .* traced tensor"):
        core.grad(lambda x: (x * core.tensor(np.asarray(x))).sum())(x)
    with pytest.raises(TypeError, match="numpy conversion"):
        core.vmap(lambda r: np.linspace(r, 2.0, 3))(x)
    with pytest.raises(TypeError, match="Tensor\\(\\): the data is a traced tensor"):
        core.grad(lambda x: (x * core.Tensor(x)).sum())(x)
    np.testing.assert_array_equal(np.asarray(x), [1.0, 2.0])  # concrete tensors still convert
    # integer conversion has no derivative to drop; a tracer that escaped its finished
    # transformation holds a plain value
    core.grad(lambda x: (x * float(np.int64(x[0]))).sum())(x)
    leaked = []
    core.grad(lambda x: leaked.append(x * 2.0) or (x * x).sum())(x)
    np.testing.assert_array_equal(np.asarray(leaked[0]), [2.0, 4.0])
    # inside a transformation that differentiates them, Parameters are traced too
    p = core.Parameter(_t([1.0, 2.0]), name="p")
    with pytest.raises(TypeError, match="numpy conversion"):
        core.grad(lambda: (p * core.tensor(np.asarray(p))).sum(), None, [p])()


@pytest.mark.parametrize("ddof", [0, 1])
def test_std_where_the_variance_is_zero_has_gradient_zero(ddof):
    # one element (ddof=0), or equal elements: std is 0 with a kink; the derivatives were nan
    x = _t([3.0]) if ddof == 0 else _t([2.0, 2.0, 2.0])
    f = lambda x: ops.std(x, ddof=ddof)  # noqa: E731
    assert f(x).item() == 0.0
    np.testing.assert_array_equal(core.grad(f)(x).asnumpy(), np.zeros(x.shape))
    np.testing.assert_array_equal(core.hessian(f)(x).asnumpy(), np.zeros(x.shape * 2))
    _, tangent = core.jvp(f, (x,), (core.ones_like(x),))
    assert tangent.item() == 0.0
    g = core.grad(lambda x: ops.var(x, ddof=ddof))(x)
    np.testing.assert_array_equal(g.asnumpy(), np.zeros(x.shape))
    # elsewhere std keeps its derivatives
    gradcheck(
        lambda x: ops.std(x, axis=1, ddof=ddof), [_t([[0.3, 1.2, -0.4], [2.0, 0.1, 0.5]])], order=2
    )


def test_var_with_no_degrees_of_freedom_is_nan_as_numpy():
    with np.errstate(invalid="ignore"):
        assert np.isnan(ops.var(_t([1.0]), ddof=1).item())


def test_numpy_reductions_accept_out_none():
    a = np.arange(6.0).reshape(2, 3)
    x = _t(a)
    for fn in (np.sum, np.prod, np.max, np.min, np.mean, np.std, np.var, np.argmax, np.argmin,
               np.all, np.any, np.cumsum, np.cumprod):  # fmt: skip
        np.testing.assert_allclose(np.asarray(fn(x)), fn(a), err_msg=fn.__name__)
    np.testing.assert_allclose(np.sum(x, axis=1).asnumpy(), a.sum(axis=1))
    assert np.mean(x, dtype=np.float32).dtype == core.float32
    with pytest.raises(TypeError, match=r"Tensor\.sum: out= is not supported"):
        np.sum(x, out=np.empty(()))
    g = core.grad(lambda x: np.sum(x * x))(x)  # np.sum of a traced tensor keeps its derivative
    np.testing.assert_allclose(g.asnumpy(), 2 * a)


def test_ravel():
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(_t(a).ravel().asnumpy(), a.ravel())
    g = core.grad(lambda x: (x.ravel() * _t(np.arange(6.0))).sum())(_t(a))
    np.testing.assert_array_equal(g.asnumpy(), a)
