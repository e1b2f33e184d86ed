"""mindelec's PINN library (architecture, operators, loss, solver, common, geometry, data):
values against formulas and MindElec's documented examples, derivatives against analytic ones
and finite differences, errors that name what was wrong."""

import math

import numpy as np
import pytest

from diffsci import core
from diffsci.core import nn, ops
from diffsci.mindelec.architecture import (
    FCSequential,
    InputScaleNet,
    MTLWeightedLossCell,
    MultiScaleFCCell,
    get_activation,
)
from diffsci.mindelec.common import EPS, L2, LIGHT_SPEED, MU, LearningRate, get_poly_lr
from diffsci.mindelec.data import Dataset
from diffsci.mindelec.geometry import Rectangle, create_config_from_edict
from diffsci.mindelec.loss import Constraints, NetWithLoss, get_loss_metric
from diffsci.mindelec.operators import Grad, Hessian, Jacobian, SecondOrderGrad
from diffsci.mindelec.solver import LossAndTimeMonitor, Problem, Solver

F64 = core.float64


def test_multiscale_cell_is_the_sum_of_its_scaled_subnetworks():
    net = MultiScaleFCCell(
        3,
        2,
        layers=3,
        neurons=8,
        input_scale=[1.0, 2.0, 0.5],
        num_scales=3,
        amp_factor=10,
        scale_factor=2,
        dtype=F64,
    )
    x = core.tensor(np.random.default_rng(0).normal(size=(5, 3)), dtype=F64)
    scaled = x * core.tensor([1.0, 2.0, 0.5], dtype=F64)
    expect = sum(sub(scaled * (10.0 * 2.0**i)).asnumpy() for i, sub in enumerate(net.cell_list))
    np.testing.assert_allclose(net(x).asnumpy(), expect, rtol=1e-12)
    assert len(net.cell_list) == 3 and net.out_channel == 2
    fc = FCSequential(3, 2, layers=4, neurons=8, act="tanh", dtype=F64)
    assert fc(x).shape == (5, 2)
    np.testing.assert_allclose(
        InputScaleNet([2.0, 1.0, 1.0], [1.0, 0.0, 0.0])(x).asnumpy()[:, 0],
        2.0 * (x.asnumpy()[:, 0] - 1.0),
    )
    np.testing.assert_allclose(get_activation("sin")(x).asnumpy(), np.sin(x.asnumpy()))


def test_mtl_weighted_loss_documented_value():
    # MindElec's docstring: MTLWeightedLossCell(2)((1.0, 0.8)) prints 2.2862945
    out = MTLWeightedLossCell(num_losses=2)((core.tensor(1.0), core.tensor(0.8)))
    assert abs(float(out) - 2.2862945) < 1e-6
    with pytest.raises(ValueError, match="num_losses"):
        MTLWeightedLossCell(0)


def _cubic(x):
    return x * x * x


def test_grad_and_second_order_grad_are_analytic():
    x = core.tensor([[1.0, -2.0], [-3.0, 4.0]], dtype=F64)
    np.testing.assert_allclose(Grad(_cubic)(x, 0, 0, _cubic(x)).asnumpy(), [[3.0], [27.0]])
    np.testing.assert_allclose(Grad(_cubic)(x, None, 1, None).asnumpy(), [[0.0, 12.0], [0.0, 48.0]])
    # MindElec's docstring example: SecondOrderGrad(net, 0, 0, 0) of x^3 is [[6], [-18]]
    np.testing.assert_allclose(SecondOrderGrad(_cubic, 0, 0, 0)(x).asnumpy(), [[6.0], [-18.0]])
    with pytest.raises(ValueError, match="output_idx 5 is out of range"):
        Grad(_cubic)(x, 0, 5, None)
    with pytest.raises(TypeError, match="input_idx1"):
        SecondOrderGrad(_cubic, 0.5, 0, 0)


