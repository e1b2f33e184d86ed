"""Checkpoints: named tensors in an HDF5 file (``core.save_checkpoint`` / ``core.load_checkpoint``).

File layout (format version 1)::

    /                      attrs: format="diffsci-checkpoint", format_version=1
    /parameters/<key>      one dataset per tensor, in saving order
                           attrs: name (the tensor's name), dtype (e.g. "float32",
                           "bfloat16", "complex64"), requires_grad (bool: the
                           Parameter's flag; True for other tensors, False for
                           ``append_dict`` values)

``<key>`` is the name with ``%`` and ``/`` escaped (HDF5 reserves ``/``); readers use the
``name`` attribute. bfloat16 is stored as its uint16 bit pattern; complex numbers use h5py's
native (r, i) compound type. A save writes a temporary file in the target directory and
renames it over the target only when complete, so a failed save never damages an existing
checkpoint.
"""

import os
from collections import OrderedDict

import numpy as np

from . import dtypes as _dt
from .atomic import atomic_path
from . import parallel as _parallel
from . import tree as _tree
from .ckpt_mindspore import (
    MalformedCheckpoint,
    read_mindspore_checkpoint,
    write_mindspore_checkpoint,
)
from .tensor import Parameter, Tensor

__all__ = ["CheckpointError", "load_checkpoint", "load_param_into_net", "save_checkpoint"]

FORMAT = "diffsci-checkpoint"
FORMAT_VERSION = 1


class CheckpointError(ValueError):
    """A file that is not a readable diffsci checkpoint, or a checkpoint that does not fit."""


def _h5py():
    import h5py

    return h5py


def _key(name):
    key = name.replace("%", "%25").replace("/", "%2F")
    if key in ("", ".", ".."):
        key = key.replace(".", "%2E") or "%00"
    return key


def _to_numpy(name, value):
    """A host numpy array for a checkpoint entry (Tensor, Parameter, numpy array, Python scalar)."""
    if isinstance(value, Tensor):
        arr = value.asnumpy()
    elif isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
    elif isinstance(value, (bool, int, float, complex)):
        arr = np.asarray(value)  # bool, int64, float64, complex128: no precision lost
    else:
        raise TypeError(
            f"save_checkpoint: entry {name!r} is a {type(value).__name__}; expected a Tensor, a "
            "numpy array or a Python number"
        )
    if arr.dtype != _dt.bfloat16 and (arr.dtype == object or arr.dtype.kind in "OUSV"):
        raise TypeError(
            f"save_checkpoint: entry {name!r} has dtype {arr.dtype}, which is not numeric"
        )
    return arr


def _entries(save_obj):
    """``[(name, value, requires_grad)]`` from a Cell, a state pytree (a dict, a registered
    dataclass or a NamedTuple of tensors, nested: names join the keys, ``"flux.rho"``), or a
    list of Cells / dicts / MindSpore-style ``{"name": ..., "data": ...}`` dicts."""
    from .nn.cell import Cell

    if isinstance(save_obj, Cell):
        return [(n, p, p.requires_grad) for n, p in save_obj.parameters_and_names()]
    if isinstance(save_obj, dict) or _is_state(save_obj):
        return [
            (_path_name(path), v, getattr(v, "requires_grad", True))
            for path, v in _tree.tree_flatten_with_path(save_obj)[0]
        ]
    if isinstance(save_obj, (list, tuple)):
        out = []
        for i, item in enumerate(save_obj):
            if (
                isinstance(item, dict)
                and set(item) >= {"name", "data"}
                and not isinstance(item["name"], Tensor)
            ):
                v = item["data"]
                out.append((str(item["name"]), v, getattr(v, "requires_grad", True)))
            elif isinstance(item, (Cell, dict)):
                out.extend(_entries(item))
            else:
                raise TypeError(
                    f"save_checkpoint: list item {i} is a {type(item).__name__}; expected a Cell, a "
                    "dict of tensors or a {'name': ..., 'data': ...} dict"
                )
        return out
    raise TypeError(
        f"save_checkpoint: cannot save a {type(save_obj).__name__}; pass a Cell, a dict of "
        "tensors or a list of those"
    )


def _is_state(obj):
    return _tree.is_registered(type(obj)) or (isinstance(obj, tuple) and hasattr(obj, "_fields"))


def _path_name(path):
    return ".".join(map(str, path))


