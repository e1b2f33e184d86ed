"""HDF5 checkpoints: round trips (all dtypes), exact training resume, errors, atomic saves."""

import os
import tempfile

import h5py
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from diffsci import core
from diffsci.core import Parameter, nn, ops
from diffsci.core.serialization import CheckpointError


class MLP(nn.Cell):
    """Two layers written with Parameters (independent of nn.Dense)."""

    def __init__(self, seed=0, dtype=core.float64):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.fc1 = _Linear(rng, 2, 8, dtype)
        self.fc2 = _Linear(rng, 8, 1, dtype)

    def construct(self, x):
        return self.fc2(ops.tanh(self.fc1(x)))


class _Linear(nn.Cell):
    def __init__(self, rng, n_in, n_out, dtype):
        super().__init__()
        self.weight = Parameter(
            rng.standard_normal((n_in, n_out)) / np.sqrt(n_in), name="weight", dtype=dtype
        )
        self.bias = Parameter(np.zeros(n_out), name="bias", dtype=dtype)

    def construct(self, x):
        return x @ self.weight + self.bias


def _data(n=32, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 2))
    y = np.sin(2 * x[:, :1]) * x[:, 1:]
    return core.tensor(x), core.tensor(y)


# ---- round trips ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "dtype",
    [
        "float16",
        "float32",
        "float64",
        "bfloat16",
        "complex64",
        "complex128",
        "int32",
        "int64",
        "bool",
        "uint8",
    ],
)
def test_round_trip_every_dtype(tmp_path, dtype):
    rng = np.random.default_rng(0)
    dt = np.dtype(core.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    if dt.kind == "c":
        arr = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(dt)
    elif dt.kind == "b":
        arr = rng.standard_normal((3, 4)) > 0
    else:
        arr = (rng.standard_normal((3, 4)) * 10).astype(dt)
    path = tmp_path / "a.ckpt.h5"
    core.save_checkpoint({"x": core.tensor(arr), "scalar": core.tensor(arr[0, 0])}, path)
    back = core.load_checkpoint(path)
    assert list(back) == ["x", "scalar"]
    assert isinstance(back["x"], Parameter) and back["x"].name == "x"
    assert back["x"].dtype == dt and back["x"].shape == (3, 4) and back["scalar"].shape == ()
    np.testing.assert_array_equal(back["x"].asnumpy(), arr)  # bit-exact (NaN-free data)
    with h5py.File(path, "r") as f:
        assert f["parameters"]["x"].attrs["dtype"] == (
            "bfloat16" if dtype == "bfloat16" else dt.name
        )
        if dtype == "bfloat16":  # stored as its uint16 bit pattern
            assert f["parameters"]["x"].dtype == np.uint16


_DTYPES = ["float16", "float32", "float64", "complex64", "complex128", "int8", "int64", "bool"]


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_round_trip_is_bit_exact_for_any_shape(data):
    dtype = np.dtype(data.draw(st.sampled_from([*_DTYPES, "bfloat16"])))
    if dtype.name == "bfloat16":
        bits = data.draw(
            hnp.arrays(np.uint16, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
        )
        arr = bits.view(core.bfloat16)
    else:
        arr = data.draw(
            hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
        )
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "h.ckpt.h5")
        core.save_checkpoint({"a": core.tensor(arr)}, path)
        back = core.load_checkpoint(path)["a"].asnumpy()
    assert back.dtype == arr.dtype and back.shape == arr.shape
    assert back.tobytes() == arr.tobytes()  # NaN payloads, -0.0 and infinities included


def test_bfloat16_bit_patterns_survive(tmp_path):
    bits = np.array([0x0000, 0x8000, 0x3F80, 0x7F80, 0xFF80, 0x0001, 0x7F7F], dtype=np.uint16)
    arr = bits.view(core.bfloat16)  # 0, -0, 1, inf, -inf, a subnormal, the largest finite
    core.save_checkpoint({"b": core.tensor(arr)}, tmp_path / "b.h5")
    back = core.load_checkpoint(tmp_path / "b.h5")["b"].asnumpy()
    np.testing.assert_array_equal(back.view(np.uint16), bits)


def test_file_layout_and_metadata(tmp_path):
    net = MLP()
    net.fc2.bias.requires_grad = False
    path = tmp_path / "m.ckpt.h5"
    core.save_checkpoint(net, path, append_dict={"epoch_num": 3, "best": 0.25})
    with h5py.File(path, "r") as f:
        assert f.attrs["format"] == "diffsci-checkpoint"
        assert int(f.attrs["format_version"]) == 1
        names = [f["parameters"][k].attrs["name"] for k in f["parameters"]]
    assert names == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "epoch_num", "best"]
    back = core.load_checkpoint(path)
    assert back["fc1.weight"].requires_grad and not back["fc2.bias"].requires_grad
    assert int(back["epoch_num"]) == 3 and back["epoch_num"].dtype == np.int64
    assert float(back["best"]) == 0.25
    only = core.load_checkpoint(path, filter_prefix="fc1")
    assert list(only) == ["fc2.weight", "fc2.bias", "epoch_num", "best"]
    chosen = core.load_checkpoint(path, choice_func=lambda n: n.endswith("weight"))
    assert list(chosen) == ["fc1.weight", "fc2.weight"]


