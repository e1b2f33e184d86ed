"""datasets sits between core and the domains: it imports core, never a domain, and core never
imports it."""

import pathlib

from tests._imports import imports

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOMAINS = ("mindflow", "mindelec", "protenix", "examples", "bench")


def _top_level_imports(package):
    for path in sorted((ROOT / package).rglob("*.py")):
        for line, module, _names in imports(path):
            yield path, line, module.split(".")[0]


def test_datasets_imports_no_domain():
    bad = [
        f"{p.relative_to(ROOT)}:{line} imports {mod}"
        for p, line, mod in _top_level_imports("datasets")
        if mod in DOMAINS
    ]
    assert not bad, bad


def test_core_does_not_import_datasets():
    bad = [
        f"{p.relative_to(ROOT)}:{line}"
        for p, line, mod in _top_level_imports("core")
        if mod == "datasets"
    ]
    assert not bad, bad
