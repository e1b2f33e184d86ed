"""MindFlow's ``mindflow.data``: ``Dataset`` merges the point sets of geometries (PDE domain,
boundary, initial condition) and of ``.npy`` files into one pipeline dataset.

Names and arguments follow ``mindflow/data/dataset.py`` (``Dataset(geometry_dict,
existed_data_list, dataset_list)``, ``create_dataset(batch_size, preprocess_fn,
input_output_columns_map, shuffle, drop_remainder, prebatched_data, num_parallel_workers,
num_shards, shard_id, python_multiprocessing, sampler)``, ``get_columns_list``,
``set_constraint_type``) and ``equation.py``, ``boundary.py``, ``existed_data.py``
(``Equation``, ``BoundaryBC``, ``BoundaryIC``, ``ExistedDataset``, ``ExistedDataConfig``).

How the sub-datasets are merged (MindFlow's ``_IterableDatasets``): row ``i`` of the merged
dataset holds row ``i`` of every sub-dataset, where a sub-dataset shorter than the longest one
starts again from its beginning (cycle ``i // len``), with a fresh permutation per cycle when
its config's ``random_merge`` is set (MindFlow re-permutes at every wrap too). The columns are
the sub-datasets' columns in order, e.g. ``["rect_domain_points", "rect_BC_points",
"rect_BC_normal"]``. So in one epoch every point of the longest sub-dataset is used exactly
once, and every point of a shorter one ``floor(L / len)`` or ``ceil(L / len)`` times.

Differences from MindFlow, all deliberate: the points are sampled once, when
``create_dataset`` is called (MindFlow re-samples a randomly sampled sub-dataset each time its
index runs out; call ``create_dataset`` again for fresh points), every random choice is drawn
from ``seed`` (an argument of ``create_dataset``; None: core's generator, so ``core.set_seed``
makes the whole dataset repeatable), and the merged rows are materialised as arrays read by
``datasets.NumpySlicesDataset`` (one numpy fancy-index per batch and column instead of a Python
call per row).
"""

import os

import numpy as np

from .base import Geometry
from .samplers import make_rng

__all__ = [
    "CONSTRAINT_TYPES",
    "BoundaryBC",
    "BoundaryIC",
    "Data",
    "Dataset",
    "Equation",
    "ExistedDataConfig",
    "ExistedDataset",
]

CONSTRAINT_TYPES = ("equation", "bc", "ic", "label", "function", "custom")
DATA_FORMATS = ("npy",)
_GEOM_TYPES = {"domain": "domain", "bc": "BC", "ic": "IC"}


def _check_constraint(constraint_type, where):
    if not isinstance(constraint_type, str) or constraint_type.lower() not in CONSTRAINT_TYPES:
        raise ValueError(
            f"{where}: constraint_type must be one of {', '.join(CONSTRAINT_TYPES)} "
            f"(case-insensitive), got {constraint_type!r}"
        )
    return constraint_type


