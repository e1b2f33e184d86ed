"""Dense linear algebra: inv, solve, solve_triangular, cholesky, det, slogdet, logdet; then the
public decompositions (eigh, eig, svd, pinv, expm, sqrtm: their primitives are in
test_prims_table.py), norms, products (dot, inner, kron, cross) and einsum's zero-length axes.

Every primitive from one table: value against numpy/scipy, the abstract rule against the eager
output, derivatives of order 1 and 2 (reverse and forward) against finite differences, vmap
against a per-example loop. Then the public ops (shapes, dtypes, vectors, broadcasting) and
their error messages.
"""

import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops
from diffsci.core.primitive import ShapedArray
from diffsci.core.prims import linalg as prims_linalg
from diffsci.core.testing import gradcheck

T = core.Tensor


# ---- input generators: rng -> numpy array ------------------------------------------------------
def well_conditioned(*shape, complex_=False):
    """Random [..., n, n] matrices with a dominant diagonal (condition number ~ 1-10)."""

    def make(rng):
        a = rng.standard_normal(shape)
        if complex_:
            a = a + 1j * rng.standard_normal(shape)
        return a + 2.5 * np.sqrt(shape[-1]) * np.eye(shape[-1])

    return make


def spd(*shape, complex_=False):
    """Random Hermitian positive-definite [..., n, n] matrices."""

    def make(rng):
        a = rng.standard_normal(shape)
        if complex_:
            a = a + 1j * rng.standard_normal(shape)
        return a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])

    return make


def normal(*shape, complex_=False):
    def make(rng):
        a = rng.standard_normal(shape)
        return a + 1j * rng.standard_normal(shape) if complex_ else a

    return make


def _mH(x):
    return ops.conj(ops.swapaxes(x, -1, -2))


def _herm(x):
    """Make the input Hermitian: the derivatives of cholesky are those of a function of a
    Hermitian matrix, so finite differences must perturb Hermitian matrices too."""
    return 0.5 * (x + _mH(x))


class Case:
    def __init__(
        self,
        id,
        prim,
        args,
        ref,
        params=None,
        fn=None,
        vmap_axes=((0, 0), (0, None), (None, 0), (1, 2)),
    ):
        self.id = id
        self.prim = prim
        self.args = args
        self.ref = ref
        self.params = params or {}
        self._fn = fn
        self.vmap_axes = sorted(
            {ax[: len(args)] for ax in vmap_axes if any(v is not None for v in ax[: len(args)])},
            key=str,
        )

    def make(self, seed=0):
        rng = np.random.default_rng(seed)
        return [g(rng) for g in self.args]

    def fn(self, *xs):
        """What gradcheck differentiates (a wrapper, e.g. symmetrization, may come first)."""
        if self._fn is not None:
            return self._fn(*xs)
        return self.prim(*xs, **self.params)

    def raw(self, *xs):
        return self.prim(*xs, **self.params)


def _logdet_ref(a):
    sign, logabs = np.linalg.slogdet(a)
    return logabs + 1j * np.angle(sign)


TABLE = []
for cplx in (False, True):
    sfx = "_complex" if cplx else ""
    TABLE += [
        Case("inv" + sfx, prims_linalg.inv, [well_conditioned(3, 3, complex_=cplx)], np.linalg.inv),
        Case(
            "inv_batched" + sfx,
            prims_linalg.inv,
            [well_conditioned(2, 3, 3, complex_=cplx)],
            np.linalg.inv,
        ),
        Case(
            "solve" + sfx,
            prims_linalg.solve,
            [well_conditioned(3, 3, complex_=cplx), normal(3, 2, complex_=cplx)],
            np.linalg.solve,
        ),
        Case(
            "solve_broadcast" + sfx,
            prims_linalg.solve,
            [well_conditioned(2, 1, 3, 3, complex_=cplx), normal(2, 3, 1, complex_=cplx)],
            np.linalg.solve,
        ),
        Case(
            "triangular_solve_lower" + sfx,
            prims_linalg.triangular_solve,
            [well_conditioned(3, 3, complex_=cplx), normal(3, 2, complex_=cplx)],
            lambda a, b: sla.solve_triangular(a, b, lower=True),
            params={"lower": True},
        ),
        Case(
            "triangular_solve_upper" + sfx,
            prims_linalg.triangular_solve,
            [well_conditioned(2, 3, 3, complex_=cplx), normal(3, 1, complex_=cplx)],
            lambda a, b: np.stack([sla.solve_triangular(m, b, lower=False) for m in a]),
            params={"lower": False},
        ),
        Case(
            "cholesky" + sfx,
            prims_linalg.cholesky,
            [spd(3, 3, complex_=cplx)],
            np.linalg.cholesky,
            fn=lambda a: prims_linalg.cholesky(_herm(a)),
        ),
        Case(
            "cholesky_batched" + sfx,
            prims_linalg.cholesky,
            [spd(2, 3, 3, complex_=cplx)],
            np.linalg.cholesky,
            fn=lambda a: prims_linalg.cholesky(_herm(a)),
        ),
        Case(
            "logdet" + sfx,
            prims_linalg.logdet,
            [well_conditioned(3, 3, complex_=cplx)],
            _logdet_ref,
        ),
        Case(
            "logdet_batched" + sfx,
            prims_linalg.logdet,
            [well_conditioned(2, 3, 3, complex_=cplx)],
            _logdet_ref,
        ),
    ]
TABLE += [
    Case(
        "logdet_negative_det",
        prims_linalg.logdet,
        [lambda rng: np.diag([-1.0, 2.0, 3.0]) + 0.1 * rng.standard_normal((3, 3))],
        _logdet_ref,
    ),
    Case(
        "logdet_negative_det_batched",
        prims_linalg.logdet,
        [lambda rng: np.diag([-1.0, 2.0, 3.0]) + 0.1 * rng.standard_normal((2, 3, 3))],
        _logdet_ref,
    ),
]
CASES = [pytest.param(c, id=c.id) for c in TABLE]
GRAD_CASES = CASES


@pytest.mark.parametrize("case", CASES)
def test_value_against_numpy(case):
    arrays = case.make()
    out = case.raw(*[T(a) for a in arrays])
    ref = np.asarray(case.ref(*arrays))
    assert out.shape == ref.shape and out.dtype == ref.dtype, (
        out.dtype,
        out.shape,
        ref.dtype,
        ref.shape,
    )
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", CASES)
def test_abstract_rule_matches_eager(case):
    tensors = [T(a) for a in case.make()]
    out = case.raw(*tensors)
    aval = case.prim.abstract(*[ShapedArray(t.shape, t.dtype) for t in tensors], **case.params)
    assert aval == ShapedArray(out.shape, out.dtype)


