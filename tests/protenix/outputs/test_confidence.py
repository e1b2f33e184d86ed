"""Confidence metrics against PyTorch Protenix 2.0.0's own functions (fixtures/confidence.npz,
made by fixtures/make_confidence.py) and against their AF3 definitions on hand-made cases."""

import os

import numpy as np
import pytest

from diffsci.protenix.outputs import confidence as C

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "confidence.npz")
BINS = {"plddt": {"no_bins": 10}, "pae": {"no_bins": 16}, "pde": {"no_bins": 16}}


def _case(name):
    z = np.load(FIX)
    pre_in, pre_out = f"{name}/in/", f"{name}/out/"
    inp = {k[len(pre_in):]: z[k] for k in z.files if k.startswith(pre_in)}
    out = {k[len(pre_out):]: z[k] for k in z.files if k.startswith(pre_out)}
    return inp, out


@pytest.mark.parametrize("name", ["complex", "single"])
def test_matches_protenix(name):
    inp, ref = _case(name)
    contact = C.compute_contact_prob(inp["distogram_logits"])
    np.testing.assert_allclose(contact, ref["contact_probs"], rtol=1e-5, atol=1e-6)
    summary, full = C.compute_full_data_and_summary(
        inp["pae_logits"], inp["plddt_logits"], inp["pde_logits"], contact,
        inp["token_asym_id"], inp["token_has_frame"], inp["atom_coordinate"],
        inp["atom_to_token_idx"], inp["atom_is_polymer"], int(inp["N_recycle"]),
        return_full_data=True, bins=BINS)
    keys = set(summary[0])
    assert keys == set(ref) - {"contact_probs", "atom_plddt", "token_pair_pae",
                               "token_pair_pde"}, keys ^ set(ref)
    for key in keys:
        ours = np.stack([np.asarray(s[key], dtype=np.float64) for s in summary])
        np.testing.assert_allclose(ours, ref[key].reshape(ours.shape), rtol=1e-4, atol=1e-6,
                                   err_msg=key)
    for key in ("atom_plddt", "token_pair_pae", "token_pair_pde"):
        np.testing.assert_allclose(np.stack([f[key] for f in full]), ref[key], rtol=1e-4,
                                   atol=1e-6, err_msg=key)
    if name == "complex":  # the fixture places chain B onto chain A in sample 1
        assert [bool(s["has_clash"]) for s in summary] == [False, True, False]
        assert summary[1]["ranking_score"] < -90


def test_ptm_of_certain_zero_error_is_one():
    # all PAE mass in the first bin (centre 0.25 A): pTM -> 1 / (1 + (0.25/d0)^2)
    n, b = 30, 64
    logits = np.full((1, n, n, b), -1e4)
    logits[..., 0] = 0.0
    d0 = 1.24 * (30 - 15) ** (1 / 3) - 1.8
    expect = 1.0 / (1.0 + (0.25 / d0) ** 2)
    prob = C.logits_to_prob(logits)
    np.testing.assert_allclose(C.calculate_ptm(prob, np.ones(n, bool)), [expect], rtol=1e-12)
    asym = np.repeat([0, 1], 15)
    # ipTM's denominator carries Protenix's eps = 1e-8 (relative 1e-8 / 15 here)
    np.testing.assert_allclose(C.calculate_iptm(prob, np.ones(n, bool), asym), [expect],
                               rtol=1e-9)


def test_clash_rule():
    # two chains of 10 atoms; k atoms of B within 1 A of A: clash iff k / 10 > 0.5
    a = np.stack([np.arange(10) * 4.0, np.zeros(10), np.zeros(10)], -1)
    for k, expect in ((5, False), (6, True)):
        b = a + [0.0, 30.0, 0.0]
        b[:k] = a[:k] + [0.0, 0.5, 0.0]
        x = np.concatenate([a, b])[None]
        got = C.calculate_clash(x, np.array([0, 1]), np.repeat([0, 1], 10), np.ones(20))
        assert got.tolist() == [expect]


def test_bin_errors_name_the_shape():
    with pytest.raises(ValueError, match=r"16 bins.*no_bins=64"):
        C.logits_to_score(np.zeros((3, 16)), 0.0, 32.0, 64)


REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
REF_INSTALL = os.path.join(REPO, ".ref", "protenix-2.0.0")


@pytest.mark.parity
def test_fixture_regenerates_from_reference(tmp_path):
    """Re-run fixtures/make_confidence.py against the PyTorch Protenix install (a subprocess
    outside the repository): the committed fixture is what Protenix computes now."""
    import importlib.util
    import subprocess
    import sys

    if not os.path.isdir(REF_INSTALL):
        pytest.skip(f"the reference Protenix 2.0.0 is not installed at {REF_INSTALL}")
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed (make test-parity installs it)")
    env = dict(os.environ, PYTHONPATH=REF_INSTALL, LAYERNORM_TYPE="torch", OMP_NUM_THREADS="1")
    script = os.path.join(os.path.dirname(FIX), "make_confidence.py")
    subprocess.run([sys.executable, script, str(tmp_path)], cwd=tmp_path, env=env, check=True,
                   capture_output=True, timeout=300)
    with np.load(tmp_path / "confidence.npz") as new, np.load(FIX) as old:
        assert sorted(new.files) == sorted(old.files)
        for k in old.files:
            np.testing.assert_allclose(new[k], old[k], rtol=1e-6, atol=1e-7, err_msg=k)
