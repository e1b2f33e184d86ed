"""ConfidenceHead (AF3 Alg. 31) vs PyTorch Protenix 2.0.0 (fixtures/make_confidence_head.py),
and the block-wise inference path (inplace_safe, chunk_size) vs the plain one."""

import json
import pathlib

import numpy as np
import pytest

from diffsci import core
from diffsci.protenix.model.modules.confidence import ConfidenceHead

from ._trunk_fixture import assert_rel_close, load_strict

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "confidence_head.npz"
NAMES = ("plddt", "pae", "pde", "resolved")


def _load():
    with np.load(FIXTURE) as f:
        d = {k: f[k] for k in f.files}
    part = lambda p: {k[len(p) + 1 :]: v for k, v in d.items() if k.startswith(p + "/")}  # noqa: E731
    cfg = json.loads(str(d["config"]))
    return cfg, part("param"), {k: core.tensor(v) for k, v in part("in").items()}, part("out")


def _run(m, ins, **kw):
    feats = {k: ins[k] for k in ("atom_to_token_idx", "atom_to_tokatom_idx",
                                 "distogram_rep_atom_mask")}  # fmt: skip
    return m(input_feature_dict=feats, s_inputs=ins["s_inputs"], s_trunk=ins["s_trunk"],
             z_trunk=ins["z_trunk"], pair_mask=None, x_pred_coords=ins["x_pred_coords"], **kw)  # fmt: skip


def test_confidence_head_matches_protenix():
    cfg, params, ins, outs = _load()
    m = load_strict(ConfidenceHead(**cfg), params)
    np.testing.assert_allclose(m.lower_bins.asnumpy(), params["lower_bins"])
    for name, got in zip(NAMES, _run(m, ins), strict=True):
        assert_rel_close(got, outs[name], 1e-3, name)


def test_confidence_head_blockwise_equals_plain():
    cfg, params, ins, _ = _load()
    m = load_strict(ConfidenceHead(**cfg), params)
    plain = _run(m, ins)
    with core.no_grad():
        blocks = _run(m, ins, inplace_safe=True, chunk_size=2)
    for name, a, b in zip(NAMES, plain, blocks, strict=True):
        a, b = a.asnumpy(), b.asnumpy()
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-5 * np.abs(a).max(), err_msg=name)


def test_confidence_head_checks_representative_atoms():
    cfg, params, ins, _ = _load()
    m = load_strict(ConfidenceHead(**cfg), params)
    bad = dict(ins)
    bad["distogram_rep_atom_mask"] = core.tensor(np.ones(ins["atom_to_token_idx"].shape[0]))
    with pytest.raises(ValueError, match="distogram_rep_atom_mask"):
        _run(m, bad)
