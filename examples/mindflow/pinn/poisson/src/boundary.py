"""Boundary conditions of MindFlow's Poisson cases (its ``src/boundary.py``), as sympy residuals.

The data come from the exact solution ``u = prod_i sin(4 pi x_i) / (16 n pi^2)``.
"""

import sympy


def _exact(n_dim, in_vars):
    """``prod_i sin(4 pi x_i) / (16 n pi^2)``."""
    prod = sympy.Integer(1)
    for var in in_vars:
        prod *= sympy.sin(4 * sympy.pi * var)
    return prod / (16 * n_dim * sympy.pi**2)


def dirichlet(n_dim, in_vars, out_vars):
    """``u - g = 0`` on the boundary, ``g`` the exact solution."""
    return {"bc": out_vars[0] - _exact(n_dim, in_vars)}


def robin(n_dim, in_vars, out_vars):
    """MindFlow's Robin condition ``u + sum_i du/dx_i = h`` (the sum of the partial derivatives,
    not the normal derivative), ``h`` from the exact solution."""
    exact = _exact(n_dim, in_vars)
    lhs = out_vars[0]
    rhs = exact
    for var in in_vars:
        lhs += sympy.diff(out_vars[0], var)
        rhs += sympy.diff(exact, var)
    return {"bc": lhs - rhs}


def periodic(n_dim, in_vars, out_vars):
    """MindFlow's "periodic" condition: a constant residual ``2^n / (16 n pi^2)`` (it has no
    network term, so it only shifts the loss; kept for its API)."""
    del out_vars
    return {"bc": sympy.Integer(2) ** len(in_vars) / (16 * n_dim * sympy.pi**2)}


bc_type = {"dirichlet": dirichlet, "robin": robin, "periodic": periodic}


def get_bc(bc):
    """The boundary-condition builder named ``bc``."""
    try:
        return bc_type[bc]
    except KeyError:
        raise ValueError(f"unknown BC_type {bc!r}; choose one of {', '.join(bc_type)}") from None
