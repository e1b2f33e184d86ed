"""Physical constants in SI units (CODATA 2018; c0 exact since the 2019 SI).

``EPS0`` (F/m) follows from ``MU0`` and ``C0`` by ``eps0 = 1 / (mu0 c0^2)``, so that the update
coefficients ``dt / (eps0 eps_r)`` and ``dt / (mu0 mu_r)`` give waves travelling at exactly
``C0 / sqrt(eps_r mu_r)`` in the continuum limit.
"""

from __future__ import annotations

import math

__all__ = ["C0", "EPS0", "ETA0", "MU0"]

C0 = 299_792_458.0
"""Speed of light in vacuum, m/s (exact)."""

MU0 = 1.25663706212e-6
"""Vacuum permeability, H/m (CODATA 2018)."""

EPS0 = 1.0 / (MU0 * C0 * C0)
"""Vacuum permittivity, F/m (8.8541878128e-12)."""

ETA0 = math.sqrt(MU0 / EPS0)
"""Impedance of free space, ohm (376.730...)."""
