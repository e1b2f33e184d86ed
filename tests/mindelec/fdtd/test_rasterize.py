"""Rasterising shapes onto Yee positions (areas, staggering, mixing rules) and the design maps
(elu, cone filter, tanh projection): values from their definitions, gradients against central
differences."""

import math

import numpy as np
import pytest

from diffsci import core
from diffsci.core.testing import gradcheck
from diffsci.datasets.geometry import Cylinder, Disk, Rectangle
from diffsci.mindelec.fdtd.grid import Grid
from diffsci.mindelec.fdtd.rasterize import (
    average,
    density_filter,
    design_permittivity,
    elu,
    fill_fraction,
    inside_mask,
    paint,
    rasterize,
    sample_points,
    tanh_projection,
)


class _Grid:
    """Only what rasterize reads from a Grid."""

    def __init__(self, shape, spacing):
        self.shape, self.spacing = tuple(shape), (spacing,) * len(shape)


def test_disc_area_within_subsampling_error():
    n, d, r = 48, 1.0 / 48, 0.31
    grid = _Grid((n, n), d)
    centres = np.random.default_rng(0).uniform(0.45, 0.55, (8, 2))
    mean_err = {}
    for s in (2, 16):
        errs = []
        for c in centres:
            f = fill_fraction(Disk("d", tuple(c), r), grid, subsamples=s)
            assert f.min() >= 0.0 and f.max() <= 1.0
            errs.append(abs(f.sum() * d * d - math.pi * r * r))
        # midpoint rule: at most the sub-cells of side d / s that the circle (length L) crosses,
        # about 2 L s / d of them, each of area (d / s)^2
        assert max(errs) < 2 * (2 * math.pi * r) * d / s
        mean_err[s] = np.mean(errs)
    # in practice the errors cancel around the circle: measured 3.5e-4 (s = 2), 9.3e-6 (s = 16)
    assert mean_err[16] < mean_err[2] / 10
    assert mean_err[16] < 1e-4 * math.pi * r * r


def test_boundary_cells_only_are_fractional():
    grid = _Grid((40, 40), 0.025)
    disk = Disk("d", (0.5, 0.5), 0.3)
    f = fill_fraction(disk, grid, subsamples=8)
    pts = sample_points(grid).reshape(-1, 2)
    dist = np.linalg.norm(pts - 0.5, axis=1).reshape(40, 40) - 0.3
    half_diag = 0.5 * math.sqrt(2) * 0.025
    assert np.all(f[dist < -half_diag] == 1.0) and np.all(f[dist > half_diag] == 0.0)
    assert np.array_equal(inside_mask(disk, grid), dist <= 0)


def test_staggered_components_and_exact_half_plane():
    """Half plane x < 3.25 cells, s = 4: every fraction is a whole number of quarters."""
    grid = _Grid((8, 3), 1.0)
    slab = Rectangle("slab", (-10.0, -10.0), (3.25, 10.0))
    ez = fill_fraction(slab, grid, "ez", subsamples=4)  # x positions i
    hy = fill_fraction(slab, grid, "hy", subsamples=4)  # x positions i + 1/2
    assert np.allclose(ez[:, 1], [1, 1, 1, 0.75, 0, 0, 0, 0])
    assert np.allclose(hy[:, 1], [1, 1, 1, 0.25, 0, 0, 0, 0])
    # explicit layout gives the same as the component name
    same = fill_fraction(slab, None, shape=(8, 3), spacing=1.0, offset=(0.5, 0.0), subsamples=4)
    assert np.array_equal(same, hy)


def test_cylinder_volume_3d():
    n, d = 20, 0.05
    cyl = Cylinder("c", centre=[0.5, 0.5], radius=0.3, h_min=0.2, h_max=0.8, h_axis=2)
    f = fill_fraction(cyl, _Grid((n, n, n), d), subsamples=4)
    vol = math.pi * 0.3**2 * 0.6
    assert abs(f.sum() * d**3 - vol) < 2 * (2 * math.pi * 0.3 * 0.6) * d / 4
    with pytest.raises(ValueError, match="3-D but the grid is 2-D"):
        fill_fraction(cyl, _Grid((4, 4), 0.1))


