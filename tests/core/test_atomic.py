"""core.atomic and the writers built on it: a new file gets the mode ``open()`` would give under
the umask (0644 under 022, 0640 under 027), a failed write leaves the old file and no temp."""

import os
import stat

import numpy as np
import pytest

from diffsci import core
from diffsci.core import nn
from diffsci.core.atomic import atomic_path, atomic_write, new_file_mode


@pytest.fixture(params=[0o022, 0o027])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_new_file_mode_is_what_open_gives(tmp_path, umask):
    with open(tmp_path / "plain", "w"):
        pass
    assert new_file_mode() == mode(tmp_path / "plain") == 0o666 & ~umask


def test_atomic_write_text_and_bytes(tmp_path, umask):
    atomic_write(tmp_path / "a.txt", "héllo\n")
    atomic_write(tmp_path / "b.bin", b"\x00\x01")
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "héllo\n"
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    assert mode(tmp_path / "a.txt") == mode(tmp_path / "b.bin") == 0o666 & ~umask


def test_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "keep.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError, match="half way"), atomic_path(target) as tmp:
        with open(tmp, "w") as f:
            f.write("new, partial")
        raise RuntimeError("half way")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_missing_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        atomic_write(tmp_path / "nowhere" / "x.txt", "x")


def test_checkpoints_get_the_umask_mode(tmp_path, umask):
    net = nn.Dense(2, 3)
    core.save_checkpoint(net, str(tmp_path / "m.ckpt.h5"))
    core.save_checkpoint(net, str(tmp_path / "m.ckpt"), format="ckpt")
    for name in ("m.ckpt.h5", "m.ckpt"):
        assert mode(tmp_path / name) == 0o666 & ~umask, name


def test_domain_outputs_get_the_umask_mode(tmp_path, umask):
    from diffsci.mindelec.fdtd.io import SnapshotWriter
    from diffsci.mindelec.fdtd.touchstone import write_touchstone
    from diffsci.protenix.outputs.plots import plot_plddt
    from diffsci.protenix.outputs.structure import atomic_write as protenix_write

    write_touchstone(tmp_path / "a.s1p", np.array([1e9, 2e9]), np.full((2, 1, 1), 0.5 + 0j))
    with SnapshotWriter(tmp_path / "snap.h5") as w:
        w.add(0, {"ez": np.zeros((3, 3))})
    plot_plddt(tmp_path / "plddt.png", np.full((1, 6), 70.0), np.array([0, 0, 0, 1, 1, 1]))
    protenix_write(tmp_path / "sub" / "summary.json", "{}")
    for name in ("a.s1p", "snap.h5", "plddt.png", "sub/summary.json"):
        assert mode(tmp_path / name) == 0o666 & ~umask, name


def test_mindflow_plots_keep_mindflow_s_permission_argument(tmp_path):
    """MindFlow's vis_1d/vis_2d take ``permission`` (default S_IREAD + S_IWRITE, 0600) and chmod
    the image to it: kept as MindFlow documents it."""
    from diffsci.mindflow.cfd.visualization import vis_1d

    state = np.ones((5, 8, 1, 1))
    vis_1d(state, str(tmp_path / "default.png"))
    vis_1d(state, str(tmp_path / "shared.png"), permission=0o644)
    assert mode(tmp_path / "default.png") == stat.S_IREAD | stat.S_IWRITE
    assert mode(tmp_path / "shared.png") == 0o644
