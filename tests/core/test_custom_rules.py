"""core.custom_vjp and core.custom_jvp: the custom rule runs under every composition (grad,
vmap, jit, jvp, their nestings; calls counted), gradients match finite differences in float64,
pytree arguments and outputs, nondiff_argnums, and errors that name what was wrong."""

import dataclasses
import functools
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import Parameter, ops
from diffsci.core.testing import gradcheck


def T(a):
    return core.Tensor(np.asarray(a, dtype=np.float64))


def _np(t):
    return t.asnumpy()


X = np.array([0.3, -1.2, 2.0])
Y = np.array([1.5, 0.4, -0.7])
XS = np.array([[0.3, -1.2, 2.0], [1.1, 0.5, -0.4]])  # a batch of two X's


def sin_mul(counts):
    """custom_vjp (x, y) -> (x * y, sin(x)): a tuple output, a correct bwd that counts calls."""

    @core.custom_vjp
    def f(x, y):
        return x * y, ops.sin(x)

    def fwd(x, y):
        counts["fwd"] += 1
        return (x * y, ops.sin(x)), (x, y)

    def bwd(res, g):
        counts["bwd"] += 1
        x, y = res
        g_prod, g_sin = g
        return g_prod * y + g_sin * ops.cos(x), g_prod * x

    return f.defvjp(fwd, bwd)


def log1pexp(counts):
    """JAX's classic custom_jvp: log(1 + e^x), whose plain derivative is inf/inf at x = 100."""

    @core.custom_jvp
    def f(x):
        return ops.log1p(ops.exp(x))

    @f.defjvp
    def f_jvp(primals, tangents):
        counts["jvp"] += 1
        (x,), (t,) = primals, tangents
        return f(x), t * ops.sigmoid(x)

    return f


def counter():
    return {"fwd": 0, "bwd": 0, "jvp": 0}


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# ---- the reproductions of issue 9 ---------------------------------------------------------------
def test_tuple_output_custom_vjp():
    counts = counter()
    f = sin_mul(counts)
    prod, s = f(T(X), T(Y))
    np.testing.assert_allclose(_np(prod), X * Y)
    np.testing.assert_allclose(_np(s), np.sin(X))
    gx, gy = core.grad(lambda x, y: f(x, y)[0].sum() + 2.0 * f(x, y)[1].sum(), (0, 1))(T(X), T(Y))
    np.testing.assert_allclose(_np(gx), Y + 2.0 * np.cos(X))
    np.testing.assert_allclose(_np(gy), X)
    assert counts["bwd"] == 2  # one per call of f
    gradcheck(lambda x, y: f(x, y), [T(X), T(Y)])


def test_grad_of_vmap_runs_the_custom_backward():
    counts = counter()
    f = sin_mul(counts)

    def loss(xs):
        prod, s = core.vmap(f, in_axes=(0, None))(xs, T(Y))
        return (prod * s).sum()

    g = core.grad(loss)(T(XS))
    np.testing.assert_allclose(_np(g), Y * np.sin(XS) + XS * Y * np.cos(XS))
    assert counts == {"fwd": 1, "bwd": 1, "jvp": 0}  # once, on the whole batch
    # the shared y gets the sum of the examples' cotangents
    gy = core.grad(lambda y: core.vmap(f, in_axes=(0, None))(T(XS), y)[0].sum())(T(Y))
    np.testing.assert_allclose(_np(gy), XS.sum(0))
    gradcheck(lambda xs, y: core.vmap(f, in_axes=(0, None))(xs, y), [T(XS), T(Y)])