def test_mixing_rules_and_paint():
    assert np.allclose(average(np.array([0.5]), 4.0, 1.0).numpy(), 2.5)
    assert np.allclose(average(np.array([0.5]), 4.0, 1.0, "harmonic").numpy(), 1.6)
    grid = _Grid((10, 10), 0.1)
    eps = rasterize(Rectangle("r", (0.0, 0.0), (0.5, 1.0)), grid, 4.0, 1.0, subsamples=2)
    assert np.allclose(eps.numpy()[:5], 4.0) and np.allclose(eps.numpy()[5:], 1.0)
    eps = paint(eps, Rectangle("top", (0.0, 0.8), (1.0, 1.0)), 9.0, grid, mode="harmonic")
    assert np.allclose(eps.numpy()[:, 8:], 9.0) and np.allclose(eps.numpy()[:5, :8], 4.0)
    with pytest.raises(ValueError, match=r"material map \(3, 3\) is not the grid \(10, 10\)"):
        paint(np.ones((3, 3)), Disk("d", (0, 0), 1.0), 2.0, grid)
    with pytest.raises(ValueError, match="component"):
        fill_fraction(Disk("d", (0, 0), 1.0), grid, "ew")


def test_design_map_values():
    rho = core.tensor([-2.0, -0.1, 0.0, 0.7], dtype=core.float64)
    want = 1.0 + np.where(rho.numpy() > 0, rho.numpy(), 1e-2 * np.expm1(rho.numpy()))
    assert np.allclose(design_permittivity(rho).numpy(), want, rtol=1e-15)
    assert np.allclose(elu(core.tensor([-1e4, 2.0]), 1.0).numpy(), [-1.0, 2.0])
    # projection: 0 -> 0, 1 -> 1, eta -> tanh(beta eta) / (tanh(beta eta) + tanh(beta(1-eta)))
    p = tanh_projection(core.tensor([0.0, 0.3, 1.0], dtype=core.float64), 8.0, 0.3).numpy()
    a, b = math.tanh(2.4), math.tanh(5.6)
    assert np.allclose(p, [0.0, a / (a + b), 1.0], rtol=1e-14, atol=1e-15)


def test_cone_filter_definition():
    rng = np.random.default_rng(1)
    rho = rng.uniform(size=(7, 6))
    r = 2.5
    out = density_filter(core.tensor(rho), r).numpy()
    ii, jj = np.meshgrid(np.arange(7), np.arange(6), indexing="ij")
    ref = np.empty_like(rho)
    for i in range(7):
        for j in range(6):
            w = np.maximum(0.0, r - np.hypot(ii - i, jj - j))
            ref[i, j] = (w * rho).sum() / w.sum()
    assert np.allclose(out, ref, rtol=1e-13)
    assert np.allclose(density_filter(core.ones((5, 4, 3), dtype=core.float64), 2.0).numpy(), 1)
    assert np.allclose(density_filter(core.tensor(rho), 1.0).numpy(), rho)  # r <= 1: identity


def test_design_chain_gradient_matches_fd():
    rng = np.random.default_rng(2)
    rho = core.tensor(rng.uniform(0.1, 0.9, size=(6, 5)), dtype=core.float64)
    target = core.tensor(rng.uniform(1.0, 3.0, size=(6, 5)), dtype=core.float64)

    def loss(rho):
        eps = design_permittivity(3.0 * tanh_projection(density_filter(rho, 2.2), 4.0) - 0.5)
        return ((eps - target) ** 2).sum()

    assert gradcheck(loss, (rho,), rtol=1e-6, atol=1e-8)
    g = core.grad(loss)(rho).numpy()
    h, i = 1e-6, (2, 3)
    e = np.zeros((6, 5))
    e[i] = h
    fd = float(loss(rho + core.tensor(e)).numpy()) - float(loss(rho - core.tensor(e)).numpy())
    assert g[i] == pytest.approx(fd / (2 * h), rel=1e-6)
    assert gradcheck(lambda x: elu(x, 1e-2), (core.tensor([-1.3, -0.2, 0.4], dtype=core.float64),))


@pytest.mark.parametrize("component", ["ex", "ey", "ez", "hx", "hy", "hz"])
def test_positions_follow_the_yee_grid(component):
    grid = Grid((5, 4, 3), (0.1, 0.2, 0.3), dtype="float64")
    ref = np.stack(np.meshgrid(*grid.positions(component), indexing="ij"), axis=-1)
    assert np.allclose(sample_points(grid, component), ref, rtol=0, atol=1e-15)
