"""The steady 2-D Darcy problem of MindFlow's ``physics_driven/darcy`` (its ``src/darcy.py``),
in mixed form on the unit square (velocity ``(u, v)``, pressure ``p``, unit permeability)::

    u_x + v_y = f,   u + p_x = 0,   v + p_y = 0,   f = 8 pi^2 sin(2 pi x) cos(2 pi y),

with Dirichlet data from the exact solution ``p = sin(2 pi x) cos(2 pi y)``,
``u = -2 pi cos(2 pi x) cos(2 pi y)``, ``v = 2 pi sin(2 pi x) sin(2 pi y)``.
"""

import numpy as np
from sympy import Function, cos, pi, sin, symbols

from diffsci.core import Tensor, ops
from diffsci.core import dtype as mstype
from diffsci.mindflow.core import get_loss_metric
from diffsci.mindflow.pde import PDEWithLoss, sympy_to_mindspore


class Darcy2D(PDEWithLoss):
    """Args: ``model`` ``[N, 2] -> [N, 3]`` ((x, y) -> (u, v, p)); ``loss_fn`` (name or Cell)."""

    def __init__(self, model, loss_fn="mse"):
        self.x, self.y = symbols("x y")
        self.u = Function("u")(self.x, self.y)
        self.v = Function("v")(self.x, self.y)
        self.p = Function("p")(self.x, self.y)
        self.in_vars = [self.x, self.y]
        self.out_vars = [self.u, self.v, self.p]
        self.loss_fn = get_loss_metric(loss_fn) if isinstance(loss_fn, str) else loss_fn
        self.bc_nodes = sympy_to_mindspore(self.bc(), self.in_vars, self.out_vars)
        super().__init__(model, self.in_vars, self.out_vars)

    def force_function(self, x, y):
        """The source ``f = 8 pi^2 sin(2 pi x) cos(2 pi y)``."""
        return 8 * pi**2 * sin(2 * pi * x) * cos(2 * pi * y)

    def pde(self):
        """Mass conservation and Darcy's law, as residuals."""
        return {
            "loss_1": self.u.diff(self.x)
            + self.v.diff(self.y)
            - self.force_function(self.x, self.y),
            "loss_2": self.u + self.p.diff(self.x),
            "loss_3": self.v + self.p.diff(self.y),
        }

    def bc(self):
        """Dirichlet residuals of ``u, v, p``."""
        x, y = self.x, self.y
        return {
            "u_boundary": self.u + 2 * pi * cos(2 * pi * x) * cos(2 * pi * y),
            "v_boundary": self.v - 2 * pi * sin(2 * pi * x) * sin(2 * pi * y),
            "p_boundary": self.p - sin(2 * pi * x) * cos(2 * pi * y),
        }

    def get_loss(self, pde_data, bc_data):
        """``loss_fn`` of the PDE residuals plus that of the boundary residuals (against 0)."""
        zero = Tensor(np.array([0.0]).astype(np.float32), mstype.float32)
        pde_res = ops.Concat(1)(self.parse_node(self.pde_nodes, inputs=pde_data))
        bc_res = ops.Concat(1)(self.parse_node(self.bc_nodes, inputs=bc_data))
        return self.loss_fn(pde_res, zero) + self.loss_fn(bc_res, zero)