def _restore(path, target, values):
    """``target``'s structure with every leaf replaced by the checkpoint value of its name
    (checked against the leaf's shape and dtype; a Python number comes back as one)."""
    named, treedef = _tree.tree_flatten_with_path(target)
    leaves = []
    for keys, like in named:
        name = _path_name(keys)
        if name not in values:
            raise CheckpointError(f"load_checkpoint: {path!r} has no entry {name!r} of the target")
        arr = values[name]._value
        if isinstance(like, (Tensor, np.ndarray)):
            if tuple(arr.shape) != tuple(like.shape) or arr.dtype != like.dtype:
                raise CheckpointError(
                    f"load_checkpoint: entry {name!r} is {arr.dtype}{list(arr.shape)} in "
                    f"{path!r} but {like.dtype}{list(like.shape)} in the target"
                )
            leaves.append(Tensor._wrap(arr) if isinstance(like, Tensor) else np.asarray(arr))
        else:
            leaves.append(type(like)(arr.item()) if isinstance(like, (bool, int, float)) else arr)
    return _tree.unflatten(treedef, leaves)


def save_checkpoint(save_obj, ckpt_file_name, append_dict=None, format=None):
    """Write named tensors to an HDF5 checkpoint (or a MindSpore ``.ckpt``), atomically.

    Args:
        save_obj: a Cell (its ``parameters_and_names()``; for an optimizer that is its state),
            a dict ``{name: Tensor | ndarray | number}``, a state pytree (nested dicts,
            NamedTuples, dataclasses registered with ``core.tree.register_dataclass``; entry
            names join the keys: ``"flux.rho"``), or a list of Cells / dicts (e.g.
            ``[net, optimizer]``); names must be unique across the list.
        ckpt_file_name: path of the file (``.ckpt.h5`` by convention). As in MindSpore, a
            name that ends neither in ``.ckpt`` nor in ``.h5``/``.hdf5`` gets ``.ckpt`` appended
            (MindFlow's scripts save ``f"{name}_epoch{epoch}"`` and load ``...ckpt``);
            ``load_checkpoint`` reads either format whatever the suffix.
        append_dict: extra ``{name: int | float | bool}`` values (e.g. ``epoch_num``) saved as
            0-d tensors and returned by ``load_checkpoint`` like the others.
        format: None or ``"h5"`` (default): this module's HDF5 layout. ``"ckpt"``: MindSpore's
            protobuf ``.ckpt`` (see ``core.ckpt_mindspore``), readable by ``mindspore.load_checkpoint``;
            it stores names, shapes, dtypes and values, not ``requires_grad``.

    In data parallel mode (``core.set_auto_parallel_context``) with more than one process,
    rank 0 alone writes (the parameters are replicated) and every rank returns once the file
    is complete; it loads on any number of processes.

    Raises:
        TypeError / ValueError: a value that cannot be saved or a repeated name; the file
            that existed before is left untouched.
    """
    if format not in (None, "h5", "hdf5", "ckpt"):
        raise ValueError(f"save_checkpoint: format must be None, 'h5' or 'ckpt', got {format!r}")
    rank0 = _parallel.checkpoint_writer()  # data parallel: rank 0 writes, every rank waits
    if rank0 is not None:
        return rank0(save_checkpoint, save_obj, ckpt_file_name, append_dict, format)
    entries = _entries(save_obj)
    if append_dict:
        if not isinstance(append_dict, dict):
            raise TypeError(
                f"save_checkpoint: append_dict must be a dict, got {type(append_dict).__name__}"
            )
        for k, v in append_dict.items():
            if not isinstance(v, (bool, int, float, np.generic, np.ndarray, Tensor)):
                raise TypeError(
                    f"save_checkpoint: append_dict[{k!r}] is a {type(v).__name__}; expected a number"
                )
            entries.append((str(k), v, False))
    seen = set()
    for name, _, _ in entries:
        if name in seen:
            raise ValueError(
                f"save_checkpoint: the name {name!r} appears twice (e.g. a network parameter and an "
                "optimizer state with the same name)"
            )
        seen.add(name)
    path = os.fspath(ckpt_file_name)
    if not path.endswith((".ckpt", ".h5", ".hdf5")):
        path += ".ckpt"  # MindSpore's rule, so ported scripts find their files
    if format == "ckpt":
        write_mindspore_checkpoint(path, [(n, _to_numpy(n, v)) for n, v, _ in entries])
        return
    h5py = _h5py()
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            f"save_checkpoint: directory {directory!r} of {path!r} does not exist"
        )
    with atomic_path(path) as tmp, h5py.File(tmp, "w", track_order=True) as f:
        f.attrs["format"] = FORMAT
        f.attrs["format_version"] = FORMAT_VERSION
        group = f.create_group("parameters", track_order=True)
        for name, value, requires_grad in entries:
            arr = _to_numpy(name, value)
            dtype_name = "bfloat16" if arr.dtype == _dt.bfloat16 else arr.dtype.name
            if arr.dtype == _dt.bfloat16:
                arr = arr.view(np.uint16)
            ds = group.create_dataset(_key(name), data=arr)
            ds.attrs["name"] = name
            ds.attrs["dtype"] = dtype_name
            ds.attrs["requires_grad"] = bool(requires_grad)


