"""mindflow.pde sympy front-end: residuals of the built-in problems vanish on exact solutions,
derivatives of any order, normal derivatives, parameters, parse errors, jit."""

import math

import numpy as np
import pytest
import sympy
from scipy import special
from sympy import Derivative, Function, diff, symbols

from diffsci import core
from diffsci.core import nn, ops
from diffsci.mindflow.pde import (
    Burgers,
    NavierStokes,
    PDEWithLoss,
    Poisson,
    normal_derivative,
    sympy_to_core,
    sympy_to_mindspore,
)

from ._models import Columns, SinExp, mlp

RNG = np.random.default_rng(0)


def _points(n, lo, hi):
    return core.tensor(RNG.uniform(lo, hi, size=(n, len(lo))), dtype=core.float64)


def test_burgers_traveling_wave_residual_is_zero():
    """u = c - a tanh(a (x - c t) / (2 nu)) solves u_t + u u_x = nu u_xx (Taylor's shock)."""
    nu = 0.01 / math.pi
    a, c = 0.05, 0.3

    def exact(x):
        return c - a * ops.tanh(a * (x[:, 0:1] - c * x[:, 1:2]) / (2 * nu))

    problem = Burgers(Columns(exact), loss_fn=nn.MSELoss())
    assert problem.mu == nu
    (res,) = problem.parse_node(problem.pde_nodes, inputs=_points(64, [-1, 0], [1, 1]))
    assert tuple(res.shape) == (64, 1)
    assert np.abs(res.numpy()).max() < 1e-15
    # a wrong viscosity leaves a residual (the test can fail)
    problem.pde_nodes = sympy_to_core(
        {"burgers": problem.pde()["burgers"].subs(problem.mu, 2 * nu)},
        problem.in_vars,
        problem.out_vars,
    )
    (res,) = problem.parse_node(problem.pde_nodes, inputs=_points(64, [-1, 0], [1, 1]))
    assert np.abs(res.numpy()).max() > 1e-4


def test_navier_stokes_taylor_green_residual_is_zero():
    """2-D Taylor-Green vortex with nu = 1/Re: u = -cos x sin y e^{-2 nu t},
    v = sin x cos y e^{-2 nu t}, p = -(cos 2x + cos 2y) e^{-4 nu t} / 4."""
    re = 10.0
    nu = 1 / re

    def decay(x, k):
        return ops.exp(-k * nu * x[:, 2:3])

    model = Columns(
        lambda x: -ops.cos(x[:, 0:1]) * ops.sin(x[:, 1:2]) * decay(x, 2),
        lambda x: ops.sin(x[:, 0:1]) * ops.cos(x[:, 1:2]) * decay(x, 2),
        lambda x: -0.25 * (ops.cos(2 * x[:, 0:1]) + ops.cos(2 * x[:, 1:2])) * decay(x, 4),
    )
    problem = NavierStokes(model, re=re)
    x = _points(50, [0, 0, 0], [2 * math.pi, 2 * math.pi, 2])
    res = problem.parse_node(problem.pde_nodes, inputs=x)
    assert [tuple(r.shape) for r in res] == [(50, 1)] * 3
    for r in res:
        assert np.abs(r.numpy()).max() < 1e-14
    assert float(problem.get_loss(x).numpy()) < 1e-28
    # MindFlow's attribute: the [m, N, d] Jacobian; continuity is its trace over (u, v), (x, y)
    jac = problem.jacobian(x).numpy()
    assert jac.shape == (3, 50, 3)
    np.testing.assert_allclose(jac[0, :, 0] + jac[1, :, 1], res[2].numpy()[:, 0], atol=1e-14)
    wrong = NavierStokes(model, re=2 * re)
    assert np.abs(wrong.parse_node(wrong.pde_nodes, inputs=x)[0].numpy()).max() > 1e-3


