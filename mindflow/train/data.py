"""Random-access sources of trajectories and training windows for operator learning.

A *trajectory* is one sample of a time-dependent data set as ``[*spatial, T, C]`` (MindFlow's
``NHWTC`` without the batch axis; PDEBench's ``[b, *spatial, t, c]`` order): the fields of a
PDEBench file become the channels. :class:`TrajectorySource` reads them lazily from a
PDEBench-layout HDF5 file (through ``datasets.pde.PDEBenchSource``, one sample per read) or
serves them from arrays; :class:`WindowSource` cuts each trajectory into training pairs
``(last t_in frames, next t_out frames)``. Both are random-access sources for
``datasets.GeneratorDataset``, which batches and shuffles them.
"""

import os

import numpy as np

from diffsci.datasets.pde import PDEBenchSource, open_pdebench

__all__ = ["PairSource", "SpaceTimeSource", "TrajectorySource", "WindowSource"]

_SPACE_COORDS = ("x-coordinate", "y-coordinate", "z-coordinate")


class TrajectorySource:
    """Trajectories ``[*spatial, T, C]``, one per index, read when asked for.

    Make one with :meth:`from_pdebench` (lazy) or :meth:`from_arrays`.

    Attributes:
        fields: the channel names (``C`` of them).
        n_spatial: the number of spatial axes.
        spatial_shape: the grid, e.g. ``(64, 64)``.
        n_time: ``T`` (after ``time_indices``).
        dtype: the numpy dtype of the arrays returned.
    """

    def __init__(self, read, n, fields, n_spatial, spatial_shape, n_time, dtype, time_indices):
        self._read = read  # i -> [T_all, *spatial, C]
        self._n = int(n)
        self.fields = tuple(fields)
        self.n_spatial = int(n_spatial)
        self.spatial_shape = tuple(int(s) for s in spatial_shape)
        self.dtype = np.dtype(dtype)
        self.time_indices = time_indices
        self.n_time = int(n_time)

    # -- constructors ----------------------------------------------------------------------
    @classmethod
    def from_pdebench(
        cls, path, fields=None, indices=None, time_indices=None, dtype=np.float32, in_memory=False
    ):
        """Trajectories from a PDEBench-layout file (``single`` or ``cfd``), read lazily.

        Args:
            path: the ``.h5``/``.hdf5`` file.
            fields: the fields to use as channels, in order (default all of the file's
                time-dependent fields: ``("tensor",)`` or ``("density", "Vx", ...)``).
            indices: the samples to expose (a train/test split); default all.
            time_indices: the frames to keep (e.g. ``[0, -1]`` for Burgers' ``u0 -> u(T)``,
                ``range(0, 20)``); default all.
            dtype: the dtype returned (default float32).
            in_memory: read the split once and serve it from memory (``PDEBenchSource``).

        Raises:
            ValueError: a field is not ``[T, *spatial]`` or ``[T, *spatial, C]``.
        """
        path = os.fspath(path)
        with open_pdebench(path) as f:
            layout = f.layout
            names = fields if fields is not None else f.fields
            coords = f.coords
            shapes = {n: f.sample_shapes[n] for n in names if n in f.sample_shapes}
        if layout not in ("single", "cfd"):
            raise ValueError(
                f"TrajectorySource.from_pdebench: {path} has layout {layout!r}; trajectories "
                "need the 'single' or 'cfd' layout (use PairSource for input -> output data)"
            )
        n_spatial = sum(c in coords for c in _SPACE_COORDS)
        src = PDEBenchSource(path, fields=names, indices=indices, dtype=dtype, in_memory=in_memory)
        first = shapes[src.fields[0]]
        spatial = first[1 : 1 + n_spatial]
        for name in src.fields:
            shp = shapes[name]
            if len(shp) not in (1 + n_spatial, 2 + n_spatial) or shp[1 : 1 + n_spatial] != spatial:
                raise ValueError(
                    f"TrajectorySource.from_pdebench: field {name!r} of {path} has per-sample "
                    f"shape {shp}; expected [T, *spatial] or [T, *spatial, C] with spatial "
                    f"{spatial} ({n_spatial} coordinate axes in the file)"
                )
        channels = []
        for name in src.fields:
            shp = shapes[name]
            if len(shp) == 1 + n_spatial:
                channels.append(name)
            else:
                channels += [f"{name}[{c}]" for c in range(shp[-1])]

        def read(i):
            cols = src[i]
            parts = [c[..., None] if c.ndim == 1 + n_spatial else c for c in cols]
            return np.concatenate(parts, axis=-1)  # [T, *spatial, C]

        n_time = first[0] if time_indices is None else _count(first[0], time_indices)
        out = cls(read, len(src), channels, n_spatial, spatial, n_time, dtype, time_indices)
        out.source = src
        return out

    @classmethod
    def from_arrays(cls, u, n_spatial, fields=None, time_indices=None, dtype=np.float32):
        """Trajectories from an array ``[N, T, *spatial]`` or ``[N, T, *spatial, C]``
        (PDEBench's order, as ``datasets.pde.generators`` return them).

        Args:
            u: the array.
            n_spatial: the number of spatial axes (1, 2 or 3).
            fields: channel names (default ``("u",)`` / ``("u0", "u1", ...)``).
            time_indices, dtype: as :meth:`from_pdebench`.
        """
        u = np.asarray(u)
        if u.ndim not in (2 + n_spatial, 3 + n_spatial):
            raise ValueError(
                f"TrajectorySource.from_arrays: expected [N, T, *spatial] or "
                f"[N, T, *spatial, C] with {n_spatial} spatial axes, got shape {u.shape}"
            )
        if u.ndim == 2 + n_spatial:
            u = u[..., None]
        c = u.shape[-1]
        if fields is None:
            fields = ("u",) if c == 1 else tuple(f"u{k}" for k in range(c))
        if len(fields) != c:
            raise ValueError(f"TrajectorySource.from_arrays: {len(fields)} names for {c} channels")
        n_time = u.shape[1] if time_indices is None else _count(u.shape[1], time_indices)
        return cls(
            lambda i: u[i],
            u.shape[0],
            fields,
            n_spatial,
            u.shape[2:-1],
            n_time,
            dtype,
            time_indices,
        )

    # -- access -----------------------------------------------------------------------------
    @property
    def n_channels(self):
        """C."""
        return len(self.fields)

    def __len__(self):
        return self._n

    def __getitem__(self, i):
        """Trajectory i as ``[*spatial, T, C]``."""
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise TypeError(f"TrajectorySource: index must be an int, got {type(i).__name__}")
        if not -self._n <= i < self._n:
            raise IndexError(f"TrajectorySource: index {int(i)} out of range for {self._n}")
        u = np.asarray(self._read(int(i) % self._n))  # [T_all, *spatial, C]
        if self.time_indices is not None:
            u = u[_as_index(self.time_indices)]
        return np.ascontiguousarray(np.moveaxis(u, 0, -2), dtype=self.dtype)  # [*spatial, T, C]

    def __repr__(self):
        return (
            f"TrajectorySource({self._n} trajectories, spatial={self.spatial_shape}, "
            f"T={self.n_time}, fields={list(self.fields)})"
        )


