"""Shared by the trunk parity tests: read a case of fixtures/trunk.npz (made by
fixtures/make_trunk.py from PyTorch Protenix 2.0.0) and load its state dict strictly."""

import json
import pathlib

import numpy as np

from diffsci import core

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "trunk.npz"
_CACHE = {}


def case(name):
    """(config dict, params {key: array}, inputs {name: Tensor}, outputs {name: array})."""
    if "data" not in _CACHE:
        with np.load(FIXTURE) as f:
            _CACHE["data"] = {k: f[k] for k in f.files}
    data = _CACHE["data"]
    cfg = json.loads(str(data[f"{name}/config"]))
    part = {"param": {}, "in": {}, "out": {}}
    for k, v in data.items():
        head, _, rest = k.partition("/")
        if head == name and rest != "config":
            kind, _, key = rest.partition("/")
            part[kind][key] = v
    inputs = {k: core.tensor(v) for k, v in part["in"].items()}
    return cfg, part["param"], inputs, part["out"]


def load_strict(cell, params):
    """Set every Parameter of ``cell`` from ``params`` by its Protenix name; every key must be
    used and every shape must match."""
    ours = dict(cell.parameters_and_names())
    missing = sorted(set(ours) - set(params))
    unexpected = sorted(set(params) - set(ours))
    wrong = sorted(
        f"{k}: ours {tuple(p.shape)}, file {params[k].shape}"
        for k, p in ours.items()
        if k in params and tuple(p.shape) != params[k].shape
    )
    assert not (missing or unexpected or wrong), (
        f"state dict mismatch: missing {missing}, unexpected {unexpected}, shapes {wrong}"
    )
    for k, p in ours.items():
        p.set_data(core.tensor(params[k], dtype=p.dtype))
    return cell


def assert_rel_close(got, want, rtol, what=""):
    """max |got - want| <= rtol * max |want|."""
    got = got.asnumpy() if isinstance(got, core.Tensor) else np.asarray(got)
    err = float(np.max(np.abs(got - want)))
    scale = float(np.max(np.abs(want)))
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert err <= rtol * scale, f"{what}: max error {err:.3e} > {rtol} * {scale:.3e}"
    return err / scale