class Kovasznay(PDEWithLoss):
    """MindFlow's kovasznay problem (its application's model.py), written as a user would."""

    def __init__(self, model, re=20):
        self.re = re
        self.l = 1 / (2 / re) - math.sqrt(1 / (4 / re**2) + 4 * math.pi**2)
        self.x, self.y = symbols("x y")
        self.u, self.v, self.p = (Function(n)(self.x, self.y) for n in "uvp")
        super().__init__(model, [self.x, self.y], [self.u, self.v, self.p])
        self.bc_nodes = sympy_to_mindspore(self.bc(), self.in_vars, self.out_vars)
        self.loss_fn = nn.MSELoss()

    def pde(self):
        u, v, p, x, y = self.u, self.v, self.p, self.x, self.y
        momentum_x = (
            u * diff(u, x) + v * diff(u, y) + diff(p, x) - (diff(u, x, 2) + diff(u, y, 2)) / self.re
        )
        momentum_y = (
            u * diff(v, x) + v * diff(v, y) + diff(p, y) - (diff(v, x, 2) + diff(v, y, 2)) / self.re
        )
        return {
            "momentum_x": momentum_x,
            "momentum_y": momentum_y,
            "continuty": diff(u, x) + diff(v, y),
        }

    def bc(self):
        x, y, lam = self.x, self.y, self.l
        u = 1 - sympy.exp(lam * x) * sympy.cos(2 * sympy.pi * y)
        v = lam / (2 * sympy.pi) * sympy.exp(lam * x) * sympy.sin(2 * sympy.pi * y)
        p = (1 - sympy.exp(2 * lam * x)) / 2
        return {"u": self.u - u, "v": self.v - v, "p": self.p - p}

    def get_loss(self, pde_data, bc_data):
        pde_res = ops.concat(self.parse_node(self.pde_nodes, inputs=pde_data), axis=1)
        bc_res = ops.concat(self.parse_node(self.bc_nodes, inputs=bc_data), axis=1)
        return self.loss_fn(pde_res, ops.zeros_like(pde_res)) + self.loss_fn(
            bc_res, ops.zeros_like(bc_res)
        )


def test_kovasznay_user_problem_residuals_vanish():
    lam = 1 / (2 / 20) - math.sqrt(1 / (4 / 20**2) + 4 * math.pi**2)
    model = Columns(
        lambda x: 1 - ops.exp(lam * x[:, 0:1]) * ops.cos(2 * math.pi * x[:, 1:2]),
        lambda x: lam / (2 * math.pi) * ops.exp(lam * x[:, 0:1]) * ops.sin(2 * math.pi * x[:, 1:2]),
        lambda x: 0.5 * (1 - ops.exp(2 * lam * x[:, 0:1])),
    )
    problem = Kovasznay(model)
    x = _points(40, [-0.5, -0.5], [1.0, 1.5])
    for r in problem.parse_node(problem.pde_nodes, inputs=x) + problem.parse_node(
        problem.bc_nodes, inputs=x
    ):
        assert np.abs(r.numpy()).max() < 1e-12
    assert float(problem.get_loss(x, x).numpy()) < 1e-24


def test_poisson_builtin_and_mindflow_continuous_case():
    # built-in: u_xx + u_yy + 1 = 0 with u = -(x^2 + y^2) / 4
    problem = Poisson(Columns(lambda x: -0.25 * (x[:, 0:1] ** 2 + x[:, 1:2] ** 2)))
    (res,) = problem.parse_node(problem.pde_nodes, inputs=_points(30, [-1, -1], [1, 1]))
    assert np.abs(res.numpy()).max() < 1e-14
    # MindFlow's poisson/continuous in 3-D: lap u = -prod sin(4 pi x_i), Dirichlet and Robin
    x, y, z = symbols("x y z")
    u = Function("u")(x, y, z)
    sins = sympy.sin(4 * sympy.pi * x) * sympy.sin(4 * sympy.pi * y) * sympy.sin(4 * sympy.pi * z)
    exact = sins / (16 * 3 * sympy.pi**2)
    eqs = {
        "pde": diff(u, x, 2) + diff(u, y, 2) + diff(u, z, 2) + sins,
        "dirichlet": u - exact,
        "robin": u
        + diff(u, x)
        + diff(u, y)
        + diff(u, z)
        - exact
        - sum(diff(exact, v) for v in (x, y, z)),
    }
    nodes = sympy_to_core(eqs, [x, y, z], [u])
    net = Columns(
        lambda p: ops.prod(ops.sin(4 * math.pi * p), axis=1, keepdims=True) / (48 * math.pi**2)
    )
    pts = _points(30, [0, 0, 0], [1, 1, 1])
    from diffsci.mindflow.pde import evaluate_formulas

    for r in evaluate_formulas(nodes, net, pts):
        assert np.abs(r.numpy()).max() < 1e-14


