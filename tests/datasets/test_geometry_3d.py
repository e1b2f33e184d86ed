"""3-D and n-D shapes (datasets/geometry/shapes_3d.py, shapes_nd.py): sampling, normals,
contains and sdf against independent formulas, MindFlow's sampling config, bad input."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.spatial import cKDTree

from diffsci.datasets.geometry import (
    Cone,
    Cuboid,
    Cylinder,
    HyperCube,
    Tetrahedron,
    generate_sampling_config,
)

from ._geometry_helpers import SAMPLERS, fd_grad

TETRA = [[0.0, 0.0, 0.0], [1.0, 0.1, 0.0], [0.2, 1.3, 0.1], [0.3, 0.2, 0.9]]


def shapes():
    return [
        Cuboid("cuboid", [-1.0, 0.0, 0.5], [1.0, 2.0, 1.0], dtype=np.float64),
        Cylinder("cylinder", [0.5, -1.0], 0.7, -1.0, 1.5, 1, dtype=np.float64),
        Cone("cone", [0.2, 0.3], 0.8, 0.0, 1.5, 0, dtype=np.float64),
        Tetrahedron("tetra", TETRA, dtype=np.float64),
        HyperCube("cube4", 4, [0.0, -1.0, 0.0, 0.0], [1.0, 1.0, 0.5, 2.0], dtype=np.float64),
    ]


@pytest.mark.parametrize("sampler", SAMPLERS)
@pytest.mark.parametrize("geom", shapes(), ids=lambda g: g.name)
def test_interior_and_boundary_samples(geom, sampler):
    x = geom.sample_interior(2000, sampler=sampler, seed=1)
    assert x.shape == (2000, geom.dim) and x.dtype == np.float64
    assert geom.contains(x).all()
    assert (geom.sdf(x) <= 0).all()
    p, n = geom.sample_boundary(2000, sampler=sampler, seed=2)
    assert p.shape == n.shape == (2000, geom.dim)
    np.testing.assert_allclose(geom.sdf(p), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0, atol=1e-12)
    # For a convex shape every outward normal n at p satisfies: p + d n has distance exactly d
    # and the sdf's gradient there is n (the nearest point of p + d n is p), edges included.
    d = 1e-3
    np.testing.assert_allclose(geom.sdf(p + d * n), d, atol=1e-10)
    np.testing.assert_allclose(fd_grad(geom.sdf, p + d * n, h=1e-6), n, atol=1e-6)


@pytest.mark.parametrize("geom", shapes(), ids=lambda g: g.name)
def test_volume_by_monte_carlo(geom):
    rng = np.random.default_rng(0)
    lo, hi = geom.coord_min, geom.coord_max
    box = float(np.prod(hi - lo))
    m = 200_000
    frac = geom.contains(lo + rng.random((m, geom.dim)) * (hi - lo)).mean()
    sigma = box * np.sqrt(frac * (1 - frac) / m)
    assert abs(frac * box - geom.measure) < 4 * sigma + 1e-12


def test_closed_form_measures():
    r, h = 0.8, 1.5
    cone = Cone("c", [0, 0], r, 0.0, h, 2)
    assert cone.measure == pytest.approx(np.pi * r**2 * h / 3)
    assert cone.boundary_measure == pytest.approx(np.pi * r * np.hypot(r, h) + np.pi * r**2)
    cyl = Cylinder("c", [0, 0], r, -1.0, 1.0, 2)
    assert cyl.measure == pytest.approx(np.pi * r**2 * 2)
    assert cyl.boundary_measure == pytest.approx(2 * np.pi * r**2 + 2 * np.pi * r * 2)
    tet = Tetrahedron("t", [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    assert tet.measure == pytest.approx(1 / 6)
    assert tet.boundary_measure == pytest.approx(1.5 + np.sqrt(3) / 2)
    cube = HyperCube("h", 4, [0, 0, 0, 0], [1, 2, 3, 4])
    assert cube.vol == pytest.approx(24) and cube.area == pytest.approx(2 * (24 + 12 + 8 + 6))


def fraction_ok(count, n, p):
    return abs(count / n - p) < 4 * np.sqrt(p * (1 - p) / n) + 1e-12


def test_cylinder_boundary_shares_follow_areas():
    r, lo, hi, n = 0.5, 0.0, 3.0, 20000
    cyl = Cylinder("c", [1.0, 2.0], r, lo, hi, 2, dtype=np.float64)
    p, normal = cyl.sample_boundary(n, seed=0)
    caps = np.abs(normal[:, 2]) == 1.0
    cap_area, side_area = 2 * np.pi * r**2, 2 * np.pi * r * (hi - lo)
    assert fraction_ok(caps.sum(), n, cap_area / (cap_area + side_area))
    assert fraction_ok((p[caps, 2] == lo).sum(), caps.sum(), 0.5)
    # uniform on each part: a disk of radius r/2 holds a quarter of a cap's points, the lower
    # third of the side a third of the side's points
    rho = np.hypot(p[:, 0] - 1.0, p[:, 1] - 2.0)
    assert fraction_ok((rho[caps] < r / 2).sum(), caps.sum(), 0.25)
    assert fraction_ok((p[~caps, 2] < 1.0).sum(), (~caps).sum(), 1 / 3)
    _, normal = Cylinder("u", [0, 0], r, lo, hi, 2, "unweighted").sample_boundary(n, seed=0)
    assert fraction_ok((np.abs(normal[:, 2]) > 0.5).sum(), n, 2 / 3)


def test_cone_boundary_shares_and_density():
    r, h, n = 1.0, 2.0, 20000
    cone = Cone("c", [0.0, 0.0], r, 0.0, h, 2, dtype=np.float64)
    p, normal = cone.sample_boundary(n, seed=3)
    base = normal[:, 2] == -1.0
    lateral, disk = np.pi * r * np.hypot(r, h), np.pi * r**2
    assert fraction_ok(base.sum(), n, disk / (lateral + disk))
    # the lower half (in height) of the lateral surface has 3/4 of its area
    assert fraction_ok((p[~base, 2] < h / 2).sum(), (~base).sum(), 0.75)
    # the lower half of the solid has 7/8 of the volume
    x = cone.sample_interior(n, seed=4)
    assert fraction_ok((x[:, 2] < h / 2).sum(), n, 7 / 8)
    _, normal = Cone("u", [0, 0], r, 0.0, h, 2, "unweighted").sample_boundary(n, seed=0)
    assert fraction_ok((normal[:, 2] == -1.0).sum(), n, 0.5)


def test_tetrahedron_faces_and_centroid():
    tet = Tetrahedron("t", TETRA, dtype=np.float64)
    n = 20000
    p, normal = tet.sample_boundary(n, sampler="sobol", seed=0)
    face = np.argmax(normal @ tet.face_normals.T, axis=1)
    shares = tet.face_areas / tet.face_areas.sum()
    for f in range(4):
        assert fraction_ok((face == f).sum(), n, shares[f])
        # face f is opposite vertex f: the normal points away from it
        assert np.dot(tet.face_normals[f], np.asarray(TETRA)[f] - p[face == f][0]) < 0
    x = tet.sample_interior(n, sampler="sobol", seed=0)
    np.testing.assert_allclose(x.mean(axis=0), np.mean(TETRA, axis=0), atol=5e-3)


@pytest.mark.parametrize("geom", shapes()[1:4], ids=lambda g: g.name)
def test_sdf_against_brute_force_distance(geom):
    """|sdf| against the distance to a dense boundary sample (a KD-tree): the sample's distance
    is never below the true one and exceeds it by at most the sample spacing; sign by
    contains."""
    surface, _ = geom.sample_boundary(200_000, sampler="sobol", seed=5)
    tree = cKDTree(surface)
    lo, hi = geom.coord_min, geom.coord_max
    pad = 0.3 * (hi - lo)
    q = lo - pad + np.random.default_rng(1).random((400, 3)) * (hi - lo + 2 * pad)
    sdf = geom.sdf(q)
    d_sample, _ = tree.query(q)
    assert np.all(np.abs(sdf) <= d_sample + 1e-12)
    assert np.all(d_sample - np.abs(sdf) < 0.02)
    np.testing.assert_array_equal(sdf <= 0, geom.contains(q))


def test_hypercube_sdf_and_faces():
    cube = shapes()[4]
    q = np.random.default_rng(2).normal(size=(500, 4))
    # independent: distance to the box is |q - clip(q)| outside; inside, minus the distance to
    # the nearest face
    clipped = np.clip(q, cube.coord_min, cube.coord_max)
    outside = np.linalg.norm(q - clipped, axis=1)
    inside = np.minimum(q - cube.coord_min, cube.coord_max - q).min(axis=1)
    expect = np.where(outside > 0, outside, -inside)
    np.testing.assert_allclose(cube.sdf(q), expect, atol=1e-12)
    n = 20000
    _, normal = cube.sample_boundary(n, seed=0)
    axis = np.argmax(np.abs(normal), axis=1)
    length = cube.coord_max - cube.coord_min
    face_area = np.prod(length) / length
    for a in range(4):
        assert fraction_ok((axis == a).sum(), n, face_area[a] / face_area.sum())


def test_mindflow_sampling_config_and_columns():
    config = generate_sampling_config(
        {
            "domain": {"random_sampling": False, "size": [5, 4, 3]},
            "BC": {"random_sampling": True, "size": 300, "with_normal": True},
        }
    )
    cuboid = Cuboid("cuboid", (-3.0, 1, 0), (1, 2, 1), sampling_config=config)
    domain = cuboid.sampling(geom_type="domain")
    assert domain.shape == (60, 3) and domain.dtype == np.float32
    assert len({tuple(r) for r in domain}) == 60 and cuboid.contains(domain).all()
    bc, normal = cuboid.sampling(geom_type="BC", seed=0)
    assert bc.shape == normal.shape == (300, 3)
    assert cuboid.columns_dict == {
        "domain": ["cuboid_domain_points"],
        "BC": ["cuboid_BC_points", "cuboid_BC_normal"],
    }
    config = generate_sampling_config(
        {"domain": {"size": 100, "sampler": "lhs", "with_sdf": True}, "BC": {"size": 50}}
    )
    cyl = Cylinder("cyl", np.array([0.0, 0.5]), 1.5, -7.0, 7.0, 2, sampling_config=config)
    points, sdf = cyl.sampling("domain", seed=0)
    assert points.shape == (100, 3) and sdf.shape == (100,) and (sdf <= 0).all()
    assert cyl.sampling("bc", seed=0).shape == (50, 3)
    # MindFlow's other constructors
    cone = Cone("cone", [0.0, 0.5], 1.5, -7.0, 7.0, 2, sampling_config=config)
    assert cone.sampling("domain", seed=0)[0].shape == (100, 3)
    tet = Tetrahedron("tet", np.array(TETRA), sampling_config=config)
    assert tet.sampling("BC", seed=0).dtype == np.float32
    with pytest.raises(ValueError, match="grid sampling"):
        Cylinder(
            "g",
            [0, 0],
            1.0,
            0,
            1,
            2,
            sampling_config=generate_sampling_config(
                {"domain": {"random_sampling": False, "size": [4, 4, 4]}}
            ),
        ).sampling("domain")


@pytest.mark.parametrize("geom", shapes(), ids=lambda g: g.name)
def test_deterministic_per_seed(geom):
    for sampler in ("uniform", "sobol"):
        a = geom.sample_interior(64, sampler, seed=7)
        np.testing.assert_array_equal(a, geom.sample_interior(64, sampler, seed=7))
        assert not np.array_equal(a, geom.sample_interior(64, sampler, seed=8))
        b = geom.sample_boundary(64, sampler, seed=7)
        np.testing.assert_array_equal(b[0], geom.sample_boundary(64, sampler, seed=7)[0])


def test_axis_and_bounding_box():
    cyl = Cylinder("c", [1.0, 2.0], 0.5, -1.0, 3.0, 0)
    np.testing.assert_allclose(cyl.coord_min, [-1.0, 0.5, 1.5])
    np.testing.assert_allclose(cyl.coord_max, [3.0, 1.5, 2.5])
    x = cyl.sample_interior(500, seed=0).astype(np.float64)
    assert np.all(np.hypot(x[:, 1] - 1.0, x[:, 2] - 2.0) <= 0.5 + 1e-6)
    assert np.all((x[:, 0] >= -1.0) & (x[:, 0] <= 3.0))


def test_in_csg():
    block = Cuboid("block", [-1.0, -1.0, 0.0], [1.0, 1.0, 1.0], dtype=np.float64)
    hole = Cylinder("hole", [0.0, 0.0], 0.4, -0.5, 1.5, 2, dtype=np.float64)
    shape = block - hole
    p, n = shape.sample_boundary(3000, seed=0)
    np.testing.assert_allclose(shape.sdf(p), 0.0, atol=1e-9)
    rho = np.hypot(p[:, 0], p[:, 1])
    on_hole = np.isclose(rho, 0.4)
    assert on_hole.any()
    # the hole's wall: normals point into the hole (towards the axis)
    np.testing.assert_allclose(n[on_hole, :2], -p[on_hole, :2] / 0.4, atol=1e-9)
    assert not shape.contains(np.array([[0.0, 0.0, 0.5]]))[0]


radius = st.floats(0.1, 3.0)
coord = st.floats(-5.0, 5.0)


@settings(max_examples=25, deadline=None)
@given(
    kind=st.sampled_from([Cylinder, Cone]),
    centre=st.tuples(coord, coord),
    r=radius,
    h_min=coord,
    height=st.floats(0.1, 4.0),
    axis=st.integers(0, 2),
    n=st.integers(1, 300),
    seed=st.integers(0, 2**31),
)
def test_revolved_shapes_random_parameters(kind, centre, r, h_min, height, axis, n, seed):
    geom = kind("g", centre, r, h_min, h_min + height, axis, dtype=np.float64)
    x = geom.sample_interior(n, "halton", seed)
    assert x.shape == (n, 3) and geom.contains(x).all()
    assert np.all((x >= geom.coord_min) & (x <= geom.coord_max))
    p, normal = geom.sample_boundary(n, "uniform", seed)
    scale = max(r, height, 1.0)
    np.testing.assert_allclose(geom.sdf(p), 0.0, atol=1e-12 * scale * 10)
    d = 1e-3 * scale
    np.testing.assert_allclose(geom.sdf(p + d * normal), d, rtol=1e-8, atol=1e-10 * scale)


@settings(max_examples=25, deadline=None)
@given(
    vertices=st.lists(st.tuples(coord, coord, coord), min_size=4, max_size=4),
    n=st.integers(1, 200),
)
def test_tetrahedron_random_vertices(vertices, n):
    v = np.asarray(vertices)
    scale = float(np.max(np.ptp(v, axis=0)))
    assume(scale > 0.1 and abs(np.linalg.det(v[1:] - v[0])) / 6 > 1e-3 * scale**3)
    tet = Tetrahedron("t", v, dtype=np.float64)
    x = tet.sample_interior(n, "sobol", 0)
    assert tet.contains(x).all()
    p, normal = tet.sample_boundary(n, "lhs", 0)
    np.testing.assert_allclose(tet.sdf(p), 0.0, atol=1e-9 * scale)
    # outward: the normal points away from the centroid's side
    assert np.all(np.einsum("ij,ij->i", normal, p - v.mean(axis=0)) > 0)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Cylinder("c", [0, 0], 1.0, 2.0, 1.0, 2), "h_min must be < h_max"),
        (lambda: Cylinder("c", [0, 0], -1.0, 0.0, 1.0, 2), "radius must be > 0"),
        (lambda: Cylinder("c", [0, 0, 0], 1.0, 0.0, 1.0, 2), "centre must be 2"),
        (lambda: Cone("c", [0, 0], 1.0, 0.0, 1.0, 3), "h_axis must be 0, 1 or 2"),
        (lambda: Cone("c", [0, 0], 1.0, 0.0, 1.0, 2, "area"), "boundary_type"),
        (lambda: Tetrahedron("t", [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]), "coplanar"),
        (lambda: Tetrahedron("t", [[0, 0, 0], [1, 0, 0], [0, 1, 0]]), r"shape \[4, 3\]"),
        (lambda: Cuboid("c", [0, 0, 0], [1, -1, 1]), "inverted"),
        (lambda: HyperCube("h", 2, [0, 0, 0], [1, 1, 1]), "coord_min must have 2"),
    ],
)
def test_bad_input(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_unknown_sampler():
    with pytest.raises(ValueError, match="unknown sampler"):
        Cone("c", [0, 0], 1.0, 0.0, 1.0, 2).sample_interior(10, sampler="grid")
