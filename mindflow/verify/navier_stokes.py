"""Closed-form solutions of the incompressible Navier-Stokes equations (density 1)::

    u_t + (u . grad) u = -grad p + nu Delta u,   div u = 0.

- Kovasznay flow (Kovasznay 1948, "Laminar flow behind a two-dimensional grid", Proc. Camb.
  Phil. Soc. 44), steady, with ``nu = 1 / Re`` and ``lambda = Re / 2 - sqrt(Re^2 / 4 + 4 pi^2)``::

      u = 1 - exp(lambda x) cos(2 pi y),   v = lambda / (2 pi) exp(lambda x) sin(2 pi y),
      p = (1 - exp(2 lambda x)) / 2.

  MindFlow's ``navier_stokes/kovasznay`` uses Re = 20 on the unit square [0, 1]^2.
- 2-D Taylor-Green vortex (Taylor & Green 1937), periodic in x and y with period 2 pi, in
  MindFlow's sign convention (``navier_stokes/taylor_green``: [0, 2 pi]^2, t in [0, 2], Re = 1,
  so ``nu = 1``)::

      u = -cos x sin y F(t),  v = sin x cos y F(t),  p = -(cos 2x + cos 2y) F(t)^2 / 4,
      F(t) = exp(-2 nu t).

Numpy float64.
"""

import math

import numpy as np

__all__ = ["kovasznay", "kovasznay_lambda", "taylor_green_2d"]


def kovasznay_lambda(re=20.0):
    """``lambda = Re / 2 - sqrt(Re^2 / 4 + 4 pi^2)`` (negative: the wake decays downstream)."""
    if not re > 0:
        raise ValueError(f"kovasznay: re must be > 0, got {re!r}")
    return re / 2.0 - math.sqrt(re * re / 4.0 + 4.0 * math.pi**2)


def kovasznay(x, y, re=20.0):
    """Kovasznay flow ``(u, v, p)`` at points ``(x, y)`` (module docstring).

    Args:
        x, y: coordinates, broadcastable arrays.
        re: Reynolds number (``nu = 1 / re``).

    Returns:
        ``(u, v, p)`` float64 arrays of the broadcast shape.
    """
    lam = kovasznay_lambda(re)
    x, y = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    e = np.exp(lam * x)
    u = 1.0 - e * np.cos(2.0 * np.pi * y)
    v = lam / (2.0 * np.pi) * e * np.sin(2.0 * np.pi * y)
    p = 0.5 * (1.0 - e * e)
    return u, v, p


def taylor_green_2d(x, y, t, nu=1.0):
    """2-D Taylor-Green vortex ``(u, v, p)`` at ``(x, y, t)`` (module docstring).

    Args:
        x, y, t: broadcastable arrays.
        nu: kinematic viscosity (MindFlow: Re = 1, nu = 1).

    Returns:
        ``(u, v, p)`` float64 arrays of the broadcast shape.
    """
    if not nu >= 0:
        raise ValueError(f"taylor_green_2d: nu must be >= 0, got {nu!r}")
    x, y, t = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (x, y, t)))
    f = np.exp(-2.0 * nu * t)
    u = -np.cos(x) * np.sin(y) * f
    v = np.sin(x) * np.cos(y) * f
    p = -0.25 * (np.cos(2.0 * x) + np.cos(2.0 * y)) * f * f
    return u, v, p