def _count(n_time, time_indices):
    """Frames kept of ``n_time`` by ``time_indices`` (checking they exist)."""
    idx = np.arange(n_time)[_as_index(time_indices)]
    return int(idx.size)


def _as_index(time_indices):
    if isinstance(time_indices, slice):
        return time_indices
    if isinstance(time_indices, range):
        return np.asarray(time_indices, dtype=np.int64)
    return np.asarray(time_indices, dtype=np.int64).reshape(-1)


class WindowSource:
    """Training pairs cut from trajectories: window k of trajectory i starts at frame
    ``s = k * stride`` and gives

    - inputs ``[*spatial, t_in, C]``: frames ``s .. s + t_in - 1``,
    - labels ``[*spatial, t_out, C]``: frames ``s + t_in .. s + t_in + t_out - 1``.

    Args:
        trajectories: a :class:`TrajectorySource`.
        t_in: input frames. t_out: label frames (the rollout length). stride: frames between
            window starts (default 1).

    Raises:
        ValueError: ``t_in + t_out`` exceeds the trajectories' ``T``.
    """

    def __init__(self, trajectories, t_in, t_out, stride=1):
        t = trajectories.n_time
        if t_in < 1 or t_out < 1 or stride < 1:
            raise ValueError(
                f"WindowSource: t_in, t_out and stride must be >= 1, got {t_in}, {t_out}, {stride}"
            )
        if t_in + t_out > t:
            raise ValueError(
                f"WindowSource: t_in={t_in} + t_out={t_out} frames do not fit trajectories of "
                f"T={t} frames"
            )
        self.trajectories = trajectories
        self.t_in, self.t_out, self.stride = int(t_in), int(t_out), int(stride)
        self.per_trajectory = (t - t_in - t_out) // stride + 1
        self.column_names = ["inputs", "labels"]

    def __len__(self):
        return len(self.trajectories) * self.per_trajectory

    def __getitem__(self, k):
        n = len(self)
        if not -n <= k < n:
            raise IndexError(f"WindowSource: index {int(k)} out of range for {n} windows")
        i, w = divmod(int(k) % n, self.per_trajectory)
        u = self.trajectories[i]  # [*spatial, T, C]
        s = w * self.stride
        return (
            u[..., s : s + self.t_in, :],  # [*spatial, t_in, C]
            u[..., s + self.t_in : s + self.t_in + self.t_out, :],  # [*spatial, t_out, C]
        )