@pytest.mark.parametrize("case", GRAD_CASES)
def test_gradcheck_order1(case):
    gradcheck(case.fn, [T(a) for a in case.make()], order=1)


@pytest.mark.parametrize("case", GRAD_CASES)
def test_gradcheck_order2(case):
    gradcheck(case.fn, [T(a) for a in case.make()], order=2)


@pytest.mark.parametrize("case", CASES)
def test_vmap_against_loop(case):
    n_batch = 3
    examples = [case.make(seed) for seed in range(n_batch)]
    for axes in case.vmap_axes:
        batched = []
        for i, ax in enumerate(axes):
            if ax is None:
                batched.append(T(examples[0][i]))
            else:
                batched.append(
                    T(np.stack([ex[i] for ex in examples], axis=min(ax, examples[0][i].ndim)))
                )
        in_axes = tuple(
            None if ax is None else min(ax, examples[0][i].ndim) for i, ax in enumerate(axes)
        )
        out = core.vmap(case.raw, in_axes=in_axes)(*batched)
        expected = np.stack(
            [
                case.raw(
                    *[T(examples[0 if ax is None else k][i]) for i, ax in enumerate(axes)]
                ).asnumpy()
                for k in range(n_batch)
            ]
        )
        np.testing.assert_allclose(
            out.asnumpy(), expected, rtol=1e-12, atol=1e-12, err_msg=f"in_axes={in_axes}"
        )


def test_vmap_of_grad_matches_loop():
    rng = np.random.default_rng(1)
    a = np.stack([well_conditioned(3, 3)(rng) for _ in range(4)])
    b = rng.standard_normal((4, 3))

    def loss(a, b):
        return (ops.solve(a, b) ** 2).sum() + ops.slogdet(a)[1] + ops.inv(a).sum()

    g = core.vmap(core.grad(loss, grad_position=(0, 1)))(T(a), T(b))
    for k in range(4):
        ga, gb = core.grad(loss, grad_position=(0, 1))(T(a[k]), T(b[k]))
        np.testing.assert_allclose(g[0].asnumpy()[k], ga.asnumpy(), rtol=1e-12)
        np.testing.assert_allclose(g[1].asnumpy()[k], gb.asnumpy(), rtol=1e-12)


# ---- the public ops ------------------------------------------------------------------------------
_dims = st.tuples(st.lists(st.integers(1, 3), max_size=2), st.integers(1, 5), st.integers(1, 3))


@settings(max_examples=15, deadline=None)
@given(dims=_dims, seed=st.integers(0, 2**16), vector=st.booleans())
def test_solve_shapes(dims, seed, vector):
    batch, n, k = dims
    rng = np.random.default_rng(seed)
    a = well_conditioned(*batch, n, n)(rng)
    b = rng.standard_normal((*batch, n) if vector else (*batch, n, k))
    x = ops.solve(T(a), T(b))
    ref = np.linalg.solve(a, b[..., None])[..., 0] if vector else np.linalg.solve(a, b)
    assert x.shape == ref.shape
    np.testing.assert_allclose(x.asnumpy(), ref, rtol=1e-10, atol=1e-12)
    for lower in (True, False):
        for trans in (False, True):
            y = ops.solve_triangular(T(a), T(b), lower=lower, transpose=trans)
            tri = np.tril(a) if lower else np.triu(a)
            tri = np.swapaxes(tri, -1, -2) if trans else tri
            ref = np.linalg.solve(tri, b[..., None])[..., 0] if vector else np.linalg.solve(tri, b)
            np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-9, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(
    batch=st.lists(st.integers(1, 3), max_size=2),
    n=st.integers(1, 5),
    seed=st.integers(0, 2**16),
    cplx=st.booleans(),
)
def test_factorizations_shapes(batch, n, seed, cplx):
    rng = np.random.default_rng(seed)
    a = well_conditioned(*batch, n, n, complex_=cplx)(rng)
    s = spd(*batch, n, n, complex_=cplx)(rng)
    np.testing.assert_allclose(ops.inv(T(a)).asnumpy(), np.linalg.inv(a), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ops.det(T(a)).asnumpy(), np.linalg.det(a), rtol=1e-10)
    sign, logabs = ops.slogdet(T(a))
    ref_sign, ref_logabs = np.linalg.slogdet(a)
    np.testing.assert_allclose(sign.asnumpy(), ref_sign, rtol=1e-10)
    np.testing.assert_allclose(logabs.asnumpy(), ref_logabs, rtol=1e-10, atol=1e-12)
    assert logabs.dtype == np.float64
    low = ops.cholesky(T(s))
    np.testing.assert_allclose(low.asnumpy(), np.linalg.cholesky(s), rtol=1e-10, atol=1e-12)
    up = ops.cholesky(T(s), upper=True)
    np.testing.assert_allclose(
        up.asnumpy(),
        sla.cholesky(s, lower=False)
        if s.ndim == 2
        else np.conj(np.swapaxes(np.linalg.cholesky(s), -1, -2)),
        rtol=1e-10,
        atol=1e-12,
    )


@pytest.mark.parametrize("dtype", ["float32", "complex64", "float64", "complex128"])
def test_dtypes_are_kept(dtype):
    rng = np.random.default_rng(0)
    a = well_conditioned(3, 3, complex_=dtype.startswith("complex"))(rng).astype(dtype)
    s = (a @ np.conj(a.T)).astype(dtype)
    b = rng.standard_normal(3).astype(dtype)
    tol = 1e-5 if dtype in ("float32", "complex64") else 1e-12
    for got, ref in [
        (ops.inv(T(a)), np.linalg.inv(a)),
        (ops.solve(T(a), T(b)), np.linalg.solve(a, b[:, None])[:, 0]),
        (ops.solve_triangular(T(a), T(b)), sla.solve_triangular(a, b, lower=True)),
        (ops.cholesky(T(s)), np.linalg.cholesky(s)),
        (ops.det(T(a)), np.linalg.det(a)),
        (ops.slogdet(T(a))[0], np.linalg.slogdet(a)[0]),
        (ops.slogdet(T(a))[1], np.linalg.slogdet(a)[1]),
    ]:
        assert got.dtype == np.asarray(ref).dtype, (got.dtype, np.asarray(ref).dtype)
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=tol, atol=tol)


