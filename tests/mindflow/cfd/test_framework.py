"""mindflow.cfd framework: conversions, config validation, boundaries, conservation, jit, grad.

The convective flux is a first-order Rusanov stand-in (``_standin.py``) so that these tests
check the framework on its own, independent of the WENO reconstructors and Riemann solvers.
"""

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.mindflow import cfd
from diffsci.mindflow.cfd.boundary_conditions import BoundaryManager
from diffsci.mindflow.cfd.material import IdealGas

from ._helpers import space_solver
from ._standin import FirstOrderRusanov

MATERIAL = {"type": "IdealGas", "heat_ratio": 1.4, "specific_gas_constant": 1.0}


def _config(dim=1, n=16, bc="Periodic", integrator="RungeKutta3", pad=3):
    faces = ("x_min", "x_max", "y_min", "y_max", "z_min", "z_max")[: 2 * dim]
    mesh = {"dim": dim, "pad_size": pad}
    for name in "xyz"[:dim]:
        mesh[f"n{name}"] = n
        mesh[f"{name}_range"] = [0.0, 1.0]
    return {
        "mesh": mesh,
        "material": dict(MATERIAL),
        "runtime": {"CFL": 0.5, "current_time": 0.0, "end_time": 0.05},
        "integrator": {"type": integrator},
        "space_solver": {"is_convective_flux": False, "is_viscous_flux": False},
        "boundary_conditions": {f: {"type": bc} for f in faces},
    }


def _simulator(config):
    sim = cfd.Simulator(config)
    sim.space_solver.convective_flux_computer = FirstOrderRusanov(sim.mesh_info, sim.material)
    return sim


def _smooth_state(shape, seed=0):
    """A positive random primitive state ``[5, *shape]`` (float64 numpy)."""
    rng = np.random.default_rng(seed)
    pri = np.zeros((5, *shape))
    pri[0] = 1.0 + 0.3 * rng.random(shape)
    pri[1:4] = 0.3 * rng.standard_normal((3, *shape))
    pri[4] = 1.0 + 0.3 * rng.random(shape)
    return pri


# ---------------------------------------------------------------- conversions


@settings(max_examples=50, deadline=None)
@given(
    rho=st.floats(1e-3, 1e3),
    u=st.floats(-1e2, 1e2),
    v=st.floats(-1e2, 1e2),
    w=st.floats(-1e2, 1e2),
    p=st.floats(1e-3, 1e3),
    gamma=st.floats(1.05, 3.0),
)
def test_con_pri_round_trip(rho, u, v, w, p, gamma):
    material = IdealGas({"type": "IdealGas", "heat_ratio": gamma})
    pri = core.tensor(np.array([rho, u, v, w, p]).reshape(5, 1, 1, 1), dtype=core.float64)
    con = cfd.cal_con_var(pri, material)
    back = cfd.cal_pri_var(con, material).asnumpy().ravel()
    np.testing.assert_allclose(back[[0, 1, 2, 3]], [rho, u, v, w], rtol=1e-12, atol=1e-12)
    # p is E minus the kinetic energy: cancellation costs digits when the flow is hypersonic
    kinetic = 0.5 * rho * (u * u + v * v + w * w)
    np.testing.assert_allclose(back[4], p, rtol=1e-12, atol=1e-14 * kinetic * gamma)
    np.testing.assert_allclose(con.asnumpy().ravel()[4], p / (gamma - 1) + kinetic, rtol=1e-12)


def test_mesh_xyz_cell_centres():
    sim = _simulator(_config(dim=2, n=4))
    x, y, _ = sim.mesh_info.mesh_xyz(core.float64)
    assert x.shape == (4, 4, 1)
    np.testing.assert_allclose(x.asnumpy()[:, 0, 0], [0.125, 0.375, 0.625, 0.875])
    np.testing.assert_allclose(y.asnumpy()[0, :, 0], [0.125, 0.375, 0.625, 0.875])
    assert sim.mesh_info.cell_sizes[:2] == [0.25, 0.25]


