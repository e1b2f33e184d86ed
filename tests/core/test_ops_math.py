"""Elementwise and reduction ops of ``core.ops`` against numpy/scipy, with gradchecks."""

import math

import numpy as np
import pytest
import scipy.special as sps

from diffsci import core
from diffsci.core import ops
from diffsci.core.testing import gradcheck

from ._helpers import ALL_DTYPES, away_from_zero, normal, positive, unit


def _np(t):
    return t.asnumpy()


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


S = (2, 3)
# name, op, numpy reference, input generators
UNARY = [
    ("neg", ops.neg, np.negative, normal(*S)),
    ("abs", ops.abs, np.abs, away_from_zero(*S)),
    ("exp", ops.exp, np.exp, normal(*S)),
    ("expm1", ops.expm1, np.expm1, normal(*S)),
    ("log", ops.log, np.log, positive(*S)),
    ("log1p", ops.log1p, np.log1p, positive(*S)),
    ("sqrt", ops.sqrt, np.sqrt, positive(*S)),
    ("rsqrt", ops.rsqrt, lambda x: 1 / np.sqrt(x), positive(*S)),
    ("square", ops.square, np.square, normal(*S)),
    ("reciprocal", ops.reciprocal, np.reciprocal, positive(*S)),
    ("sin", ops.sin, np.sin, normal(*S)),
    ("cos", ops.cos, np.cos, normal(*S)),
    ("tan", ops.tan, np.tan, unit(*S)),
    ("tanh", ops.tanh, np.tanh, normal(*S)),
    ("sinh", ops.sinh, np.sinh, normal(*S)),
    ("cosh", ops.cosh, np.cosh, normal(*S)),
    ("arcsin", ops.arcsin, np.arcsin, unit(*S)),
    ("arccos", ops.arccos, np.arccos, unit(*S)),
    ("arctan", ops.arctan, np.arctan, normal(*S)),
    ("sigmoid", ops.sigmoid, sps.expit, normal(*S)),
    ("softplus", ops.softplus, lambda x: np.logaddexp(0, x), normal(*S)),
    (
        "softplus_beta",
        lambda x: ops.softplus(x, beta=2.0),
        lambda x: np.logaddexp(0, 2 * x) / 2,
        normal(*S),
    ),
    ("relu", ops.relu, lambda x: np.maximum(x, 0), away_from_zero(*S)),
    ("leaky_relu", ops.leaky_relu, lambda x: np.where(x > 0, x, 0.01 * x), away_from_zero(*S)),
    ("gelu", ops.gelu, lambda x: 0.5 * x * (1 + sps.erf(x / np.sqrt(2))), normal(*S)),
    ("gelu_tanh", lambda x: ops.gelu(x, approximate="tanh"), _gelu_tanh, normal(*S)),
    ("silu", ops.silu, lambda x: x * sps.expit(x), normal(*S)),
    ("erf", ops.erf, sps.erf, normal(*S)),
    (
        "clip",
        lambda x: ops.clip(x, -0.5, 0.7),
        lambda x: np.clip(x, -0.5, 0.7),
        lambda rng: np.array([[-1.0, -0.2, 0.3], [0.9, 0.1, -0.7]]),
    ),
    (
        "clip_min_only",
        lambda x: ops.clip(x, min=0.1),
        lambda x: np.maximum(x, 0.1),
        lambda rng: np.array([[-1.0, -0.2, 0.3], [0.9, 0.15, -0.7]]),
    ),
    (
        "angle",
        lambda x: ops.angle(ops.complex(x, ops.ones_like(x))),
        lambda x: np.angle(x + 1j),
        normal(*S),
    ),
    ("arcsinh", ops.arcsinh, np.arcsinh, normal(*S)),
    ("arccosh", ops.arccosh, np.arccosh, lambda rng: rng.uniform(1.1, 4.0, S)),
    ("arctanh", ops.arctanh, np.arctanh, unit(*S)),
    ("exp2", ops.exp2, np.exp2, normal(*S)),
    ("log2", ops.log2, np.log2, positive(*S)),
    ("log10", ops.log10, np.log10, positive(*S)),
    ("deg2rad", ops.deg2rad, np.deg2rad, normal(*S)),
    ("rad2deg", ops.rad2deg, np.rad2deg, normal(*S)),
]
NONDIFF = [
    ("sign", ops.sign, np.sign, away_from_zero(*S)),
    ("floor", ops.floor, np.floor, normal(*S)),
    ("ceil", ops.ceil, np.ceil, normal(*S)),
    ("round", ops.round, np.round, lambda rng: np.array([[0.5, 1.5, 2.5], [-0.5, -1.4, 3.7]])),
]
BINARY = [
    ("add", ops.add, np.add, normal(*S), normal(3)),
    ("sub", ops.sub, np.subtract, normal(*S), normal(2, 1)),
    ("mul", ops.mul, np.multiply, normal(*S), normal(*S)),
    ("div", ops.div, np.true_divide, normal(*S), away_from_zero(3)),
    ("pow", ops.pow, np.power, positive(*S), normal(*S)),
    (
        "maximum",
        ops.maximum,
        np.maximum,
        lambda rng: np.arange(6.0).reshape(S),
        lambda rng: np.array([2.5, 0.5, 4.5]),
    ),
    (
        "minimum",
        ops.minimum,
        np.minimum,
        lambda rng: np.arange(6.0).reshape(S),
        lambda rng: np.array([2.5, 0.5, 4.5]),
    ),
    (
        "mod",
        ops.mod,
        np.mod,
        lambda rng: rng.uniform(-3, 3, S),
        lambda rng: np.array([0.7, -1.3, 2.1]),
    ),
    ("arctan2", ops.arctan2, np.arctan2, normal(*S), away_from_zero(*S)),
    ("logaddexp", ops.logaddexp, np.logaddexp, normal(*S), normal(3)),
    ("logaddexp2", ops.logaddexp2, np.logaddexp2, normal(*S), normal(2, 1)),
    # ties: the first and second derivatives are exact there too (1/2 and 1/4 of each side)
    (
        "logaddexp_ties",
        ops.logaddexp,
        np.logaddexp,
        lambda rng: np.array([[0.5, -1.0, 2.0], [0.0, 3.0, -0.5]]),
        lambda rng: np.array([[0.5, -1.0, 2.0], [0.0, 3.0, -0.5]]),
    ),
]