def test_names_with_slashes_and_list_forms(tmp_path):
    path = tmp_path / "n.h5"
    core.save_checkpoint(
        [
            {"name": "a/b", "data": core.tensor([1.0])},
            {"name": "100%", "data": np.arange(3)},
            {".": 2.5},
        ],
        path,
    )
    back = core.load_checkpoint(path)
    assert list(back) == ["a/b", "100%", "."]
    np.testing.assert_array_equal(back["100%"].asnumpy(), np.arange(3))


def test_load_into_fresh_network_gives_same_predictions(tmp_path):
    net = MLP(seed=0)
    path = tmp_path / "net.ckpt.h5"
    core.save_checkpoint(net, path)
    fresh = MLP(seed=1)
    x, _ = _data()
    assert not np.allclose(fresh(x).asnumpy(), net(x).asnumpy())
    not_loaded, unused = core.load_param_into_net(fresh, core.load_checkpoint(path))
    assert not_loaded == [] and unused == []
    np.testing.assert_array_equal(fresh(x).asnumpy(), net(x).asnumpy())
    # load_checkpoint(net=...) does both at once
    third = MLP(seed=2)
    core.load_checkpoint(path, net=third)
    np.testing.assert_array_equal(third(x).asnumpy(), net(x).asnumpy())


def test_partial_load_reports_missing_and_unused(tmp_path):
    net = MLP()
    params = {"fc1.weight": net.fc1.weight, "extra": core.tensor([1.0])}
    path = tmp_path / "p.h5"
    core.save_checkpoint(params, path)
    fresh = MLP(seed=5)
    not_loaded, unused = core.load_param_into_net(fresh, core.load_checkpoint(path))
    assert not_loaded == ["fc1.bias", "fc2.weight", "fc2.bias"]
    assert unused == ["extra"]
    np.testing.assert_array_equal(fresh.fc1.weight.asnumpy(), net.fc1.weight.asnumpy())
    with pytest.raises(ValueError, match="no value for"):
        core.load_param_into_net(MLP(), core.load_checkpoint(path), strict_load=True)


# ---- exact resume --------------------------------------------------------------------------------
def _train(net, opt, steps, x, y):
    loss_fn = lambda: ((net(x) - y) ** 2).mean()  # noqa: E731
    grad_fn = core.value_and_grad(loss_fn, None, opt.parameters)
    for _ in range(steps):
        _, grads = grad_fn()
        opt(grads)


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: nn.SGD(ps, learning_rate=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
        lambda ps: nn.Adam(ps, learning_rate=nn.WarmupCosineDecayLR(1e-4, 1e-2, 5, 15)),
        lambda ps: nn.AdamW(
            ps, learning_rate=nn.cosine_decay_lr(1e-4, 1e-2, 20, 2, 8), weight_decay=0.1
        ),
    ],
    ids=["sgd-nesterov", "adam-schedule", "adamw-list"],
)
def test_resume_is_bit_identical(tmp_path, make):
    """train 20 steps == train 10, save net + optimizer, load into fresh objects, train 10."""
    x, y = _data()
    ref_net = MLP(seed=0)
    ref_opt = make(ref_net.trainable_params())
    _train(ref_net, ref_opt, 20, x, y)

    net = MLP(seed=0)
    opt = make(net.trainable_params())
    _train(net, opt, 10, x, y)
    path = tmp_path / "resume.ckpt.h5"
    core.save_checkpoint([net, opt], path)

    net2 = MLP(seed=7)  # different initial values: everything must come from the file
    opt2 = make(net2.trainable_params())
    params = core.load_checkpoint(path)
    assert core.load_param_into_net(net2, params, strict_load=True)[0] == []
    assert core.load_param_into_net(opt2, params, strict_load=True)[0] == []
    assert int(opt2.global_step) == 10
    _train(net2, opt2, 10, x, y)
    for (n, a), (_, b) in zip(
        ref_net.parameters_and_names(), net2.parameters_and_names(), strict=True
    ):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy(), err_msg=n)
    for (n, a), (_, b) in zip(
        ref_opt.parameters_and_names(), opt2.parameters_and_names(), strict=True
    ):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy(), err_msg=n)


