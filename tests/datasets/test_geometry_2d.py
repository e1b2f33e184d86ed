"""datasets.geometry: sampling configuration, samplers, Interval and the 2-D shapes.

Checks against independent formulas: areas (pi r^2, the shoelace formula) by Monte Carlo,
boundary samples on the zero set of the sdf with unit normals equal to the sdf's gradient
(central differences), Sobol' and LHS stratification, determinism per seed.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import qmc

from diffsci import core
from diffsci.datasets.geometry import (
    Disk,
    Interval,
    PartSamplingConfig,
    Pentagon,
    Polygon,
    Rectangle,
    SamplingConfig,
    Triangle,
    generate_sampling_config,
    sample,
)
from diffsci.datasets.geometry.samplers import UnitStream, make_rng

from ._geometry_helpers import SAMPLERS, fd_grad

F64 = np.float64
L_SHAPE = [[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]]  # non-convex, area 3, perimeter 8
STAR = [  # a non-convex ten-vertex star
    [0, 3],
    [1, 1],
    [3, 1],
    [1.5, -0.5],
    [2, -3],
    [0, -1.5],
    [-2, -3],
    [-1.5, -0.5],
    [-3, 1],
    [-1, 1],
]


def shoelace(v):
    v = np.asarray(v, dtype=F64)
    x, y = v[:, 0], v[:, 1]
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def far_from(p, corners, dist=1e-4):
    corners = np.asarray(corners, dtype=F64)
    d = np.linalg.norm(p[:, None, :] - corners[None, :, :], axis=-1)
    return np.min(d, axis=1) > dist


def shapes_2d():
    return [
        (
            Rectangle("rect", (-1.0, 0.5), (2.0, 1.5), dtype=F64),
            [[-1, 0.5], [2, 0.5], [2, 1.5], [-1, 1.5]],
        ),
        (Disk("disk", (0.3, -0.2), 0.7, dtype=F64), []),
        (
            Triangle("tri", [[0, 0.1], [0.9, 0.2], [0.5, 0.6]], dtype=F64),
            [[0, 0.1], [0.9, 0.2], [0.5, 0.6]],
        ),
        (Polygon("L", L_SHAPE, dtype=F64), L_SHAPE),
        (
            Pentagon("pent", [[0, 0.1], [0.5, 0.1], [0.9, 0.2], [0.7, 0.6], [0.2, 0.5]], dtype=F64),
            [[0, 0.1], [0.5, 0.1], [0.9, 0.2], [0.7, 0.6], [0.2, 0.5]],
        ),
    ]


SHAPES = shapes_2d()


# ----- sampling configuration -------------------------------------------------------------


def test_generate_sampling_config_keys_and_defaults():
    config = generate_sampling_config(
        {
            "domain": {"random_sampling": True, "size": 100, "sampler": "LHS"},
            "BC": {"size": 20, "with_normal": True},
            "random_merge": True,  # top-level extras are ignored, as in MindFlow's examples
        }
    )
    assert isinstance(config, SamplingConfig)
    assert config.domain.size == 100 and config.domain.sampler == "lhs"
    assert config.bc.with_normal and config.bc.sampler == "uniform" and config.bc.random_sampling
    assert config.ic is None and config.time is None
    grid = generate_sampling_config({"domain": {"random_sampling": False, "size": [4, 3]}})
    assert grid.domain.size == [4, 3]


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"domain": {"random_sampling": True}}, "missing key 'size'"),
        ({"domain": {"size": 10, "sampler": "grid"}}, "unknown sampler 'grid'"),
        ({"domain": {"size": 10, "sample": "lhs"}}, r"unknown key\(s\) \['sample'\]"),
        ({"domian": {"size": 10}}, "no sampling entry"),
        ({"domain": {"size": [10, 10], "random_sampling": True}}, "expected one int"),
        ({"domain": {"size": -1}}, "int >= 0"),
    ],
)
def test_generate_sampling_config_rejects(bad, match):
    with pytest.raises(ValueError, match=match):
        generate_sampling_config(bad)


def test_generate_sampling_config_takes_mindflow_poisson_yaml():
    """MindFlow's poisson/continuous data section, as its YAML has it (BC_type included)."""
    config = generate_sampling_config(
        {
            "domain": {"random_sampling": True, "size": 100, "sampler": "uniform"},
            "BC": {
                "random_sampling": True,
                "size": 50,
                "sampler": "uniform",
                "BC_type": "dirichlet",
            },
        }
    )
    assert config.bc.size == 50 and config.domain.size == 100


