"""examples/protenix/fold.py runs tiny: both inputs give ranked mmCIF files gemmi reads."""

import importlib.util
import os

import pytest

gemmi = pytest.importorskip("gemmi")
EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "protenix",
                       "fold.py")


def test_fold_example_tiny(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("PROTENIX_WEIGHTS_DIR", raising=False)
    spec = importlib.util.spec_from_file_location("protenix_fold_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.main(out_dir=str(tmp_path / "out"), tiny=True)
    assert result["codes"] == {"hp35.a3m": 0, "gcn4_dimer.fasta": 0}
    assert result["random_weights"]  # no weights in the test's cache
    hp35 = tmp_path / "out" / "hp35" / "seed_101" / "predictions" / "hp35_sample_0.cif"
    dimer = (tmp_path / "out" / "gcn4_zipper" / "seed_101" / "predictions"
             / "gcn4_zipper_sample_0.cif")
    st = gemmi.read_structure(str(hp35))
    assert gemmi.one_letter_code([r.name for r in st[0]["A"]]) == \
        "LSDEDFKAVFGMTRSAFANLPLWKQQNLKKEKGLF"
    assert [c.name for c in gemmi.read_structure(str(dimer))[0]] == ["A", "B"]
