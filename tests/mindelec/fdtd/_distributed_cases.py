"""Cases of test_distributed.py (serial references, here) and _distributed_worker.py (under
mpiexec): small FDTD problems with CPML, point sources, probes and a DFT plane."""

import numpy as np

from diffsci import core
from diffsci.mindelec import fdtd
from diffsci.mindelec.fdtd.waveforms import Gaussian

FREQS = [1.0e10, 2.0e10]


def case_2d(eps=None):
    """TMz 24 x 16, CPML on every face, an eps map; the slab cut is x = 12."""
    shape = (24, 16)
    grid = fdtd.Grid(shape, 1e-3, dtype="float64")
    if eps is None:
        eps = 1 + np.random.default_rng(1).random(shape)
    kw = dict(
        boundaries={"x": fdtd.CPML(4), "y": fdtd.CPML(3)},
        sources=[fdtd.PointSource("ez", (8, 8), Gaussian(1.4e10))],
        monitors=[fdtd.PointProbe("ez", (15, 6)),
                  fdtd.DFTMonitor("ez", FREQS, region=(16, slice(None)), allow_pml=True)],
    )  # fmt: skip
    return grid, fdtd.Materials(eps_r=eps), kw, 40


def case_3d():
    """3D 8 x 6 x 6: a 6-cell CPML at low x (it straddles the cut at x = 4), PEC at high x,
    periodic y, PEC z; probes of ez and hy."""
    grid = fdtd.Grid((8, 6, 6), 1e-3, dtype="float64")
    eps = 1 + np.random.default_rng(2).random((8, 6, 6))
    kw = dict(
        boundaries={"x": (fdtd.CPML(6), fdtd.PEC()), "y": fdtd.Periodic(), "z": fdtd.PEC()},
        sources=[fdtd.PointSource("ez", (7, 2, 3), Gaussian(2.0e10))],
        monitors=[fdtd.PointProbe("ez", (6, 3, 3), allow_pml=True),
                  fdtd.PointProbe("hy", (3, 3, 2), name="probe_hy", allow_pml=True)],
    )  # fmt: skip
    return grid, fdtd.Materials(eps_r=eps), kw, 24


def case_grad(eps):
    """TMz 16 x 10 with periodic x (the ranks form a ring) and CPML y; loss: the probe's
    energy plus |DFT|^2 on a plane."""
    grid = fdtd.Grid((16, 10), 1e-3, dtype="float64")
    kw = dict(
        boundaries={"x": fdtd.Periodic(), "y": fdtd.CPML(3)},
        sources=[fdtd.PointSource("ez", (4, 5), Gaussian(1.4e10))],
        monitors=[fdtd.PointProbe("ez", (11, 5)),
                  fdtd.DFTMonitor("ez", FREQS, region=(13, slice(3, 7)))],
    )  # fmt: skip
    return grid, fdtd.Materials(eps_r=eps), kw, 30


def grad_eps0():
    return core.tensor(1 + np.random.default_rng(3).random((16, 10)), dtype=core.float64)


def grad_loss(results):
    dft = results["dft"]
    power = core.ops.real(dft) ** 2 + core.ops.imag(dft) ** 2
    return (results["probe"] ** 2).sum() * 1e6 + power.sum() * 1e30


# ---- the serial library's features on slabs ------------------------------------------------


