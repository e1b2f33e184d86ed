"""The autodiff API: grad/value_and_grad (MindSpore semantics), vjp/jvp, Jacobians, Hessians,
nesting, perturbation confusion, PINN-style losses, custom_vjp, and error messages."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import Parameter, ops
from diffsci.core.testing import gradcheck

from ._helpers import fake_device_tensor


def _np(t):
    return t.asnumpy()


def T(a):
    return core.Tensor(np.asarray(a, dtype=np.float64))


X = np.array([0.3, -1.2, 2.0])
Y = np.array([1.5, 0.4, -0.7])


def f2(x, y):
    return (ops.sin(x) * y + x * x * y).sum()


def df2_dx(x, y):
    return np.cos(x) * y + 2 * x * y


def df2_dy(x, y):
    return np.sin(x) + x * x


# ---- grad / value_and_grad ----------------------------------------------------------------------
def test_grad_positions():
    x, y = T(X), T(Y)
    np.testing.assert_allclose(_np(core.grad(f2)(x, y)), df2_dx(X, Y))
    np.testing.assert_allclose(_np(core.grad(f2, 1)(x, y)), df2_dy(X, Y))
    np.testing.assert_allclose(_np(core.grad(f2, -1)(x, y)), df2_dy(X, Y))
    gx, gy = core.grad(f2, (0, 1))(x, y)
    np.testing.assert_allclose(_np(gx), df2_dx(X, Y))
    np.testing.assert_allclose(_np(gy), df2_dy(X, Y))
    (gy_only,) = core.grad(f2, (1,))(x, y)
    np.testing.assert_allclose(_np(gy_only), df2_dy(X, Y))


def test_value_and_grad():
    x, y = T(X), T(Y)
    v, g = core.value_and_grad(f2)(x, y)
    assert v.shape == () and v.item() == pytest.approx(float(np.sum(np.sin(X) * Y + X * X * Y)))
    np.testing.assert_allclose(_np(g), df2_dx(X, Y))


def test_grad_of_unused_argument_is_zero():
    g = core.grad(lambda x, y: (x * 2.0).sum(), 1)(T(X), T(Y))
    np.testing.assert_array_equal(_np(g), np.zeros(3))


def test_grad_pytree_argument():
    def f(params, x):
        return (params["w"] * x + params["b"][0]).sum()

    g = core.grad(f)({"w": T(Y), "b": [T(2.0)]}, T(X))
    np.testing.assert_allclose(_np(g["w"]), X)
    assert g["b"][0].item() == pytest.approx(3.0)


def test_weights_captured_by_closure():
    w = Parameter(T(Y), name="w")
    b = Parameter(T(0.5), name="b")

    def loss(x):
        return (ops.tanh(x * w) + b).sum()

    dw = (1 - np.tanh(X * Y) ** 2) * X
    dx = (1 - np.tanh(X * Y) ** 2) * Y
    # weights only
    gw, gb = core.grad(loss, None, [w, b])(T(X))
    np.testing.assert_allclose(_np(gw), dw)
    assert gb.item() == pytest.approx(3.0)
    # positions and weights: (pos_grads, weight_grads)
    gpos, gweights = core.grad(loss, 0, [w, b])(T(X))
    np.testing.assert_allclose(_np(gpos), dx)
    np.testing.assert_allclose(_np(gweights[0]), dw)
    # a single Parameter as weights
    v, (gx, (gw1,)) = core.value_and_grad(loss, 0, w)(T(X))
    assert v.item() == pytest.approx(float(np.sum(np.tanh(X * Y) + 0.5)))
    np.testing.assert_allclose(_np(gw1), dw)
    np.testing.assert_allclose(_np(gx), dx)
    # the parameter is untouched and usable afterwards
    np.testing.assert_array_equal(_np(w), Y)
    assert isinstance(w, Parameter)


def test_has_aux():
    def f(x):
        y = x * x
        return y.sum(), y, "label"

    g, aux = core.grad(f, has_aux=True)(T(X))
    np.testing.assert_allclose(_np(g), 2 * X)
    assert isinstance(aux, tuple) and len(aux) == 2 and aux[1] == "label"
    np.testing.assert_allclose(_np(aux[0]), X * X)
    assert not isinstance(aux[0], core.primitive.Tracer)
    value, g2 = core.value_and_grad(f, has_aux=True)(T(X))
    assert value[0].item() == pytest.approx(float(np.sum(X * X)))
    np.testing.assert_allclose(_np(value[1]), X * X)
    np.testing.assert_allclose(_np(g2), 2 * X)
    w = Parameter(T(2.0), name="w")
    (gx, (gw,)), aux = core.grad(lambda x: ((x * w).sum(), x), 0, [w], has_aux=True)(T(X))
    np.testing.assert_allclose(_np(gx), [2.0] * 3)
    assert gw.item() == pytest.approx(X.sum())


def test_grad_errors():
    with pytest.raises(ValueError, match=r"scalar.*shape \(3,\)"):
        core.grad(lambda x: x * 2.0)(T(X))
    with pytest.raises(ValueError, match="grad_position 2 out of range"):
        core.grad(f2, 2)(T(X), T(Y))
    with pytest.raises(ValueError, match="no weights"):
        core.grad(f2, None)
    with pytest.raises(TypeError, match="Parameters"):
        core.grad(f2, 0, [T(X)])
    with pytest.raises(TypeError, match="has no derivative"):
        core.grad(lambda x: ops.argmax(x))(T(X))
    with pytest.raises(TypeError, match="has_aux"):
        core.grad(lambda x: x.sum(), has_aux=True)(T(X))


def test_grad_keeps_dtype():
    g = core.grad(lambda x: (x * x).sum())(core.tensor([1.0, 2.0]))
    assert g.dtype == core.float32
    g = core.grad(lambda x: (x * x).sum())(core.tensor([1.0, 2.0], dtype="float16"))
    assert g.dtype == core.float16
    g = core.grad(lambda x: (ops.astype(x, "float64") ** 3).sum())(core.tensor([1.0, 2.0]))
    assert g.dtype == core.float32


# ---- vjp / jvp ----------------------------------------------------------------------------------
def test_vjp_and_jvp():
    def f(x, y):
        return ops.sin(x) * y

    out, pull = core.vjp(f, T(X), T(Y))
    np.testing.assert_allclose(_np(out), np.sin(X) * Y)
    c = np.array([1.0, -2.0, 0.5])
    gx, gy = pull(T(c))
    np.testing.assert_allclose(_np(gx), c * np.cos(X) * Y)
    np.testing.assert_allclose(_np(gy), c * np.sin(X))
    gx2, _ = pull(T(2 * c))  # the pullback can be called again
    np.testing.assert_allclose(_np(gx2), 2 * c * np.cos(X) * Y)
    out, tan = core.jvp(f, (T(X), T(Y)), (T(c), T(np.zeros(3))))
    np.testing.assert_allclose(_np(out), np.sin(X) * Y)
    np.testing.assert_allclose(_np(tan), c * np.cos(X) * Y)
    with pytest.raises(ValueError, match="cotangent shape"):
        pull(T(np.ones(2)))
    with pytest.raises(ValueError, match="tangent shape"):
        core.jvp(f, (T(X), T(Y)), (T(np.ones(2)), T(Y)))


def test_vjp_with_aux_and_tuple_output():
    def f(x):
        return (x * 2.0, ops.exp(x)), x.sum()

    (a, b), pull, aux = core.vjp(f, T(X), has_aux=True)
    np.testing.assert_allclose(_np(a), 2 * X)
    np.testing.assert_allclose(_np(b), np.exp(X))
    assert aux[0].item() == pytest.approx(X.sum())
    (g,) = pull((T(np.ones(3)), T(np.ones(3))))
    np.testing.assert_allclose(_np(g), 2 + np.exp(X))


def test_jvp_of_function_not_depending_on_input():
    out, t = core.jvp(lambda x: core.ones(2, dtype="float64"), (T(X),), (T(np.ones(3)),))
    np.testing.assert_array_equal(_np(out), np.ones(2))
    np.testing.assert_array_equal(_np(t), np.zeros(2))


# ---- Jacobians and Hessians ---------------------------------------------------------------------
def vec_fn(x):
    return ops.stack([x[0] * x[1], ops.sin(x[2]), x[0] ** 3])


def vec_jac(x):
    return np.array([[x[1], x[0], 0], [0, 0, np.cos(x[2])], [3 * x[0] ** 2, 0, 0]])


@pytest.mark.parametrize("jac", [core.jacrev, core.jacfwd])
def test_jacobians(jac):
    np.testing.assert_allclose(_np(jac(vec_fn)(T(X))), vec_jac(X), rtol=1e-14)
    a = np.arange(6.0).reshape(2, 3)
    # matrix input and output: J[i, j, k, l] = d out[i, j] / d x[k, l]
    j = jac(lambda m: m * m)(T(a))
    expected = np.zeros((2, 3, 2, 3))
    for i in range(2):
        for k in range(3):
            expected[i, k, i, k] = 2 * a[i, k]
    np.testing.assert_allclose(_np(j), expected)
    # scalar output and several positions
    j0, j1 = jac(lambda x, y: (x * y).sum(), (0, 1))(T(X), T(Y))
    np.testing.assert_allclose(_np(j0), Y)
    np.testing.assert_allclose(_np(j1), X)
    jac_val, aux = jac(lambda x: (x * 2.0, x.sum()), has_aux=True)(T(X))
    np.testing.assert_allclose(_np(jac_val), 2 * np.eye(3))
    assert aux[0].item() == pytest.approx(X.sum())
    # scalar input
    np.testing.assert_allclose(_np(jac(lambda s: ops.stack([s, s * s]))(T(3.0))), [1.0, 6.0])


def test_jacobians_fall_back_to_a_loop_without_batching_rules(monkeypatch):
    from diffsci.core.prims import elementwise as E
    from diffsci.core.vmap import batch_rules

    monkeypatch.delitem(batch_rules, E.sin)
    for jac in (core.jacrev, core.jacfwd):
        np.testing.assert_allclose(_np(jac(vec_fn)(T(X))), vec_jac(X), rtol=1e-14)


def test_jacobians_of_complex_functions():
    z = np.array([0.5 + 1j, -1.0 + 0.3j])

    def f(z):
        return ops.exp(z) * z

    expected = np.diag(np.exp(z) * (1 + z))
    np.testing.assert_allclose(_np(core.jacfwd(f)(core.Tensor(z))), expected)
    np.testing.assert_allclose(_np(core.jacrev(f)(core.Tensor(z))), expected)


def test_hessian():
    def f(x):
        return (x[0] ** 2 * x[1] + ops.exp(x[1] * x[2])).sum()

    x = X
    e = np.exp(x[1] * x[2])
    expected = np.array(
        [
            [2 * x[1], 2 * x[0], 0],
            [2 * x[0], x[2] ** 2 * e, e + x[1] * x[2] * e],
            [0, e + x[1] * x[2] * e, x[1] ** 2 * e],
        ]
    )
    np.testing.assert_allclose(_np(core.hessian(f)(T(x))), expected, rtol=1e-12)
    np.testing.assert_allclose(_np(core.jacrev(core.jacrev(f))(T(x))), expected, rtol=1e-12)
    np.testing.assert_allclose(_np(core.jacfwd(core.jacfwd(f))(T(x))), expected, rtol=1e-12)
    np.testing.assert_allclose(_np(core.jacrev(core.jacfwd(f))(T(x))), expected, rtol=1e-12)


@pytest.mark.parametrize("jac", [core.jacrev, core.jacfwd])
def test_jacobians_of_pytree_outputs(jac):
    def f(x):
        return x * 2.0, {"s": (x * x).sum(), "m": ops.outer(x, x)}

    a, d = jac(f)(T(X))
    np.testing.assert_allclose(_np(a), 2 * np.eye(3))
    np.testing.assert_allclose(_np(d["s"]), 2 * X)
    expected = np.zeros((3, 3, 3))
    for i in range(3):
        expected[i, :, i] += X
        expected[:, i, i] += X
    np.testing.assert_allclose(_np(d["m"]), expected)
    (a0, a1), _ = jac(lambda x, y: (x * y, (x + y).sum()), (0, 1))(T(X), T(Y))
    np.testing.assert_allclose(_np(a0), np.diag(Y))
    np.testing.assert_allclose(_np(a1), np.diag(X))


def test_hessian_with_several_positions():
    def f(x, y):
        return x[0] ** 2 * y[1] + x[1] * y[0] * y[2]

    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])
    (hxx, hxy), (hyx, hyy) = core.hessian(f, (0, 1))(T(x), T(y))
    np.testing.assert_allclose(_np(hxx), [[2 * y[1], 0], [0, 0]])
    np.testing.assert_allclose(_np(hxy), [[0, 2 * x[0], 0], [y[2], 0, y[0]]])
    np.testing.assert_allclose(_np(hyx), _np(hxy).T)
    np.testing.assert_allclose(_np(hyy), [[0, 0, x[1]], [0, 0, 0], [x[1], 0, 0]])


# ---- nesting ------------------------------------------------------------------------------------
def test_third_order_derivatives():
    f = lambda x: ops.sin(x) * x  # noqa: E731
    x = core.tensor(0.7, dtype="float64")
    d1 = core.grad(f)
    d2 = core.grad(d1)
    d3 = core.grad(d2)
    # (x sin x)''' = -3 sin x - x cos x
    assert d3(x).item() == pytest.approx(-3 * np.sin(0.7) - 0.7 * np.cos(0.7), rel=1e-12)
    # forward over forward over reverse
    j3 = core.jacfwd(core.jacfwd(core.grad(f)))(x)
    assert j3.item() == pytest.approx(-3 * np.sin(0.7) - 0.7 * np.cos(0.7), rel=1e-12)
    # reverse over forward over forward
    jj = core.grad(lambda x: core.jacfwd(core.jacfwd(f))(x))(x)
    assert jj.item() == pytest.approx(-3 * np.sin(0.7) - 0.7 * np.cos(0.7), rel=1e-12)


def test_third_order_of_vector_function():
    def f(x):
        return (ops.exp(x[0] * x[1]) * x[2]).sum()

    x = np.array([0.2, 0.5, 1.3])
    t3 = core.jacfwd(core.hessian(f))(T(x))
    assert t3.shape == (3, 3, 3)
    # d^3/dx0 dx1 dx2 of exp(x0 x1) x2 = exp(x0 x1)(1 + x0 x1)
    assert t3[0, 1, 2].item() == pytest.approx(np.exp(0.1) * 1.1, rel=1e-12)
    assert t3[2, 2, 2].item() == pytest.approx(0.0, abs=1e-14)
    # d^3/dx0^3 = x1^3 exp(x0 x1) x2
    assert t3[0, 0, 0].item() == pytest.approx(0.5**3 * np.exp(0.1) * 1.3, rel=1e-12)


def test_perturbation_confusion():
    # d/dx [x * d/dy (x + y)] at y = 1 is 1 (a confused implementation gives 2)
    def inner(x):
        return core.grad(lambda y: x + y)(core.tensor(1.0, dtype="float64"))

    g = core.grad(lambda x: x * inner(x))(core.tensor(3.0, dtype="float64"))
    assert g.item() == pytest.approx(1.0)
    # the same with forward mode outside
    _, t = core.jvp(
        lambda x: x * inner(x),
        (core.tensor(3.0, dtype="float64"),),
        (core.tensor(1.0, dtype="float64"),),
    )
    assert t.item() == pytest.approx(1.0)

    # and with jvp inside (Siskind & Pearlmutter's example)
    def inner_fwd(x):
        return core.jvp(
            lambda y: x * y,
            (core.tensor(2.0, dtype="float64"),),
            (core.tensor(1.0, dtype="float64"),),
        )[1]

    assert core.grad(lambda x: x * inner_fwd(x))(
        core.tensor(3.0, dtype="float64")
    ).item() == pytest.approx(6.0)


# ---- PINN: second derivatives wrt inputs, differentiated wrt weights ---------------------------
def _mlp_params(rng):
    return [
        Parameter(T(rng.standard_normal(s) * 0.7), name=n)
        for s, n in (((2, 8), "w1"), ((8,), "b1"), ((8, 1), "w2"))
    ]


def _mlp(params, x):
    w1, b1, w2 = params
    return (ops.tanh(x @ w1 + b1) @ w2)[..., 0]


def _pinn_loss(params, pts):
    """Residual of u_xx + u_yy = sin(x) on collocation points, by Hessians of the MLP."""

    def u(p):
        return _mlp(params, p)

    residuals = []
    for i in range(pts.shape[0]):
        h = core.hessian(u)(pts[i])
        residuals.append(h[0, 0] + h[1, 1] - ops.sin(pts[i][0]))
    r = ops.stack(residuals)
    return (r * r).mean()


def test_pinn_loss_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    params = _mlp_params(rng)
    pts = T(rng.uniform(-1, 1, (3, 2)))
    grads = core.grad(lambda p: _pinn_loss(params, p), None, params)(pts)
    eps = 1e-6
    for p, g in zip(params, grads):
        base = p.asnumpy().copy()
        num = np.zeros_like(base)
        for k in range(base.size):
            for sign in (1, -1):
                bumped = base.copy()
                bumped.reshape(-1)[k] += sign * eps
                p.set_data(T(bumped))
                num.reshape(-1)[k] += sign * _pinn_loss(params, pts).item() / (2 * eps)
            p.set_data(T(base))
        np.testing.assert_allclose(_np(g), num, rtol=1e-5, atol=1e-8)


def test_pinn_with_vmapped_input_derivatives():
    rng = np.random.default_rng(1)
    params = _mlp_params(rng)
    pts = T(rng.uniform(-1, 1, (4, 2)))

    def loss(w):
        def u(p):
            return _mlp([w, params[1], params[2]], p)

        lap = core.vmap(lambda p: ops.sum(ops.stack([core.hessian(u)(p)[i, i] for i in range(2)])))(
            pts
        )
        return (lap * lap).sum()

    gradcheck(loss, [T(params[0].asnumpy())], order=1)


# ---- stop_gradient and no_grad ------------------------------------------------------------------
def test_stop_gradient():
    g = core.grad(lambda x: (x * core.stop_gradient(x * x)).sum())(T(X))
    np.testing.assert_allclose(_np(g), X * X)
    _, t = core.jvp(lambda x: core.stop_gradient(x) * x, (T(X),), (T(np.ones(3)),))
    np.testing.assert_allclose(_np(t), X)
    h = core.hessian(lambda x: (ops.stop_gradient(x) * x * x).sum())(T(X))
    np.testing.assert_allclose(_np(h), np.diag(2 * X))


def test_no_grad():
    def f(x):
        with core.no_grad():
            c = x * x
        return (c * x).sum()

    np.testing.assert_allclose(_np(core.grad(f)(T(X))), X * X)
    with core.no_grad():
        assert (T(X) * 2.0).shape == (3,)


# ---- custom_vjp ---------------------------------------------------------------------------------
def test_custom_vjp_uses_fwd_and_bwd():
    calls = []

    @core.custom_vjp
    def clipped_sq(x):
        return x * x

    def fwd(x):
        calls.append("fwd")
        return x * x, (x,)

    def bwd(res, g):
        calls.append("bwd")
        (x,) = res
        return (ops.clip(2.0 * x, -1.0, 1.0) * g,)  # a deliberately different gradient

    clipped_sq.defvjp(fwd, bwd)
    x = T([0.2, 3.0, -2.0])
    np.testing.assert_allclose(_np(clipped_sq(x)), [0.04, 9.0, 4.0])
    g = core.grad(lambda x: clipped_sq(x).sum())(x)
    np.testing.assert_allclose(_np(g), [0.4, 1.0, -1.0])
    assert calls == ["fwd", "bwd"]
    # forward mode differentiates the function itself
    _, t = core.jvp(clipped_sq, (x,), (T(np.ones(3)),))
    np.testing.assert_allclose(_np(t), [0.4, 6.0, -4.0])


def test_custom_vjp_second_order_through_bwd():
    @core.custom_vjp
    def softplus(x):
        return ops.log1p(ops.exp(x))

    def fwd(x):
        return softplus.fun(x), (x,)

    def bwd(res, g):
        (x,) = res
        return (g * ops.sigmoid(x),)

    softplus.defvjp(fwd, bwd)
    x = T(X)
    h = core.grad(lambda x: core.grad(lambda y: softplus(y).sum())(x).sum())(x)
    s = 1 / (1 + np.exp(-X))
    np.testing.assert_allclose(_np(h), s * (1 - s), rtol=1e-12)
    gradcheck(lambda x: softplus(x) * x, [x], order=2)


def test_custom_vjp_with_weights_and_two_inputs():
    @core.custom_vjp
    def mul(a, b):
        return a * b

    mul.defvjp(lambda a, b: (a * b, (a, b)), lambda res, g: (g * res[1], None))
    w = Parameter(T(Y), name="w")
    gx, (gw,) = core.grad(lambda x: mul(x, w).sum(), 0, [w])(T(X))
    np.testing.assert_allclose(_np(gx), Y)
    np.testing.assert_array_equal(_np(gw), np.zeros(3))
    with pytest.raises(TypeError, match="defvjp"):
        core.custom_vjp(lambda x: x)(T(X))


def test_custom_vjp_under_vmap():
    @core.custom_vjp
    def f(x):
        return ops.sin(x)

    f.defvjp(lambda x: (ops.sin(x), (x,)), lambda res, g: (g * ops.cos(res[0]),))
    out = core.vmap(core.grad(lambda x: f(x).sum()))(T(np.stack([X, Y])))
    np.testing.assert_allclose(_np(out), np.cos(np.stack([X, Y])))


# ---- error messages -----------------------------------------------------------------------------
def test_shape_errors_name_op_and_shapes():
    with pytest.raises(ValueError, match=r"add.*2, 3.*4, 3"):
        core.ones(2, 3) + core.ones(4, 3)
    with pytest.raises(ValueError, match=r"mul.*2, 3.*4, 3"):
        core.grad(lambda x: (x * core.ones(4, 3)).sum())(core.ones(2, 3))
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(4, 3\)"):
        core.ones(2, 3) @ core.ones(4, 3)
    with pytest.raises(ValueError, match=r"reshape.*\(2, 3\).*7"):
        core.vmap(lambda x: ops.reshape(x, (7,)))(core.ones(4, 2, 3))


def test_debug_nans_names_the_primitive():
    core.set_debug_nans(True)
    with (
        pytest.raises(FloatingPointError, match=r"primitive log\(float64\[2\]\)"),
        np.errstate(invalid="ignore"),
    ):
        ops.log(T([1.0, -1.0]))
    with pytest.raises(FloatingPointError, match="primitive div"), np.errstate(divide="ignore"):
        core.grad(lambda x: (x / core.zeros(2, dtype="float64")).sum())(T([1.0, 2.0]))
    # non-finite inputs do not raise: the NaN came from elsewhere
    out = ops.exp(T([np.nan]))
    assert np.isnan(out.item())
    core.set_debug_nans(False)
    with np.errstate(invalid="ignore"):
        assert np.isnan(ops.log(T([-1.0])).item())


def test_mixing_devices_is_an_error(monkeypatch):
    cpu = core.tensor([1.0, 2.0])
    fake = fake_device_tensor(monkeypatch, [3.0, 4.0])
    assert fake.device == "FAKE"
    with pytest.raises(
        RuntimeError, match=r"add: inputs live on different devices \['CPU', 'FAKE'\]"
    ):
        cpu + fake
    with pytest.raises(RuntimeError, match="different devices"):
        core.grad(lambda x: (x * fake).sum())(cpu)


def test_escaped_tracer_is_reported():
    kept = []

    def f(x):
        kept.append(x * 2.0)
        return x.sum()

    core.grad(f)(T(X))
    with pytest.raises(RuntimeError, match="escaped"):
        core.grad(lambda y: (kept[0] * y).sum())(T(X))


def test_symbolic_values_cannot_be_used_in_python_control_flow():
    with pytest.raises(NotImplementedError, match="no concrete value"):
        core.vmap(lambda x: x.item())(T(X))


# ---- the array path of the backward sweep (core.autodiff.reverse.array_vjps) --------------------
def test_array_rules_give_the_same_gradients_as_the_tensor_rules(monkeypatch):
    from diffsci.core.autodiff import reverse

    rng = np.random.default_rng(7)
    x = core.tensor(rng.standard_normal((6, 5)))
    c = core.tensor(rng.uniform(0.5, 1.5, (6, 5)))
    row = core.tensor(rng.uniform(0.5, 1.5, (5,)))  # broadcast: the sweep sums it back
    s = core.tensor(np.float64(0.7))  # 0-d: numpy returns scalars, which must become arrays

    def f(x, c, row, s):
        y = ops.tanh(x * c + row) / (row + 2.0) - ops.exp(-x) * s
        y = ops.sigmoid(y) * y - y / c
        return ops.sum(y * x + y)  # x is read several times: cotangents accumulate

    g = core.grad(f, grad_position=(0, 1, 2, 3))
    fast = g(x, c, row, s)
    monkeypatch.setattr(reverse, "array_vjps", {})
    slow = g(x, c, row, s)
    for a, b in zip(fast, slow):
        assert type(a) is core.Tensor and a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-14, atol=1e-14)
    assert core.testing.gradcheck(f, (x, c, row, s), order=1)


def test_array_rules_are_not_used_where_the_backward_pass_is_differentiated():
    # grad of grad: the inner sweep runs on tracers of the outer one, so the tensor rules run
    f = lambda x: ops.sum(ops.tanh(x) * ops.exp(x))  # noqa: E731
    x = core.tensor(np.linspace(-1, 1, 7))
    h = core.grad(lambda x: ops.sum(core.grad(f)(x) * x))(x)
    xv = x.asnumpy()
    t, e = np.tanh(xv), np.exp(xv)
    d1 = (1 - t * t) * e + t * e  # f'
    d2 = -2 * t * (1 - t * t) * e + 2 * (1 - t * t) * e + t * e  # f''
    np.testing.assert_allclose(h.asnumpy(), d1 + xv * d2, rtol=1e-12)


# ---- the tape: one VJPTracer per recorded op ----------------------------------------------------
def test_reverse_pass_frees_its_activations_without_the_garbage_collector():
    """Tracers point at their trace; the tape must not point back from the trace, or every
    activation of a gradient would live until a gc run (a memory leak in a training loop)."""
    import gc
    import weakref

    refs = []

    def f(x):
        h = ops.tanh(x * 2.0)
        refs.append(weakref.ref(h))
        refs.append(weakref.ref(h.primal))
        return (h * h).sum()

    gc.disable()
    try:
        g = core.grad(f)(T(X))
        _, vjp_fn = core.vjp(f, T(X))
        (g2,) = vjp_fn(core.tensor(1.0, dtype="float64"))
        del vjp_fn
        assert all(r() is None for r in refs)
    finally:
        gc.enable()
    np.testing.assert_allclose(_np(g), _np(g2))


def test_setitem_on_a_tracer_that_earlier_ops_already_read():
    """``y[idx] = v`` rebinds y; ops recorded before it keep the old value (and its gradient
    path), ops after it see the new one."""
    x0 = np.arange(1.0, 7.0).reshape(2, 3)

    def f(x, v):
        y = x * 1.0
        z = y * 3.0  # reads the old y
        y[0] = v * v
        return (z * y).sum()

    x, v = T(x0), T([0.5, -1.0, 2.0])
    gx, gv = core.grad(f, (0, 1))(x, v)
    y_new = x0.copy()
    y_new[0] = _np(v) ** 2
    np.testing.assert_allclose(_np(gx), 3.0 * y_new + 3.0 * x0 * np.array([[0.0], [1.0]]))
    np.testing.assert_allclose(_np(gv), 2 * _np(v) * 3.0 * x0[0])
    gradcheck(f, [x, v], order=2)


# ---- reverse mode's unrolled fast path against its general path --------------------------------


def _taped_grad(monkeypatch, unrolled, fn, *args):
    """grad of ``fn`` with VJPTrace.process's unrolled cases on or off; (grads, tape)."""
    from diffsci.core.autodiff import reverse

    traces = []
    init = reverse.VJPTrace.__init__

    def recording_init(self):
        init(self)
        traces.append(self.tape)  # the list itself: the backward pass drops the attribute

    monkeypatch.setattr(reverse.VJPTrace, "__init__", recording_init)
    monkeypatch.setattr(reverse.VJPTrace, "unrolled", unrolled)
    grads = core.grad(fn, grad_position=tuple(range(len(args))))(*args)
    (tape,) = traces
    return grads, tape