def test_the_custom_backward_is_used_not_the_functions_derivative():
    # a clipped gradient differs from fun's derivative: each composition must show the clip
    counts = counter()

    @core.custom_vjp
    def clip_gradient(x):
        return x

    def bwd(res, g):
        counts["bwd"] += 1
        return (ops.clip(g, -1.0, 1.0),)

    clip_gradient.defvjp(lambda x: (x, None), bwd)
    xs = T(XS)
    want = np.clip(3.0 * XS**2, -1.0, 1.0)  # d/dx of clip_gradient(x) ** 3: 3 x^2, clipped

    def per_row(x):
        return (clip_gradient(x) ** 3).sum()

    compositions = {
        "grad(vmap)": lambda: core.grad(lambda a: core.vmap(per_row)(a).sum())(xs),
        "vmap(grad)": lambda: core.vmap(core.grad(per_row))(xs),
        "jit(grad)": lambda: core.jit(core.grad(lambda a: per_row(a)))(xs),
        "grad(jit)": lambda: core.grad(core.jit(lambda a: per_row(a)))(xs),
        "jacrev": lambda: ops.sum(core.jacrev(lambda a: clip_gradient(a) ** 3)(xs), axis=(0, 1)),
    }
    for name, run in compositions.items():
        before = counts["bwd"]
        np.testing.assert_allclose(_np(run()), want, err_msg=name)
        assert counts["bwd"] == before + 1, name


def test_jit_graph_holds_the_custom_backward():
    counts = counter()

    @core.custom_vjp
    def clip_gradient(x):
        return x

    def bwd(res, g):
        counts["bwd"] += 1
        return (ops.clip(g, -1.0, 1.0),)

    clip_gradient.defvjp(lambda x: (x, None), bwd)
    step = core.jit(core.grad(lambda a: (clip_gradient(a) ** 3).sum()))
    for _ in range(3):
        np.testing.assert_allclose(_np(step(T(X))), np.clip(3 * X**2, -1.0, 1.0))
    assert counts["bwd"] == 1 and step.trace_count == 1  # traced once, then the compiled graph
    text = step.lower(T(X)).as_text()
    assert "minimum" in text and "maximum" in text  # the clip of the custom backward


def test_every_composition_matches_finite_differences():
    counts = counter()
    f = sin_mul(counts)
    xs, y = T(XS), T(Y)
    gradcheck(lambda a: core.vmap(f, in_axes=(0, None))(a, y), [xs])  # grad(vmap), jvp(vmap)
    gradcheck(core.vmap(core.grad(lambda a, b: f(a, b)[1].sum() * f(a, b)[0].sum())), [xs, xs])
    gradcheck(core.jit(lambda a, b: f(a, b)), [T(X), y])  # grad(jit)
    gradcheck(lambda a: core.jit(core.grad(lambda u: (f(u, y)[0] ** 2).sum()))(a), [T(X)])
    assert counts["bwd"] > 0


# ---- custom_jvp ---------------------------------------------------------------------------------
def test_log1pexp_is_finite_at_100_in_every_mode():
    # float32, as in JAX's example: exp(100) overflows, so fun's own derivative is inf / inf
    counts = counter()
    f = log1pexp(counts)
    z = core.tensor(np.array([0.0, 10.0, 100.0], np.float32))
    s = _sigmoid(np.array([0.0, 10.0, 100.0]))
    grads = {
        "grad": lambda: core.grad(lambda a: f(a).sum())(z),
        "jvp": lambda: core.jvp(f, (z,), (ops.ones_like(z),))[1],
        "vmap(grad)": lambda: core.vmap(core.grad(f))(z),
        "grad(vmap)": lambda: core.grad(lambda a: core.vmap(f)(a).sum())(z),
        "jit(grad)": lambda: core.jit(core.grad(lambda a: f(a).sum()))(z),
        "grad(jit)": lambda: core.grad(core.jit(lambda a: f(a).sum()))(z),
    }
    with np.errstate(over="ignore"):  # the value itself is inf at 100 in float32
        for name, run in grads.items():
            np.testing.assert_allclose(_np(run()), s, rtol=1e-6, err_msg=name)
        # second order: the derivative of the custom jvp, sigmoid' = s (1 - s), finite too
        h = core.grad(lambda a: core.grad(lambda b: f(b).sum())(a).sum())(z)
        np.testing.assert_allclose(_np(h), s * (1 - s), atol=1e-7)  # float32 1 - s
        hess = core.hessian(lambda a: f(a).sum())(z)
        np.testing.assert_allclose(_np(hess), np.diag(s * (1 - s)), atol=1e-7)
        # without the rule: NaN
        with np.errstate(invalid="ignore"):
            plain = core.grad(lambda a: ops.log1p(ops.exp(a)).sum())(z)
        assert np.isnan(_np(plain)[2])
    assert counts["jvp"] >= len(grads) + 2
    gradcheck(f, [T(X)], order=2)