def test_normal_derivative_robin_on_a_disk():
    """Robin condition u + du/dn = g on the unit circle for u = x^2 y: du/dn = grad u . (x, y)
    = 3 x^2 y, so g = 4 x^2 y; normals from the geometry sampler."""
    from diffsci.datasets.geometry import Disk

    pts, normals = Disk("disk", (0.0, 0.0), 1.0, dtype=np.float64).sample_boundary(32, seed=0)
    x, y = symbols("x y")
    u = Function("u")(x, y)
    n = sympy.Symbol("n")
    nodes = sympy_to_core({"robin": u + Derivative(u, n) - 4 * x**2 * y}, [x, y], [u])
    assert nodes[0].max_order == 1
    net = Columns(lambda p: p[:, 0:1] ** 2 * p[:, 1:2])
    problem = PDEWithLoss(net, [x, y], [u])
    xb = core.tensor(pts, dtype=core.float64)
    (res,) = problem.parse_node(nodes, inputs=xb, norm=core.tensor(normals, dtype=core.float64))
    assert np.abs(res.numpy()).max() < 1e-13
    # the helper builds the same unevaluated derivative; with time as a last input the
    # normal's 2 components pair with (x, y)
    t = sympy.Symbol("t")
    w = Function("w")(x, y, t)
    nodes = sympy_to_core({"flux": normal_derivative(w)}, [x, y, t], [w])
    net3 = Columns(lambda p: p[:, 0:1] ** 2 * p[:, 1:2] * ops.exp(p[:, 2:3]))
    xt = core.tensor(np.concatenate([pts, np.full((32, 1), 0.5)], axis=1), dtype=core.float64)
    (res,) = PDEWithLoss(net3, [x, y, t], [w]).parse_node(
        nodes, xt, norm=core.tensor(normals, dtype=core.float64)
    )
    np.testing.assert_allclose(
        res.numpy()[:, 0], 3 * pts[:, 0] ** 2 * pts[:, 1] * math.exp(0.5), rtol=1e-12
    )
    with pytest.raises(ValueError, match="no normals"):
        PDEWithLoss(net3, [x, y, t], [w]).parse_node(nodes, xt)


def test_high_order_sympy_derivatives():
    """Euler-Bernoulli / KdV-type terms: u_xxxx, u_xxt, u_ttt of sin(a x) e^{b t}."""
    model = SinExp()
    x, t = symbols("x t")
    u, w = Function("u")(x, t), Function("w")(x, t)
    eqs = {
        "beam": diff(u, (x, 4)),
        "mixed": diff(u, x, x, t) * diff(w, t, 3),
        "w5": diff(w, (x, 2), (t, 3)),
    }
    nodes = sympy_to_core(eqs, [x, t], [u, w])
    assert [f.max_order for f in nodes] == [4, 3, 5]
    xs = RNG.uniform(-1, 1, size=(12, 2))
    res = PDEWithLoss(model, [x, t], [u, w]).parse_node(nodes, core.tensor(xs, dtype=core.float64))
    np.testing.assert_allclose(res[0].numpy()[:, 0], model.exact(0, 4, 0, xs), rtol=1e-12)
    np.testing.assert_allclose(
        res[1].numpy()[:, 0], model.exact(0, 2, 1, xs) * model.exact(1, 0, 3, xs), rtol=1e-11
    )
    np.testing.assert_allclose(res[2].numpy()[:, 0], model.exact(1, 2, 3, xs), rtol=1e-11)


