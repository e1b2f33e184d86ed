"""Closed-form solutions of MindFlow's Poisson problems (``physics_driven/poisson/continuous``).

MindFlow solves, on an interval, a polygon (rectangle, disk, triangle, pentagon, L-shaped
polygon) or a solid (tetrahedron, cylinder, cone) in ``n`` = 1, 2 or 3 dimensions::

    Delta u = -prod_i sin(4 pi x_i)

with Dirichlet data ``u = g``, Robin data ``u + sum_i du/dx_i = h`` (its ``boundary.robin``) or
periodic data on the boundary, all taken from the solution it compares with (its
``AnalyticSolution``)::

    u(x) = prod_i sin(4 pi x_i) / (16 n pi^2),

since each second derivative ``d^2/dx_i^2`` multiplies the product by ``-(4 pi)^2``, so
``Delta u = -n (4 pi)^2 u = -prod_i sin(4 pi x_i)``. The same ``u`` solves every geometry (the
boundary data follow it), so one function serves all of MindFlow's cases.
"""

import math

import numpy as np

__all__ = ["poisson_exact", "poisson_grad", "poisson_robin_data", "poisson_source"]


def _points(x, name):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] not in (1, 2, 3):
        raise ValueError(f"{name}: points must have shape [N, d] with d in 1..3, got {x.shape}")
    return x


def poisson_exact(x):
    """``u(x) = prod_i sin(4 pi x_i) / (16 d pi^2)``.

    Args:
        x: points [N, d], d in {1, 2, 3}.

    Returns:
        float64 [N, 1].
    """
    x = _points(x, "poisson_exact")
    d = x.shape[1]
    return np.prod(np.sin(4.0 * np.pi * x), axis=1, keepdims=True) / (16.0 * d * math.pi**2)


def poisson_source(x):
    """The right-hand side ``f = -prod_i sin(4 pi x_i)`` of ``Delta u = f``, [N, 1]."""
    x = _points(x, "poisson_source")
    return -np.prod(np.sin(4.0 * np.pi * x), axis=1, keepdims=True)


def poisson_grad(x):
    """``grad u`` of :func:`poisson_exact`, [N, d]:
    ``du/dx_i = cos(4 pi x_i) prod_{j != i} sin(4 pi x_j) / (4 d pi)``."""
    x = _points(x, "poisson_grad")
    d = x.shape[1]
    s, c = np.sin(4.0 * np.pi * x), np.cos(4.0 * np.pi * x)
    cols = []
    for i in range(d):
        others = np.prod(np.delete(s, i, axis=1), axis=1) if d > 1 else 1.0
        cols.append(c[:, i] * others / (4.0 * d * math.pi))
    return np.stack(cols, axis=1)


def poisson_robin_data(x):
    """MindFlow's Robin data ``h = u + sum_i du/dx_i`` on boundary points [N, d] -> [N, 1]."""
    return poisson_exact(x) + poisson_grad(x).sum(axis=1, keepdims=True)