def test_custom_jvp_runs_under_each_composition():
    counts = counter()
    f = log1pexp(counts)
    xs = T(XS)
    compositions = {
        "jvp": lambda: core.jvp(f, (xs,), (T(np.ones_like(XS)),))[1],
        "jvp(vmap)": lambda: core.jvp(core.vmap(f), (xs,), (T(np.ones_like(XS)),))[1],
        "vmap(jvp)": lambda: core.vmap(lambda a: core.jvp(f, (a,), (ops.ones_like(a),))[1])(xs),
        "grad(vmap)": lambda: core.grad(lambda a: core.vmap(f)(a).sum())(xs),
        "vmap(grad)": lambda: core.vmap(core.grad(lambda a: f(a).sum()))(xs),
        "jit(grad)": lambda: core.jit(core.grad(lambda a: f(a).sum()))(xs),
        "grad(jit)": lambda: core.grad(core.jit(lambda a: f(a).sum()))(xs),
        "jacfwd": lambda: ops.sum(core.jacfwd(f)(T(X)), axis=0),
        "jacrev": lambda: ops.sum(core.jacrev(f)(T(X)), axis=0),
    }
    for name, run in compositions.items():
        before = counts["jvp"]
        got = run()
        want = _sigmoid(X) if name.startswith("jac") else _sigmoid(XS)
        np.testing.assert_allclose(_np(got), want, err_msg=name)
        assert counts["jvp"] > before, name
    gradcheck(core.vmap(f), [xs], order=2)


def test_custom_jvp_with_two_inputs_and_a_dict_output():
    counts = counter()

    @core.custom_jvp
    def polar(r, theta):
        return {"x": r * ops.cos(theta), "y": r * ops.sin(theta)}

    @polar.defjvp
    def polar_jvp(primals, tangents):
        counts["jvp"] += 1
        (r, th), (dr, dth) = primals, tangents
        c, s = ops.cos(th), ops.sin(th)
        out = {"x": r * c, "y": r * s}
        return out, {"x": dr * c - r * s * dth, "y": dr * s + r * c * dth}

    r, th = T(np.abs(X) + 0.5), T(Y)
    gr, gth = core.grad(lambda a, b: (polar(a, b)["x"] * polar(a, b)["y"]).sum(), (0, 1))(r, th)
    rr, tt = np.abs(X) + 0.5, Y
    np.testing.assert_allclose(_np(gr), 2 * rr * np.cos(tt) * np.sin(tt))
    np.testing.assert_allclose(_np(gth), rr**2 * np.cos(2 * tt))
    assert counts["jvp"] == 2
    gradcheck(lambda a, b: tuple(polar(a, b).values()), [r, th], order=2)


# ---- pytrees ------------------------------------------------------------------------------------
class Pair(NamedTuple):
    a: core.Tensor
    b: core.Tensor


@core.tree.register_dataclass
@dataclasses.dataclass
class Flow:
    rho: core.Tensor
    u: core.Tensor
    gamma: float = dataclasses.field(default=1.4, metadata={"static": True})


