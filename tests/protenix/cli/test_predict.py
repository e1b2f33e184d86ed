"""``protenix predict`` end to end (the network with random weights, tiny sizes: conftest.py): output
tree and ranking, files readable by gemmi, per-job errors, re-runs, weights lookup, aliases,
``--help``, ``info``, ``download`` from a local server, ``python -m diffsci.protenix``."""

import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from diffsci.protenix.cli import main as cli_main
from diffsci.protenix.cli import runner
from diffsci.protenix.model.weights import WeightsError

gemmi = pytest.importorskip("gemmi")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FASTA = """>mono
MKTAYIAKQRQISFVKSHFSRQ
>dimer
MKTAYIAK:GSHMLE
>broken
MKTAJIAK
"""


def _run(*argv):
    return cli_main.main([str(a) for a in argv])


def _summaries(pred_dir, name):
    out = {}
    for f in os.listdir(pred_dir):
        if f.startswith(f"{name}_summary_confidence_sample_"):
            with open(os.path.join(pred_dir, f)) as fh:
                out[int(f.rsplit("_", 1)[1].split(".")[0])] = json.load(fh)
    return out


@pytest.fixture
def no_weights(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("PROTENIX_WEIGHTS_DIR", raising=False)


def test_fasta_end_to_end_errors_and_rerun(tmp_path, no_weights, capsys):
    fa = tmp_path / "in.fasta"
    fa.write_text(FASTA)
    out = tmp_path / "out"
    rc = _run("predict", fa, "-o", out, "--random-weights", "--seeds", "7,8", "--samples", 3,
              "--need-atom-confidence", "-q")
    assert rc == 1  # one bad job
    err = (out / "ERR" / "broken.txt").read_text()
    assert "in.fasta:6:5" in err and "'J'" in err
    printed = capsys.readouterr()
    assert "meaningless" in printed.out and "ranking" in printed.out  # banner + summary table
    for name, chains in (("mono", ["A"]), ("dimer", ["A", "B"])):
        for seed in (7, 8):
            pred = out / name / f"seed_{seed}" / "predictions"
            s = _summaries(pred, name)
            assert sorted(s) == [0, 1, 2]
            scores = [s[r]["ranking_score"] for r in range(3)]
            assert scores == sorted(scores, reverse=True)
            assert all("meaningless" in s[r]["warning"] for r in range(3))
            assert {"plddt", "ptm", "iptm", "chain_ptm", "chain_iptm", "chain_pair_iptm",
                    "chain_plddt", "has_clash", "disorder", "ranking_score",
                    "num_recycles"} <= set(s[0])
            assert s[0]["num_recycles"] == 4  # the mini model's N_cycle
            st = gemmi.read_structure(str(pred / f"{name}_sample_0.cif"))
            assert [c.name for c in st[0]] == chains
            full = json.loads((pred / f"{name}_full_data_sample_0.json").read_text())
            n_tok = 22 if name == "mono" else 14
            assert np.shape(full["token_pair_pae"]) == (n_tok, n_tok)
            # B-factor = atom pLDDT x 100 of the same sample (the full-data JSON keeps
            # Protenix's 2 decimals of the 0-1 value: 0.5 pLDDT points)
            b = [a.b_iso for c in st[0] for r in c for a in r]
            np.testing.assert_allclose(b, np.array(full["atom_plddt"]) * 100, atol=0.51)
            assert np.corrcoef(b, full["atom_plddt"])[0, 1] > 0.99
            assert (out / name / f"seed_{seed}" / f"{name}_pae.png").stat().st_size > 1000
    # a re-run skips the finished jobs (files untouched), fails the bad one again
    cif = out / "mono" / "seed_7" / "predictions" / "mono_sample_0.cif"
    stamp = cif.stat().st_mtime_ns
    assert _run("predict", fa, "-o", out, "--random-weights", "-s", "7,8", "-e", 3, "-q") == 1
    assert cif.stat().st_mtime_ns == stamp
    assert "4 (job, seed) pair(s) done already and skipped, 1 failed" in capsys.readouterr().out
    assert _run("predict", fa, "-o", out, "--random-weights", "-s", "7", "-e", 3, "-q",
                "--overwrite", "--no-plots") == 1
    assert cif.stat().st_mtime_ns != stamp


def test_failing_job_does_not_stop_the_others(tmp_path, no_weights, monkeypatch):
    fa = tmp_path / "in.fasta"
    fa.write_text(">first\nMKTAY\n>second\nGSHML\n>third\nACDEF\n")
    real = runner.run_model

    def flaky(features, atoms, **kw):
        if len(features["asym_id"]) == 5 and atoms["res_name"][0] == "GLY":
            raise RuntimeError("out of memory in the trunk (simulated)")
        return real(features, atoms, **kw)

    monkeypatch.setattr(runner, "run_model", flaky)
    out = tmp_path / "out"
    assert _run("pred", "-i", fa, "-o", out, "--random-weights", "-e", 2, "-q",
                "--no-plots") == 1
    assert "simulated" in (out / "ERR" / "second.txt").read_text()
    assert (out / "first" / "seed_101" / "predictions" / "first_sample_1.cif").exists()
    assert (out / "third" / "seed_101" / "predictions" / "third_sample_1.cif").exists()
    monkeypatch.setattr(runner, "run_model", real)  # fixed: the re-run clears the error file
    assert _run("pred", "-i", fa, "-o", out, "--random-weights", "-e", 2, "-q",
                "--no-plots") == 0
    assert not (out / "ERR" / "second.txt").exists()


def test_json_and_a3m_inputs(tmp_path, no_weights):
    a3m = tmp_path / "q.a3m"
    a3m.write_text(">101\nMKTAYIAK\n>hit1\nMKSAY-AK\n>hit2\nMRTaAYIAK\n")
    js = tmp_path / "jobs.json"
    js.write_text(json.dumps([{"name": "js", "sequences": [
        {"proteinChain": {"sequence": "MKTAY", "count": 2}}]}]))
    out = tmp_path / "out"
    for inp in (a3m, js):
        assert _run("predict", inp, "-o", out, "--random-weights", "-e", 1, "-q",
                    "--no-plots", "--pdb") == 0
    assert (out / "js" / "seed_101" / "predictions" / "js_sample_0.pdb").exists()
    st = gemmi.read_structure(str(out / "js" / "seed_101" / "predictions" / "js_sample_0.cif"))
    assert [c.name for c in st[0]] == ["A", "B"]
    names = [d for d in os.listdir(out) if d != "ERR"]
    assert len(names) == 2


def test_weights_lookup_order_and_error(tmp_path, monkeypatch, no_weights, capsys):
    model = "protenix_mini_default_v0.5.0"
    with pytest.raises(WeightsError) as e:
        runner.find_weights(model)
    msg = str(e.value)
    assert "PROTENIX_WEIGHTS_DIR" in msg and str(tmp_path / "cache") in msg
    assert f"protenix download {model}" in msg and "--random-weights" in msg
    cache = tmp_path / "cache" / "protenix" / "checkpoints"
    cache.mkdir(parents=True)
    (cache / f"{model}.pt").write_bytes(b"x")
    assert runner.find_weights(model) == str(cache / f"{model}.pt")
    env = tmp_path / "env"
    env.mkdir()
    (env / f"{model}.h5").write_bytes(b"x")
    monkeypatch.setenv("PROTENIX_WEIGHTS_DIR", str(env))
    assert runner.find_weights(model) == str(env / f"{model}.h5")
    own = tmp_path / "mine.h5"
    own.write_bytes(b"x")
    assert runner.find_weights(model, str(own)) == str(own)
    with pytest.raises(WeightsError, match="no such file"):
        runner.find_weights(model, str(tmp_path / "missing.pt"))
    # the command: every job fails with the lookup's message, exit status = jobs
    fa = tmp_path / "in.fasta"
    fa.write_text(">a\nMKT\n>b\nGSH\n")
    monkeypatch.delenv("PROTENIX_WEIGHTS_DIR")
    (cache / f"{model}.pt").unlink()
    assert _run("predict", fa, "-o", tmp_path / "o", "-q") == 2
    assert "no weights found" in capsys.readouterr().err
    assert "no weights found" in (tmp_path / "o" / "ERR" / "a.txt").read_text()


def test_protenix_aliases_and_help(capsys):
    parser = cli_main.build_parser()
    long = parser.parse_args(["predict", "x.fa", "-o", "o", "--seeds", "1,2", "--model",
                              "protenix_tiny_default_v0.5.0", "--cycles", "2", "--steps", "3",
                              "--samples", "4", "--dtype", "bf16"])
    short = parser.parse_args(["pred", "-i", "x.fa", "-o", "o", "-s", "1,2", "-n",
                               "protenix_tiny_default_v0.5.0", "-c", "2", "-p", "3", "-e", "4",
                               "-d", "bf16"])
    for key in ("out", "seeds", "model", "cycles", "steps", "samples", "dtype"):
        assert getattr(long, key) == getattr(short, key), key
    assert (long.input or long.input_opt) == (short.input or short.input_opt)
    with pytest.raises(SystemExit):
        parser.parse_args(["predict", "--help"])
    text = capsys.readouterr().out
    for flag in ("--model", "--weights", "--seeds", "--samples", "--cycles", "--steps", "--msa",
                 "--dtype", "--device", "--chunk-size", "--random-weights", "--overwrite",
                 "--need-atom-confidence", "--out_dir", "--model_name"):
        assert flag in text, flag
    assert text.count("default") >= 10


def test_bad_arguments(tmp_path, capsys):
    fa = tmp_path / "in.fasta"
    fa.write_text(">a\nMKT\n")
    assert _run("predict", fa, "-o", tmp_path, "--seeds", "1,x", "--random-weights") == 2
    assert "--seeds '1,x'" in capsys.readouterr().err
    assert _run("predict", fa, "-o", tmp_path, "--model", "nope", "--random-weights") == 2
    assert "unknown Protenix model 'nope'" in capsys.readouterr().err
    assert _run("predict", "-o", tmp_path) == 2
    assert _run("predict", tmp_path / "missing.fa", "-o", tmp_path / "o",
                "--random-weights") == 1


def test_info(capsys, no_weights):
    assert _run("info") == 0
    text = capsys.readouterr().out
    assert "protenix_mini_default_v0.5.0" in text and "devices: CPU" in text


def test_download_from_local_server(tmp_path, monkeypatch):
    served = tmp_path / "srv"
    served.mkdir()
    payload = os.urandom(4096)
    (served / "protenix_tiny_default_v0.5.0.pt").write_bytes(payload)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(served), **k)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        monkeypatch.delenv("PROTENIX_WEIGHTS_DIR", raising=False)
        bad = "0" * 64
        assert _run("download", "protenix_tiny_default_v0.5.0", "--url", url, "--sha256", bad,
                    "--no-progress") == 1
        target = tmp_path / "cache" / "protenix" / "checkpoints" / "protenix_tiny_default_v0.5.0.pt"
        assert not target.exists()
        monkeypatch.setenv("PROTENIX_CHECKPOINT_URL", url)
        good = hashlib.sha256(payload).hexdigest()
        assert _run("download", "protenix_tiny_default_v0.5.0", "--sha256", good,
                    "--no-progress") == 0
        assert target.read_bytes() == payload
        assert runner.find_weights("protenix_tiny_default_v0.5.0") == str(target)
        assert _run("download", "not_a_model") == 2
    finally:
        server.shutdown()
        server.server_close()


