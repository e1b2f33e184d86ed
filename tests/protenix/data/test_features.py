"""featurize(): every feature equals PyTorch Protenix 2.0.0's own inference featurizer.

The reference (fixtures/features.npz) was made by fixtures/make_features.py, which runs
Protenix's ``SampleDictToFeatures`` + ``InferenceMSAFeaturizer`` + template featurizer +
``make_dummy_feature`` + ``data_type_transform`` on three jobs (a monomer with an unpaired a3m, a
single sequence with X, an A2B complex with paired + unpaired a3m, and a complex with explicit
chain ids, a short chain and deeper paired MSAs with repeated species, and an F + G x3 complex
with 80/60-row paired MSAs). ``ref_pos`` is compared
up to the random rigid motion Protenix applies to each residue (the conformer source is the
CCD ideal one on both sides, see the script).
"""

import json
import os

import numpy as np
import pytest

from diffsci.protenix.data import InputError, build_atoms, featurize
from diffsci.protenix.data.ccd_table import CCD_TABLE

FIX = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "features.npz")
CASES = ["monomer_a3m", "single_seq", "complex_paired", "ids_and_species", "deep_complex"]


def _flat(feat):
    out = {}
    for k, v in feat.items():
        if isinstance(v, dict):
            out.update({f"{k}.{k2}": v2 for k2, v2 in v.items()})
        else:
            out[k] = v
    return out


@pytest.fixture(scope="module")
def ref():
    with np.load(FIX) as z:
        return {k: z[k] for k in z.files}


def _case(ref, case):
    job = json.loads(str(ref[f"{case}/job"]))
    feats = {k.split("/", 2)[2]: v for k, v in ref.items() if k.startswith(f"{case}/feat/")}
    return job, feats


def _kabsch_rmsd(a, b):
    """RMSD of b onto a after the optimal rotation + translation."""
    a0, b0 = a - a.mean(0), b - b.mean(0)
    u, _, vt = np.linalg.svd(b0.T @ a0)
    d = np.sign(np.linalg.det(u @ vt))
    r = u @ np.diag([1.0, 1.0, d]) @ vt
    return float(np.sqrt(np.mean(np.sum((b0 @ r - a0) ** 2, axis=1))))


@pytest.mark.parametrize("case", CASES)
def test_every_feature_equals_protenix(ref, case):
    job, want = _case(ref, case)
    got = _flat(featurize(job, seed=0))
    assert list(got) == list(want)          # same keys, in Protenix's order
    for k, w in want.items():
        g = got[k]
        assert g.shape == w.shape, (k, g.shape, w.shape)
        assert g.dtype == w.dtype, (k, g.dtype, w.dtype)
        if k != "ref_pos":
            np.testing.assert_array_equal(g, w, err_msg=k)


@pytest.mark.parametrize("case", CASES)
def test_ref_pos_equals_protenix_up_to_residue_motion(ref, case):
    job, want = _case(ref, case)
    got = featurize(job, seed=0)
    uid = want["ref_space_uid"]
    for u in np.unique(uid):
        sel = uid == u
        a, b = want["ref_pos"][sel].astype(np.float64), got["ref_pos"][sel].astype(np.float64)
        assert _kabsch_rmsd(a, b) < 1e-4, (case, u)
        # both: a centred conformer moved by R (x + t), |t_i| <= 1 Angstrom
        assert np.linalg.norm(a.mean(0)) <= np.sqrt(3) + 1e-5
        assert np.linalg.norm(b.mean(0)) <= np.sqrt(3) + 1e-5


def test_seed_moves_only_ref_pos():
    job, _ = _case({"j/job": np.array(json.dumps({"name": "s", "sequences": [
        {"proteinChain": {"sequence": "MKTWX", "count": 2}}]}))}, "j")
    f0, f0b, f1 = featurize(job, seed=0), featurize(job, seed=0), featurize(job, seed=1)
    np.testing.assert_array_equal(f0["ref_pos"], f0b["ref_pos"])
    assert not np.allclose(f0["ref_pos"], f1["ref_pos"])
    for k in _flat(f0):
        if k != "ref_pos":
            np.testing.assert_array_equal(_flat(f0)[k], _flat(f1)[k], err_msg=k)
    # the motion is rigid: intra-residue distances equal the CCD ideal ones
    atoms = build_atoms(job)
    sel = np.flatnonzero((atoms["asym"] == 1) & (atoms["res_id"] == 4))
    d = lambda x: np.linalg.norm(x[:, None] - x[None], axis=-1)  # noqa: E731
    np.testing.assert_allclose(d(f1["ref_pos"][sel]), d(atoms["ideal"][sel]), atol=1e-4)