class Data:
    """Base of the sub-datasets: a named set of rows with columns and a constraint type.

    Subclasses implement ``_load(rng) -> tuple of arrays`` (equal first dimensions) and set
    ``columns_list`` there, and have a ``random_merge`` flag.

    Args:
        name: the sub-dataset's name (e.g. ``"rect_domain"``).
        columns_list: its column names.
        constraint_type: one of ``CONSTRAINT_TYPES`` (case-insensitive), which a solver uses to
            pick the loss of these rows.
    """

    def __init__(self, name=None, columns_list=None, constraint_type=None):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{type(self).__name__}: name must be a str, got {name!r}")
        if constraint_type is not None:
            _check_constraint(constraint_type, f"{type(self).__name__} {name!r}")
        self.name = name
        self.columns_list = None if columns_list is None else list(columns_list)
        self.constraint_type = constraint_type
        self.dataset_type = type(self).__name__
        self.random_merge = True
        self.data = None
        self.data_size = None
        self.batch_size = 1
        self.batched_data_size = None

    def set_constraint_type(self, constraint_type="Equation"):
        """Set the constraint type (one of ``CONSTRAINT_TYPES``, case-insensitive)."""
        self.constraint_type = _check_constraint(constraint_type, f"{self.dataset_type}")

    def _load(self, rng):
        raise NotImplementedError(f"{self.dataset_type}._load")

    def _initialization(self, batch_size=1, shuffle=False, seed=None):
        """Sample (or read) the rows; with ``batch_size > 1`` index ``i`` gives the ``i``-th
        batch of ``batch_size`` rows (of a permutation of the rows when ``shuffle``).

        Returns:
            the tuple of column arrays, each ``[data_size, ...]``.
        """
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
            raise TypeError(f"{self.dataset_type} {self.name!r}: batch_size must be an int")
        load_rng, order_rng = make_rng(seed).spawn(2)
        data = self._load(load_rng)
        data = data if isinstance(data, tuple) else (data,)
        data = tuple(np.asarray(d) for d in data)
        lengths = {len(d) for d in data}
        if len(lengths) != 1:
            raise ValueError(
                f"{self.dataset_type} {self.name!r}: its columns {self.columns_list} have "
                f"different lengths {[len(d) for d in data]}"
            )
        self.data = data
        self.data_size = len(data[0])
        if batch_size < 1 or batch_size > self.data_size:
            raise ValueError(
                f"{self.dataset_type} {self.name!r}: batch_size {batch_size} must lie in "
                f"[1, data size {self.data_size}] when the data are pre-batched"
            )
        self.batch_size = int(batch_size)
        self.batched_data_size = self.data_size // self.batch_size
        order = order_rng.permutation(self.data_size) if shuffle else np.arange(self.data_size)
        self._order = order
        return data

    def __len__(self):
        if self.data is None:
            self._initialization()
        return self.batched_data_size

    def __getitem__(self, index):
        """Row (or pre-batched rows) ``index``, wrapping around: a tuple with one array per
        column."""
        if self.data is None:
            self._initialization()
        index = int(index) % self.batched_data_size
        rows = self._order[index * self.batch_size : (index + 1) * self.batch_size]
        if self.batch_size == 1:
            rows = rows[0]
        return tuple(d[rows] for d in self.data)


class _GeometryData(Data):
    _geom_type = "?"
    _constraint = "?"

    def __init__(self, geometry):
        if not isinstance(geometry, Geometry):
            raise TypeError(
                f"{type(self).__name__}: geometry must be a datasets.geometry Geometry, "
                f"got {geometry!r}"
            )
        if geometry.sampling_config is None:
            raise ValueError(
                f"{type(self).__name__}: geometry {geometry.name!r} has no sampling_config; "
                "call geometry.set_sampling_config(generate_sampling_config({...})) first"
            )
        part = geometry.sampling_config.part(self._geom_type)
        if part is None:
            raise ValueError(
                f"{type(self).__name__}: the sampling_config of geometry {geometry.name!r} has "
                f"no {self._geom_type!r} entry"
            )
        self.geometry = geometry
        self.sampling_config = part
        suffix = {"domain": "_domain_points", "BC": "_BC_points", "IC": "_IC_points"}
        super().__init__(
            f"{geometry.name}_{self._geom_type}",
            [geometry.name + suffix[self._geom_type]],
            self._constraint,
        )
        self.random_merge = part.random_merge

    def _load(self, rng):
        data = self.geometry.sampling(self._geom_type, seed=rng)
        self.columns_list = list(self.geometry.columns_dict[self._geom_type])
        return data


class Equation(_GeometryData):
    """The domain points of a geometry (``sampling("domain")``; constraint ``"Equation"``).

    Columns: ``<name>_domain_points`` (and ``<name>_domain_sdf`` with ``with_sdf``).
    """

    _geom_type = "domain"
    _constraint = "Equation"


class BoundaryBC(_GeometryData):
    """The boundary points of a geometry (``sampling("BC")``; constraint ``"BC"``).

    Columns: ``<name>_BC_points`` (and ``<name>_BC_normal`` with ``with_normal``).
    """

    _geom_type = "BC"
    _constraint = "BC"


class BoundaryIC(_GeometryData):
    """The initial-condition points of a ``GeometryWithTime`` (``sampling("IC")``; constraint
    ``"IC"``). Column: ``<name>_IC_points``."""

    _geom_type = "IC"
    _constraint = "IC"


