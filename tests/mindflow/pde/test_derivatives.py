"""mindflow.pde.derivatives: input derivatives of any order against closed forms, finite
differences and torch; the plan shares gradients; one forward pass per tower; jit; grad with
respect to the parameters."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.mindflow.pde.derivatives import DerivativePlan, evaluate

from ._models import SinExp, mlp

multi_index = st.tuples(st.integers(0, 1), st.integers(0, 4), st.integers(0, 3))


@settings(max_examples=25, deadline=None)
@given(
    st.lists(multi_index, min_size=1, max_size=6),
    st.integers(1, 6),
    st.integers(0, 2**31 - 1),
)
def test_closed_form_any_order(requests, n, seed):
    """d^m/dx^m d^n/dt^n of two closed-form columns, orders 0..7 mixed, vs the formulas."""
    rng = np.random.default_rng(seed)
    xs = rng.uniform(-1.0, 1.0, size=(n, 2))
    model = SinExp()
    reqs = [(j, (0,) * m + (1,) * k) for j, m, k in requests]
    plan = DerivativePlan(reqs, 2, 2)
    out, derivs, _ = evaluate(model, core.tensor(xs, dtype=core.float64), plan)
    assert tuple(out.shape) == (n, 2)
    for j, m, k in requests:
        got = derivs[(j, (0,) * m + (1,) * k)]
        assert tuple(got.shape) == (n, 1)
        ref = model.exact(j, m, k, xs)
        np.testing.assert_allclose(got.numpy()[:, 0], ref, rtol=1e-11, atol=1e-11)


def test_index_order_does_not_matter():
    xs = core.tensor(np.random.default_rng(1).uniform(size=(4, 2)), dtype=core.float64)
    plan = DerivativePlan([(0, (1, 0, 0)), (0, (0, 1, 0))], 2, 2)
    _, derivs, _ = evaluate(SinExp(), xs, plan)
    assert list(derivs) == [(0, (0, 0, 1))]


def test_plan_shares_lower_orders():
    # u_xx, u_xy, u_yy: G(u), G(u, x), G(u, y) -- u_xy reuses one of the second gradients
    plan = DerivativePlan([(0, (0, 0)), (0, (0, 1)), (0, (1, 1))], 2, 1)
    assert plan.gradients == [(0, ()), (0, (0,)), (0, (1,))]
    # Navier-Stokes (x, y, t) -> (u, v, p): first derivatives of all three, second in x and y
    # of u and v: 3 + 4 gradients
    ns = [(j, (i,)) for j in range(3) for i in range(3)]
    ns += [(j, (i, i)) for j in (0, 1) for i in (0, 1)]
    plan = DerivativePlan(ns, 3, 3)
    assert len(plan.gradients) == 7
    assert plan.max_order == 2
    # a 4th derivative is a chain of 4 gradients; u_xxxy then needs only one more
    plan = DerivativePlan([(0, (0, 0, 0, 0)), (0, (0, 0, 0, 1))], 2, 1)
    assert len(plan.gradients) == 4


def test_one_forward_pass_per_tower():
    calls = []
    model = SinExp(calls=calls)
    xs = core.tensor(np.random.default_rng(2).uniform(size=(5, 2)), dtype=core.float64)
    reqs = [(0, (0, 0, 0)), (1, (1, 1)), (0, (0, 1)), (1, ()), (0, (1,))]
    evaluate(model, xs, DerivativePlan(reqs, 2, 2))
    assert len(calls) == 1


def _fd_third(net, xs, h=1e-3):
    """u_xxy by central differences of network values (float64), O(h^2)."""

    def u(dx, dy):
        shifted = xs + np.array([dx, dy])
        return net(core.tensor(shifted, dtype=core.float64)).numpy()[:, 0]

    def u_xx(dy):
        return (u(h, dy) - 2 * u(0, dy) + u(-h, dy)) / h**2

    return (u_xx(h) - u_xx(-h)) / (2 * h)


def test_mlp_third_derivative_vs_finite_differences():
    net = mlp([2, 16, 16, 1])
    xs = np.random.default_rng(3).uniform(-1, 1, size=(6, 2))
    plan = DerivativePlan([(0, (0, 0, 1))], 2, 1)
    _, derivs, _ = evaluate(net, core.tensor(xs, dtype=core.float64), plan)
    np.testing.assert_allclose(
        derivs[(0, (0, 0, 1))].numpy()[:, 0], _fd_third(net, xs), rtol=2e-5, atol=2e-6
    )


@pytest.mark.parity
def test_mlp_derivatives_match_torch():
    import torch

    net = mlp([3, 12, 12, 2], act=core.nn.Tanh)
    ws = [p.numpy() for p in net.trainable_params()]
    xs = np.random.default_rng(4).uniform(-1, 1, size=(7, 3))
    reqs = [(0, (0,)), (1, (2,)), (0, (0, 1)), (1, (2, 2)), (0, (0, 0, 1, 2)), (1, (1, 1, 1))]
    _, derivs, _ = evaluate(net, core.tensor(xs, dtype=core.float64), DerivativePlan(reqs, 3, 2))

    tw = [torch.tensor(w) for w in ws]

    def tnet(x):
        h = torch.tanh(x @ tw[0].T + tw[1])
        h = torch.tanh(h @ tw[2].T + tw[3])
        return h @ tw[4].T + tw[5]

    x = torch.tensor(xs, requires_grad=True)
    out = tnet(x)
    for j, idx in reqs:
        d = out[:, j]
        for i in idx:
            d = torch.autograd.grad(d.sum(), x, create_graph=True)[0][:, i]
        np.testing.assert_allclose(
            derivs[(j, idx)].numpy()[:, 0], d.detach().numpy(), rtol=1e-10, atol=1e-12
        )


def test_jit_matches_eager():
    net = mlp([2, 8, 8, 1])
    xs = core.tensor(np.random.default_rng(5).uniform(size=(9, 2)), dtype=core.float64)
    plan = DerivativePlan([(0, (1,)), (0, (0, 0)), (0, (0, 0, 0))], 2, 1)

    def fn(x):
        _, d, _ = evaluate(net, x, plan)
        return d[(0, (1,))] + d[(0, (0, 0))] * d[(0, (0, 0, 0))]

    np.testing.assert_allclose(core.jit(fn)(xs).numpy(), fn(xs).numpy(), rtol=1e-12, atol=1e-13)


def test_grad_wrt_parameters_vs_finite_differences():
    """d/dW of mean((u_t + u u_x - nu u_xx)^2) through the tower, against central FD."""
    net = mlp([2, 6, 6, 1], seed=7)
    xs = core.tensor(np.random.default_rng(6).uniform(-1, 1, size=(10, 2)), dtype=core.float64)
    plan = DerivativePlan([(0, ()), (0, (0,)), (0, (1,)), (0, (0, 0))], 2, 1)

    def loss():
        _, d, _ = evaluate(net, xs, plan)
        r = d[(0, (1,))] + d[(0, ())] * d[(0, (0,))] - 0.05 * d[(0, (0, 0))]
        return (r**2).mean()

    params = net.trainable_params()
    grads = core.grad(loss, None, params)()
    for p, g in zip(params[:2], grads[:2]):  # first layer's weight and bias
        base = p.numpy().copy()
        fd = np.zeros_like(base)
        h = 1e-6
        for k in np.ndindex(base.shape):
            for sgn in (1, -1):
                w = base.copy()
                w[k] += sgn * h
                p.set_data(core.tensor(w, dtype=core.float64))
                fd[k] += sgn * float(loss().numpy()) / (2 * h)
        p.set_data(core.tensor(base, dtype=core.float64))
        np.testing.assert_allclose(g.numpy(), fd, rtol=1e-5, atol=1e-9)


def test_bad_input():
    plan = DerivativePlan([(0, (0,))], 2, 1)
    with pytest.raises(ValueError, match="returns 2 output columns but the equations have 1"):
        evaluate(SinExp(), core.ones((3, 2), dtype=core.float64), plan)
    with pytest.raises(ValueError, match="inputs have 3 columns"):
        evaluate(SinExp(), core.ones((3, 3), dtype=core.float64), plan)
    with pytest.raises(ValueError, match="output column 4 out of range"):
        DerivativePlan([(4, ())], 2, 1)
    with pytest.raises(ValueError, match="input column 2 out of range"):
        DerivativePlan([(0, (2,))], 2, 1)
