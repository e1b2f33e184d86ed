"""The native half steps (one C loop each) against the composite Yee update."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import native as core_native
from diffsci.mindelec import fdtd
from diffsci.mindelec.fdtd import native_yee
from diffsci.mindelec.fdtd.waveforms import Gaussian

pytestmark = pytest.mark.skipif(not core_native.available(), reason="no C compiler")

CASES = [
    ((16,), None, fdtd.CPML(4)),
    ((10, 9), "TMz", {"x": fdtd.CPML(3), "y": fdtd.Periodic()}),
    ((10, 9), "TEz", {"x": fdtd.PMC(), "y": (fdtd.CPML(2), fdtd.PEC())}),
    ((8, 7, 9), None, {"x": fdtd.CPML(2), "y": fdtd.PMC(), "z": fdtd.Periodic()}),
    ((6, 5, 7), None, fdtd.PEC()),
    ((7, 6, 5), None, fdtd.CPML(2, alpha_max=0.1)),
]


def _compare_step(shape, mode, boundaries, dtype, materials):
    spacing = (1e-3, 1.1e-3, 0.9e-3)[: len(shape)]
    grid = fdtd.Grid(shape, spacing, mode=mode, dtype=dtype)
    rng = np.random.default_rng(0)
    native = fdtd.Simulation(grid, materials, boundaries)
    composite = fdtd.Simulation(grid, materials, boundaries, native=False)
    assert set(native._plans) == {"h", "e"} and not composite._plans
    state = native.initial_state(**{c: rng.standard_normal(shape) for c in grid.components})
    psi = {
        k: core.tensor(rng.standard_normal(tuple(v.shape)), dtype=grid.dtype)
        for k, v in state.psi.items()
    }
    state = state.replace(psi=psi)
    a, b = native.compiled_step(state, 0), composite.step(state, 0)
    # the same formulas in the same order: equal to the last bit
    for name, value in b.components().items():
        np.testing.assert_array_equal(a.get(name).asnumpy(), value.asnumpy())
    for key, value in b.psi.items():
        np.testing.assert_array_equal(a.psi[key].asnumpy(), value.asnumpy())


@pytest.mark.parametrize(("shape", "mode", "boundaries"), CASES)
def test_native_step_equals_composite(shape, mode, boundaries):
    # lossy maps (Ca, Cb maps); one C source per configuration, so few variants keep the
    # first (uncached) run short
    rng = np.random.default_rng(1)
    materials = fdtd.Materials(eps_r=1 + rng.random(shape), sigma=0.02 * rng.random(shape))
    _compare_step(shape, mode, boundaries, "float64", materials)


def test_native_step_float32_and_number_coefficients():
    # float32, a lossless uniform medium: Ca the number 1.0 (skipped), Cb a number
    _compare_step((7, 6, 5), None, fdtd.CPML(2, alpha_max=0.1), "float32", fdtd.Materials(2.0))


def test_native_run_and_gradient_match_composite():
    shape = (12, 10)
    grid = fdtd.Grid(shape, 1e-3, dtype="float64")
    eps0 = 1 + np.random.default_rng(1).random(shape)

    def loss(eps, native):
        sim = fdtd.Simulation(
            grid,
            fdtd.Materials(eps_r=eps),
            {"x": fdtd.CPML(3), "y": fdtd.PEC()},
            sources=[fdtd.PointSource("ez", (5, 5), Gaussian(1.4e10))],
            monitors=[fdtd.PointProbe("ez", (8, 6))],
            native=native,
        )
        return (sim.run(40)[1]["probe"] ** 2).sum()

    eps = core.tensor(eps0, dtype=core.float64)
    assert float(loss(eps, True)) == float(loss(eps, False))
    g_native = core.grad(lambda e: loss(e, True))(eps).asnumpy()
    g_composite = core.grad(lambda e: loss(e, False))(eps).asnumpy()
    np.testing.assert_allclose(
        g_native, g_composite, rtol=1e-12, atol=1e-12 * abs(g_composite).max()
    )


@pytest.mark.parametrize(("shape", "mode", "boundaries"), CASES)
def test_native_adjoint_equals_composite_vjp(shape, mode, boundaries):
    # the adjoint kernel (two passes) against vjp of the composite half step, float64
    spacing = (1e-3, 1.1e-3, 0.9e-3)[: len(shape)]
    grid = fdtd.Grid(shape, spacing, mode=mode, dtype="float64")
    rng = np.random.default_rng(2)
    materials = fdtd.Materials(eps_r=1 + rng.random(shape), sigma=0.02 * rng.random(shape))
    sim = fdtd.Simulation(grid, materials, boundaries)
    state = sim.initial_state(**{c: rng.standard_normal(shape) for c in grid.components})
    psi = {k: core.tensor(rng.standard_normal(tuple(v.shape))) for k, v in state.psi.items()}
    state = state.replace(psi=psi)
    for kind in ("h", "e"):
        plan, _ = sim._plans[kind]
        operands = plan.operands(state, sim.coeffs)
        g = core.tensor(rng.standard_normal(plan.size))
        kernel = plan.adjoint_kernel()
        assert kernel is not None
        native = kernel(np, *[x.asnumpy() for x in operands], g.asnumpy())
        composite = plan.adjoint_reference(*operands, g).asnumpy()
        scale = np.abs(composite).max()
        np.testing.assert_allclose(native, composite, rtol=1e-12, atol=1e-13 * scale)


def test_forward_mode_and_second_order_through_native_steps():
    grid = fdtd.Grid((14, 12), 1e-3, dtype="float64")
    rng = np.random.default_rng(3)
    eps = core.tensor(1 + rng.random((14, 12)), dtype=core.float64)
    tangent = core.tensor(rng.standard_normal((14, 12)), dtype=core.float64)

    def loss(eps, native=True):
        sim = fdtd.Simulation(
            grid,
            fdtd.Materials(eps_r=eps),
            fdtd.CPML(3),
            sources=[fdtd.PointSource("ez", (6, 6), Gaussian(1.4e10))],
            monitors=[fdtd.PointProbe("ez", (8, 7))],
            native=native,
        )
        return (sim.run(30)[1]["probe"] ** 2).sum()

    _, jvp = core.jvp(loss, (eps,), (tangent,))
    grad = core.grad(loss)(eps)
    np.testing.assert_allclose(float(jvp), float((grad * tangent).sum()), rtol=1e-10)
    second = core.grad(lambda e: (core.grad(loss)(e) ** 2).sum())(eps).asnumpy()
    reference = core.grad(lambda e: (core.grad(lambda x: loss(x, False))(e) ** 2).sum())(eps)
    np.testing.assert_allclose(
        second, reference.asnumpy(), rtol=1e-9, atol=1e-12 * abs(second).max()
    )


@pytest.mark.parametrize(
    ("case", "dtype"), [(CASES[1], "float64"), (CASES[3], "float32"), (CASES[5], "float64")]
)
def test_streaming_and_masked_variants_equal_composite(monkeypatch, case, dtype):
    # the forward kernel's fast variants: non-temporal row stores (forced on at toy size; odd
    # row lengths exercise the unaligned head and the tail) and uniform coefficients read as a
    # number times the walls' mask vectors; still bit-equal to the composite
    shape, mode, boundaries = case
    monkeypatch.setattr(native_yee, "STREAM_BYTES", 0)
    materials = fdtd.Materials(eps_r=2.0, mu_r=1.5, sigma=0.01)
    _compare_step(shape, mode, boundaries, dtype, materials)
    grid = fdtd.Grid(shape, 1e-3, mode=mode, dtype=dtype)
    sim = fdtd.Simulation(grid, materials, boundaries)
    plan, _ = sim._plans["e"]
    arrays = [x.asnumpy() for x in plan.operands(sim.initial_state(), sim.coeffs)]
    assert plan.variant(arrays) == (bool(plan.masked), True)


def test_masked_coefficients_detected_and_checked_by_identity():
    grid = fdtd.Grid((9, 8, 10), 1e-3, dtype="float64")
    sim = fdtd.Simulation(grid, fdtd.Materials(eps_r=3.0), fdtd.CPML(2))
    plan, _ = sim._plans["e"]
    # Cb of every E component: dt / eps times the PEC-backed walls' mask
    assert set(plan.masked) == {"cb_ex", "cb_ey", "cb_ez"}
    number, masks, _array = plan.masked["cb_ez"]
    assert number == pytest.approx(grid.dt / (3.0 * fdtd.constants.EPS0), rel=1e-15)
    np.testing.assert_array_equal(masks[:9], [0] + [1] * 8)  # ez: tangential on the x wall
    np.testing.assert_array_equal(masks[9:17], [0] + [1] * 7)  # and on the y wall
    np.testing.assert_array_equal(masks[17:], np.ones(10))  # not on the z wall
    state = sim.initial_state()
    arrays = [x.asnumpy() for x in plan.operands(state, sim.coeffs)]
    assert plan.variant(arrays)[0]
    # an equal map in another buffer is not trusted: the kernel reads the map, same result
    index = plan._coef_index()["cb_ez"]
    copies = list(arrays)
    copies[index] = arrays[index].copy()
    assert not plan.variant(copies)[0]
    kernel = plan.kernel()
    rng = np.random.default_rng(4)
    for m in range(6):
        arrays[m] = copies[m] = rng.standard_normal(arrays[m].shape)
    np.testing.assert_array_equal(kernel(np, *arrays), kernel(np, *copies))
    # a varying map, or one modified cell, is not a number times a mask
    eps = np.full(grid.shape, 3.0)
    eps[4, 4, 4] = 3.5
    lossy = fdtd.Simulation(grid, fdtd.Materials(eps_r=eps), fdtd.CPML(2))
    assert not lossy._plans["e"][0].masked
    assert native_yee._separable(core.tensor(np.ones((2, 3, 4))), (2, 3, 4))[0] == 1.0
    bumped = np.ones((2, 3, 4))
    bumped[0, 0, 0] = 0.0  # a zero that is no whole plane
    assert native_yee._separable(core.tensor(bumped), (2, 3, 4)) is None


def test_long_rows_do_not_stream(monkeypatch):
    monkeypatch.setattr(native_yee, "STREAM_BYTES", 0)
    grid = fdtd.Grid((native_yee.ROWMAX + 3,), 1e-3, dtype="float64")
    sim = fdtd.Simulation(grid, None, fdtd.CPML(4))
    plan, _ = sim._plans["h"]
    arrays = [x.asnumpy() for x in plan.operands(sim.initial_state(), sim.coeffs)]
    assert plan.variant(arrays)[1] is False


def test_streaming_kernel_split_across_threads(monkeypatch):
    # enough rows that the pool splits them (2 x grain rows of 9 cells): each thread streams
    # its rows and fences; the result is the composite's, bit for bit
    monkeypatch.setattr(native_yee, "STREAM_BYTES", 0)
    before = core.get_num_threads()
    core.set_num_threads(2)
    try:
        _compare_step((90, 85, 9), None, fdtd.CPML(3), "float32", fdtd.Materials(1.5))
    finally:
        core.set_num_threads(before)
