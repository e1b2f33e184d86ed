"""``core.numpy`` against numpy: the functions the HIPS/autograd peer suite found missing
(values against numpy, derivatives of order 1 and 2 against finite differences in float64,
and ``vmap``/``jit`` where the function is a composite of core ops), and the peer suite's
regressions (list dtypes, ``Tensor.real``, ``swapaxes`` keywords, ``hstack`` of 0-d tensors,
``select``'s default, ``pad``'s width forms, one-argument ``where``, ``grad`` of a constant)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import numpy as mnp
from diffsci.core.testing import gradcheck


def _t(a):
    return core.Tensor(np.asarray(a, dtype=np.float64))


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _close(got, want, **kw):
    assert isinstance(got, core.Tensor), type(got)
    np.testing.assert_allclose(got.asnumpy(), want, **kw)
    assert tuple(got.shape) == np.shape(want)


# ---- the missing functions: value against numpy, derivatives of order 1 and 2 --------------------
A = _rand(4, 5)
B = _rand(4, 5, seed=1)
V = _rand(6, seed=2)
CUBE = _rand(2, 3, 4, seed=3)
# name, core.numpy function, numpy reference, float64 inputs
CASES = [
    ("hypot", mnp.hypot, np.hypot, [A, B]),
    ("hypot_broadcast", mnp.hypot, np.hypot, [A, V[:5]]),
    ("fabs", mnp.fabs, np.fabs, [A + np.sign(A) * 0.1]),
    ("fmax", mnp.fmax, np.fmax, [A, B]),
    ("fmin", mnp.fmin, np.fmin, [A, B]),
    ("conjugate", mnp.conjugate, np.conjugate, [A]),
    ("nan_to_num", mnp.nan_to_num, np.nan_to_num, [A]),
    ("flipud", mnp.flipud, np.flipud, [A]),
    ("fliplr", mnp.fliplr, np.fliplr, [A]),
    ("rot90", mnp.rot90, np.rot90, [A]),
    ("rot90_k3_axes", lambda m: mnp.rot90(m, 3, (2, 0)), lambda m: np.rot90(m, 3, (2, 0)), [CUBE]),
    ("diag_of_matrix", lambda m: mnp.diag(m, 1), lambda m: np.diag(m, 1), [A]),
    ("diag_of_vector", lambda v: mnp.diag(v, -2), lambda v: np.diag(v, -2), [V]),
    ("diagflat", lambda m: mnp.diagflat(m, 1), lambda m: np.diagflat(m, 1), [A[:2, :3]]),
    ("diagonal_3d", lambda m: mnp.diagonal(m, -1, 2, 0), lambda m: np.diagonal(m, -1, 2, 0), [CUBE]),
    ("partition", lambda v: mnp.partition(v, 2), lambda v: np.sort(v), [V]),
    ("atleast_1d", mnp.atleast_1d, np.atleast_1d, [np.float64(1.5)]),
    ("atleast_2d", mnp.atleast_2d, np.atleast_2d, [V]),
    ("atleast_3d", mnp.atleast_3d, np.atleast_3d, [A]),
    ("rollaxis", lambda m: mnp.rollaxis(m, 2, 1), lambda m: np.rollaxis(m, 2, 1), [CUBE]),
    ("swapaxes", lambda m: mnp.swapaxes(m, axis1=0, axis2=2), lambda m: m.swapaxes(0, 2), [CUBE]),
    ("column_stack", lambda a, b: mnp.column_stack((a, b)), lambda a, b: np.column_stack((a, b)), [V, V[::-1]]),
    ("row_stack", lambda a, b: mnp.row_stack((a, b)), lambda a, b: np.vstack((a, b)), [A[0], B[1]]),
    ("dstack", lambda a, b: mnp.dstack((a, b)), lambda a, b: np.dstack((a, b)), [A, B]),
    ("hstack_0d", lambda a, b: mnp.hstack((a, b)), lambda a, b: np.hstack((a, b)), [V[0], V[1]]),
    ("select", lambda a, b, d: mnp.select([a > 0, b > 0], [a, b], d), lambda a, b, d: np.select([a > 0, b > 0], [a, b], d), [A, B, B[0]]),
    ("pad_int", lambda m: mnp.pad(m, 2), lambda m: np.pad(m, 2), [A]),
    ("pad_symmetric", lambda m: mnp.pad(m, ((1, 2), (3, 0)), "symmetric"), lambda m: np.pad(m, ((1, 2), (3, 0)), "symmetric"), [A]),
    ("r_", lambda a, b: mnp.r_[a, b, 1:3, 0.5], lambda a, b: np.r_[a, b, 1:3, 0.5], [V, V[:2]]),
    ("c_", lambda a, b: mnp.c_[a, b, a], lambda a, b: np.c_[a, b, a], [A, B]),
]  # fmt: skip
PARAMS = [pytest.param(f, ref, xs, id=name) for name, f, ref, xs in CASES]


@pytest.mark.parametrize(("fn", "ref", "inputs"), PARAMS)
def test_value_against_numpy(fn, ref, inputs):
    got = fn(*[_t(x) for x in inputs])
    want = ref(*inputs)
    assert got.dtype == want.dtype == np.float64, (got.dtype, want.dtype)
    _close(got, want, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize(("fn", "ref", "inputs"), PARAMS)
def test_derivatives_of_order_1_and_2(fn, ref, inputs):
    gradcheck(fn, [_t(x) for x in inputs], order=2)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: mnp.hypot(x, x[::-1] * 0.5),
        lambda x: mnp.fmax(x, 0.1),
        lambda x: mnp.nan_to_num(x / x[0]),
        lambda x: mnp.diag(x, 1),
        lambda x: mnp.diagonal(mnp.diag_embed(x, -1), -1),
        lambda x: mnp.rot90(mnp.atleast_2d(x)),
        lambda x: mnp.partition(x, 3),
        lambda x: mnp.pad(x, (1, 2), "wrap"),
        lambda x: mnp.r_[x, x[:2]],
        lambda x: mnp.hstack(mnp.array_split(x, 4)),
    ],
    ids=["hypot", "fmax", "nan_to_num", "diag", "diag_embed", "rot90", "partition", "pad", "r_",
         "array_split"],
)  # fmt: skip
def test_vmap_and_jit_agree_with_eager(fn):
    xs = _rand(3, 6, seed=4)
    eager = np.stack([fn(_t(x)).asnumpy() for x in xs])
    _close(core.vmap(fn)(_t(xs)), eager, rtol=1e-14)
    _close(core.jit(fn)(_t(xs[0])), eager[0], rtol=1e-14)
    g = core.jit(core.grad(lambda x: (fn(x) ** 2).sum()))(_t(xs[0]))
    _close(g, core.grad(lambda x: (fn(x) ** 2).sum())(_t(xs[0])).asnumpy(), rtol=1e-13)


# ---- the functions one by one: numpy's conventions ----------------------------------------------
def test_hypot_keeps_extreme_magnitudes_and_non_finite_values():
    x = np.array([3.0, 1e300, 1e-300, 0.0, np.inf, np.nan, np.nan, -np.inf])
    y = np.array([-4.0, 1e300, 3e-300, 0.0, np.nan, 1.0, np.inf, 2.0])
    _close(mnp.hypot(_t(x), _t(y)), np.hypot(x, y), rtol=1e-15)
    g = core.grad(lambda a, b: mnp.hypot(a, b).sum(), (0, 1))(_t(x[:4]), _t(y[:4]))
    r = np.hypot(x[:3], y[:3])
    np.testing.assert_allclose(g[0].asnumpy(), [*(x[:3] / r), 0.0], rtol=1e-15)  # 0 at (0, 0)
    np.testing.assert_allclose(g[1].asnumpy(), [*(y[:3] / r), 0.0], rtol=1e-15)
    assert mnp.hypot(core.tensor([3.0]), 4).dtype == core.float32


def test_fmax_and_fmin_skip_nan_and_route_the_derivative():
    x = np.array([1.0, np.nan, np.nan, 2.0, -1.0])
    y = np.array([np.nan, 1.0, np.nan, 3.0, -2.0])
    _close(mnp.fmax(_t(x), _t(y)), np.fmax(x, y))
    _close(mnp.fmin(_t(x), _t(y)), np.fmin(x, y))
    gx, gy = core.grad(lambda a, b: mnp.fmax(a, b).sum(), (0, 1))(_t(x), _t(y))
    # the derivative follows the entry returned (x's NaN where both are NaN)
    np.testing.assert_array_equal(gx.asnumpy(), [1.0, 0.0, 1.0, 0.0, 1.0])
    np.testing.assert_array_equal(gy.asnumpy(), [0.0, 1.0, 0.0, 1.0, 0.0])
    _close(mnp.fmax(core.tensor([1, 5]), 3), np.fmax([1, 5], 3))


def test_fabs_refuses_complex_as_numpy():
    with pytest.raises(TypeError, match="fabs: complex"):
        mnp.fabs(_t([1.0]) * 1j)
    _close(mnp.fabs(core.tensor([-2, 3])), np.array([2.0, 3.0], np.float32))


def test_nan_to_num_values_and_derivative():
    x = np.array([0.5, np.nan, np.inf, -np.inf])
    _close(mnp.nan_to_num(_t(x)), np.nan_to_num(x))
    _close(mnp.nan_to_num(core.tensor(x.astype(np.float32))), np.nan_to_num(x.astype(np.float32)))
    kw = {"nan": -1.0, "posinf": 7.0, "neginf": -7.0}
    _close(mnp.nan_to_num(_t(x), **kw), np.nan_to_num(x, **kw))
    z = np.array([np.nan + 1j * np.inf, 1.0 - 1j * np.inf])
    _close(mnp.nan_to_num(core.tensor(z)), np.nan_to_num(z))
    g = core.grad(lambda a: mnp.nan_to_num(a).sum())(_t(x))
    np.testing.assert_array_equal(g.asnumpy(), [1.0, 0.0, 0.0, 0.0])
    # autograd's test: sin of nan_to_num(x + y) with non-finite y
    y = _t(x)
    gradcheck(lambda a: mnp.sin(mnp.nan_to_num(a + y)), [_t(_rand(4))], order=2)


def test_real_if_close():
    z = np.array([1.0 + 1e-15j, 2.0 - 1e-16j])
    got = mnp.real_if_close(core.tensor(z))
    assert got.dtype == np.real_if_close(z).dtype == np.float64
    _close(got, np.real_if_close(z))
    far = np.array([1.0 + 1e-3j])
    _close(mnp.real_if_close(core.tensor(far)), np.real_if_close(far))
    _close(mnp.real_if_close(core.tensor(far), tol=1e-2), np.real_if_close(far, tol=1e-2))
    _close(mnp.real_if_close(_t([1.0])), np.array([1.0]))


def test_partition_places_the_kth_entry():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((5, 9))
    for kth in [0, 4, 8, -1, [2, 6]]:
        got = mnp.partition(_t(a), kth, axis=1).asnumpy()
        want = np.partition(a, kth, axis=1)
        for k in np.atleast_1d(kth) % a.shape[1]:
            pivot = got[:, k : k + 1]
            np.testing.assert_array_equal(pivot[:, 0], want[:, k])
            assert np.all(got[:, :k] <= pivot) and np.all(got[:, k:] >= pivot)
    np.testing.assert_array_equal(
        mnp.partition(_t(a), 3, axis=None).asnumpy()[3], np.partition(a, 3, axis=None)[3]
    )
    order = mnp.argpartition(_t(a[0]), 4).asnumpy()
    assert a[0][order][4] == np.partition(a[0], 4)[4]
    with pytest.raises(ValueError, match="kth"):
        mnp.partition(_t(a), 9)


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=2, max_size=4),
    offset=st.integers(-4, 4),
    axes=st.tuples(st.integers(-4, 3), st.integers(-4, 3)),
    seed=st.integers(0, 100),
)
def test_diagonal_and_diag_embed_match_numpy_for_any_plane(shape, offset, axes, seed):
    a = np.random.default_rng(seed).standard_normal(shape)
    ax1, ax2 = axes[0] % a.ndim, axes[1] % a.ndim
    if ax1 == ax2:
        with pytest.raises(ValueError, match="must differ"):
            mnp.diagonal(_t(a), offset, ax1, ax2)
        return
    d = np.diagonal(a, offset, ax1, ax2)
    _close(mnp.diagonal(_t(a), offset, ax1, ax2), d)
    # diag_embed puts the diagonal back: numpy.diagonal of the result is the input
    e = mnp.diag_embed(_t(d), offset, ax1, ax2).asnumpy()
    np.testing.assert_array_equal(np.diagonal(e, offset, ax1, ax2), d)
    assert np.count_nonzero(e) == np.count_nonzero(d)


def test_diag_embed_is_autograds_make_diagonal():
    d = _rand(3, 4)
    a = mnp.diag_embed(_t(d), axis1=-1, axis2=-2).asnumpy()  # make_diagonal(D, axis1=-1, axis2=-2)
    assert a.shape == (3, 4, 4)
    for i in range(3):
        np.testing.assert_array_equal(a[i], np.diag(d[i]))
    with pytest.raises(ValueError, match="1-D or 2-D"):
        mnp.diag(_t(_rand(2, 2, 2)))


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 9), sections=st.integers(1, 5), cuts=st.lists(st.integers(-10, 10), max_size=3)
)
def test_splits_match_numpy(n, sections, cuts):
    a = np.arange(n * 6.0).reshape(n, 2, 3)
    for got, want in zip(
        mnp.array_split(_t(a), sections), np.array_split(a, sections), strict=True
    ):
        _close(got, want)
    for got, want in zip(mnp.array_split(_t(a), cuts), np.array_split(a, cuts), strict=True):
        _close(got, want)
    if n % sections == 0:
        for got, want in zip(mnp.vsplit(_t(a), sections), np.vsplit(a, sections), strict=True):
            _close(got, want)
    else:
        with pytest.raises(ValueError, match="equal sections"):
            mnp.split(_t(a), sections)
    for got, want in zip(mnp.hsplit(_t(a), [1]), np.hsplit(a, [1]), strict=True):
        _close(got, want)
    for got, want in zip(mnp.dsplit(_t(a), 3), np.dsplit(a, 3), strict=True):
        _close(got, want)


def test_split_gradients_flow_back_to_each_piece():
    gradcheck(lambda x: mnp.array_split(x, 3, axis=1)[1] * 2.0, [_t(_rand(2, 7))], order=2)
    gradcheck(lambda x: mnp.hsplit(x, [1, 3])[2], [_t(_rand(2, 5))], order=2)


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=0, max_size=4))
def test_atleast_nd_and_stacks_match_numpy(shape):
    a = np.random.default_rng(len(shape)).standard_normal(shape)
    for name in ["atleast_1d", "atleast_2d", "atleast_3d"]:
        _close(getattr(mnp, name)(_t(a)), getattr(np, name)(a))
    got = mnp.atleast_2d(_t(a), 1.0)
    assert isinstance(got, tuple) and len(got) == 2 and got[1].shape == (1, 1)
    if a.ndim <= 2:
        _close(mnp.hstack((_t(a), _t(a))), np.hstack((a, a)))
        _close(mnp.vstack((_t(a), _t(a))), np.vstack((a, a)))
        _close(mnp.column_stack((_t(a), _t(a))), np.column_stack((a, a)))
        _close(mnp.dstack((_t(a), _t(a))), np.dstack((a, a)))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("start", [0, 1, 2, 3, -1])
def test_rollaxis_matches_numpy(axis, start):
    _close(mnp.rollaxis(_t(CUBE), axis, start), np.rollaxis(CUBE, axis, start))


def test_rot90_every_quarter_and_plane():
    for k in range(-5, 6):
        for axes in [(0, 1), (1, 0), (2, 0), (-1, 1)]:
            _close(mnp.rot90(_t(CUBE), k, axes), np.rot90(CUBE, k, axes))
    with pytest.raises(ValueError, match="must differ"):
        mnp.rot90(_t(A), 1, (1, 1))


def test_r_and_c_index_tricks():
    a, b = _rand(3), _rand(2, 3)
    _close(mnp.r_[_t(a), 1:4, 2.5, a], np.r_[a, 1:4, 2.5, a])
    _close(mnp.r_[0:1:5j], np.r_[0:1:5j])
    _close(mnp.r_[_t(b), b], np.r_[b, b])
    _close(mnp.r_["-1", _t(b), b], np.r_["-1", b, b])
    _close(mnp.r_["0,2,0", _t(a), a], np.r_["0,2,0", a, a])
    _close(mnp.r_["1,3", _t(b), b], np.r_["1,3", b, b])
    _close(mnp.c_[_t(a), a], np.c_[a, a])
    _close(mnp.c_[_t(b), b, b], np.c_[b, b, b])
    assert mnp.r_[core.tensor([1.0, 2.0], dtype=core.float32), 3].dtype == core.float32
    assert mnp.r_[core.tensor([1, 2]), 3].dtype == core.int64
    with pytest.raises(NotImplementedError, match="matrix"):
        mnp.r_["r", a]
    with pytest.raises(ValueError, match="first entry"):
        mnp.r_[a, "0"]


def test_isclose_allclose_and_value_tests():
    x = np.array([1.0, np.inf, np.nan, -np.inf, 1e-9, 2.0])
    y = np.array([1.0 + 1e-7, np.inf, np.nan, np.inf, 0.0, 2.1])
    _close(mnp.isclose(_t(x), _t(y)), np.isclose(x, y))
    _close(mnp.isclose(_t(x), _t(y), equal_nan=True), np.isclose(x, y, equal_nan=True))
    assert mnp.allclose(_t(x[:2]), y[:2]) is True and mnp.allclose(_t(x), y) is False
    assert mnp.array_equal(_t(x), x, equal_nan=True) and not mnp.array_equal(_t(x), x)
    assert not mnp.array_equal(_t(x), x[:2])
    _close(mnp.isinf(_t(x)), np.isinf(x))
    _close(mnp.isposinf(_t(x)), np.isposinf(x))
    _close(mnp.isneginf(_t(x)), np.isneginf(x))
    z = np.array([1.0, 1.0 + 2j])
    _close(mnp.iscomplex(core.tensor(z)), np.iscomplex(z))
    _close(mnp.isreal(core.tensor(z)), np.isreal(z))
    _close(mnp.iscomplex(_t(x)), np.iscomplex(x))
    assert mnp.iscomplexobj(core.tensor(z)) and mnp.isrealobj(_t(x))


# ---- the peer suite's regressions ----------------------------------------------------------------
def test_append_of_numpy_float64_values_stays_float64():
    # autograd's test_simple_append_list: the finite differences call append on lists of
    # np.float64 values; they were made float32 (only Python floats are weak)
    values = [np.float64(1.0), np.float64(2.0), np.float64(3.0)]
    got = mnp.append(values, np.float64(4.0))
    assert got.dtype == np.append(values, np.float64(4.0)).dtype == np.float64
    rows = [[np.float64(1.0 + 1e-9), np.float64(2.0)]]
    got = mnp.append(rows, [[np.float64(3.0), np.float64(4.0)]], axis=0)
    assert got.dtype == np.float64 and got.asnumpy()[0, 0] == 1.0 + 1e-9
    assert core.tensor([np.float64(1.0), 2.0]).dtype == np.float64
    assert core.tensor([[np.complex128(1j)]]).dtype == np.complex128
    assert core.tensor([np.float32(1.0), 2.0]).dtype == np.float32  # numpy: float64; MindSpore's
    assert core.tensor([1.0, 2.0]).dtype == np.float32  # Python floats: MindSpore's float32
    gradcheck(lambda a, b: mnp.append(a, b), [_t([1.0, 2.0, 3.0]), _t(4.0)], order=2)


def test_real_and_imag_are_properties_as_in_numpy():
    z = np.array([1.0 + 2.0j, -3.0 + 0.5j])
    t = core.tensor(z)
    _close(t.real, z.real)
    _close(t.imag, z.imag)
    _close(np.real(t), z.real)  # numpy's np.real reads the attribute
    _close(t.conjugate(), z.conjugate())
    _close(_t([1.0, 2.0]).imag, np.zeros(2))
    assert 0.9 < core.tensor(np.array(1.0 + 0.2j)).real < 1.1  # autograd's test_holomorphic_grad
    g = core.grad(lambda w: (w.real * w.imag + w.real).sum())(core.tensor(z))
    # JAX's convention for a real function of a complex input: df/dre - 1j df/dim
    np.testing.assert_allclose(g.asnumpy(), (z.imag + 1.0) - 1j * z.real)
    _close(core.jit(lambda w: w.real + w.imag)(core.tensor(z)), z.real + z.imag)


def test_swapaxes_takes_numpys_keywords():
    _close(mnp.swapaxes(_t(CUBE), axis1=0, axis2=-1), np.swapaxes(CUBE, axis1=0, axis2=-1))


def test_hstack_of_a_vector_and_of_scalars():
    # autograd's test_hstack_1d: np.hstack(R(2)) iterates the vector into 0-d entries
    _close(mnp.hstack(_t(V)), np.hstack(V))
    _close(mnp.hstack([_t(1.0), 2.0, _t(V[:2])]), np.hstack([1.0, 2.0, V[:2]]))
    with pytest.raises(ValueError, match="at least one"):
        mnp.hstack([])


def test_select_with_a_default():
    c = _rand(3, 4, seed=7)
    conds = [_t(c) > 0, _t(c) > 1]
    choices = [_t(A[:3, :4]), _t(B[:3, :4])]
    for default in [0.0, 1.1, _t(V[:4])]:
        d = default.asnumpy() if isinstance(default, core.Tensor) else default
        want = np.select([c > 0, c > 1], [A[:3, :4], B[:3, :4]], d)
        _close(mnp.select(conds, choices, default=default), want)
    with pytest.raises(ValueError, match="must match"):
        mnp.select(conds, choices[:1])
    with pytest.raises(TypeError, match="bool"):
        mnp.select([_t(c)], choices[:1])


@pytest.mark.parametrize(
    "width", [0, 3, (3,), (3, 2), ((3, 2),), ((1, 2), (3, 4)), ((0, 0), (0, 0)), [[1, 0], [0, 2]]]
)
@pytest.mark.parametrize("mode", ["constant", "edge", "symmetric", "wrap", "empty"])
def test_pad_width_forms_as_numpy(width, mode):
    a = _rand(4, 5)
    want = np.pad(a, width, mode) if mode != "empty" else np.pad(a, width)
    _close(mnp.pad(_t(a), width, mode), want)


def test_pad_constant_values_and_errors():
    a = _rand(3, 4)
    for values in [2.5, (1.0, -1.0), ((1.0, 2.0), (3.0, 4.0))]:
        _close(
            mnp.pad(_t(a), ((1, 2), (2, 1)), constant_values=values),
            np.pad(a, ((1, 2), (2, 1)), constant_values=values),
        )
    _close(mnp.pad(_t(a), 2, "reflect"), np.pad(a, 2, "reflect"))
    with pytest.raises(ValueError, match="does not fit"):
        mnp.pad(_t(a), ((1, 2), (3, 4), (5, 6)))
    with pytest.raises(ValueError, match="non-negative"):
        mnp.pad(_t(a), -1)
    with pytest.raises(NotImplementedError, match="linear_ramp"):
        mnp.pad(_t(a), 1, "linear_ramp")
    gradcheck(lambda x: mnp.pad(x, ((1, 0), (2, 3)), "symmetric"), [_t(a)], order=2)


def test_where_with_one_argument_is_nonzero():
    cond = np.array([[True, False, True], [False, False, True]])
    got = mnp.where(cond)
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, np.where(cond), strict=True):
        _close(g, w)
    assert got[0].dtype == np.int64
    _close(mnp.where(condition=[True, False], x=_t([1.0, 2.0]), y=3.0), np.array([1.0, 3.0]))
    _close(mnp.where([True, False], _t([1.0, 2.0]), y=_t([3.0, 4.0])), np.array([1.0, 4.0]))
    for g, w in zip(mnp.nonzero(_t([0.0, 2.0, 0.0, -1.0])), np.nonzero([0.0, 2.0, 0.0, -1.0])):
        _close(g, w)
    with pytest.raises(ValueError, match="both x and y"):
        mnp.where(cond, _t([1.0]))


def test_grad_of_a_constant_function_is_zero():
    g = core.grad(lambda x: 1.0)(2.0)
    assert isinstance(g, core.Tensor) and g.item() == 0.0
    x = _t([1.0, 2.0])
    _close(core.grad(lambda x: 3.5)(x), np.zeros(2))
    _close(core.grad(lambda x, y: 1.0, (0, 1))(x, x)[1], np.zeros(2))
    value, g = core.value_and_grad(lambda x: 2.0)(x)
    assert value.item() == 2.0 and g.dtype == np.float64
    out, pull = core.vjp(lambda x: 2.0, x)
    assert isinstance(out, core.Tensor) and out.item() == 2.0
    _close(pull(core.tensor(1.0))[0], np.zeros(2))
    # autograd's test_isinstance: a constant of an empty container
    assert core.grad(lambda xs: 1.0)([]) == []
    with pytest.raises(TypeError, match="must return a Tensor, got str"):
        core.grad(lambda x: "one")(x)
    with pytest.raises(TypeError, match="must return a Tensor, got bool"):
        core.grad(lambda x: True)(x)
    with pytest.raises(TypeError, match="int64, which has no derivative"):
        core.grad(lambda x: 1)(x)
