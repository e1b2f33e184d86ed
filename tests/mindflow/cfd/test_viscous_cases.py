"""Viscous verification (issue 12): Couette start-up against the series solution, steady plane
Poiseuille flow against the parabola, and the 2D Taylor-Green kinetic-energy decay rate.

The full-size runs are the examples (examples/mindflow/cfd/couette, taylor_green); here they run
on smaller grids / shorter times so the module takes a few seconds.
"""

import numpy as np
import pytest

from diffsci import core
from diffsci.mindflow import cfd

from ._helpers import load_example as _load
from ._helpers import space_solver


@pytest.fixture(scope="module")
def couette():
    return _load("couette")


@pytest.fixture(scope="module")
def taylor_green():
    return _load("taylor_green")


# ---------------------------------------------------------------------------------- Couette


def test_couette_series_limits(couette):
    y = np.linspace(0.0, 1.0, 11)
    np.testing.assert_allclose(couette.couette_series(y, 50.0), 0.1 * y, atol=1e-12)
    start = couette.couette_series(y[:-1], 1e-6)
    assert np.max(np.abs(start[:-1])) < 1e-3  # at rest away from the moving wall


def test_couette_startup_matches_series(couette):
    """MindFlow's Couette config (viscous flux only, walls, x-periodic) at ny = 40, dt = 1e-3:
    rel-L2(u) 3.8e-3 at t = 0.05, 3.8e-4 at t = 0.5, 1.9e-4 at t = 1 (the example's full
    ny = 100, dt = 2e-4 run to t = 5 gives 1.4e-6)."""
    out = couette.main(ny=40, end_time=1.0, timestep=1e-3, plot=False, verbose=False)
    errors = dict(zip(out["times"], out["errors"]))
    assert errors[0.05] < 1e-2
    assert errors[0.5] < 1e-3
    assert errors[1.0] < 1e-3
    u = out["u"][-1]
    assert np.all(np.diff(u) > 0.0)  # monotone from the fixed to the moving wall


def test_couette_error_falls_with_resolution(couette):
    coarse = couette.main(ny=20, end_time=0.5, timestep=1e-3, plot=False, verbose=False)
    fine = couette.main(ny=40, end_time=0.5, timestep=1e-3, plot=False, verbose=False)
    assert fine["error"] < coarse["error"] / 3.0


# ---------------------------------------------------------------------------------- Poiseuille


def _poiseuille_config(nx, ny, mu):
    return {
        "mesh": {
            "dim": 2,
            "nx": nx,
            "ny": ny,
            "x_range": [0.0, 1.0],
            "y_range": [0.0, 1.0],
            "pad_size": 3,
        },
        "material": {
            "type": "IdealGas",
            "heat_ratio": 1.4,
            "gas_constant": 1.0,
            "dynamic_viscosity": mu,
            "bulk_viscosity": 0.0,
            "thermal_conductivity": 0.0,
        },
        "runtime": {"CFL": 0.5, "current_time": 0.0, "end_time": 1.0},
        "integrator": {"type": "RungeKutta3"},
        "space_solver": space_solver("WENO5", "HLLC", "primitive", viscous=True),
        "boundary_conditions": {
            "x_min": {"type": "Neumann"},
            "x_max": {"type": "Neumann"},
            "y_min": {"type": "Wall"},
            "y_max": {"type": "Wall"},
        },
    }


def _poiseuille_residual(ny, nx=12, mu=0.1, grad_p=0.08):
    """x-momentum dU/dt of the state u = G y (1 - y) / (2 mu), p = 1 - G x, rho = 1 relative to
    the pressure force G, on the columns away from the Neumann x ends."""
    sim = cfd.Simulator(_poiseuille_config(nx, ny, mu))
    mesh_x, mesh_y, _ = sim.mesh_info.mesh_xyz(core.float64)
    x, y = mesh_x.asnumpy(), mesh_y.asnumpy()
    pri = np.zeros((5, *x.shape))
    pri[0] = 1.0
    pri[1] = grad_p / (2.0 * mu) * y * (1.0 - y)
    pri[4] = 1.0 - grad_p * x
    rhs = sim.compute_rhs(cfd.cal_con_var(core.tensor(pri), sim.material)).asnumpy()
    inner = slice(4, nx - 4)
    return (
        np.abs(rhs[1, inner]).max() / grad_p,
        np.abs(rhs[1, inner, 3:-3]).max() / grad_p,
        np.abs(rhs[2, inner]).max() / grad_p,
    )