def test_jacobian_hessian_match_finite_differences():
    rng = np.random.default_rng(1)
    a = core.tensor(rng.normal(size=(3, 2)), dtype=F64)
    b = core.tensor(rng.normal(size=(3, 2)), dtype=F64)

    def func(x, y):
        return (x * x * x * y + 3.0 * y * y * x).sum()

    jac = Jacobian(func, 0, 0)(a, b).asnumpy()  # [3, 2]
    an, bn = a.asnumpy(), b.asnumpy()
    np.testing.assert_allclose(jac, 3 * an**2 * bn + 3 * bn**2, rtol=1e-12)
    hes = Hessian(func, 0, 0)(a, b).asnumpy()  # [3, 2, 3, 2]
    eps = 1e-5
    fd = np.zeros_like(hes)
    for i in range(3):
        for j in range(2):
            d = np.zeros_like(an)
            d[i, j] = eps
            plus = Jacobian(func, 0, 0)(core.tensor(an + d, dtype=F64), b).asnumpy()
            minus = Jacobian(func, 0, 0)(core.tensor(an - d, dtype=F64), b).asnumpy()
            fd[:, :, i, j] = (plus - minus) / (2 * eps)
    np.testing.assert_allclose(hes, fd, atol=1e-6)


def test_l2_metric_and_lr_schedules():
    # MindElec's docstring: 0.09543302997807275
    metric = L2()
    metric.update(np.array([0.1, 0.2, 0.6, 0.9]), np.array([0.1, 0.25, 0.7, 0.9]))
    assert abs(metric.eval() - 0.09543302997807275) < 1e-7
    with pytest.raises(ValueError, match="same shape"):
        metric.update(np.zeros(3), np.zeros(4))
    lr = get_poly_lr(0, 0.1, 0.0, 1.0, 10, 110, 2.0)
    assert lr.shape == (110,) and abs(lr[0] - 0.1) < 1e-7 and abs(lr[5] - 0.55) < 1e-7
    assert abs(lr[60] - (1 - 50 / 100) ** 2) < 1e-6
    sched = LearningRate(0.1, 0.001, 0, 10, 0.5)
    assert abs(float(sched(core.tensor(1000))) - 0.001) < 1e-9
    assert abs(float(sched(core.tensor(5))) - ((0.1 - 0.001) * 0.5**0.5 + 0.001)) < 1e-6
    assert abs(LIGHT_SPEED - 1 / math.sqrt(MU * EPS)) / LIGHT_SPEED < 1e-9
    with pytest.raises(ValueError, match="unknown loss"):
        get_loss_metric("l3")


class _Poisson(Problem):
    """-lap u = 2 pi^2 sin(pi x) sin(pi y) on the unit square, u = 0 on the edges."""

    output_names = ("u",)

    def __init__(self, model):
        super().__init__()
        self.uxx = SecondOrderGrad(model, 0, 0, 0)
        self.uyy = SecondOrderGrad(model, 1, 1, 0)

    def governing_equation(self, u, **kwargs):
        x = kwargs["rect_domain_points"]
        f = 2 * math.pi**2 * ops.sin(math.pi * x[:, 0:1]) * ops.sin(math.pi * x[:, 1:2])
        return self.uxx(x) + self.uyy(x) + f

    def boundary_condition(self, u, **kwargs):
        return u


def _poisson_setup(out_channels=1, mtl=True):
    rect = Rectangle(
        "rect",
        [0.0, 0.0],
        [1.0, 1.0],
        sampling_config=create_config_from_edict({"domain": {"size": 128}, "BC": {"size": 64}}),
    )
    data = Dataset({rect: ["domain", "BC"]})
    train = data.create_dataset(
        batch_size=32, shuffle=True, prebatched_data=True, drop_remainder=True, seed=0
    )
    net = MultiScaleFCCell(2, out_channels, layers=3, neurons=16, num_scales=2, dtype=F64)
    weights = MTLWeightedLossCell(2, dtype=F64) if mtl else None
    constraints = Constraints(data, {"rect": _Poisson(net)})
    return data, train, net, weights, constraints


