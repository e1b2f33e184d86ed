"""PDEBench HDF5 layouts: writers, lazy readers, cards, bad input, atomicity, pipeline source."""

import io
import os
import pickle
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diffsci import datasets
from diffsci.datasets.pde import (
    LAYOUTS,
    PDEBenchFormatError,
    PDEBenchSource,
    PDEBenchWriter,
    make_card,
    open_pdebench,
    read_card,
    write_pdebench,
)
from diffsci.datasets.pde import writer as writer_module

RNG = np.random.default_rng(0)


def _single(n=3, nt=5, nx=8, ny=None, c=None, t_extra=1, dtype=np.float64):
    shape = (n, nt, nx) + ((ny,) if ny else ()) + ((c,) if c else ())
    data = {
        "tensor": RNG.standard_normal(shape).astype(dtype),
        "x-coordinate": np.linspace(0, 1, nx),
        "t-coordinate": np.linspace(0, 2, nt + t_extra),
    }
    if ny:
        data["y-coordinate"] = np.linspace(0, 1, ny)
    return data


def _darcy(n=3, nx=6, ny=7):
    return {
        "tensor": RNG.standard_normal((n, 1, nx, ny)),
        "nu": RNG.uniform(3, 12, (n, nx, ny)),
        "x-coordinate": np.linspace(0, 1, nx),
        "y-coordinate": np.linspace(0, 1, ny),
    }


def _cfd(n=2, nt=4, space=(8,)):
    dim = len(space)
    shape = (n, nt, *space)
    data = {
        k: RNG.standard_normal(shape)
        for k in ("density", "pressure", "Vx", "Vy", "Vz")[: 3 + dim - 1]
    }
    for axis, name in zip(space, ("x-coordinate", "y-coordinate", "z-coordinate")):
        data[name] = np.linspace(-1, 1, axis)
    data["t-coordinate"] = np.linspace(0, 1, nt + 1)
    return data


def _seed_groups(n=3, nt=4, space=(8,), c=1):
    out = {}
    for s in range(n):
        g = {"data": RNG.standard_normal((nt, *space, c)).astype(np.float32)}
        for axis, k in zip(space, "xyz"):
            g[f"grid/{k}"] = np.linspace(0, 1, axis, dtype=np.float32)
        g["grid/t"] = np.linspace(0, 1, nt, dtype=np.float32)
        g["config"] = {"sim": {"seed": s, "T": 1.0}}
        out[str(s).zfill(4)] = g
    return out


def _check_roundtrip(path, layout, data):
    with open_pdebench(path) as f:
        assert f.layout == layout
        if layout == "seed_groups":
            names = sorted(data)
            assert f.num_samples == len(names) and f.group_names == names
            for i, name in enumerate(names):
                np.testing.assert_array_equal(f[i]["data"], data[name]["data"])
                coords = f.sample_coords(i)
                for k, v in data[name].items():
                    if k.startswith("grid/"):
                        np.testing.assert_array_equal(coords[k], v)
                assert f.config(i) == data[name]["config"]
            return
        fields = LAYOUTS[layout].fields + LAYOUTS[layout].optional_fields
        n = next(iter(v for k, v in data.items() if k in fields)).shape[0]
        assert f.num_samples == n == len(f)
        assert set(f.fields) == {k for k in data if k in fields}
        for i in (0, n - 1, -1):
            sample = f.sample(i)
            for k in f.fields:
                np.testing.assert_array_equal(sample[k], data[k][i])
                assert sample[k].dtype == data[k].dtype
        for k, v in f.coords.items():
            np.testing.assert_array_equal(v, data[k])
        assert set(f.coords) == {k for k in data if k not in fields}


