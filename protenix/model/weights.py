"""Protenix weights: read official ``.pt`` checkpoints without torch or pickle code, load by name.

``protenix.load_weights(module, source)`` copies a flat state dict (Protenix's parameter
names, torch's ``[out, in]`` Linear layout) into any cell of our module tree. Sources:

- a PyTorch checkpoint written by ``torch.save`` (the zip format of torch >= 1.6): an official
  Protenix release file (``{"model": state_dict, ...}``, names often under ``module.``) or a
  plain saved ``state_dict``;
- our HDF5 checkpoint (``core.save_checkpoint``; what ``protenix convert`` writes);
- a ``.npz`` file, or a dict of numpy arrays / core Tensors in memory.

The torch zip format (``torch/serialization.py``): a zip archive whose members live under
one folder ``<archive>/``: ``data.pkl`` (a protocol-2 pickle of the saved object), one raw
little-endian buffer per storage in ``data/<key>``, ``byteorder`` ("little"/"big"; absent in
older files: little) and ``version``. Inside ``data.pkl`` a tensor is the call
``torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
backward_hooks[, metadata])`` whose ``storage`` is a *persistent id*
``("storage", torch.FloatStorage, key, location, numel)``; a Parameter wraps that in
``torch._utils._rebuild_parameter(tensor, requires_grad, backward_hooks)``.

Safety: ``pickle.load`` of an untrusted file can run any callable the file names. The reader
below is a :class:`pickle.Unpickler` whose ``find_class`` resolves only the few names above
(to our own numpy rebuilders, never torch's) plus ``collections.OrderedDict``; anything else
stops the load with an error naming the global, before it is called. Storage reads are
bounds-checked, so a hostile offset/stride can not read outside the stored buffer.
"""

import io
import os
import pickle
import zipfile
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import numpy as np

from diffsci.core import dtypes as _dt
from diffsci.core.serialization import load_checkpoint as _load_h5
from diffsci.core.serialization import load_param_into_net
from diffsci.core.tensor import Tensor

__all__ = [
    "LoadResult",
    "UnsafeCheckpointError",
    "WeightsError",
    "load_weights",
    "read_state_dict",
    "read_torch_checkpoint",
]


class UnsafeCheckpointError(pickle.UnpicklingError):
    """A ``.pt`` pickle that names a global outside the allowed tensor/storage rebuilders."""


class WeightsError(ValueError):
    """A checkpoint that can not be read, or whose names/shapes do not fit the module."""


LoadResult = namedtuple("LoadResult", ["missing_keys", "unexpected_keys"])


# torch storage classes -> the numpy dtype of their elements (``torch/storage.py``)
_STORAGE_DTYPES = {
    "FloatStorage": np.dtype(np.float32),
    "DoubleStorage": np.dtype(np.float64),
    "HalfStorage": np.dtype(np.float16),
    "BFloat16Storage": _dt.bfloat16,
    "LongStorage": np.dtype(np.int64),
    "IntStorage": np.dtype(np.int32),
    "ShortStorage": np.dtype(np.int16),
    "CharStorage": np.dtype(np.int8),
    "ByteStorage": np.dtype(np.uint8),
    "BoolStorage": np.dtype(np.bool_),
}


class _StorageType:
    """What ``find_class`` returns for a torch storage class: only its element dtype."""

    __slots__ = ("dtype", "name")

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype

    def __repr__(self):
        return f"<torch storage type {self.name}>"


class _Storage:
    """A storage read from the archive: a flat numpy array of its elements."""

    __slots__ = ("array", "key")

    def __init__(self, key, array):
        self.key, self.array = key, array


def _check_int_tuple(what, value, where):
    if not isinstance(value, tuple) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value
    ):
        raise WeightsError(f"{where}: tensor {what} {value!r} is not a tuple of non-negative ints")
    return value


