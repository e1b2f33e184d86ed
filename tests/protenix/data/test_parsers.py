"""Input parsers: FASTA / a3m / Protenix JSON -> jobs, and errors that name file, line, column."""

import json

import numpy as np
import pytest

from diffsci.protenix.data import (
    InputError,
    featurize,
    jobs_from_a3m,
    jobs_from_fasta,
    jobs_from_json,
    load_jobs,
    parse_a3m,
    parse_fasta,
    split_complex_a3m,
)


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_fasta_records_match_biopython(tmp_path):
    """Sequences and descriptions as Biopython's FASTA reader gives them."""
    from Bio import SeqIO

    text = ">one first protein\nMKTAY\nIAKQR\n\n>two\nGSHM\n>three x\nacde\n"
    path = _write(tmp_path, "in.fasta", text)
    ours = [(d, s) for d, s, _, _ in parse_fasta(path)]
    with open(path) as fh:
        bio = [(r.description, str(r.seq).upper()) for r in SeqIO.parse(fh, "fasta")]
    assert ours == bio


def test_fasta_jobs_complexes_and_chain_records(tmp_path):
    path = _write(tmp_path, "in.fasta", (
        ">mono\nMKTAYIAK\n"
        ">dimer\nMKTAY:MKTAY:GSHMX\n"           # ColabFold complex: A2 B
        ">ab|H\nEVQLV\n>ab|L\nDIQMT\n>ab|K\nEVQLV\n"    # one record per chain
        ">sp|P69905|HBA_HUMAN Hemoglobin subunit alpha\nVLSPADK\n"))   # UniProt header
    jobs = jobs_from_fasta(path)
    assert [j["name"] for j in jobs] == ["mono", "dimer", "ab", "sp_P69905_HBA_HUMAN"]
    assert "id" not in jobs[3]["sequences"][0]["proteinChain"]
    assert jobs[1]["sequences"] == [{"proteinChain": {"sequence": "MKTAY", "count": 2}},
                                    {"proteinChain": {"sequence": "GSHMX", "count": 1}}]
    assert jobs[2]["sequences"] == [
        {"proteinChain": {"sequence": "EVQLV", "count": 2, "id": ["H", "K"]}},
        {"proteinChain": {"sequence": "DIQMT", "count": 1, "id": ["L"]}}]
    # the named chains are used; X is read as UNK (restype 20)
    f = featurize(jobs[1])
    assert f["restype"][-1].argmax() == 20
    assert list(np.unique(f["asym_id"])) == [0, 1, 2]
    assert list(f["entity_id"][[0, 5, 10]]) == [0, 0, 1] and list(f["sym_id"][[0, 5]]) == [0, 1]


@pytest.mark.parametrize("text, match", [
    (">a\n\n>b\nMKT\n", r"in\.fasta:1:3: empty sequence in record '>a'"),
    (">a\nMK::T\n", r"in\.fasta:2:4: empty sequence in record '>a'"),
    (">a\nMKT\nGGBA\n", r"in\.fasta:3:3: unknown residue letter 'B'"),
    (">a\nMK T*\n", r"in\.fasta:2:5: unknown residue letter '\*'"),
    (">x|A\nMKT\n>x|A\nGGG\n", r"in\.fasta:3:4: duplicate chain id 'A' in job 'x' "
                              r"\(first at line 1\)"),
    (">x\nMKT\n>x\nGGG\n", r"in\.fasta:3:2: duplicate job name 'x'"),
    ("MKT\n", r"in\.fasta:1:1: sequence before the first '>' header"),
    (">x|A-1\nMKT\n", r"in\.fasta:1:4: bad chain id 'A-1'"),
    (">big\nAAAAA:AAAAAA\n", r"in\.fasta:1:1: job 'big' has 11 tokens, above the limit of 10"),
])
def test_fasta_errors_are_located(tmp_path, text, match):
    path = _write(tmp_path, "in.fasta", text)
    with pytest.raises(InputError, match=match):
        jobs_from_fasta(path, max_tokens=10)


def test_a3m_insertions_lengths_and_query(tmp_path):
    text = ">q\nMKTAY\n>h1 desc\nMK-aaAY\n>h2\n--TAYccc\n"
    descs, rows = parse_a3m(text, query="MKTAY")
    assert descs == ["q", "h1 desc", "h2"] and rows[1] == "MK-aaAY"
    path = _write(tmp_path, "bad.a3m", ">q\nMKTAY\n>h1\nMKTA\n")
    with pytest.raises(InputError, match=r"bad\.a3m:4:1: a3m row '>h1' has 4 aligned columns"):
        parse_a3m(path)
    path = _write(tmp_path, "q.a3m", ">q\nMK-TAY\n>h\nMK-TAY\n")
    with pytest.raises(InputError, match=r"q\.a3m:2:4: a3m query .* residue 3: 'T' vs 'S'"):
        parse_a3m(path, query="MKSAY")
    path = _write(tmp_path, "c.a3m", ">q\nMKTAY\n>h\nMK1AY\n")
    with pytest.raises(InputError, match=r"c\.a3m:4:3: bad a3m character '1'"):
        parse_a3m(path)