def test_pytree_arguments_outputs_and_residuals():
    counts = counter()

    @core.custom_vjp
    def energy(pair, flow, scale):
        e = flow.gamma * flow.rho * flow.u**2 * scale
        return {"e": e, "p": Pair(pair.a * pair.b, e.sum())}

    def fwd(pair, flow, scale):
        out = energy.fun(pair, flow, scale)
        return out, {"pair": pair, "flow": flow, "scale": scale, "note": "residuals: any pytree"}

    def bwd(res, g):
        counts["bwd"] += 1
        pair, flow, scale = res["pair"], res["flow"], res["scale"]
        ge = g["e"] + g["p"].b  # e feeds the sum too
        k = flow.gamma * scale
        d_flow = Flow(ge * k * flow.u**2, ge * k * 2 * flow.rho * flow.u, flow.gamma)
        return Pair(g["p"].a * pair.b, g["p"].a * pair.a), d_flow, None

    energy.defvjp(fwd, bwd)
    pair, flow = Pair(T(X), T(Y)), Flow(T(np.abs(Y) + 1), T(X))

    def loss(pair, flow):
        out = energy(pair, flow, 0.5)
        return (out["e"] ** 2).sum() + out["p"].a.sum() + out["p"].b

    gp, gf = core.grad(loss, (0, 1))(pair, flow)
    rho, u = np.abs(Y) + 1, X
    e = 1.4 * rho * u**2 * 0.5
    ge = 2 * e + 1
    np.testing.assert_allclose(_np(gp.a), Y)
    np.testing.assert_allclose(_np(gp.b), X)
    np.testing.assert_allclose(_np(gf.rho), ge * 0.7 * u**2)
    np.testing.assert_allclose(_np(gf.u), ge * 0.7 * 2 * rho * u)
    assert isinstance(gf, Flow) and gf.gamma == 1.4
    assert counts["bwd"] == 1
    # through vmap over the dataclass's fields too
    flows = Flow(T(np.stack([rho, rho + 1])), T(XS))
    gv = core.grad(lambda fl: core.vmap(lambda f1: loss(pair, f1))(fl).sum())(flows)
    for i in range(2):
        r_i, u_i = _np(flows.rho)[i], XS[i]
        ge_i = 2 * (0.7 * r_i * u_i**2) + 1
        np.testing.assert_allclose(_np(gv.u)[i], ge_i * 0.7 * 2 * r_i * u_i)
    assert counts["bwd"] == 2


def test_integer_inputs_and_outputs():
    @core.custom_vjp
    def take(x, idx):
        return x[idx] * 2.0, idx + 1

    def bwd(res, g):
        x, idx = res
        gx = ops.zeros_like(x)
        gx[idx] = g[0] * 2.0
        return gx, None

    take.defvjp(lambda x, idx: (take.fun(x, idx), (x, idx)), bwd)
    idx = core.tensor(np.array([2, 0]))
    g = core.grad(lambda x: take(x, idx)[0].sum())(T(X))
    np.testing.assert_allclose(_np(g), [2.0, 0.0, 2.0])
    np.testing.assert_array_equal(_np(take(T(X), idx)[1]), [3, 1])


# ---- nondiff_argnums ----------------------------------------------------------------------------
def test_nondiff_argnums_pass_python_values_first():
    counts = counter()

    @functools.partial(core.custom_vjp, nondiff_argnums=(0, 2))
    def apply(fn, x, power):
        return fn(x) ** power

    def fwd(fn, x, power):
        y = fn(x)
        return y**power, (x, y)

    def bwd(fn, power, res, g):  # nondiff arguments first, in order
        counts["bwd"] += 1
        x, y = res
        _, pull = core.vjp(fn, x)
        return (pull(g * power * y ** (power - 1))[0],)

    apply.defvjp(fwd, bwd)
    g = core.grad(lambda x: apply(ops.sin, x, 3).sum())(T(X))
    np.testing.assert_allclose(_np(g), 3 * np.sin(X) ** 2 * np.cos(X))
    gv = core.grad(lambda xs: core.vmap(lambda x: apply(ops.tanh, x, 2))(xs).sum())(T(XS))
    np.testing.assert_allclose(_np(gv), 2 * np.tanh(XS) * (1 - np.tanh(XS) ** 2))
    assert counts["bwd"] == 2
    gradcheck(lambda x: apply(ops.sin, x, 3), [T(X)], order=2)