class PairSource:
    """Steady input -> output pairs (Darcy's coefficient -> pressure): ``(inputs [*spatial,
    C_in], labels [*spatial, C_out])`` per index, from two arrays or, lazily, from a
    PDEBench ``darcy`` file (:meth:`from_pdebench`).

    Args:
        inputs: ``[N, *spatial]`` or ``[N, *spatial, C_in]``.
        labels: ``[N, *spatial]`` or ``[N, *spatial, C_out]``.
        n_spatial: the number of spatial axes.
        dtype: the dtype returned (default float32).

    Attributes:
        in_channels, out_channels: C_in, C_out. spatial_shape: the grid.
    """

    space_time = False  # labels have a time axis (-2) to report errors along

    def __init__(self, inputs, labels, n_spatial, dtype=np.float32):
        def channels(a, name):
            a = np.asarray(a)
            if a.ndim == 1 + n_spatial:
                a = a[..., None]
            if a.ndim != 2 + n_spatial:
                raise ValueError(
                    f"PairSource: {name} must be [N, *spatial] or [N, *spatial, C] with "
                    f"{n_spatial} spatial axes, got shape {a.shape}"
                )
            return a

        inputs, labels = channels(inputs, "inputs"), channels(labels, "labels")
        if inputs.shape[:-1] != labels.shape[:-1]:
            raise ValueError(
                f"PairSource: inputs {inputs.shape} and labels {labels.shape} differ "
                "in samples or grid"
            )
        self._setup(
            lambda i: (inputs[i], labels[i]),
            inputs.shape[0],
            inputs.shape[1:-1],
            inputs.shape[-1],
            labels.shape[-1],
            dtype,
        )

    def _setup(self, read, n, spatial_shape, in_channels, out_channels, dtype):
        self._read = read
        self._n = int(n)
        self.spatial_shape = tuple(int(k) for k in spatial_shape)
        self.n_spatial = len(self.spatial_shape)
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.dtype = np.dtype(dtype)
        self.column_names = ["inputs", "labels"]

    @classmethod
    def from_pdebench(cls, path, indices=None, dtype=np.float32, in_memory=False):
        """Pairs ``nu [*spatial, 1] -> tensor [*spatial, 1]`` from a PDEBench ``darcy`` file
        (coefficient -> solution), read lazily one sample at a time.

        Args:
            path: the file. indices: the samples to expose (a split). dtype: as returned.
            in_memory: read the split once and serve it from memory (``PDEBenchSource``).
        """
        path = os.fspath(path)
        with open_pdebench(path) as f:
            layout, shapes = f.layout, dict(f.sample_shapes)
        if layout != "darcy":
            raise ValueError(
                f"PairSource.from_pdebench: {path} has layout {layout!r}, expected 'darcy' "
                "(use TrajectorySource for time-dependent data)"
            )
        src = PDEBenchSource(
            path, fields=["nu", "tensor"], indices=indices, dtype=dtype, in_memory=in_memory
        )

        def read(i):
            nu, u = src[i]  # [*spatial], [1, *spatial]
            return nu[..., None], np.moveaxis(u, 0, -1)  # [*spatial, 1], [*spatial, 1]

        out = cls.__new__(cls)
        out._setup(read, len(src), shapes["nu"], 1, shapes["tensor"][0], dtype)
        out.source = src
        return out

    def __len__(self):
        return self._n

    def __getitem__(self, i):
        if not -self._n <= i < self._n:
            raise IndexError(f"PairSource: index {int(i)} out of range for {self._n}")
        x, y = self._read(int(i) % self._n)
        return np.asarray(x, dtype=self.dtype), np.asarray(y, dtype=self.dtype)

    def __repr__(self):
        return (
            f"PairSource({self._n} pairs, spatial={self.spatial_shape}, "
            f"C_in={self.in_channels}, C_out={self.out_channels})"
        )


