"""diffsci.scripts: the examples' command line, kebab-case with hidden aliases."""

import os
import re

import pytest

from diffsci.scripts import ArgumentParser, default_out_dir


def parser():
    p = ArgumentParser(prog="example")
    p.add_argument("--out-dir", aliases=["--out"], default="x_out", help="output folder")
    p.add_argument("-n", "--batch-size", type=int, default=8, help="points per step")
    p.add_argument("--no-plot", action="store_true")
    return p


def test_every_spelling_lands_in_one_dest():
    for argv in (["--out-dir", "a"], ["--out_dir", "a"], ["--out", "a"]):
        assert parser().parse_args(argv).out_dir == "a"
    args = parser().parse_args(["--batch_size", "3", "--no_plot"])
    assert (args.batch_size, args.no_plot) == (3, True)
    assert parser().parse_args(["-n", "5"]).batch_size == 5


def test_help_shows_only_the_kebab_spelling(capsys):
    with pytest.raises(SystemExit):
        parser().parse_args(["--help"])
    text = capsys.readouterr().out
    assert "--out-dir OUT_DIR" in text and "-n, --batch-size BATCH_SIZE" in text
    assert "--out " not in text and not re.search(r"--[a-z-]*_", text)
    assert "(default: x_out)" in text


def test_snake_case_names_are_refused():
    with pytest.raises(ValueError, match="kebab-case"):
        ArgumentParser().add_argument("--batch_size")


def test_default_out_dir_is_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert default_out_dir("sod") == os.path.join(str(tmp_path), "sod_out")
