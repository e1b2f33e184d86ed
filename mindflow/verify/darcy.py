"""Closed-form solution of MindFlow's 2-D Darcy problem (``physics_driven/darcy``).

Darcy flow in mixed form on [0, 1]^2 with unit permeability::

    div (u, v) = f,   (u, v) + grad p = 0,   f(x, y) = 8 pi^2 sin(2 pi x) cos(2 pi y),

with Dirichlet data for ``u``, ``v`` and ``p`` taken from the solution MindFlow imposes
(its ``Darcy2D.bc``)::

    p = sin(2 pi x) cos(2 pi y),   u = -p_x = -2 pi cos(2 pi x) cos(2 pi y),
    v = -p_y = 2 pi sin(2 pi x) sin(2 pi y),

so ``u_x + v_y = -Delta p = 8 pi^2 p = f``. Numpy float64.
"""

import numpy as np

__all__ = ["darcy_2d", "darcy_source"]


def darcy_2d(x, y):
    """``(u, v, p)`` at ``(x, y)`` (module docstring); float64 arrays of the broadcast shape."""
    x, y = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    sx, cx = np.sin(2 * np.pi * x), np.cos(2 * np.pi * x)
    sy, cy = np.sin(2 * np.pi * y), np.cos(2 * np.pi * y)
    return -2 * np.pi * cx * cy, 2 * np.pi * sx * sy, sx * cy


def darcy_source(x, y):
    """The forcing ``f = 8 pi^2 sin(2 pi x) cos(2 pi y)``."""
    x, y = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    return 8 * np.pi**2 * np.sin(2 * np.pi * x) * np.cos(2 * np.pi * y)
