"""ViscousFlux: fourth-order face stresses, exact on cubic velocity fields, and heat conduction."""

import numpy as np
import pytest

from diffsci import core
from diffsci.mindflow.cfd.material import IdealGas
from diffsci.mindflow.cfd.mesh_info import MeshInfo
from diffsci.mindflow.cfd.space_solver.viscous_flux import ViscousFlux

MU, K, R_GAS, GAMMA = 0.1, 0.03, 2.0, 1.4


def setup(dim=2, nx=6, ny=7, pad=3, conductivity=0.0):
    mesh = MeshInfo(
        {
            "dim": dim,
            "nx": nx,
            "ny": ny,
            "x_range": [0.0, 1.0],
            "y_range": [0.0, 0.5],
            "pad_size": pad,
        }
    )
    gas = IdealGas(
        {
            "type": "IdealGas",
            "heat_ratio": GAMMA,
            "gas_constant": R_GAS,
            "dynamic_viscosity": MU,
            "bulk_viscosity": 0.0,
            "thermal_conductivity": conductivity,
        }
    )
    return mesh, gas


def centres(n, lo, h, pad):
    return lo + (np.arange(-pad, n + pad) + 0.5) * h


def state(mesh, pri_fn):
    """Padded conservative state from point values of (rho, u, v, w, p) at the cell centres."""
    pad = mesh.pad
    x = centres(mesh.nx, 0.0, mesh.cell_sizes[0], pad)[:, None, None]
    y = centres(mesh.ny, 0.0, mesh.cell_sizes[1], pad)[None, :, None]
    rho, u, v, w, p = (np.broadcast_to(c, (x.size, y.size, 1)) for c in pri_fn(x, y))
    e = p / (GAMMA - 1) + 0.5 * rho * (u * u + v * v + w * w)
    return core.tensor(np.stack([rho, rho * u, rho * v, rho * w, e]), dtype=core.float64)


def cubic_flow(x, y):
    return 1.0 + 0 * x, y**3 + y, x**2, y, 1.0 + 0 * x


def test_stresses_exact_for_cubic_velocity():
    mesh, gas = setup()
    visc = ViscousFlux(gas, mesh, {"interpolator": "CentralFourthOrderInterpolator"})
    con = state(mesh, cubic_flow)
    dx, dy = mesh.cell_sizes[0], mesh.cell_sizes[1]
    # faces normal to y: y_f = j dy, x at the interior centres
    f = visc.compute_flux(con, 1).asnumpy()
    assert f.shape == (5, 6, 8, 1)
    xc = centres(6, 0.0, dx, 0)[:, None, None]
    yf = (np.arange(8) * dy)[None, :, None]
    tau_yx = MU * (3 * yf**2 + 1 + 2 * xc)  # du/dy + dv/dx
    tau_yz = MU * np.ones_like(tau_yx)  # dw/dy
    np.testing.assert_allclose(f[0], 0.0)
    np.testing.assert_allclose(f[1], tau_yx, rtol=1e-11)
    np.testing.assert_allclose(f[2], 0.0, atol=1e-12)  # div u = 0, dv/dy = 0
    np.testing.assert_allclose(f[3], tau_yz, rtol=1e-11)
    energy = tau_yx * (yf**3 + yf) + 0 * xc + tau_yz * yf
    np.testing.assert_allclose(f[4], energy, rtol=1e-11, atol=1e-13)
    # faces normal to x
    g = visc.compute_flux(con, 0).asnumpy()
    assert g.shape == (5, 7, 7, 1)
    xf = (np.arange(7) * dx)[:, None, None]
    yc = centres(7, 0.0, dy, 0)[None, :, None]
    np.testing.assert_allclose(g[1], 0.0, atol=1e-12)  # du/dx = 0, div u = 0
    np.testing.assert_allclose(g[2], MU * (2 * xf + 3 * yc**2 + 1), rtol=1e-11)
    np.testing.assert_allclose(g[3], 0.0, atol=1e-12)  # dw/dx = 0


def test_heat_conduction_and_bulk_terms():
    mesh, gas = setup(dim=1, nx=10, ny=1, conductivity=K)
    visc = ViscousFlux(gas, mesh)
    # rho = 1, p = R x  ->  T = x; u = x^2 (compressive): tau_xx = (2 - 2/3) mu u' = 4/3 mu 2x
    pad = mesh.pad
    x = centres(10, 0.0, mesh.cell_sizes[0], pad)
    rho, u, p = np.ones_like(x), x**2, R_GAS * (x + 1.0)
    e = p / (GAMMA - 1) + 0.5 * rho * u * u
    con = np.stack([rho, rho * u, 0 * x, 0 * x, e])[:, :, None, None]
    f = visc.compute_flux(core.tensor(con, dtype=core.float64), 0).asnumpy()[:, :, 0, 0]
    xf = np.arange(11) * mesh.cell_sizes[0]
    tau = 4.0 / 3.0 * MU * 2 * xf
    np.testing.assert_allclose(f[1], tau, rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(f[4], tau * xf**2 + K * 1.0, rtol=1e-11)


def test_fourth_order_on_smooth_shear():
    errs = []
    for ny in (16, 32):
        mesh, gas = setup(nx=4, ny=ny)
        visc = ViscousFlux(gas, mesh)
        con = state(mesh, lambda x, y: (1 + 0 * x, np.sin(4 * y) + 0 * x, 0 * x, 0 * x, 1 + 0 * x))
        f = visc.compute_flux(con, 1).asnumpy()
        yf = np.arange(ny + 1) * mesh.cell_sizes[1]
        errs.append(np.max(np.abs(f[1, 0, :, 0] - MU * 4 * np.cos(4 * yf))))
    assert np.log2(errs[0] / errs[1]) > 3.7


def test_bad_config():
    mesh, gas = setup()
    with pytest.raises(ValueError, match=r"'SecondOrder'.*CentralFourthOrderInterpolator"):
        ViscousFlux(gas, mesh, {"interpolator": "SecondOrder"})
    with pytest.raises(ValueError, match=r"unknown key 'stencil'"):
        ViscousFlux(gas, mesh, {"stencil": 4})
    mesh1, _ = setup(pad=1)
    with pytest.raises(ValueError, match="pad_size = 1"):
        ViscousFlux(gas, mesh1)
