"""Shared by test_diffusion / test_generator: fixtures/diffusion.npz (made by
fixtures/make_diffusion.py from PyTorch Protenix 2.0.0) as our feature dict and modules."""

import json
import pathlib

import numpy as np

from diffsci import core
from diffsci.protenix.model.modules.diffusion import DiffusionModule

from ._trunk_fixture import load_strict

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "diffusion.npz"
_CACHE = {}


def data():
    if "d" not in _CACHE:
        with np.load(FIXTURE) as f:
            _CACHE["d"] = {k: f[k] for k in f.files}
    return _CACHE["d"]


def section(prefix):
    """{rest: array} of the keys ``prefix/rest``."""
    n = len(prefix) + 1
    return {k[n:]: v for k, v in data().items() if k.startswith(prefix + "/")}


def feature_dict():
    f = {k: core.tensor(v) for k, v in section("features").items() if k != "mask_trunked"}
    f["pad_info"] = {"mask_trunked": core.tensor(data()["features/mask_trunked"])}
    return f


def trunk():
    return {k: core.tensor(v) for k, v in section("trunk").items()}


def module():
    cfg = json.loads(str(data()["module/config"]))
    return load_strict(DiffusionModule(**cfg), section("module/param")), cfg