class ExistedDataConfig:
    """Where and how to read existing data (MindFlow's ``ExistedDataConfig``).

    Args:
        name: the dataset's name (prefix of its columns).
        data_dir: a path or a list of paths, one ``.npy`` file per column, each ``[N, ...]``.
        columns_list: a name or list of names, one per file; the columns are called
            ``<name>_<column>``.
        data_format: ``"npy"``.
        constraint_type: one of ``CONSTRAINT_TYPES``. Default ``"Label"``.
        random_merge: re-permute the rows each time this dataset wraps around in a merge.

    Raises:
        ValueError: a missing file, a count of files not matching the columns, an unknown
            format or constraint type.
    """

    def __init__(
        self,
        name,
        data_dir,
        columns_list,
        data_format="npy",
        constraint_type="Label",
        random_merge=True,
    ):
        if not isinstance(name, str):
            raise TypeError(f"ExistedDataConfig: name must be a str, got {name!r}")
        self.name = name
        paths = [data_dir] if isinstance(data_dir, (str, os.PathLike)) else list(data_dir)
        for path in paths:
            if not os.path.exists(path):
                raise ValueError(f"ExistedDataConfig {name!r}: data file {path!s} does not exist")
        self.data_dir = paths
        columns = [columns_list] if isinstance(columns_list, str) else list(columns_list)
        if len(columns) != len(paths):
            raise ValueError(
                f"ExistedDataConfig {name!r}: {len(paths)} data files for the {len(columns)} "
                f"columns {columns}; expected one file per column"
            )
        self.columns_list = columns
        if data_format not in DATA_FORMATS:
            raise ValueError(
                f"ExistedDataConfig {name!r}: data_format must be one of {DATA_FORMATS}, got "
                f"{data_format!r}"
            )
        self.data_format = data_format
        self.constraint_type = _check_constraint(constraint_type, f"ExistedDataConfig {name!r}")
        if not isinstance(random_merge, bool):
            raise TypeError(f"ExistedDataConfig {name!r}: random_merge must be a bool")
        self.random_merge = random_merge


class ExistedDataset(Data):
    """Rows read from ``.npy`` files (MindFlow's ``ExistedDataset``): one file per column,
    converted to float32 as MindFlow does.

    Args:
        name, data_dir, columns_list, data_format, constraint_type, random_merge: as
            ``ExistedDataConfig`` (used when ``data_config`` is None).
        data_config: an ``ExistedDataConfig``.
    """

    def __init__(
        self,
        name=None,
        data_dir=None,
        columns_list=None,
        data_format="npy",
        constraint_type="Label",
        random_merge=True,
        data_config=None,
    ):
        if data_config is None:
            if not name or not data_dir or not columns_list:
                raise ValueError(
                    "ExistedDataset: without data_config, name, data_dir and columns_list are "
                    f"required; got name={name!r}, data_dir={data_dir!r}, "
                    f"columns_list={columns_list!r}"
                )
            data_config = ExistedDataConfig(
                name, data_dir, columns_list, data_format, constraint_type, random_merge
            )
        if not isinstance(data_config, ExistedDataConfig):
            raise TypeError(
                f"ExistedDataset: data_config must be an ExistedDataConfig, got {data_config!r}"
            )
        self.data_config = data_config
        self.data_dir = data_config.data_dir
        super().__init__(
            data_config.name,
            [f"{data_config.name}_{c}" for c in data_config.columns_list],
            data_config.constraint_type,
        )
        self.random_merge = data_config.random_merge

    def _load(self, rng):
        del rng
        out = []
        for path in self.data_dir:
            try:
                out.append(np.load(path, allow_pickle=False).astype(np.float32))
            except (OSError, ValueError) as exc:
                raise ValueError(
                    f"ExistedDataset {self.name!r}: cannot read {path!s} as a numeric .npy "
                    f"array: {exc}"
                ) from exc
            if out[-1].ndim == 0:
                raise ValueError(
                    f"ExistedDataset {self.name!r}: {path!s} holds a scalar; expected an array "
                    "[N, ...] with one row per sample"
                )
        return tuple(out)


_FROM_GEOM_TYPE = {"domain": Equation, "BC": BoundaryBC, "IC": BoundaryIC}