def test_functions_numbers_and_composite_derivatives():
    model = SinExp()
    x, t = symbols("x t")
    u, w = Function("u")(x, t), Function("w")(x, t)
    xs = RNG.uniform(0.1, 0.9, size=(10, 2))
    X, T = xs[:, 0], xs[:, 1]
    U, W = model.exact(0, 0, 0, xs), model.exact(1, 0, 0, xs)
    U_x = model.exact(0, 1, 0, xs)
    cases = {
        "trig": (
            sympy.sin(u) + sympy.cos(x * t) - sympy.tan(w / 4),
            np.sin(U) + np.cos(X * T) - np.tan(W / 4),
        ),
        "exp_log": (
            sympy.exp(-u) * sympy.log(1 + x) + sympy.sqrt(w**2 + 1),
            np.exp(-U) * np.log(1 + X) + np.sqrt(W**2 + 1),
        ),
        "hyper": (
            sympy.tanh(u) + sympy.sinh(t) * sympy.cosh(x),
            np.tanh(U) + np.sinh(T) * np.cosh(X),
        ),
        "abs_sign": (sympy.Abs(u - 0.3) * sympy.sign(w), np.abs(U - 0.3) * np.sign(W)),
        "pow": (
            u**3 + x ** sympy.Rational(3, 2) + w ** (-2) + 2**t + x**x,
            U**3 + X**1.5 + W**-2.0 + 2**T + X**X,
        ),
        "inverse": (
            sympy.atan2(u, x) + sympy.asinh(w) + sympy.acos(u / 2) + sympy.erf(u),
            np.arctan2(U, X) + np.arcsinh(W) + np.arccos(U / 2) + special.erf(U),
        ),
        "piecewise": (
            sympy.Max(u, 0.1, x) - sympy.Min(w, t) + sympy.floor(3 * x),
            np.maximum(np.maximum(U, 0.1), X) - np.minimum(W, T) + np.floor(3 * X),
        ),
        "numbers": (sympy.pi * u + sympy.E + sympy.Rational(1, 3), math.pi * U + math.e + 1 / 3),
        "constant": (sympy.Integer(7), np.full_like(X, 7.0)),
        # Derivative of a composite expression: sympy's chain rule (2 u u_x)
        "composite": (Derivative(u**2, x), 2 * U * U_x),
    }
    nodes = sympy_to_core({k: v[0] for k, v in cases.items()}, [x, t], [u, w])
    res = PDEWithLoss(model, [x, t], [u, w]).parse_node(nodes, core.tensor(xs, dtype=core.float64))
    for (name, (_, ref)), r in zip(cases.items(), res):
        assert tuple(r.shape) == (10, 1), name
        np.testing.assert_allclose(r.numpy()[:, 0], ref, rtol=1e-12, err_msg=name)