def test_colabfold_complex_a3m_split_and_job(tmp_path):
    text = ("#5,6\t2,1\n"
            ">101\t102\nMKTAYGSHMLE\n"                  # combined query
            ">UniRef100_P1_9606\t\nMKSAYGaSHMLE\n"    # paired row; insertion in chain 2
            ">U1\nMKTAW------\n"                       # unpaired row of chain 1
            ">101\nMKTAY------\n"                      # ColabFold's per-chain query rows
            ">102\n-----GSHMLE\n"
            ">U2\n-----GTHMLE\n")
    chains = split_complex_a3m(text)
    assert [(c["sequence"], c["count"]) for c in chains] == [("MKTAY", 2), ("GSHMLE", 1)]
    assert chains[0]["pairedMsa"] == ">101\t102\nMKTAY\n>UniRef100_P1_9606\nMKSAY\n"
    assert chains[1]["pairedMsa"] == ">101\t102\nGSHMLE\n>UniRef100_P1_9606\nGaSHMLE\n"
    assert chains[0]["unpairedMsa"] == ">101\t102\nMKTAY\n>U1\nMKTAW\n"
    assert chains[1]["unpairedMsa"] == ">101\t102\nGSHMLE\n>U2\nGTHMLE\n"
    path = _write(tmp_path, "cplx.a3m", text)
    (job,) = jobs_from_a3m(path)
    assert job["name"] == "cplx" and job["sequences"][0]["proteinChain"]["count"] == 2
    f = featurize(job)
    # Protenix pairs the 9606 row across the three chains: row 1, insertion before S of B
    assert f["msa"].shape[1] == 16 and f["deletion_matrix"][1, 11] == 1
    assert list(f["msa"][1, 10:]) == [7, 15, 8, 12, 10, 6]


def test_json_jobs_and_errors(tmp_path):
    (tmp_path / "m").mkdir()
    _write(tmp_path / "m", "a.a3m", ">q\nMKTAY\n>h\nMKSAY\n")
    good = [{"name": "j1", "sequences": [{"proteinChain": {
        "sequence": "MKTAY", "count": 1, "unpairedMsaPath": "m/a.a3m"}}]}]
    path = _write(tmp_path, "jobs.json", json.dumps(good, indent=1))
    (job,) = jobs_from_json(path)
    assert featurize(job)["msa"].shape == (3, 5)          # relative path found
    dna = [{"name": "j2", "sequences": [
        {"proteinChain": {"sequence": "MKTAY", "count": 1}},
        {"dnaSequence": {"sequence": "ACGT", "count": 1}}]}]
    path = _write(tmp_path, "dna.json", json.dumps(dna, indent=1))
    with pytest.raises(InputError, match=r"dna\.json:12:\d+: job 'j2': sequences\[1\] is a "
                                         r"'dnaSequence' entry, not supported yet"):
        jobs_from_json(path)
    lig = [{"name": "j3", "sequences": [{"ligand": {"ligand": "CCD_ATP", "count": 1}}]}]
    with pytest.raises(InputError, match="'ligand' entry, not supported yet"):
        jobs_from_json(_write(tmp_path, "lig.json", json.dumps(lig)))
    dup = [{"name": "j4", "sequences": [
        {"proteinChain": {"sequence": "MKT", "count": 1, "id": ["A"]}},
        {"proteinChain": {"sequence": "GGG", "count": 1, "id": ["A"]}}]}]
    with pytest.raises(InputError, match=r"duplicate chain id 'A'"):
        jobs_from_json(_write(tmp_path, "dup.json", json.dumps(dup)))
    mod = [{"name": "j6", "sequences": [{"proteinChain": {
        "sequence": "MKST", "count": 1, "modifications": [{"ptmType": "CCD_SEP", "ptmPosition": 3}]}}]}]
    with pytest.raises(InputError, match=r"'modifications' .* not supported yet"):
        jobs_from_json(_write(tmp_path, "mod.json", json.dumps(mod)))
    unk = [{"name": "j5", "sequences": [{"proteinChain": {"sequence": "MKZT", "count": 1}}]}]
    with pytest.raises(InputError, match=r"unk\.json:1:\d+: job 'j5': unknown residue letter "
                                         r"'Z' at residue 3"):
        jobs_from_json(_write(tmp_path, "unk.json", json.dumps(unk)))
    with pytest.raises(InputError, match=r"broken\.json:2:\d+: invalid JSON"):
        jobs_from_json(_write(tmp_path, "broken.json", '[{"name": "x",\n  sequences}]'))


def test_load_jobs_dispatches_on_suffix(tmp_path):
    _write(tmp_path, "a.fasta", ">fa\nMKT\n")
    _write(tmp_path, "b.a3m", ">q\nGSH\n>h\nGTH\n")
    _write(tmp_path, "c.json", json.dumps({"name": "js", "sequences": [
        {"proteinChain": {"sequence": "PEA", "count": 1}}]}))
    _write(tmp_path, "notes.txt", "ignored")
    assert [j["name"] for j in load_jobs(str(tmp_path))] == ["fa", "b", "js"]
    with pytest.raises(InputError, match="no such input file"):
        load_jobs(str(tmp_path / "missing.fasta"))