def _make_rebuild_tensor(where):
    def rebuild_tensor(storage, storage_offset, size, stride, requires_grad, hooks, *metadata):
        """``torch._utils._rebuild_tensor_v2`` done with numpy: the C-contiguous array of
        ``storage[offset + sum(i_k * stride_k)]`` (a view for a contiguous block, else a copy),
        its index range checked first."""
        if not isinstance(storage, _Storage):
            raise WeightsError(f"{where}: a tensor's storage is a {type(storage).__name__}")
        if not isinstance(storage_offset, int) or storage_offset < 0:
            raise WeightsError(f"{where}: tensor storage offset {storage_offset!r} is invalid")
        size = _check_int_tuple("size", size, where)
        stride = _check_int_tuple("stride", stride, where)
        if len(size) != len(stride):
            raise WeightsError(f"{where}: tensor size {size} and stride {stride} differ in rank")
        flat = storage.array
        if 0 in size:
            return np.zeros(size, flat.dtype)
        last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= flat.size:
            raise WeightsError(
                f"{where}: tensor of size {size}, stride {stride}, offset {storage_offset} reads "
                f"element {last} of storage {storage.key!r}, which holds {flat.size}"
            )
        if stride == _contiguous_strides(size):
            # a C-order block of the storage: a view (of the copy-on-write memory map when
            # the member is stored uncompressed, so a 1.5 GB checkpoint is not read twice)
            count = int(np.prod(size))
            return flat[storage_offset : storage_offset + count].reshape(size)
        view = np.lib.stride_tricks.as_strided(
            flat[storage_offset:],
            shape=size,
            strides=tuple(s * flat.itemsize for s in stride),
            writeable=False,
        )
        return np.array(view, copy=True, order="C")

    return rebuild_tensor


def _contiguous_strides(size):
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _rebuild_parameter(data, requires_grad, hooks, *state):
    """``torch._utils._rebuild_parameter[_with_state]``: the tensor itself."""
    return data


class _RestrictedUnpickler(pickle.Unpickler):
    """Unpickles torch's ``data.pkl`` with an allow-list of globals; see the module docstring."""

    def __init__(self, file, archive, prefix, where, path=None):
        super().__init__(file)
        self._archive, self._prefix, self._where, self._path = archive, prefix, where, path
        self._storages = {}
        self._byteorder = "little"
        name = f"{prefix}byteorder"
        if name in archive.namelist():
            self._byteorder = archive.read(name).decode("ascii", "replace").strip()
            if self._byteorder not in ("little", "big"):
                raise WeightsError(f"{where}: unknown byteorder {self._byteorder!r}")
        self._allowed = {
            ("collections", "OrderedDict"): OrderedDict,
            ("torch._utils", "_rebuild_tensor_v2"): _make_rebuild_tensor(where),
            ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
            ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
            ("torch.storage", "UntypedStorage"): _StorageType("UntypedStorage", np.dtype(np.uint8)),
            ("torch", "UntypedStorage"): _StorageType("UntypedStorage", np.dtype(np.uint8)),
        }
        for cls, dtype in _STORAGE_DTYPES.items():
            self._allowed["torch", cls] = _StorageType(cls, dtype)

    def find_class(self, module, name):
        try:
            return self._allowed[module, name]
        except KeyError:
            raise UnsafeCheckpointError(
                f"{self._where}: refusing to unpickle the global '{module}.{name}': a torch "
                "checkpoint is read without running pickle code, and only tensor/storage "
                "rebuilders (torch._utils._rebuild_tensor_v2, _rebuild_parameter, torch "
                "*Storage classes) and collections.OrderedDict are allowed"
            ) from None

    def persistent_load(self, pid):
        # ("storage", storage_type, key, location, numel), torch/serialization.py::_load
        if (
            not isinstance(pid, tuple)
            or len(pid) != 5
            or pid[0] != "storage"
            or not isinstance(pid[1], _StorageType)
            or not isinstance(pid[2], str)
            or not isinstance(pid[4], int)
        ):
            raise UnsafeCheckpointError(
                f"{self._where}: unexpected persistent id {pid!r}; expected ('storage', "
                "<torch storage type>, key, location, numel)"
            )
        _, stype, key, _location, numel = pid
        cached = self._storages.get(key)
        if cached is not None and cached.array.dtype == stype.dtype:
            return cached
        member = f"{self._prefix}data/{key}"
        try:
            info = self._archive.getinfo(member)
        except KeyError:
            raise WeightsError(f"{self._where}: storage {key!r} ({member}) is missing") from None
        dtype = stype.dtype
        if self._byteorder == "big" and dtype.itemsize > 1:
            dtype = dtype.newbyteorder(">")
        if info.file_size != numel * dtype.itemsize:
            raise WeightsError(
                f"{self._where}: storage {key!r} has {info.file_size} bytes, expected {numel} "
                f"{stype.name} elements of {dtype.itemsize} bytes"
            )
        offset = self._data_offset(info)
        if offset is not None and numel > 0:
            # copy-on-write map: writable arrays, the file never changes, pages read lazily
            array = np.memmap(self._path, dtype=dtype, mode="c", offset=offset, shape=(numel,))
        else:
            array = np.frombuffer(self._archive.read(member), dtype=dtype)
        if dtype.byteorder == ">":
            array = array.astype(dtype.newbyteorder("="))
        storage = _Storage(key, array)
        self._storages[key] = storage
        return storage

    def _data_offset(self, info):
        """Where an uncompressed member's bytes start in the file (after its local header:
        30 bytes, then the name and extra field, whose lengths are at bytes 26-29), or None
        when it is compressed or the archive is not a file on disk."""
        if self._path is None or info.compress_type != zipfile.ZIP_STORED:
            return None
        with open(self._path, "rb") as f:
            f.seek(info.header_offset)
            header = f.read(30)
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise WeightsError(f"{self._where}: bad zip local header for {info.filename}")
        n_name = int.from_bytes(header[26:28], "little")
        n_extra = int.from_bytes(header[28:30], "little")
        return info.header_offset + 30 + n_name + n_extra