def test_parse_errors_name_the_problem():
    x, t, nu, n = symbols("x t nu n")
    u = Function("u")(x, t)
    f = Function("f")(x, t)
    iv, ov = [x, t], [u]
    with pytest.raises(ValueError, match=r"unknown symbol nu.*input variables \[x, t\]"):
        sympy_to_core({"eq": diff(u, t) - nu * diff(u, x, 2)}, iv, ov)
    with pytest.raises(ValueError, match=r"unknown function f\(x, t\)"):
        sympy_to_core({"eq": u - f}, iv, ov)
    with pytest.raises(ValueError, match="with respect to the parameter nu"):
        sympy_to_core({"eq": Derivative(u, nu)}, iv, ov, params=[nu])
    y = sympy.Symbol("y")
    with pytest.raises(ValueError, match="with respect to y, which is not an input variable"):
        sympy_to_core({"eq": Derivative(u, y)}, iv, ov)
    with pytest.raises(ValueError, match=r"function gamma .* not supported"):
        sympy_to_core({"eq": sympy.gamma(u)}, iv, ov)
    with pytest.raises(ValueError, match="only the first normal derivative"):
        sympy_to_core({"eq": Derivative(u, n, x)}, iv, ov)
    with pytest.raises(ValueError, match="normal derivative applies to an output variable"):
        sympy_to_core({"eq": Derivative(u**2, n)}, iv, ov)
    with pytest.raises(ValueError, match=r"u\(x, 0\) is u\(x, t\) at other arguments"):
        sympy_to_core({"eq": Function("u")(x, 0)}, iv, ov)
    with pytest.raises(ValueError, match="the number I is complex"):
        sympy_to_core({"eq": u + sympy.I}, iv, ov)
    with pytest.raises(TypeError, match="out_vars must be applied sympy Functions"):
        sympy_to_core({"eq": x}, iv, [Function("u")])
    with pytest.raises(TypeError, match="equations must be a dict"):
        sympy_to_core([u], iv, ov)
    # a network whose output count does not match out_vars
    problem = PDEWithLoss(SinExp(), iv, ov)
    nodes = sympy_to_core({"eq": diff(u, x)}, iv, ov)
    with pytest.raises(ValueError, match="returns 2 output columns but the equations have 1"):
        problem.parse_node(nodes, inputs=core.ones((4, 2), dtype=core.float64))
    with pytest.raises(ValueError, match="inputs have 3 columns but the equations have 2"):
        problem.parse_node(nodes, inputs=core.ones((4, 3), dtype=core.float64))
    with pytest.raises(NotImplementedError, match="get_loss is not defined"):
        problem.get_loss()


class InverseTaylorGreen(PDEWithLoss):
    """MindFlow's InvNavierStokes: theta1 scales the convection, theta2 is the viscosity."""

    def __init__(self, model, params_val=None):
        self.theta1, self.theta2 = symbols("theta1 theta2")
        self.x, self.y, self.t = symbols("x y t")
        self.u, self.v, self.p = (Function(n)(self.x, self.y, self.t) for n in "uvp")
        super().__init__(
            model,
            [self.x, self.y, self.t],
            [self.u, self.v, self.p],
            [self.theta1, self.theta2],
            params_val,
        )

    def pde(self):
        u, v, p, x, y, t = self.u, self.v, self.p, self.x, self.y, self.t
        th1, th2 = self.theta1, self.theta2
        mx = (
            u.diff(t)
            + th1 * (u * u.diff(x) + v * u.diff(y))
            + p.diff(x)
            - th2 * (diff(u, x, 2) + diff(u, y, 2))
        )
        my = (
            v.diff(t)
            + th1 * (u * v.diff(x) + v * v.diff(y))
            + p.diff(y)
            - th2 * (diff(v, x, 2) + diff(v, y, 2))
        )
        return {"momentum_x": mx, "momentum_y": my, "continuty": u.diff(x) + v.diff(y)}


def _taylor_green(nu):
    def decay(x, k):
        return ops.exp(-k * nu * x[:, 2:3])

    return Columns(
        lambda x: -ops.cos(x[:, 0:1]) * ops.sin(x[:, 1:2]) * decay(x, 2),
        lambda x: ops.sin(x[:, 0:1]) * ops.cos(x[:, 1:2]) * decay(x, 2),
        lambda x: -0.25 * (ops.cos(2 * x[:, 0:1]) + ops.cos(2 * x[:, 1:2])) * decay(x, 4),
    )


def test_inverse_problem_params_are_trainable():
    nu = 0.05
    theta = core.Parameter(core.tensor([1.0, nu], dtype=core.float64), name="theta")
    problem = InverseTaylorGreen(_taylor_green(nu), theta)
    assert problem.trainable_params() == [theta]
    x = _points(40, [0, 0, 0], [6, 6, 1])

    def loss():
        res = ops.concat(problem.parse_node(problem.pde_nodes, inputs=x), axis=1)
        return (res**2).mean()

    assert float(loss().numpy()) < 1e-28
    # away from the truth the loss has a gradient in theta; check it by central differences
    theta.set_data(core.tensor([0.7, 0.2], dtype=core.float64))
    (g,) = core.grad(loss, None, [theta])()
    h = 1e-6
    for k in range(2):
        fd = 0.0
        for sgn in (1, -1):
            val = np.array([0.7, 0.2])
            val[k] += sgn * h
            theta.set_data(core.tensor(val, dtype=core.float64))
            fd += sgn * float(loss().numpy()) / (2 * h)
        np.testing.assert_allclose(g.numpy()[k], fd, rtol=1e-6)
    # params without values: a float32 Parameter of zeros, ready for the optimizer
    default = InverseTaylorGreen(_taylor_green(nu))
    (p,) = default.trainable_params()
    assert isinstance(p, core.Parameter) and tuple(p.shape) == (2,) and p.name == "pde_params"
    with pytest.raises(ValueError, match=r"params_val has shape \(3,\) but there are 2 params"):
        InverseTaylorGreen(_taylor_green(nu), core.Parameter(core.zeros((3,), dtype=core.float64)))


