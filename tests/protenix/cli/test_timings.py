"""``protenix predict --timings FILE`` (wall and CPU seconds per stage) and
``--config-overrides`` parsing."""

import json

import pytest

from diffsci.protenix.cli import main as cli_main
from diffsci.protenix.cli import predict, runner


def test_timings_file(tmp_path):
    runner._NETWORK.clear()  # an earlier test's network would be reused: no load stage
    fa = tmp_path / "in.fasta"
    fa.write_text(">a\nMKTAYIAK\n>b\nGSHML\n")
    tfile = tmp_path / "t.json"
    assert cli_main.main(["pred", "-i", str(fa), "-o", str(tmp_path / "out"), "--random-weights",
                          "-e", "2", "-c", "1", "-p", "2", "-q", "--no-plots",
                          "--timings", str(tfile)]) == 0
    t = json.loads(tfile.read_text())
    assert t["startup_cpu"] > 0 and t["run_wall"] > 0
    assert [j["name"] for j in t["jobs"]] == ["a", "b"]
    for j in t["jobs"]:
        st = j["stages"]
        assert set(predict.STAGES) | {"network"} == set(st)
        for k in st:
            assert st[k]["cpu"] is not None and st[k]["cpu"] >= 0, k
        assert st["trunk"]["wall"] > 0 and st["diffusion"]["wall"] > 0
        assert st["trunk"]["cpu"] > 0 and st["diffusion"]["cpu"] > 0
        for clock in ("wall", "cpu"):
            parts = sum(st[k][clock] for k in ("trunk", "diffusion", "confidence"))
            assert parts <= st["network"][clock] + 1e-6
        total = sum(st[k]["wall"] for k in predict.STAGES)
        assert total <= j["total"] + 1e-6 <= t["run_wall"] + 1e-6
    # the network is built once per run: the second job does not load it again
    assert t["jobs"][0]["stages"]["load"]["wall"] > t["jobs"][1]["stages"]["load"]["wall"]


def test_config_overrides_parsing(tmp_path):
    assert predict._overrides(None) is None
    assert predict._overrides('{"model": {"N_cycle": 2}}') == {"model": {"N_cycle": 2}}
    f = tmp_path / "o.yaml"
    f.write_text("sample_diffusion:\n  N_step: 3\n")
    assert predict._overrides(str(f)) == {"sample_diffusion": {"N_step": 3}}
    with pytest.raises(ValueError, match="bad inline JSON"):
        predict._overrides("{model: 2")
    with pytest.raises(ValueError, match="neither a file nor a JSON object"):
        predict._overrides(str(tmp_path / "missing.json"))
    f.write_text("- 1\n- 2\n")
    with pytest.raises(ValueError, match="expected a mapping"):
        predict._overrides(str(f))
