"""pytest plugin: write each test's outcome and, for a failure, its kind, to $PEER_REPORT (JSON
lines). Kinds: ``missing`` (a name diffsci lacks), ``wrong-gradient`` (a VJP/JVP check failed),
``wrong-value`` (any other assertion), ``crash`` (any other exception)."""

import json
import os


def _kind(report):
    text = report.longreprtext
    last = [ln for ln in text.splitlines() if ln.startswith("E ")]
    err = last[-1] if last else ""
    if "[peer-missing]" in text or ("AttributeError" in err and "has no attribute" in err):
        return "missing"
    if "AssertionError" in text or err.startswith("E       assert"):
        if "check_vjp" in text or "check_jvp" in text or "Derivative" in text:
            return "wrong-gradient"
        return "wrong-value"
    return "crash"


def pytest_runtest_logreport(report):
    path = os.environ.get("PEER_REPORT")
    if not path or (report.when != "call" and report.outcome != "failed"):
        return
    row = {"test": report.nodeid, "outcome": report.outcome}
    if report.outcome == "failed":
        row["kind"] = _kind(report)
        errors = [ln[2:].strip() for ln in report.longreprtext.splitlines() if ln.startswith("E ")]
        row["error"] = (errors[-1] if errors else "")[:300]
    with open(path, "a") as f:
        f.write(json.dumps(row) + "\n")
