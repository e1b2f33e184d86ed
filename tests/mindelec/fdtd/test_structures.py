"""Printed-circuit structures: the per-cell medium's edge average against a direct loop, a
uniform ``CellMedium`` against ``Materials``, a PEC sheet that isolates half the grid exactly,
the plate's edge sets, gradients through a Tensor medium against central differences, and bad
input."""

import functools
import itertools

import numpy as np
import pytest

from diffsci import core
from diffsci.mindelec.fdtd import Grid, Materials, PointProbe, PointSource, Simulation
from diffsci.mindelec.fdtd.structures import CellMedium, PECEdges, PECPlate, edge_average
from diffsci.mindelec.fdtd.waveforms import Gaussian

_Sim = functools.partial(Simulation, native=False)


def _loop_average(cells, axis):
    """Mean over the 4 cells sharing each edge along ``axis``, clamping index -1 to 0."""
    out = np.zeros_like(cells)
    others = [a for a in range(3) if a != axis]
    for p in itertools.product(*(range(n) for n in cells.shape)):
        total = 0.0
        for db, dc in itertools.product((0, 1), (0, 1)):
            q = list(p)
            q[others[0]] = max(q[others[0]] - db, 0)
            q[others[1]] = max(q[others[1]] - dc, 0)
            total += cells[tuple(q)]
        out[p] = total / 4
    return out


def test_edge_average_matches_direct_loop_and_interface_value():
    rng = np.random.default_rng(0)
    cells = 1 + rng.random((4, 5, 3))
    for axis, comp in enumerate(("ex", "ey", "ez")):
        np.testing.assert_allclose(
            edge_average(cells, comp).numpy(), _loop_average(cells, axis), rtol=1e-14
        )
    # a substrate of 2.2 under air: tangential edges on the interface see the mean
    slab = np.ones((6, 6, 6))
    slab[:, :, :3] = 2.2
    ex = edge_average(slab, "ex").numpy()
    ez = edge_average(slab, "ez").numpy()
    assert np.allclose(ex[:, 2:, 3], 1.6) and np.allclose(ex[:, 2:, 1:3], 2.2)
    assert np.allclose(ez[:, 2:, 2], 2.2) and np.allclose(ez[:, 2:, 3], 1.0)


def _probe_run(sources, materials=None, steps=40, shape=(7, 6, 5)):
    g = Grid(shape, 1e-3, dtype="float64")
    src = PointSource("ez", (2, 2, 2), Gaussian(20e9))
    probes = [PointProbe("ez", (4, 3, 2), name="near"), PointProbe("ey", (5, 2, 3), name="far")]
    sim = _Sim(g, materials, sources=[*sources, src], monitors=probes)
    _, r = sim.run(steps)
    return np.stack([r["near"].numpy(), r["far"].numpy()])


def test_uniform_cell_medium_equals_materials():
    shape = (7, 6, 5)
    ours = _probe_run([CellMedium(np.full(shape, 2.2), sigma=np.full(shape, 0.3))])
    ref = _probe_run([], Materials(eps_r=2.2, sigma=0.3))
    assert np.abs(ref).max() > 0
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_pec_sheet_isolates_the_far_side_exactly():
    shape = (9, 6, 5)
    g = Grid(shape, 1e-3, dtype="float64")
    wall = PECPlate(shape, "x", (5, 0, 0), (5, shape[1], shape[2]), name="wall")
    # a plate covering the whole cross-section at x = 5: nothing reaches x > 5
    src = PointSource("ez", (2, 3, 2), Gaussian(20e9))
    probe = PointProbe("ez", (7, 3, 2), name="far")
    left = PointProbe("ez", (4, 3, 2), name="near")
    for plate, expect_zero in ((wall, True), (None, False)):
        sim = _Sim(g, sources=[s for s in (plate, src) if s], monitors=[probe, left])
        _, r = sim.run(60)
        assert np.abs(r["near"].numpy()).max() > 0
        far = np.abs(r["far"].numpy()).max()
        assert (far == 0.0) if expect_zero else (far > 1e-6 * np.abs(r["near"].numpy()).max())


def test_plate_edge_sets():
    shape = (8, 9, 6)
    plate = PECPlate(shape, "z", (1, 2, 3), (4, 6, 3))
    assert set(plate.masks) == {"ex", "ey"}
    ex, ey = plate.masks["ex"], plate.masks["ey"]
    # ex edges (i+1/2, j, 3) for i in 1..3 and j in 2..6; ey edges (i, j+1/2, 3), i 1..4, j 2..5
    assert ex.sum() == 3 * 5 and ex[1:4, 2:7, 3].all()
    assert ey.sum() == 4 * 4 and ey[1:5, 2:6, 3].all()
    both = plate + PECPlate(shape, "x", (0, 0, 0), (0, 2, 2))
    assert both.masks["ex"].sum() == 15 and both.masks["ez"].sum() == 3 * 2
    assert both.masks["ey"].sum() == 16 + 2 * 3


def test_gradient_through_cell_medium_matches_central_differences():
    shape = (6, 5, 5)
    base = np.ones(shape)
    base[:, :, :2] = 2.2

    def loss(eps):
        trace = _probe_run_tensor(eps, shape)
        return (trace * trace).sum()

    grad = core.grad(loss)(core.tensor(base, dtype=core.float64)).numpy()
    h = 1e-6
    for cell in ((3, 2, 1), (3, 2, 2), (4, 3, 2)):
        plus, minus = base.copy(), base.copy()
        plus[cell] += h
        minus[cell] -= h
        fd = (float(loss(core.tensor(plus))) - float(loss(core.tensor(minus)))) / (2 * h)
        assert abs(fd) > 0
        assert np.isclose(grad[cell], fd, rtol=1e-4, atol=0), (cell, grad[cell], fd)


def _probe_run_tensor(eps, shape, steps=30):
    g = Grid(shape, 1e-3, dtype="float64")
    src = PointSource("ez", (2, 2, 1), Gaussian(25e9))
    sim = _Sim(
        g,
        sources=[CellMedium(eps), src],
        monitors=[PointProbe("ex", (3, 3, 2), name="p")],
    )
    _, r = sim.run(steps)
    return r["p"]


def test_bad_input_raises():
    g = Grid((6, 6, 6), 1e-3)
    with pytest.raises(ValueError, match="shape"):
        _Sim(g, sources=[CellMedium(np.ones((5, 6, 6)))])
    with pytest.raises(ValueError, match="eps_r must be > 0"):
        _Sim(g, sources=[CellMedium(np.zeros((6, 6, 6)))])
    with pytest.raises(ValueError, match="plane"):
        PECPlate((6, 6, 6), "z", (0, 0, 1), (3, 3, 2))
    with pytest.raises(ValueError, match="leave the grid"):
        PECPlate((6, 6, 6), "z", (0, 0, 1), (3, 9, 1))
    with pytest.raises(ValueError, match="not an E component"):
        _Sim(Grid((6, 6), 1e-3), sources=[PECEdges({"ex": np.zeros((6, 6), bool)})])