@pytest.mark.parametrize(
    "layout, data",
    [
        ("single", _single()),
        ("single", _single(t_extra=0, dtype=np.float32)),
        ("single", _single(nx=5, ny=4, c=2)),
        ("darcy", _darcy()),
        ("cfd", _cfd(space=(8,))),
        ("cfd", _cfd(space=(5, 4))),
        ("cfd", _cfd(space=(3, 4, 2))),
        ("seed_groups", _seed_groups()),
        ("seed_groups", _seed_groups(space=(5, 6), c=2)),
    ],
)
@pytest.mark.parametrize("suffix", [".h5", ".hdf5"])
def test_roundtrip_every_layout(tmp_path, layout, data, suffix):
    path = tmp_path / f"f{suffix}"
    assert write_pdebench(path, layout, data) == path
    _check_roundtrip(path, layout, data)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(1, 4),
    nt=st.integers(1, 5),
    space=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    t_extra=st.sampled_from([0, 1]),
)
def test_roundtrip_shapes_hypothesis(tmp_path, n, nt, space, t_extra):
    data = _cfd(n=n, nt=nt, space=tuple(space))
    data["t-coordinate"] = np.linspace(0, 1, nt + t_extra)
    path = tmp_path / "cfd.h5"
    write_pdebench(path, "cfd", data, overwrite=True)
    _check_roundtrip(path, "cfd", data)
    groups = _seed_groups(n=n, nt=nt, space=tuple(space))
    write_pdebench(path, "seed_groups", groups, overwrite=True)
    _check_roundtrip(path, "seed_groups", groups)


def test_reads_files_written_the_pdebench_way(tmp_path):
    """Files made by h5py as PDEBench's scripts make them (contiguous, no card) read back."""
    path = tmp_path / "1D_Burgers_Sols_Nu0.1.hdf5"
    u = RNG.standard_normal((4, 6, 10)).astype(np.float32)
    with h5py.File(path, "w") as f:  # Data_Merge.py's transform(): tensor, x, t; attrs Nu
        f.create_dataset("tensor", data=u)
        f.create_dataset("x-coordinate", data=np.linspace(0, 1, 10))
        f.create_dataset("t-coordinate", data=np.linspace(0, 1, 7))
        f.attrs["Nu"] = 0.1
    sg = tmp_path / "2D_diff-react_NA_NA.h5"
    with h5py.File(sg, "w") as f:  # gen_diff_react.py: per-seed groups, lzf, YAML config
        for s in (1, 0):
            name = str(s).zfill(4)
            f.create_dataset(
                f"{name}/data",
                data=u[s, :, :, None, None] * np.ones((1, 1, 3, 2)),
                compression="lzf",
            )
            f.create_dataset(f"{name}/grid/x", data=np.arange(10.0))
            f.create_dataset(f"{name}/grid/y", data=np.arange(3.0))
            f.create_dataset(f"{name}/grid/t", data=np.arange(6.0))
            f[name].attrs["config"] = f"sim:\n  seed: {s}\n"
    with open_pdebench(str(path)) as f:
        assert (f.layout, f.num_samples, f.card) == ("single", 4, None)
        assert f.attrs["Nu"] == pytest.approx(0.1)
        np.testing.assert_array_equal(f[2]["tensor"], u[2])
    with open_pdebench(sg) as f:
        assert (f.layout, f.group_names, f.config(1)) == (
            "seed_groups",
            ["0000", "0001"],
            {"sim": {"seed": 1}},
        )
        assert f[1]["data"].shape == (6, 10, 3, 2)
        np.testing.assert_array_equal(f[1]["data"][..., 1, 0], u[1])


def test_card_roundtrip_and_read_card(tmp_path):
    card = make_card(
        "burgers1d",
        parameters={"nu": np.float64(0.1)},
        grid={"nx": np.int64(8), "x": np.array([0.0, 1.0])},
        generator="test",
        seed=3,
        solver="pseudo-spectral",
    )
    assert card["version"] and card["solver"] == "pseudo-spectral"
    path = tmp_path / "c.h5"
    write_pdebench(path, "single", _single(), card=card)
    assert read_card(path) == card
    with open_pdebench(path) as f:
        assert f.card == card
        assert read_card(f.h5) == card
        assert "diffsci_card" not in f.attrs
    with pytest.raises(ValueError, match=r"c\.h5: the file is closed"):
        f[0]
    write_pdebench(path, "single", _single(), overwrite=True)
    assert read_card(path) is None
    with pytest.raises(ValueError, match="'pde'"):
        write_pdebench(tmp_path / "d.h5", "single", _single(), card={"seed": 1})
    with pytest.raises(TypeError, match=r"'parameters\.f'"):
        make_card("x", parameters={"f": object()})
    assert not (tmp_path / "d.h5").exists()