def _tape_summary(tape):
    index = {id(t): i for i, t in enumerate(tape)}
    inputs = {}  # the differentiated arguments, numbered in order of first use

    def name(p):
        if p is None:
            return None
        if id(p) in index:
            return index[id(p)]
        return f"input{inputs.setdefault(id(p), len(inputs))}"

    return [
        (
            t.prim.name,
            tuple(name(p) for p in t.parents),
            t.dtype,
            t.primal.asnumpy(),
            tuple(sorted(t.params.items())),
        )
        for t in tape
    ]


def test_unrolled_vjp_process_builds_the_tape_of_the_general_path(monkeypatch):
    rng = np.random.default_rng(3)
    x = core.tensor(rng.standard_normal((5, 4)))
    w = core.tensor(rng.standard_normal((4, 3)))
    b = core.tensor(rng.standard_normal(3))

    def f(x, w, b):  # one-input, two-input and three-input primitives, constants mixed in
        h = ops.tanh(x @ w + b)
        h = ops.where(h > 0.1, h * 2.0, ops.exp(-h))
        return (ops.log1p(h * h) - 0.5 * h).sum() + ops.softmax(h, axis=-1).max()

    fast, fast_tape = _taped_grad(monkeypatch, True, f, x, w, b)
    general, general_tape = _taped_grad(monkeypatch, False, f, x, w, b)
    assert len(fast_tape) > 10
    got, want = _tape_summary(fast_tape), _tape_summary(general_tape)
    assert [g[:3] for g in got] == [w_[:3] for w_ in want]
    for g, w_ in zip(got, want):
        np.testing.assert_array_equal(g[3], w_[3])
        assert g[4] == w_[4]
    # the fast path keeps numpy arrays for the array-level VJPs; the general path has none
    assert any(t.arrays is not None for t in fast_tape)
    assert all(t.arrays is None for t in general_tape)
    for g, w_ in zip(fast, general):
        np.testing.assert_allclose(g.asnumpy(), w_.asnumpy(), rtol=1e-13, atol=1e-15)
