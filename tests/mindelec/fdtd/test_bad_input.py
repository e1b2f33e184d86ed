"""Bad input (issue 15): every case raises or warns with a message that names what was wrong.

Courant number above the dimension's limit; a source or monitor outside the grid or inside the
PML (which one, its index and the PML thickness); a material map (or pole map, or initial field)
of the wrong shape (its name and both shapes); a frequency above the resolvable limit (a
warning with the cells per wavelength); NaN/inf in the fields (the step, the field and the
cell).
"""

import math
import re
import warnings

import numpy as np
import pytest

from diffsci.core import ops
from diffsci.mindelec import fdtd
from diffsci.mindelec.fdtd.dft import DFTMonitor
from diffsci.mindelec.fdtd.dispersive import DispersiveMaterial, DrudePole
from diffsci.mindelec.fdtd.flux import FluxMonitor
from diffsci.mindelec.fdtd.lumped import VoltageSource
from diffsci.mindelec.fdtd.tfsf import PlaneWave
from diffsci.mindelec.fdtd.waveforms import Gaussian, ResolutionWarning

D = 1e-3


@pytest.mark.parametrize(
    "shape,limit", [((20,), 1.0), ((20, 20), 1 / math.sqrt(2)), ((8, 8, 8), 1 / math.sqrt(3))]
)
def test_courant_above_the_limit(shape, limit):
    fdtd.Grid(shape, D, courant=limit)  # the limit itself is allowed
    with pytest.raises(ValueError, match=rf"above the stability limit {limit:.6g} of this "):
        fdtd.Grid(shape, D, courant=limit * 1.001)
    dt = 1.01 * limit * D / fdtd.C0
    with pytest.raises(ValueError, match=f"{len(shape)}D grid"):
        fdtd.Grid(shape, D, dt=dt)
    with pytest.raises(ValueError, match="positive"):
        fdtd.Grid(shape, D, courant=-0.5)


def test_courant_limit_of_unequal_cells():
    # 1 / sqrt((d_min/dx)^2 + (d_min/dy)^2) with dx = 1, dy = 2 mm: 1 / sqrt(1.25)
    limit = 1 / math.sqrt(1.25)
    with pytest.raises(ValueError, match=f"{limit:.6g}"):
        fdtd.Grid((10, 10), (1e-3, 2e-3), courant=0.9)


def test_courant_above_the_limit_in_a_fast_medium():
    eps = np.ones((20, 20))
    eps[4, 7] = 0.5  # faster than light in vacuum: the local Courant number is S sqrt(2)
    g = fdtd.Grid((20, 20), D)  # 0.99 of the vacuum limit
    with pytest.raises(ValueError, match=r"eps_r mu_r = 0.5 at cell \(x=4, y=7\)"):
        fdtd.Simulation(g, fdtd.Materials(eps_r=eps))
    fdtd.Simulation(fdtd.Grid((20, 20), D, courant=0.49), fdtd.Materials(eps_r=eps))


def _sim(sources=(), monitors=(), shape=(50, 40), pml=8, **kw):
    g = fdtd.Grid(shape, D)
    return fdtd.Simulation(g, boundaries=fdtd.CPML(pml), sources=sources, monitors=monitors, **kw)


WAVE = Gaussian(10e9)


@pytest.mark.parametrize(
    "item,pattern",
    [
        (fdtd.PointSource("ez", (60, 10), WAVE, name="src"), r"src: index \(60, 10\) is outside"),
        (fdtd.PointSource("ez", (10, -1), WAVE, name="src"), r"src: index \(10, -1\) is outside"),
        (
            fdtd.PointSource("ez", (3, 20), WAVE, name="src"),
            r"src: index \(3, 20\) is inside the PML along x \(cells 8 low and 8 high of 50\)",
        ),
        (
            fdtd.PointSource("ez", (20, 35), WAVE, name="src"),
            r"src: index \(20, 35\) is inside the PML along y \(cells 8 low and 8 high of 40\)",
        ),
        (fdtd.PointProbe("ez", (20, 45), name="mon"), r"mon: index \(20, 45\) is outside"),
        (
            fdtd.PointProbe("hx", (44, 20), name="mon"),
            r"mon: index \(44, 20\) is inside the PML along x \(cells 8 low and 8 high",
        ),
        (fdtd.PointProbe("ex", (20, 20), name="mon"), r"mon: component 'ex' is not in this grid"),
        (
            DFTMonitor("ez", [9e9], region=(slice(2, 20), 20), name="dft"),
            r"dft.*PML",
        ),
        (FluxMonitor((5, 10), (30, 30), [9e9], name="flux"), r"flux box.*PML along x"),
        (
            PlaneWave((10, 5), (30, 30), WAVE, name="pw"),
            r"pw total-field box \(with its border\): index \(9, 4\) is inside the PML along y",
        ),
        (
            VoltageSource("z", (4, 20), waveform=WAVE, name="port"),
            r"port: index \(4, 20\) is inside the PML along x",
        ),
    ],
)
def test_source_or_monitor_outside_or_in_pml(item, pattern):
    with pytest.raises(ValueError, match=pattern):
        if isinstance(item, (fdtd.PointProbe, DFTMonitor, FluxMonitor)):
            _sim(monitors=[item])
        else:
            _sim(sources=[item])