def test_integer_and_half_inputs():
    a = np.array([[4, 1], [1, 3]])
    x = ops.inv(T(a))
    assert x.dtype == np.float32
    np.testing.assert_allclose(x.asnumpy(), np.linalg.inv(a), rtol=1e-6)
    h = ops.det(T(a.astype(np.float16)))
    assert h.dtype == np.float16
    np.testing.assert_allclose(float(h.asnumpy()), 11.0, rtol=1e-3)
    y = ops.solve(T(a.astype(np.float32)), T(np.array([1, 2])))  # int rhs promotes
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.asnumpy(), np.linalg.solve(a, [1.0, 2.0]), rtol=1e-6)


def test_vector_and_matrix_rhs_rule():
    rng = np.random.default_rng(0)
    a = well_conditioned(4, 3, 3)(rng)
    b_vec = rng.standard_normal((4, 3))  # b.ndim == a.ndim - 1: a batch of vectors
    np.testing.assert_allclose(
        ops.solve(T(a), T(b_vec)).asnumpy(),
        np.linalg.solve(a, b_vec[..., None])[..., 0],
        rtol=1e-12,
    )
    b_mat = rng.standard_normal((3, 5))  # [n, k] broadcast against the batch of a
    np.testing.assert_allclose(
        ops.solve(T(a), T(b_mat)).asnumpy(), np.linalg.solve(a, b_mat), rtol=1e-12
    )


def test_det_singular_is_zero_and_slogdet_matches_numpy():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert float(ops.det(T(a)).asnumpy()) == 0.0
    sign, logabs = ops.slogdet(T(a))
    assert float(sign.asnumpy()) == 0.0 and logabs.asnumpy() == -np.inf
    ac = a.astype(complex)
    assert complex(ops.det(T(ac)).asnumpy()) == 0
    assert complex(ops.slogdet(T(ac))[0].asnumpy()) == 0


def test_logdet_real_negative_is_nan():
    a = np.diag([-1.0, 2.0])
    assert np.isnan(ops.logdet(T(a)).asnumpy())
    np.testing.assert_allclose(ops.logdet(T(np.diag([2.0, 3.0]))).asnumpy(), np.log(6.0))


def test_det_gradient_is_cofactor_matrix():
    rng = np.random.default_rng(3)
    a = well_conditioned(3, 3)(rng)
    g = core.grad(ops.det)(T(a)).asnumpy()
    np.testing.assert_allclose(g, np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-10)
    gradcheck(ops.det, [T(a)], order=2)
    gradcheck(lambda m: ops.slogdet(m)[1], [T(a)], order=2)


def test_cholesky_logdet_gradient_matches_slogdet():
    # the Gaussian-process log-likelihood pattern: log det K = 2 sum log diag(L)
    rng = np.random.default_rng(4)
    k = spd(4, 4)(rng)
    y = rng.standard_normal(4)

    def nll_chol(k, y):
        low = ops.cholesky(_herm(k))
        alpha = ops.solve_triangular(low, y, lower=True)
        diag = ops.sum(low * T(np.eye(4)), axis=-1)
        return 0.5 * (alpha**2).sum() + ops.log(diag).sum()

    def nll_dense(k, y):
        k = _herm(k)
        return 0.5 * (y * ops.solve(k, y)).sum() + 0.5 * ops.slogdet(k)[1]

    g1 = core.grad(nll_chol, grad_position=(0, 1))(T(k), T(y))
    g2 = core.grad(nll_dense, grad_position=(0, 1))(T(k), T(y))
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-10, atol=1e-12)
    gradcheck(nll_chol, [T(k), T(y)], order=2)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_op_gradients(upper):
    rng = np.random.default_rng(5)
    s = spd(3, 3)(rng)
    gradcheck(lambda a: ops.cholesky(_herm(a), upper=upper), [T(s)], order=2)
    sc = spd(2, 3, 3, complex_=True)(rng)
    gradcheck(lambda a: ops.cholesky(_herm(a), upper=upper), [T(sc)], order=1)