def test_atoms_oxt_only_on_chain_ends_and_heavy_atom_counts():
    job = {"name": "t", "sequences": [{"proteinChain": {"sequence": "GAW", "count": 1}},
                                      {"proteinChain": {"sequence": "X", "count": 1}}]}
    atoms = build_atoms(job)
    oxt = np.flatnonzero(atoms["atom_name"] == "OXT")
    assert [(atoms["asym"][i], atoms["res_id"][i]) for i in oxt] == [(0, 3), (1, 1)]
    # heavy atoms of the free amino acids (with OXT): Gly 5, Ala 6, Trp 15; UNK (CCD: N CA C O
    # CB CG OXT) 7; inside the chain one fewer
    counts = [int(((atoms["asym"] == a) & (atoms["res_id"] == r)).sum())
              for a, r in [(0, 1), (0, 2), (0, 3), (1, 1)]]
    assert counts == [4, 5, 15, 7]


def test_ccd_table_matches_biotite_ccd():
    """The committed table equals a fresh read of biotite's CCD (the generator's source)."""
    pytest.importorskip("biotite")
    from diffsci.protenix.data.make_ccd_table import build_table

    table, _ = build_table()
    assert table == CCD_TABLE
    # standard heavy-atom counts of the free amino acids (CCD, with OXT)
    expected = {"GLY": 5, "ALA": 6, "SER": 7, "CYS": 7, "PRO": 8, "THR": 8, "VAL": 8,
                "ASP": 9, "ASN": 9, "ILE": 9, "LEU": 9, "MET": 9, "GLN": 10, "GLU": 10,
                "LYS": 10, "HIS": 11, "PHE": 12, "ARG": 12, "TYR": 13, "TRP": 15}
    assert {k: len(v["atoms"]) for k, v in CCD_TABLE.items() if k != "UNK"} == expected


def test_featurize_reads_msa_paths_and_checks_the_query(tmp_path):
    a3m = tmp_path / "a.a3m"
    a3m.write_text(">q\nMKTAY\n>h1\nMKSAY\n>h2\nMK-AY\n")
    job = {"name": "p", "sequences": [{"proteinChain": {"sequence": "MKTAY", "count": 1,
                                                        "unpairedMsaPath": str(a3m)}}]}
    f = featurize(job)
    assert f["msa"].shape == (4, 5)   # query placeholder of the paired block + 3 rows
    bad = dict(job, sequences=[{"proteinChain": {"sequence": "MKTAW", "count": 1,
                                                 "unpairedMsaPath": str(a3m)}}])
    with pytest.raises(InputError, match=r"a\.a3m:2:5: a3m query .* residue 5: 'Y' vs 'W'"):
        featurize(bad)
    f1 = featurize(job, use_msa=False)
    assert f1["msa"].shape == (2, 5)


def test_bond_mask_can_be_left_out():
    job = {"name": "b", "sequences": [{"proteinChain": {"sequence": "MKTAY", "count": 1}}]}
    full, light = featurize(job), featurize(job, bond_mask=False)
    assert full["bond_mask"].shape == (full["ref_pos"].shape[0],) * 2
    assert set(full) - set(light) == {"bond_mask"}


def test_zero_pair_features_take_no_memory():
    job = {"name": "z", "sequences": [{"proteinChain": {"sequence": "MKTAY" * 40, "count": 1}}]}
    f = featurize(job)
    for k in ("template_distogram", "bond_mask", "token_bonds", "template_unit_vector"):
        assert not any(f[k].strides) and not f[k].flags.writeable, k
    assert f["template_distogram"].shape == (4, 200, 200, 39) and not f["template_distogram"].any()
    for k in ("msa", "ref_pos", "restype", "template_aatype"):     # real arrays stay writable
        assert f[k].flags.writeable, k


def test_featurize_refuses_too_many_tokens():
    job = {"name": "big", "sequences": [{"proteinChain": {"sequence": "A" * 30, "count": 2}}]}
    with pytest.raises(InputError, match="60 tokens, above the limit of 50"):
        featurize(job, max_tokens=50)


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
REF_INSTALL = os.path.join(REPO, ".ref", "protenix-2.0.0")


@pytest.mark.parity
def test_fixture_regenerates_from_reference(tmp_path):
    """Re-run fixtures/make_features.py against the PyTorch Protenix install (a subprocess
    started outside the repository, so our package never shadows it): the committed fixture is
    exactly what Protenix's featurizer produces now."""
    import subprocess
    import sys

    if not os.path.isdir(REF_INSTALL):
        pytest.skip(f"the reference Protenix 2.0.0 is not installed at {REF_INSTALL}")
    env = dict(os.environ, PYTHONPATH=REF_INSTALL, LAYERNORM_TYPE="torch", OMP_NUM_THREADS="1")
    script = os.path.join(os.path.dirname(FIX), "make_features.py")
    subprocess.run([sys.executable, script, str(tmp_path)], cwd=tmp_path, env=env, check=True,
                   capture_output=True, timeout=600)
    with np.load(tmp_path / "features.npz") as new, np.load(FIX) as old:
        assert sorted(new.files) == sorted(old.files)
        for k in old.files:
            np.testing.assert_array_equal(new[k], old[k], err_msg=k)
