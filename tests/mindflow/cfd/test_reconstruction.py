"""Reconstructors and the characteristic projection of mindflow.cfd.space_solver."""

import numpy as np
import pytest

from diffsci import core
from diffsci.mindflow.cfd.material import IdealGas
from diffsci.mindflow.cfd.mesh_info import MeshInfo
from diffsci.mindflow.cfd.space_solver.projection import characteristic_matrices, reconstruct_faces
from diffsci.mindflow.cfd.space_solver.reconstructor import (
    default_reconstruction_variables,
    define_reconstructor,
    reconstructor_names,
)
from diffsci.mindflow.cfd.utils import cal_con_var

NAMES = ("WENO3", "WENO5", "WENO7", "WENO5-Z", "TENO5")
PAD = 4
MATERIAL = IdealGas({"type": "IdealGas", "heat_ratio": 1.4, "specific_gas_constant": 1.0})


def mesh_1d(n, pad=PAD):
    return MeshInfo({"dim": 1, "nx": n, "x_range": [0.0, 1.0], "pad_size": pad})


def padded_sine_averages(n, pad=PAD):
    """Exact cell averages of sin(2 pi x) on a periodic grid with ``pad`` ghosts."""
    h = 1.0 / n
    edges = np.arange(-pad, n + pad + 1) * h
    return (np.cos(2 * np.pi * edges[:-1]) - np.cos(2 * np.pi * edges[1:])) / (2 * np.pi * h)


def as_state(values, dtype=core.float64, channels=1):
    """[channels, n, 1, 1] tensor from a 1D array."""
    arr = np.broadcast_to(np.asarray(values)[None, :, None, None], (channels, len(values), 1, 1))
    return core.tensor(arr.copy(), dtype=dtype)


def sine_face_errors(name, ns, smooth_only):
    errors = []
    for n in ns:
        rec = define_reconstructor(name)(mesh_1d(n))
        var = as_state(padded_sine_averages(n))
        x_faces = np.arange(n + 1) / n
        exact = np.sin(2 * np.pi * x_faces)
        left = rec.reconstruct_from_left(var, 0).asnumpy()[0, :, 0, 0]
        right = rec.reconstruct_from_right(var, 0).asnumpy()[0, :, 0, 0]
        err = np.maximum(abs(left - exact), abs(right - exact))
        if smooth_only:  # away from the critical points x = 1/4, 3/4 of sin(2 pi x)
            keep = np.minimum(abs(x_faces - 0.25), abs(x_faces - 0.75)) > 0.1
            err = err[keep]
        errors.append(err.max())
    errors = np.array(errors)
    return np.log2(errors[:-1] / errors[1:])


@pytest.mark.parametrize(
    ("name", "ns", "smooth_only", "low"),
    [
        ("WENO3", (40, 80, 160), True, 2.8),  # third order in monotone regions
        ("WENO3", (40, 80, 160), False, 1.9),  # second order at the extrema
        ("WENO5", (20, 40, 80, 160), True, 4.8),
        ("WENO5-Z", (20, 40, 80, 160), False, 4.8),  # keeps fifth order at critical points
        ("TENO5", (20, 40, 80, 160), False, 4.8),
        ("WENO7", (20, 40, 80), True, 6.5),
    ],
)
def test_order_of_accuracy_on_smooth_periodic_data(name, ns, smooth_only, low):
    orders = sine_face_errors(name, ns, smooth_only)
    assert orders[-1] >= low, (name, orders)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [core.float32, core.float64])