def test_nondiff_argnums_of_custom_jvp():
    @functools.partial(core.custom_jvp, nondiff_argnums=(1,))
    def scaled_softplus(x, beta):
        return ops.log1p(ops.exp(beta * x)) / beta

    @scaled_softplus.defjvp
    def _(beta, primals, tangents):
        (x,), (t,) = primals, tangents
        return scaled_softplus(x, beta), t * ops.sigmoid(beta * x)

    g = core.grad(lambda x: scaled_softplus(x, 4.0).sum())(T([0.5, 100.0]))
    np.testing.assert_allclose(_np(g), _sigmoid(4.0 * np.array([0.5, 100.0])))
    gradcheck(lambda x: scaled_softplus(x, 2.0), [T(X)], order=2)


def test_a_traced_nondiff_argument_is_an_error():
    @functools.partial(core.custom_vjp, nondiff_argnums=(1,))
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (x * y, None), lambda y, res, g: (g * y,))
    with pytest.raises(TypeError, match=r"custom_vjp f: argument 1 is in nondiff_argnums"):
        core.grad(lambda y: f(T(X), y).sum())(T(Y))


# ---- higher order, Parameters, recompute ---------------------------------------------------------
def test_higher_order_through_a_bwd_written_with_core_ops():
    counts = counter()
    f = sin_mul(counts)
    x, y = T(X), T(Y)
    # d2/dx2 of sum(sin(x)) through bwd's cos: -sin
    h = core.grad(lambda a: core.grad(lambda b: f(b, y)[1].sum())(a).sum())(x)
    np.testing.assert_allclose(_np(h), -np.sin(X))
    hess = core.hessian(lambda a: (f(a, y)[0] * f(a, y)[1]).sum())(x)
    np.testing.assert_allclose(_np(hess), np.diag(Y * (2 * np.cos(X) - X * np.sin(X))))
    gradcheck(lambda a, b: f(a, b), [x, y], order=2)


def test_weights_and_recompute():
    counts = counter()
    f = sin_mul(counts)
    w = Parameter(T(Y), name="w")
    block = core.recompute(lambda x: f(x, w)[0] + f(x, w)[1])
    gx, (gw,) = core.grad(lambda x: block(x).sum(), 0, [w])(T(X))
    np.testing.assert_allclose(_np(gx), Y + np.cos(X))
    np.testing.assert_allclose(_np(gw), X)
    assert counts["bwd"] == 2  # the re-run in the backward pass is taped, not the first run


def test_vjp_fn_called_twice_and_unused_outputs():
    counts = counter()
    f = sin_mul(counts)
    out, pull = core.vjp(f, T(X), T(Y))
    np.testing.assert_allclose(_np(out[1]), np.sin(X))
    for _ in range(2):
        gx, gy = pull((T(np.ones(3)), T(np.zeros(3))))
        np.testing.assert_allclose(_np(gx), Y)
        np.testing.assert_allclose(_np(gy), X)
    # only the second output used: the first one's cotangent reaches bwd as zeros
    np.testing.assert_allclose(_np(core.grad(lambda a: f(a, T(Y))[1].sum())(T(X))), np.cos(X))


def test_log_softmax_keeps_working_under_compositions():
    xs = T(np.random.default_rng(0).standard_normal((2, 3, 4)))
    gradcheck(lambda a: core.vmap(lambda r: ops.log_softmax(r, axis=-1))(a), [xs])
    gradcheck(core.vmap(core.grad(lambda r: ops.log_softmax(r, axis=-1)[0].sum())), [xs])


