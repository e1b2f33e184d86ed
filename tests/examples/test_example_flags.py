"""The examples' command lines: every script that parses arguments spells its long options
kebab-case (``--out-dir``, ``--batch-size``, ``--time-budget``; ``diffsci.scripts``), its
``--help`` lists no snake_case spelling (those stay accepted, hidden), and an example writes
only under the output folder it is given, never into the package tree, with the older
``--out`` spelling still taking the same folder."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCRIPTS = sorted(
    path.relative_to(EXAMPLES).as_posix()
    for path in EXAMPLES.rglob("*.py")
    if "__pycache__" not in path.parts and "ArgumentParser(" in path.read_text()
)
SNAKE = re.compile(r"--[a-z0-9]+_")
BURGERS = EXAMPLES / "mindflow" / "operators" / "burgers" / "burgers.py"
# a few seconds: 4 + 4 samples at 32 points, one epoch; the data cache and both plots are written
BURGERS_SMALL = ["--n-train", "4", "--n-test", "4", "--epochs", "1", "--batch-size", "4",
                 "--solver-resolution", "32", "--train-resolution", "32"]  # fmt: skip


def _python(args, cwd, timeout=120):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run(
        [sys.executable, *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _files(folder):
    """Every file under ``folder`` (relative paths), ``__pycache__`` left out."""
    return {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_the_examples_with_a_command_line_are_found():
    assert len(SCRIPTS) >= 40, SCRIPTS
    assert "mindflow/operators/burgers/burgers.py" in SCRIPTS
    assert "mindflow/pinn/poisson/train.py" in SCRIPTS  # a MindFlow port


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_lists_kebab_case_long_options_only(script, tmp_path):
    done = _python([EXAMPLES / script, "--help"], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "usage: " in done.stdout and "-h" in done.stdout
    assert not SNAKE.findall(done.stdout), done.stdout
    assert not list(tmp_path.iterdir())  # --help writes nothing


def test_burgers_writes_only_under_its_out_dir(tmp_path):
    before = _files(EXAMPLES)
    out, cwd = tmp_path / "X", tmp_path / "cwd"
    cwd.mkdir()
    done = _python([BURGERS, *BURGERS_SMALL, "--out-dir", out], cwd, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _files(EXAMPLES) == before  # no data cache, plot or checkpoint in the package tree
    written = _files(out)
    assert {"fno1d_samples.png", "fno1d_loss.png"} <= written, written
    assert any(re.fullmatch(r"data/burgers_.*\.h5", f) for f in written), written
    assert not list(cwd.iterdir())  # nor in the working directory


def test_burgers_takes_the_old_out_spelling(tmp_path):
    before = _files(EXAMPLES)
    done = _python([BURGERS, *BURGERS_SMALL, "--out", "old"], tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert {"fno1d_samples.png", "fno1d_loss.png"} <= _files(tmp_path / "old")  # cwd-relative
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old"]
    assert _files(EXAMPLES) == before
