"""Touchstone v1: round trips in every format and port count, files read back by scikit-rf
and scikit-rf's files read by us, the 2-port column order, noise data, atomic writes."""

import os

import numpy as np
import pytest

from diffsci.mindelec.fdtd.touchstone import read_touchstone, write_touchstone


def _read(path):
    with open(path) as fh:
        return fh.read()


def _random_s(nf, n, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.05, 0.9, (nf, n, n)) * np.exp(1j * rng.uniform(-3.1, 3.1, (nf, n, n)))
    return np.linspace(1e9, 9e9, nf), s


@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("fmt", ["RI", "MA", "DB"])
@pytest.mark.parametrize("unit", ["Hz", "GHz"])
def test_round_trip(tmp_path, n, fmt, unit):
    f, s = _random_s(7, n, seed=n)
    path = write_touchstone(
        tmp_path / f"net.s{n}p", f, s, z0=75.0, fmt=fmt, unit=unit, comments=["made by a test"]
    )
    back = read_touchstone(path)
    assert back.n_ports == n and back.z0 == 75.0 and back.comments == ("made by a test",)
    assert np.allclose(back.freqs, f, rtol=1e-12, atol=0)
    assert np.allclose(back.s, s, rtol=1e-10, atol=1e-12)


def test_two_port_column_order(tmp_path):
    f = np.array([1e9])
    s = np.array([[[0.11, 0.12], [0.21, 0.22]]], dtype=complex)
    path = write_touchstone(tmp_path / "a.s2p", f, s, fmt="RI")
    with open(path) as fh:
        data = next(ln for ln in fh if not ln.startswith(("!", "#"))).split()
    assert [float(x) for x in data[1::2]] == [0.11, 0.21, 0.12, 0.22]  # S11 S21 S12 S22


def test_defaults_comments_and_noise_data(tmp_path):
    p = tmp_path / "hand.s2p"
    p.write_text(
        "! hand written\n"
        "#\n"  # defaults: GHz S MA R 50
        "1.0 0.5 90 0.25 0 0.25 0 0.5 -90 ! first\n"
        "\n"
        "2.0 0.4 0 0.3 180 0.3 180 0.4 0\n"
        "1.0 2.0 0.5 30 0.3\n"  # noise parameters: the frequency does not increase
        "2.0 2.2 0.5 40 0.3\n"
    )
    d = read_touchstone(p)
    assert np.allclose(d.freqs, [1e9, 2e9]) and d.z0 == 50.0
    assert np.allclose(d.s[0], [[0.5j, 0.25], [0.25, -0.5j]])
    assert np.allclose(d.s[1], [[0.4, -0.3], [-0.3, 0.4]])
    assert d.comments == ("hand written", "first")


def test_bad_input_keeps_existing_file(tmp_path):
    f, s = _random_s(3, 2)
    path = write_touchstone(tmp_path / "keep.s2p", f, s)
    before = _read(path)
    bad = s.copy()
    bad[1, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        write_touchstone(path, f, bad)
    with pytest.raises(ValueError, match=r"\.s3p"):
        write_touchstone(tmp_path / "three.s2p", f, np.zeros((3, 3, 3)))
    with pytest.raises(ValueError, match="increasing"):
        write_touchstone(path, f[::-1], s)
    assert _read(path) == before
    assert sorted(os.listdir(tmp_path)) == ["keep.s2p"]  # no temporary files left
    (tmp_path / "y.s1p").write_text("# GHz Y RI R 50\n1 0 0\n")
    with pytest.raises(ValueError, match="only S-parameter"):
        read_touchstone(tmp_path / "y.s1p")
    (tmp_path / "short.s3p").write_text("# GHz S RI R 50\n1 0 0 0 0\n")
    with pytest.raises(ValueError, match="3-port records of 19"):
        read_touchstone(tmp_path / "short.s3p")


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("fmt", ["RI", "MA", "DB"])
def test_scikit_rf_reads_ours_and_we_read_theirs(tmp_path, n, fmt):
    rf = pytest.importorskip("skrf")
    f, s = _random_s(9, n, seed=10 + n)
    path = write_touchstone(tmp_path / f"ours.s{n}p", f, s, z0=50.0, fmt=fmt, unit="GHz")
    net = rf.Network(path)
    assert np.allclose(net.f, f, rtol=1e-12)
    assert np.allclose(net.s, s, rtol=1e-10, atol=1e-12)
    assert np.allclose(net.z0, 50.0)

    theirs = rf.Network(frequency=rf.Frequency.from_f(f, unit="Hz"), s=s, z0=50.0)
    theirs.write_touchstone("theirs", dir=str(tmp_path), form=fmt.lower())
    back = read_touchstone(tmp_path / f"theirs.s{n}p")
    assert np.allclose(back.freqs, f, rtol=1e-9)
    assert np.allclose(back.s, s, rtol=1e-6, atol=1e-9)
