"""Atomic writers for PDEBench's four HDF5 layouts (see :mod:`datasets.pde.layouts`).

Everything is written to a temporary file next to the target, checked against the layout
(:func:`~datasets.pde.layouts.check_shapes`), flushed to disk, and only then renamed over the
target with ``os.replace`` (atomic on POSIX and Windows). A write that fails at any point (bad
shapes, an exception while filling data, a full disk, Ctrl-C) removes the temporary file and
leaves whatever was at the target untouched.

Two ways in:

- :func:`write_pdebench` writes arrays that are already in memory (or array-likes that slice,
  such as ``np.memmap`` or another file's ``h5py.Dataset``, copied block by block);
- :class:`PDEBenchWriter` for data produced piece by piece (a generator writing one sample at
  a time, a file bigger than memory)::

      with PDEBenchWriter("burgers.h5", "single", card=card) as w:
          u = w.create("tensor", (n, nt, nx), "float32")
          w.write("x-coordinate", x); w.write("t-coordinate", t)
          for i in range(n):
              u[i] = solve(i)               # [Nt, Nx]
"""

from __future__ import annotations

import math
import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import yaml
from tqdm.auto import tqdm

from .card import CARD_ATTR, card_to_attr
from .layouts import LAYOUTS, PDEBenchFormatError, check_group_shapes, check_shapes

__all__ = ["PDEBenchWriter", "write_pdebench"]

# One HDF5 chunk per sample when a sample fits in this many bytes (so that reading sample i
# touches one chunk); bigger samples are split along their time axis, then space.
_CHUNK_BYTES = 16 << 20
# Array-likes are copied in blocks of about this many bytes (memory stays bounded).
_COPY_BYTES = 64 << 20


def _sample_chunks(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...] | None:
    """HDF5 chunk shape for a [N, ...] field: (1, *sample) shrunk until <= _CHUNK_BYTES."""
    if 0 in shape:
        return None
    chunks = [1, *shape[1:]]
    axis = 1
    while math.prod(chunks) * itemsize > _CHUNK_BYTES and axis < len(chunks):
        if chunks[axis] > 1:
            chunks[axis] = (chunks[axis] + 1) // 2
        else:
            axis += 1
    return tuple(chunks)