def test_sampling_config_types():
    with pytest.raises(ValueError, match="unknown part 'bc'"):
        SamplingConfig({"bc": PartSamplingConfig(10)})
    with pytest.raises(TypeError, match="PartSamplingConfig"):
        SamplingConfig({"BC": {"size": 10}})
    with pytest.raises(TypeError, match="with_normal"):
        PartSamplingConfig(10, with_normal="yes")


# ----- samplers -----------------------------------------------------------------------------


def test_unknown_sampler_names_argument():
    with pytest.raises(ValueError, match="sample_interior: unknown sampler 'random'"):
        Disk("d", (0, 0), 1.0).sample_interior(4, sampler="random")
    with pytest.raises(ValueError, match="sampler"):
        sample(4, 2, "gauss")


def test_sobol_is_a_net():
    """256 scrambled Sobol' points in 2-D form a (0, 8, 2)-net: every 16 x 16 cell of the unit
    square holds exactly one point (also when drawn in pieces)."""
    stream = UnitStream("sobol", make_rng(3))
    u = np.concatenate([stream.draw(100, 2), stream.draw(156, 2)])
    cells = (u * 16).astype(int)
    counts = np.zeros((16, 16), int)
    np.add.at(counts, (cells[:, 0], cells[:, 1]), 1)
    assert np.all(counts == 1)
    # the same points as one draw: a stream continues its sequence
    assert np.array_equal(u, UnitStream("sobol", make_rng(3)).draw(256, 2))


@pytest.mark.parametrize("n", [7, 50, 333])
def test_lhs_stratifies_each_axis(n):
    u = sample(n, 3, "lhs", seed=1)
    for axis in range(3):
        assert np.array_equal(np.sort((u[:, axis] * n).astype(int)), np.arange(n))


def test_quasi_random_beats_uniform_discrepancy():
    d_uniform = qmc.discrepancy(sample(512, 2, "uniform", seed=0))
    for name in ("sobol", "halton", "lhs"):
        assert qmc.discrepancy(sample(512, 2, name, seed=0)) < d_uniform


def test_rectangle_sobol_interior_is_stratified():
    """Sobol' through the rectangle's affine map: 16 x 16 equal cells, one point each."""
    rect = Rectangle("r", (-1, 2), (3, 4), dtype=F64)
    x = rect.sample_interior(256, "sobol", seed=5)
    cells = ((x - rect.coord_min) / rect.length * 16).astype(int)
    assert len(np.unique(cells[:, 0] * 16 + cells[:, 1])) == 256


# ----- interior and boundary samples of every shape ------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    k=st.integers(0, len(SHAPES) - 1),
    n=st.integers(1, 300),
    sampler=st.sampled_from(SAMPLERS),
    seed=st.integers(0, 2**31),
)
def test_samples_inside_and_on_boundary(k, n, sampler, seed):
    geom, corners = SHAPES[k]
    x = geom.sample_interior(n, sampler, seed)
    assert x.shape == (n, 2) and x.dtype == F64
    assert np.all(geom.contains(x))
    assert np.all(geom.sdf(x) <= 1e-12)
    p, normal = geom.sample_boundary(n, sampler, seed)
    assert p.shape == normal.shape == (n, 2)
    assert np.max(np.abs(geom.sdf(p))) < 1e-12
    assert np.allclose(np.linalg.norm(normal, axis=1), 1.0, atol=1e-12)
    smooth = far_from(p, corners) if len(corners) else np.ones(n, bool)
    assert np.allclose(fd_grad(geom.sdf, p[smooth]), normal[smooth], atol=1e-5)


def test_normals_point_outward():
    for geom, _ in SHAPES:
        p, normal = geom.sample_boundary(200, "halton", seed=0)
        assert np.all(geom.sdf(p + 1e-6 * normal) > 0)
        assert np.all(geom.sdf(p - 1e-6 * normal) < 0)