# -- lazy reads -------------------------------------------------------------------------------
class CountingFile(io.FileIO):
    """A file whose reads are counted (h5py reads through it as a file-like object)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.bytes_read = 0

    def read(self, *args):
        out = super().read(*args)
        self.bytes_read += len(out)
        return out

    def readinto(self, buffer):
        k = super().readinto(buffer)
        self.bytes_read += k
        return k


@pytest.mark.parametrize("how", ["writer", "pdebench-contiguous"])
def test_taking_one_sample_reads_only_that_sample(tmp_path, how):
    n, nt, nx = 300, 16, 256  # 300 samples of 32 KiB: a ~10 MB file
    u = RNG.standard_normal((n, nt, nx))
    path = tmp_path / "many.h5"
    if how == "writer":
        write_pdebench(
            path,
            "single",
            {"tensor": u, "x-coordinate": np.arange(nx), "t-coordinate": np.arange(nt + 1)},
        )
    else:
        with h5py.File(path, "w") as f:
            f["tensor"], f["x-coordinate"], f["t-coordinate"] = u, np.arange(nx), np.arange(nt + 1)
    sample_bytes = nt * nx * 8
    fh = CountingFile(path, "rb")
    try:
        f = open_pdebench(fh)
        opened = fh.bytes_read
        assert opened < 8 * 1024  # metadata only: no chunk index, no data
        fh.bytes_read = 0
        got = f[17]["tensor"]
        read = fh.bytes_read
        f.close()
    finally:
        fh.close()
    np.testing.assert_array_equal(got, u[17])
    assert os.path.getsize(path) > 250 * sample_bytes
    # the sample, plus the path through the chunk index (a few KiB per B-tree level)
    assert sample_bytes <= read < sample_bytes + 16 * 1024, (read, sample_bytes)


def test_sample_memory_stays_one_sample(tmp_path):
    n, nt, nx = 400, 8, 1024  # 400 samples of 64 KiB: 26 MB
    path = tmp_path / "mem.h5"
    with PDEBenchWriter(path, "single") as w:
        dset = w.create("tensor", (n, nt, nx), np.float64)
        for i in range(0, n, 100):
            dset[i : i + 100] = i
        w.write("x-coordinate", np.arange(nx))
        w.write("t-coordinate", np.arange(nt))
    with open_pdebench(path) as f:
        f[0]  # warm h5py's caches
        tracemalloc.start()
        try:
            sample = f[317]["tensor"]
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert np.all(sample == 300)
    assert peak < 2 * sample.nbytes, (peak, sample.nbytes)


# -- bad input --------------------------------------------------------------------------------
def test_missing_dataset_names_file_and_key(tmp_path):
    path = tmp_path / "bad.h5"
    data = _single()
    with h5py.File(path, "w") as f:
        f["tensor"], f["t-coordinate"] = data["tensor"], data["t-coordinate"]
    with pytest.raises(
        PDEBenchFormatError,
        match=r"bad\.h5.*'single'.*'x-coordinate'.*\['t-coordinate', 'tensor'\]",
    ):
        open_pdebench(path)
    with h5py.File(path, "a") as f:
        f["nu"] = np.zeros((3, 5, 8))
    with pytest.raises(
        PDEBenchFormatError, match=r"bad\.h5.*'darcy'.*'x-coordinate', 'y-coordinate'"
    ):
        open_pdebench(path)


def test_unrecognised_layout_lists_what_was_found(tmp_path):
    path = tmp_path / "ns.h5"
    with h5py.File(path, "w") as f:  # PDEBench's incompressible NS files are none of the four
        f["velocity"], f["force"] = np.zeros((1, 2, 4, 4, 2)), np.zeros((1, 4, 4, 2))
    with pytest.raises(
        PDEBenchFormatError,
        match=r"ns\.h5: not a PDEBench layout.*force \(dataset\), velocity \(dataset\).*single:.*darcy:.*cfd:.*seed_groups:",
    ):
        open_pdebench(path)


@pytest.mark.parametrize(
    "layout, data, match",
    [
        (
            "single",
            {**_single(), "x-coordinate": np.arange(7.0)},
            r"'x-coordinate' has shape \[7\], expected \[8\]",
        ),
        (
            "single",
            {**_single(), "t-coordinate": np.arange(9.0)},
            r"'t-coordinate' has shape \[9\], expected \[5\] or \[6\]",
        ),
        (
            "single",
            {**_single(), "tensor": np.zeros((3, 5))},
            r"'tensor' has shape \[3, 5\], expected \[N, Nt, Nx",
        ),
        (
            "darcy",
            {**_darcy(), "nu": np.zeros((3, 6, 6))},
            r"'nu' has shape \[3, 6, 6\], expected \[3, 6, 7\]",
        ),
        ("darcy", {**_darcy(), "tensor": np.zeros((3, 2, 6, 7))}, r"expected \[N, 1, Nx, Ny\]"),
        (
            "cfd",
            {k: v for k, v in _cfd(space=(5, 4)).items() if k != "Vy"},
            r"'cfd' in 2D needs 'Vy'",
        ),
        (
            "cfd",
            {**_cfd(), "pressure": np.zeros((2, 4, 7))},
            r"'pressure' has shape \[2, 4, 7\], expected \[2, 4, 8\]",
        ),
        ("single", {**_single(), "tensr": np.zeros(3)}, r"no dataset 'tensr'"),
        (
            "seed_groups",
            {"0000": {"data": np.zeros((4, 8, 1)), "grid/x": np.arange(8.0)}},
            r"group '0000'.*needs 'grid/t'",
        ),
        (
            "seed_groups",
            {
                "0000": {
                    "data": np.zeros((4, 8, 1)),
                    "grid/x": np.arange(8.0),
                    "grid/t": np.arange(4.0),
                    "grid/q": 1,
                }
            },
            r"unknown dataset\(s\) \['grid/q'\]",
        ),
    ],
)
def test_writer_rejects_bad_shapes_and_writes_nothing(tmp_path, layout, data, match):
    path = tmp_path / "w.h5"
    with pytest.raises(PDEBenchFormatError, match=match):
        write_pdebench(path, layout, data)
    assert os.listdir(tmp_path) == []


def test_seed_group_names_are_strings(tmp_path):
    with pytest.raises(
        ValueError, match=r"got 0 \(PDEBench names groups by seed: str\(seed\)\.zfill\(4\)\)"
    ):
        write_pdebench(tmp_path / "s.h5", "seed_groups", {0: _seed_groups(n=1)["0000"]})
    with pytest.raises(PDEBenchFormatError, match="needs at least one group"):
        write_pdebench(tmp_path / "s.h5", "seed_groups", {})
    assert os.listdir(tmp_path) == []


def test_reader_checks_shapes_too(tmp_path):
    path = tmp_path / "r.hdf5"
    data = _cfd(space=(5, 4))
    data["y-coordinate"] = np.arange(3.0)
    with h5py.File(path, "w") as f:
        for k, v in data.items():
            f[k] = v
    with pytest.raises(
        PDEBenchFormatError, match=r"r\.hdf5.*'y-coordinate' has shape \[3\], expected \[4\]"
    ):
        open_pdebench(path)
    sg = tmp_path / "sg.h5"
    write_pdebench(sg, "seed_groups", _seed_groups(n=3))
    with h5py.File(sg, "a") as f:
        del f["0002/grid/t"]
    with open_pdebench(sg) as f:  # groups are checked when read, not all at open
        f[1]
        with pytest.raises(PDEBenchFormatError, match=r"sg\.h5, group '0002'.*needs 'grid/t'"):
            f[2]
        with pytest.raises(IndexError, match=r"sg\.h5: sample 3 out of range for 3 samples"):
            f[3]
        with pytest.raises(KeyError, match=r"no field\(s\) \['u'\]"):
            f.sample(0, ["u"])


def test_truncated_and_corrupt_files_name_the_file(tmp_path):
    good = tmp_path / "good.h5"
    write_pdebench(good, "single", _single(n=20, nx=64))
    blob = good.read_bytes()
    cut = tmp_path / "cut.h5"
    cut.write_bytes(blob[: len(blob) // 2])
    with pytest.raises(
        PDEBenchFormatError, match=r"cut\.h5: cannot be opened as HDF5 \(truncated or corrupt"
    ):
        open_pdebench(cut)
    junk = tmp_path / "junk.hdf5"
    junk.write_bytes(RNG.integers(0, 256, 4096, dtype=np.uint8).tobytes())
    with pytest.raises(PDEBenchFormatError, match=r"junk\.hdf5: cannot be opened as HDF5"):
        open_pdebench(junk)
    with pytest.raises(FileNotFoundError, match=r"nothere\.h5: no such file"):
        open_pdebench(tmp_path / "nothere.h5")
    assert cut.read_bytes() == blob[: len(blob) // 2]  # a failed read changes nothing


# -- atomic writes ----------------------------------------------------------------------------
class FailingArray:
    """An array-like that raises when its block starting at ``fail_at`` is read."""

    def __init__(self, array, fail_at, folder):
        self.array, self.fail_at, self.folder = array, fail_at, folder
        self.shape, self.dtype = array.shape, array.dtype
        self.seen_files = None

    def __getitem__(self, sel):
        if sel.start >= self.fail_at:
            self.seen_files = sorted(os.listdir(self.folder))
            raise RuntimeError("disk on fire")
        return self.array[sel]


def test_failed_write_leaves_no_file_and_keeps_the_old_one(tmp_path, monkeypatch):
    monkeypatch.setattr(writer_module, "_COPY_BYTES", 1)  # copy sample by sample
    data = _single(n=10)
    path = tmp_path / "a.h5"
    failing = FailingArray(data["tensor"], 6, tmp_path)
    with pytest.raises(RuntimeError, match="disk on fire"):
        write_pdebench(path, "single", {**data, "tensor": failing})
    assert len(failing.seen_files) == 1 and failing.seen_files[0].startswith(".a.h5.")  # midway
    assert os.listdir(tmp_path) == []
    write_pdebench(path, "single", data)
    before = path.read_bytes()
    with pytest.raises(RuntimeError, match="disk on fire"):
        write_pdebench(
            path,
            "single",
            {**data, "tensor": FailingArray(data["tensor"], 3, tmp_path)},
            overwrite=True,
        )
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["a.h5"]
    with pytest.raises(FileExistsError, match=r"a\.h5: exists; pass overwrite=True"):
        write_pdebench(path, "single", _single())
    with pytest.raises(KeyboardInterrupt), PDEBenchWriter(path, "single", overwrite=True) as w:
        w.write("tensor", data["tensor"])
        raise KeyboardInterrupt
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["a.h5"]
    with (
        pytest.raises(PDEBenchFormatError, match=r"needs 'x-coordinate', 't-coordinate'"),
        PDEBenchWriter(path, "single", overwrite=True) as w,
    ):
        w.write("tensor", data["tensor"])  # incomplete: checked at the end, nothing replaced
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["a.h5"]
    write_pdebench(path, "darcy", _darcy(), overwrite=True)
    with open_pdebench(path) as f:
        assert f.layout == "darcy"


def test_writer_chunks_one_sample_per_chunk(tmp_path, monkeypatch):
    path = tmp_path / "c.h5"
    write_pdebench(path, "cfd", _cfd(n=3, nt=4, space=(6, 5)), compression="gzip")
    with h5py.File(path) as f:
        assert f["density"].chunks == (1, 4, 6, 5) and f["density"].compression == "gzip"
        assert f["x-coordinate"].chunks is None
    monkeypatch.setattr(writer_module, "_CHUNK_BYTES", 4 * 6 * 5 * 8 // 4)  # a quarter sample
    write_pdebench(path, "cfd", _cfd(n=3, nt=4, space=(6, 5)), overwrite=True)
    with h5py.File(path) as f:
        assert f["density"].chunks == (1, 1, 6, 5)


# -- pipeline source --------------------------------------------------------------------------
def test_source_random_access_columns_and_pickling(tmp_path):
    path = tmp_path / "d.h5"
    data = _darcy(n=5)
    write_pdebench(path, "darcy", data)
    src = PDEBenchSource(
        path, fields=["nu", "tensor"], coords=True, dtype=np.float32, indices=[4, 0, 2]
    )
    assert src.column_names == ["nu", "tensor", "x-coordinate", "y-coordinate"]
    assert len(src) == 3
    nu, u, x, y = src[0]
    assert nu.dtype == np.float32 and u.shape == (1, 6, 7) and x.shape == (6,) and y.shape == (7,)
    np.testing.assert_allclose(nu, data["nu"][4].astype(np.float32))
    np.testing.assert_array_equal(src[-1][1], data["tensor"][2].astype(np.float32))
    with pytest.raises(IndexError, match=r"d\.h5: index 3 out of range for 3 samples"):
        src[3]
    src2 = pickle.loads(pickle.dumps(src))
    assert src2._file is None
    np.testing.assert_array_equal(src2[1][0], src[1][0])
    with ThreadPoolExecutor(4) as pool:
        firsts = list(pool.map(lambda i: src2[i % 3][0], range(30)))
    for i, a in enumerate(firsts):
        np.testing.assert_array_equal(a, src[i % 3][0])
    with pytest.raises(IndexError, match="out of range for 5 samples"):
        PDEBenchSource(path, indices=[5])
    with pytest.raises(KeyError, match=r"no field\(s\) \['u'\]"):
        PDEBenchSource(path, fields=["u"])
    sg = tmp_path / "sg.h5"
    groups = _seed_groups(n=2)
    write_pdebench(sg, "seed_groups", groups)
    src = PDEBenchSource(sg, coords=True)
    assert src.column_names == ["data", "grid/x", "grid/t"]
    np.testing.assert_array_equal(src[1][0], groups["0001"]["data"])
    src.close()
    src2.close()


def test_source_in_memory_serves_the_split_without_the_file(tmp_path):
    path = tmp_path / "d.h5"
    data = _darcy(n=5)
    write_pdebench(path, "darcy", data)
    kw = {"fields": ["tensor", "nu"], "coords": True, "dtype": np.float32, "indices": [3, 1]}
    lazy = PDEBenchSource(path, **kw)
    held = PDEBenchSource(path, in_memory=True, **kw)
    want = [lazy[i] for i in range(2)]
    lazy.close()
    held.close()
    path.unlink()  # every read below comes from memory
    assert len(held) == 2
    for i in (0, 1, -1):
        for a, b in zip(held[i], want[i], strict=True):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(held[0][1], data["nu"][3].astype(np.float32))
    with pytest.raises(IndexError, match="index 2 out of range for 2 samples"):
        held[2]


@pytest.mark.skipif(
    not hasattr(datasets, "GeneratorDataset"), reason="datasets.GeneratorDataset not built yet"
)
def test_source_feeds_generator_dataset(tmp_path):
    path = tmp_path / "b.h5"
    data = _single(n=6)
    write_pdebench(path, "single", data)
    src = PDEBenchSource(path)
    ds = datasets.GeneratorDataset(src, column_names=src.column_names, shuffle=False)
    rows = [
        np.asarray(row[0].asnumpy() if hasattr(row[0], "asnumpy") else row[0])
        for row in ds.create_tuple_iterator()
    ]
    np.testing.assert_array_equal(np.stack(rows), data["tensor"])
    with open_pdebench(path) as f:
        assert f.to_dataset(shuffle=False).get_dataset_size() == 6