def test_step_has_no_new_extrema(name, dtype):
    n = 40
    values = np.where(np.arange(n + 2 * PAD) < (n + 2 * PAD) // 2, 1.0, 0.125)
    rec = define_reconstructor(name)(mesh_1d(n))
    var = as_state(values, dtype)
    for faces in (rec.reconstruct_from_left(var, 0), rec.reconstruct_from_right(var, 0)):
        assert faces.dtype == dtype
        face = faces.asnumpy()[0, :, 0, 0]
        overshoot = max(face.max() - 1.0, 0.125 - face.min())
        assert overshoot <= 2e-3 * 0.875, (name, overshoot)


@pytest.mark.parametrize("name", NAMES)
def test_mirrored_data_swaps_left_and_right(name):
    n = 30
    rng = np.random.default_rng(0)
    values = rng.uniform(0.5, 2.0, n + 2 * PAD)
    rec = define_reconstructor(name)(mesh_1d(n))
    var, mirrored = as_state(values), as_state(values[::-1].copy())
    left = rec.reconstruct_from_left(var, 0).asnumpy()[0, :, 0, 0]
    right = rec.reconstruct_from_right(var, 0).asnumpy()[0, :, 0, 0]
    left_m = rec.reconstruct_from_left(mirrored, 0).asnumpy()[0, :, 0, 0]
    right_m = rec.reconstruct_from_right(mirrored, 0).asnumpy()[0, :, 0, 0]
    np.testing.assert_array_equal(left, right_m[::-1])
    np.testing.assert_array_equal(right, left_m[::-1])


def random_state(shape, rng):
    rho = rng.uniform(0.5, 2.0, shape)
    vel = rng.uniform(-1.0, 1.0, (3, *shape))
    p = rng.uniform(0.5, 2.0, shape)
    pri = core.tensor(np.stack([rho, *vel, p]), dtype=core.float64)
    return cal_con_var(pri, MATERIAL)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_characteristic_eigenvectors_are_inverse(axis):
    rng = np.random.default_rng(axis)
    con_l, con_r = random_state((7,), rng), random_state((7,), rng)
    left, right = characteristic_matrices(con_l, con_r, axis, MATERIAL.gamma)

    def dense(m):
        return np.stack(
            [
                np.stack(
                    [
                        np.broadcast_to(
                            np.asarray(e.asnumpy() if hasattr(e, "asnumpy") else e), (7,)
                        )
                        for e in row
                    ]
                )
                for row in m
            ]
        )  # [5, 5, 7]

    lr = np.einsum("ijf,jkf->ikf", dense(left), dense(right))
    np.testing.assert_allclose(lr, np.broadcast_to(np.eye(5)[:, :, None], lr.shape), atol=1e-12)


def mesh_3d(n=(6, 5, 4), pad=3):
    return MeshInfo(
        {
            "dim": 3,
            "nx": n[0],
            "ny": n[1],
            "nz": n[2],
            "x_range": [0, 1],
            "y_range": [0, 1],
            "z_range": [0, 1],
            "pad_size": pad,
        }
    )


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_reconstruct_faces_conservative_is_componentwise_and_shapes(axis):
    mesh = mesh_3d()
    rec = define_reconstructor("WENO5")(mesh)
    con = random_state(tuple(k + 6 for k in mesh.number_of_cells), np.random.default_rng(3))
    left, right = reconstruct_faces(con, axis, mesh, MATERIAL, rec, "conservative")
    expected = [5, *mesh.number_of_cells]
    expected[axis + 1] += 1
    assert tuple(left.shape) == tuple(expected) == tuple(right.shape)
    np.testing.assert_array_equal(left.asnumpy(), rec.reconstruct_from_left(con, axis).asnumpy())
    np.testing.assert_array_equal(right.asnumpy(), rec.reconstruct_from_right(con, axis).asnumpy())
    for variables in ("primitive", "characteristic"):
        lv, rv = reconstruct_faces(con, axis, mesh, MATERIAL, rec, variables)
        assert tuple(lv.shape) == tuple(expected) == tuple(rv.shape)
        assert np.isfinite(lv.asnumpy()).all() and np.isfinite(rv.asnumpy()).all()


@pytest.mark.parametrize("variables", ["primitive", "characteristic"])
def test_projections_keep_a_uniform_state_and_order(variables):
    # a constant state is reproduced exactly; a smooth wave keeps fifth order
    errors = []
    for n in (20, 40, 80):
        mesh = mesh_1d(n, pad=3)
        rec = define_reconstructor("WENO5-Z")(mesh)
        avg = padded_sine_averages(n, pad=3)
        rho = 1.0 + 0.2 * avg
        pri = np.stack([rho, 0.5 + 0 * rho, 0 * rho, 0 * rho, 1.0 + 0 * rho])[:, :, None, None]
        con = cal_con_var(core.tensor(pri, dtype=core.float64), MATERIAL)
        left, _ = reconstruct_faces(con, 0, mesh, MATERIAL, rec, variables)
        exact = 1.0 + 0.2 * np.sin(2 * np.pi * np.arange(n + 1) / n)
        # density is linear in the conservative variables: compare it directly
        errors.append(abs(left.asnumpy()[0, :, 0, 0] - exact).max())
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert orders[-1] > 4.5, orders


def test_characteristic_matches_componentwise_for_a_linear_wave():
    # pure density (entropy) wave: the characteristic fields are linear in the
    # conservative variables with constant coefficients -> same result up to round-off
    n = 24
    mesh = mesh_1d(n, pad=3)
    rec = define_reconstructor("WENO5")(mesh)
    rng = np.random.default_rng(1)
    rho = rng.uniform(1.0, 2.0, n + 6)
    pri = np.stack([rho, 0 * rho, 0 * rho, 0 * rho, 1.0 + 0 * rho])[:, :, None, None]
    con = cal_con_var(core.tensor(pri, dtype=core.float64), MATERIAL)
    lc, rc = reconstruct_faces(con, 0, mesh, MATERIAL, rec, "characteristic")
    lk, rk = reconstruct_faces(con, 0, mesh, MATERIAL, rec, "conservative")
    np.testing.assert_allclose(lc.asnumpy()[0], lk.asnumpy()[0], rtol=1e-10)
    np.testing.assert_allclose(rc.asnumpy()[4], rk.asnumpy()[4], rtol=1e-10)


@pytest.mark.parametrize("name", ["WENO5", "WENO5-Z", "TENO5"])
def test_gradient_of_a_face_value_matches_central_differences(name):
    n = 12
    mesh = mesh_1d(n, pad=3)
    rec = define_reconstructor(name)(mesh)
    rng = np.random.default_rng(2)
    x0 = np.sin(np.linspace(0, 3, n + 6)) + 0.1 * rng.standard_normal(n + 6)

    def face(x):
        return (
            rec.reconstruct_from_left(x, 0)[0, 5, 0, 0]
            + 0.3 * rec.reconstruct_from_right(x, 0)[0, 6, 0, 0]
        )

    x = as_state(x0)
    grad = core.grad(face)(x).asnumpy()[0, :, 0, 0]
    eps = 1e-6
    fd = np.zeros_like(x0)
    for i in range(len(x0)):
        xp, xm = x0.copy(), x0.copy()
        xp[i] += eps
        xm[i] -= eps
        fd[i] = (face(as_state(xp)).asnumpy() - face(as_state(xm)).asnumpy()) / (2 * eps)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


def test_characteristic_gradient_and_jit():
    mesh = mesh_1d(10, pad=3)
    rec = define_reconstructor("WENO5")(mesh)
    con = random_state((16, 1, 1), np.random.default_rng(4))

    def loss(c):
        left, right = reconstruct_faces(c, 0, mesh, MATERIAL, rec, "characteristic")
        return (left * left).sum() + (right * right * 0.5).sum()

    grad = core.grad(loss)(con).asnumpy()
    c0 = con.asnumpy()
    rng = np.random.default_rng(5)
    direction = rng.standard_normal(c0.shape)
    eps = 1e-6
    fd = (
        loss(core.tensor(c0 + eps * direction)).asnumpy()
        - loss(core.tensor(c0 - eps * direction)).asnumpy()
    ) / (2 * eps)
    np.testing.assert_allclose((grad * direction).sum(), fd, rtol=1e-6)
    np.testing.assert_allclose(core.jit(loss)(con).asnumpy(), loss(con).asnumpy(), rtol=1e-12)


def test_registry_and_bad_input():
    assert set(reconstructor_names()) == set(NAMES)
    with pytest.raises(ValueError, match=r"WENO9.*WENO3, WENO5, WENO7, WENO5-Z, TENO5"):
        define_reconstructor("WENO9")
    with pytest.raises(ValueError, match="pad_size >= 4"):
        define_reconstructor("WENO7")(mesh_1d(10, pad=3))
    mesh = mesh_1d(10, pad=3)
    con = random_state((16, 1, 1), np.random.default_rng(6))
    with pytest.raises(ValueError, match="accepted values: characteristic, primitive"):
        reconstruct_faces(con, 0, mesh, MATERIAL, define_reconstructor("WENO5")(mesh), "roe")
    assert default_reconstruction_variables("WENO5") == "characteristic"
    assert default_reconstruction_variables("WENO7") == "characteristic"
    assert default_reconstruction_variables("WENO3") == "conservative"


def mesh_2d(nx, ny, pad=3):
    return MeshInfo(
        {
            "dim": 2, "nx": nx, "ny": ny, "x_range": [0, 1], "y_range": [0, 1],
            "pad_size": pad,
        }
    )  # fmt: skip


@pytest.mark.parametrize("variables", ["characteristic", "primitive", "conservative"])
def test_axes_are_interchangeable(variables):
    # swapping x <-> y (and u <-> v) maps the y-faces of one state onto the x-faces of the other
    n, pad = 8, 3
    rng = np.random.default_rng(7)
    con = random_state((n + 2 * pad, n + 2 * pad, 1), rng)
    swapped = core.tensor(con.asnumpy()[[0, 2, 1, 3, 4]].transpose(0, 2, 1, 3).copy())
    mesh = mesh_2d(n, n, pad)
    rec = define_reconstructor("WENO5")(mesh)
    lx, rx = reconstruct_faces(swapped, 0, mesh, MATERIAL, rec, variables)
    ly, ry = reconstruct_faces(con, 1, mesh, MATERIAL, rec, variables)

    def back(t):
        return t.asnumpy()[[0, 2, 1, 3, 4]].transpose(0, 2, 1, 3)

    np.testing.assert_allclose(back(lx), ly.asnumpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(back(rx), ry.asnumpy(), rtol=1e-12, atol=1e-13)


def test_characteristic_float32():
    mesh = mesh_1d(16, pad=3)
    rec = define_reconstructor("WENO5-Z")(mesh)
    con64 = random_state((22, 1, 1), np.random.default_rng(8))
    con32 = core.tensor(con64.asnumpy().astype(np.float32))
    l32, r32 = reconstruct_faces(con32, 0, mesh, MATERIAL, rec, "characteristic")
    l64, r64 = reconstruct_faces(con64, 0, mesh, MATERIAL, rec, "characteristic")
    assert l32.dtype == core.float32 and r32.dtype == core.float32
    np.testing.assert_allclose(l32.asnumpy(), l64.asnumpy(), rtol=2e-3, atol=2e-4)
    np.testing.assert_allclose(r32.asnumpy(), r64.asnumpy(), rtol=2e-3, atol=2e-4)


def lax_density(variables, n=100, t_end=0.14):
    """Lax's shock tube with WENO5 + HLLC + SSP-RK3 (CFL 0.9), zero-gradient ends."""
    from diffsci.mindflow.cfd.space_solver.riemann_computer import define_riemann_computer
    from diffsci.mindflow.cfd.utils import cal_pri_var

    pad = 3
    mesh = mesh_1d(n, pad)
    rec = define_reconstructor("WENO5")(mesh)
    riemann = define_riemann_computer("HLLC")(MATERIAL)
    x = (np.arange(n) + 0.5) / n
    left, right = (0.445, 0.698, 3.528), (0.5, 0.0, 0.571)
    pri = np.zeros((5, n, 1, 1))
    for k, q in ((0, 0), (1, 1), (4, 2)):
        pri[k, :, 0, 0] = np.where(x < 0.5, left[q], right[q])
    con = cal_con_var(core.tensor(pri), MATERIAL)
    h = 1.0 / n

    def rhs(c):
        padded = core.ops.concat([c[:, :1]] * pad + [c] + [c[:, -1:]] * pad, axis=1)
        face_l, face_r = reconstruct_faces(padded, 0, mesh, MATERIAL, rec, variables)
        flux = riemann.compute_riemann_flux(face_l, face_r, 0)
        return -(flux[:, 1:] - flux[:, :-1]) / h

    t = 0.0
    while t < t_end - 1e-14:
        p = cal_pri_var(con, MATERIAL).asnumpy()
        speed = (abs(p[1]) + np.sqrt(1.4 * p[4] / p[0])).max()
        dt = min(0.9 * h / speed, t_end - t)
        u1 = con + dt * rhs(con)
        u2 = 0.75 * con + 0.25 * (u1 + dt * rhs(u1))
        con = con / 3.0 + 2.0 / 3.0 * (u2 + dt * rhs(u2))
        t += dt
    return con.asnumpy()[0, :, 0, 0]


def test_characteristic_variables_reduce_the_lax_overshoot():
    # exact post-shock plateau of Lax's problem: rho = 1.3046; component-wise WENO5 overshoots
    rho_char = lax_density("characteristic")
    rho_cons = lax_density("conservative")
    assert rho_char.max() - 1.3046 < 0.5 * (rho_cons.max() - 1.3046)
    assert rho_char.max() < 1.3046 + 2e-3


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [core.float32, core.float64])
def test_jit_and_grad_of_the_characteristic_faces_in_2d(name, dtype):
    mesh = mesh_2d(6, 5, pad=4)
    rec = define_reconstructor(name)(mesh)
    con = core.tensor(random_state((14, 13, 1), np.random.default_rng(9)).asnumpy(), dtype=dtype)
    for axis in (0, 1):

        def faces(c, axis=axis):
            return reconstruct_faces(c, axis, mesh, MATERIAL, rec, "characteristic")

        eager, compiled = faces(con), core.jit(faces)(con)
        tol = 1e-5 if dtype == core.float32 else 1e-12
        for a, b in zip(eager, compiled, strict=True):
            assert b.dtype == dtype
            np.testing.assert_allclose(b.asnumpy(), a.asnumpy(), rtol=tol, atol=tol)
        grad = core.jit(core.grad(lambda c, f=faces: (f(c)[0] ** 2).sum()))(con)
        assert np.isfinite(grad.asnumpy()).all()
