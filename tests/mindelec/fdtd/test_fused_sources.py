"""Soft point sources added inside the native E half step (``Simulation._fused``) against the
composite path (``native=False``: update_e, then ``PointSource.inject``'s index_add)."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import native as core_native
from diffsci.mindelec import fdtd
from diffsci.mindelec.fdtd.waveforms import Gaussian

pytestmark = pytest.mark.skipif(not core_native.available(), reason="no C compiler")


def _sim(grid, eps, amplitude, native, hard=False, shape=(12, 10)):
    sources = [
        fdtd.PointSource("ez", (5, 5), Gaussian(1.4e10), amplitude=amplitude, name="a"),
        fdtd.PointSource("ez", (5, 5), Gaussian(1.1e10), amplitude=0.5, name="b"),  # same cell
        fdtd.PointSource("ez", (7, 4), Gaussian(1.2e10), hard=hard, name="c"),
    ]
    return fdtd.Simulation(
        grid,
        fdtd.Materials(eps_r=eps),
        {"x": fdtd.CPML(3), "y": fdtd.PEC()},
        sources=sources,
        monitors=[fdtd.PointProbe("ez", (8, 6)), fdtd.PointProbe("ez", (5, 5), name="src")],
        native=native,
    )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_run_equals_composite_bits(dtype):
    grid = fdtd.Grid((12, 10), 1e-3, dtype=dtype)
    eps = 1 + np.random.default_rng(1).random((12, 10))
    amp = core.tensor(1.3, dtype=grid.dtype)
    fused, composite = _sim(grid, eps, amp, True), _sim(grid, eps, amp, False)
    assert len(fused._fused) == 3 and fused._plans["e"][0].injections
    (sa, ra), (sb, rb) = fused.run(30), composite.run(30)
    for name in ("probe", "src"):
        np.testing.assert_array_equal(ra[name].asnumpy(), rb[name].asnumpy())
    np.testing.assert_array_equal(sa.get("ez").asnumpy(), sb.get("ez").asnumpy())
    assert np.abs(rb["src"].asnumpy()).max() > 0  # the sources did fire


def test_hard_source_turns_fusion_off():
    grid = fdtd.Grid((12, 10), 1e-3, dtype="float64")
    eps = 1 + np.random.default_rng(2).random((12, 10))
    sim = _sim(grid, eps, 1.0, True, hard=True)
    assert sim._fused == () and not sim._plans["e"][0].injections
    a, b = sim.run(20)[1]["probe"], _sim(grid, eps, 1.0, False, hard=True).run(20)[1]["probe"]
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_fused_gradient_matches_composite_and_finite_differences():
    grid = fdtd.Grid((12, 10), 1e-3, dtype="float64")
    eps0 = 1 + np.random.default_rng(3).random((12, 10))

    def loss(amp, eps, native):
        return (_sim(grid, eps, amp, native).run(30)[1]["probe"] ** 2).sum()

    amp = core.tensor(1.3, dtype=core.float64)
    eps = core.tensor(eps0, dtype=core.float64)
    ga, ge = core.grad(lambda a, e: loss(a, e, True), grad_position=(0, 1))(amp, eps)
    ca, ce = core.grad(lambda a, e: loss(a, e, False), grad_position=(0, 1))(amp, eps)
    np.testing.assert_allclose(float(ga), float(ca), rtol=1e-12)
    scale = abs(ce.asnumpy()).max()
    np.testing.assert_allclose(ge.asnumpy(), ce.asnumpy(), rtol=1e-11, atol=1e-13 * scale)
    # central difference in the amplitude (the loss is quadratic in it: exact up to rounding)
    h = 1e-3
    up = float(loss(core.tensor(1.3 + h, dtype=core.float64), eps, True))
    down = float(loss(core.tensor(1.3 - h, dtype=core.float64), eps, True))
    np.testing.assert_allclose(float(ga), (up - down) / (2 * h), rtol=1e-7)


def test_injecting_plan_adjoint_equals_composite_vjp():
    grid = fdtd.Grid((12, 10), 1e-3, dtype="float64")
    sim = _sim(grid, 1 + np.random.default_rng(4).random((12, 10)), 1.0, True)
    plan = sim._plans["e"][0]
    rng = np.random.default_rng(5)
    state = sim.initial_state(**{c: rng.standard_normal((12, 10)) for c in grid.components})
    values = core.tensor(rng.standard_normal(3), dtype=core.float64)
    operands = plan.operands(state, sim.coeffs, values)
    arrays = [np.asarray(t.asnumpy()) if isinstance(t, core.Tensor) else t for t in operands]
    out = plan.kernel()(np, *arrays)
    ref = plan.reference(*operands).asnumpy()
    np.testing.assert_array_equal(out, ref)
    g = rng.standard_normal(plan.size)
    adj = plan.adjoint_kernel()(np, *arrays, g)
    ref_adj = plan.adjoint_reference(*operands, core.tensor(g, dtype=core.float64)).asnumpy()
    np.testing.assert_allclose(adj, ref_adj, rtol=1e-13, atol=1e-13)
    # the values' cotangents: g at the source cells (two of them share one)
    cells = 12 * 10
    ez = list(plan.terms).index("ez") * cells
    expect = [g[ez + 5 * 10 + 5], g[ez + 5 * 10 + 5], g[ez + 7 * 10 + 4]]
    np.testing.assert_array_equal(adj[-3:], expect)
