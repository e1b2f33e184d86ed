"""RAR and RAD (datasets/geometry/adaptive.py): exact counts, points inside the geometry,
concentration where the residual is large (against closed-form shares), determinism, errors."""

import numpy as np
import pytest

from diffsci import core
from diffsci.datasets.geometry import Cuboid, GeometryWithTime, Rectangle, TimeDomain, rad, rar
from diffsci.datasets.geometry.adaptive import evaluate_residual, rad_probabilities

X0 = np.array([0.7, 0.3])


def square():
    return Rectangle("square", [0.0, 0.0], [1.0, 1.0], dtype=np.float64)


def bump(x):
    """A residual concentrated near X0: exp(-|x - X0|^2 / 0.02^2), shape [n, 1]."""
    x = np.asarray(x)
    return np.exp(-np.sum((x - X0) ** 2, axis=1, keepdims=True) / 0.02**2)


def spot(x, radius=0.1):
    """1 inside the disk of ``radius`` about X0, 0 outside, shape [n]."""
    return (np.linalg.norm(np.asarray(x) - X0, axis=1) < radius).astype(np.float64)


def test_rar_returns_the_largest_residuals():
    geom = square()
    points, residual = rar(geom, bump, 20_000, 50, seed=3, return_residual=True)
    assert points.shape == (50, 2) and geom.contains(points).all()
    # exactly the top 50 of the candidates (the same seed draws the same candidates)
    candidates = geom.sample_interior(20_000, seed=3)
    r = bump(candidates)[:, 0]
    top = np.sort(r)[::-1][:50]
    np.testing.assert_allclose(residual, top)
    np.testing.assert_allclose(np.abs(bump(points)[:, 0]), top)
    # ~20000 * pi * 0.05^2 = 157 candidates lie within 0.05 of X0, so all 50 do
    assert np.linalg.norm(points - X0, axis=1).max() < 0.05


def test_rar_ties_keep_the_candidates_order():
    geom = square()

    def steps(x):  # three levels: many ties
        return np.floor(3 * x[:, 0])

    points = rar(geom, steps, 300, 120, seed=9)
    candidates = geom.sample_interior(300, seed=9)
    order = np.argsort(-steps(candidates), kind="stable")[:120]
    np.testing.assert_array_equal(points, candidates[order])


def test_rar_counts_and_edge_cases():
    geom = Cuboid("cube", [0, 0, 0], [1, 2, 3])
    points = rar(geom, lambda x: x[:, 0], 100, 100, seed=0)
    assert points.shape == (100, 3) and points.dtype == np.float32
    assert rar(geom, lambda x: x[:, 0], 100, 0, seed=0).shape == (0, 3)
    with pytest.raises(ValueError, match=r"n_add must lie in \[0, n_candidates=10\]"):
        rar(geom, lambda x: x[:, 0], 10, 11)


def test_rad_share_near_the_spot_matches_the_density():
    """With r = 1 on a disk of area fraction a and 0 elsewhere, p ~ r^k/mean + c gives the disk
    the probability a (1/a + c) / (a (1/a + c) + (1 - a) c) = (1 + a c) / (1 + c)."""
    geom = square()
    a = np.pi * 0.1**2
    n = 2000
    for k, c in ((1.0, 1.0), (2.0, 0.5), (1.0, 4.0)):
        points = rad(geom, spot, n, k=k, c=c, n_candidates=20_000, seed=1, replace=True)
        assert points.shape == (n, 2) and geom.contains(points).all()
        share = (np.linalg.norm(points - X0, axis=1) < 0.1).mean()
        expect = (1 + a * c) / (1 + c)
        assert abs(share - expect) < 4 * np.sqrt(expect * (1 - expect) / n), (k, c, share)
    # c = 0: only the spot; a zero residual everywhere: uniform
    points = rad(geom, spot, 500, k=1.0, c=0.0, n_candidates=20_000, seed=2)
    assert (np.linalg.norm(points - X0, axis=1) < 0.1).all()
    points = rad(geom, lambda x: np.zeros(len(x)), 2000, n_candidates=20_000, seed=2)
    share = (np.linalg.norm(points - X0, axis=1) < 0.1).mean()
    assert abs(share - a) < 4 * np.sqrt(a * (1 - a) / 2000)


def test_rad_without_replacement_concentrates_and_never_repeats():
    geom = square()
    points = rad(geom, bump, 200, k=1.0, c=1.0, n_candidates=200_000, seed=4)
    assert len({tuple(p) for p in points}) == 200
    near = (np.linalg.norm(points - X0, axis=1) < 0.05).mean()
    # with c = 1 the bump's share of the density is 1/2 (99.8% of it within 0.05 = 2.5 of its
    # widths); the disk holds 0.8% of the area, so about 0.5 of the points (sd 0.035). With
    # 1570 candidates in the disk, drawing without replacement depletes it only slightly.
    assert 0.38 < near < 0.6


def test_rad_probabilities():
    r = np.array([0.0, 1.0, 3.0])
    p = rad_probabilities(r, k=2, c=1)
    w = r**2 / np.mean(r**2) + 1
    np.testing.assert_allclose(p, w / w.sum())
    np.testing.assert_allclose(rad_probabilities(np.zeros(4)), 0.25)
    with pytest.raises(ValueError, match="k and c must be >= 0"):
        rad_probabilities(r, k=-1)


def test_deterministic_per_seed_and_core_seed():
    geom = square()
    a = rad(geom, bump, 100, seed=5)
    np.testing.assert_array_equal(a, rad(geom, bump, 100, seed=5))
    assert not np.array_equal(a, rad(geom, bump, 100, seed=6))
    np.testing.assert_array_equal(
        rar(geom, bump, 500, 20, seed=5), rar(geom, bump, 500, 20, seed=5)
    )
    core.set_seed(3)
    b = rad(geom, bump, 100)
    core.set_seed(3)
    np.testing.assert_array_equal(b, rad(geom, bump, 100))


def test_residual_inputs_and_outputs():
    geom = square()
    seen = []

    def tensor_residual(x):
        seen.append(type(x))
        return core.ops.sin(x[:, 0:1] * 3.0)  # core.Tensor [m, 1]

    points = rar(geom, tensor_residual, 300, 10, seed=0, tensor_input=True, batch_size=128)
    assert seen == [core.Tensor] * 3  # 128 + 128 + 44
    assert points.shape == (10, 2)
    # a system of two equations: |r1| + |r2|
    pts = np.array([[0.1, 0.2], [0.5, 0.5]])
    r = evaluate_residual(lambda x: np.stack([x[:, 0], -x[:, 1]], 1), pts)
    np.testing.assert_allclose(r, [0.3, 1.0])
    with pytest.raises(ValueError, match=r"returned shape \(3,\) for 2 points"):
        evaluate_residual(lambda x: np.zeros(3), pts)
    with pytest.raises(ValueError, match="at point 1"):
        evaluate_residual(lambda x: np.array([0.0, np.nan]), pts)


def test_space_time_geometry():
    geom = GeometryWithTime(square(), TimeDomain("time", 0.0, 1.0))
    points = rad(geom, lambda x: x[:, 2] ** 4, 300, k=1, c=0.1, seed=0)
    assert points.shape == (300, 3) and geom.contains(points).all()
    assert points[:, 2].mean() > 0.7  # late times have the large residual


def test_rad_errors():
    geom = square()
    with pytest.raises(ValueError, match="without replacement"):
        rad(geom, bump, 50, n_candidates=10)
    with pytest.raises(ValueError, match="non-zero probability"):
        rad(geom, lambda x: (x[:, 0] > 0.95).astype(float), 50, c=0.0, n_candidates=100, seed=0)
    with pytest.raises(ValueError, match="n_candidates must be a positive"):
        rad(geom, bump, 0, n_candidates=0)