def test_lbfgs_resume_is_bit_identical(tmp_path):
    x, y = _data()
    loss_of = lambda net: lambda: ((net(x) - y) ** 2).mean()  # noqa: E731
    ref = MLP(seed=0)
    ref_opt = nn.LBFGS(ref.trainable_params(), max_iter=6, history_size=4)
    ref_opt.minimize(loss_of(ref))
    ref_opt.minimize(loss_of(ref))

    net = MLP(seed=0)
    opt = nn.LBFGS(net.trainable_params(), max_iter=6, history_size=4)
    opt.minimize(loss_of(net))
    core.save_checkpoint([net, opt], tmp_path / "l.h5")
    net2 = MLP(seed=3)
    opt2 = nn.LBFGS(net2.trainable_params(), max_iter=6, history_size=4)
    params = core.load_checkpoint(tmp_path / "l.h5")
    core.load_param_into_net(net2, params, strict_load=True)
    core.load_param_into_net(opt2, params, strict_load=True)
    opt2.minimize(loss_of(net2))
    for a, b in zip(ref.trainable_params(), net2.trainable_params(), strict=True):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    assert int(opt2.global_step) == int(ref_opt.global_step) > 6


def test_optimizer_state_changes_training(tmp_path):
    """Restoring only the network (not the moments) gives a different trajectory: the
    optimizer state really is in the checkpoint and really matters."""
    x, y = _data()
    net, opt = MLP(), None
    opt = nn.Adam(net.trainable_params(), learning_rate=1e-2)
    _train(net, opt, 5, x, y)
    core.save_checkpoint([net, opt], tmp_path / "s.h5")
    params = core.load_checkpoint(tmp_path / "s.h5")
    assert {"adam_m.fc1.weight", "adam_v.fc2.bias", "global_step", "learning_rate"} <= set(params)
    a, b = MLP(seed=1), MLP(seed=1)
    opt_a, opt_b = (
        nn.Adam(a.trainable_params(), learning_rate=1e-2),
        nn.Adam(b.trainable_params(), learning_rate=1e-2),
    )
    for m in (a, b):
        core.load_param_into_net(m, params)
    core.load_param_into_net(opt_a, params)
    _train(a, opt_a, 1, x, y)
    _train(b, opt_b, 1, x, y)
    assert not np.allclose(a.fc1.weight.asnumpy(), b.fc1.weight.asnumpy())


# ---- errors --------------------------------------------------------------------------------------
def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nope\.h5"):
        core.load_checkpoint(tmp_path / "nope.h5")


def test_not_hdf5(tmp_path):
    path = tmp_path / "text.ckpt"
    path.write_text("hello")
    with pytest.raises(CheckpointError, match=r"text\.ckpt.*not an HDF5 file"):
        core.load_checkpoint(path)


def test_truncated_checkpoint(tmp_path):
    path = tmp_path / "t.h5"
    core.save_checkpoint({"w": core.tensor(np.ones((64, 64)))}, path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match=r"t\.h5"):
        core.load_checkpoint(path)


def test_hdf5_without_format_attribute(tmp_path):
    path = tmp_path / "other.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("parameters/w", data=np.ones(3))
    with pytest.raises(CheckpointError, match=r"other\.h5.*not a diffsci checkpoint"):
        core.load_checkpoint(path)


def test_newer_format_version(tmp_path):
    path = tmp_path / "v.h5"
    core.save_checkpoint({"w": core.tensor([1.0])}, path)
    with h5py.File(path, "a") as f:
        f.attrs["format_version"] = 99
    with pytest.raises(CheckpointError, match=r"v\.h5.*version 99"):
        core.load_checkpoint(path)


