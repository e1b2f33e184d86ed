"""MindSpore's own ``.ckpt`` checkpoint files, read and written without MindSpore or protobuf.

A MindSpore ``.ckpt`` is one protobuf message (MindSpore's published ``checkpoint.proto``,
``mindspore/ccsrc/utils/checkpoint.proto``, proto2)::

    message Checkpoint {
        message Value {
            required string tag = 1;              // the parameter's name
            required TensorProto tensor = 2;      // (newer files: oneof with maptensor = 3)
        }
        repeated Value value = 1;
    }
    message TensorProto {
        repeated int64 dims = 1;                  // shape; [0] for a 0-d tensor
        required string tensor_type = 2;          // "Float32", "Int64", "Bool", "BFloat16"...
        required bytes tensor_content = 3;        // raw little-endian C-order bytes
    }

MindSpore writes a large tensor as several consecutive ``Value`` entries with the same tag
whose contents concatenate; the reader joins them (and so does MindSpore's). Only the wire
format below is needed: each field is a varint key ``(field_number << 3) | wire_type``
followed by a varint (wire type 0) or a varint length and that many bytes (wire type 2).
Encrypted files, MapTensor entries and groups (wire types 3/4) are reported as errors.
"""

import os
from collections import OrderedDict

import numpy as np

from . import dtypes as _dt
from .atomic import atomic_path

__all__ = ["MalformedCheckpoint", "read_mindspore_checkpoint", "write_mindspore_checkpoint"]

# MindSpore's tensor_type strings (str(mindspore.dtype)) and the numpy dtypes they hold
_TYPE_TO_DTYPE = {
    "Bool": np.dtype(np.bool_),
    "Int8": np.dtype(np.int8),
    "Int16": np.dtype(np.int16),
    "Int32": np.dtype(np.int32),
    "Int64": np.dtype(np.int64),
    "UInt8": np.dtype(np.uint8),
    "UInt16": np.dtype(np.uint16),
    "UInt32": np.dtype(np.uint32),
    "UInt64": np.dtype(np.uint64),
    "Float16": np.dtype(np.float16),
    "Float32": np.dtype(np.float32),
    "Float64": np.dtype(np.float64),
    "BFloat16": np.dtype(_dt.bfloat16),
}
_DTYPE_TO_TYPE = {d: t for t, d in _TYPE_TO_DTYPE.items()}

# MindSpore splits tensor_content into pieces of this size (serialization.py, 512 MiB)
CHUNK_BYTES = 512 * 1024 * 1024

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


class MalformedCheckpoint(ValueError):
    """The bytes are not a well-formed MindSpore checkpoint (``core.load_checkpoint`` reports
    it as a ``CheckpointError`` naming the file)."""


# ---- wire format: writing -----------------------------------------------------------------------
def _varint(n):
    """Base-128 varint of a non-negative int (low 7 bits first, high bit = more follows)."""
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _key(field, wire):
    return _varint((field << 3) | wire)


def _len_field(field, payload):
    return _key(field, _LEN) + _varint(len(payload)) + payload


def _tensor_proto(dims, tensor_type, content):
    # proto2 repeated scalars are not packed unless declared so: one key per dim
    body = b"".join(_key(1, _VARINT) + _varint(d) for d in dims)
    return body + _len_field(2, tensor_type.encode()) + _len_field(3, content)


def _value_messages(name, arr):
    """The ``Checkpoint.value`` entries (field 1 of Checkpoint) for one named array."""
    tensor_type = _DTYPE_TO_TYPE.get(arr.dtype)
    if tensor_type is None:
        raise TypeError(
            f"save_checkpoint(format='ckpt'): entry {name!r} has dtype {arr.dtype}, which MindSpore "
            f"checkpoints cannot hold (supported: {sorted(_DTYPE_TO_TYPE.values())})"
        )
    dims = list(arr.shape) if arr.ndim else [0]  # MindSpore writes a 0-d tensor as dims [0]
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    content = np.ascontiguousarray(arr).tobytes()
    tag = _len_field(1, name.encode("utf-8"))
    pieces = [content[i : i + CHUNK_BYTES] for i in range(0, len(content), CHUNK_BYTES)] or [b""]
    for piece in pieces:
        value = tag + _len_field(2, _tensor_proto(dims, tensor_type, piece))
        yield _len_field(1, value)


def write_mindspore_checkpoint(path, entries):
    """Write ``entries`` ``[(name, numpy array)]`` as a MindSpore ``.ckpt`` at ``path``.

    The bytes go to a temporary file in the target directory, which replaces ``path`` only
    when complete: an error (e.g. an unsupported dtype) leaves an existing file untouched.
    """
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            f"save_checkpoint: directory {directory!r} of {path!r} does not exist"
        )
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        for name, arr in entries:
            for message in _value_messages(name, arr):
                f.write(message)


# ---- wire format: reading -----------------------------------------------------------------------
def _read_varint(buf, pos, end):
    result, shift = 0, 0
    while True:
        if pos >= end:
            raise MalformedCheckpoint(f"a varint runs past the end of its message at byte {pos}")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise MalformedCheckpoint(f"a varint longer than 10 bytes at byte {pos}")