class SpaceTimeSource(PairSource):
    """FNO-3D's space-time pairs (Li et al. 2021, Section 5.3; MindFlow's ``fno3d`` Navier-
    Stokes case): the model sees the first ``t_in`` frames, repeated along a time axis of
    length ``t_out``, and predicts the next ``t_out`` frames at once.

    Pair i (trajectory i):

    - inputs ``[*spatial, t_out, t_in * C]``: frames ``0 .. t_in - 1`` as channels
      (frame-major), the same at every output time;
    - labels ``[*spatial, t_out, C]``: frames ``t_in .. t_in + t_out - 1``.

    The time axis counts as a spatial axis for the model (``FNO3D(in_channels=t_in * C,
    out_channels=C, resolutions=[*spatial, t_out])``); :meth:`OperatorTrainer.evaluate` reports
    its errors per output frame.

    Args:
        trajectories: a :class:`TrajectorySource`.
        t_in: input frames (10 in the paper). t_out: predicted frames (40, 20 or 10).
    """

    space_time = True

    def __init__(self, trajectories, t_in, t_out):
        if t_in < 1 or t_out < 1 or t_in + t_out > trajectories.n_time:
            raise ValueError(
                f"SpaceTimeSource: t_in={t_in} + t_out={t_out} frames do not fit trajectories "
                f"of T={trajectories.n_time} frames"
            )
        c = trajectories.n_channels
        self.trajectories, self.t_in, self.t_out = trajectories, int(t_in), int(t_out)

        def read(i):
            u = trajectories[i]  # [*spatial, T, C]
            first = u[..., :t_in, :].reshape(*u.shape[:-2], 1, t_in * c)  # [*spatial, 1, t_in*C]
            inputs = np.repeat(first, t_out, axis=-2)  # [*spatial, t_out, t_in*C]
            return inputs, u[..., t_in : t_in + t_out, :]  # labels [*spatial, t_out, C]

        self._setup(
            read,
            len(trajectories),
            (*trajectories.spatial_shape, t_out),
            t_in * c,
            c,
            trajectories.dtype,
        )
