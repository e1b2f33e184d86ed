"""Trainer with mindflow.pde's sympy problems: an inverse problem under core.jit."""

import math

import numpy as np
import pytest
from sympy import Function, diff, pi, sin, symbols

from diffsci import core
from diffsci.core import nn
from diffsci.mindflow.pde import PDEWithLoss, sympy_to_mindspore
from diffsci.mindflow.pinn import Trainer, box_distance, hard_constraint

F64 = core.float64


class InversePoisson1D(PDEWithLoss):
    """u'' + k pi^2 sin(pi x) = 0 on (0, 1), u(0) = u(1) = 0, with k unknown (true k = 1:
    u = sin(pi x)); data of u at a few points pin k."""

    def __init__(self, model, k):
        self.x, self.k = symbols("x k")
        self.u = Function("u")(self.x)
        super().__init__(model, [self.x], [self.u], params=[self.k], params_val=k)
        self.data_nodes = sympy_to_mindspore(
            {"data": self.u - sin(pi * self.x)}, [self.x], [self.u]
        )

    def pde(self):
        return {"poisson": diff(self.u, (self.x, 2)) + self.k * pi**2 * sin(pi * self.x)}


def test_inverse_coefficient_recovered_within_one_percent():
    core.set_seed(0)
    net = nn.SequentialCell(
        nn.Dense(1, 16, dtype=F64), nn.Tanh(), nn.Dense(16, 16, dtype=F64), nn.Tanh(),
        nn.Dense(16, 1, dtype=F64),
    )  # fmt: skip
    model = hard_constraint(net, d=box_distance([0.0], [1.0]))
    k = core.Parameter(core.tensor([0.3], dtype=F64), name="k")
    problem = InversePoisson1D(model, k)

    def terms(batch):
        x, x_data = batch
        (r,) = problem.parse_node(problem.pde_nodes, inputs=x)  # [N, 1]
        (d,) = problem.parse_node(problem.data_nodes, inputs=x_data)  # [M, 1]
        return {"pde": (r**2).mean(), "data": (d**2).mean()}

    x = np.linspace(0, 1, 34)[1:-1, None]
    x_data = np.array([[0.2], [0.45], [0.7]])
    tr = Trainer(
        terms, model, extra_params=problem.trainable_params(), lr=1e-2, adam_steps=300,
        lbfgs_steps=150, weights={"data": 100.0}, progress=False,
    )  # fmt: skip
    tr.fit((x, x_data))
    assert float(k.asnumpy()[0]) == pytest.approx(1.0, rel=1e-3)  # issue: within 1%; measured 2e-6
    with core.no_grad():
        u = model(core.tensor(x)).asnumpy()
    assert np.linalg.norm(u - np.sin(math.pi * x)) / np.linalg.norm(np.sin(math.pi * x)) < 1e-2