def test_cholesky_cotangent_is_hermitian():
    rng = np.random.default_rng(6)
    s = spd(3, 3)(rng)
    w = rng.standard_normal((3, 3))
    g = core.grad(lambda a: (ops.cholesky(a) * T(w)).sum())(T(s)).asnumpy()
    np.testing.assert_allclose(g, g.T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", ["solve", "solve_triangular"])
def test_solve_op_gradients_vector_rhs_and_broadcast(op):
    rng = np.random.default_rng(7)
    fn = getattr(ops, op)
    a = well_conditioned(2, 3, 3)(rng)
    gradcheck(fn, [T(a), T(rng.standard_normal((2, 3)))], order=2)  # batch of vectors
    gradcheck(fn, [T(a), T(rng.standard_normal((3, 2)))], order=1)  # rhs broadcast over a's batch
    gradcheck(
        fn, [T(a[0]), T(rng.standard_normal((2, 3, 1)))], order=1
    )  # matrix broadcast over b's batch


def test_inv_op_jacobian_forward_equals_reverse():
    rng = np.random.default_rng(8)
    a = T(well_conditioned(3, 3)(rng))
    np.testing.assert_allclose(
        core.jacfwd(ops.inv)(a).asnumpy(), core.jacrev(ops.inv)(a).asnumpy(), rtol=1e-10, atol=1e-12
    )


# ---- errors ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "cholesky", "logdet"])
def test_non_square_is_an_error(name):
    with pytest.raises(ValueError, match=rf"{name}: .*\(2, 3\)"):
        getattr(ops, name)(T(np.ones((2, 3))))
    with pytest.raises(ValueError, match=rf"{name}: .*\(3,\)"):
        getattr(ops, name)(T(np.ones(3)))


@pytest.mark.parametrize("name", ["solve", "solve_triangular"])
def test_solve_shape_errors(name):
    fn = getattr(ops, name)
    with pytest.raises(ValueError, match=rf"{name}: .*\(3, 4\)"):
        fn(T(np.ones((3, 4))), T(np.ones(3)))
    with pytest.raises(ValueError, match=rf"{name}: .*\(4,\).*\(3, 3\)"):
        fn(T(np.eye(3)), T(np.ones(4)))
    with pytest.raises(ValueError, match=rf"{name}: .*\(2, 4, 2\).*\(3, 3\)"):
        fn(T(np.eye(3)), T(np.ones((2, 4, 2))))
    with pytest.raises(ValueError, match=rf"{name}: batch shapes .*\(2, 3, 3\).*\(4, 3, 1\)"):
        fn(T(np.ones((2, 3, 3))), T(np.ones((4, 3, 1))))


def test_abstract_rules_reject_bad_shapes():
    f = ShapedArray((2, 3), np.float64)
    with pytest.raises(ValueError, match=r"inv: .*\(2, 3\)"):
        prims_linalg.inv.abstract(f)
    with pytest.raises(ValueError, match=r"solve: .*\(4, 1\).*\(3, 3\)"):
        prims_linalg.solve.abstract(
            ShapedArray((3, 3), np.float64), ShapedArray((4, 1), np.float64)
        )
    with pytest.raises(ValueError, match=r"triangular_solve: .*cannot be broadcast"):
        prims_linalg.triangular_solve.abstract(
            ShapedArray((2, 3, 3), np.float64), ShapedArray((4, 3, 1), np.float64), lower=True
        )


@pytest.mark.parametrize("name", ["inv", "solve", "solve_triangular"])
def test_singular_matrix_error_names_the_op(name):
    a = T(
        np.array([[1.0, 2.0], [2.0, 4.0]])
        if name != "solve_triangular"
        else np.array([[1.0, 0.0], [2.0, 0.0]])
    )
    args = (a,) if name == "inv" else (a, T(np.ones(2)))
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        getattr(ops, name)(*args)
    try:
        getattr(ops, name)(*args)
    except np.linalg.LinAlgError as err:
        prim = {"solve_triangular": "triangular_solve"}.get(name, name)
        assert str(err).startswith(prim), str(err)


def test_cholesky_not_positive_definite():
    with pytest.raises(
        np.linalg.LinAlgError, match=r"cholesky.*not \(Hermitian\) positive definite"
    ):
        ops.cholesky(T(np.array([[1.0, 2.0], [2.0, 1.0]])))


def test_singular_error_inside_grad_names_the_op():
    a = T(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(np.linalg.LinAlgError, match="inv"):
        core.grad(lambda m: ops.inv(m).sum())(a)


@pytest.mark.parametrize("batch,n", [((8,), 3), ((2, 5), 4), ((), 40), ((3,), 33)])
def test_triangular_solve_both_implementations(batch, n):
    # many small matrices take one batched LU solve, large ones scipy's triangular solver
    rng = np.random.default_rng(9)
    a = well_conditioned(*batch, n, n)(rng)
    b = rng.standard_normal((*batch, n, 2))
    for lower in (True, False):
        got = prims_linalg.triangular_solve(T(a), T(b), lower=lower).asnumpy()
        flat_a, flat_b = a.reshape(-1, n, n), b.reshape(-1, n, 2)
        ref = np.stack([sla.solve_triangular(m, r, lower=lower) for m, r in zip(flat_a, flat_b)])
        np.testing.assert_allclose(got, ref.reshape(got.shape), rtol=1e-9, atol=1e-12)
    singular = np.tril(a.copy())
    singular[..., 1, 1] = 0.0
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        prims_linalg.triangular_solve(T(singular), T(b), lower=True)


def test_gradient_of_rhs_only():
    # the VJP skips the matrix cotangent when the matrix is a constant
    rng = np.random.default_rng(10)
    a = well_conditioned(3, 3)(rng)
    b = rng.standard_normal(3)
    w = rng.standard_normal(3)
    g = core.grad(lambda v: (ops.solve(T(a), v) * T(w)).sum())(T(b)).asnumpy()
    np.testing.assert_allclose(g, np.linalg.solve(a.T, w), rtol=1e-12)
    g = core.grad(lambda v: (ops.solve_triangular(T(a), v, lower=False) * T(w)).sum())(
        T(b)
    ).asnumpy()
    np.testing.assert_allclose(g, np.linalg.solve(np.triu(a).T, w), rtol=1e-12)


def test_jit_of_grad_matches_eager():
    rng = np.random.default_rng(11)
    a = well_conditioned(3, 3)(rng)
    b = rng.standard_normal(3)

    def loss(a, b):
        low = ops.cholesky(a @ a.mT)
        return (
            (ops.solve(a, b) ** 2).sum()
            + ops.slogdet(a)[1]
            + ops.det(a)
            + ops.inv(a).sum()
            + ops.solve_triangular(low, b).sum()
        )

    g = core.grad(loss, grad_position=(0, 1))
    for eager, jitted in zip(g(T(a), T(b)), core.jit(g)(T(a), T(b))):
        np.testing.assert_allclose(jitted.asnumpy(), eager.asnumpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_det_and_slogdet_signs(dtype):
    rng = np.random.default_rng(12)
    a = well_conditioned(6, 3, 3)(rng)
    a[::2, 0] *= -1.0  # negative determinants in every other matrix
    a[5] = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]]  # singular
    a = a.astype(dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(ops.det(T(a)).asnumpy(), np.linalg.det(a), rtol=tol, atol=tol)
    sign, logabs = ops.slogdet(T(a))
    ref_sign, ref_logabs = np.linalg.slogdet(a)
    np.testing.assert_array_equal(sign.asnumpy(), ref_sign)
    assert sign.dtype == logabs.dtype == np.dtype(dtype)
    np.testing.assert_allclose(logabs.asnumpy(), ref_logabs, rtol=tol)
    ld = ops.logdet(T(a)).asnumpy()
    assert np.isnan(ld[ref_sign < 0]).all() and (ld[ref_sign > 0] == ref_logabs[ref_sign > 0]).all()
    g = core.grad(lambda m: ops.det(m[:5]).sum())(T(a.astype(np.float64))).asnumpy()
    ref = np.linalg.det(a[:5].astype(np.float64))[:, None, None] * np.linalg.inv(
        a[:5].astype(np.float64)
    ).transpose(0, 2, 1)
    np.testing.assert_allclose(g[:5], ref, rtol=1e-10)


# ---- decompositions through core.ops ---------------------------------------------------------------
def _fix_sign(v):
    """Eigen/singular vectors [..., n, k] with each column's first entry real positive."""
    first = v[..., :1, :]
    return v * (ops.conj(first) / ops.abs(first))


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("cplx", [False, True])
def test_eigh_reads_one_triangle_like_numpy(uplo, cplx):
    a = normal(2, 4, 4, complex_=cplx)(np.random.default_rng(0))  # not Hermitian
    w, v = ops.eigh(T(a), UPLO=uplo)
    rw, rv = np.linalg.eigh(a, UPLO=uplo)
    np.testing.assert_allclose(w.asnumpy(), rw, rtol=1e-12)
    np.testing.assert_allclose(np.abs(v.asnumpy()), np.abs(rv), rtol=1e-10, atol=1e-12)
    assert w.dtype == rw.dtype and v.dtype == rv.dtype
    np.testing.assert_allclose(ops.eigvalsh(T(a), uplo).asnumpy(), rw, rtol=1e-12)
    fn = lambda x: (ops.eigh(x, uplo)[0], _fix_sign(ops.eigh(x, uplo)[1]))  # noqa: E731
    gradcheck(fn, [T(a[0])], order=2)
    # the other triangle is never read, so it gets no gradient
    g = core.grad(lambda x: (ops.eigh(x, uplo)[0] ** 3).sum())(T(a[0])).asnumpy()
    other = np.triu(g, 1) if uplo == "L" else np.tril(g, -1)
    assert np.all(other == 0)


def test_eigh_degenerate_eigenvalues_have_finite_exact_derivatives():
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    a = q @ np.diag([1.0, 1.0, 1.0, 3.0]) @ q.T  # a triple eigenvalue

    def projector(x):
        """Onto the degenerate eigenspace: independent of the basis eigh picks there."""
        _, v = ops.eigh(x)
        return ops.matmul(v[:, :3], ops.swapaxes(v[:, :3], 0, 1))

    def loss(x):
        w, v = ops.eigh(x)
        return (ops.matmul(v * ops.exp(w), ops.swapaxes(v, 0, 1)) ** 2).sum()  # |expm(x)|^2

    sym = lambda x: 0.5 * (x + ops.swapaxes(x, 0, 1))  # noqa: E731
    # first derivatives are exact; second derivatives at the degenerate point are finite but
    # miss the within-eigenspace limits (as in JAX), so only finiteness is checked for them
    gradcheck(lambda x: projector(sym(x)), [T(a)], order=1)
    gradcheck(lambda x: loss(sym(x)), [T(a)], order=1)
    g = core.grad(lambda x: loss(sym(x)))(T(a)).asnumpy()
    ref = core.grad(lambda x: (ops.expm(sym(x)) ** 2).sum())(T(a)).asnumpy()
    np.testing.assert_allclose(g, ref, rtol=1e-8, atol=1e-10)
    h = core.hessian(lambda x: ops.eigh(sym(x))[0].sum() + projector(sym(x)).sum())(T(a))
    assert np.all(np.isfinite(h.asnumpy()))
    # the identity: every eigenvalue equal
    eye = T(np.eye(3))
    assert np.all(np.isfinite(core.hessian(lambda x: (ops.eigh(x)[0] ** 2).sum())(eye).asnumpy()))


@pytest.mark.parametrize("cplx", [False, True])
def test_eig_values_and_phase_invariant_derivatives(cplx):
    rng = np.random.default_rng(4)
    a = normal(2, 4, 4, complex_=cplx)(rng)
    w, v = ops.eig(T(a))
    rw, rv = np.linalg.eig(a)
    np.testing.assert_allclose(w.asnumpy(), rw, rtol=1e-12)
    np.testing.assert_allclose(v.asnumpy(), rv, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ops.eigvals(T(a)).asnumpy(), rw, rtol=1e-12)
    gradcheck(lambda x: (ops.eig(x)[0], ops.abs(ops.eig(x)[1])), [T(a)], order=2)

    def rebuilt(x):  # V diag(w^2) V^-1 = x @ x, whatever the phases
        w, v = ops.eig(x)
        return ops.matmul(v * ops.expand_dims(w**2, -2), ops.inv(v))

    ref = np.einsum("bij,bjk->bik", a, a)
    np.testing.assert_allclose(rebuilt(T(a)).asnumpy(), ref, rtol=1e-9, atol=1e-10)
    gradcheck(rebuilt, [T(a[0])], order=1)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (2, 5, 3)])
