"""``mindelec.fdtd``: a differentiable FDTD library on the core engine.

Yee grids in 1D, 2D (TMz/TEz) and 3D (``grid``), per-cell materials and the update equations
(``yee``), PEC/PMC/periodic/CFS-CPML boundaries (``boundaries``), the field state pytree
(``state``), sources and monitors (``sources``, ``monitors``: their interfaces are documented
there) and the compiled, checkpointed time loop (``simulation``).
"""

from .boundaries import CPML as CPML
from .boundaries import PEC as PEC
from .boundaries import PMC as PMC
from .boundaries import Boundaries as Boundaries
from .boundaries import Boundary as Boundary
from .boundaries import Mur as Mur
from .boundaries import Periodic as Periodic
from .constants import C0 as C0
from .constants import EPS0 as EPS0
from .constants import ETA0 as ETA0
from .constants import MU0 as MU0
from .grid import Grid as Grid
from .monitors import EnergyMonitor as EnergyMonitor
from .monitors import Monitor as Monitor
from .monitors import PointProbe as PointProbe
from .monitors import yee_energy as yee_energy
from .simulation import Simulation as Simulation
from .sources import PointSource as PointSource
from .sources import Source as Source
from .state import FieldState as FieldState
from .yee import Materials as Materials
from .yee import update_coefficients as update_coefficients
from .yee import update_e as update_e
from .yee import update_h as update_h
