"""The native Godunov flux (space_solver/native_flux.py) against the composite it stands for.

The composite (projection + reconstructor + Riemann solver, core ops) is the definition; the C
loop must give the same face fluxes (float64: the same operations in the same order, so equal
to a few ulp; float32: to its rounding), propagate NaN where the composite does, and leave
every derivative to the composite.
"""

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core.backend import cc
from diffsci.mindflow import cfd

pytestmark = pytest.mark.skipif(not cc.available(), reason="no C compiler: no native flux here")

BASE = {
    "material": {"type": "IdealGas", "heat_ratio": 1.4, "specific_gas_constant": 1.0},
    "runtime": {"CFL": 0.5, "current_time": 0.0, "end_time": 0.1},
    "integrator": {"type": "RungeKutta3"},
    "space_solver": {
        "is_convective_flux": True,
        "convective_flux": {"reconstructor": "WENO5", "riemann_computer": "HLLC"},
        "is_viscous_flux": False,
    },
}


def _config(cells, reconstructor="WENO5", riemann="HLLC", bc="Neumann"):
    cfg = copy.deepcopy(BASE)
    mesh = {"dim": len(cells), "pad_size": 3}
    for name, n in zip("xyz", cells):
        mesh[f"n{name}"] = n
        mesh[f"{name}_range"] = [0.0, 1.0]
    cfg["mesh"] = mesh
    conv = cfg["space_solver"]["convective_flux"]
    conv["reconstructor"], conv["riemann_computer"] = reconstructor, riemann
    faces = ("x_min", "x_max", "y_min", "y_max", "z_min", "z_max")[: 2 * len(cells)]
    cfg["boundary_conditions"] = {f: {"type": bc} for f in faces}
    return cfg


def _padded_state(sim, cells, dtype, seed):
    """Physical states on the padded grid ([5, nx + 6, ...], inactive axes 1): smooth waves of
    random phase and a density/pressure jump at a random plane (a shock-tube-like front)."""
    rng = np.random.default_rng(seed)
    shape = [n + 6 for n in cells] + [1] * (3 - len(cells))
    grids = np.meshgrid(*[np.linspace(0, 1, s) for s in shape], indexing="ij")
    phase = sum(rng.uniform(0, 2 * np.pi) + 2 * np.pi * g for g in grids)
    side = sum(rng.normal() * (g - 0.5) for g in grids) > 0
    pri = np.zeros([5, *shape])
    pri[0] = np.where(side, 1.0, 0.125) * (1 + 0.2 * np.sin(phase))
    for k in range(len(cells)):
        pri[1 + k] = 0.3 * rng.normal() * np.cos(phase + k)
    pri[4] = np.where(side, 1.0, 0.1) * (1 + 0.2 * np.cos(phase))
    return cfd.cal_con_var(core.tensor(pri.astype(dtype)), sim.material)


def _both(sim, con, axis):
    flux = sim.space_solver.convective_flux_computer
    assert flux._native_kernel(axis) is not None
    return flux.compute_flux(con, axis).asnumpy(), flux._composite_flux(con, axis).asnumpy()


@settings(max_examples=12, deadline=None)
@given(
    cells=st.sampled_from([(17,), (9, 7), (5, 6, 4)]),
    reconstructor=st.sampled_from(["WENO5", "WENO5-Z"]),
    riemann=st.sampled_from(["HLLC", "Rusanov"]),
    seed=st.integers(0, 2**16),
)
def test_native_matches_composite_float64(cells, reconstructor, riemann, seed):
    sim = cfd.Simulator(_config(cells, reconstructor, riemann))
    con = _padded_state(sim, cells, np.float64, seed)
    for axis in range(len(cells)):
        native, composite = _both(sim, con, axis)
        assert native.shape == composite.shape
        np.testing.assert_allclose(native, composite, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("reconstructor", ["WENO5", "WENO5-Z"])
def test_native_matches_composite_float32(reconstructor):
    cells = (12, 10)
    sim = cfd.Simulator(_config(cells, reconstructor))
    con = _padded_state(sim, cells, np.float32, 3)
    for axis in range(2):
        native, composite = _both(sim, con, axis)
        assert native.dtype == np.float32
        np.testing.assert_allclose(native, composite, rtol=2e-5, atol=2e-5)


def test_nan_reaches_the_same_faces():
    """A NaN in a cell reaches the same faces in both (every face whose stencil holds it): the
    kernel must not swallow it (C's fmax would), or the solver's NaN check cannot fire."""
    cells = (20,)
    sim = cfd.Simulator(_config(cells))
    con = _padded_state(sim, cells, np.float64, 0).asnumpy().copy()
    con[4, 12] = np.nan
    with np.errstate(invalid="ignore"):
        native, composite = _both(sim, core.tensor(con), 0)
    assert np.isnan(composite[:, 9:11]).all()  # faces 9, 10: cell 12 is one of their two cells
    np.testing.assert_array_equal(np.isnan(native), np.isnan(composite))
    np.testing.assert_allclose(native[~np.isnan(native)], composite[~np.isnan(composite)])


def test_thread_count_does_not_change_the_result():
    cells = (64, 48)
    sim = cfd.Simulator(_config(cells))
    con = _padded_state(sim, cells, np.float64, 1)
    flux = sim.space_solver.convective_flux_computer
    saved = core.get_num_threads()
    try:
        core.set_num_threads(1)
        one = [flux.compute_flux(con, a).asnumpy() for a in (0, 1)]
        core.set_num_threads(2)
        two = [flux.compute_flux(con, a).asnumpy() for a in (0, 1)]
    finally:
        core.set_num_threads(saved)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)