# ---------------------------------------------------------------- config errors


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda c: c["space_solver"].update(
                is_convective_flux=True,
                convective_flux={"reconstructor": "WENO9", "riemann_computer": "HLLC"},
            ),
            r"'WENO9'.*accepted values: WENO3, WENO5, WENO7, WENO5-Z, TENO5",
        ),
        (
            lambda c: c["space_solver"].update(
                is_convective_flux=True,
                convective_flux={"reconstructor": "WENO5", "riemann_computer": "Godunov"},
            ),
            r"riemann_computer.*'Godunov'.*Rusanov, HLL, HLLC, Roe",
        ),
        (
            lambda c: c["space_solver"].update(
                is_convective_flux=True,
                convective_flux={"reconstructor": "WENO7", "riemann_computer": "HLLC"},
            ),
            r"pad_size'\] = 3 is too few ghost cells for WENO7.*>= 4",
        ),
        (
            lambda c: c["space_solver"].update(
                is_convective_flux=True,
                convective_flux={
                    "reconstructor": "WENO5",
                    "riemann_computer": "HLLC",
                    "reconstruction_variables": "entropy",
                },
            ),
            r"'entropy'.*characteristic, primitive, conservative",
        ),
        (lambda c: c["mesh"].update(nxx=3), r"unknown key 'nxx'.*accepted keys: dim, nx"),
        (lambda c: c["runtime"].update(CFL=1.5), r"CFL'\] must be in \(0, 1\], got 1.5"),
        (lambda c: c["integrator"].update(type="RK4"), r"'RK4'.*Euler, RungeKutta3"),
        (
            lambda c: c["boundary_conditions"]["x_min"].update(type="Inflow"),
            r"'Inflow'.*Neumann, Periodic, Symmetry, Wall",
        ),
        (lambda c: c["boundary_conditions"].pop("x_max"), r"missing key 'x_max'"),
        (
            lambda c: c["boundary_conditions"]["x_max"].update(type="Neumann"),
            r"Periodic must be set on both faces",
        ),
        (lambda c: c["material"].update(heat_ratio=1.0), r"heat_ratio'\] must be > 1"),
        (lambda c: c["material"].update(type="StiffenedGas"), r"'StiffenedGas'.*IdealGas"),
        (lambda c: c.update(solver={}), r"unknown key 'solver'"),
    ],
)
def test_config_errors_name_key_and_accepted_values(edit, message):
    config = _config()
    edit(config)
    with pytest.raises(ValueError, match=message):
        cfd.Simulator(config)


def test_negative_initial_pressure_is_an_error():
    sim = _simulator(_config(n=8))
    pri = _smooth_state((8, 1, 1))
    pri[4, 5] = -0.1
    con = cfd.cal_con_var(core.tensor(pri), sim.material)
    with pytest.raises(ValueError, match=r"non-positive pressure .* at cell \(5, 0, 0\)"):
        sim.run(con, progress=False)


def test_nan_mid_run_names_step_time_and_cell():
    sim = _simulator(_config(n=8))
    con = cfd.cal_con_var(core.tensor(_smooth_state((8, 1, 1))), sim.material)
    step = sim.integration_step
    calls = []

    def poisoned(con_var, dt):
        calls.append(dt)
        out = step(con_var, dt)
        if len(calls) == 3:
            data = out.asnumpy().copy()
            data[0, 6, 0, 0] = np.nan
            out = core.tensor(data)
        return out

    sim.integration_step = poisoned
    with pytest.raises(
        FloatingPointError,
        match=r"non-finite rho = nan at step 3, time .*, "
        r"cell \(6, 0, 0\)",
    ):
        sim.run(con, end_time=1.0, jit=False, progress=False)


# ---------------------------------------------------------------- boundary conditions


