"""Run HIPS/autograd's own test suite, unmodified, on diffsci through a thin shim
(``shim/autograd``: ``autograd.numpy`` -> ``core.numpy``/``core.ops``, ``grad``/``make_vjp`` ->
``core.vjp``, ``check_grads`` -> our central-difference checks to second order, float64).

    python -m bench.peer_autograd [--keep DIR] [-k EXPR] [--show KIND...]

Downloads autograd's source distribution from PyPI (``pip download``; nothing is installed),
runs its ``tests/`` with the shim first on ``sys.path`` and prints the outcome per file and per
kind: passed, missing (a function diffsci lacks), wrong-gradient, wrong-value, crash, and
autograd-internal (files testing autograd's own tracer/vspace machinery, which has no
counterpart here). Needs network access to PyPI; never part of ``make test``."""

import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys
import tarfile
import tempfile

VERSION = "1.9.1"
HERE = pathlib.Path(__file__).resolve().parent
# files that test autograd's own machinery (boxes, vspaces, rule tables, timing)
INTERNAL = {
    "test_vspaces.py",
    "test_tests.py",
    "test_logic.py",
    "test_misc.py",
    "test_performance.py",
    "_test_complexity.py",
    "profiling.py",
}
# tests where diffsci differs from autograd on purpose (reported apart, with the reason)
BY_DESIGN = {
    "test_graphs.py::test_assignment_raises_error": "item assignment on a traced tensor is supported and differentiable in diffsci",
    "test_fft.py::test_rfftn_odd_not_implemented": "diffsci's rfftn gradient handles odd last axes (autograd raises NotImplementedError)",
    "test_wrappers.py::test_custom_where_dtypes": "autograd's where returns Python scalars for Python inputs (numpy itself fails this test)",
}


def fetch_tests(cache):
    cache.mkdir(parents=True, exist_ok=True)
    tests = cache / f"autograd-{VERSION}" / "tests"
    if tests.is_dir():
        return tests
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            f"autograd=={VERSION}",
            "-d",
            str(cache),
        ],
        check=True,
    )
    with tarfile.open(cache / f"autograd-{VERSION}.tar.gz") as tar:
        members = [m for m in tar.getmembers() if "/tests/" in m.name or m.name.endswith("/tests")]
        tar.extractall(cache, members=members, filter="data")
    return tests


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=str(pathlib.Path.home() / ".cache" / "diffsci" / "peer"))
    ap.add_argument("-k", default=None, help="pytest -k expression")
    ap.add_argument(
        "--show",
        nargs="*",
        default=["wrong-gradient", "wrong-value", "crash", "by-design"],
        help="failure kinds to list test by test",
    )
    args = ap.parse_args(argv)
    tests = fetch_tests(pathlib.Path(args.cache))
    report = pathlib.Path(tempfile.mkstemp(suffix=".jsonl")[1])
    env = dict(
        os.environ,
        PEER_REPORT=str(report),
        PYTHONPATH=os.pathsep.join([str(HERE / "shim"), str(HERE), str(HERE.parent.parent)]),
    )
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "classify",
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore",
        "--rootdir",
        str(tests),
        "-o",
        "addopts=",
        "--continue-on-collection-errors",
        str(tests),
    ]
    if args.k:
        cmd += ["-k", args.k]
    subprocess.run(cmd, env=env, cwd=tests, stdout=subprocess.DEVNULL)
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    report.unlink()
    by_kind = collections.Counter()
    by_file = collections.defaultdict(collections.Counter)
    for r in rows:
        fname = r["test"].split("::")[0].split("/")[-1]
        kind = "passed" if r["outcome"] == "passed" else r.get("kind", r["outcome"])
        if fname in INTERNAL:
            kind = "autograd-internal" if kind != "passed" else kind
        reason = next((v for k, v in BY_DESIGN.items() if r["test"].startswith(k)), None)
        if reason and kind != "passed":
            kind, r["error"] = "by-design", reason
        r["kind"] = kind
        by_kind[kind] += 1
        by_file[fname][kind] += 1
    kinds = [
        "passed",
        "missing",
        "wrong-gradient",
        "wrong-value",
        "crash",
        "by-design",
        "autograd-internal",
    ]
    print(f"autograd {VERSION} test suite on diffsci: {len(rows)} tests")
    print(f"{'file':24s}" + "".join(f"{k:>15s}" for k in kinds))
    for fname in sorted(by_file):
        print(f"{fname:24s}" + "".join(f"{by_file[fname][k]:15d}" for k in kinds))
    print(f"{'total':24s}" + "".join(f"{by_kind[k]:15d}" for k in kinds))
    for kind in args.show:
        listed = [r for r in rows if r["kind"] == kind]
        if listed:
            print(f"\n{kind} ({len(listed)}):")
            for r in listed:
                print(f"  {r['test']}: {r.get('error', '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