class Burgers1D(Burgers):
    """MindFlow's burgers application problem (src/model.py), unchanged but for imports."""

    def __init__(self, model, loss_fn="mse"):
        super().__init__(model, loss_fn=loss_fn)
        self.ic_nodes = sympy_to_mindspore(self.ic(), self.in_vars, self.out_vars)
        self.bc_nodes = sympy_to_mindspore(self.bc(), self.in_vars, self.out_vars)

    def ic(self):
        return {"ic": self.u + sympy.sin(np.pi * self.x)}

    def bc(self):
        return {"bc": self.u}

    def get_loss(self, pde_data, ic_data, bc_data):
        zero = core.Tensor(np.array([0.0]), core.float32)
        pde_loss = self.loss_fn(self.parse_node(self.pde_nodes, inputs=pde_data)[0], zero)
        ic_loss = self.loss_fn(self.parse_node(self.ic_nodes, inputs=ic_data)[0], zero)
        bc_loss = self.loss_fn(self.parse_node(self.bc_nodes, inputs=bc_data)[0], zero)
        return pde_loss + ic_loss + bc_loss


def test_mindflow_burgers_script_pattern_trains_under_jit():
    """The application's training step (value_and_grad over the problem's loss, Adam, jit):
    jit and eager agree, and a few steps lower the loss."""
    core.set_seed(1)
    net = nn.SequentialCell(
        nn.Dense(2, 16), nn.Tanh(), nn.Dense(16, 16), nn.Tanh(), nn.Dense(16, 1)
    )
    problem = Burgers1D(net)
    pde = core.tensor(RNG.uniform([-1, 0], [1, 1], size=(64, 2)).astype(np.float32))
    ic = core.tensor(np.stack([np.linspace(-1, 1, 32), np.zeros(32)], 1).astype(np.float32))
    bc = core.tensor(
        np.stack([np.repeat([-1.0, 1.0], 16), np.tile(np.linspace(0, 1, 16), 2)], 1).astype(
            np.float32
        )
    )
    opt = nn.Adam(net.trainable_params(), 1e-2)
    grad_fn = core.value_and_grad(problem.get_loss, None, opt.parameters)
    eager_loss, eager_grads = grad_fn(pde, ic, bc)

    @core.jit
    def train_step(pde_data, ic_data, bc_data):
        loss, grads = grad_fn(pde_data, ic_data, bc_data)
        opt(grads)
        return loss

    first = train_step(pde, ic, bc)
    np.testing.assert_allclose(first.numpy(), eager_loss.numpy(), rtol=1e-5)
    for _ in range(100):
        last = train_step(pde, ic, bc)
    assert float(last.numpy()) < 0.5 * float(first.numpy())
    assert all(np.isfinite(g.numpy()).all() for g in eager_grads)


def test_jit_parse_node_matches_eager():
    net = mlp([3, 10, 10, 3])
    problem = NavierStokes(net, re=50.0)
    x = _points(20, [0, 0, 0], [1, 1, 1])

    def residuals(x):
        return ops.concat(problem.parse_node(problem.pde_nodes, inputs=x), axis=1)

    np.testing.assert_allclose(
        core.jit(residuals)(x).numpy(), residuals(x).numpy(), rtol=1e-12, atol=1e-14
    )