def _filled(bc, axis=0, dim=2, n=4, pad=2, extra=None):
    config = _config(dim=dim, n=n, bc="Neumann", pad=pad)
    faces = (("x_min", "x_max"), ("y_min", "y_max"), ("z_min", "z_max"))[axis]
    for f in faces:
        config["boundary_conditions"][f] = {"type": bc, **(extra or {})}
    if bc == "Periodic":
        for other in range(dim):
            for f in (("x_min", "x_max"), ("y_min", "y_max"), ("z_min", "z_max"))[other]:
                config["boundary_conditions"][f] = {"type": "Periodic"}
    sim = _simulator(config)
    shape = [n if a < dim else 1 for a in range(3)]
    pri = _smooth_state(tuple(shape), seed=3)
    out = BoundaryManager(config["boundary_conditions"], sim.mesh_info).fill_boundarys(
        core.tensor(pri)
    )
    return pri, out.asnumpy()


@pytest.mark.parametrize("axis", [0, 1])
def test_periodic_wraps(axis):
    pri, out = _filled("Periodic", axis=axis)
    pad, n = 2, 4
    assert out.shape == (5, n + 2 * pad, n + 2 * pad, 1)
    want = np.pad(pri, [(0, 0), (pad, pad), (pad, pad), (0, 0)], mode="wrap")
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("axis", [0, 1])
def test_symmetry_mirrors_and_flips_normal_velocity(axis):
    pri, out = _filled("Symmetry", axis=axis)
    pad, n = 2, 4
    inner = [slice(None)] * 4
    other = 2 - axis  # the other active tensor axis: keep its interior
    inner[other] = slice(pad, pad + n)
    out = out[tuple(inner)]
    head = np.take(out, range(pad), axis=axis + 1)
    tail = np.take(out, range(n + pad, n + 2 * pad), axis=axis + 1)
    mirror_head = np.flip(np.take(pri, range(pad), axis=axis + 1), axis + 1).copy()
    mirror_tail = np.flip(np.take(pri, range(n - pad, n), axis=axis + 1), axis + 1).copy()
    for m in (mirror_head, mirror_tail):
        m[axis + 1] *= -1.0
    np.testing.assert_allclose(head, mirror_head)
    np.testing.assert_allclose(tail, mirror_tail)


def test_wall_sets_face_velocity_to_wall_velocity():
    velocity = {"velocity_x": 0.1, "velocity_y": -0.2, "velocity_z": 0.05}
    pri, out = _filled("Wall", axis=1, extra=velocity)
    pad, n = 2, 4
    out = out[:, pad : pad + n]
    wall = np.broadcast_to(np.array([0.1, -0.2, 0.05]).reshape(3, 1, 1), (3, 4, 1))
    # the average of the cells on either side of each wall face is the wall velocity
    np.testing.assert_allclose(0.5 * (out[1:4, :, pad - 1] + out[1:4, :, pad]), wall)
    np.testing.assert_allclose(0.5 * (out[1:4, :, n + pad] + out[1:4, :, n + pad - 1]), wall)
    # density and pressure mirror
    np.testing.assert_allclose(out[[0, 4], :, pad - 2], pri[[0, 4], :, 1])
    np.testing.assert_allclose(out[[0, 4], :, n + pad + 1], pri[[0, 4], :, n - 2])


def test_neumann_copies_edge_cells():
    pri, out = _filled("Neumann", axis=0, dim=1, n=6, pad=3)
    np.testing.assert_array_equal(out[:, :3], np.repeat(pri[:, :1], 3, axis=1))
    np.testing.assert_array_equal(out[:, -3:], np.repeat(pri[:, -1:], 3, axis=1))


# ---------------------------------------------------------------- conservation, jit, grad


