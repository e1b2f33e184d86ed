"""MindSpore ``.ckpt`` files (protobuf, MindSpore's ``checkpoint.proto``) read and written
without MindSpore: files encoded by hand in this test following the published field numbers,
round trips both ways, every dtype, bad files and atomic writes."""

import os

import numpy as np
import pytest

from diffsci import core
from diffsci.core import nn
from diffsci.core.dtypes import bfloat16
from diffsci.core.serialization import CheckpointError


# ---- an independent minimal encoder: checkpoint.proto by hand ---------------------------------
# message Checkpoint { message Value { string tag = 1; TensorProto tensor = 2; }
#                      repeated Value value = 1; }
# message TensorProto { repeated int64 dims = 1; string tensor_type = 2; bytes tensor_content = 3; }
def _uvarint(n):
    out = b""
    while n >= 0x80:
        out += bytes([0x80 | (n % 128)])
        n //= 128
    return out + bytes([n])


def _ld(key_byte, payload):
    """A length-delimited field whose key fits one byte: key, length, payload."""
    return bytes([key_byte]) + _uvarint(len(payload)) + payload


def _entry(tag, dims, tensor_type, content, packed=False):
    if packed:
        dims_bytes = _ld(0x0A, b"".join(_uvarint(d) for d in dims))  # field 1, wire type 2
    else:
        dims_bytes = b"".join(b"\x08" + _uvarint(d) for d in dims)  # field 1, wire type 0
    tensor = dims_bytes + _ld(0x12, tensor_type.encode()) + _ld(0x1A, content)
    value = _ld(0x0A, tag.encode()) + _ld(0x12, tensor)  # Value.tag = 1, Value.tensor = 2
    return _ld(0x0A, value)  # Checkpoint.value = 1


def test_reads_a_hand_encoded_mindspore_file(tmp_path):
    w = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    step = np.array(42, dtype=np.int32)
    big = np.linspace(-1, 1, 10)
    blob = (
        _entry("fc.weight", [2, 3], "Float32", w.tobytes())
        + _entry("global_step", [0], "Int32", step.tobytes())  # MindSpore's 0-d encoding
        # a tensor split in two consecutive pieces (MindSpore's slicing of large tensors)
        + _entry("moments.fc.bias", [10], "Float64", big[:4].tobytes(), packed=True)
        + _entry("moments.fc.bias", [10], "Float64", big[4:].tobytes(), packed=True)
        + _entry("mask", [3], "Bool", np.array([True, False, True]).tobytes())
    )
    path = tmp_path / "lenet.ckpt"
    path.write_bytes(blob)
    out = core.load_checkpoint(str(path))
    assert list(out) == ["fc.weight", "global_step", "moments.fc.bias", "mask"]
    np.testing.assert_array_equal(out["fc.weight"].asnumpy(), w)
    assert out["fc.weight"].dtype == core.float32 and out["fc.weight"].name == "fc.weight"
    assert out["global_step"].shape == () and int(out["global_step"]) == 42
    assert out["global_step"].dtype == core.int32
    np.testing.assert_array_equal(out["moments.fc.bias"].asnumpy(), big)
    np.testing.assert_array_equal(out["mask"].asnumpy(), [True, False, True])
    only = core.load_checkpoint(str(path), choice_func=lambda n: n.startswith("fc"))
    assert list(only) == ["fc.weight"]
    assert list(core.load_checkpoint(str(path), filter_prefix="moments")) == [
        "fc.weight",
        "global_step",
        "mask",
    ]


def test_writer_matches_the_hand_encoding_byte_for_byte(tmp_path):
    w = np.array([[1.5, -2.0]], dtype=np.float32)
    n = np.array(7, dtype=np.int64)
    path = tmp_path / "m.ckpt"
    core.save_checkpoint({"w": core.tensor(w), "n": core.tensor(n)}, str(path), format="ckpt")
    expect = _entry("w", [1, 2], "Float32", w.tobytes()) + _entry("n", [0], "Int64", n.tobytes())
    assert path.read_bytes() == expect


DTYPES = [np.float16, np.float32, np.float64, np.int32, np.int64, np.bool_, bfloat16, np.uint8]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_round_trip_every_dtype(tmp_path, dtype):
    rng = np.random.default_rng(0)
    arr = (rng.standard_normal((3, 4)) * 5).astype(dtype)
    scalar = np.asarray(arr.flat[1])
    path = str(tmp_path / "x.ckpt")
    core.save_checkpoint({"a": core.tensor(arr), "s": core.tensor(scalar)}, path, format="ckpt")
    out = core.load_checkpoint(path)
    for key, ref in (("a", arr), ("s", scalar)):
        got = out[key].asnumpy()
        assert got.dtype == np.dtype(dtype) and got.shape == ref.shape
        assert got.tobytes() == ref.tobytes()  # bit exact


def test_network_round_trip_both_ways(tmp_path):
    net = nn.SequentialCell(nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2))
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    path = str(tmp_path / "net.ckpt")
    core.save_checkpoint([net, opt], path, format="ckpt", append_dict={"epoch_num": 3})
    other = nn.SequentialCell(nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2))
    params = core.load_checkpoint(path, net=other)
    for (name, p), (_, q) in zip(net.parameters_and_names(), other.parameters_and_names()):
        np.testing.assert_array_equal(p.asnumpy(), q.asnumpy(), err_msg=name)
    assert "moments.0.weight" in params and int(params["epoch_num"]) == 3
    # and back: the loaded values saved in our HDF5 format read the same
    h5 = str(tmp_path / "net.ckpt.h5")
    core.save_checkpoint(params, h5)
    again = core.load_checkpoint(h5)
    for name, p in params.items():
        np.testing.assert_array_equal(again[name].asnumpy(), p.asnumpy(), err_msg=name)


def test_bad_files_name_the_file(tmp_path):
    cases = {
        "text.ckpt": b"hello, this is not a checkpoint\n",
        "truncated.ckpt": _entry("w", [4], "Float32", np.zeros(4, np.float32).tobytes())[:-5],
        "badtype.ckpt": _entry("w", [1], "Float128", b"\0" * 16),
        "badsize.ckpt": _entry("w", [3], "Float32", b"\0" * 8),
        "empty.ckpt": b"",
    }
    for name, blob in cases.items():
        path = tmp_path / name
        path.write_bytes(blob)
        with pytest.raises(CheckpointError, match=name):
            core.load_checkpoint(str(path))
    with pytest.raises(FileNotFoundError):
        core.load_checkpoint(str(tmp_path / "missing.ckpt"))


def test_failed_write_keeps_the_existing_file(tmp_path):
    path = tmp_path / "keep.ckpt"
    core.save_checkpoint({"w": core.tensor([1.0, 2.0])}, str(path), format="ckpt")
    before = path.read_bytes()
    bad = {"ok": core.tensor([3.0]), "z": core.tensor(np.array([1 + 2j], np.complex64))}
    with pytest.raises(TypeError, match="'z'"):
        core.save_checkpoint(bad, str(path), format="ckpt")
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["keep.ckpt"]  # no temporary file left behind
    with pytest.raises(ValueError, match="format"):
        core.save_checkpoint({"w": core.tensor([1.0])}, str(path), format="safetensors")