def read_torch_checkpoint(path):
    """Unpickle a zip-format ``torch.save`` file with numpy arrays in place of tensors.

    Args:
        path: the ``.pt``/``.pth`` file.

    Returns:
        The saved object (dicts, lists, numbers, strings; every tensor a C-contiguous numpy
        array of its dtype: float32, float16, ``ml_dtypes.bfloat16``, ints, bool). Tensors
        that are contiguous blocks of a storage are views of a copy-on-write memory map of
        the file (tensors sharing a torch storage share memory, as in torch); writing to them
        never changes the file.

    Raises:
        UnsafeCheckpointError: the pickle names a global that is not allowed (nothing it
            names is ever called).
        WeightsError: not a zip torch checkpoint, or damaged storages.
    """
    path = os.fspath(path)
    where = f"read_torch_checkpoint({path!r})"
    if not zipfile.is_zipfile(path):
        raise WeightsError(
            f"{where}: not a zip archive; only torch.save's zip format (torch >= 1.6) is read, "
            "not the legacy format (_use_new_zipfile_serialization=False)"
        )
    with zipfile.ZipFile(path) as archive:
        pkls = [n for n in archive.namelist() if n == "data.pkl" or n.endswith("/data.pkl")]
        if len(pkls) != 1:
            raise WeightsError(
                f"{where}: a torch checkpoint has exactly one data.pkl, found {len(pkls)}"
            )
        prefix = pkls[0][: -len("data.pkl")]
        payload = archive.read(pkls[0])
        unpickler = _RestrictedUnpickler(io.BytesIO(payload), archive, prefix, where, path)
        try:
            return unpickler.load()
        except (UnsafeCheckpointError, WeightsError):
            raise
        except Exception as err:  # a damaged pickle: bad opcodes, wrong rebuild arguments...
            raise WeightsError(
                f"{where}: data.pkl is damaged or not a torch checkpoint "
                f"({type(err).__name__}: {err})"
            ) from None


def _to_numpy(name, value, where):
    if isinstance(value, Tensor):
        return value.asnumpy()
    if isinstance(value, np.ndarray):
        return value
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        # a torch tensor handed over in memory (torch is the caller's, not imported here)
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            # numpy has no bfloat16: widen to float32 through the tensor's own method (exact)
            # and narrow with ml_dtypes; torch is never imported here
            return value.float().numpy().astype(_dt.bfloat16)
        return value.numpy()
    raise WeightsError(f"{where}: entry {name!r} is a {type(value).__name__}, not an array")


def _is_state_dict(obj):
    return isinstance(obj, Mapping) and all(isinstance(k, str) for k in obj)


def read_state_dict(source, prefix=None):
    """A flat ``{name: numpy array}`` from any supported source.

    Args:
        source: a path (torch ``.pt`` zip, HDF5 checkpoint of ``core.save_checkpoint``,
            ``.npz``) or a mapping of arrays/Tensors. A checkpoint dict with a ``"model"``
            entry (Protenix's training and release files) yields that entry.
        prefix: keep only names starting with it, with it removed (``"pairformer_stack."``
            to load one submodule out of a full-model checkpoint).

    Returns:
        ``OrderedDict`` name -> numpy array, ``module.`` (DistributedDataParallel) prefixes
        stripped.
    """
    where = "load_weights"
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        where = f"load_weights({path!r})"
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{where}: no such file")
        import h5py

        if h5py.is_hdf5(path):
            obj = {k: v.asnumpy() for k, v in _load_h5(path).items()}
        elif zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                names = z.namelist()
            if any(n == "data.pkl" or n.endswith("/data.pkl") for n in names):
                obj = read_torch_checkpoint(path)
            elif names and all(n.endswith(".npy") for n in names):
                with np.load(path, allow_pickle=False) as npz:
                    obj = {k: npz[k] for k in npz.files}
            else:
                raise WeightsError(f"{where}: a zip archive that is neither torch's nor .npz")
        else:
            raise WeightsError(
                f"{where}: not a torch zip checkpoint, an HDF5 checkpoint or a .npz file "
                "(legacy non-zip torch.save files are not read: re-save with torch >= 1.6)"
            )
    else:
        obj = source
    if _is_state_dict(obj) and isinstance(obj.get("model"), Mapping):
        obj = obj["model"]
    if not _is_state_dict(obj):
        raise WeightsError(
            f"{where}: expected a state dict (name -> tensor) or a dict with one under "
            f"'model', got a {type(obj).__name__}"
        )
    out = OrderedDict()
    for name, value in obj.items():
        key = name
        while key.startswith("module."):
            key = key[len("module.") :]
        if prefix:
            if not key.startswith(prefix):
                continue
            key = key[len(prefix) :]
        if key in out:
            raise WeightsError(f"{where}: the name {key!r} appears twice after stripping")
        out[key] = _to_numpy(name, value, where)
    return out


