"""``Burgers1D``: MindFlow's ``Burgers`` problem with its initial and boundary conditions."""

import math

import numpy as np
import sympy

from diffsci.core import Tensor
from diffsci.core import dtype as mstype
from diffsci.mindflow.pde import Burgers, sympy_to_mindspore


class Burgers1D(Burgers):
    """Burgers' equation on x in [-1, 1], t in [0, 1] with ``u(x, 0) = -sin(pi x)`` and
    ``u(+-1, t) = 0`` (Raissi et al. 2019, sec. 3.1.1).

    Args:
        model (Cell): the network, ``[N, 2] (x, t) -> [N, 1]``.
        loss_fn (str): the loss of every residual. Default ``"mse"``.
    """

    def __init__(self, model, loss_fn="mse"):
        super().__init__(model, loss_fn=loss_fn)
        self.ic_nodes = sympy_to_mindspore(self.ic(), self.in_vars, self.out_vars)
        self.bc_nodes = sympy_to_mindspore(self.bc(), self.in_vars, self.out_vars)

    def ic(self):
        """``{"ic": u + sin(pi x)}`` (zero at t = 0)."""
        return {"ic": self.u + sympy.sin(math.pi * self.x)}

    def bc(self):
        """``{"bc": u}`` (zero at x = +-1)."""
        return {"bc": self.u}

    def get_loss(self, pde_data, ic_data, bc_data):
        """PDE + IC + BC mean squared residuals on batches ``[N, 2]`` each (a 0-d Tensor)."""
        zero = Tensor(np.array([0.0]), mstype.float32)
        total = None
        for nodes, data in (
            (self.pde_nodes, pde_data),
            (self.ic_nodes, ic_data),
            (self.bc_nodes, bc_data),
        ):
            residual = self.parse_node(nodes, inputs=data)[0]  # [N, 1]
            term = self.loss_fn(residual, zero)
            total = term if total is None else total + term
        return total