@pytest.mark.parametrize("cplx", [False, True])
def test_svd_like_numpy(shape, cplx):
    a = normal(*shape, complex_=cplx)(np.random.default_rng(5))
    for full in (True, False):
        u, s, vh = ops.svd(T(a), full_matrices=full)
        ru, rs, rvh = np.linalg.svd(a, full_matrices=full)
        assert u.shape == ru.shape and vh.shape == rvh.shape and u.dtype == ru.dtype
        np.testing.assert_allclose(s.asnumpy(), rs, rtol=1e-12)
        np.testing.assert_allclose(np.abs(u.asnumpy()), np.abs(ru), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(np.abs(vh.asnumpy()), np.abs(rvh), rtol=1e-9, atol=1e-12)
    s = ops.svd(T(a), compute_uv=False)
    assert s.dtype == np.linalg.svd(a, compute_uv=False).dtype
    np.testing.assert_allclose(ops.svdvals(T(a)).asnumpy(), rs, rtol=1e-12)

    def factors(x):
        u, s, vh = ops.svd(x, full_matrices=False)
        return ops.abs(u), s, ops.abs(vh)  # autograd's test: phases removed by abs

    gradcheck(factors, [T(a)], order=1)
    gradcheck(lambda x: ops.svd(x, compute_uv=False), [T(a)], order=2)


def test_svd_full_matrices_derivative_of_non_square_is_an_error():
    a = T(np.random.default_rng(6).standard_normal((3, 5)))
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        core.grad(lambda x: ops.svd(x)[0].sum())(a)
    g = core.grad(lambda x: ops.svd(x, full_matrices=False)[1].sum())(a).asnumpy()
    u, _, vh = np.linalg.svd(a.asnumpy(), full_matrices=False)
    np.testing.assert_allclose(g, u @ vh, rtol=1e-10)  # d sum(s) / da = U Vh


def test_pinv_full_and_low_rank():
    rng = np.random.default_rng(7)
    for shape in [(5, 3), (3, 5), (2, 5, 4)]:
        a = rng.standard_normal(shape)
        np.testing.assert_allclose(ops.pinv(T(a)).asnumpy(), np.linalg.pinv(a), rtol=1e-10)
        gradcheck(ops.pinv, [T(a)], order=2)
    # rank 3 of 5 (autograd's fun_low_rank): the svd's derivative would divide by 0 - 0
    x = rng.standard_normal((3, 5))
    low = lambda x: ops.pinv(ops.matmul(ops.swapaxes(x, -1, -2), x))  # noqa: E731
    np.testing.assert_allclose(low(T(x)).asnumpy(), np.linalg.pinv(x.T @ x), rtol=1e-8, atol=1e-10)
    gradcheck(low, [T(x)], order=2)


def test_expm_and_sqrtm_against_scipy():
    rng = np.random.default_rng(8)
    a = 0.5 * rng.standard_normal((2, 3, 3))
    np.testing.assert_allclose(ops.expm(T(a)).asnumpy(), sla.expm(a), rtol=1e-12)
    a32 = ops.expm(T(a.astype(np.float32)))
    assert a32.dtype == np.float32
    p = spd(3, 3)(rng)
    root = ops.sqrtm(T(p))
    np.testing.assert_allclose(root.asnumpy(), sla.sqrtm(p).real, rtol=1e-10)
    np.testing.assert_allclose((root @ root).asnumpy(), p, rtol=1e-10)
    # the gradient of tr(expm(a)) is expm(a)^T
    g = core.grad(lambda x: ops.sum(ops.expm(x) * T(np.eye(3))))(T(a[0])).asnumpy()
    np.testing.assert_allclose(g, sla.expm(a[0]).T, rtol=1e-10)
    with pytest.raises(ValueError, match=r"sqrtm.*no real square root"):
        ops.sqrtm(T(np.diag([-1.0, 2.0])))
    c = ops.sqrtm(T(np.diag([-1.0, 4.0]).astype(np.complex128))).asnumpy()
    np.testing.assert_allclose(c, np.diag([1j, 2.0]), atol=1e-12)


# ---- norms ---------------------------------------------------------------------------------------
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=str)
def test_matrix_norms_like_numpy(ord):
    x = np.random.default_rng(9).standard_normal((4, 3, 5))
    for axis in [(0, 1), (2, 0), (-1, -2)]:
        for keepdims in (False, True):
            out = ops.norm(T(x), ord, axis, keepdims)
            np.testing.assert_allclose(out.asnumpy(), np.linalg.norm(x, ord, axis, keepdims))
    m = x[0]
    np.testing.assert_allclose(ops.norm(T(m), ord).asnumpy(), np.linalg.norm(m, ord))
    order = 2 if ord in (None, "fro", "nuc", 2, -2) else 1  # max/min of sums: order 1 only
    gradcheck(lambda t: ops.norm(t, ord, (2, 0)), [T(x[:, :2, :3])], order=order)
    if ord == "nuc":  # autograd's complex test
        z = normal(4, 3, complex_=True)(np.random.default_rng(1))
        np.testing.assert_allclose(ops.norm(T(z), "nuc").asnumpy(), np.linalg.norm(z, "nuc"))
        gradcheck(lambda t: ops.norm(t, "nuc"), [T(z)], order=2)


