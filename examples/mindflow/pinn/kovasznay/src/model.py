"""Kovasznay flow as a ``PDEWithLoss`` (MindFlow's ``kovasznay/src/model.py``).

Steady incompressible Navier-Stokes on the unit square (Kovasznay 1948)::

    u u_x + v u_y + p_x - (u_xx + u_yy) / Re = 0,
    u v_x + v v_y + p_y - (v_xx + v_yy) / Re = 0,
    u_x + v_y = 0,

with Dirichlet data for ``u, v, p`` from the exact solution (``lambda = Re/2 - sqrt(Re^2/4 +
4 pi^2)``): ``u = 1 - e^{lambda x} cos 2 pi y``, ``v = lambda / (2 pi) e^{lambda x} sin 2 pi y``,
``p = (1 - e^{2 lambda x}) / 2``.
"""

import math

import sympy
from sympy import Function, diff, symbols

from diffsci.core import nn, ops
from diffsci.core import numpy as ms_np
from diffsci.mindflow import PDEWithLoss, sympy_to_mindspore
from diffsci.mindflow.core import get_loss_metric


class Kovasznay(PDEWithLoss):
    """Args: ``model`` ``[N, 2] -> [N, 3]`` (u, v, p); ``re``; ``loss_fn`` (a Cell or a name)."""

    def __init__(self, model, re=20, loss_fn=None):
        self.re = re
        self.nu = 1 / self.re
        self.l = 1 / (2 * self.nu) - math.sqrt(1 / (4 * self.nu**2) + 4 * math.pi**2)
        self.x, self.y = symbols("x y")
        self.u = Function("u")(self.x, self.y)
        self.v = Function("v")(self.x, self.y)
        self.p = Function("p")(self.x, self.y)
        self.in_vars = [self.x, self.y]
        self.out_vars = [self.u, self.v, self.p]
        super().__init__(model, self.in_vars, self.out_vars)
        self.bc_nodes = sympy_to_mindspore(self.bc(), self.in_vars, self.out_vars)
        if loss_fn is None:
            loss_fn = nn.MSELoss()
        self.loss_fn = get_loss_metric(loss_fn) if isinstance(loss_fn, str) else loss_fn

    def pde(self):
        """The momentum and continuity residuals."""
        u, v, p, x, y = self.u, self.v, self.p, self.x, self.y
        lap_u = diff(u, (x, 2)) + diff(u, (y, 2))
        lap_v = diff(v, (x, 2)) + diff(v, (y, 2))
        momentum_x = u * diff(u, x) + v * diff(u, y) + diff(p, x) - lap_u / self.re
        momentum_y = u * diff(v, x) + v * diff(v, y) + diff(p, y) - lap_v / self.re
        continuty = diff(u, x) + diff(v, y)
        return {"momentum_x": momentum_x, "momentum_y": momentum_y, "continuty": continuty}

    def u_func(self):
        """Exact ``u``."""
        return 1 - sympy.exp(self.l * self.x) * sympy.cos(2 * sympy.pi * self.y)

    def v_func(self):
        """Exact ``v``."""
        return (
            self.l / (2 * sympy.pi) * sympy.exp(self.l * self.x) * sympy.sin(2 * sympy.pi * self.y)
        )

    def p_func(self):
        """Exact ``p``."""
        return (1 - sympy.exp(2 * self.l * self.x)) / 2

    def bc(self):
        """Dirichlet residuals of ``u, v, p``."""
        return {
            "u": self.u - self.u_func(),
            "v": self.v - self.v_func(),
            "p": self.p - self.p_func(),
        }

    def get_loss(self, pde_data, bc_data):
        """``loss_fn`` of the three PDE residuals plus that of the three boundary residuals."""
        pde_residual = ops.Concat(axis=1)(self.parse_node(self.pde_nodes, inputs=pde_data))
        pde_loss = self.loss_fn(pde_residual, ms_np.zeros_like(pde_residual))
        bc_residual = ops.Concat(axis=1)(self.parse_node(self.bc_nodes, inputs=bc_data))
        bc_loss = self.loss_fn(bc_residual, ms_np.zeros_like(bc_residual))
        return pde_loss + bc_loss