def load_weights(module, source, strict=True, prefix=None):
    """Load a Protenix state dict into ``module`` (any cell of the ``protenix`` tree), by name.

    Names are Protenix's state-dict names relative to ``module`` (``tri_mul_out.linear_a_p.
    weight``); values keep torch's layout (Linear ``[out, in]``). A floating value of another
    floating dtype (a bfloat16 or float16 checkpoint into a float32 module) is cast to the
    parameter's dtype. Nothing is written unless every checked entry fits.

    Args:
        module: a ``core.nn.Cell``.
        source: see :func:`read_state_dict` (``.pt``, HDF5, ``.npz`` path, or a dict).
        strict: when True, a parameter with no entry or an entry with no parameter is an error.
        prefix: load the entries under this name prefix (stripped) only.

    Returns:
        ``LoadResult(missing_keys, unexpected_keys)`` (both empty when ``strict``).

    Raises:
        WeightsError: one error listing every missing, unexpected and wrongly shaped (or
            wrongly typed) key; shapes are always checked, names only when ``strict``.
        UnsafeCheckpointError: a ``.pt`` pickle naming a disallowed global.
    """
    state = read_state_dict(source, prefix=prefix)
    params = OrderedDict(module.parameters_and_names())
    missing = [n for n in params if n not in state]
    unexpected = [n for n in state if n not in params]
    bad, ready = [], OrderedDict()
    for name, p in params.items():
        if name not in state:
            continue
        arr = state[name]
        if tuple(arr.shape) != tuple(p.shape):
            bad.append(f"{name}: checkpoint {list(arr.shape)} vs module {list(p.shape)}")
            continue
        if arr.dtype != p.dtype:
            if _dt.is_floating(arr.dtype) and _dt.is_floating(p.dtype):
                arr = arr.astype(p.dtype)
            else:
                bad.append(f"{name}: checkpoint dtype {arr.dtype} vs module {p.dtype.name}")
                continue
        ready[name] = Tensor(np.ascontiguousarray(arr))
    if bad or (strict and (missing or unexpected)):
        lines = [f"load_weights into {type(module).__name__}: the state dict does not fit"]
        if strict and missing:
            lines.append(f"  missing keys ({len(missing)}): {_listing(missing)}")
        if strict and unexpected:
            lines.append(f"  unexpected keys ({len(unexpected)}): {_listing(unexpected)}")
        if bad:
            lines.append(f"  wrong shape or dtype ({len(bad)}): {bad}")
        hint = _prefix_hint(params, state) if strict and missing else None
        if hint is not None:
            lines.append(
                f"  every missing key is in the checkpoint under {hint!r}: load with "
                f"prefix={hint!r} to take that submodule's entries"
            )
        raise WeightsError("\n".join(lines))
    load_param_into_net(module, ready)
    return LoadResult(missing, unexpected)


def _listing(names, limit=50):
    """``names`` for an error message, the first ``limit`` of a long list and how many more."""
    if len(names) <= limit:
        return str(names)
    return f"{names[:limit]} ... and {len(names) - limit} more"


def _prefix_hint(params, state):
    """The one prefix under which the checkpoint holds every parameter name of the module
    (``"msa_module."`` for a full-model file loaded into an MSAModule), else None."""
    first = next(iter(params), None)
    if first is None:
        return None
    candidates = {k[: -len(first)] for k in state if k.endswith("." + first)}
    for prefix in sorted(candidates):
        if all(prefix + n in state for n in params):
            return prefix
    return None