def _open_checkpoint(path):
    h5py = _h5py()
    if not os.path.exists(path):
        raise FileNotFoundError(f"load_checkpoint: checkpoint file {path!r} does not exist")
    if not h5py.is_hdf5(path):
        raise CheckpointError(
            f"load_checkpoint: {path!r} is not an HDF5 file, so not a diffsci checkpoint"
        )
    try:
        f = h5py.File(path, "r")
    except OSError as err:
        raise CheckpointError(
            f"load_checkpoint: {path!r} cannot be read as HDF5 (corrupt?): {err}"
        ) from None
    fmt = f.attrs.get("format")
    if isinstance(fmt, bytes):
        fmt = fmt.decode()
    if fmt != FORMAT or "parameters" not in f:
        f.close()
        raise CheckpointError(
            f"load_checkpoint: {path!r} is an HDF5 file but not a diffsci checkpoint (no "
            f"format={FORMAT!r} attribute)"
        )
    version = int(f.attrs.get("format_version", -1))
    if not 1 <= version <= FORMAT_VERSION:
        f.close()
        raise CheckpointError(
            f"load_checkpoint: {path!r} has checkpoint format version {version}; this diffsci "
            f"reads versions 1..{FORMAT_VERSION}"
        )
    return f


def _attr_str(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def load_checkpoint(
    ckpt_file_name,
    net=None,
    strict_load=False,
    filter_prefix=None,
    choice_func=None,
    *,
    target=None,
):
    """Read a checkpoint written by :func:`save_checkpoint`, or a MindSpore ``.ckpt`` file.

    The format is found from the content: HDF5 files are read as diffsci checkpoints, other
    files as MindSpore's protobuf checkpoints (no MindSpore needed; values come back with
    ``requires_grad=True``, string entries as ``str``).

    Args:
        ckpt_file_name: path of the file.
        net: when given, the values are also loaded into it (:func:`load_param_into_net`).
        strict_load: passed to :func:`load_param_into_net`.
        filter_prefix: a string or tuple of strings; names starting with one are skipped.
        choice_func: ``choice_func(name) -> bool``; names for which it is False are skipped.
        target: a state pytree like the one saved (its static fields are kept): the result is
            that structure filled with the file's values, each checked against the target
            leaf's shape and dtype.

    Returns:
        ``{name: Parameter}`` in saving order (on the current device, with the saved dtype
        and ``requires_grad``); with ``target``, a pytree like ``target``.

    Raises:
        FileNotFoundError: the file does not exist.
        CheckpointError: neither a diffsci checkpoint nor a MindSpore ``.ckpt``, or unreadable
            data.
    """
    path = os.fspath(ckpt_file_name)
    if isinstance(filter_prefix, str):
        filter_prefix = (filter_prefix,)
    out = OrderedDict()
    if os.path.isfile(path) and not _h5py().is_hdf5(path):
        try:
            entries = read_mindspore_checkpoint(path)
        except MalformedCheckpoint as err:
            raise CheckpointError(
                f"load_checkpoint: {path!r} is not an HDF5 file (a diffsci checkpoint) nor a "
                f"readable MindSpore .ckpt file ({err}); encrypted MindSpore checkpoints are not "
                "supported"
            ) from None
        for name, value in entries.items():
            if filter_prefix and name.startswith(tuple(filter_prefix)):
                continue
            if choice_func is not None and not choice_func(name):
                continue
            out[name] = value if isinstance(value, str) else Parameter(value, name=name)
        if net is not None:
            load_param_into_net(net, out, strict_load=strict_load)
        return out if target is None else _restore(path, target, out)
    with _open_checkpoint(path) as f:
        try:
            for key in f["parameters"]:
                ds = f["parameters"][key]
                name = _attr_str(ds.attrs.get("name", key))
                if filter_prefix and name.startswith(tuple(filter_prefix)):
                    continue
                if choice_func is not None and not choice_func(name):
                    continue
                dtype_name = _attr_str(ds.attrs["dtype"])
                arr = ds[()]
                arr = np.asarray(arr)
                if dtype_name == "bfloat16":
                    arr = arr.view(_dt.bfloat16)
                elif arr.dtype.name != dtype_name:
                    arr = arr.astype(np.dtype(dtype_name))
                requires_grad = bool(ds.attrs.get("requires_grad", True))
                out[name] = Parameter(arr, name=name, requires_grad=requires_grad)
        except (KeyError, OSError, TypeError) as err:
            raise CheckpointError(f"load_checkpoint: {path!r} is damaged: {err}") from None
    if net is not None:
        load_param_into_net(net, out, strict_load=strict_load)
    return out if target is None else _restore(path, target, out)


def _mindspore_conv1d_layout(ckpt_shape, param_shape):
    """True for a MindSpore Conv1d/Conv1dTranspose kernel ``[a, b, 1, k]`` loading into our
    ``[a, b, k]``: the same numbers, an extra unit axis."""
    return (
        len(param_shape) == 3
        and len(ckpt_shape) == 4
        and ckpt_shape == (*param_shape[:2], 1, param_shape[2])
    )


def load_param_into_net(net, parameter_dict, strict_load=False):
    """Copy checkpoint values into ``net``'s Parameters (a network or an optimizer), by name.

    Every matching value is checked first (same shape, same dtype); only then are the
    Parameters written, so a mismatch leaves ``net`` unchanged.

    Args:
        net: a Cell; its ``parameters_and_names()`` are the targets.
        parameter_dict: ``{name: Tensor}`` (from :func:`load_checkpoint`).
        strict_load: when True, a Parameter of ``net`` missing from ``parameter_dict`` is an
            error.

    Returns:
        ``(params_not_loaded, ckpt_not_loaded)``: names of ``net`` that got no value, and names
        of ``parameter_dict`` that were not used.

    Raises:
        ValueError: a shape or dtype mismatch (naming the parameter and both shapes/dtypes),
            or a missing parameter with ``strict_load``. One layout difference is accepted:
            MindSpore's Conv1d kernels ``[out, in, 1, k]`` load into our ``[out, in, k]``.
    """
    from .nn.cell import Cell

    if not isinstance(net, Cell):
        raise TypeError(f"load_param_into_net: net must be a Cell, got {type(net).__name__}")
    if not isinstance(parameter_dict, dict):
        raise TypeError(
            f"load_param_into_net: parameter_dict must be a dict, got {type(parameter_dict).__name__}"
        )
    targets = list(net.parameters_and_names())
    updates, not_loaded, used = [], [], set()
    for name, p in targets:
        if name not in parameter_dict:
            not_loaded.append(name)
            continue
        value = parameter_dict[name]
        used.add(name)
        if not isinstance(value, Tensor):
            value = Tensor(np.asarray(value))
        if _mindspore_conv1d_layout(tuple(value.shape), tuple(p.shape)):
            # MindSpore runs Conv1d as a Conv2d and stores its kernel as [out, in, 1, k]
            value = value.reshape(tuple(p.shape))
        if tuple(value.shape) != tuple(p.shape):
            raise ValueError(
                f"load_param_into_net: parameter {name!r} has shape {tuple(p.shape)} in the network "
                f"but {tuple(value.shape)} in the checkpoint"
            )
        if value.dtype != p.dtype:
            raise ValueError(
                f"load_param_into_net: parameter {name!r} has dtype {p.dtype.name} in the network "
                f"but {value.dtype.name} in the checkpoint"
            )
        updates.append((p, value))
    if strict_load and not_loaded:
        raise ValueError(f"load_param_into_net: the checkpoint has no value for {not_loaded}")
    for p, value in updates:
        if value.device != p.device:
            value = value.to(p.device)
        p.set_data(Tensor._wrap(value._value))
    ckpt_not_loaded = [n for n in parameter_dict if n not in used]
    return not_loaded, ckpt_not_loaded
