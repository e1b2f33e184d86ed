"""Exact solution of the viscous Burgers equation by the Cole-Hopf transform.

The problem (Raissi, Perdikaris & Karniadakis 2019; MindFlow's ``physics_driven/burgers``)::

    u_t + u u_x = nu u_xx,   x in [-1, 1], t in [0, 1],   u(x, 0) = -sin(pi x),   u(+-1, t) = 0,

with ``nu = 0.01 / pi``. The Cole-Hopf transform ``u = -2 nu phi_x / phi`` turns it into the heat
equation; for the periodic extension of ``u0`` (whose boundary values vanish by symmetry) the
solution is (Basdevant et al. 1986, "Spectral and finite difference solutions of the Burgers
equation", Computers & Fluids 14(1), eq. (4))::

    u(x, t) = - int sin(pi (x - eta)) f(x - eta) exp(-eta^2 / (4 nu t)) d eta
                / int f(x - eta) exp(-eta^2 / (4 nu t)) d eta,
    f(y) = exp(-cos(pi y) / (2 pi nu)).

With ``eta = sqrt(4 nu t) z`` both integrals take the Gauss-Hermite weight ``exp(-z^2)``, so an
``n_quad``-point Gauss-Hermite rule evaluates them. ``f`` spans ``exp(+-1 / (2 pi nu))``
(``e^{+-50}`` for MindFlow's ``nu``), so the exponents are shifted by their maximum over the
nodes for every point before exponentiation (the shift cancels in the ratio). The derivative
differentiates under the integral: with ``N``, ``D`` the numerator and denominator integrals
and ``N' = int (pi cos(pi y) + sin^2(pi y) / (2 nu)) f w``, ``D' = N / (2 nu)``::

    u_x = -N' / D + u^2 / (2 nu).

Numpy float64 throughout (a reference, not differentiated).
"""

import math

import numpy as np

__all__ = ["BURGERS_NU", "burgers_cole_hopf", "burgers_cole_hopf_grid"]

BURGERS_NU = 0.01 / math.pi  # MindFlow's and Raissi et al.'s viscosity

_NODES_CACHE = {}
_MAX_NODES = 300


def _hermite(n_quad):
    """Gauss-Hermite nodes ``z`` [q] and log-weights [q] (weights underflow for large q)."""
    if n_quad not in _NODES_CACHE:
        with np.errstate(under="ignore"):
            z, w = np.polynomial.hermite.hermgauss(n_quad)
        keep = w > 0  # weights below ~1e-308 underflow to 0: their nodes contribute nothing
        _NODES_CACHE[n_quad] = (z[keep], np.log(w[keep]))
    return _NODES_CACHE[n_quad]


def burgers_cole_hopf(x, t, nu=BURGERS_NU, n_quad=120, return_ux=False):
    """Cole-Hopf solution of Burgers' equation with ``u0 = -sin(pi x)`` (module docstring).

    Args:
        x: positions, any shape (broadcast against ``t``).
        t: times >= 0, any shape; at ``t = 0`` the initial condition is returned.
        nu: viscosity (> 0); default ``0.01 / pi``.
        n_quad: Gauss-Hermite points (at most 300). For ``nu = 0.01 / pi`` and ``t <= 1``, 120
            points agree with 300 to round-off (50 are off by 2e-7 at ``t = 1``); larger
            ``nu t`` widens the Gaussian and needs more.
        return_ux: also return ``u_x``.

    Returns:
        float64 ``u`` with the broadcast shape of ``x`` and ``t``; with ``return_ux`` the pair
        ``(u, u_x)``.
    """
    if not nu > 0:
        raise ValueError(f"burgers_cole_hopf: nu must be > 0, got {nu!r}")
    if not 2 <= int(n_quad) <= _MAX_NODES:
        raise ValueError(
            f"burgers_cole_hopf: n_quad must lie in [2, {_MAX_NODES}] (numpy's Gauss-Hermite "
            f"weights overflow beyond), got {n_quad!r}"
        )
    x, t = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(t, dtype=np.float64))
    if np.any(t < 0) or not np.all(np.isfinite(t)):
        raise ValueError("burgers_cole_hopf: times must be finite and >= 0")
    shape = x.shape
    xf, tf = x.reshape(-1), t.reshape(-1)
    u = -np.sin(np.pi * xf)
    ux = -np.pi * np.cos(np.pi * xf)
    pos = tf > 0
    if np.any(pos):
        z, log_w = _hermite(int(n_quad))
        # y = x - eta at every node: [n, q]
        y = xf[pos, None] - np.sqrt(4.0 * nu * tf[pos, None]) * z[None, :]
        expo = -np.cos(np.pi * y) / (2.0 * np.pi * nu) + log_w[None, :]  # log(f w)
        fw = np.exp(expo - expo.max(axis=1, keepdims=True))  # [n, q], shifted: <= 1
        s = np.sin(np.pi * y)
        den = fw.sum(axis=1)  # D (times the common factor)
        num = (s * fw).sum(axis=1)  # N
        u_pos = -num / den
        u[pos] = u_pos
        dnum = ((np.pi * np.cos(np.pi * y) + s * s / (2.0 * nu)) * fw).sum(axis=1)  # N'
        ux[pos] = -dnum / den + u_pos * u_pos / (2.0 * nu)
    u = u.reshape(shape)
    return (u, ux.reshape(shape)) if return_ux else u


def burgers_cole_hopf_grid(nx=256, nt=100, nu=BURGERS_NU, n_quad=120):
    """The reference on Raissi et al.'s grid: ``nx`` points in [-1, 1] x ``nt`` in [0, 1].

    Returns:
        ``(x [nx], t [nt], u [nx, nt])`` float64 (``u[i, j] = u(x_i, t_j)``).
    """
    x = np.linspace(-1.0, 1.0, nx)
    t = np.linspace(0.0, 1.0, nt)
    u = burgers_cole_hopf(x[:, None], t[None, :], nu=nu, n_quad=n_quad)
    return x, t, u