def test_compiled_step_uses_the_kernel_and_matches_the_composite_step():
    cells = (40,)
    sim = cfd.Simulator(_config(cells))
    ref = cfd.Simulator(_config(cells))
    ref.space_solver.convective_flux_computer.native = False
    x = sim.mesh_info.mesh_xyz(core.float64)[0].asnumpy()
    pri = np.zeros((5, *x.shape))
    pri[0] = np.where(x < 0.5, 1.0, 0.125)
    pri[4] = np.where(x < 0.5, 1.0, 0.1)
    con = cfd.cal_con_var(core.tensor(pri), sim.material)
    dt = core.tensor(1e-3, dtype=core.float64)
    text = core.jit(sim.integration_step).lower(con, dt).as_text()
    assert "kernel_call" in text
    assert "kernel_call" not in core.jit(ref.integration_step).lower(con, dt).as_text()
    a, b = con, con
    for _ in range(5):
        a, b = sim.compiled_step(a, dt), ref.integration_step(b, 1e-3)
    np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-13, atol=1e-15)


def test_gradient_through_the_kernel_is_the_composite_gradient():
    """grad sees the composite: with and without the kernel the gradients agree, and they
    match central differences."""
    cells = (16,)
    sims = [cfd.Simulator(_config(cells, bc="Periodic")) for _ in range(2)]
    sims[1].space_solver.convective_flux_computer.native = False
    x = sims[0].mesh_info.mesh_xyz(core.float64)[0].asnumpy()
    pri = np.zeros((5, *x.shape))
    pri[0] = 1.0 + 0.2 * np.sin(2 * np.pi * x)
    pri[1] = 0.3
    pri[4] = 1.0
    con0 = cfd.cal_con_var(core.tensor(pri), sims[0].material)

    def loss_of(sim):
        def loss(con):
            for _ in range(2):
                con = sim.integration_step(con, 0.01)
            return (con[0] ** 2).sum()

        return loss

    g_native = core.grad(loss_of(sims[0]))(con0).asnumpy()
    g_comp = core.grad(loss_of(sims[1]))(con0).asnumpy()
    np.testing.assert_allclose(g_native, g_comp, rtol=1e-12, atol=1e-14)
    c = con0.asnumpy()
    e = np.zeros_like(c)
    e[0, 5] = 1e-6
    fd = (
        float(loss_of(sims[0])(core.tensor(c + e)).asnumpy())
        - float(loss_of(sims[0])(core.tensor(c - e)).asnumpy())
    ) / 2e-6
    np.testing.assert_allclose(g_native[0, 5], fd, rtol=1e-6)


def test_unsupported_schemes_keep_the_composite():
    for rec, riemann, variables in [
        ("WENO3", "HLLC", None),
        ("WENO5", "Roe", None),
        ("WENO5", "HLLC", "primitive"),
    ]:
        cfg = _config((8,), rec, riemann)
        if variables:
            cfg["space_solver"]["convective_flux"]["reconstruction_variables"] = variables
        flux = cfd.Simulator(cfg).space_solver.convective_flux_computer
        assert flux._native_kernel(0) is None
    cfg = _config((8,))
    cfg["space_solver"]["convective_flux"]["positivity"] = True
    assert cfd.Simulator(cfg).space_solver.convective_flux_computer._native_kernel(0) is None
