"""MindFlow's Dataset (datasets/geometry/dataset.py): columns, batch shapes, every point once
per epoch, merging of shorter sub-datasets, pre-batching, preprocessing, shards, seeds, errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci import datasets
from diffsci.datasets.geometry import (
    Disk,
    GeometryWithTime,
    Rectangle,
    TimeDomain,
    generate_sampling_config,
)
from diffsci.datasets.geometry.dataset import BoundaryBC, Equation, ExistedDataset


def rect(domain=1000, bc=200, name="rect"):
    config = generate_sampling_config(
        {"domain": {"size": domain}, "BC": {"size": bc, "with_normal": True}}
    )
    return Rectangle(name, [0.0, 0.0], [2.0, 1.0], dtype=np.float64, sampling_config=config)


def epoch(dataset):
    rows = list(dataset.create_tuple_iterator(output_numpy=True))
    return [np.concatenate([r[i] for r in rows]) for i in range(len(rows[0]))]


def as_set(points):
    return {tuple(p) for p in np.asarray(points)}


def test_columns_batches_and_every_point_once_per_epoch():
    geom = rect()
    data = datasets.Dataset({geom: ["domain", "BC"]})
    with pytest.raises(ValueError, match="create_dataset"):
        data.get_columns_list()
    train = data.create_dataset(batch_size=100, shuffle=True, seed=0)
    assert data.get_columns_list() == ["rect_domain_points", "rect_BC_points", "rect_BC_normal"]
    assert len(data) == 1000 and train.get_dataset_size() == 10
    first = next(iter(train.create_tuple_iterator()))
    assert all(isinstance(t, core.Tensor) and t.shape == (100, 2) for t in first)
    domain, bc, normal = epoch(train)
    assert len(domain) == 1000 and len(as_set(domain)) == 1000  # each domain point once
    assert geom.contains(domain).all()
    # the 200 boundary points are each used 1000 / 200 = 5 times
    _, counts = np.unique(bc, axis=0, return_counts=True)
    assert len(counts) == 200 and np.all(counts == 5)
    # a point keeps its own normal: the rectangle's outward normal at it
    side = np.where(np.isclose(bc[:, 0], 0.0), 0, np.where(np.isclose(bc[:, 0], 2.0), 1, 2))
    side = np.where(side == 2, np.where(np.isclose(bc[:, 1], 0.0), 2, 3), side)
    expect = np.array([[-1, 0], [1, 0], [0, -1], [0, 1]], dtype=float)[side]
    np.testing.assert_array_equal(normal, expect)


@settings(max_examples=20, deadline=None)
@given(
    n_domain=st.integers(1, 120),
    n_bc=st.integers(1, 120),
    batch=st.integers(1, 50),
    shuffle=st.booleans(),
    seed=st.integers(0, 2**31),
)
def test_merge_uses_each_point_evenly(n_domain, n_bc, batch, shuffle, seed):
    """Per epoch: the longest part's points once each, a shorter part's floor or ceil of
    (length / its size) times each; all batches full but the last (drop_remainder=False)."""
    geom = rect(n_domain, n_bc)
    data = datasets.Dataset({geom: ["domain", "BC"]})
    train = data.create_dataset(batch_size=batch, shuffle=shuffle, drop_remainder=False, seed=seed)
    length = max(n_domain, n_bc)
    assert len(data) == length and train.get_dataset_size() == -(-length // batch)
    domain, bc, normal = epoch(train)
    assert len(domain) == len(bc) == len(normal) == length
    for points, size in ((domain, n_domain), (bc, n_bc)):
        _, counts = np.unique(points, axis=0, return_counts=True)
        assert len(counts) == size
        assert counts.min() >= length // size and counts.max() <= -(-length // size)


def test_seed_reproducibility_and_epochs():
    geom = rect(300, 60)
    a = datasets.Dataset({geom: ["domain", "BC"]}).create_dataset(batch_size=50, seed=7)
    b = datasets.Dataset({geom: ["domain", "BC"]}).create_dataset(batch_size=50, seed=7)
    epoch_a, epoch_b = epoch(a), epoch(b)
    for x, y in zip(epoch_a, epoch_b):
        np.testing.assert_array_equal(x, y)
    second = epoch(a)  # a new order, the same points
    assert not np.array_equal(second[0], epoch_a[0])
    assert as_set(second[0]) == as_set(epoch_a[0])
    c = datasets.Dataset({geom: ["domain", "BC"]}).create_dataset(batch_size=50, seed=8)
    assert not np.array_equal(epoch(c)[0], epoch_a[0])
    core.set_seed(5)
    d1 = epoch(datasets.Dataset({geom: ["domain"]}).create_dataset(batch_size=50))[0]
    core.set_seed(5)
    d2 = epoch(datasets.Dataset({geom: ["domain"]}).create_dataset(batch_size=50))[0]
    np.testing.assert_array_equal(d1, d2)


def test_no_shuffle_keeps_the_sampled_order_and_drop_remainder():
    geom = rect(250, 50)
    data = datasets.Dataset({geom: ["domain"]})
    train = data.create_dataset(batch_size=100, shuffle=False, drop_remainder=True, seed=1)
    assert train.get_dataset_size() == 2
    kept = data.create_dataset(batch_size=100, shuffle=False, drop_remainder=False, seed=1)
    (domain,) = epoch(kept)
    assert domain.shape == (250, 2) and len(as_set(domain)) == 250
    shapes = [r[0].shape for r in kept.create_tuple_iterator(output_numpy=True)]
    assert shapes == [(100, 2), (100, 2), (50, 2)]


def test_prebatched_data():
    geom = rect(1000, 200)
    data = datasets.Dataset({geom: ["domain", "BC"]})
    train = data.create_dataset(batch_size=64, prebatched_data=True, seed=0)
    assert len(data) == 1000 // 64 and train.get_dataset_size() == 15
    domain, bc, normal = epoch(train)
    assert domain.shape == (15 * 64, 2) and bc.shape == normal.shape == (15 * 64, 2)
    assert len(as_set(domain)) == 15 * 64  # no domain point twice
    with pytest.raises(ValueError, match="drop_remainder=True"):
        data.create_dataset(batch_size=64, prebatched_data=True, drop_remainder=False)
    with pytest.raises(ValueError, match="batch_size 500 must lie in"):
        data.create_dataset(batch_size=500, prebatched_data=True)


def test_time_geometry_with_ic():
    space = Disk("disk", [0.0, 0.0], 1.0)
    geom = GeometryWithTime(space, TimeDomain("time", 0.0, 1.0))
    geom.set_sampling_config(
        generate_sampling_config(
            {"domain": {"size": 120}, "BC": {"size": 40}, "IC": {"size": 60}, "time": {"size": 120}}
        )
    )
    data = datasets.Dataset({geom: ["domain", "BC", "IC"]})
    train = data.create_dataset(batch_size=30, seed=0)
    assert data.get_columns_list() == [
        "time_disk_domain_points",
        "time_disk_BC_points",
        "time_disk_IC_points",
    ]
    assert data.dataset_constraint_map == {
        "time_disk_domain": "Equation",
        "time_disk_BC": "BC",
        "time_disk_IC": "IC",
    }
    domain, bc, ic = epoch(train)
    assert domain.shape == bc.shape == ic.shape == (120, 3)
    assert np.all(ic[:, 2] == 0.0)


def test_existed_data_and_dataset_list(tmp_path):
    x = np.arange(40, dtype=np.float64).reshape(20, 2)
    y = np.arange(20, dtype=np.float64)[:, None] * 10
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    config = datasets.ExistedDataConfig(
        "obs", [str(tmp_path / "x.npy"), str(tmp_path / "y.npy")], ["inputs", "labels"]
    )
    geom = rect(40, 20)
    data = datasets.Dataset(dataset_list=[Equation(geom)], existed_data_list=config)
    train = data.create_dataset(batch_size=10, seed=0)
    assert data.get_columns_list() == ["rect_domain_points", "obs_inputs", "obs_labels"]
    _, inputs, labels = epoch(train)
    assert inputs.dtype == np.float32 and len(inputs) == 40
    np.testing.assert_array_equal(labels[:, 0], inputs[:, 0] * 5)  # rows stay paired
    _, counts = np.unique(inputs, axis=0, return_counts=True)
    assert np.all(counts == 2)
    with pytest.raises(ValueError, match="does not exist"):
        datasets.ExistedDataConfig("obs", str(tmp_path / "missing.npy"), "a")
    with pytest.raises(ValueError, match="one file per column"):
        datasets.ExistedDataConfig("obs", str(tmp_path / "x.npy"), ["a", "b"])
    sub = ExistedDataset("obs2", str(tmp_path / "y.npy"), "y")
    assert len(sub) == 20 and sub[3][0].tolist() == [30.0]


def test_preprocess_fn_and_column_renaming():
    geom = rect(100, 20)
    data = datasets.Dataset({geom: ["domain", "BC"]})

    def scale(domain, bc, normal):
        return domain * 2.0, domain.sum(keepdims=True), bc, normal

    train = data.create_dataset(
        batch_size=25,
        preprocess_fn=scale,
        input_output_columns_map={"rect_domain_points": ["x2", "xsum"]},
        seed=0,
    )
    assert data.get_columns_list() == ["x2", "xsum", "rect_BC_points", "rect_BC_normal"]
    x2, xsum, _, _ = epoch(train)
    np.testing.assert_allclose(xsum[:, 0], x2.sum(axis=1) / 2.0)
    assert (x2[:, 0] <= 4.0).all() and (x2[:, 0] >= 0.0).all()


def test_shards_cover_every_point_once():
    geom = rect(200, 40)
    parts = []
    for shard in range(2):
        data = datasets.Dataset({geom: ["domain"]})
        train = data.create_dataset(batch_size=20, num_shards=2, shard_id=shard, seed=3)
        assert train.get_dataset_size() == 5
        parts.append(epoch(train)[0])
    both = np.concatenate(parts)
    assert len(both) == 200 and len(as_set(both)) == 200


def test_sub_dataset_getitem_and_constraints():
    geom = rect(30, 10)
    bc = BoundaryBC(geom)
    assert len(bc) == 10 and bc.columns_list == ["rect_BC_points", "rect_BC_normal"]
    points, normal = bc[12]  # wraps around
    np.testing.assert_array_equal(points, bc[2][0])
    assert normal.shape == (2,)
    data = datasets.Dataset(dataset_list=[bc, Equation(geom)])
    data.create_dataset(batch_size=5, seed=0)
    assert data[0][0].shape == (2,)
    data.set_constraint_type({bc: "Label"})
    assert data.dataset_constraint_map["rect_BC"] == "Label"
    data.set_constraint_type("custom")
    assert set(data.dataset_constraint_map.values()) == {"custom"}
    with pytest.raises(ValueError, match="constraint_type must be one of"):
        data.set_constraint_type("loss")


def test_bad_input():
    geom = rect()
    with pytest.raises(ValueError, match="at least one"):
        datasets.Dataset()
    with pytest.raises(TypeError, match="must be Geometry instances"):
        datasets.Dataset({"rect": ["domain"]})
    with pytest.raises(ValueError, match="unknown part 'boundary'"):
        datasets.Dataset({geom: ["boundary"]})
    with pytest.raises(ValueError, match="no 'IC' entry"):
        datasets.Dataset({geom: ["IC"]})
    with pytest.raises(ValueError, match="more than one sub-dataset"):
        datasets.Dataset({geom: ["domain"], rect(): ["domain"]}).create_dataset(seed=0)
    with pytest.raises(TypeError, match="batch_size must be an int"):
        datasets.Dataset({geom: ["domain"]}).create_dataset(batch_size=2.0)
    no_config = Rectangle("bare", [0, 0], [1, 1])
    with pytest.raises(ValueError, match="has no sampling_config"):
        datasets.Dataset({no_config: ["domain"]})
