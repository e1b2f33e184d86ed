"""Our own PDE data generators (float64 numerics, deterministic per seed, PDEBench layouts).

Each ``generate_*`` function draws its samples from ``SeedSequence(seed).spawn(N)``, shows a
tqdm bar over the samples, returns the arrays and, given ``path``, writes them with a metadata
card through ``datasets.pde.write_pdebench``:

- :func:`generate_burgers`: 1D viscous Burgers, pseudo-spectral + ETDRK4 (FNO's setting);
- :func:`generate_darcy`: 2D Darcy flow, thresholded GRF coefficient, sparse finite differences;
- :func:`generate_navier_stokes`: 2D vorticity on the torus, pseudo-spectral + CN/Heun (FNO's);
- :func:`generate_advection`: 1D linear advection, exact (PDEBench's initial conditions).

The solvers and exact solutions they are checked against are public too (``solve_burgers``,
``cole_hopf_solution``, ``solve_darcy``, ``solve_navier_stokes``...), and so are the Gaussian
random fields (:func:`periodic_grf`, :func:`neumann_grf`).
"""

from ._common import BlowUpError as BlowUpError
from .advection import AdvectionInitialCondition as AdvectionInitialCondition
from .advection import generate_advection as generate_advection
from .advection import sample_initial_condition as sample_initial_condition
from .burgers import cole_hopf_solution as cole_hopf_solution
from .burgers import etdrk4_coefficients as etdrk4_coefficients
from .burgers import generate_burgers as generate_burgers
from .burgers import solve_burgers as solve_burgers
from .darcy import darcy_matrix as darcy_matrix
from .darcy import generate_darcy as generate_darcy
from .darcy import solve_darcy as solve_darcy
from .grf import grf_mode_std as grf_mode_std
from .grf import neumann_grf as neumann_grf
from .grf import periodic_grf as periodic_grf
from .navier_stokes import fno_forcing as fno_forcing
from .navier_stokes import generate_navier_stokes as generate_navier_stokes
from .navier_stokes import solve_navier_stokes as solve_navier_stokes
from .navier_stokes import velocity_from_vorticity as velocity_from_vorticity
