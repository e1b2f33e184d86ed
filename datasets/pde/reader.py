"""Lazy readers for PDEBench's HDF5 layouts (see :mod:`datasets.pde.layouts`).

Opening a file reads only its metadata (names, shapes, attributes); ``f[i]`` reads sample i
with an h5py hyperslab, so taking sample 17 of a 100 GB file reads sample 17's bytes and
nothing else (``tests/datasets/test_pde_io.py`` counts the bytes; ``bench/datasets_lazy_read.py``
measures time and memory against file size)::

    with datasets.pde.open_pdebench("1D_Burgers_Sols_Nu0.1.hdf5") as f:
        f.layout, f.num_samples, f.fields       # 'single', 10000, ('tensor',)
        u = f[17]["tensor"]                     # [Nt, Nx] float32, read from disk now
        x = f.coords["x-coordinate"]            # [Nx]

For a training pipeline, :class:`PDEBenchSource` is a picklable random-access source
(``__getitem__`` / ``__len__`` returning a tuple of columns) that opens the file in whichever
process or thread first reads from it::

    src = PDEBenchSource(path, fields=["nu", "tensor"])
    ds = datasets.GeneratorDataset(src, column_names=src.column_names, shuffle=True)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import h5py
import numpy as np
import yaml

from .card import CARD_ATTR, card_from_attr
from .layouts import LAYOUTS, PDEBenchFormatError, check_group_shapes, check_shapes, detect_layout

__all__ = ["PDEBenchFile", "PDEBenchSource", "open_pdebench"]

_SPACE_COORDS = ("x-coordinate", "y-coordinate", "z-coordinate", "t-coordinate")


def _name_of(source: Any) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(getattr(source, "name", None) or repr(source))


def _kinds(group: h5py.Group) -> dict[str, str]:
    # Opening each member reads its object header only; group.get(key, getclass=True) would
    # ask HDF5 for the object's full info, which walks a chunked dataset's whole chunk index
    # (about 60 bytes per chunk: 170 KB for 3000 samples, read before any sample is).
    kinds = {}
    for key in group:
        obj = group[key]
        kinds[key] = (
            "group"
            if isinstance(obj, h5py.Group)
            else "dataset"
            if isinstance(obj, h5py.Dataset)
            else "other"
        )
    return kinds


class PDEBenchFile:
    """An open PDEBench-layout HDF5 file; samples are read from disk when asked for.

    Use :func:`open_pdebench` to make one (it is also a context manager).

    Attributes:
        path: the file's name (as given).
        layout: ``"single"``, ``"darcy"``, ``"cfd"`` or ``"seed_groups"``.
        num_samples: N (``len(f)``).
        fields: the per-sample datasets, in the layout's order (``("tensor",)``,
            ``("nu", "tensor")``, ``("density", "pressure", "Vx", ...)``, ``("data",)``).
        sample_shapes: ``{field: shape of one sample}`` (for ``seed_groups``, of the first).
    """

    def __init__(self, source: str | os.PathLike | IO[bytes]):
        self.path = _name_of(source)
        try:
            self._h5 = h5py.File(source, "r")
        except FileNotFoundError as e:
            raise FileNotFoundError(f"{self.path}: no such file") from e
        except OSError as e:  # truncated, not HDF5, unreadable
            raise PDEBenchFormatError(
                f"{self.path}: cannot be opened as HDF5 (truncated or corrupt file?): {e}"
            ) from e
        try:
            self._setup()
        except BaseException:
            self._h5.close()
            raise

    def _setup(self) -> None:
        h5 = self._h5
        kinds = _kinds(h5)
        self.layout = detect_layout(kinds, self.path)
        lay = LAYOUTS[self.layout]
        self._coords: dict[str, np.ndarray] | None = None
        if self.layout == "seed_groups":
            self._groups = sorted(kinds)
            first = h5[self._groups[0]]
            self._check_group(self._groups[0], first)
            self.fields = lay.fields
            self.num_samples = len(self._groups)
            self.sample_shapes = {"data": tuple(first["data"].shape)}
            return
        not_datasets = [k for k in lay.names if kinds.get(k, "dataset") != "dataset"]
        if not_datasets:
            raise PDEBenchFormatError(
                f"{self.path}: {not_datasets} should be datasets in layout {self.layout!r} "
                f"but are {[kinds[k] for k in not_datasets]}"
            )
        shapes = {k: h5[k].shape for k, kind in kinds.items() if kind == "dataset"}
        self.num_samples = check_shapes(self.layout, shapes, self.path)
        self.fields = tuple(n for n in lay.fields + lay.optional_fields if n in shapes)
        self.sample_shapes = {n: tuple(shapes[n][1:]) for n in self.fields}
        self._groups = None

    def _check_group(self, name: str, grp: Any) -> None:
        where = f"{self.path}, group {name!r}"
        if not isinstance(grp, h5py.Group):
            raise PDEBenchFormatError(f"{where}: expected a group (layout 'seed_groups')")
        shapes: dict[str, tuple] = {}

        def visit(key: str, obj: Any) -> None:
            if isinstance(obj, h5py.Dataset):
                shapes[key] = obj.shape

        grp.visititems(visit)
        check_group_shapes(shapes, where)

    # -- context / lifetime --------------------------------------------------------------------
    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._h5.id.valid:
            self._h5.close()

    def __enter__(self) -> PDEBenchFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __len__(self) -> int:
        return self.num_samples

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}={list(v)}" for k, v in self.sample_shapes.items())
        return (
            f"PDEBenchFile({self.path!r}, layout={self.layout!r}, N={self.num_samples}, {shapes})"
        )

    # -- metadata ------------------------------------------------------------------------------
    @property
    def h5(self) -> h5py.File:
        """The underlying read-only ``h5py.File`` (``ValueError`` once closed)."""
        if not self._h5.id.valid:
            raise ValueError(f"{self.path}: the file is closed")
        return self._h5

    @property
    def card(self) -> dict[str, Any] | None:
        """The ``diffsci_card`` metadata (a dict), or ``None`` for files without one."""
        text = self.h5.attrs.get(CARD_ATTR)
        return None if text is None else card_from_attr(text, self.path)

    @property
    def attrs(self) -> dict[str, Any]:
        """The file root's attributes other than the card (PDEBench stores e.g. ``beta``, ``Nu``)."""
        return {k: v for k, v in self.h5.attrs.items() if k != CARD_ATTR}

    @property
    def coords(self) -> dict[str, np.ndarray]:
        """The coordinate arrays, by their HDF5 names (read once, then cached).

        ``{"x-coordinate": [Nx], "t-coordinate": [Nt or Nt+1], ...}`` for the array layouts;
        for ``seed_groups`` the first group's ``{"grid/x": [Nx], ..., "grid/t": [Nt]}`` (every
        group stores its own grid: :meth:`sample_coords` reads sample i's).
        """
        if self._groups is None:
            return self.sample_coords(0)
        if self._coords is None:
            self._coords = self.sample_coords(0)
        return {k: v.copy() for k, v in self._coords.items()}

    def sample_coords(self, i: int) -> dict[str, np.ndarray]:
        """The coordinates of sample i (the shared ones for the array layouts)."""
        if self._groups is None:
            if self._coords is None:
                self._coords = {k: self.h5[k][()] for k in _SPACE_COORDS if k in self.h5}
            return {k: v.copy() for k, v in self._coords.items()}
        grp = self._group(self._index(i))
        return {
            f"grid/{k}": self._read(grp["grid"][k], (), f"grid/{k}", i)
            for k in ("x", "y", "z", "t")
            if k in grp["grid"]
        }

    def config(self, i: int) -> dict[str, Any] | None:
        """``seed_groups`` only: sample i's ``config`` attribute parsed from YAML (or ``None``)."""
        if self._groups is None:
            raise ValueError(f"{self.path}: layout {self.layout!r} has no per-sample config")
        text = self._group(self._index(i)).attrs.get("config")
        if text is None:
            return None
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return yaml.safe_load(text)

    @property
    def group_names(self) -> list[str]:
        """``seed_groups`` only: the group names in sample order (sorted, as PDEBench reads them)."""
        if self._groups is None:
            raise ValueError(f"{self.path}: layout {self.layout!r} has no seed groups")
        return list(self._groups)

    # -- samples -------------------------------------------------------------------------------
    def _index(self, i: Any) -> int:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"{self.path}: sample index must be an int, got {type(i).__name__}")
        n = self.num_samples
        if not -n <= i < n:
            raise IndexError(f"{self.path}: sample {int(i)} out of range for {n} samples")
        return int(i) % n

    def _group(self, i: int) -> h5py.Group:
        name = self._groups[i]
        grp = self.h5[name]
        if i != 0:
            self._check_group(name, grp)
        return grp

    def _read(self, dset: h5py.Dataset, sel: Any, name: str, i: int) -> np.ndarray:
        try:
            return dset[sel]
        except (OSError, KeyError) as e:  # a chunk past the end of a truncated file, ...
            raise PDEBenchFormatError(
                f"{self.path}: sample {i}: dataset {name!r} could not be read "
                f"(truncated or corrupt file?): {e}"
            ) from e

    def sample(self, i: int, fields: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Read sample i from disk.

        Args:
            i: the sample's index, ``-N <= i < N`` (for ``seed_groups``: the i-th group in
                sorted order).
            fields: which fields to read (default all of :attr:`fields`).

        Returns:
            ``{field: array}`` in the file's dtype, one sample each: ``tensor`` [Nt, Nx(, ...)];
            darcy ``nu`` [Nx, Ny] and ``tensor`` [1, Nx, Ny]; cfd fields [Nt, Nx(, Ny(, Nz))];
            seed groups ``data`` [Nt, Nx(, Ny(, Nz)), C].
        """
        i = self._index(i)
        names = self.fields if fields is None else tuple(fields)
        unknown = [n for n in names if n not in self.fields]
        if unknown:
            raise KeyError(f"{self.path}: no field(s) {unknown}; this file has {list(self.fields)}")
        if self._groups is not None:
            grp = self._group(i)
            return {n: self._read(grp[n], (), n, i) for n in names}
        return {n: self._read(self.h5[n], i, n, i) for n in names}

    def __getitem__(self, i: int) -> dict[str, np.ndarray]:
        return self.sample(i)

    def __iter__(self):
        for i in range(self.num_samples):
            yield self.sample(i)

    # -- pipeline ------------------------------------------------------------------------------
    def to_source(self, **kwargs: Any) -> PDEBenchSource:
        """A :class:`PDEBenchSource` over this file (``kwargs`` as its constructor's)."""
        return PDEBenchSource(self.path, **kwargs)

    def to_dataset(
        self,
        fields: Sequence[str] | None = None,
        coords: bool = False,
        dtype: Any = None,
        indices: Sequence[int] | None = None,
        **dataset_kwargs: Any,
    ):
        """A ``datasets.GeneratorDataset`` over this file's samples.

        Columns are :attr:`PDEBenchSource.column_names`; ``dataset_kwargs`` go to
        ``GeneratorDataset`` (``shuffle``, ``num_shards``, ``shard_id``...).
        """
        from .. import GeneratorDataset  # the pipeline lives one level up

        src = self.to_source(fields=fields, coords=coords, dtype=dtype, indices=indices)
        return GeneratorDataset(src, column_names=src.column_names, **dataset_kwargs)


def open_pdebench(source: str | os.PathLike | IO[bytes]) -> PDEBenchFile:
    """Open a PDEBench-layout HDF5 file (``.h5`` or ``.hdf5``) read-only, detecting its layout.

    Args:
        source: a path, or a binary file-like object opened for reading (h5py reads through
            it: useful for files inside archives or for counting the bytes a read touches).

    Returns:
        a :class:`PDEBenchFile` (a context manager); only metadata has been read.

    Raises:
        FileNotFoundError: no such file.
        PDEBenchFormatError: the file is not HDF5 (truncated, corrupt), matches no layout, or a
            dataset is missing or has the wrong shape; the message names the file, what it
            found and what the layout expects.
    """
    return PDEBenchFile(source)


class PDEBenchSource:
    """Random-access source over a PDEBench file, for ``datasets.GeneratorDataset``.

    ``source[i]`` is a tuple of numpy arrays, one per name in :attr:`column_names`: the fields
    (default all of the file's), then, with ``coords=True``, the coordinates (shared arrays for
    the array layouts, sample i's grid for ``seed_groups``).

    The file is opened on first access in each process (the object pickles without its handle,
    and a forked child reopens rather than sharing its parent's HDF5 handle). h5py serialises
    calls with a global lock, so threads may share one source.

    Args:
        path: the file (``.h5`` / ``.hdf5``).
        fields: which fields to return, in this order (default the file's :attr:`fields`).
        coords: also return the coordinate arrays as extra columns.
        dtype: cast every column to this dtype (e.g. ``np.float32``); default the file's.
        indices: the samples to expose, in this order (a train/test split); default all.
        in_memory: read the exposed samples once, here, and serve them from memory (no HDF5
            call per sample: a data set that fits in RAM, where the per-sample reads and
            their lock would hold back a fast training step).
    """

    def __init__(
        self,
        path: str | os.PathLike,
        fields: Sequence[str] | None = None,
        coords: bool = False,
        dtype: Any = None,
        indices: Sequence[int] | None = None,
        in_memory: bool = False,
    ):
        self.path = Path(path)
        self.dtype = None if dtype is None else np.dtype(dtype)
        self._file: PDEBenchFile | None = None
        self._pid = None
        self._lock = threading.Lock()
        f = self._open()
        self.fields = f.fields if fields is None else tuple(fields)
        unknown = [n for n in self.fields if n not in f.fields]
        if unknown:
            raise KeyError(f"{self.path}: no field(s) {unknown}; this file has {list(f.fields)}")
        self.coord_names = tuple(f.coords) if coords else ()
        n = f.num_samples
        if indices is None:
            self.indices = None
        else:
            idx = np.asarray(indices, dtype=np.int64).reshape(-1)
            bad = idx[(idx < -n) | (idx >= n)]
            if bad.size:
                raise IndexError(
                    f"{self.path}: indices {bad[:5].tolist()} out of range for {n} samples"
                )
            self.indices = idx % n
        self.layout = f.layout
        self._memory = None
        if in_memory:
            self._memory = [self._read(i) for i in range(len(self))]

    @property
    def column_names(self) -> list[str]:
        """The names of the columns ``source[i]`` returns, in order."""
        return [*self.fields, *self.coord_names]

    def _open(self) -> PDEBenchFile:
        pid = os.getpid()
        if self._file is None or self._pid != pid:
            with self._lock:
                if self._file is None or self._pid != pid:
                    self._file = open_pdebench(self.path)
                    self._pid = pid
        return self._file

    def __len__(self) -> int:
        return len(self.indices) if self.indices is not None else self._open().num_samples

    def __getitem__(self, i: int) -> tuple[np.ndarray, ...]:
        n = len(self)
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"{self.path}: index must be an int, got {type(i).__name__}")
        if not -n <= i < n:
            raise IndexError(f"{self.path}: index {int(i)} out of range for {n} samples")
        if self._memory is not None:
            return self._memory[i]
        return self._read(i)

    def _read(self, i: int) -> tuple[np.ndarray, ...]:
        """Sample ``i`` (of the exposed ones, ``0 <= i < len``) from the file."""
        f = self._open()
        n = f.num_samples
        j = int(self.indices[i]) if self.indices is not None else int(i) % n
        sample = f.sample(j, self.fields)
        cols = [sample[k] for k in self.fields]
        if self.coord_names:
            c = f.sample_coords(j)
            cols += [c[k] for k in self.coord_names]
        if self.dtype is not None:
            cols = [np.asarray(c, dtype=self.dtype) for c in cols]
        return tuple(cols)

    def close(self) -> None:
        """Close this process's handle (the next access reopens it)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_file"] = None
        state["_pid"] = None
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