@pytest.mark.parametrize("ord", [None, 1, 2, 3, 0.5, np.inf, -np.inf, 0, -1], ids=str)
def test_vector_norms_like_numpy(ord):
    rng = np.random.default_rng(10)
    for x in (rng.standard_normal(5), rng.standard_normal(5) + 1j * rng.standard_normal(5)):
        np.testing.assert_allclose(ops.norm(T(x), ord).asnumpy(), np.linalg.norm(x, ord))
    x = rng.standard_normal((3, 4))
    np.testing.assert_allclose(ops.norm(T(x), ord, 1).asnumpy(), np.linalg.norm(x, ord, 1))
    if ord not in (0, np.inf, -np.inf):
        gradcheck(lambda t: ops.norm(t, ord, 1), [T(x)], order=2)


@pytest.mark.parametrize("ord", [None, 2, 3, 1.5, 1, np.inf])
def test_norm_at_zero_has_subgradient_zero(ord):
    z = T(np.zeros(4))
    g = core.grad(lambda t: ops.norm(t, ord))(z).asnumpy()
    np.testing.assert_array_equal(g, 0.0)
    h = core.hessian(lambda t: ops.norm(t, ord))(z).asnumpy()
    assert np.all(np.isfinite(h))
    _, tangent = core.jvp(lambda t: ops.norm(t, ord), (z,), (T(np.ones(4)),))
    assert np.isfinite(tangent.asnumpy())
    # a zero row inside a batch leaves the other rows' gradients exact
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    g = core.grad(lambda t: ops.norm(t, axis=1).sum())(T(x)).asnumpy()
    np.testing.assert_allclose(g, [[0.0, 0.0], [0.6, 0.8]])


def test_norm_errors_name_the_problem():
    with pytest.raises(ValueError, match="norm: invalid order 'nuc' for vectors"):
        ops.norm(T(np.ones(3)), "nuc")
    with pytest.raises(ValueError, match="norm: invalid order 3 for matrices"):
        ops.norm(T(np.ones((3, 3))), 3)
    with pytest.raises(ValueError, match="1-d or 2-d"):
        ops.norm(T(np.ones((2, 3, 3))), 2)
    # ord=None over any number of axes is the 2-norm of those entries (as before)
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    np.testing.assert_allclose(ops.norm(T(x)).asnumpy(), np.linalg.norm(x.ravel()))


# ---- products ------------------------------------------------------------------------------------
@st.composite
def dot_shapes(draw, name):
    """Shapes of ranks 0-3 that numpy.dot (or inner) accepts."""
    ra, rb = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    a = draw(st.lists(st.integers(1, 3), min_size=ra, max_size=ra))
    b = draw(st.lists(st.integers(1, 3), min_size=rb, max_size=rb))
    if ra and rb:
        k = draw(st.integers(1, 3))
        a[-1] = k
        b[-1 if (name == "inner" or rb == 1) else -2] = k
    return tuple(a), tuple(b)