def test_attach_a3m_to_fasta_jobs(tmp_path):
    from diffsci.protenix.data import attach_a3m

    (job,) = jobs_from_fasta(_write(tmp_path, "m.fasta", ">m\nMKTAYIAK\n"))
    attach_a3m(job, _write(tmp_path, "m.a3m", ">q\nMKTAYIAK\n>h\nMKSAYIAK\n"))
    assert featurize(job)["msa"].shape == (3, 8)
    (job,) = jobs_from_fasta(_write(tmp_path, "w.fasta", ">w\nMKTAYIAR\n"))
    with pytest.raises(InputError, match=r"w\.a3m:2: a3m query of chain 1 differs from the "
                                         r"job's sequence at residue 8: 'K' vs 'R'"):
        attach_a3m(job, _write(tmp_path, "w.a3m", ">q\nMKTAYIAK\n>h\nMKSAYIAK\n"))
    (job,) = jobs_from_fasta(_write(tmp_path, "c.fasta", ">c\nMKTAY:GSHMLE\n"))
    with pytest.raises(InputError, match=r"c\.a3m:1:1: a3m has 1 chain\(s\), job 'c' has 2"):
        attach_a3m(job, _write(tmp_path, "c.a3m", ">q\nMKTAY\n"))


def test_old_protenix_msa_dir(tmp_path):
    """Protenix's older JSON: "msa": {"precomputed_msa_dir": ...} with non_pairing.a3m."""
    _write(tmp_path, "non_pairing.a3m", ">q\nMKTAY\n>h\nMKSAY\n")
    job = {"name": "o", "sequences": [{"proteinChain": {
        "sequence": "MKTAY", "count": 1, "msa": {"precomputed_msa_dir": str(tmp_path),
                                                "pairing_db": "uniref100"}}}]}
    assert featurize(job)["msa"].shape == (3, 5)


def test_colabfold_monomer_a3m_with_scored_headers(tmp_path):
    """colabfold_batch's own a3m layout (first rows of ColabFold's test_a5e17_22.a3m): a
    '#len<TAB>count' line, '>101' query, hits with tab-separated alignment scores."""
    q = "PIAQIHILEGRSDEQKETLIREVSEAISRSLDAPLTSVRVIITEMAKGHFGIGGELASK"
    text = (f"#59\t1\n>101\n{q}\n"
            ">UniRef100_A0A7J3FD47\t90\t0.508\t5.402E-19\t0\t58\t59\t1\t59\t63\n"
            "PVVTIELWEGRTPEQKRELVRAVSSAISRVLGCPEEAVHVILHEVPKANWGIGGRLASE\n"
            ">UniRef100_A0A847M6U1\t83\t0.379\t2.258E-16\t0\t57\t59\t1\t58\t63\n"
            "PFVTVKMWEGRTTEQKAAIIEKVTEALIESMGVEPEHVSVVLQEYPKENWGVGGQLAS-\n")
    (job,) = jobs_from_a3m(_write(tmp_path, "test_a5e17_22.a3m", text))
    body = job["sequences"][0]["proteinChain"]
    assert job["name"] == "test_a5e17_22" and body["sequence"] == q and body["count"] == 1
    assert "pairedMsa" not in body
    f = featurize(job)
    assert f["msa"].shape == (4, 59) and f["msa"][3, -1] == 31


def test_bad_jobs_reported_and_the_rest_kept(tmp_path):
    """With on_error, a bad record loses only its own job (the CLI writes OUT/ERR/<name>.txt)."""
    _write(tmp_path, "a.fasta", ">ok1\nMKT\n>bad1\nMKB\n>ab|A\nGGG\n>ab|A\nPPP\n>ok2\nGSH\n")
    _write(tmp_path, "b.json", json.dumps([
        {"name": "j_ok", "sequences": [{"proteinChain": {"sequence": "PEA", "count": 1}}]},
        {"name": "j_rna", "sequences": [{"rnaSequence": {"sequence": "ACGU", "count": 1}}]}]))
    _write(tmp_path, "c.fasta", "MKT\n")          # not FASTA at all
    errors = []
    jobs = load_jobs(str(tmp_path), on_error=lambda n, e: errors.append((n, str(e))))
    assert [j["name"] for j in jobs] == ["ok1", "ok2", "j_ok"]
    assert [n for n, _ in errors] == ["bad1", "ab", "j_rna", "c"]
    assert "a.fasta:4:3: unknown residue letter 'B'" in errors[0][1]
    assert "a.fasta:7:5: duplicate chain id 'A'" in errors[1][1]
    assert "'rnaSequence' entry, not supported yet" in errors[2][1]
    with pytest.raises(InputError, match="unknown residue letter 'B'"):
        load_jobs(str(tmp_path / "a.fasta"))