def mc_area(geom, n=200_000, seed=0):
    u = np.random.default_rng(seed).random((n, 2))
    box = geom.coord_max - geom.coord_min
    frac = np.mean(geom.contains(geom.coord_min + u * box))
    return frac * np.prod(box), np.sqrt(frac * (1 - frac) / n) * np.prod(box)


@pytest.mark.parametrize(
    "geom, exact",
    [
        (Disk("d", (1.0, -2.0), 0.8), np.pi * 0.64),
        (Polygon("L", L_SHAPE), shoelace(L_SHAPE)),
        (Polygon("star", STAR), shoelace(STAR)),
        (Triangle("t", [[0, 0], [4, 1], [1, 3]]), 5.5),
        (Rectangle("r", (0, 0), (2, 0.5)), 1.0),
    ],
)
def test_area_by_monte_carlo(geom, exact):
    area, err = mc_area(geom)
    assert abs(area - exact) < 4 * err + 1e-12
    assert geom.measure == pytest.approx(exact, rel=1e-12)


def test_interior_is_uniform():
    """Disk: P(r < R/2) = 1/4; L-shape: each of its three unit squares holds 1/3 of the points;
    triangle: the mean is the centroid."""
    disk = Disk("d", (0, 0), 2.0, dtype=F64)
    x = disk.sample_interior(20_000, "uniform", seed=0)
    frac = np.mean(np.linalg.norm(x, axis=1) < 1.0)
    assert abs(frac - 0.25) < 4 * np.sqrt(0.25 * 0.75 / 20_000)
    x = Polygon("L", L_SHAPE, dtype=F64).sample_interior(30_000, "sobol", seed=0)
    squares = np.floor(x).astype(int)
    for sq in ([0, 0], [1, 0], [0, 1]):
        assert abs(np.mean(np.all(squares == sq, axis=1)) - 1 / 3) < 0.01
    tri = np.array([[0, 0], [4, 1], [1, 3]], F64)
    x = Triangle("t", tri, dtype=F64).sample_interior(20_000, "halton", seed=0)
    assert np.allclose(x.mean(axis=0), tri.mean(axis=0), atol=0.01)


def test_boundary_is_uniform_in_length():
    """L-shape: the share of boundary samples on each edge is the edge's share of the perimeter
    (1/4 for the two long edges); 'unweighted' gives each edge 1/6; disk: angles uniform."""
    poly = Polygon("L", L_SHAPE, dtype=F64)
    p, normal = poly.sample_boundary(4000, "sobol", seed=1)
    assert abs(np.mean(p[:, 1] == 0.0) - 0.25) < 0.01  # bottom edge, length 2 of 8
    assert abs(np.mean(p[:, 0] == 0.0) - 0.25) < 0.01  # left edge
    unweighted = Polygon("L", L_SHAPE, boundary_type="unweighted", dtype=F64)
    p, _ = unweighted.sample_boundary(6000, "sobol", seed=1)
    assert abs(np.mean(p[:, 1] == 0.0) - 1 / 6) < 0.01
    disk = Disk("d", (0, 0), 1.0, dtype=F64)
    p, _ = disk.sample_boundary(4000, "uniform", seed=2)
    angle = np.arctan2(p[:, 1], p[:, 0])
    counts = np.histogram(angle, bins=8, range=(-np.pi, np.pi))[0]
    assert np.all(np.abs(counts - 500) < 4 * np.sqrt(500))
    rect = Rectangle("r", (0, 0), (3, 1), dtype=F64)
    p, normal = rect.sample_boundary(8000, "sobol", seed=0)
    assert abs(np.mean(normal[:, 1] == 1.0) - 3 / 8) < 0.01  # top edge: 3 of 8


def test_interval():
    line = Interval("line", -1.0, 2.0, dtype=F64)
    x = line.sample_interior(100, "lhs", seed=0)
    assert x.shape == (100, 1) and np.all((x >= -1) & (x <= 2))
    p, normal = line.sample_boundary(400, "uniform", seed=0)
    assert set(p[:, 0]) == {-1.0, 2.0}
    assert np.all(normal[:, 0] == np.where(p[:, 0] == -1.0, -1.0, 1.0))
    assert abs(np.mean(p == 2.0) - 0.5) < 0.1
    assert np.allclose(line.sdf([[0.0], [3.0], [-1.0]]), [-1.0, 1.0, 0.0])
    assert line.measure == 3.0 and line.boundary_measure == 2.0


