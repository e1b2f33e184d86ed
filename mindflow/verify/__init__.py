"""Verification: exact solutions, errors and convergence orders (numpy float64).

- :mod:`.errors`: cell-average L1/L2 errors, observed convergence orders, ``relative_l2``.
- :mod:`.burgers`: Burgers' equation by Cole-Hopf with Gauss-Hermite quadrature.
- :mod:`.poisson`: MindFlow's Poisson problems (``Delta u = -prod sin(4 pi x_i)``).
- :mod:`.navier_stokes`: Kovasznay flow and the 2-D Taylor-Green vortex.
- :mod:`.darcy`: MindFlow's 2-D Darcy problem.
"""

from .burgers import BURGERS_NU as BURGERS_NU
from .burgers import burgers_cole_hopf as burgers_cole_hopf
from .burgers import burgers_cole_hopf_grid as burgers_cole_hopf_grid
from .darcy import darcy_2d as darcy_2d
from .darcy import darcy_source as darcy_source
from .errors import cell_averages as cell_averages
from .errors import convergence_order as convergence_order
from .errors import l1_error as l1_error
from .errors import l2_error as l2_error
from .errors import relative_l2 as relative_l2
from .navier_stokes import kovasznay as kovasznay
from .navier_stokes import kovasznay_lambda as kovasznay_lambda
from .navier_stokes import taylor_green_2d as taylor_green_2d
from .poisson import poisson_exact as poisson_exact
from .poisson import poisson_grad as poisson_grad
from .poisson import poisson_robin_data as poisson_robin_data
from .poisson import poisson_source as poisson_source

__all__ = [
    "BURGERS_NU",
    "burgers_cole_hopf",
    "burgers_cole_hopf_grid",
    "cell_averages",
    "convergence_order",
    "darcy_2d",
    "darcy_source",
    "kovasznay",
    "kovasznay_lambda",
    "l1_error",
    "l2_error",
    "poisson_exact",
    "poisson_grad",
    "poisson_robin_data",
    "poisson_source",
    "relative_l2",
    "taylor_green_2d",
]
