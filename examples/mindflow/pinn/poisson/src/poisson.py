"""The Poisson problem of MindFlow's ``poisson/continuous`` case (its ``src/poisson.py``): the PDE
from ``train.pde`` and a boundary condition from ``src/boundary.py``, both sympy, their two mean
squared residuals combined by uncertainty weighting (``MTLWeightedLoss``)."""

import sympy

from diffsci.core import numpy as ms_np
from diffsci.mindflow import MTLWeightedLoss, PDEWithLoss, sympy_to_mindspore


class Poisson(PDEWithLoss):
    """``Delta u = f`` in 1-3 dimensions.

    Args:
        model: the network ``[N, n_dim] -> [N, 1]``.
        n_dim: 1, 2 or 3.
        pde: ``pde(out_vars, in_vars) -> {name: residual}``.
        bc: ``bc(n_dim, in_vars, out_vars) -> {name: residual}`` or None.
    """

    def __init__(self, model, n_dim, pde, bc=None):
        if n_dim not in (1, 2, 3):
            raise ValueError(f"`n_dim` can only be 1, 2 or 3, got {n_dim}")
        self.in_vars = sympy.symbols("x y z"[: 2 * n_dim - 1])
        if n_dim == 1:
            self.in_vars = (self.in_vars,)
        self.out_vars = (sympy.Function("u")(*self.in_vars),)
        self.bc = bc
        self.pde_fun = pde
        super().__init__(model, self.in_vars, self.out_vars)
        if self.bc:
            self.bc_nodes = sympy_to_mindspore(
                self.bc(n_dim, self.in_vars, self.out_vars), self.in_vars, self.out_vars
            )
        self.loss_fn = MTLWeightedLoss(num_losses=2)

    def pde(self):
        """The governing equation."""
        return self.pde_fun(self.out_vars, self.in_vars)

    def get_loss(self, pde_data, bc_data):
        """``MTLWeightedLoss(mean r_pde^2, mean r_bc^2)`` on batches ``[N, n_dim]``."""
        res_pde = self.parse_node(self.pde_nodes, inputs=pde_data)
        res_bc = self.parse_node(self.bc_nodes, inputs=bc_data)
        loss_pde = ms_np.mean(ms_np.square(res_pde[0]))
        loss_bc = ms_np.mean(ms_np.square(res_bc[0]))
        return self.loss_fn((loss_pde, loss_bc))
