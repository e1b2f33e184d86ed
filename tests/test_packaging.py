"""diffsci installs under its own namespace and coexists with packages of the names its folders
have: Hugging Face ``datasets``, ByteDance ``protenix``, MindSpore's ``mindflow``/``mindelec``,
any ``core``. The repository's own code imports only through ``diffsci``."""

import base64
import csv
import hashlib
import io
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import zipfile

import pytest

from tests._imports import bare_imports

REPO = pathlib.Path(__file__).resolve().parents[1]
FOLDERS = ("core", "datasets", "mindflow", "mindelec", "protenix")
SOURCES = ("diffsci", *FOLDERS)
SCANNED = (*SOURCES, "tests", "examples", "bench")


# scripts run against PyTorch Protenix 2.0.0 (PYTHONPATH=.ref/protenix-2.0.0, outside the
# repository): there `protenix` is ByteDance's package
REFERENCE_SIDE = ("tests/protenix/fixtures/make_*.py", "bench/_protenix_pred_torch.py")


def _reference_side(path):
    rel = path.relative_to(REPO)
    return any(rel.match(pattern) for pattern in REFERENCE_SIDE)


def test_no_module_imports_a_bare_top_level_name():
    bad = [
        f"{path.relative_to(REPO)}:{line}: import {name}"
        for folder in SCANNED
        for path in sorted((REPO / folder).rglob("*.py"))
        for line, name in bare_imports(path)
        if not (_reference_side(path) and name.split(".")[0] == "protenix")
    ]
    assert not bad, "import these through diffsci (from diffsci import core):\n" + "\n".join(bad)


IMPORT_EVERYTHING = r"""
import collections, importlib, pkgutil, sys
import diffsci
OPTIONAL = {"cupy", "cupy_backends", "mpi4py", "torch", "jax", "rdkit", "biotite", "fastrlock"}
failed = []
for name in diffsci.SUBPACKAGES:
    package = importlib.import_module("diffsci." + name)
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except ImportError as err:
            if (err.name or "").split(".")[0] not in OPTIONAL:
                failed.append(f"{info.name}: {err!r}")
bare = sorted(k for k in sys.modules if k.split(".")[0] in diffsci.SUBPACKAGES)
files = collections.defaultdict(list)
for key, module in list(sys.modules.items()):
    # one module object per Python file; os.path and the like are other names of one object
    if (getattr(module, "__file__", None) or "").endswith(".py") and module.__name__ == key:
        files[module.__file__].append(key)
twice = {f: keys for f, keys in files.items() if len(keys) > 1}
print(len(files), "modules")
assert not failed, failed
assert not bare, f"bare top-level modules loaded: {bare[:10]}"
assert not twice, f"files loaded as two modules: {twice}"
"""


