"""``import diffsci.compat``: upstream import names for unchanged scripts, on request only, and
never over a real package of the same name. Each case runs in a fresh interpreter outside the
repository, so the aliases it installs stay there."""

import os
import pathlib
import subprocess
import sys
import textwrap

REPO = pathlib.Path(__file__).resolve().parents[1]


def run(tmp_path, code, extra_path=None, cwd=None):
    env = None
    if extra_path is not None:
        env = {**os.environ, "PYTHONPATH": str(extra_path)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, cwd=cwd or tmp_path, env=env, timeout=300)


UNCHANGED_SCRIPT = """
import sys
import diffsci.compat  # the one added line
import mindspore as ms
import mindspore.dataset as ds
from mindspore import Tensor, nn, ops
from mindspore.common import dtype as mstype
from mindflow.cell import FNO1D
from mindflow.utils import load_yaml_config
from mindelec.architecture import MultiScaleFCCell
from protenix.model.protenix import Protenix

import diffsci.core, diffsci.datasets, diffsci.mindflow.cell, diffsci.protenix.model.protenix
assert ms is diffsci.core and ds is diffsci.datasets and Tensor is diffsci.core.Tensor
assert FNO1D is diffsci.mindflow.cell.FNO1D
assert Protenix is diffsci.protenix.model.protenix.Protenix
assert sys.modules["mindflow.cell"] is diffsci.mindflow.cell
# one copy of every Python file: the aliases are the very module objects
files = {}
for key, module in list(sys.modules.items()):
    f = getattr(module, "__file__", None)
    if f and f.endswith(".py") and module.__name__ == key:
        assert f not in files, (f, files.get(f), key)
        files[f] = key

net = nn.SequentialCell(nn.Dense(2, 8), nn.Tanh(), nn.Dense(8, 1))
x = Tensor([[1.0, 2.0]], mstype.float32)
loss, grads = ms.value_and_grad(lambda x: net(x).sum(), None, net.trainable_params())(x)
assert len(grads) == 4 and ops.isfinite(loss).item()
print("ok")
"""


def test_an_unchanged_upstream_script_runs_after_one_line(tmp_path):
    proc = run(tmp_path, UNCHANGED_SCRIPT)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr


def test_from_the_repository_root_the_aliases_are_still_diffsci(tmp_path):
    """There ``mindflow/`` is diffsci's own folder: not a real upstream package."""
    proc = run(tmp_path, UNCHANGED_SCRIPT, cwd=REPO)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr


def test_no_alias_without_the_opt_in(tmp_path):
    proc = run(tmp_path, """
        import diffsci.core, diffsci.mindflow
        for name in ("mindspore", "mindflow", "mindelec", "protenix"):
            try:
                __import__(name)
            except ModuleNotFoundError:
                continue
            raise SystemExit(f"{name} importable without diffsci.compat")
        print("ok")
    """)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr


def test_refuses_over_an_installed_distribution(tmp_path):
    site = tmp_path / "site"
    (site / "protenix").mkdir(parents=True)
    (site / "protenix" / "__init__.py").write_text("WHO = 'bytedance'\n")
    info = site / "protenix-2.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: protenix\nVersion: 2.0.0\n")
    (info / "top_level.txt").write_text("protenix\n")
    proc = run(tmp_path, "import diffsci.compat", extra_path=site)
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr and "protenix 2.0.0" in proc.stderr, proc.stderr
    # the real package stays what `import protenix` gives
    proc = run(tmp_path, """
        try:
            import diffsci.compat
        except ImportError:
            pass
        import protenix
        print(protenix.WHO)
    """, extra_path=site)
    assert proc.stdout.strip() == "bytedance", proc.stdout + proc.stderr


def test_refuses_over_an_importable_package_and_an_imported_one(tmp_path):
    site = tmp_path / "site"
    (site / "mindflow").mkdir(parents=True)
    (site / "mindflow" / "__init__.py").write_text("")
    proc = run(tmp_path, "import diffsci.compat", extra_path=site)
    assert proc.returncode != 0 and "mindflow" in proc.stderr and str(site) in proc.stderr, proc.stderr
    (site / "mindspore.py").write_text("")
    proc = run(tmp_path, """
        import mindspore
        from diffsci import aliases
        try:
            aliases.install(["mindspore"])
        except ImportError as err:
            assert "already imported" in str(err), err
            print("refused")
    """, extra_path=site)
    assert proc.stdout.strip() == "refused", proc.stdout + proc.stderr


def test_selected_names_and_uninstall(tmp_path):
    proc = run(tmp_path, """
        from diffsci import aliases
        aliases.install(["mindspore"])
        import mindspore, diffsci.core
        assert mindspore is diffsci.core
        try:
            import mindflow
        except ModuleNotFoundError:
            pass
        else:
            raise SystemExit("mindflow aliased although not asked for")
        try:
            import mindspore.no_such_module
        except ModuleNotFoundError as err:
            assert "no counterpart" in str(err), err
        aliases.uninstall()
        import sys
        assert "mindspore" not in sys.modules
        try:
            import mindspore
        except ModuleNotFoundError:
            print("ok")
    """)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr
