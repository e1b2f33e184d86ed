"""TimeDomain and GeometryWithTime (datasets/geometry/time_domain.py): MindFlow's sampling of
domain / BC / IC, the space-time product's contains and exact sdf, normals, bad input."""

import numpy as np
import pytest

from diffsci import core
from diffsci.datasets.geometry import (
    Box,
    Cylinder,
    Disk,
    GeometryWithTime,
    Interval,
    Rectangle,
    TimeDomain,
    generate_sampling_config,
)


def rect_t(config=None):
    rect = Rectangle("rect", [-1.0, -0.5], [1.0, 0.5], dtype=np.float64)
    geom = GeometryWithTime(rect, TimeDomain("time", 0.5, 2.0))
    if config is not None:
        geom.set_sampling_config(generate_sampling_config(config))
    return geom


def test_time_domain():
    time = TimeDomain(
        "time", 0.0, 2.0, sampling_config=generate_sampling_config({"domain": {"size": 100}})
    )
    t = time.sampling("domain", seed=0)
    assert t.shape == (100, 1) and t.dtype == np.float32
    assert (t >= 0).all() and (t <= 2).all()
    assert (time.start, time.end) == (0.0, 2.0)
    with pytest.raises(ValueError, match="inverted"):
        TimeDomain("time", 1.0, 0.0)


def test_names_dims_and_columns():
    geom = rect_t(
        {
            "domain": {"size": 200},
            "BC": {"size": 100, "with_normal": True},
            "IC": {"size": 64},
            "time": {"size": 200},
        }
    )
    assert geom.name == "time_rect" and geom.dim == 3
    np.testing.assert_allclose(geom.coord_min, [-1.0, -0.5, 0.5])
    domain = geom.sampling("domain", seed=0)
    assert domain.shape == (200, 3) and domain.dtype == np.float64
    assert geom.contains(domain).all()
    bc, normal = geom.sampling("BC", seed=0)
    # random merge: 100 boundary points padded to the 200 times
    assert bc.shape == (200, 3) and normal.shape == (200, 2)
    ic = geom.sampling("IC", seed=0)
    assert ic.shape == (64, 3) and np.all(ic[:, 2] == 0.5)
    assert geom.columns_dict == {
        "domain": ["time_rect_domain_points"],
        "BC": ["time_rect_BC_points", "time_rect_BC_normal"],
        "IC": ["time_rect_IC_points"],
    }


def test_bc_points_and_normals_are_the_space_boundarys():
    geom = rect_t({"BC": {"size": 300, "with_normal": True}, "time": {"size": 100}})
    bc, normal = geom.sampling("BC", seed=1)
    x, t = bc[:, :2], bc[:, 2]
    np.testing.assert_allclose(geom.geom.sdf(x), 0.0, atol=1e-12)
    assert (t >= 0.5).all() and (t <= 2.0).all()
    # the rectangle's outward normal at each point: +-e_x on x = +-1, +-e_y on y = +-1/2
    expect = np.where(
        np.isclose(np.abs(x[:, :1]), 1.0),
        np.concatenate([np.sign(x[:, :1]), 0 * x[:, :1]], 1),
        np.concatenate([0 * x[:, :1], np.sign(x[:, 1:])], 1),
    )
    np.testing.assert_array_equal(normal, expect)
    # every boundary point appears (the shorter time set was padded, not the points dropped)
    space = geom.geom.sampling("BC", seed=geom_space_seed(1))[0]
    assert {tuple(r) for r in space} <= {tuple(r) for r in x}


def geom_space_seed(seed):
    # GeometryWithTime.sampling spawns (space, time, merge) generators from the seed
    from diffsci.datasets.geometry.samplers import make_rng

    return make_rng(seed).spawn(3)[0]


def test_random_merge_pads_the_shorter_set():
    geom = rect_t({"domain": {"size": 50}, "time": {"size": 80}})
    domain = geom.sampling("domain", seed=2)
    assert domain.shape == (80, 3)
    space = geom.geom.sampling("domain", seed=geom_space_seed(2))
    # rows 0..49 pair the 50 space points in order; the 30 extra rows repeat some of them
    np.testing.assert_array_equal(domain[:50, :2], space)
    assert {tuple(r) for r in domain[50:, :2]} <= {tuple(r) for r in space}


def test_product_when_time_is_a_grid():
    geom = rect_t(
        {
            "domain": {"size": [4, 5], "random_sampling": False},
            "time": {"size": 3, "random_sampling": False},
            "IC": {"size": [2, 2], "random_sampling": False},
        }
    )
    domain = geom.sampling("domain")
    assert domain.shape == (60, 3)
    assert len({tuple(r) for r in domain}) == 60
    np.testing.assert_allclose(np.unique(domain[:, 2]), [0.5, 1.25, 2.0])
    # space-major: each space point with the 3 times in a row
    np.testing.assert_array_equal(domain[:3, :2], np.repeat(domain[:1, :2], 3, axis=0))
    ic = geom.sampling("IC")
    assert ic.shape == (4, 3) and np.all(ic[:, 2] == 0.5)