ALL_DIFF = [pytest.param(op, ref, [g], id=name) for name, op, ref, g in UNARY] + [
    pytest.param(op, ref, [g1, g2], id=name) for name, op, ref, g1, g2 in BINARY
]


def _make(gens, seed=0):
    rng = np.random.default_rng(seed)
    return [g(rng) for g in gens]


@pytest.mark.parametrize(
    ("op", "ref", "gens"),
    ALL_DIFF + [pytest.param(op, ref, [g], id=n) for n, op, ref, g in NONDIFF],
)
def test_value_float64_and_float32(op, ref, gens):
    arrays = _make(gens)
    out = op(*[core.Tensor(a) for a in arrays])
    assert out.dtype == core.float64
    np.testing.assert_allclose(_np(out), ref(*arrays), rtol=1e-12, atol=1e-12)
    out32 = op(*[core.tensor(a.astype(np.float32)) for a in arrays])
    assert out32.dtype == core.float32, f"float32 inputs gave {out32.dtype}"
    np.testing.assert_allclose(_np(out32), ref(*arrays), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize(("op", "ref", "gens"), ALL_DIFF)
def test_gradcheck(op, ref, gens):
    gradcheck(op, [core.Tensor(a) for a in _make(gens)], order=2)


@pytest.mark.parametrize(("op", "ref", "gens"), [p for p in ALL_DIFF if len(p.values[2]) == 1])
def test_vmap_of_unary_ops(op, ref, gens):
    xs = np.stack([_make(gens, seed)[0] for seed in range(3)], axis=1)
    out = core.vmap(op, in_axes=1, out_axes=-1)(core.Tensor(xs))
    expected = np.stack([_np(op(core.Tensor(xs[:, k]))) for k in range(3)], axis=-1)
    np.testing.assert_allclose(_np(out), expected, rtol=1e-12, atol=1e-12)


def test_nondifferentiable_ops_have_zero_gradient():
    x = core.tensor([0.3, -1.7, 2.2], dtype="float64")
    for op in (ops.sign, ops.floor, ops.ceil, ops.round):
        g = core.grad(lambda x, op=op: (op(x) * x).sum())(x)
        np.testing.assert_allclose(_np(g), _np(op(x)))


def test_stable_extremes():
    big = core.tensor([-1000.0, -50.0, 0.0, 50.0, 1000.0])
    np.testing.assert_allclose(
        _np(ops.sigmoid(big)),
        sps.expit(np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0], np.float32)),
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        _np(ops.softplus(big)), [0.0, np.exp(-50.0), np.log(2.0), 50.0, 1000.0], rtol=1e-6
    )
    g = core.grad(lambda x: ops.softplus(x).sum())(big)
    np.testing.assert_allclose(_np(g), sps.expit(_np(big)), rtol=1e-6)
    assert np.all(np.isfinite(_np(core.grad(lambda x: ops.sigmoid(x).sum())(big))))
    np.testing.assert_allclose(
        _np(ops.sinh(core.tensor([1e-8], dtype="float64"))), [1e-8], rtol=1e-12
    )