@settings(max_examples=25, deadline=None)
@given(data=st.data(), name=st.sampled_from(["dot", "inner"]))
def test_dot_and_inner_follow_numpy(data, name):
    sa, sb = data.draw(dot_shapes(name))
    rng = np.random.default_rng(len(sa) * 7 + len(sb))
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    fn, ref = getattr(ops, name), getattr(np, name)
    out = fn(T(a), T(b))
    assert out.shape == np.shape(ref(a, b))
    np.testing.assert_allclose(out.asnumpy(), ref(a, b), rtol=1e-12, atol=1e-12)
    gradcheck(fn, [T(a), T(b)], order=1)


def test_dot_and_inner_errors_name_the_op():
    with pytest.raises(ValueError, match="dot: shapes"):
        ops.dot(T(np.ones((2, 2, 3))), T(np.ones((2, 2, 3))))
    with pytest.raises(ValueError, match="inner: shapes"):
        ops.inner(T(np.ones((2, 3))), T(np.ones((3, 2))))


@pytest.mark.parametrize(
    "sa, sb", [((2, 3), (4, 5)), ((3,), (2, 2)), ((2, 1, 3), (3, 2)), ((), (2,)), ((0, 2), (3,))]
)
def test_kron_like_numpy(sa, sb):
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    np.testing.assert_allclose(ops.kron(T(a), T(b)).asnumpy(), np.kron(a, b))
    if a.size:
        gradcheck(ops.kron, [T(a), T(b)], order=2)


def test_cross_like_numpy():
    rng = np.random.default_rng(12)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((2, 1, 3))
    np.testing.assert_allclose(ops.cross(T(a), T(b)).asnumpy(), np.cross(a, b))
    gradcheck(ops.cross, [T(a), T(b)], order=2)
    at, bt = rng.standard_normal((3, 4)), rng.standard_normal((4, 3))
    got = ops.cross(T(at), T(bt), axisa=0, axisb=1, axisc=0).asnumpy()
    np.testing.assert_allclose(got, np.cross(at, bt, axisa=0, axisb=1, axisc=0))
    np.testing.assert_allclose(
        ops.cross(T(at), T(bt.T), axis=0).asnumpy(), np.cross(at, bt.T, axis=0)
    )
    # 2-vectors: z alone, or z = 0 against a 3-vector (numpy's rules, written out)
    a2, b2 = a[:, :2], b[..., :2]
    np.testing.assert_allclose(
        ops.cross(T(a2), T(b2)).asnumpy(), a2[:, 0] * b2[..., 1] - a2[:, 1] * b2[..., 0]
    )
    a3 = np.concatenate([a2, np.zeros((4, 1))], axis=1)
    np.testing.assert_allclose(ops.cross(T(a2), T(b)).asnumpy(), np.cross(a3, b))
    with pytest.raises(ValueError, match="cross: vectors must have length 2 or 3"):
        ops.cross(T(np.ones(4)), T(np.ones(3)))


# ---- einsum with zero-length axes --------------------------------------------------------------------
@pytest.mark.parametrize(
    "eq, sa, sb",
    [
        ("...ij,...jk->...ik", (2, 0, 3), (2, 3, 4)),
        ("...ij,...jk->...ik", (2, 3, 0), (2, 0, 4)),
        ("...ij,...jk->...ik", (0, 3, 3), (1, 3, 3)),
        ("ij,jk", (0, 3), (3, 0)),
        ("i,i->", (0,), (0,)),
        ("bij->bj", (2, 0, 3), None),
    ],
)
def test_einsum_zero_length_axes(eq, sa, sb):
    rng = np.random.default_rng(13)
    arrays = [rng.standard_normal(s) for s in (sa, sb) if s is not None]
    out = ops.einsum(eq, *[T(x) for x in arrays])
    ref = np.einsum(eq, *arrays)
    assert out.shape == ref.shape
    np.testing.assert_allclose(out.asnumpy(), ref)
    grads = core.grad(lambda *xs: ops.einsum(eq, *xs).sum(), tuple(range(len(arrays))))(
        *[T(x) for x in arrays]
    )
    grads = grads if isinstance(grads, tuple) else (grads,)
    for g, x in zip(grads, arrays):
        assert g.shape == x.shape


def test_einsum_interleaved_sublists_like_numpy():
    rng = np.random.default_rng(14)
    a, b = rng.standard_normal((2, 2, 3)), rng.standard_normal((3, 4))
    args = (a, [Ellipsis, 0, 1], b, [1, 2], [Ellipsis, 0, 2])
    got = ops.einsum(*[T(x) if isinstance(x, np.ndarray) else x for x in args])
    np.testing.assert_allclose(got.asnumpy(), np.einsum(*args), rtol=1e-12)
    got = ops.einsum(T(a), [0, 1, 2], T(a), [0, 1, 2])  # implicit output: a full contraction
    np.testing.assert_allclose(got.asnumpy(), np.einsum(a, [0, 1, 2], a, [0, 1, 2]))
    with pytest.raises(ValueError, match="einsum: subscript 'i'"):
        ops.einsum(T(a), ["i", 0, 1])


def test_decompositions_under_jit_vmap_and_hessian():
    """The rules that transpose a JVP (svd, eig, pinv) run a nested vjp: it must trace under
    jit and batch under vmap like any other rule."""
    x = T(np.random.default_rng(15).standard_normal((3, 4)))

    def loss(x):
        xxt = ops.matmul(x, ops.swapaxes(x, 0, 1))
        u, s, _ = ops.svd(x, full_matrices=False)
        return (
            (ops.abs(u) ** 2 * s).sum()
            + ops.pinv(x).sum()
            + ops.real(ops.eigvals(xxt)).sum()
            + ops.eigvalsh(xxt).sum()
            + ops.expm(x[:, :3]).sum()
        )

    g = core.grad(loss)(x).asnumpy()
    np.testing.assert_allclose(core.jit(core.grad(loss))(x).asnumpy(), g, rtol=1e-12)
    h = core.hessian(loss)(x).asnumpy()
    np.testing.assert_allclose(core.jit(core.hessian(loss))(x).asnumpy(), h, rtol=1e-10)
    xs = T(np.stack([x.asnumpy(), 2 * x.asnumpy()]))
    vg = core.vmap(core.grad(loss))(xs).asnumpy()
    np.testing.assert_allclose(vg[0], g, rtol=1e-12)
    gv = core.grad(lambda xs: core.vmap(loss)(xs).sum())(xs).asnumpy()
    np.testing.assert_allclose(gv, vg, rtol=1e-10)


