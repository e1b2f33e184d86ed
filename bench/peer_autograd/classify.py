"""pytest plugin: write each test's outcome and, for a failure, its kind, to $PEER_REPORT (JSON
lines). Kinds: ``missing`` (a name diffsci lacks), ``wrong-gradient`` (a VJP/JVP check failed),
``wrong-value`` (any other assertion), ``crash`` (any other exception), and ``autograd-internal``
for the tests of autograd's own API listed in ``INTERNAL_TESTS`` (the reason is the error)."""

import json
import os

# tests of autograd's own API, with no counterpart in diffsci (counted as autograd-internal)
INTERNAL_TESTS = {
    "test_wrappers.py::test_deprecated_defgrad_wrapper":
        "autograd's deprecated primitive.defgrad (custom rules here: core.custom_vjp)",
    "test_wrappers.py::test_deprecated_defvjp_wrapper":
        "autograd's deprecated primitive.defvjp with (g, ans, vs, gvs, *args) (here: core.custom_vjp)",
    "test_wrappers.py::test_deprecated_defvjp_is_zero_wrapper":
        "autograd's deprecated primitive.defvjp_is_zero (here: core.stop_gradient)",
    "test_wrappers.py::test_wrapped_name_and_docs":
        "autograd's own docstring of grad and its name format grad_of_<f>_wrt_argnum_<n>",
}  # fmt: skip


def _kind(report):
    if _internal(report.nodeid):
        return "autograd-internal"
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


def _internal(nodeid):
    return next((v for k, v in INTERNAL_TESTS.items() if nodeid.endswith(k)), None)


def pytest_runtest_logreport(report):
    path = os.environ.get("PEER_REPORT")
    if not path or (report.when != "call" and report.outcome != "failed"):
        return
    row = {"test": report.nodeid, "outcome": report.outcome}
    if report.outcome == "failed":
        row["kind"] = _kind(report)
        errors = [ln[2:].strip() for ln in report.longreprtext.splitlines() if ln.startswith("E ")]
        row["error"] = _internal(report.nodeid) or (errors[-1] if errors else "")[:300]
    with open(path, "a") as f:
        f.write(json.dumps(row) + "\n")