def test_maximum_tie_splits_gradient():
    x = core.tensor([1.0, 2.0], dtype="float64")
    gx, gy = core.grad(lambda x, y: ops.maximum(x, y).sum(), (0, 1))(
        x, core.tensor([1.0, 3.0], dtype="float64")
    )
    np.testing.assert_allclose(_np(gx), [0.5, 0.0])
    np.testing.assert_allclose(_np(gy), [0.5, 1.0])


def test_pow_with_python_exponents():
    x = core.tensor([-2.0, 0.0, 3.0], dtype="float64")
    for p in (0, 1, 2, 3, -1.0 if False else 2.0, 0.5):
        xs = np.abs(_np(x)) if p == 0.5 else _np(x)
        out = ops.pow(core.Tensor(xs), p)
        np.testing.assert_allclose(_np(out), xs**p)
    g = core.grad(lambda x: (x**3).sum())(x)
    np.testing.assert_allclose(_np(g), 3 * _np(x) ** 2)
    assert ops.pow(core.tensor([2, 3]), 2).dtype == core.int64
    assert ops.pow(core.tensor([2, 3]), 0.5).dtype == core.float32
    np.testing.assert_allclose(_np(ops.pow(2.0, core.tensor([1.0, 3.0]))), [2.0, 8.0])