def test_solve_sylvester_and_solve_banded_like_scipy():
    rng = np.random.default_rng(16)
    a, b, q = rng.standard_normal((3, 3)), rng.standard_normal((2, 2)), rng.standard_normal((3, 2))
    x = ops.solve_sylvester(T(a), T(b), T(q)).asnumpy()
    np.testing.assert_allclose(x, sla.solve_sylvester(a, b, q), rtol=1e-10)
    gradcheck(ops.solve_sylvester, [T(a), T(b), T(q)], order=2)
    qs = rng.standard_normal((4, 3, 2))  # a batch of right-hand sides
    xs = ops.solve_sylvester(T(a), T(b), T(qs)).asnumpy()
    np.testing.assert_allclose(xs, [sla.solve_sylvester(a, b, m) for m in qs], rtol=1e-10)
    with pytest.raises(ValueError, match=r"solve_sylvester: q of shape \(2, 3\)"):
        ops.solve_sylvester(T(a), T(b), T(q.T))
    for lu, rhs in (((1, 1), (5,)), ((1, 2), (5, 2))):
        ab = rng.standard_normal((sum(lu) + 1, 5))
        ab[lu[1]] += 4.0  # a dominant main diagonal
        rhs = rng.standard_normal(rhs)
        got = ops.solve_banded(lu, T(ab), T(rhs)).asnumpy()
        np.testing.assert_allclose(got, sla.solve_banded(lu, ab, rhs), rtol=1e-10)
        gradcheck(lambda m, r, lu=lu: ops.solve_banded(lu, m, r), [T(ab), T(rhs)], order=2)
    with pytest.raises(ValueError, match="solve_banded: ab of shape"):
        ops.solve_banded((1, 1), T(np.ones((2, 5))), T(np.ones(5)))


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5), (2, 4, 2)])
@pytest.mark.parametrize("cplx", [False, True])
def test_qr_like_numpy(shape, cplx):
    a = normal(*shape, complex_=cplx)(np.random.default_rng(17))
    for mode in ("reduced", "complete"):
        q, r = ops.qr(T(a), mode)
        rq, rr = np.linalg.qr(a, mode)
        assert q.dtype == rq.dtype and q.shape == rq.shape and r.shape == rr.shape
        np.testing.assert_allclose(q.asnumpy(), rq, atol=1e-12)
        np.testing.assert_allclose(r.asnumpy(), rr, atol=1e-12)
    np.testing.assert_allclose(ops.qr(T(a), "r").asnumpy(), np.linalg.qr(a, "r"), atol=1e-12)
    gradcheck(lambda x: ops.qr(x), [T(a)], order=1)
    if shape[-2] > shape[-1]:
        with pytest.raises(NotImplementedError, match="mode='reduced'"):
            core.grad(lambda x: ops.abs(ops.qr(x, "complete")[0]).sum())(T(a))
    with pytest.raises(ValueError, match="qr: mode must be"):
        ops.qr(T(a), "raw")


def test_matrix_power_multi_dot_matrix_rank_like_numpy():
    rng = np.random.default_rng(18)
    m = rng.standard_normal((2, 3, 3)) + 2 * np.eye(3)
    for n in (0, 1, 2, 5, -3):
        np.testing.assert_allclose(
            ops.matrix_power(T(m), n).asnumpy(), np.linalg.matrix_power(m, n), rtol=1e-10
        )
    gradcheck(lambda x: ops.matrix_power(x, 3), [T(m)], order=2)
    gradcheck(lambda x: ops.matrix_power(x, -2), [T(m[0])], order=1)
    chain = [rng.standard_normal(s) for s in [(3,), (3, 8), (8, 2), (2, 5), (5,)]]
    got = ops.multi_dot([T(c) for c in chain]).asnumpy()
    np.testing.assert_allclose(got, np.linalg.multi_dot(chain), rtol=1e-12)
    gradcheck(lambda *cs: ops.multi_dot(cs), [T(c) for c in chain[1:4]], order=1)
    low = rng.standard_normal((3, 5, 2)) @ rng.standard_normal((3, 2, 4))
    np.testing.assert_array_equal(ops.matrix_rank(T(low)).asnumpy(), np.linalg.matrix_rank(low))
    assert int(ops.matrix_rank(T(m[0]))) == 3
    with pytest.raises(TypeError, match="matrix_power: exponent must be an int"):
        ops.matrix_power(T(m), 2.0)


def test_transpose_linear_matches_the_pullback():
    # core.rules._define.transpose_linear gives the VJPs of eig, svd, qr and pinv as the
    # transposes of their JVPs: for a linear map it must agree with the engine's pullback
    # (also for a map that conjugates), and give zeros for a map that ignores its input
    from diffsci.core.rules._define import transpose_linear

    rng = np.random.default_rng(11)
    a = T(rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4)))
    x = T(np.zeros((4, 2), dtype=np.complex128))
    ct = T(rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2)))
    for fn in (lambda t: a @ t, lambda t: ops.conj(a @ t) + 2.0 * (a @ t)):
        got = transpose_linear(fn, x, ct)
        want = core.vjp(fn, x)[1](ct)[0]
        np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-12)
    np.testing.assert_allclose(
        transpose_linear(lambda t: ct * 1.0, x, ct).asnumpy(), np.zeros((4, 2)), atol=0
    )
    np.testing.assert_allclose(
        transpose_linear(lambda t: a @ t, x, ct).asnumpy(), (a.asnumpy().T @ ct.asnumpy())
    )


def test_matmul_half_precision_accumulates_in_float32_and_keeps_dtype():
    """float16/bfloat16 matmul: the operands' dtype out (numpy's bfloat16 matmul returns
    float32), the float32-accumulated product rounded once, under jit and grad too."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5, 64)).astype(np.float32)
    y = rng.standard_normal((64, 6)).astype(np.float32)
    for dt in (core.bfloat16, core.float16):
        a, b = core.tensor(x).astype(dt), core.tensor(y).astype(dt)
        exact = a.astype(core.float32).asnumpy() @ b.astype(core.float32).asnumpy()
        for out in (a @ b, core.jit(lambda p, q: p @ q)(a, b)):
            assert out.dtype == dt
            want = core.tensor(exact).astype(dt).astype(core.float32).asnumpy()
            np.testing.assert_array_equal(out.astype(core.float32).asnumpy(), want)
        g = core.grad(lambda p, q: (p @ q).astype(core.float32).sum())(a, b)
        assert g.dtype == dt and g.shape == a.shape