def test_constraints_map_each_subdataset_to_its_method():
    data, _, net, _, constraints = _poisson_setup()
    assert constraints.dataset_cell_index_map == {"rect_domain": 0, "rect_BC": 1}
    kinds = [fn.type for fn in constraints.fn_cell_list]
    assert [k.lower() for k in kinds] == ["equation", "bc"]
    with pytest.raises(ValueError, match="no problem in pde_dict for the sub-dataset"):
        Constraints(data, {"other": _Poisson(net)})


def test_net_with_loss_is_the_sum_of_mean_squared_residuals():
    data, train, net, _, constraints = _poisson_setup(mtl=False)
    batch = next(iter(train.create_tuple_iterator(num_epochs=1)))
    total = NetWithLoss(net, constraints, loss="l2")(*batch)
    prob = constraints.fn_cell_list[0].problem
    dom, bc = (
        batch[data.column_index_map["rect_domain_points"]],
        batch[data.column_index_map["rect_BC_points"]],
    )
    r_dom = prob.governing_equation(net(dom), rect_domain_points=dom).asnumpy()
    r_bc = net(bc).asnumpy()
    np.testing.assert_allclose(float(total), np.mean(r_dom**2) + np.mean(r_bc**2), rtol=1e-10)


def test_mismatched_field_count_is_a_clear_error():
    _, train, _, _, constraints = _poisson_setup(out_channels=2)
    net2 = constraints.fn_cell_list[0].problem.uxx.model
    batch = next(iter(train.create_tuple_iterator(num_epochs=1)))
    with pytest.raises(ValueError, match=r"gives 2 output fields .* written for 1: \['u'\]"):
        NetWithLoss(net2, constraints)(*batch)


def test_problem_without_the_needed_method_names_it():
    class OnlyEquation(Problem):
        def governing_equation(self, u, **kwargs):
            return u

    with pytest.raises(NotImplementedError, match=r"OnlyEquation\.boundary_condition"):
        OnlyEquation().boundary_condition(None)


@pytest.mark.parametrize("jit", [False, True])
def test_solver_trains_a_pinn_eager_and_jit(jit):
    data, train, net, weights, constraints = _poisson_setup()
    opt = nn.Adam(net.trainable_params() + weights.trainable_params(), learning_rate=1e-2)
    solver = Solver(
        net, opt, mode="PINNs", train_constraints=constraints, mtl_weighted_cell=weights, jit=jit
    )
    monitor = LossAndTimeMonitor(len(data), per_print_times=0)
    history = solver.train(15, train, callbacks=[monitor])
    assert len(history) == 15 and monitor.losses == pytest.approx(history)
    assert history[-1] < 0.5 * history[0]


def test_solver_eager_and_jit_steps_agree():
    losses = []
    for jit in (False, True):
        core.set_seed(3)
        _data, train, net, weights, constraints = _poisson_setup()
        opt = nn.Adam(net.trainable_params() + weights.trainable_params(), learning_rate=1e-2)
        solver = Solver(
            net,
            opt,
            mode="PINNs",
            train_constraints=constraints,
            mtl_weighted_cell=weights,
            jit=jit,
        )
        batch = next(iter(train.create_tuple_iterator(num_epochs=1)))
        losses.append([float(solver.train_step(*batch)) for _ in range(3)])
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-9)


def test_solver_rejects_bad_arguments():
    _, _, net, _, _constraints = _poisson_setup()
    opt = nn.Adam(net.trainable_params(), learning_rate=1e-3)
    with pytest.raises(ValueError, match="mode must be one of"):
        Solver(net, opt, mode="PINN")
    with pytest.raises(ValueError, match="needs train_constraints"):
        Solver(net, opt, mode="PINNs")
