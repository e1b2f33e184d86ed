"""protenix.load_weights / the torch .pt reader / `protenix convert`, against files torch wrote.

The fixtures come from tests/protenix/fixtures/make_weights.py (torch.save); the expected
values in weights_expected.npz are what torch itself held. No torch is needed here.
"""

import os
import pathlib
import pickle
import zipfile

import hypothesis
import hypothesis.strategies as st
import numpy as np
import pytest

from diffsci import core
from diffsci.core import dtypes as _dt
from diffsci.core import nn
from diffsci.protenix.cli.main import main as cli_main
from diffsci.protenix.model.weights import (
    UnsafeCheckpointError,
    WeightsError,
    load_weights,
    read_state_dict,
    read_torch_checkpoint,
)

FIX = os.path.join(os.path.dirname(__file__), "fixtures")
RELEASE = os.path.join(FIX, "weights_release.pt")
PLAIN = os.path.join(FIX, "weights_plain.pt")


@pytest.fixture(scope="module")
def expected():
    with np.load(os.path.join(FIX, "weights_expected.npz")) as f:
        return {k: f[k] for k in f.files}


def _as_f32(a):
    return a.astype(np.float32) if _dt.is_floating(a.dtype) else a


def test_release_checkpoint_values_dtypes_and_views(expected):
    obj = read_torch_checkpoint(RELEASE)
    assert obj["step"] == 7 and obj["tag"] == "tiny"
    model = obj["model"]
    names = [k[len("release/") :] for k in expected if k.startswith("release/")]
    assert sorted(model) == sorted(names)
    for name in names:
        np.testing.assert_array_equal(_as_f32(model[name]), expected["release/" + name])
        assert model[name].flags["C_CONTIGUOUS"]
    assert model["module.half.weight"].dtype == np.float16
    assert model["module.bf16.weight"].dtype == _dt.bfloat16
    assert model["module.index"].dtype == np.int64
    assert model["module.scalar"].shape == ()
    for name in ("module.half.weight", "module.bf16.weight"):  # bit-exact, not just close
        np.testing.assert_array_equal(model[name].view(np.int16), expected["bits/" + name])
    # transposed view and offset slice of one storage; two names sharing another storage
    np.testing.assert_array_equal(model["module.linear_t.weight"], model["module.linear.weight"].T)
    np.testing.assert_array_equal(
        model["module.slice.weight"], model["module.linear.weight"][2:, 1:4]
    )
    np.testing.assert_array_equal(
        model["module.shared_a"].ravel()[4:], model["module.shared_b"].ravel()[:2]
    )


def test_read_state_dict_strips_module_and_takes_model():
    sd = read_state_dict(RELEASE)
    assert "linear.weight" in sd and not any(k.startswith("module.") for k in sd)
    sub = read_state_dict(RELEASE, prefix="fourier_embedding.")
    assert list(sub) == ["w"]


@pytest.mark.parametrize(
    ("name", "global_name"),
    [("weights_evil_os.pt", "posix.system"), ("weights_evil_cls.pt", "__main__.Custom")],
)
def test_malicious_pickle_refused_without_running(tmp_path, monkeypatch, name, global_name):
    monkeypatch.chdir(tmp_path)  # the payload would `touch PWNED_BY_PICKLE` here
    with pytest.raises(UnsafeCheckpointError, match=global_name.replace(".", r"\.")):
        read_torch_checkpoint(os.path.join(FIX, name))
    with pytest.raises(UnsafeCheckpointError):
        load_weights(_Plain(), os.path.join(FIX, name))
    assert not (tmp_path / "PWNED_BY_PICKLE").exists()
    assert cli_main(["convert", os.path.join(FIX, name), str(tmp_path / "o.h5")]) == 1
    assert not (tmp_path / "o.h5").exists()


def test_legacy_format_refused_clearly():
    with pytest.raises(WeightsError, match="legacy"):
        read_state_dict(os.path.join(FIX, "weights_legacy.pt"))