def test_polygon_orientation_and_sdf():
    """A clockwise list is the same polygon; the sdf is the distance to the nearest edge."""
    ccw = Polygon("a", L_SHAPE, dtype=F64)
    cw = Polygon("b", L_SHAPE[::-1], dtype=F64)
    q = np.array([[0.5, 0.5], [1.5, 1.5], [3.0, 0.5], [1.2, 1.1], [-1, -1], [1.5, 0.8]], F64)
    expected = [-0.5, 0.5, 1.0, 0.1, np.sqrt(2), -0.2]  # the notch [1, 2]^2 is outside
    assert np.allclose(ccw.sdf(q), expected) and np.allclose(cw.sdf(q), expected)
    p, normal = cw.sample_boundary(100, "uniform", seed=0)
    assert np.all(ccw.sdf(p + 1e-6 * normal) > 0)


def test_disk_and_rectangle_sdf_exact():
    disk = Disk("d", (1, 1), 2.0)
    assert np.allclose(disk.sdf([[1, 1], [4, 1], [1, -2]]), [-2, 1, 1])
    rect = Rectangle("r", (0, 0), (2, 1))
    q = [[1, 0.5], [3, 2], [1, 3], [0.2, 0.5]]
    assert np.allclose(rect.sdf(q), [-0.5, np.sqrt(2), 2, -0.2])


# ----- determinism ----------------------------------------------------------------------------


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_deterministic_per_seed(sampler):
    for geom, _ in SHAPES:
        a = geom.sample_interior(50, sampler, seed=11)
        assert np.array_equal(a, geom.sample_interior(50, sampler, seed=11))
        assert not np.array_equal(a, geom.sample_interior(50, sampler, seed=12))
        pa, na = geom.sample_boundary(50, sampler, seed=11)
        pb, nb = geom.sample_boundary(50, sampler, seed=11)
        assert np.array_equal(pa, pb) and np.array_equal(na, nb)


def test_core_set_seed_makes_unseeded_calls_repeatable():
    disk = Disk("d", (0, 0), 1.0)
    core.set_seed(7)
    a, b = disk.sample_interior(10), disk.sample_interior(10)
    core.set_seed(7)
    assert np.array_equal(a, disk.sample_interior(10))
    assert np.array_equal(b, disk.sample_interior(10))
    assert not np.array_equal(a, b)


# ----- MindFlow's sampling() ------------------------------------------------------------------


def test_sampling_follows_the_config():
    config = generate_sampling_config(
        {
            "domain": {"random_sampling": True, "size": 300, "sampler": "sobol", "with_sdf": True},
            "BC": {"random_sampling": True, "size": 50, "with_normal": True},
        }
    )
    disk = Disk("disk", (-1.0, 0), 2.0, sampling_config=config)
    points, sdf = disk.sampling("domain", seed=0)
    assert points.shape == (300, 2) and points.dtype == np.float32 and sdf.shape == (300,)
    assert np.all(sdf <= 1e-6) and np.all(disk.contains(points.astype(F64) * (1 - 1e-6)))
    bc, normal = disk.sampling("bc", seed=0)  # case-insensitive as in MindFlow
    assert bc.shape == normal.shape == (50, 2) and normal.dtype == np.float32
    assert disk.columns_dict == {
        "domain": ["disk_domain_points", "disk_domain_sdf"],
        "BC": ["disk_BC_points", "disk_BC_normal"],
    }
    plain = Rectangle(
        "rect",
        (0, 0),
        (1, 1),
        sampling_config=generate_sampling_config({"domain": {"size": 10}, "BC": {"size": 10}}),
    )
    assert plain.sampling("BC").shape == (10, 2)
    assert plain.sampling().shape == (10, 2)