def test_every_module_imports_once_from_the_repository_root():
    """From the repository root (where ``core/``... are importable as bare names), importing
    every module of every subpackage loads each file once and no bare top-level module."""
    proc = subprocess.run([sys.executable, "-c", IMPORT_EVERYTHING], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# --- coexistence with packages of the same names ------------------------------------------


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def make_stand_in_wheel(directory, name, files, console_scripts=()):
    """A tiny pure-Python wheel ``name``-99.0 with ``files`` ({path: text}) and console
    scripts ({script: "module:function"}), written by hand: no network, no build backend."""
    dist_info = f"{name}-99.0.dist-info"
    contents = {path: text.encode() for path, text in files.items()}
    contents[f"{dist_info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: 99.0\n".encode()
    contents[f"{dist_info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: diffsci-tests\n"
                                     b"Root-Is-Purelib: true\nTag: py3-none-any\n")
    if console_scripts:
        lines = "".join(f"{k} = {v}\n" for k, v in dict(console_scripts).items())
        contents[f"{dist_info}/entry_points.txt"] = f"[console_scripts]\n{lines}".encode()
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for path, data in contents.items():
        writer.writerow(_record_line(path, data))
    writer.writerow([f"{dist_info}/RECORD", "", ""])
    contents[f"{dist_info}/RECORD"] = record.getvalue().encode()
    wheel = pathlib.Path(directory) / f"{name}-99.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, data in contents.items():
            zf.writestr(path, data)
    return wheel


def stand_in_wheels(directory):
    wheels = {}
    for name in FOLDERS:
        files = {f"{name}/__init__.py": f"WHO = 'stand-in {name}'\n"}
        scripts = ()
        if name == "datasets":  # Hugging Face's datasets.download has no DownloadError
            files["datasets/download.py"] = "class DownloadManager:\n    pass\n"
        if name == "protenix":  # ByteDance's protenix installs a `protenix` command
            files["protenix/cli.py"] = "def main():\n    print('stand-in protenix command')\n"
            scripts = {"protenix": "protenix.cli:main"}
        wheels[name] = make_stand_in_wheel(directory, name, files, scripts)
    return wheels


def build_diffsci_wheel(tmp_path):
    """diffsci's wheel, built offline from a copy of the sources (the build writes build/
    next to them, never into the repository)."""
    src = tmp_path / "src"
    for folder in SOURCES:
        shutil.copytree(REPO / folder, src / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(REPO / name, src / name)
    out = tmp_path / "wheelhouse"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--quiet", "-w", str(out), str(src)],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = out.glob("diffsci-*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheels")
    return build_diffsci_wheel(tmp), stand_in_wheels(tmp)


def test_wheel_installs_only_under_diffsci(wheels):
    diffsci_wheel, _ = wheels
    with zipfile.ZipFile(diffsci_wheel) as zf:
        names = zf.namelist()
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        scripts = zf.read(entry_points).decode()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"diffsci", diffsci_wheel.name.split("-py3")[0] + ".dist-info"}, tops
    for folder in FOLDERS:
        assert f"diffsci/{folder}/__init__.py" in names
    assert "diffsci-protenix = diffsci.protenix.cli.main:main" in scripts
    assert "\nprotenix =" not in "\n" + scripts


class Venv:
    """A fresh venv without pip; our pip drives it (``pip --python``). diffsci's dependencies
    come from this interpreter's site-packages through a folder of links to their import
    packages only (no metadata), so pip sees just what the test installs."""

    def __init__(self, root, deps):
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True,
                       timeout=120)
        self.bin = root / ("Scripts" if os.name == "nt" else "bin")
        self.python = self.bin / "python"
        purelib = subprocess.run(
            [str(self.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True).stdout.strip()
        pathlib.Path(purelib, "diffsci_test_deps.pth").write_text(f"{deps}\n")
        self.purelib = pathlib.Path(purelib)

    def pip(self, *args):
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(self.python), *args,
             "--disable-pip-version-check", "--quiet"],
            capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"pip {' '.join(args)}:\n{proc.stdout}{proc.stderr}"

    def run(self, *cmd, code=None):
        argv = [str(self.python), "-c", code] if code is not None else [str(self.bin / cmd[0]), *cmd[1:]]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                              cwd=self.purelib.parent)
        assert proc.returncode == 0, f"{argv}:\n{proc.stdout}{proc.stderr}"
        return proc.stdout

    def installed_files(self, dist):
        """Every file the dist's RECORD lists, checked to exist."""
        code = ("import importlib.metadata as m, sys\n"
                f"d = m.distribution({dist!r})\n"
                "missing = [str(f) for f in d.files if not f.locate().exists() and not str(f).endswith('.pyc')]\n"
                "print(len(d.files)); sys.exit(f'missing {missing[:5]}' if missing else 0)\n")
        return int(self.run(code=code))


def dependency_links(directory):
    """A folder of links to this interpreter's installed import packages, minus diffsci, the
    five stand-in names, pip/setuptools and every piece of metadata or .pth."""
    site = pathlib.Path(sysconfig.get_paths()["purelib"])
    skip = {"diffsci", *FOLDERS, "pip", "setuptools", "_distutils_hack", "pkg_resources"}
    directory.mkdir()
    for entry in site.iterdir():
        stem = entry.name.split(".")[0]
        if (entry.suffix in (".pth", ".dist-info", ".egg-info") or stem in skip
                or entry.name.startswith("__editable__") or entry.name == "__pycache__"):
            continue
        (directory / entry.name).symlink_to(entry)
    return directory


CHECK_BOTH = """
import datasets, mindflow, mindelec, core, protenix
for m in (datasets, mindflow, mindelec, core, protenix):
    assert m.WHO.startswith('stand-in'), m
import diffsci.core as ms, diffsci.datasets, diffsci.mindflow, diffsci.mindelec, diffsci.protenix
from diffsci.datasets import DownloadError
assert ms.tensor([1.0, 2.0]).sum().item() == 3.0
assert 'site-packages' in diffsci.datasets.__file__ and '/diffsci/datasets/' in diffsci.datasets.__file__
"""
CHECK_OURS = """
import diffsci.core as ms, diffsci.datasets, diffsci.protenix.cli.main
from diffsci.datasets import DownloadError
assert ms.tensor([1.0, 2.0]).sum().item() == 3.0
"""


@pytest.mark.parametrize("order", ["diffsci first", "stand-ins first"])
def test_coexists_with_packages_of_the_same_names(tmp_path, wheels, order):
    diffsci_wheel, stand_ins = wheels
    venv = Venv(tmp_path / "venv", dependency_links(tmp_path / "deps"))
    first, then = ([diffsci_wheel], list(stand_ins.values()))
    if order == "stand-ins first":
        first, then = then, first
    venv.pip("install", "--no-deps", "--no-index", "--no-compile", *map(str, first))
    venv.pip("install", "--no-deps", "--no-index", "--no-compile", *map(str, then))
    venv.run(code=CHECK_BOTH)
    assert "usage: diffsci-protenix" in venv.run("diffsci-protenix", "--help")
    assert "stand-in protenix command" in venv.run("protenix")
    n_ours = venv.installed_files("diffsci")

    if order == "diffsci first":  # uninstalling each stand-in leaves diffsci whole
        for name in FOLDERS:
            venv.pip("uninstall", "--yes", name)
            assert venv.installed_files("diffsci") == n_ours
            venv.run(code=CHECK_OURS)
        assert "usage: diffsci-protenix" in venv.run("diffsci-protenix", "--help")
    else:  # uninstalling diffsci leaves every stand-in whole, the `protenix` command too
        venv.pip("uninstall", "--yes", "diffsci")
        assert not (venv.bin / "diffsci-protenix").exists()
        for name in FOLDERS:
            assert venv.installed_files(name) >= 3
        venv.run(code="import datasets, mindflow, mindelec, core, protenix\n"
                      "assert all(m.WHO.startswith('stand-in') for m in "
                      "(datasets, mindflow, mindelec, core, protenix))\n")
        assert "stand-in protenix command" in venv.run("protenix")