def _handmade_pt(path, offset, size, stride, data, compression=zipfile.ZIP_STORED):
    """A zip .pt whose pickle is written opcode by opcode: one FloatStorage tensor."""
    ints = b"".join(b"I%d\n" % v for v in size)
    strides = b"".join(b"I%d\n" % v for v in stride)
    pkl = (
        b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(("
        b"Vstorage\nctorch\nFloatStorage\nV0\nVcpu\nI%d\ntQ"
        % data.size
        + b"I%d\n(" % offset
        + ints
        + b"t("
        + strides
        + b"tI00\nccollections\nOrderedDict\n)RtR."
    )
    with zipfile.ZipFile(path, "w", compression=compression) as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/data/0", data.astype("<f4").tobytes())
        z.writestr("archive/byteorder", "little")


def test_strided_views_and_bounds(tmp_path):
    data = np.arange(16, dtype=np.float32)
    p = tmp_path / "ok.pt"
    _handmade_pt(p, 3, (2, 3), (1, 4), data)  # a transposed view at an offset
    np.testing.assert_array_equal(
        read_torch_checkpoint(p), np.array([[3, 7, 11], [4, 8, 12]], np.float32)
    )
    bad = tmp_path / "bad.pt"
    _handmade_pt(bad, 10, (2, 3), (1, 4), data)  # last element 10 + 1 + 8 = 19 > 15
    with pytest.raises(WeightsError, match="reads element 19 of storage '0', which holds 16"):
        read_torch_checkpoint(bad)
    # a persistent id that is not a storage tuple is refused
    evil = tmp_path / "pid.pt"
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("archive/data.pkl", b"\x80\x02Vrm -rf\nQ.")
    with pytest.raises(UnsafeCheckpointError, match="persistent id"):
        read_torch_checkpoint(evil)


class _Norm(nn.Cell):
    def __init__(self, c):
        super().__init__()
        self.weight = core.Parameter(np.ones(c, np.float32))
        self.bias = core.Parameter(np.zeros(c, np.float32))


class _Plain(nn.Cell):
    """Mirrors torch's Sequential(linear=Linear(4, 3), norm=LayerNorm(3)) names and layouts."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Dense(4, 3)
        self.norm = _Norm(3)


def test_load_plain_state_dict_into_cell(expected):
    net = _Plain()
    assert load_weights(net, PLAIN) == ([], [])
    got = {n: p.asnumpy() for n, p in net.parameters_and_names()}
    for name in ("linear.weight", "linear.bias", "norm.weight", "norm.bias"):
        np.testing.assert_array_equal(got[name], expected["plain/" + name])
    # the torch Linear computes x W^T + b; the loaded Dense must give the same numbers
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    ref = x @ expected["plain/linear.weight"].T + expected["plain/linear.bias"]
    np.testing.assert_allclose(net.linear(core.tensor(x)).asnumpy(), ref, rtol=1e-6, atol=1e-6)


def test_errors_list_every_problem_at_once():
    net = _Plain()
    before = net.linear.weight.asnumpy().copy()
    sd = read_state_dict(PLAIN)
    sd["norm.weight"] = np.ones(5, np.float32)  # wrong shape
    sd["extra.weight"] = np.ones(1, np.float32)  # unexpected
    del sd["linear.bias"]  # missing
    with pytest.raises(WeightsError) as info:
        load_weights(net, sd)
    msg = str(info.value)
    assert "missing keys (1): ['linear.bias']" in msg
    assert "unexpected keys (1): ['extra.weight']" in msg
    assert "norm.weight: checkpoint [5] vs module [3]" in msg
    np.testing.assert_array_equal(net.linear.weight.asnumpy(), before)  # nothing written
    # not strict: names may differ, shapes may not
    sd["norm.weight"] = np.full(3, 2.0, np.float32)
    res = load_weights(net, sd, strict=False)
    assert res.missing_keys == ["linear.bias"] and res.unexpected_keys == ["extra.weight"]
    np.testing.assert_array_equal(net.norm.weight.asnumpy(), 2.0)


def test_convert_round_trip_to_h5(tmp_path, expected):
    out = tmp_path / "release.h5"
    assert cli_main(["convert", RELEASE, str(out)]) == 0
    back = core.load_checkpoint(str(out))
    src = read_state_dict(RELEASE)
    assert list(back) == list(src)
    for name, arr in src.items():
        got = back[name].asnumpy()
        assert got.dtype == arr.dtype, name  # bfloat16 and float16 kept
        np.testing.assert_array_equal(
            got.reshape(-1).view(np.uint8), arr.reshape(-1).view(np.uint8)
        )
    # the h5 loads like the .pt, also with a bfloat16 -> float32 cast on load
    assert read_state_dict(str(out)).keys() == src.keys()
    net = _Plain()
    plain_h5 = tmp_path / "plain.h5"
    assert cli_main(["convert", PLAIN, str(plain_h5), "--dtype", "bf16"]) == 0
    load_weights(net, str(plain_h5))
    np.testing.assert_array_equal(
        net.norm.bias.asnumpy(),
        expected["plain/norm.bias"].astype(_dt.bfloat16).astype(np.float32),
    )


def test_numpy_dict_and_npz_sources(tmp_path, expected):
    sd = {k[len("plain/") :]: v for k, v in expected.items() if k.startswith("plain/")}
    net = _Plain()
    load_weights(net, {"model": {"module." + k: v for k, v in sd.items()}, "step": 1})
    np.testing.assert_array_equal(net.norm.weight.asnumpy(), sd["norm.weight"])
    npz = tmp_path / "w.npz"
    np.savez(npz, **sd)
    net2 = _Plain()
    load_weights(net2, str(npz))
    np.testing.assert_array_equal(net2.linear.weight.asnumpy(), sd["linear.weight"])


def test_restricted_unpickler_rejects_reduce_of_builtins(tmp_path):
    # eval("1/0") pickled by the standard pickler (protocol 2 names it __builtin__.eval)
    path = tmp_path / "evalbomb.pt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps(_EvalBomb(), protocol=2))
    with pytest.raises(UnsafeCheckpointError, match=r"__builtin__\.eval"):
        read_torch_checkpoint(path)


class _EvalBomb:
    def __reduce__(self):
        return (eval, ("1/0",))


def test_training_checkpoint(expected):
    """What Protenix's runner saves in training (model, Adam state, scheduler, step): read
    without refusing anything, the model's state dict taken from it."""
    obj = read_torch_checkpoint(os.path.join(FIX, "weights_train.pt"))
    assert obj["step"] == 1
    assert obj["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.95)
    np.testing.assert_array_equal(
        obj["optimizer"]["state"][0]["exp_avg"], expected["train_exp_avg/0"]
    )
    sd = read_state_dict(os.path.join(FIX, "weights_train.pt"))
    assert sorted(sd) == sorted(k[len("train/") :] for k in expected if k.startswith("train/"))
    for name, arr in sd.items():
        np.testing.assert_array_equal(arr, expected["train/" + name])
    net = _Plain()
    load_weights(net, os.path.join(FIX, "weights_train.pt"))
    assert not np.array_equal(net.linear.weight.asnumpy(), expected["plain/linear.weight"])


def test_convert_output_suffix(tmp_path, capsys):
    assert cli_main(["convert", PLAIN, str(tmp_path / "plain")]) == 0
    assert (tmp_path / "plain.h5").is_file() and "plain.h5" in capsys.readouterr().out
    assert list(read_state_dict(str(tmp_path / "plain.h5"))) == list(read_state_dict(PLAIN))


def test_storages_are_memory_mapped_copy_on_write(tmp_path):
    """Contiguous tensors are views of a copy-on-write map of the file (no second copy of a
    large checkpoint); tensors of one torch storage share memory; the file never changes."""
    obj = read_torch_checkpoint(RELEASE)["model"]
    a, b = obj["module.shared_a"], obj["module.shared_b"]  # one storage, elements 4, 5 shared
    assert isinstance(a.base, np.memmap) and np.shares_memory(a, b)
    before = pathlib.Path(RELEASE).read_bytes()
    a[1, 1] = 123.0
    assert b[0, 0] == 123.0  # as torch: views of one storage
    assert pathlib.Path(RELEASE).read_bytes() == before
    assert read_torch_checkpoint(RELEASE)["model"]["module.shared_b"][0, 0] != 123.0
    # a compressed member (torch never writes one) is read into memory instead
    data = np.arange(16, dtype=np.float32)
    p = tmp_path / "deflated.pt"
    _handmade_pt(p, 4, (3, 4), (4, 1), data, compression=zipfile.ZIP_DEFLATED)
    np.testing.assert_array_equal(read_torch_checkpoint(p), data[4:].reshape(3, 4))


def test_cli_runs_as_a_program(tmp_path):
    """``python -m diffsci.protenix.cli.main convert`` (what the ``diffsci-protenix`` console script calls)."""
    import subprocess
    import sys

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=repo)
    out = tmp_path / "plain.h5"
    cmd = [sys.executable, "-m", "diffsci.protenix.cli", "convert", PLAIN, str(out)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "wrote 4 tensors (21 values)" in done.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "diffsci.protenix.cli.main", "convert", os.path.join(FIX, "weights_evil_os.pt"), str(tmp_path / "x.h5")],
        env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert bad.returncode == 1 and "posix.system" in bad.stderr
    assert not (tmp_path / "PWNED_BY_PICKLE").exists()


def test_prefix_hint_for_a_submodule_of_a_full_checkpoint():
    sd = {"module.trunk." + k: v for k, v in read_state_dict(PLAIN).items()}
    sd["module.other.weight"] = np.ones(2, np.float32)
    with pytest.raises(WeightsError, match=r"load with prefix='trunk\.'"):
        load_weights(_Plain(), sd)
    load_weights(_Plain(), sd, prefix="trunk.")
    many = {f"x{i}": np.ones(1, np.float32) for i in range(120)}
    with pytest.raises(WeightsError, match=r"unexpected keys \(120\): .* and 70 more"):
        load_weights(_Plain(), many)


@pytest.mark.parity
def test_torch_tensors_in_memory(expected):
    """A state dict of torch tensors handed over in memory (bfloat16 included)."""
    import torch

    sd = {
        k[len("plain/") :]: torch.from_numpy(v)
        for k, v in expected.items()
        if k.startswith("plain/")
    }
    sd["norm.bias"] = sd["norm.bias"].bfloat16()
    net = _Plain()
    load_weights(net, sd)
    np.testing.assert_array_equal(net.linear.weight.asnumpy(), expected["plain/linear.weight"])
    np.testing.assert_array_equal(
        net.norm.bias.asnumpy(),
        expected["plain/norm.bias"].astype(_dt.bfloat16).astype(np.float32),
    )


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(st.data())
def test_damaged_pickles_fail_cleanly(tmp_path_factory, data):
    """Random byte damage to a real checkpoint's data.pkl: the reader either returns or raises
    WeightsError / UnsafeCheckpointError, never another exception, and never runs code."""
    with zipfile.ZipFile(RELEASE) as z:
        members = {n: z.read(n) for n in z.namelist()}
    name = next(n for n in members if n.endswith("data.pkl"))
    pkl = bytearray(members[name])
    for _ in range(data.draw(st.integers(1, 4))):
        pkl[data.draw(st.integers(0, len(pkl) - 1))] = data.draw(st.integers(0, 255))
    folder = tmp_path_factory.mktemp("damaged")
    path = folder / "damaged.pt"
    with zipfile.ZipFile(path, "w") as z:
        for n, raw in members.items():
            z.writestr(n, bytes(pkl) if n == name else raw)
    try:
        read_torch_checkpoint(path)
    except (WeightsError, UnsafeCheckpointError):
        pass
