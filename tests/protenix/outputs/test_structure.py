"""mmCIF/PDB writers: files read back by gemmi and biopython give our coordinates, chain ids,
residue names, atom names and B-factors."""

import os
import warnings

import numpy as np
import pytest

from diffsci.protenix.data import build_atoms
from diffsci.protenix.outputs.structure import atomic_write, to_pdb, write_mmcif, write_pdb

gemmi = pytest.importorskip("gemmi")

JOB = {"name": "two_chains", "sequences": [
    {"proteinChain": {"sequence": "MKWX", "count": 1}},
    {"proteinChain": {"sequence": "GAC", "count": 2}},
]}


def path_text(path):
    with open(path) as f:
        return f.read()


def _prediction(seed=0):
    atoms = build_atoms(JOB)
    rng = np.random.default_rng(seed)
    coords = rng.uniform(-50, 50, size=(len(atoms["atom_name"]), 3))
    plddt = rng.uniform(0, 100, size=len(coords))
    return atoms, coords, plddt


def _gemmi_rows(path):
    st = gemmi.read_structure(str(path))
    rows = []
    for ch in st[0]:
        for res in ch:
            for at in res:
                rows.append((ch.name, res.name, res.seqid.num, at.name, at.element.name.upper(),
                             (at.pos.x, at.pos.y, at.pos.z), at.b_iso))
    return st, rows


def _expect(atoms, coords, plddt):
    return [(str(atoms["chain_id"][i]), atoms["res_name"][i], int(atoms["res_id"][i]),
             atoms["atom_name"][i], atoms["element"][i].upper(), tuple(coords[i]), plddt[i])
            for i in range(len(coords))]


def _compare(rows, expect):
    assert len(rows) == len(expect)
    for got, exp in zip(rows, expect):
        assert got[:5] == exp[:5]
        np.testing.assert_allclose(got[5], exp[5], atol=6e-4)
        assert abs(got[6] - exp[6]) < 6e-3


def test_mmcif_gemmi_and_biopython(tmp_path):
    atoms, coords, plddt = _prediction()
    path = write_mmcif(tmp_path / "x.cif", atoms, coords, plddt, name="two chains")
    st, rows = _gemmi_rows(path)
    _compare(rows, _expect(atoms, coords, plddt))
    assert [c.name for c in st[0]] == ["A", "B", "C"]
    assert "X" not in "".join(r[1] for r in rows) and "UNK" in {r[1] for r in rows}
    doc = gemmi.cif.read(str(path))  # entity_poly_seq is there for the sequence
    assert list(doc[0].find_loop("_entity_poly_seq.mon_id")) == ["MET", "LYS", "TRP", "UNK",
                                                                  "GLY", "ALA", "CYS"]
    from Bio.PDB import MMCIFParser
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = MMCIFParser(QUIET=True).get_structure("x", str(path))
    bio = [(a.get_parent().get_parent().id, a.get_parent().get_resname(), a.get_parent().id[1],
            a.get_id(), a.element.upper(), tuple(a.coord), a.bfactor) for a in s.get_atoms()]
    _compare(bio, _expect(atoms, coords, plddt))


def test_pdb_gemmi_and_biopython(tmp_path):
    atoms, coords, plddt = _prediction(1)
    path = write_pdb(tmp_path / "x.pdb", atoms, coords, plddt, meaningless=True)
    assert "meaningless" in path_text(path)
    _, rows = _gemmi_rows(path)
    _compare(rows, _expect(atoms, coords, plddt))
    from Bio.PDB import PDBParser
    s = PDBParser(QUIET=True).get_structure("x", str(path))
    assert [a.get_id() for a in s.get_atoms()] == list(atoms["atom_name"])


def test_meaningless_title_and_errors(tmp_path):
    atoms, coords, plddt = _prediction()
    path = write_mmcif(tmp_path / "m.cif", atoms, coords, plddt, meaningless=True)
    doc = gemmi.cif.read(str(path))
    assert "meaningless" in doc[0].find_value("_struct.title")
    with pytest.raises(ValueError, match=r"shape \(5, 3\).*expected"):
        write_mmcif(tmp_path / "bad.cif", atoms, coords[:5])
    bad = coords.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"atom 3 .*non-finite"):
        write_mmcif(tmp_path / "bad.cif", atoms, bad)
    assert not os.path.exists(tmp_path / "bad.cif")
    atoms2 = dict(atoms, chain_id=np.array(["AA"] * len(coords), dtype=object))
    with pytest.raises(ValueError, match=r"AA.*not one character"):
        to_pdb(atoms2, coords)


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    p = tmp_path / "f.txt"
    atomic_write(p, "old")

    class Boom:
        def __str__(self):
            raise RuntimeError("boom")

    with pytest.raises(TypeError):
        atomic_write(p, Boom())
    assert p.read_text() == "old"
    assert os.listdir(tmp_path) == ["f.txt"]


def test_same_atoms_as_protenix_writer(tmp_path):
    """fixtures/structure_reference.cif is Protenix's own writer on the same job
    (fixtures/make_structure.py): gemmi reads the same atoms (order, chains, residues, names,
    elements), coordinates and B-factors from ours, and the same entity sequences."""
    ref = os.path.join(os.path.dirname(__file__), "..", "fixtures", "structure_reference.cif")
    atoms = build_atoms(JOB)
    n = len(atoms["atom_name"])
    i = np.arange(n, dtype=np.float64)
    xyz = np.stack([(0.37 * i) % 17, 0.11 * i, -0.05 * i], -1)
    b = (7 * i) % 100
    ours = write_mmcif(tmp_path / "ours.cif", atoms, xyz, b, name="two_chains")
    _, ref_rows = _gemmi_rows(ref)
    _, our_rows = _gemmi_rows(ours)
    assert len(ref_rows) == len(our_rows) == n
    for r, o in zip(ref_rows, our_rows):
        assert r[:5] == o[:5]
        np.testing.assert_allclose(r[5], o[5], atol=6e-3)  # Protenix writes 2-3 decimals
        assert r[6] == pytest.approx(o[6], abs=1e-6)
    seqs = [gemmi.cif.read(str(p))[0].find("_entity_poly_seq.", ["entity_id", "mon_id"])
            for p in (ref, ours)]
    assert [list(r) for r in seqs[0]] == [list(r) for r in seqs[1]]