def test_sdf_is_the_exact_box_distance():
    """Rectangle x [t0, t1] is a 3-D box: the product sdf must equal the box's exactly."""
    geom = rect_t()
    box = Box("box", 3, [-1.0, -0.5, 0.5], [1.0, 0.5, 2.0])
    q = np.random.default_rng(0).normal(scale=1.5, size=(2000, 3)) + [0, 0, 1.2]
    np.testing.assert_allclose(geom.sdf(q), box.sdf(q), atol=1e-12)
    np.testing.assert_array_equal(geom.contains(q), box.contains(q))
    assert geom.measure == pytest.approx(2.0 * 1.0 * 1.5)


def test_disk_times_time_sdf_against_cylinder():
    """Disk x [t0, t1] is a cylinder along the time axis: compare with Cylinder's exact sdf."""
    disk = Disk("disk", [0.3, -0.2], 0.8, dtype=np.float64)
    geom = GeometryWithTime(disk, TimeDomain("time", 0.0, 1.5))
    cyl = Cylinder("cyl", [0.3, -0.2], 0.8, 0.0, 1.5, 2)
    q = np.random.default_rng(1).normal(size=(2000, 3))
    np.testing.assert_allclose(geom.sdf(q), cyl.sdf(q), atol=1e-12)


def test_explicit_sampling_and_normals():
    disk = Disk("disk", [0.0, 0.0], 1.0, dtype=np.float64)
    geom = GeometryWithTime(disk, TimeDomain("time", 0.0, 1.0))
    x = geom.sample_interior(500, "sobol", seed=0)
    assert x.shape == (500, 3) and geom.contains(x).all()
    p, n = geom.sample_boundary(500, "halton", seed=0)
    assert p.shape == n.shape == (500, 3)
    np.testing.assert_allclose(geom.sdf(p), 0.0, atol=1e-12)
    np.testing.assert_allclose(n[:, :2], p[:, :2], atol=1e-12)  # unit circle: n = x
    np.testing.assert_array_equal(n[:, 2], 0.0)
    ic = geom.sample_initial(100, seed=0)
    assert np.all(ic[:, 2] == 0.0) and geom.contains(ic).all()
    np.testing.assert_array_equal(x, geom.sample_interior(500, "sobol", seed=0))
    assert not np.array_equal(x, geom.sample_interior(500, "sobol", seed=1))


def test_seed_none_follows_core_set_seed():
    geom = rect_t({"domain": {"size": 20}, "time": {"size": 20}})
    core.set_seed(11)
    a = geom.sampling("domain")
    core.set_seed(11)
    np.testing.assert_array_equal(a, geom.sampling("domain"))


def test_config_inherited_from_the_parts():
    rect = Rectangle(
        "rect",
        [0, 0],
        [1, 1],
        sampling_config=generate_sampling_config({"domain": {"size": 30}, "BC": {"size": 10}}),
    )
    time = TimeDomain("t", 0, 1, sampling_config=generate_sampling_config({"domain": {"size": 30}}))
    geom = GeometryWithTime(rect, time)
    assert geom.sampling("domain", seed=0).shape == (30, 3)
    assert geom.sampling("IC", seed=0).shape == (30, 3)
    assert geom.sampling("BC", seed=0).shape == (30, 3)


def test_bad_input():
    with pytest.raises(ValueError, match="no 'time' entry"):
        rect_t({"domain": {"size": 10}})
    with pytest.raises(TypeError, match="TimeDomain"):
        GeometryWithTime(Rectangle("r", [0, 0], [1, 1]), Rectangle("t", [0, 0], [1, 1]))
    geom = rect_t({"domain": {"size": 10}, "time": {"size": 10}})
    with pytest.raises(ValueError, match="no 'IC' entry"):
        geom.sampling("IC")
    with pytest.raises(ValueError, match="geom_type must be one of"):
        geom.sampling("interior")
    with pytest.raises(ValueError, match="no sampling_config"):
        rect_t().sampling("domain")
    with pytest.raises(ValueError, match=r"shape \(N, 3\)"):
        geom.contains(np.zeros((4, 2)))


@pytest.mark.parametrize("sampler", ["sobol", "halton", "lhs", "uniform"])
def test_space_and_time_are_not_correlated(sampler):
    """Space and time come from two streams; two quasi-random streams drawn side by side run in
    lockstep (Sobol' gave corr(x, t) = -0.95 and a PINN trained on those points stalled), so
    the pairing must look independent for every sampler, boundary points included."""
    geom = GeometryWithTime(Interval("x", -1.0, 1.0), TimeDomain("time", 0.0, 1.0))
    pts = geom.sample_interior(2048, sampler, seed=3)
    assert abs(np.corrcoef(pts[:, 0], pts[:, 1])[0, 1]) < 0.1
    bc = geom.sample_boundary(1024, sampler, seed=3)
    bc = bc[0] if isinstance(bc, tuple) else bc
    assert abs(np.corrcoef(bc[:, 0], bc[:, 1])[0, 1]) < 0.1  # x = -1 or 1
    # each marginal keeps its stratification: the time histogram is flat to within a few points
    counts = np.histogram(pts[:, 1], bins=16, range=(0, 1))[0]
    assert counts.max() - counts.min() <= (8 if sampler in ("sobol", "halton", "lhs") else 80)
