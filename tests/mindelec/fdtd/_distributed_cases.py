"""Cases of test_distributed.py (serial references, here) and _distributed_worker.py (under
mpiexec): small FDTD problems with CPML, point sources, probes and a DFT plane."""

import numpy as np

import core
from mindelec import fdtd
from mindelec.fdtd.waveforms import Gaussian

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
