"""``mindelec.fdtd``: a differentiable FDTD library on the core engine.

Yee grids in 1D, 2D (TMz/TEz) and 3D (``grid``), per-cell materials and the update equations
(``yee``), Drude/Lorentz media by auxiliary differential equations (``dispersive``),
PEC/PMC/periodic/CFS-CPML boundaries (``boundaries``), the field state pytree
(``state``), sources and monitors (``sources``, ``monitors``: their interfaces are documented
there) and the compiled, checkpointed time loop (``simulation``, with the native C update of
``native_yee``). Around them: waveforms, running DFTs, lumped ports/resistors and their
voltage/current monitors (``lumped``), plane waves and line sources (``tfsf``), Poynting flux
boxes (``flux``), PEC sheets and per-cell media for printed circuits (``structures``),
S-parameters (``sparams``) and Touchstone files (``touchstone``), geometry
rasterised onto the grid and design maps (``rasterize``), snapshots to HDF5/VTK and plots (``io``).
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
from .dft import DFTMonitor as DFTMonitor
from .dft import RunningDFT as RunningDFT
from .dispersive import DispersiveMaterial as DispersiveMaterial
from .dispersive import DrudePole as DrudePole
from .dispersive import LorentzPole as LorentzPole
from .flux import FluxMonitor as FluxMonitor
from .flux import dipole_power as dipole_power
from .flux import line_source_power as line_source_power
from .grid import Grid as Grid
from .io import SnapshotWriter as SnapshotWriter
from .io import field_movie as field_movie
from .io import plot_field as plot_field
from .io import write_vtk as write_vtk
from .lumped import CurrentMonitor as CurrentMonitor
from .lumped import CurrentSource as CurrentSource
from .lumped import Resistor as Resistor
from .lumped import VoltageMonitor as VoltageMonitor
from .lumped import VoltageSource as VoltageSource
from .lumped import port_times as port_times
from .monitors import EnergyMonitor as EnergyMonitor
from .monitors import Monitor as Monitor
from .monitors import PointProbe as PointProbe
from .monitors import PointProbes as PointProbes
from .monitors import yee_energy as yee_energy
from .rasterize import density_filter as density_filter
from .rasterize import design_permittivity as design_permittivity
from .rasterize import fill_fraction as fill_fraction
from .rasterize import paint as paint
from .rasterize import rasterize as rasterize
from .rasterize import tanh_projection as tanh_projection
from .simulation import Simulation as Simulation
from .sources import PointSource as PointSource
from .sources import Source as Source
from .sparams import SParameterSolver as SParameterSolver
from .sparams import passivity as passivity
from .sparams import plot_sparams as plot_sparams
from .sparams import power_waves as power_waves
from .sparams import reciprocity_error as reciprocity_error
from .sparams import s_matrix as s_matrix
from .state import FieldState as FieldState
from .structures import CellMedium as CellMedium
from .structures import PECEdges as PECEdges
from .structures import PECPlate as PECPlate
from .tfsf import LineSource as LineSource
from .tfsf import PlaneWave as PlaneWave
from .tfsf import matched_wavenumber as matched_wavenumber
from .touchstone import read_touchstone as read_touchstone
from .touchstone import write_touchstone as write_touchstone
from .waveforms import ContinuousWave as ContinuousWave
from .waveforms import CosineGaussian as CosineGaussian
from .waveforms import Gaussian as Gaussian
from .waveforms import ModulatedGaussian as ModulatedGaussian
from .waveforms import NormDGaussian as NormDGaussian
from .waveforms import ResolutionWarning as ResolutionWarning
from .waveforms import Ricker as Ricker
from .waveforms import check_resolution as check_resolution
from .yee import Materials as Materials
from .yee import update_coefficients as update_coefficients
from .yee import update_e as update_e
from .yee import update_h as update_h
