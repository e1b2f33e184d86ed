"""Snapshots to HDF5 (round trip, atomic writes, bad input), VTK via meshio read back,
staggered-to-node averaging, field plot and movie files."""

import os

import numpy as np
import pytest

from diffsci import core
from diffsci.mindelec.fdtd.io import (
    SnapshotWriter,
    field_movie,
    load_snapshots,
    plot_field,
    save_fields_hdf5,
    to_nodes,
    write_vtk,
)


def test_snapshot_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    ez = [rng.standard_normal((6, 5)) for _ in range(3)]
    path = tmp_path / "run.h5"
    with SnapshotWriter(path, spacing=(1e-3, 2e-3), dt=1e-12, attrs={"case": "test"}) as w:
        for k, e in enumerate(ez):
            w.add(10 * k, {"ez": core.tensor(e), "hx": e.astype(np.float32) * 0.5})
    d = load_snapshots(path)
    assert np.array_equal(d["step"], [0, 10, 20])
    assert np.allclose(d["time"], [0.0, 1e-11, 2e-11])
    assert np.array_equal(d["fields"]["ez"], np.stack(ez))
    assert d["fields"]["hx"].dtype == np.float32
    assert d["attrs"]["case"] == "test" and np.allclose(d["attrs"]["spacing"], [1e-3, 2e-3])
    assert sorted(os.listdir(tmp_path)) == ["run.h5"]


def test_failed_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "keep.h5"
    save_fields_hdf5(path, {"ez": np.ones((3, 3))}, step=4, time=0.5)
    with pytest.raises(ValueError, match=r"'ez' at step 7 is not finite at index \(1, 2\)"):
        bad = np.ones((3, 3))
        bad[1, 2] = np.nan
        save_fields_hdf5(path, {"ez": bad}, step=7)
    with pytest.raises(ValueError, match="shape"):
        with SnapshotWriter(path) as w:
            w.add(0, {"ez": np.ones((3, 3))})
            w.add(1, {"ez": np.ones((3, 4))})
    d = load_snapshots(path)
    assert d["step"].tolist() == [4] and d["time"].tolist() == [0.5]
    assert sorted(os.listdir(tmp_path)) == ["keep.h5"]


@pytest.mark.parametrize("suffix", [".vtu", ".vtk"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 4, 2)])
def test_vtk_read_back(tmp_path, suffix, shape):
    meshio = pytest.importorskip("meshio")
    rng = np.random.default_rng(1)
    ez = rng.standard_normal(shape)
    spacing, origin = (0.1, 0.2, 0.3)[: len(shape)], (1.0, -1.0, 0.5)[: len(shape)]
    path = write_vtk(
        tmp_path / f"f{suffix}", {"ez": ez, "hy": core.tensor(2 * ez)}, spacing, origin
    )
    mesh = meshio.read(path)
    assert mesh.points.shape == (ez.size, 3)
    idx = (1, 2, 1)[: len(shape)]
    flat = np.ravel_multi_index(idx, shape)
    expect = np.zeros(3)
    expect[: len(shape)] = np.asarray(origin) + np.asarray(idx) * np.asarray(spacing)
    assert np.allclose(mesh.points[flat], expect)
    assert np.allclose(mesh.point_data["ez"], ez.reshape(-1))
    assert np.allclose(mesh.point_data["hy"], 2 * ez.reshape(-1))
    n_cells = int(np.prod([n - 1 for n in shape]))
    assert sum(len(c.data) for c in mesh.cells) == n_cells
    with pytest.raises(ValueError, match="one shape"):
        write_vtk(tmp_path / f"g{suffix}", {"a": ez, "b": ez[:-1]}, spacing)


def test_to_nodes_exact_for_linear_fields():
    i, j = np.meshgrid(np.arange(6.0), np.arange(5.0), indexing="ij")
    hx = 2.0 * i + 3.0 * (j + 0.5)  # hx at (i, j + 1/2) in 2D
    nodes = to_nodes(hx, "hx")
    assert np.allclose(nodes[:, 1:], (2.0 * i + 3.0 * j)[:, 1:])
    ez = 2.0 * i - j
    assert np.array_equal(to_nodes(ez, "ez"), ez)  # ez sits on the nodes in 2D TMz


def test_plot_and_movie(tmp_path):
    x = np.linspace(0, 1, 20)
    frames = np.stack([np.outer(np.sin(2 * np.pi * (x - 0.1 * k)), np.ones(12)) for k in range(4)])
    fig = plot_field(frames[0], spacing=1e-3, title="ez", path=tmp_path / "ez.png")
    assert (tmp_path / "ez.png").stat().st_size > 1000
    vmin, vmax = fig.axes[0].images[0].get_clim()
    assert vmin == -vmax
    path = field_movie(frames, tmp_path / "ez.gif", spacing=1e-3, fps=5)
    with open(path, "rb") as fh:
        assert fh.read(6) in (b"GIF89a", b"GIF87a")
    with pytest.raises(ValueError, match="2D field"):
        plot_field(frames)