def _fields(buf, pos, end):
    """Yield ``(field, wire, value)`` of the message in ``buf[pos:end]``; ``value`` is an int
    (wire types 0, 1, 5) or a ``(start, stop)`` byte range (wire type 2)."""
    while pos < end:
        key, pos = _read_varint(buf, pos, end)
        field, wire = key >> 3, key & 7
        if field == 0:
            raise MalformedCheckpoint(f"field number 0 at byte {pos}")
        if wire == _VARINT:
            value, pos = _read_varint(buf, pos, end)
        elif wire == _LEN:
            length, pos = _read_varint(buf, pos, end)
            if pos + length > end:
                raise MalformedCheckpoint(
                    f"field {field} claims {length} bytes at byte {pos}, past the end ({end})"
                )
            value, pos = (pos, pos + length), pos + length
        elif wire in (_I64, _I32):
            size = 8 if wire == _I64 else 4
            if pos + size > end:
                raise MalformedCheckpoint(f"field {field} runs past the end of its message")
            value, pos = int.from_bytes(buf[pos : pos + size], "little"), pos + size
        else:
            raise MalformedCheckpoint(
                f"wire type {wire} (field {field}) at byte {pos} is not supported"
            )
        yield field, wire, value


def _parse_tensor(buf, start, stop):
    dims, tensor_type, content = [], None, None
    for field, wire, value in _fields(buf, start, stop):
        if field == 1 and wire == _VARINT:
            dims.append(value - (1 << 64) if value >= 1 << 63 else value)  # int64
        elif field == 1 and wire == _LEN:  # packed dims
            pos, end = value
            while pos < end:
                d, pos = _read_varint(buf, pos, end)
                dims.append(d - (1 << 64) if d >= 1 << 63 else d)
        elif field == 2 and wire == _LEN:
            tensor_type = bytes(buf[value[0] : value[1]]).decode("utf-8")
        elif field == 3 and wire == _LEN:
            content = value
    return dims, tensor_type, content


def _parse_value(buf, start, stop):
    tag, tensor = None, None
    for field, wire, value in _fields(buf, start, stop):
        if field == 1 and wire == _LEN:
            tag = bytes(buf[value[0] : value[1]]).decode("utf-8")
        elif field == 2 and wire == _LEN:
            tensor = _parse_tensor(buf, *value)
        elif field == 3 and wire == _LEN:
            raise MalformedCheckpoint(f"entry {tag!r} is a MapTensor, which is not supported")
    if tag is None:
        raise MalformedCheckpoint("an entry has no tag (parameter name)")
    if tensor is None or tensor[1] is None or tensor[2] is None:
        raise MalformedCheckpoint(f"entry {tag!r} has no tensor (tensor_type and tensor_content)")
    return tag, tensor


def _to_array(tag, dims, tensor_type, data):
    if tensor_type == "str":  # MindSpore's append_dict strings: UTF-32 code points
        return str(np.frombuffer(data, f"<U{len(data) // 4}")[0]) if data else ""
    dtype = _TYPE_TO_DTYPE.get(tensor_type)
    if dtype is None:
        raise MalformedCheckpoint(
            f"entry {tag!r} has tensor_type {tensor_type!r}, which is not known"
        )
    if any(d < 0 for d in dims):
        raise MalformedCheckpoint(f"entry {tag!r} has negative dims {dims}")
    if dims == [0] and len(data) == dtype.itemsize:
        shape = ()  # MindSpore's encoding of a 0-d tensor
    elif not dims:
        shape = ()
    else:
        shape = tuple(dims)
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if count * dtype.itemsize != len(data):
        raise MalformedCheckpoint(
            f"entry {tag!r}: {len(data)} bytes of {tensor_type} do not fill dims {dims}"
        )
    return np.frombuffer(data, dtype.newbyteorder("<")).astype(dtype).reshape(shape)


def read_mindspore_checkpoint(path):
    """``{name: numpy array}`` (a ``str`` for MindSpore's string entries) from a MindSpore
    ``.ckpt`` file, in file order.

    Raises:
        MalformedCheckpoint: the file is not a well-formed MindSpore checkpoint (the message
            says what was wrong).
    """
    with open(path, "rb") as f:
        buf = memoryview(f.read())
    out = OrderedDict()
    try:
        pending_tag, pending = None, []  # consecutive pieces of one tensor

        def finish():
            if pending_tag is not None and pending_tag != "random_op":
                dims, tensor_type = pending[0][0], pending[0][1]
                data = b"".join(bytes(buf[a:b]) for _, _, (a, b) in pending)
                out[pending_tag] = _to_array(pending_tag, dims, tensor_type, data)

        for field, wire, value in _fields(buf, 0, len(buf)):
            if field != 1 or wire != _LEN:
                raise MalformedCheckpoint(
                    f"top-level field {field} (wire type {wire}) is not a Checkpoint.value"
                )
            tag, tensor = _parse_value(buf, *value)
            if tag != pending_tag:
                finish()
                pending_tag, pending = tag, []
            pending.append(tensor)
        finish()
    except UnicodeDecodeError as err:
        raise MalformedCheckpoint(f"a name is not UTF-8: {err}") from None
    if not out:
        raise MalformedCheckpoint("it holds no tensors (empty or not a checkpoint)")
    return out