def test_shape_and_dtype_mismatch_name_the_parameter(tmp_path):
    net = MLP()
    bad_shape = {"fc1.weight": core.tensor(np.zeros((3, 8))), "fc2.bias": core.tensor(np.zeros(1))}
    before = net.fc2.bias.asnumpy().copy() + 1.0
    net.fc2.bias.set_data(core.tensor(before))
    with pytest.raises(ValueError, match=r"'fc1.weight'.*\(2, 8\).*\(3, 8\)"):
        core.load_param_into_net(net, bad_shape)
    np.testing.assert_array_equal(net.fc2.bias.asnumpy(), before)  # nothing was written
    bad_dtype = {"fc1.bias": core.tensor(np.zeros(8, dtype=np.float32))}
    with pytest.raises(ValueError, match=r"'fc1.bias'.*float64.*float32"):
        core.load_param_into_net(net, bad_dtype)


def test_save_rejects_duplicate_names_and_bad_objects(tmp_path):
    net = MLP()
    with pytest.raises(ValueError, match=r"'fc1\.weight' appears twice"):
        core.save_checkpoint([net, net], tmp_path / "d.h5")
    with pytest.raises(TypeError, match="cannot save a str"):
        core.save_checkpoint("weights", tmp_path / "d.h5")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        core.save_checkpoint(net, tmp_path / "no_dir" / "d.h5")
    assert not os.path.exists(tmp_path / "d.h5")


# ---- atomic save ---------------------------------------------------------------------------------
def test_failed_save_keeps_previous_file_intact(tmp_path):
    path = tmp_path / "keep.ckpt.h5"
    core.save_checkpoint({"w": core.tensor(np.arange(5.0))}, path)
    original = path.read_bytes()
    # the second entry cannot be written: the failure happens after the file was opened and
    # the first dataset written
    bad = {"w": core.tensor(np.zeros(5)), "oops": np.array(["a", "b"], dtype=object)}
    with pytest.raises(TypeError, match="'oops'"):
        core.save_checkpoint(bad, path)
    assert path.read_bytes() == original
    np.testing.assert_array_equal(core.load_checkpoint(path)["w"].asnumpy(), np.arange(5.0))
    assert sorted(os.listdir(tmp_path)) == ["keep.ckpt.h5"]  # no temporary file left behind


def test_overwrite_replaces_file(tmp_path):
    path = tmp_path / "o.h5"
    core.save_checkpoint({"a": core.tensor([1.0])}, path)
    core.save_checkpoint({"b": core.tensor([2.0])}, path)
    assert list(core.load_checkpoint(path)) == ["b"]
    assert sorted(os.listdir(tmp_path)) == ["o.h5"]


def test_mindspore_conv1d_kernels_load_with_their_unit_axis():
    """MindSpore stores Conv1d kernels as [out, in, 1, k]; ours are [out, in, k]. The same
    numbers load (and the conv computes with them); any other shape difference stays an error."""
    conv = nn.Conv1d(2, 3, 5, has_bias=False)
    kernel = np.arange(30, dtype=np.float32).reshape(3, 2, 1, 5) / 30.0
    core.load_param_into_net(conv, {"weight": core.tensor(kernel)})
    np.testing.assert_array_equal(conv.weight.asnumpy(), kernel[:, :, 0, :])
    with pytest.raises(ValueError, match=r"'weight'.*\(3, 2, 5\).*\(3, 2, 5, 1\)"):
        core.load_param_into_net(conv, {"weight": core.tensor(kernel.reshape(3, 2, 5, 1))})


def test_save_checkpoint_appends_ckpt_like_mindspore(tmp_path):
    """MindFlow's scripts save ``f"{name}_epoch{epoch}"`` and load ``..._epoch{epoch}.ckpt``:
    a name without a checkpoint suffix gets ``.ckpt`` (MindSpore's rule); ``.h5`` names stay."""
    net = core.nn.Dense(3, 2)
    core.save_checkpoint(net, str(tmp_path / "fno1d_epoch10"))
    assert not (tmp_path / "fno1d_epoch10").exists()
    loaded = core.load_checkpoint(str(tmp_path / "fno1d_epoch10.ckpt"))
    np.testing.assert_array_equal(loaded["weight"].asnumpy(), net.weight.asnumpy())
    core.save_checkpoint(net, str(tmp_path / "kept.ckpt.h5"))
    core.save_checkpoint(net, str(tmp_path / "kept.h5"))
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "fno1d_epoch10.ckpt",
        "kept.ckpt.h5",
        "kept.h5",
    ]