def test_probe_in_pml_allowed_when_asked():
    _sim(monitors=[fdtd.PointProbe("ez", (3, 20), allow_pml=True)])


def test_wrong_index_length():
    with pytest.raises(ValueError, match=r"index \(5,\) must have 2 entries"):
        _sim(sources=[fdtd.PointSource("ez", (5,), WAVE, name="src")])


@pytest.mark.parametrize("name", ["eps_r", "mu_r", "sigma", "sigma_m"])
def test_material_map_of_the_wrong_shape(name):
    with pytest.raises(ValueError, match=rf"material map {name} has shape \(40, 50\); the grid "):
        _sim(materials=fdtd.Materials(**{name: np.ones((40, 50))}))
    with pytest.raises(ValueError, match=rf"{name} has shape \(50,\).*\(50, 40\)"):
        _sim(materials=fdtd.Materials(**{name: np.ones(50)}))


def test_bad_material_values():
    with pytest.raises(ValueError, match="eps_r must be positive"):
        _sim(materials=fdtd.Materials(eps_r=np.zeros((50, 40))))
    with pytest.raises(ValueError, match="sigma must be >= 0"):
        _sim(materials=fdtd.Materials(sigma=-1.0))
    eps = np.ones((50, 40))
    eps[3, 4] = np.nan
    with pytest.raises(ValueError, match="eps_r has non-finite"):
        _sim(materials=fdtd.Materials(eps_r=eps))


def test_pole_map_and_initial_field_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"omega_p has shape \(50, 50\).*\(50, 40\)"):
        _sim(dispersive=DispersiveMaterial(DrudePole(np.ones((50, 50)))))
    sim = _sim()
    with pytest.raises(
        ValueError, match=r"initial ez has shape \(40, 50\); the grid is \(50, 40\)"
    ):
        sim.initial_state(ez=np.zeros((40, 50)))
    with pytest.raises(KeyError, match="'ex' is not in this state"):
        sim.initial_state(ex=np.zeros((50, 40)))


def test_frequency_above_the_resolvable_limit_warns_with_the_number():
    # 10 cells per wavelength at 30 GHz with d = 1 mm; a pulse reaching 60 GHz gives ~5
    with pytest.warns(ResolutionWarning) as record:
        _sim(sources=[fdtd.PointSource("ez", (20, 20), Gaussian(60e9))])
    text = str(record[0].message)
    number = float(re.search(r"(\d+(\.\d+)?) cells per wavelength", text).group(1))
    assert 4 < number < 6, text
    # the densest medium counts: eps_r = 4 halves the cells per wavelength
    with pytest.warns(ResolutionWarning):
        _sim(
            sources=[fdtd.PointSource("ez", (20, 20), Gaussian(20e9))],
            materials=fdtd.Materials(eps_r=4.0),
        )
    # resolved: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResolutionWarning)
        _sim(sources=[fdtd.PointSource("ez", (20, 20), Gaussian(15e9))])


class _NaNAfter:
    """A waveform: zero, then NaN from ``t_bad`` on (``t`` a Tensor inside the loop)."""

    def __init__(self, t_bad):
        self.t_bad = t_bad

    def __call__(self, t):
        return ops.where(t > self.t_bad, ops.full_like(t, np.nan), ops.zeros_like(t))


@pytest.mark.parametrize("native", [True, False])
def test_nan_names_the_step_the_field_and_the_cell(native):
    g = fdtd.Grid((30, 30), D, dtype="float64")
    bad_step = 57  # the source adds w((n + 1) dt): NaN from n = 57 on
    src = fdtd.PointSource("ez", (12, 17), _NaNAfter((bad_step + 0.5) * g.dt))
    sim = fdtd.Simulation(g, boundaries=fdtd.CPML(5), sources=[src], native=native)
    with pytest.raises(FloatingPointError) as info:
        sim.run(300)
    text = str(info.value)
    assert f"at step {bad_step} " in text, text
    assert "non-finite ez" in text and "cell (x=12, y=17)" in text, text


def test_nan_in_the_initial_state_is_named():
    g = fdtd.Grid((20,), D)
    sim = fdtd.Simulation(g)
    ez = np.zeros(20)
    ez[7] = np.inf
    with pytest.raises(
        FloatingPointError,
        match=r"ez = inf at step 0 \(already in the initial state\), cell \(x=7\)",
    ):
        sim.run(10, state=sim.initial_state(ez=ez))


def test_finite_runs_do_not_raise():
    g = fdtd.Grid((30,), D)
    sim = fdtd.Simulation(g, sources=[fdtd.PointSource("ez", (10,), Gaussian(10e9))])
    state, _ = sim.run(50)
    assert np.isfinite(state.ez.asnumpy()).all()