def test_grid_sampling():
    config = generate_sampling_config(
        {
            "domain": {"random_sampling": False, "size": [5, 3]},
            "BC": {"random_sampling": False, "size": 80, "with_normal": True},
        }
    )
    rect = Rectangle("rect", (-3.0, 1.0), (1.0, 2.0), dtype=F64, sampling_config=config)
    grid = rect.sampling("domain")
    xs, ys = np.meshgrid(np.linspace(-3, 1, 5), np.linspace(1, 2, 3))
    assert np.array_equal(grid, np.stack([xs.ravel(), ys.ravel()], -1))
    bc, normal = rect.sampling("BC")
    assert abs(len(bc) - 80) <= 8
    assert np.max(np.abs(rect.sdf(bc))) < 1e-12
    assert np.allclose(fd_grad(rect.sdf, bc), normal, atol=1e-6)
    disk = Disk(
        "disk",
        (0, 0),
        1.0,
        dtype=F64,
        sampling_config=generate_sampling_config(
            {
                "domain": {"random_sampling": False, "size": [4, 8]},
                "BC": {"random_sampling": False, "size": 12, "with_normal": True},
            }
        ),
    )
    grid = disk.sampling("domain")
    assert grid.shape == (32, 2) and len(np.unique(grid.round(12), axis=0)) == 32
    assert np.all(disk.contains(grid))
    bc, normal = disk.sampling("BC")
    assert np.allclose(bc, normal) and np.allclose(
        np.diff(np.unwrap(np.arctan2(bc[:, 1], bc[:, 0]))), np.pi / 6
    )
    line = Interval(
        "l",
        0.0,
        1.0,
        dtype=F64,
        sampling_config=generate_sampling_config(
            {"domain": {"random_sampling": False, "size": 11}}
        ),
    )
    assert np.allclose(line.sampling("domain")[:, 0], np.linspace(0, 1, 11))
    tri = Triangle("t", [[0, 0], [1, 0], [0, 1]], sampling_config=config)
    with pytest.raises(ValueError, match="grid sampling"):
        tri.sampling("domain")


def test_sampling_errors_name_what_is_missing():
    rect = Rectangle("rect", (0, 0), (1, 1))
    with pytest.raises(ValueError, match="'rect' has no sampling_config"):
        rect.sampling("domain")
    rect.set_sampling_config(generate_sampling_config({"domain": {"size": 4}}))
    with pytest.raises(ValueError, match="no 'BC' entry"):
        rect.sampling("BC")
    with pytest.raises(ValueError, match="GeometryWithTime"):
        rect.sampling("IC")
    with pytest.raises(ValueError, match="geom_type must be one of"):
        rect.sampling("boundary")
    with pytest.raises(ValueError, match=r"expected points of shape \(N, 2\)"):
        rect.contains(np.zeros((4, 3)))


# ----- bad shapes -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: Rectangle("r", (1.0, 0.0), (0.0, 1.0)), "'r'.*inverted bounds"),
        (lambda: Rectangle("r", (0.0, 0.0), (1.0, 0.0)), "inverted or empty"),
        (lambda: Interval("i", 2.0, -1.0), "'i'.*inverted bounds"),
        (lambda: Rectangle("r", (0.0,), (1.0, 1.0)), "coord_min must have 2 coordinate"),
        (lambda: Disk("d", (0, 0), -1.0), "radius must be > 0"),
        (lambda: Disk("d", (0, 0, 0), 1.0), "center must be 2 numbers"),
        (lambda: Polygon("bow", [[0, 0], [1, 1], [1, 0], [0, 1]]), "'bow' is not simple: edge 0"),
        (lambda: Polygon("p", [[0, 0], [2, 0], [2, 2], [1, -1], [0, 2]]), "is not simple"),
        (lambda: Polygon("spike", [[0, 0], [2, 0], [1, 0], [1, 1]]), "not simple"),
        (lambda: Polygon("p", [[0, 0], [1, 0], [1, 0], [0, 1]]), "coincide"),
        (lambda: Polygon("p", [[0, 0], [1, 1]]), r"shape \(V, 2\) with V >= 3"),
        (lambda: Triangle("t", [[0, 0], [1, 1], [2, 2]]), "not simple: edges 0 and 2 overlap"),
        (lambda: Triangle("t", [[0, 0], [1, 1], [2, 2], [0, 1]]), r"shape \(3, 2\)"),
        (lambda: Polygon("p", L_SHAPE, boundary_type="equal"), "boundary_type"),
    ],
)
def test_bad_shapes(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_dtype_and_config_type():
    with pytest.raises(TypeError, match="dtype"):
        Disk("d", (0, 0), 1.0, dtype=np.complex64)
    with pytest.raises(TypeError, match="SamplingConfig"):
        Disk("d", (0, 0), 1.0, sampling_config={"domain": {"size": 3}})