def _microstrip():
    """The example's ``microstrip_filter`` module (its ``build``)."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[3] / "examples" / "mindelec" / "fdtd"
    path = path / "microstrip_filter" / "microstrip_filter.py"
    spec = importlib.util.spec_from_file_location("microstrip_filter", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MICROSTRIP_STEPS = 400  # the MPI example's --tiny


def microstrip_sims():
    """The Sheen et al. filter at the published cells with a thinner frame (4-cell CPML, 1
    cell of air: 60 x 56 x 13, even in x; the MPI example's ``--tiny``), one ``Simulation``
    per excited port."""
    module = _microstrip()
    return [module.build(e, coarsen=1, npml=4, air=1)[0] for e in (0, 1)]


def microstrip_s(results, dt, freqs, steps=MICROSTRIP_STEPS):
    """``{"ports": S, "planes": S}`` ``[nf, 2, 2]`` from the two runs' monitor results (the
    serial example's extraction: Kurokawa power waves, ``S = B A^-1``)."""
    from diffsci.mindelec.fdtd.lumped import port_times
    from diffsci.mindelec.fdtd.sparams import SParameterSolver

    t_v, t_i = port_times(steps, dt)
    out = {}
    for key, (a, b) in {"ports": ("p1", "p2"), "planes": ("r1", "r2")}.items():
        solver = SParameterSolver(
            lambda e, a=a, b=b: (
                np.stack([results[e][f"{a}_v"], results[e][f"{b}_v"]], axis=1),
                np.stack([results[e][f"{a}_i"], results[e][f"{b}_i"]], axis=1),
            ),
            2, dt, t_v, t_i, z0=50.0,
        )  # fmt: skip
        solver.solve()
        out[key] = solver.eval(freqs).numpy()
    return out


def case_mixed():
    """3D 8 x 8 x 6: Mur at low x (rank 0) and a 2-cell CPML at high x (rank 1), Mur y, PEC z;
    a Drude and a Lorentz medium on a region that crosses the cut at x = 4; a 50-ohm
    ``VoltageSource`` port and a ``Resistor`` whose edges span the cut; port V and I monitors
    (the current loop's first layer on rank 1 reads rank 0's H), frequency- and time-domain
    flux boxes spanning the cut and one whose low x face is the cut."""
    from diffsci.mindelec.fdtd.waveforms import Gaussian

    grid = fdtd.Grid((8, 8, 6), 1e-3, dtype="float64")
    rng = np.random.default_rng(4)
    eps = 1 + rng.random((8, 8, 6))
    region = np.zeros((8, 8, 6))
    region[2:6, 1:4, 1:5] = 1.0
    media = [
        fdtd.DispersiveMaterial(fdtd.DrudePole(2e11, 1e10), region=region, name="drude"),
        fdtd.DispersiveMaterial(fdtd.LorentzPole(1.5, 6e10, 1e9), region=region[::-1].copy(),
                                name="lorentz"),
    ]  # fmt: skip
    port = fdtd.VoltageSource("z", (3, 5, 1), (5, 6, 4), waveform=Gaussian(1.2e10), name="p1")
    kw = dict(
        boundaries={"x": (fdtd.Mur(), fdtd.CPML(2)), "y": fdtd.Mur(), "z": fdtd.PEC()},
        sources=[port, fdtd.Resistor("y", (2, 2, 2), (6, 3, 3), resistance=30.0, name="r")],
        monitors=[port.voltage_monitor(), port.current_monitor(),
                  fdtd.CurrentMonitor("-z", (4, 5, 2), (5, 6, 3), name="i_cut"),
                  fdtd.FluxMonitor((2, 2, 1), (5, 6, 5), FREQS, name="flux_f"),
                  fdtd.FluxMonitor((3, 1, 1), (5, 7, 5), name="flux_t"),
                  fdtd.FluxMonitor((4, 2, 2), (5, 6, 4), FREQS, name="flux_cut")],
    )  # fmt: skip
    return grid, fdtd.Materials(eps_r=eps), kw, media, 30


def case_port_grad(eps):
    """TMz 16 x 12, CPML x and y, a 50-ohm ``VoltageSource`` port of two parallel ez edges
    across the cut at x = 8, a flux box spanning it; loss: ``|S11|^2`` at two frequencies
    (Kurokawa, from the port's V and I) plus the box's flux."""
    from diffsci.mindelec.fdtd.waveforms import Gaussian

    grid = fdtd.Grid((16, 12), 1e-3, dtype="float64")
    port = fdtd.VoltageSource("z", (7, 6), (9, 7), waveform=Gaussian(2e10), name="p1")
    kw = dict(
        boundaries={"x": fdtd.CPML(3), "y": fdtd.CPML(3)},
        sources=[port],
        monitors=[port.voltage_monitor(), port.current_monitor(),
                  fdtd.FluxMonitor((5, 4), (11, 8), FREQS, name="flux")],
    )  # fmt: skip
    return grid, fdtd.Materials(eps_r=eps), kw, 30


def port_grad_eps0():
    return core.tensor(1 + np.random.default_rng(5).random((16, 12)), dtype=core.float64)


def port_grad_loss(results, dt):
    from diffsci.mindelec.fdtd.lumped import port_times
    from diffsci.mindelec.fdtd.sparams import s_from_time_signals

    t_v, t_i = port_times(results["p1_v"].shape[0], dt)
    v = results["p1_v"].reshape((-1, 1, 1))
    i = results["p1_i"].reshape((-1, 1, 1))
    s = s_from_time_signals(v, i, dt, FREQS, t_v, t_i)
    s11 = core.ops.real(s) ** 2 + core.ops.imag(s) ** 2
    return s11.sum() + results["flux"].sum() * 1e20


def case_tfsf():
    """TMz 24 x 16, CPML on every face: a grid-aligned TF/SF plane wave (auxiliary 1D grid)
    and an oblique one (incident-field tables), both boxes across the cut at x = 12, an eps
    scatterer inside; a probe in the scattered-field region, a flux box around the scatterer,
    the Yee energy, DFTs of a box and of the whole grid, all spanning the cut."""
    from diffsci.mindelec.fdtd.tfsf import PlaneWave
    from diffsci.mindelec.fdtd.waveforms import Gaussian

    grid = fdtd.Grid((24, 16), 1e-3, dtype="float64")
    eps = np.ones((24, 16))
    eps[10:14, 7:9] = 3.0
    materials = fdtd.Materials(eps_r=eps)
    kw = dict(
        boundaries={"x": fdtd.CPML(4), "y": fdtd.CPML(4)},
        sources=[PlaneWave((7, 6), (17, 10), Gaussian(1.2e10), direction="+x", name="pw_x"),
                 PlaneWave((8, 6), (16, 10), Gaussian(1.2e10), direction=30.0, name="pw_30",
                           method="array")],
        monitors=[fdtd.PointProbe("ez", (5, 8), name="scattered"),
                  fdtd.PointProbe("hy", (12, 8), name="total"),
                  fdtd.FluxMonitor((9, 7), (15, 10), FREQS, name="flux"),
                  fdtd.EnergyMonitor(grid, materials),
                  fdtd.DFTMonitor("hy", FREQS, region=(slice(6, 18), slice(5, 11)), name="dft"),
                  fdtd.DFTMonitor("ez", FREQS, name="dft_all", allow_pml=True)],
    )  # fmt: skip
    return grid, materials, kw, 40


def case_amp_grad(amp):
    """TMz 16 x 12, CPML x and y: a port on rank 0's slab only (rank 1 gets the 0 x value
    stand-in), an oblique TF/SF plane wave from tables and an aligned one (auxiliary grid),
    all scaled by the scalar ``amp``; loss: the port voltage's and a probe's energy."""
    from diffsci.mindelec.fdtd.tfsf import PlaneWave
    from diffsci.mindelec.fdtd.waveforms import Gaussian

    grid = fdtd.Grid((16, 12), 1e-3, dtype="float64")
    port = fdtd.VoltageSource("z", (4, 6), waveform=Gaussian(2e10), amplitude=amp, name="p1")
    kw = dict(
        boundaries={"x": fdtd.CPML(3), "y": fdtd.CPML(3)},
        sources=[port,
                 PlaneWave((5, 4), (11, 7), Gaussian(1.2e10), direction=30.0, method="array",
                           amplitude=amp * 0.5, name="pw"),
                 PlaneWave((5, 4), (11, 7), Gaussian(1.2e10), direction="+x",
                           amplitude=amp * 0.3, name="pw_x")],
        monitors=[port.voltage_monitor(), fdtd.PointProbe("ez", (12, 6))],
    )  # fmt: skip
    return grid, kw, 30


def amp_grad_loss(results):
    return (results["p1_v"] ** 2).sum() + (results["probe"] ** 2).sum() * 1e3
