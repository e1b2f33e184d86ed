"""The summary tables at the end of ``python -m bench`` (bench/summary.py) and the flags that
choose one pass or two (no workload is run here)."""

import math

from bench import __main__ as bench_main
from bench.summary import table, tables


def _case(workload, case, times):
    rows = [
        {"label": label, "framework": fw, "seconds": s, "failure": ""} for label, fw, s in times
    ]
    return {"workload": workload, "case": case, "rows": rows}


def test_table_takes_the_best_row_of_each_framework_and_divides_by_torch():
    report = [
        _case(
            "W2",
            "PINN",
            [
                ("ours (fwd)", "ours", 0.030),
                ("ours (rev)", "ours", 0.020),
                ("ours jit", "ours jit", 0.010),
                ("torch (rev)", "torch", 0.040),
                ("torch (fwd)", "torch", 0.025),
            ],
        ),
        _case("MM", "2048", [("ours", "ours", 0.09), ("numpy", "numpy", 0.09)]),
    ]
    text = table("default threads", report)
    lines = text.splitlines()
    assert lines[0] == "default threads"
    assert lines[4] == "| W2 PINN | 20.00 ms | 10.00 ms | 25.00 ms | - | 0.80x | 0.40x |"
    assert lines[5] == "| MM 2048 | 90.00 ms | - | - | - | - | - |"


def test_failed_rows_are_left_out_and_two_passes_make_two_tables():
    case = _case("W1", "200 ops", [("ours", "ours", 0.002), ("torch", "torch", 0.004)])
    case["rows"].append(
        {"label": "torch 2", "framework": "torch", "seconds": math.nan, "failure": "boom"}
    )
    text = tables([("default", [case]), ("1 thread", [case])])
    assert text.count("| W1 200 ops | 2.00 ms | - | 4.00 ms | - | 0.50x | - |") == 2
    assert "\n\n1 thread\n" in text


def test_one_thread_pass_reruns_the_command_without_its_json(monkeypatch, tmp_path):
    seen = {}

    def fake_run(cmd, check):
        seen["cmd"] = cmd
        with open(cmd[cmd.index("--json") + 1], "w") as f:
            f.write("[]")

        class Done:
            returncode = 0

        return Done()

    monkeypatch.setattr("subprocess.run", fake_run)
    out = bench_main._one_thread_pass(["W1", "--quick", "--json", str(tmp_path / "a.json")])
    assert out == []
    cmd = seen["cmd"]
    assert cmd[1:5] == ["-m", "bench", "W1", "--quick"]
    assert cmd[cmd.index("--threads") + 1] == "1" and "--no-summary" in cmd
    assert str(tmp_path / "a.json") not in cmd