def _copy_into(dset: h5py.Dataset, array: Any, name: str, progress: bool) -> None:
    """Copy an array-like into ``dset`` along axis 0, in blocks of ~_COPY_BYTES."""
    n = dset.shape[0] if dset.ndim else 0
    if dset.ndim == 0 or n == 0:
        dset[...] = np.asarray(array)
        return
    row_bytes = max(1, math.prod(dset.shape[1:]) * dset.dtype.itemsize)
    step = max(1, _COPY_BYTES // row_bytes)
    if isinstance(array, np.ndarray) and array.nbytes <= _COPY_BYTES:
        dset[...] = array
        return
    with tqdm(total=n, desc=f"write {name}", unit="sample", disable=not progress) as bar:
        for start in range(0, n, step):
            stop = min(n, start + step)
            dset[start:stop] = np.asarray(array[start:stop])
            bar.update(stop - start)


def _as_yaml(config: Any, where: str) -> str:
    if isinstance(config, str):
        return config
    if isinstance(config, Mapping):
        return yaml.safe_dump(dict(config), sort_keys=False)
    raise TypeError(
        f"{where}: 'config' must be a dict or a YAML string, got {type(config).__name__}"
    )


class PDEBenchWriter:
    """Write one PDEBench-layout file atomically, piece by piece.

    Args:
        path: the file to write (``.h5`` or ``.hdf5``; any name works).
        layout: ``"single"``, ``"darcy"``, ``"cfd"`` or ``"seed_groups"``.
        card: the metadata card (a dict, see :mod:`datasets.pde.card`), or ``None``.
        overwrite: replace an existing file at ``path``; ``False`` raises
            ``FileExistsError`` before anything is written.
        compression: passed to h5py for the per-sample fields (``None``, ``"gzip"``,
            ``"lzf"``); the default writes uncompressed chunks, one per sample.
        progress: show tqdm bars while copying large arrays.

    Use as a context manager: on a clean exit the file is checked and renamed into place; on an
    exception (or a failed check) the temporary file is removed and the target is untouched.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        layout: str,
        card: Mapping[str, Any] | None = None,
        overwrite: bool = False,
        compression: str | None = None,
        progress: bool = False,
    ):
        if layout not in LAYOUTS:
            raise ValueError(
                f"{os.fspath(path)}: unknown layout {layout!r}; expected one of {list(LAYOUTS)}"
            )
        self.path = Path(path)
        self.layout = LAYOUTS[layout]
        self.card_text = None if card is None else card_to_attr(card)
        self.overwrite = overwrite
        self.compression = compression
        self.progress = progress
        self._tmp: Path | None = None
        self._h5: h5py.File | None = None

    # -- context ---------------------------------------------------------------------------
    def __enter__(self) -> PDEBenchWriter:
        if self.path.exists() and not self.overwrite:
            raise FileExistsError(f"{self.path}: exists; pass overwrite=True to replace it")
        if not self.path.parent.is_dir():
            raise FileNotFoundError(f"{self.path}: folder {self.path.parent} does not exist")
        self._tmp = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex[:12]}.tmp")
        self._h5 = h5py.File(self._tmp, "w")
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                self._finish()
        finally:
            self._discard()

    def _discard(self) -> None:
        if self._h5 is not None:
            try:
                self._h5.close()
            finally:
                self._h5 = None
        if self._tmp is not None and self._tmp.exists():
            self._tmp.unlink()
        self._tmp = None

    def _finish(self) -> None:
        h5 = self._require_open()
        self.check()
        if self.card_text is not None:
            h5.attrs[CARD_ATTR] = self.card_text
        h5.close()
        self._h5 = None
        with open(self._tmp, "rb+") as fh:  # the bytes reach the disk before the rename
            os.fsync(fh.fileno())
        if self.path.exists() and not self.overwrite:
            raise FileExistsError(f"{self.path}: appeared while writing; not replaced")
        os.replace(self._tmp, self.path)
        self._tmp = None

    def _require_open(self) -> h5py.File:
        if self._h5 is None:
            raise RuntimeError(f"{self.path}: the writer is not open (use it in a `with` block)")
        return self._h5

    # -- array layouts -----------------------------------------------------------------------
    def _check_name(self, name: str) -> None:
        if self.layout.name == "seed_groups":
            raise ValueError(
                f"{self.path}: layout 'seed_groups' stores arrays inside groups; "
                f"use write_group(name, {{...}}), not {name!r}"
            )
        if name not in self.layout.names:
            raise PDEBenchFormatError(
                f"{self.path}: layout {self.layout.name!r} has no dataset {name!r}; "
                f"expected one of {list(self.layout.names)}"
            )
        if name in self._require_open():
            raise ValueError(f"{self.path}: dataset {name!r} was already written")

    def create(self, name: str, shape: tuple[int, ...], dtype: Any = np.float32) -> h5py.Dataset:
        """Create a dataset to fill by slices (``dset[i] = sample``); returns the h5py Dataset.

        Per-sample fields (``tensor``, ``nu``, ``density``...) are chunked one sample per chunk
        so that reading sample i later touches only its own bytes.
        """
        self._check_name(name)
        shape = tuple(int(s) for s in shape)
        dtype = np.dtype(dtype)
        is_field = name in self.layout.fields + self.layout.optional_fields
        chunks = _sample_chunks(shape, dtype.itemsize) if is_field and len(shape) > 1 else None
        return self._require_open().create_dataset(
            name,
            shape=shape,
            dtype=dtype,
            chunks=chunks,
            compression=self.compression if chunks else None,
        )

    def write(self, name: str, array: Any) -> None:
        """Write a whole dataset from an array-like (numpy array, memmap, h5py Dataset...)."""
        if not hasattr(array, "shape") or not hasattr(array, "dtype"):
            array = np.asarray(array)
        dset = self.create(name, tuple(array.shape), array.dtype)
        _copy_into(dset, array, name, self.progress)

    # -- seed groups -------------------------------------------------------------------------
    def write_group(self, group: str, data: Mapping[str, Any]) -> None:
        """Write one sample of the ``seed_groups`` layout.

        Args:
            group: the group's name, PDEBench's zero-padded seed (``"0000"``, ``"0017"``).
            data: ``{"data": [Nt, Nx(, Ny(, Nz)), C], "grid/x": [Nx], ..., "grid/t": [Nt],
                "config": dict or YAML string (optional)}``.
        """
        h5 = self._require_open()
        where = f"{self.path}, group {group!r}"
        if self.layout.name != "seed_groups":
            raise ValueError(
                f"{self.path}: write_group is for layout 'seed_groups', not {self.layout.name!r}"
            )
        if not isinstance(group, str) or not group or "/" in group:
            raise ValueError(
                f"{self.path}: group name must be a non-empty string without '/', got {group!r} "
                "(PDEBench names groups by seed: str(seed).zfill(4))"
            )
        if group in h5:
            raise ValueError(f"{where}: already written")
        arrays = {k: v for k, v in data.items() if k != "config"}
        unknown = sorted(set(arrays) - set(self.layout.names))
        if unknown:
            raise PDEBenchFormatError(
                f"{where}: unknown dataset(s) {unknown}; expected {list(self.layout.names)} and 'config'"
            )
        arrays = {k: v if hasattr(v, "shape") else np.asarray(v) for k, v in arrays.items()}
        check_group_shapes({k: tuple(v.shape) for k, v in arrays.items()}, where)
        grp = h5.create_group(group)
        for name, array in arrays.items():
            dset = grp.create_dataset(name, shape=tuple(array.shape), dtype=array.dtype)
            _copy_into(dset, array, f"{group}/{name}", self.progress)
        if data.get("config") is not None:
            grp.attrs["config"] = _as_yaml(data["config"], where)

    # -- check -------------------------------------------------------------------------------
    def check(self) -> None:
        """Check what has been written so far against the layout (raises PDEBenchFormatError)."""
        h5 = self._require_open()
        where = f"{self.path} (being written)"
        if self.layout.name == "seed_groups":
            if len(h5) == 0:
                raise PDEBenchFormatError(f"{where}: layout 'seed_groups' needs at least one group")
            for name, grp in h5.items():
                shapes = {}
                grp.visititems(
                    lambda k, v, s=shapes: (
                        s.__setitem__(k, v.shape) if isinstance(v, h5py.Dataset) else None
                    )
                )
                check_group_shapes(shapes, f"{where}, group {name!r}")
            return
        check_shapes(self.layout.name, {k: v.shape for k, v in h5.items()}, where)


def write_pdebench(
    path: str | os.PathLike,
    layout: str,
    data: Mapping[str, Any],
    card: Mapping[str, Any] | None = None,
    overwrite: bool = False,
    *,
    compression: str | None = None,
    progress: bool = False,
) -> Path:
    """Write a PDEBench-layout HDF5 file atomically (temporary file, check, ``os.replace``).

    Args:
        path: the target (``.h5`` or ``.hdf5``).
        layout: ``"single"``: ``tensor`` [N, Nt, Nx(, Ny)(, C)], ``x-coordinate`` [Nx],
            ``t-coordinate`` [Nt] or [Nt+1], optional ``y-coordinate`` [Ny];
            ``"darcy"``: ``tensor`` [N, 1, Nx, Ny], ``nu`` [N, Nx, Ny], ``x-coordinate``,
            ``y-coordinate``;
            ``"cfd"``: ``density``, ``pressure``, ``Vx`` (+ ``Vy`` in 2D, + ``Vz`` in 3D)
            [N, Nt, Nx(, Ny(, Nz))], ``x-coordinate`` (+ ``y-``, ``z-coordinate``),
            ``t-coordinate``;
            ``"seed_groups"``: ``data`` maps group names (``"0000"``...) to
            ``{"data": [Nt, Nx(, Ny(, Nz)), C], "grid/x": ..., "grid/t": ..., "config": dict}``.
        data: ``{dataset name: array}`` (any dtype; PDEBench uses float32), or for
            ``seed_groups`` ``{group name: {...}}``. Arrays may be array-likes that slice
            (``np.memmap``, ``h5py.Dataset``): they are copied in blocks of about 64 MB.
        card: metadata stored as JSON in the root attribute ``diffsci_card``
            (``pde``, ``parameters``, ``grid``, ``generator``, ``seed``, ``version``).
        overwrite: replace an existing file; otherwise an existing file raises
            ``FileExistsError`` and is left as it was.
        compression: h5py compression for the per-sample fields (default none).
        progress: tqdm bars while copying.

    Returns:
        ``Path(path)``.

    Raises:
        PDEBenchFormatError: a missing, unknown or inconsistently shaped dataset (the message
            names the file, the dataset, its shape and what was expected). Nothing is written.
    """
    if not isinstance(data, Mapping):
        raise TypeError(f"{os.fspath(path)}: data must be a dict, got {type(data).__name__}")
    with PDEBenchWriter(path, layout, card, overwrite, compression, progress) as w:
        if layout == "seed_groups":
            for group, group_data in data.items():
                if not isinstance(group_data, Mapping):
                    raise TypeError(
                        f"{w.path}: seed group {group!r} must map to a dict of arrays, "
                        f"got {type(group_data).__name__}"
                    )
                w.write_group(group, group_data)
        else:
            # names are checked, and shapes compared, before any bytes are written
            for name in data:
                w._check_name(name)
            shapes = {k: tuple(getattr(v, "shape", np.shape(v))) for k, v in data.items()}
            check_shapes(layout, shapes, str(w.path))
            for name, array in data.items():
                w.write(name, array)
    return Path(path)