@pytest.mark.parametrize(("dim", "n"), [(1, 32), (2, 12)])
def test_periodic_conservation_100_steps(dim, n):
    sim = _simulator(_config(dim=dim, n=n))
    shape = tuple(n if a < dim else 1 for a in range(3))
    con = cfd.cal_con_var(core.tensor(_smooth_state(shape, seed=1)), sim.material)
    total0 = con.asnumpy().reshape(5, -1).sum(axis=1)
    step = sim.compiled_step
    for _ in range(100):
        con = step(con, 2e-3)
    total = con.asnumpy().reshape(5, -1).sum(axis=1)
    scale = np.abs(con.asnumpy()).reshape(5, -1).sum(axis=1)
    assert np.all(np.abs(total - total0) <= 1e-12 * scale), (total - total0) / scale


@pytest.mark.parametrize("integrator", ["Euler", "RungeKutta3"])
@pytest.mark.parametrize("bc", ["Periodic", "Symmetry", "Wall", "Neumann"])
def test_jit_step_equals_eager(integrator, bc):
    sim = _simulator(_config(dim=2, n=8, bc=bc, integrator=integrator))
    con = cfd.cal_con_var(core.tensor(_smooth_state((8, 8, 1), seed=2)), sim.material)
    eager = sim.integration_step(con, 1e-3).asnumpy()
    jitted = core.jit(sim.integration_step)(con, 1e-3).asnumpy()
    np.testing.assert_allclose(jitted, eager, rtol=1e-13, atol=1e-14)


def test_float32_step_keeps_dtype():
    sim = _simulator(_config(n=16))
    con = cfd.cal_con_var(core.tensor(_smooth_state((16, 1, 1)).astype(np.float32)), sim.material)
    assert sim.compiled_step(con, 1e-3).dtype == core.float32


def test_gradient_of_rollout_matches_central_differences():
    sim = _simulator(_config(n=12, bc="Neumann"))
    con0 = cfd.cal_con_var(core.tensor(_smooth_state((12, 1, 1), seed=4)), sim.material)
    weights = core.tensor(np.linspace(0.5, 1.5, 12).reshape(12, 1, 1))

    def loss(con):
        final = sim.rollout(con, 4e-3, 5)
        return (final[0] * weights).sum()

    grad = core.grad(loss)(con0).asnumpy()
    base = con0.asnumpy()
    rng = np.random.default_rng(0)
    h = 1e-6
    for idx in [(0, 3, 0, 0), (1, 6, 0, 0), (4, 0, 0, 0), (0, 11, 0, 0), (2, 5, 0, 0)]:
        plus, minus = base.copy(), base.copy()
        plus[idx] += h
        minus[idx] -= h
        fd = float(loss(core.tensor(plus)).asnumpy()) - float(loss(core.tensor(minus)).asnumpy())
        fd /= 2 * h
        np.testing.assert_allclose(grad[idx], fd, rtol=1e-6, atol=1e-9)
    # a random direction, all components at once
    direction = rng.standard_normal(base.shape)
    fd = (
        float(loss(core.tensor(base + h * direction)).asnumpy())
        - float(loss(core.tensor(base - h * direction)).asnumpy())
    ) / (2 * h)
    np.testing.assert_allclose((grad * direction).sum(), fd, rtol=1e-6)


def test_runtime_hits_end_time_and_cfl_timestep():
    config = _config(n=20, bc="Neumann")
    sim = _simulator(config)
    pri = _smooth_state((20, 1, 1), seed=5)
    runtime = cfd.RunTime(config["runtime"], sim.mesh_info, sim.material)
    dt = runtime.compute_timestep(core.tensor(pri))
    c = np.sqrt(1.4 * pri[4] / pri[0])
    np.testing.assert_allclose(dt, 0.5 / (np.max((np.abs(pri[1]) + c) * 20) + 1e-8))
    con, snaps = sim.run(
        cfd.cal_con_var(core.tensor(pri), sim.material), save_every=2, progress=False
    )
    assert sim.last_runtime.current_time == pytest.approx(0.05, abs=1e-15)
    assert snaps[0][0] == 0.0 and snaps[-1][0] == pytest.approx(0.05)
    np.testing.assert_array_equal(snaps[-1][1].asnumpy(), con.asnumpy())