def _merge_index(length, size, random_merge, rng):
    """Row of a sub-dataset of ``size`` rows used at each of ``length`` merged positions:
    position ``i`` takes row ``perm_c[i % size]`` of cycle ``c = i // size``, ``perm_c`` a fresh
    permutation per cycle (``random_merge``) or the identity.

    Returns:
        int64 array ``[length]``.
    """
    cycles = -(-length // size)
    if random_merge:
        index = np.concatenate([rng.permutation(size) for _ in range(cycles)])
    else:
        index = np.tile(np.arange(size), cycles)
    return index[:length]


class Dataset(Data):
    """Merge geometry point sets and existing data into one dataset (``mindflow.data.Dataset``).

    Args:
        geometry_dict: ``{geometry: ["domain", "BC", "IC"]}`` (any subset, case-insensitive);
            each entry becomes an ``Equation``, ``BoundaryBC`` or ``BoundaryIC`` sub-dataset.
        existed_data_list: an ``ExistedDataConfig`` or a list of them.
        dataset_list: a ``Data`` instance (``Equation``, ``BoundaryBC``, ``BoundaryIC``,
            ``ExistedDataset``) or a list of them.

    The columns are those of ``dataset_list``'s sub-datasets, then the geometries', then the
    existing data's, in order (MindFlow's order).

    Example::

        rect = Rectangle("rect", [0, 0], [1, 1], sampling_config=generate_sampling_config({
            "domain": {"size": 1000}, "BC": {"size": 200, "with_normal": True}}))
        data = Dataset({rect: ["domain", "BC"]})
        train = data.create_dataset(batch_size=100, shuffle=True, seed=0)
        data.get_columns_list()  # ['rect_domain_points', 'rect_BC_points', 'rect_BC_normal']
        for domain, bc, normal in train.create_tuple_iterator():  # core.Tensors [100, 2] each
            ...

    Raises:
        ValueError: all three arguments None, an unknown geometry part.
        TypeError: a key of ``geometry_dict`` that is not a ``Geometry``, an element of the
            lists of the wrong type.
    """

    def __init__(self, geometry_dict=None, existed_data_list=None, dataset_list=None):
        super().__init__()
        if geometry_dict is None and existed_data_list is None and dataset_list is None:
            raise ValueError(
                "Dataset: expected at least one of geometry_dict, existed_data_list and "
                "dataset_list, got none"
            )
        # MindFlow's order: dataset_list, then the geometries, then the existing data
        subsets = []
        if dataset_list is not None:
            if isinstance(dataset_list, Data):
                dataset_list = [dataset_list]
            if not isinstance(dataset_list, (list, tuple)):
                raise TypeError("Dataset: dataset_list must be a Data instance or a list of them")
            for sub in dataset_list:
                if not isinstance(sub, Data) or isinstance(sub, Dataset):
                    raise TypeError(
                        f"Dataset: an element of dataset_list is not a sub-dataset (Equation, "
                        f"BoundaryBC, BoundaryIC, ExistedDataset): {sub!r}"
                    )
                subsets.append(sub)
        if geometry_dict is not None:
            if not isinstance(geometry_dict, dict):
                raise TypeError(f"Dataset: geometry_dict must be a dict, got {geometry_dict!r}")
            for geom, parts in geometry_dict.items():
                if not isinstance(geom, Geometry):
                    raise TypeError(
                        f"Dataset: the keys of geometry_dict must be Geometry instances, got "
                        f"{geom!r}"
                    )
                parts = [parts] if isinstance(parts, str) else parts
                if not isinstance(parts, (list, tuple)):
                    raise TypeError(
                        f"Dataset: geometry_dict[{geom.name!r}] must be a list of parts "
                        f"('domain', 'BC', 'IC'), got {parts!r}"
                    )
                for part in parts:
                    key = _GEOM_TYPES.get(part.lower()) if isinstance(part, str) else None
                    if key is None:
                        raise ValueError(
                            f"Dataset: geometry_dict[{geom.name!r}] has the unknown part "
                            f"{part!r}; expected 'domain', 'BC' or 'IC'"
                        )
                    subsets.append(_FROM_GEOM_TYPE[key](geom))
        if existed_data_list is not None:
            if isinstance(existed_data_list, ExistedDataConfig):
                existed_data_list = [existed_data_list]
            if not isinstance(existed_data_list, (list, tuple)):
                raise TypeError(
                    "Dataset: existed_data_list must be an ExistedDataConfig or a list of them"
                )
            for config in existed_data_list:
                if not isinstance(config, ExistedDataConfig):
                    raise TypeError(
                        f"Dataset: an element of existed_data_list is not an ExistedDataConfig: "
                        f"{config!r}"
                    )
                subsets.append(ExistedDataset(data_config=config))
        self.geometry_dict = geometry_dict
        self.existed_data_list = existed_data_list
        self.dataset_list = dataset_list
        self.all_datasets = subsets
        self.num_dataset = len(subsets)
        self.columns_list = None
        self.dataset_columns_map = {}
        self.column_index_map = {}
        self.dataset_constraint_map = {}
        self._merged = None

    def create_dataset(
        self,
        batch_size=1,
        preprocess_fn=None,
        input_output_columns_map=None,
        shuffle=True,
        drop_remainder=True,
        prebatched_data=False,
        num_parallel_workers=1,
        num_shards=None,
        shard_id=None,
        python_multiprocessing=False,
        sampler=None,
        seed=None,
    ):
        """Sample every sub-dataset and merge them into a pipeline dataset.

        Args:
            batch_size: rows per batch (int >= 1).
            preprocess_fn: a callable or list of callables applied to each row (all columns
                in, ``get_columns_list()`` out) before batching (``Dataset.map``).
            input_output_columns_map: ``{old column: new name or list of names}`` for the
                outputs of ``preprocess_fn`` that change names.
            shuffle: a new random order of the merged rows every epoch (pre-batched: of the
                batches, whose rows are drawn from a permutation once).
            drop_remainder: drop the last, short batch.
            prebatched_data: batch each sub-dataset first (``batch_size`` rows of each per
                merged row; requires ``drop_remainder``), then merge; a merged row is a batch.
            num_parallel_workers, python_multiprocessing: workers of ``preprocess_fn``.
            num_shards, shard_id: read one shard of the merged rows (data-parallel training).
            sampler: a pipeline sampler deciding the order instead of ``shuffle``.
            seed: our addition: seeds the sampling of the points, the merge permutations and
                the shuffle (None: core's generator and the pipeline's seed, so
                ``core.set_seed`` makes everything repeatable).

        Returns:
            a ``datasets`` pipeline dataset (``NumpySlicesDataset``, then ``map`` and ``batch``)
            whose rows have the columns ``get_columns_list()``; each column is batched to
            ``[batch_size, ...]``.

        Raises:
            ValueError: ``prebatched_data`` without ``drop_remainder``, a batch larger than a
                pre-batched sub-dataset, duplicate column names, bad argument types.
        """
        for value, what in (
            (prebatched_data, "prebatched_data"),
            (drop_remainder, "drop_remainder"),
            (shuffle, "shuffle"),
        ):
            if not isinstance(value, bool):
                raise TypeError(f"Dataset.create_dataset: {what} must be a bool, got {value!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
            raise TypeError(
                f"Dataset.create_dataset: batch_size must be an int, got {batch_size!r}"
            )
        if batch_size < 1:
            raise ValueError(f"Dataset.create_dataset: batch_size must be >= 1, got {batch_size}")
        if prebatched_data and not drop_remainder:
            raise ValueError(
                "Dataset.create_dataset: prebatched_data=True needs drop_remainder=True (a "
                "pre-batched sub-dataset has only full batches)"
            )
        if not self.all_datasets:
            raise ValueError("Dataset.create_dataset: there is no sub-dataset to merge")
        from ..pipeline import NumpySlicesDataset  # the pipeline sits beside geometry

        root = make_rng(seed)
        columns = []
        for sub in self.all_datasets:
            (sub_rng,) = root.spawn(1)
            sub._initialization(
                batch_size=batch_size if prebatched_data else 1,
                shuffle=shuffle if prebatched_data else False,
                seed=sub_rng,
            )
            columns += sub.columns_list
        duplicates = sorted({c for c in columns if columns.count(c) > 1})
        if duplicates:
            raise ValueError(
                f"Dataset.create_dataset: the column names {duplicates} occur in more than one "
                "sub-dataset (two geometries with the same name?); rename one with set_name"
            )
        self.columns_list = columns
        self.dataset_columns_map = {sub.name: list(sub.columns_list) for sub in self.all_datasets}
        self.dataset_constraint_map = {sub.name: sub.constraint_type for sub in self.all_datasets}
        self.column_index_map = {c: i for i, c in enumerate(columns)}
        self._merged = self._merge(root)
        dataset = NumpySlicesDataset(
            dict(zip(columns, self._merged)),
            column_names=columns,
            shuffle=None if sampler is not None else shuffle,
            sampler=sampler,
            num_shards=num_shards,
            shard_id=shard_id,
            seed=self._pipeline_seed(seed, root),
        )
        if preprocess_fn:
            input_columns = list(self.columns_list)
            if input_output_columns_map is not None:
                if not isinstance(input_output_columns_map, dict):
                    raise TypeError(
                        "Dataset.create_dataset: input_output_columns_map must be a dict, got "
                        f"{input_output_columns_map!r}"
                    )
                self._rename_columns(input_output_columns_map)
            dataset = dataset.map(
                operations=preprocess_fn,
                input_columns=input_columns,
                output_columns=list(self.columns_list),
                num_parallel_workers=num_parallel_workers,
                python_multiprocessing=python_multiprocessing,
            )
            dataset = dataset.project(list(self.columns_list))
        if not prebatched_data:
            dataset = dataset.batch(batch_size, drop_remainder=drop_remainder)
        return dataset

    @staticmethod
    def _pipeline_seed(seed, root):
        # an int seed also fixes the pipeline's shuffle; None leaves it to the pipeline's
        # config (datasets.config.set_seed, then core.set_seed)
        if seed is None:
            return None
        return int(root.integers(0, 2**31 - 1))

    def _merge(self, rng):
        """The merged columns: each sub-dataset's rows (or pre-batched blocks) at every merged
        position, as in MindFlow's ``_IterableDatasets`` (see the module docstring)."""
        length = max(len(sub) for sub in self.all_datasets)
        merged = []
        for sub in self.all_datasets:
            index = _merge_index(length, len(sub), sub.random_merge, rng)  # [length]
            if sub.batch_size > 1:
                block = np.arange(sub.batch_size)
                rows = sub._order[index[:, None] * sub.batch_size + block]  # [length, batch]
            else:
                rows = sub._order[index]
            merged += [column[rows] for column in sub.data]
        return merged

    def _rename_columns(self, mapping):
        """Apply ``input_output_columns_map`` to the column lists (a value may be a list)."""
        new_map = {}
        for sub in self.all_datasets:
            names = []
            for column in self.dataset_columns_map[sub.name]:
                new = mapping.get(column, column)
                names += list(new) if isinstance(new, (list, tuple)) else [new]
            new_map[sub.name] = names
        self.dataset_columns_map = new_map
        self.columns_list = [c for names in new_map.values() for c in names]
        self.column_index_map = {c: i for i, c in enumerate(self.columns_list)}

    def get_columns_list(self):
        """The merged dataset's column names (after ``create_dataset``).

        Raises:
            ValueError: ``create_dataset`` was not called yet.
        """
        if not self.columns_list:
            raise ValueError("Dataset.get_columns_list: call create_dataset() first")
        return list(self.columns_list)

    def set_constraint_type(self, constraint_type="Equation"):
        """Set the constraint type of every sub-dataset (a str) or of some (a dict
        ``{sub-dataset: type}``)."""
        if isinstance(constraint_type, str):
            for sub in self.all_datasets:
                sub.set_constraint_type(constraint_type)
        elif isinstance(constraint_type, dict):
            for sub, kind in constraint_type.items():
                if sub not in self.all_datasets:
                    raise ValueError(
                        f"Dataset.set_constraint_type: {sub!r} is not a sub-dataset; they are "
                        f"{[s.name for s in self.all_datasets]}"
                    )
                sub.set_constraint_type(kind)
        else:
            raise TypeError(
                f"Dataset.set_constraint_type: expected a str or a dict, got {constraint_type!r}"
            )
        self.dataset_constraint_map = {s.name: s.constraint_type for s in self.all_datasets}

    def __len__(self):
        """Number of merged rows (pre-batched: of batches) before the pipeline's ``batch``."""
        if self._merged is None:
            raise ValueError("Dataset: call create_dataset() before len()")
        return len(self._merged[0])

    def __getitem__(self, index):
        """Merged row ``index``: a tuple with one array per column."""
        if self._merged is None:
            raise ValueError("Dataset: call create_dataset() before indexing")
        return tuple(column[index] for column in self._merged)
