"""Field snapshots to HDF5 and VTK, and matplotlib pictures and movies of fields.

HDF5 layout (``SnapshotWriter``, ``save_fields_hdf5``; read with ``load_snapshots``)::

    /                 attrs: format = "mindelec.fdtd.snapshots/1", spacing [D] (m),
                             origin [D] (m), dt (s) when known, and any user attributes
    /step             [n_snap] int64     time-step index of each snapshot
    /time             [n_snap] float64   its time (s)
    /fields/<name>    [n_snap, *shape]   one dataset per component (e.g. "ez"), the field's
                                         dtype (V/m for E, A/m for H), chunked per snapshot

Writes are atomic: everything goes to a temporary file in the target's directory, renamed over
the target only when the writer closes without an error, so a crash or bad input never leaves
a truncated file (nor touches an older file of the same name).

VTK (``write_vtk``) uses meshio (``pip install meshio``, the ``vtk`` extra): the grid's nodes
``(i d_x, j d_y, k d_z) + origin`` as points, lines / quads / hexahedra as cells, and each field
as point data. Fields are stored per index, so a staggered component drawn this way is shifted
by up to half a cell; ``to_nodes`` first averages a component onto the nodes.
``plot_field`` draws a 2D slice with a symmetric colour scale and ``field_movie`` writes a GIF.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping

import numpy as np

from diffsci import core
from diffsci.core.atomic import atomic_path, new_file_mode

__all__ = [
    "SnapshotWriter",
    "field_movie",
    "load_snapshots",
    "plot_field",
    "save_fields_hdf5",
    "to_nodes",
    "write_vtk",
]

_FORMAT = "mindelec.fdtd.snapshots/1"


def _array(x) -> np.ndarray:
    return x.numpy() if isinstance(x, core.Tensor) else np.asarray(x)


def _temp_beside(path, suffix: str) -> str:
    directory = os.path.dirname(os.path.abspath(os.fspath(path)))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=suffix, dir=directory)
    os.close(fd)
    return tmp


class SnapshotWriter:
    """Append field snapshots to an HDF5 file, written atomically on ``close``.

    Args:
        path: target ``.h5`` file.
        spacing: cell size per axis (m); ``origin`` (m), ``dt`` (s) and ``attrs`` (dict of
            scalars/strings/arrays) are stored as file attributes.
        compression: h5py compression for the field datasets (``"gzip"``, ``None``...).

    Use as a context manager::

        with SnapshotWriter("run.h5", spacing=grid.spacing, dt=grid.dt) as w:
            w.add(step, {"ez": state.ez})

    An exception inside the ``with`` block discards the temporary file.
    """

    def __init__(self, path, spacing=None, origin=None, dt=None, attrs=None, compression="gzip"):
        import h5py

        self.path = os.fspath(path)
        self._tmp = _temp_beside(self.path, ".h5")
        self._file = h5py.File(self._tmp, "w")
        self._compression = compression
        self._shapes: dict[str, tuple] = {}
        self._n = 0
        f = self._file
        f.attrs["format"] = _FORMAT
        if spacing is not None:
            f.attrs["spacing"] = np.atleast_1d(np.asarray(spacing, dtype=np.float64))
        if origin is not None:
            f.attrs["origin"] = np.atleast_1d(np.asarray(origin, dtype=np.float64))
        if dt is not None:
            f.attrs["dt"] = float(dt)
        for key, value in (attrs or {}).items():
            f.attrs[key] = value
        f.create_dataset("step", shape=(0,), maxshape=(None,), dtype=np.int64)
        f.create_dataset("time", shape=(0,), maxshape=(None,), dtype=np.float64)
        f.create_group("fields")

    def add(self, step: int, fields: Mapping, time: float | None = None) -> None:
        """Append one snapshot: ``fields`` maps names to arrays/Tensors of a fixed shape each.

        ``time`` defaults to ``step * dt`` when ``dt`` was given, else NaN.
        """
        if self._file is None:
            raise RuntimeError(f"SnapshotWriter({self.path!r}) is closed")
        if self._n and set(fields) != set(self._shapes):
            raise ValueError(
                f"snapshot {self._n} has fields {sorted(fields)}, earlier ones {sorted(self._shapes)}"
            )
        arrays = {name: _array(v) for name, v in fields.items()}
        for name, a in arrays.items():
            if not np.all(np.isfinite(a)):
                bad = tuple(
                    int(k) for k in np.unravel_index(int(np.argmax(~np.isfinite(a))), a.shape)
                )
                raise ValueError(f"field {name!r} at step {step} is not finite at index {bad}")
            if self._n and a.shape != self._shapes[name]:
                raise ValueError(
                    f"field {name!r} has shape {a.shape} at step {step}, "
                    f"earlier {self._shapes[name]}"
                )
        f, n = self._file, self._n
        for name, a in arrays.items():
            if n == 0:
                self._shapes[name] = a.shape
                f["fields"].create_dataset(
                    name,
                    shape=(0, *a.shape),
                    maxshape=(None, *a.shape),
                    dtype=a.dtype,
                    chunks=(1, *a.shape) if a.size else None,
                    compression=self._compression,
                )
            ds = f["fields"][name]
            ds.resize(n + 1, axis=0)
            ds[n] = a
        if time is None:
            time = step * float(f.attrs["dt"]) if "dt" in f.attrs else float("nan")
        for key, value in (("step", int(step)), ("time", float(time))):
            f[key].resize(n + 1, axis=0)
            f[key][n] = value
        self._n += 1

    def close(self) -> str:
        """Finish the file and rename it over ``path``; returns ``path``."""
        if self._file is not None:
            self._file.close()
            self._file = None
            os.chmod(self._tmp, new_file_mode())  # mkstemp's 0600 -> what open() would give
            os.replace(self._tmp, self.path)
        return self.path

    def discard(self) -> None:
        """Drop the temporary file (the target is left as it was)."""
        if self._file is not None:
            self._file.close()
            self._file = None
        if os.path.exists(self._tmp):
            os.unlink(self._tmp)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.discard()
        return False


def save_fields_hdf5(path, fields: Mapping, step: int = 0, time=None, **kwargs) -> str:
    """One snapshot to ``path`` (atomic); ``kwargs`` as in ``SnapshotWriter``."""
    with SnapshotWriter(path, **kwargs) as w:
        w.add(step, fields, time)
    return os.fspath(path)


def load_snapshots(path) -> dict:
    """Read a snapshot file: ``{"step": [n], "time": [n], "fields": {name: [n, *shape]},
    "attrs": {...}}`` (numpy arrays)."""
    import h5py

    with h5py.File(path, "r") as f:
        if f.attrs.get("format") != _FORMAT:
            raise ValueError(f"{path}: not a {_FORMAT} file (format={f.attrs.get('format')!r})")
        return {
            "step": f["step"][()],
            "time": f["time"][()],
            "fields": {name: ds[()] for name, ds in f["fields"].items()},
            "attrs": dict(f.attrs),
        }


def to_nodes(field, component: str) -> np.ndarray:
    """Average a staggered component onto the grid nodes ``(i, j, k)`` (same shape).

    Along each axis where ``component`` sits at ``i + 1/2`` (see ``grid``), the node value is
    the mean of the two neighbours ``i - 1/2`` and ``i + 1/2``; at node 0 the first sample is
    used. Exact for fields linear along those axes (interior nodes).
    """
    a = _array(field).astype(np.float64, copy=True)
    kind, axis = component[0], "xyz".index(component[1])
    off = [0.5] * 3 if kind == "h" else [0.0] * 3
    off[axis] = 0.5 if kind == "e" else 0.0
    for ax in range(a.ndim):
        if off[ax] == 0.5:
            prev = np.concatenate(
                [np.take(a, [0], axis=ax), np.take(a, range(a.shape[ax] - 1), axis=ax)], axis=ax
            )
            a = 0.5 * (a + prev)
    return a


def write_vtk(path, fields: Mapping, spacing, origin=None) -> str:
    """Fields on a uniform grid as a VTK file via meshio (atomic; format from the suffix).

    Args:
        path: ``.vtu`` (XML unstructured grid) or ``.vtk`` (legacy), or any suffix meshio writes.
        fields: ``{name: [*shape]}`` arrays/Tensors, all of one shape (1-, 2- or 3-D).
        spacing: cell size per axis (m); ``origin``: node (0, ..., 0) coordinates (m).

    Returns:
        ``path``.
    """
    try:
        import meshio
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("write_vtk needs meshio: pip install meshio (or diffsci[vtk])") from err
    arrays = {name: _array(v) for name, v in fields.items()}
    shapes = {a.shape for a in arrays.values()}
    if len(shapes) != 1:
        raise ValueError(f"write_vtk: all fields need one shape, got {sorted(shapes)}")
    shape = shapes.pop()
    ndim = len(shape)
    if not 1 <= ndim <= 3:
        raise ValueError(f"write_vtk: fields must be 1-, 2- or 3-D, got shape {shape}")
    d = np.broadcast_to(np.asarray(spacing, dtype=np.float64), (ndim,))
    o = np.zeros(ndim) if origin is None else np.asarray(origin, dtype=np.float64)
    axes = [o[a] + np.arange(n) * d[a] for a, n in enumerate(shape)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, ndim)
    points = np.zeros((grid.shape[0], 3))
    points[:, :ndim] = grid
    idx = np.arange(int(np.prod(shape))).reshape(shape)
    if ndim == 1:
        cells = [("line", np.stack([idx[:-1], idx[1:]], -1))]
    elif ndim == 2:
        c = [idx[:-1, :-1], idx[1:, :-1], idx[1:, 1:], idx[:-1, 1:]]
        cells = [("quad", np.stack(c, -1).reshape(-1, 4))]
    else:
        lo = [idx[:-1, :-1, :-1], idx[1:, :-1, :-1], idx[1:, 1:, :-1], idx[:-1, 1:, :-1]]
        hi = [idx[:-1, :-1, 1:], idx[1:, :-1, 1:], idx[1:, 1:, 1:], idx[:-1, 1:, 1:]]
        cells = [("hexahedron", np.stack(lo + hi, -1).reshape(-1, 8))]
    mesh = meshio.Mesh(points, cells, point_data={k: v.reshape(-1) for k, v in arrays.items()})
    path = os.fspath(path)
    suffix = os.path.splitext(path)[1]
    with atomic_path(path, suffix=suffix) as tmp:
        meshio.write(tmp, mesh)  # the format follows the suffix, which tmp shares
    return path


def plot_field(
    field,
    spacing=None,
    ax=None,
    title=None,
    cmap="RdBu_r",
    symmetric=True,
    path=None,
    colorbar=True,
):
    """Image of a 2D field (a 3D field: pass a slice), x to the right, y up.

    Args:
        field: ``[nx, ny]`` array/Tensor.
        spacing: cell size (m) per axis for metre axes; None: cell indices.
        ax: a matplotlib Axes to draw in; None: a new Figure.
        symmetric: colour limits ``+-max|field|`` (zero is white with ``RdBu_r``).
        path: save the figure there.

    Returns:
        The Figure.
    """
    from matplotlib.figure import Figure

    a = _array(field)
    if a.ndim != 2:
        raise ValueError(f"plot_field: need a 2D field [nx, ny], got shape {a.shape}")
    if ax is None:
        fig = Figure(figsize=(5, 4), layout="constrained")
        ax = fig.subplots()
    else:
        fig = ax.figure
    extent, unit = (0, a.shape[0], 0, a.shape[1]), "cells"
    if spacing is not None:
        dx, dy = np.broadcast_to(np.asarray(spacing, dtype=np.float64), (2,))
        extent, unit = (0, a.shape[0] * dx, 0, a.shape[1] * dy), "m"
    vmax = float(np.max(np.abs(a))) or 1.0
    kw = {"vmin": -vmax, "vmax": vmax} if symmetric else {}
    im = ax.imshow(a.T, origin="lower", extent=extent, cmap=cmap, aspect="equal", **kw)
    ax.set_xlabel(f"x ({unit})")
    ax.set_ylabel(f"y ({unit})")
    if title:
        ax.set_title(title)
    if colorbar:
        fig.colorbar(im, ax=ax)
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def field_movie(frames, path, spacing=None, fps: int = 10, title=None, cmap="RdBu_r") -> str:
    """An animated GIF of 2D frames ``[nt, nx, ny]`` (Pillow writer; atomic).

    The colour scale is fixed to ``+-max |frames|`` over the whole movie.
    """
    from matplotlib.animation import FuncAnimation, PillowWriter
    from matplotlib.figure import Figure

    frames = _array(frames)
    if frames.ndim != 3:
        raise ValueError(f"field_movie: need frames [nt, nx, ny], got shape {frames.shape}")
    fig = Figure(figsize=(5, 4), layout="constrained")
    ax = fig.subplots()
    plot_field(frames[0], spacing, ax=ax, title=title, cmap=cmap, colorbar=False)
    im = ax.images[0]
    vmax = float(np.max(np.abs(frames))) or 1.0
    im.set_clim(-vmax, vmax)
    fig.colorbar(im, ax=ax)

    def draw(k):
        im.set_data(frames[k].T)
        return (im,)

    anim = FuncAnimation(fig, draw, frames=frames.shape[0], blit=False)
    path = os.fspath(path)
    with atomic_path(path, suffix=".gif") as tmp:
        anim.save(tmp, writer=PillowWriter(fps=fps))
    return path
