"""datasets sits between core and the domains: it imports core, never a domain, and core never
imports it."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOMAINS = ("mindflow", "mindelec", "protenix", "examples", "bench")


def _top_level_imports(package):
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield path, node.lineno, alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                yield path, node.lineno, node.module.split(".")[0]


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