def test_poiseuille_parabola_is_steady():
    """Pressure force G balances mu u_yy exactly in the interior (the fourth-order stencils are
    exact on the parabola); the mirrored no-slip ghosts leave an O(1) residual only in the
    wall cells (as a second-order wall closure does), so the steady profile error is O(dy^2)."""
    total, interior, v_mom = _poiseuille_residual(ny=32)
    assert interior < 1e-5  # measured 3.7e-7 at ny = 16, 32, 64 (not a truncation error)
    assert total < 0.25  # wall cells: 0.198
    assert v_mom < 1e-12  # exactly 0 (characteristic variables: 6.4e-4, 1.7e-4 at ny = 16, 32)


def test_poiseuille_steady_profile_converges():
    """The discrete steady profile: x-periodic marching cannot hold a pressure gradient (and the
    solver has no body force), so solve R(u) = 0 for the x-momentum residual R, which is affine
    in the velocity column u(y) at fixed rho = 1 and p = 1 - G x, and compare it to the parabola.

    Measured rel-L2 (WENO5 primitive + HLLC): 3.6e-3, 8.9e-4, 2.2e-4 at ny = 16, 32, 64 (second
    order). With characteristic variables the defect converges slowly (2.5e-3, 1.9e-3, 1.3e-3,
    7.8e-4 at ny = 16..128); with Rusanov it is first order and large (0.21, 0.12, 0.065: its
    dissipation acts on the shear at the walls)."""
    errs = []
    for ny in (16, 32):
        mu, g = 0.1, 0.08
        sim = cfd.Simulator(_poiseuille_config(12, ny, mu))
        mesh_x, mesh_y, _ = sim.mesh_info.mesh_xyz(core.float64)
        x, y = mesh_x.asnumpy(), mesh_y.asnumpy()
        base = np.zeros((5, *x.shape))
        base[0], base[4] = 1.0, 1.0 - g * x

        def rhs_u(u_col, base=base, sim=sim):
            pri = base.copy()
            pri[1] = u_col[None, :, None]
            rhs = sim.compute_rhs(cfd.cal_con_var(core.tensor(pri), sim.material)).asnumpy()
            return rhs[1, 6, :, 0]

        # the x-momentum residual is affine in u: build it column by column and solve R(u) = 0
        r0 = rhs_u(np.zeros(ny))
        jac = np.stack([rhs_u(np.eye(ny)[k]) - r0 for k in range(ny)], axis=1)
        u = np.linalg.solve(jac, -r0)
        yc = y[0, :, 0]
        exact = g / (2.0 * mu) * yc * (1.0 - yc)
        errs.append(np.sqrt(np.sum((u - exact) ** 2) / np.sum(exact**2)))
    assert errs[1] < 1.5e-3
    assert errs[0] / errs[1] > 3.0  # second order


# ---------------------------------------------------------------------------------- Taylor-Green


def test_taylor_green_decay_rate(taylor_green):
    """32^2, nu = 0.05, t = 0.25 (the example's 64^2, nu = 0.01, t = 2 gives -0.19%)."""
    out = taylor_green.main(n=32, end_time=0.25, nu=0.05, samples=4, plot=False, verbose=False)
    assert abs(out["rel_error"]) < 0.01, out["rel_error"]
    assert np.all(np.diff(out["energies"]) < 0.0)


def test_taylor_green_tiny_runs(taylor_green):
    out = taylor_green.main(tiny=True, verbose=False)
    assert np.isfinite(out["rate"]) and out["rate"] > 0.0
    assert abs(out["rel_error"]) < 0.2