def test_fixed_timestep_runtime_loop_as_in_mindflow_scripts():
    config = copy.deepcopy(_config(n=10, bc="Neumann"))
    config["runtime"] = {
        "fixed_timestep": True,
        "timestep": 0.01,
        "current_time": 0.0,
        "end_time": 0.05,
    }
    sim = _simulator(config)
    runtime = cfd.RunTime(config["runtime"], sim.mesh_info, sim.material)
    con_var = cfd.cal_con_var(core.tensor(_smooth_state((10, 1, 1))), sim.material)
    pri_var = cfd.cal_pri_var(con_var, sim.material)
    while runtime.time_loop(pri_var):
        pri_var = cfd.cal_pri_var(con_var, sim.material)
        runtime.compute_timestep(pri_var)
        con_var = sim.integration_step(con_var, runtime.timestep)
        runtime.advance()
    assert runtime.step == 5
    assert runtime.current_time == pytest.approx(0.05)


# ---------------------------------------------------------------- with the real flux pieces


def _real_config(dim, n, reconstructor, riemann, variables, bc="Periodic"):
    config = _config(dim=dim, n=n, bc=bc)
    config["space_solver"] = space_solver(reconstructor, riemann, variables)
    return config


@pytest.mark.parametrize(
    ("dim", "n", "reconstructor", "riemann", "variables"),
    [
        (1, 32, "WENO5", "Rusanov", "conservative"),
        (1, 32, "WENO5", "HLLC", "characteristic"),
        (2, 10, "WENO5", "Roe", "characteristic"),
    ],
)
def test_periodic_conservation_with_weno(dim, n, reconstructor, riemann, variables):
    sim = cfd.Simulator(_real_config(dim, n, reconstructor, riemann, variables))
    shape = tuple(n if a < dim else 1 for a in range(3))
    con = cfd.cal_con_var(core.tensor(_smooth_state(shape, seed=1)), sim.material)
    total0 = con.asnumpy().reshape(5, -1).sum(axis=1)
    for _ in range(100):
        con = sim.compiled_step(con, 1e-3)
    total = con.asnumpy().reshape(5, -1).sum(axis=1)
    scale = np.abs(con.asnumpy()).reshape(5, -1).sum(axis=1)
    assert np.all(np.abs(total - total0) <= 1e-12 * scale), (total - total0) / scale


@pytest.mark.parametrize("bc", ["Periodic", "Wall"])
def test_jit_step_equals_eager_with_weno_hllc(bc):
    sim = cfd.Simulator(_real_config(2, 8, "WENO5", "HLLC", "characteristic", bc=bc))
    con = cfd.cal_con_var(core.tensor(_smooth_state((8, 8, 1), seed=2)), sim.material)
    eager = sim.integration_step(con, 1e-3).asnumpy()
    jitted = sim.compiled_step(con, 1e-3).asnumpy()
    np.testing.assert_allclose(jitted, eager, rtol=1e-12, atol=1e-13)


def test_gradient_of_weno_hllc_rollout_matches_central_differences():
    sim = cfd.Simulator(_real_config(1, 12, "WENO5", "HLLC", "characteristic", bc="Neumann"))
    con0 = cfd.cal_con_var(core.tensor(_smooth_state((12, 1, 1), seed=4)), sim.material)
    weights = core.tensor(np.linspace(0.5, 1.5, 12).reshape(12, 1, 1))

    def loss(con):
        return (sim.rollout(con, 4e-3, 3)[0] * weights).sum()

    grad = core.grad(loss)(con0).asnumpy()
    base = con0.asnumpy()
    direction = np.random.default_rng(1).standard_normal(base.shape)
    h = 1e-6
    fd = (
        float(loss(core.tensor(base + h * direction)).asnumpy())
        - float(loss(core.tensor(base - h * direction)).asnumpy())
    ) / (2 * h)
    np.testing.assert_allclose((grad * direction).sum(), fd, rtol=1e-6)