@settings(max_examples=15, deadline=None)
@given(
    batch=st.integers(1, 3),
    shape=st.lists(st.integers(1, 3), min_size=0, max_size=2),
    axis=st.sampled_from([0, -1]),
)
def test_grad_of_vmap_matches_numpy_for_varied_shapes(batch, shape, axis):
    counts = counter()
    f = sin_mul(counts)
    rng = np.random.default_rng(batch * 10 + len(shape))
    xs = rng.standard_normal((batch, *shape))
    y = rng.standard_normal(tuple(shape))
    xs_in = np.moveaxis(xs, 0, axis) if xs.ndim > 1 else xs

    def loss(a):
        prod, s = core.vmap(f, in_axes=(axis, None))(a, T(y))
        return (prod + s * s).sum()

    g = core.grad(loss)(T(xs_in))
    want = y + 2 * np.sin(xs) * np.cos(xs)
    np.testing.assert_allclose(_np(g), np.moveaxis(want, 0, axis) if xs.ndim > 1 else want)
    assert counts["bwd"] == 1


# ---- errors -------------------------------------------------------------------------------------
def _with_bwd(bwd):
    @core.custom_vjp
    def f(x, pair):
        return x * pair[0] * pair[1]

    return f.defvjp(lambda x, pair: (f.fun(x, pair), (x, pair)), bwd)


def test_bwd_errors_name_the_function_argument_and_shapes():
    pair = (T(Y), T(Y))

    def run(bwd):
        core.grad(lambda x: _with_bwd(bwd)(x, pair).sum())(T(X))

    with pytest.raises(ValueError, match=r"custom_vjp f: bwd returned 1 cotangents for 2"):
        run(lambda res, g: (g,))
    with pytest.raises(TypeError, match=r"custom_vjp f: bwd must return a tuple .* got a Tensor"):
        run(lambda res, g: g)
    with pytest.raises(
        ValueError, match=r"custom_vjp f: bwd's cotangent for argument 1 has structure"
    ):
        run(lambda res, g: (g, g))
    with pytest.raises(
        ValueError,
        match=r"custom_vjp f: bwd's cotangent for argument 1 at \[1\] has shape \(2,\), the "
        r"argument has shape \(3,\)",
    ):
        run(lambda res, g: (g, (g, g[:2])))
    with pytest.raises(
        ValueError, match=r"argument 0 has shape \(1,\), the argument has shape \(3"
    ):
        run(lambda res, g: (g[:1], None))
    # under vmap the check sees the per-example shapes
    with pytest.raises(
        ValueError, match=r"argument 0 has shape \(2,\), the argument has shape \(3"
    ):
        core.grad(
            lambda xs: core.vmap(lambda x: _with_bwd(lambda r, g: (g[:2], None))(x, pair))(xs).sum()
        )(T(XS))


def test_fwd_jvp_and_definition_errors():
    @core.custom_vjp
    def f(x):
        return x

    f.defvjp(lambda x: x, lambda res, g: (g,))
    with pytest.raises(TypeError, match=r"custom_vjp f: fwd must return a pair"):
        core.grad(lambda x: f(x).sum())(T(X))
    with pytest.raises(TypeError, match=r"custom_vjp g: call defvjp"):
        _undefined()(T(X))

    @core.custom_jvp
    def h(x):
        return x * 2.0

    h.defjvp(lambda p, t: (p[0] * 2.0, t[0][:2]))
    with pytest.raises(ValueError, match=r"custom_jvp h: jvp's tangent output 0 has shape \(2,\)"):
        core.jvp(h, (T(X),), (T(X),))
    h.defjvp(lambda p, t: (p[0] * 2.0, (t[0],)))
    with pytest.raises(ValueError, match=r"custom_jvp h: jvp's tangent_out has structure"):
        core.grad(lambda x: h(x).sum())(T(X))


def _undefined():
    @core.custom_vjp
    def g(x):
        return x

    return g