def test_python_dash_m(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "diffsci.protenix", "--help"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    for cmd in ("predict", "info", "download", "convert"):
        assert cmd in r.stdout


def test_auto_chunk_size_follows_protenix_thresholds():
    from diffsci.protenix.config import get_model_config

    cfg = get_model_config("protenix_mini_default_v0.5.0")
    # configs_base: {1024: -1, 1536: 512, 2048: 256, 2560: 128}, 32 beyond
    got = [runner.resolve_chunk_size("auto", n, cfg) for n in (64, 1024, 1025, 2048, 2560, 4000)]
    assert got == [None, None, 512, 256, 128, 32]
    assert runner.resolve_chunk_size(7, 4000, cfg) == 7


def test_msa_server_mode(tmp_path, no_weights):
    from tests.protenix.data.test_msa_server import SEQ_A, SEQ_B, StandIn

    fa = tmp_path / "in.fasta"
    fa.write_text(f">cx\n{SEQ_A}:{SEQ_B}\n")
    with StandIn(first_status="COMPLETE") as srv:
        rc = _run("predict", fa, "-o", tmp_path / "o", "--msa", "server", "--msa-server",
                  srv.url, "--random-weights", "-e", 1, "-q", "--no-plots")
        posts = [r[1] for r in srv.requests if r[0] == "POST"]
    assert rc == 0
    assert posts == ["/ticket/msa", "/ticket/pair"]
    assert (tmp_path / "o" / "cx" / "seed_101" / "predictions" / "cx_sample_0.cif").exists()


def test_a_failing_plot_is_reported_and_loses_nothing(tmp_path, no_weights, monkeypatch, capsys):
    """Plots come after the structures and the summary JSON: a plot that raises leaves the
    result whole, says so on stderr, and the job counts as done."""
    from diffsci.protenix.outputs import dumper

    def broken(*args, **kwargs):
        raise RuntimeError("no usable matplotlib backend")

    monkeypatch.setattr(dumper, "plot_pae", broken)
    fa = tmp_path / "in.fasta"
    fa.write_text(">mono\nMKTAYIAKQR\n")
    out = tmp_path / "out"
    assert _run("predict", fa, "-o", out, "--random-weights", "--seeds", "7", "--samples", 2,
                "-q") == 0
    pred = out / "mono" / "seed_7" / "predictions"
    assert sorted(_summaries(pred, "mono")) == [0, 1]
    assert (pred / "mono_sample_0.cif").exists() and (pred / "mono_sample_1.cif").exists()
    assert not (out / "mono" / "seed_7" / "mono_pae.png").exists()
    err = capsys.readouterr().err
    assert "plots of mono seed 7 failed" in err and "no usable matplotlib backend" in err
