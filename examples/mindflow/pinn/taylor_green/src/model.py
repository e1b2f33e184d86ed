"""The 2-D Taylor-Green problem (MindFlow's ``taylor_green/src/model.py``): the built-in
``NavierStokes`` equations with the initial and boundary data of the vortex
``u = -cos x sin y e^{-2t}``, ``v = sin x cos y e^{-2t}``,
``p = -(cos 2x + cos 2y) e^{-4t} / 4`` (Re = 1)."""

import sympy

from diffsci.core import numpy as mnp
from diffsci.core import ops
from diffsci.mindflow.pde import NavierStokes, sympy_to_mindspore


class NavierStokes2D(NavierStokes):
    """Args: ``model`` ``[N, 3] -> [N, 3]`` ((x, y, t) -> (u, v, p)), ``re``, ``loss_fn``."""

    def __init__(self, model, re=100, loss_fn="mse"):
        super().__init__(model, re=re, loss_fn=loss_fn)
        self.ic_nodes = sympy_to_mindspore(self.ic(), self.in_vars, self.out_vars)
        self.bc_nodes = sympy_to_mindspore(self.bc(), self.in_vars, self.out_vars)

    def ic(self):
        """Residuals of the initial condition at t = 0."""
        x, y = self.x, self.y
        return {
            "ic_u": self.u + sympy.cos(x) * sympy.sin(y),
            "ic_v": self.v - sympy.sin(x) * sympy.cos(y),
            "ic_p": self.p + sympy.Rational(1, 4) * (sympy.cos(2 * x) + sympy.cos(2 * y)),
        }

    def bc(self):
        """Residuals of the exact solution on the boundary."""
        x, y, t = self.x, self.y, self.t
        decay, decay2 = sympy.exp(-2 * t), sympy.exp(-4 * t)
        return {
            "bc_u": self.u + sympy.cos(x) * sympy.sin(y) * decay,
            "bc_v": self.v - sympy.sin(x) * sympy.cos(y) * decay,
            "bc_p": self.p + sympy.Rational(1, 4) * (sympy.cos(2 * x) + sympy.cos(2 * y)) * decay2,
        }

    def _loss(self, nodes, data):
        residual = ops.Concat(1)(self.parse_node(nodes, inputs=data))
        return self.loss_fn(residual, mnp.zeros_like(residual))

    def get_loss(self, pde_data, ic_data, bc_data):
        """PDE + IC + BC losses on batches ``[N, 3]``."""
        return (
            self._loss(self.pde_nodes, pde_data)
            + self._loss(self.ic_nodes, ic_data)
            + self._loss(self.bc_nodes, bc_data)
        )