def test_integer_arithmetic():
    a = np.array([7, -7, 5, 0])
    b = np.array([2, 2, -3, 4])
    ta, tb = core.tensor(a), core.tensor(b)
    np.testing.assert_array_equal(_np(ops.floor_divide(ta, tb)), a // b)
    np.testing.assert_array_equal(_np(ops.mod(ta, tb)), a % b)
    assert ops.div(ta, tb).dtype == core.float32
    np.testing.assert_allclose(_np(ops.div(ta, tb)), a / b, rtol=1e-6)
    assert ops.sqrt(core.tensor([4, 9])).dtype == core.float32


@pytest.mark.parametrize(
    ("op", "ref"),
    [
        (ops.equal, np.equal),
        (ops.not_equal, np.not_equal),
        (ops.less, np.less),
        (ops.less_equal, np.less_equal),
        (ops.greater, np.greater),
        (ops.greater_equal, np.greater_equal),
    ],
    ids=lambda f: getattr(f, "__name__", ""),
)
def test_comparisons(op, ref):
    a = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    b = np.array([2.0, 2.0, 2.0])
    out = op(core.Tensor(a), core.Tensor(b))
    assert out.dtype == core.bool_
    np.testing.assert_array_equal(_np(out), ref(a, b))
    np.testing.assert_array_equal(_np(op(core.Tensor(a), 2)), ref(a, 2))
    np.testing.assert_array_equal(_np(op(2.0, core.Tensor(a))), ref(2.0, a))


def test_logical_and_bitwise_ops():
    p = np.array([True, True, False, False])
    q = np.array([True, False, True, False])
    tp, tq = core.tensor(p), core.tensor(q)
    np.testing.assert_array_equal(_np(ops.logical_and(tp, tq)), p & q)
    np.testing.assert_array_equal(_np(ops.logical_or(tp, tq)), p | q)
    np.testing.assert_array_equal(_np(ops.logical_xor(tp, tq)), p ^ q)
    np.testing.assert_array_equal(_np(ops.logical_not(tp)), ~p)
    i, j = np.array([12, 10, -3]), np.array([10, 6, 5])
    np.testing.assert_array_equal(_np(ops.bitwise_and(core.tensor(i), core.tensor(j))), i & j)
    np.testing.assert_array_equal(_np(ops.bitwise_or(core.tensor(i), core.tensor(j))), i | j)
    np.testing.assert_array_equal(_np(ops.bitwise_xor(core.tensor(i), core.tensor(j))), i ^ j)
    np.testing.assert_array_equal(_np(ops.bitwise_not(core.tensor(i))), ~i)
    with pytest.raises(TypeError, match="logical_and"):
        ops.logical_and(core.tensor([1.0]), core.tensor([0.0]))
    np.testing.assert_array_equal(_np(ops.isnan(core.tensor([1.0, np.nan]))), [False, True])
    np.testing.assert_array_equal(
        _np(ops.isfinite(core.tensor([1.0, np.inf, np.nan]))), [True, False, False]
    )


def test_where():
    c = np.array([[True, False, True], [False, False, True]])
    x, y = np.arange(6.0).reshape(2, 3), np.array([-1.0, -2.0, -3.0])
    out = ops.where(core.tensor(c), core.Tensor(x), core.Tensor(y))
    np.testing.assert_array_equal(_np(out), np.where(c, x, y))
    np.testing.assert_array_equal(_np(ops.where(core.tensor([1, 0, 2]), 1.0, 0.0)), [1.0, 0.0, 1.0])
    gradcheck(
        lambda x, y: ops.where(core.tensor(c), x, y), [core.Tensor(x), core.Tensor(y)], order=2
    )


def test_complex_parts():
    re, im = np.array([1.0, -2.0]), np.array([0.5, 3.0])
    z = ops.complex(core.Tensor(re), core.Tensor(im))
    assert z.dtype == core.complex128
    np.testing.assert_array_equal(_np(z), re + 1j * im)
    assert ops.complex(core.tensor([1.0]), core.tensor([2.0])).dtype == core.complex64
    np.testing.assert_array_equal(_np(ops.real(z)), re)
    np.testing.assert_array_equal(_np(ops.imag(z)), im)
    np.testing.assert_array_equal(_np(ops.conj(z)), re - 1j * im)
    np.testing.assert_array_equal(_np(ops.conj(core.Tensor(re))), re)
    np.testing.assert_allclose(_np(ops.abs(z)), np.abs(re + 1j * im))
    assert ops.abs(z).dtype == core.float64
    gradcheck(
        lambda a, b: (
            ops.abs(ops.complex(a, b)) + ops.real(ops.conj(ops.complex(a, b)) * ops.complex(b, a))
        ),
        [core.Tensor(re), core.Tensor(im)],
        order=2,
    )


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_astype_roundtrip(dtype):
    x = np.array([0.0, 1.0, 2.0, 3.0])
    t = ops.astype(core.Tensor(x), dtype)
    assert t.dtype == core.dtypes.canonical(dtype)
    np.testing.assert_array_equal(
        np.real(_np(t)).astype(np.float64), np.minimum(x, 1.0) if dtype == "bool" else x
    )
    assert ops.astype(t, dtype) is t
    back = ops.astype(t, "float64")
    assert back.dtype == core.float64


def test_astype_gradient():
    x = core.tensor([1.0, 2.0], dtype="float64")
    g = core.grad(lambda x: (ops.astype(x, "float32") ** 2).sum())(x)
    assert g.dtype == core.float64
    np.testing.assert_allclose(_np(g), [2.0, 4.0])
    g = core.grad(lambda x: ops.real(ops.astype(x, "complex128") * (1 + 2j)).sum())(x)
    np.testing.assert_allclose(_np(g), [1.0, 1.0])
    assert np.all(
        _np(core.grad(lambda x: ops.astype(ops.astype(x, "int64"), "float64").sum())(x)) == 0
    )


# ---- reductions ---------------------------------------------------------------------------------
X = np.random.default_rng(3).standard_normal((2, 3, 4))
AXES = [None, 0, -1, (0, 2), (1,)]


@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize(
    ("name", "op", "ref"),
    [
        ("sum", ops.sum, np.sum),
        ("mean", ops.mean, np.mean),
        ("prod", ops.prod, np.prod),
        ("max", ops.max, np.max),
        ("min", ops.min, np.min),
        ("var", ops.var, np.var),
        ("std", ops.std, np.std),
        ("logsumexp", ops.logsumexp, sps.logsumexp),
        (
            "norm",
            ops.norm,
            lambda x, axis, keepdims: np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims)),
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_reductions(name, op, ref, axis, keepdims):
    x = core.Tensor(X)
    out = op(x, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(
        _np(out), ref(X, axis=axis, keepdims=keepdims), rtol=1e-12, atol=1e-12
    )
    if axis in (None, (0, 2)):
        small = core.Tensor(X[:, :2, :2])
        gradcheck(
            lambda t: op(t, axis=axis, keepdims=keepdims),
            [small],
            order=2 if name != "std" or True else 1,
        )


def test_reduction_dtypes():
    i = core.tensor([[1, 2], [3, 4]])
    assert ops.sum(i).dtype == core.int64 and ops.sum(i).item() == 10
    assert ops.sum(core.tensor([True, True, False])).item() == 2
    assert ops.mean(i).dtype == core.float32 and ops.mean(i).item() == 2.5
    assert ops.sum(i, dtype="float64").dtype == core.float64
    assert ops.max(core.tensor([1.0, 2.0])).dtype == core.float32
    assert ops.argmax(core.tensor([1.0, 3.0, 2.0])).dtype == core.int64


def test_var_std_ddof():
    x = core.Tensor(X)
    np.testing.assert_allclose(_np(ops.var(x, axis=1, ddof=1)), np.var(X, axis=1, ddof=1))
    np.testing.assert_allclose(
        _np(ops.std(x, axis=(0, 1), unbiased=True)), np.std(X, axis=(0, 1), ddof=1)
    )
    z = core.Tensor(X[0] + 1j * X[1])
    np.testing.assert_allclose(_np(ops.var(z, axis=0)), np.var(X[0] + 1j * X[1], axis=0))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_argmax_argmin(axis):
    x = np.random.default_rng(0).permutation(12).reshape(3, 4).astype(np.float64)
    np.testing.assert_array_equal(
        _np(ops.argmax(core.Tensor(x), axis=axis)), np.argmax(x, axis=axis)
    )
    np.testing.assert_array_equal(
        _np(ops.argmin(core.Tensor(x), axis=axis)), np.argmin(x, axis=axis)
    )
    if axis is not None:
        np.testing.assert_array_equal(
            _np(ops.argmax(core.Tensor(x), axis=axis, keepdims=True)),
            np.argmax(x, axis=axis, keepdims=True),
        )


def test_prod_gradient_exact_with_zeros():
    for a in ([0.0, 2.0, 3.0], [2.0, 0.0, 0.0], [1.5, -2.0, 4.0], [0.0, 0.0, 0.0]):
        a = np.array(a)
        g = core.grad(lambda x: ops.prod(x))(core.Tensor(a))
        expected = [np.prod(np.delete(a, i)) for i in range(3)]
        np.testing.assert_allclose(_np(g), expected, rtol=1e-14)
        h = core.hessian(lambda x: ops.prod(x))(core.Tensor(a))
        expected_h = [
            [0.0 if i == j else np.prod(np.delete(a, [i, j])) for j in range(3)] for i in range(3)
        ]
        np.testing.assert_allclose(_np(h), expected_h, rtol=1e-14)
    gradcheck(
        lambda x: ops.prod(x, axis=1),
        [core.Tensor(np.array([[0.0, 1.5, -2.0], [0.0, 0.0, 0.7]]))],
        order=2,
    )


def test_logsumexp_stable():
    x = core.tensor([[1000.0, 1000.0], [-1000.0, -np.inf]], dtype="float64")
    np.testing.assert_allclose(_np(ops.logsumexp(x, axis=1)), [1000.0 + np.log(2.0), -1000.0])
    all_inf = core.tensor([-np.inf, -np.inf], dtype="float64")
    with np.errstate(divide="ignore"):  # log(0), as numpy
        assert _np(ops.logsumexp(all_inf)) == -np.inf
    g = core.grad(lambda x: ops.logsumexp(x))(
        core.tensor([1000.0, 1000.0, -np.inf], dtype="float64")
    )
    np.testing.assert_allclose(_np(g), [0.5, 0.5, 0.0])


@pytest.mark.parametrize("ord", [None, 1, 2, 3, float("inf"), -float("inf"), "fro"], ids=str)
def test_norm_orders(ord):
    x = np.array([[0.5, -2.0, 1.5], [3.0, -0.25, 1.0]])
    out = ops.norm(core.Tensor(x), ord=ord, axis=1)
    ref = np.linalg.norm(x, ord=2 if ord in (None, "fro") else ord, axis=1)
    np.testing.assert_allclose(_np(out), ref, rtol=1e-12)
    gradcheck(lambda t: ops.norm(t, ord=ord, axis=1), [core.Tensor(x)], order=1)
    z = x + 1j * x[::-1]
    np.testing.assert_allclose(
        _np(ops.norm(core.Tensor(z), ord=ord, axis=1)),
        np.linalg.norm(z, ord=2 if ord in (None, "fro") else ord, axis=1),
        rtol=1e-12,
    )


def test_norm_ord_zero_counts_nonzeros():
    x = np.array([[0.0, 2.0, -1.0], [0.0, 0.0, 3.0]])
    np.testing.assert_array_equal(
        _np(ops.norm(core.Tensor(x), ord=0, axis=1)), np.linalg.norm(x, ord=0, axis=1)
    )


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum_cumprod(axis, reverse):
    x = np.array([[0.5, -2.0, 1.5], [3.0, 0.0, 1.0]])

    def ref(f, a):
        if reverse:
            return np.flip(f(np.flip(a, axis), axis=axis), axis)
        return f(a, axis=axis)

    np.testing.assert_allclose(_np(ops.cumsum(core.Tensor(x), axis, reverse)), ref(np.cumsum, x))
    np.testing.assert_allclose(_np(ops.cumprod(core.Tensor(x), axis, reverse)), ref(np.cumprod, x))
    gradcheck(lambda t: ops.cumsum(t, axis, reverse), [core.Tensor(x)], order=1)
    gradcheck(lambda t: ops.cumprod(t, axis, reverse), [core.Tensor(x)], order=2)
    np.testing.assert_array_equal(_np(ops.cumsum(core.tensor([True, False, True]))), [1, 1, 2])


def test_all_any():
    x = np.array([[1, 0, 2], [3, 4, 5]])
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(_np(ops.all(core.tensor(x), axis=axis)), np.all(x, axis=axis))
        np.testing.assert_array_equal(_np(ops.any(core.tensor(x), axis=axis)), np.any(x, axis=axis))
    assert ops.all(core.tensor(x)).dtype == core.bool_


def test_reduction_errors_name_the_op():
    with pytest.raises(ValueError, match="sum: axis 3 out of range"):
        ops.sum(core.Tensor(X), axis=3)
    with pytest.raises(ValueError, match="max: reduction of an empty tensor"):
        ops.max(core.zeros(0))
    with pytest.raises(ValueError, match="repeated axis"):
        ops.mean(core.Tensor(X), axis=(1, -2))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_reductions_accumulate_in_float32(dtype):
    ones = core.ones(3000, dtype=dtype)
    assert ops.sum(ones).dtype == core.dtypes.canonical(dtype)
    assert ops.sum(ones).item() == pytest.approx(3000, rel=1e-2)
    assert ops.cumsum(ones)[-1].item() == pytest.approx(3000, rel=1e-2)
    big = core.full((100000,), 2.0, dtype=dtype)
    assert ops.mean(big).item() == 2.0 and ops.mean(big).dtype == core.dtypes.canonical(dtype)
    assert ops.var(big).item() == 0.0
    assert ops.prod(core.full((20,), 1.5, dtype=dtype)).item() == pytest.approx(1.5**20, rel=1e-2)


def test_mean_of_float32_is_accurate():
    x = core.ones(1000, dtype="float32") * 0.1
    assert abs(ops.mean(x).item() - 0.1) < 1e-6
    assert math.isclose(ops.sum(core.tensor([0.1] * 10, dtype="float64")).item(), 1.0)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_erf_in_single_and_half_precision_is_accurate(dtype):
    # float32 erf is a rational approximation evaluated block by block (speed): it must match
    # scipy's float64 erf to a few float32 ulps everywhere, including past the clamp at |x| = 4
    x = np.concatenate([np.linspace(-7, 7, 200_001), [0.0, -0.0, 1e-30, -1e-30, 3.9999, 4.0001]])
    dt = core.dtypes.canonical(dtype)
    xs = x.astype(dt)
    out = ops.erf(core.tensor(xs)).asnumpy()
    assert out.dtype == dt
    ref = sps.erf(xs.astype(np.float64))
    tol = {"float32": 1e-6, "float16": 1e-3, "bfloat16": 8e-3}[dtype]
    np.testing.assert_allclose(out.astype(np.float64), ref, atol=tol, rtol=0)
    assert np.all(np.abs(out.astype(np.float64)) <= 1.0)
