"""Touchstone version 1 files (``.sNp``): S-parameters of an N-port against frequency.

Format (Touchstone File Format Specification, Rev. 1.1, EIA/IBIS Open Forum 2002):

- ``!`` starts a comment (to the end of the line); blank lines are ignored;
- one option line ``# <freq unit> <parameter> <format> R <z0>`` before the data, each field
  optional, case-insensitive; defaults ``GHz S MA R 50``. Frequency units ``Hz kHz MHz GHz``;
  formats ``RI`` (real, imaginary), ``MA`` (magnitude, angle in degrees), ``DB``
  (``20 log10 |S|``, angle in degrees). Only S-parameters are read and written here;
- per frequency: the frequency, then ``N^2`` pairs. For ``N = 2`` the order is
  ``S11 S21 S12 S22`` (column by column, all on one line); for every other ``N`` the matrix is
  written row by row, each row starting on a new line with at most 4 pairs per line;
- a 2-port file may end with noise parameters: data lines whose frequency does not increase
  after the S-parameters; they are skipped here.

``write_touchstone`` writes to a temporary file in the target's directory and renames it over
the target (``os.replace``), so an error never leaves a half-written file behind.
``read_touchstone`` returns frequencies in Hz, ``S`` as ``[nf, N, N]`` complex128 (``S[:, i, j]``
is ``S_{i+1, j+1}``) and the reference impedance. The tests read our files back with
scikit-rf and read scikit-rf's files with ours.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

import numpy as np

from diffsci.core.atomic import atomic_write

__all__ = ["TouchstoneData", "read_touchstone", "write_touchstone"]

_UNITS = {"HZ": 1.0, "KHZ": 1e3, "MHZ": 1e6, "GHZ": 1e9}
_UNIT_NAMES = {"HZ": "Hz", "KHZ": "kHz", "MHZ": "MHz", "GHZ": "GHz"}
_FORMATS = ("RI", "MA", "DB")


@dataclass
class TouchstoneData:
    """Contents of a Touchstone file.

    Attributes:
        freqs: ``[nf]`` frequencies (Hz, float64).
        s: ``[nf, N, N]`` complex128 S-parameters.
        z0: reference impedance (ohm).
        comments: the comment lines (without ``!``).
    """

    freqs: np.ndarray
    s: np.ndarray
    z0: float = 50.0
    comments: tuple[str, ...] = ()

    @property
    def n_ports(self) -> int:
        return int(self.s.shape[-1])


def _n_ports_from_suffix(path) -> int | None:
    m = re.search(r"\.s(\d+)p$", os.fspath(path), flags=re.IGNORECASE)
    return int(m.group(1)) if m else None


def _fmt(x: float) -> str:
    return f"{x: .12e}"


def _pair(z: complex, fmt: str) -> str:
    if fmt == "RI":
        a, b = z.real, z.imag
    elif fmt == "MA":
        a, b = abs(z), math.degrees(math.atan2(z.imag, z.real))
    else:  # DB
        mag = abs(z)
        a = 20.0 * math.log10(mag) if mag > 0 else -999.0
        b = math.degrees(math.atan2(z.imag, z.real))
    return f"{_fmt(a)} {_fmt(b)}"


def write_touchstone(
    path,
    freqs,
    s,
    z0: float = 50.0,
    fmt: str = "RI",
    unit: str = "GHz",
    comments=(),
) -> str:
    """Write S-parameters to a Touchstone v1 file, atomically.

    Args:
        path: target file; its suffix must be ``.sNp`` with ``N`` the number of ports.
        freqs: ``[nf]`` frequencies (Hz), strictly increasing.
        s: ``[nf, N, N]`` complex S-parameters (a ``[nf]`` array is taken as a 1-port).
        z0: reference impedance (ohm, real and positive: Touchstone v1 has one real ``R``).
        fmt: ``"RI"``, ``"MA"`` or ``"DB"``.
        unit: ``"Hz"``, ``"kHz"``, ``"MHz"`` or ``"GHz"`` for the frequency column.
        comments: lines written as ``! ...`` at the top.

    Returns:
        The path written (str).
    """
    freqs = np.asarray(freqs, dtype=np.float64)
    s = np.asarray(s, dtype=np.complex128)
    if s.ndim == 1:
        s = s[:, None, None]
    if s.ndim != 3 or s.shape[1] != s.shape[2]:
        raise ValueError(f"write_touchstone: s must be [nf, N, N], got shape {s.shape}")
    nf, n = s.shape[0], s.shape[1]
    if freqs.shape != (nf,):
        raise ValueError(f"write_touchstone: freqs {freqs.shape} do not match s {s.shape}")
    if nf > 1 and not np.all(np.diff(freqs) > 0):
        raise ValueError("write_touchstone: frequencies must be strictly increasing")
    if not np.all(np.isfinite(s)) or not np.all(np.isfinite(freqs)):
        raise ValueError("write_touchstone: S or the frequencies contain NaN or inf")
    suffix_n = _n_ports_from_suffix(path)
    if suffix_n != n:
        raise ValueError(
            f"write_touchstone: a {n}-port needs the suffix .s{n}p, got {os.fspath(path)!r}"
        )
    fmt = fmt.upper()
    if fmt not in _FORMATS:
        raise ValueError(f"write_touchstone: fmt must be one of {_FORMATS}, got {fmt!r}")
    key = unit.upper()
    if key not in _UNITS:
        raise ValueError(f"write_touchstone: unit must be one of Hz, kHz, MHz, GHz, got {unit!r}")
    if not (np.isreal(z0) and float(z0) > 0):
        raise ValueError(f"write_touchstone: z0 must be a positive real impedance, got {z0}")

    lines = [f"! {c}" for c in comments]
    lines.append(f"# {_UNIT_NAMES[key]} S {fmt} R {float(z0):g}")
    scale = _UNITS[key]
    for k in range(nf):
        f = _fmt(freqs[k] / scale)
        if n == 1:
            lines.append(f"{f} {_pair(s[k, 0, 0], fmt)}")
        elif n == 2:  # S11 S21 S12 S22: column-major, one line
            pairs = [_pair(s[k, i, j], fmt) for j in range(2) for i in range(2)]
            lines.append(f"{f} " + " ".join(pairs))
        else:  # row by row, at most 4 pairs per line, each row on new lines
            for i in range(n):
                row = [_pair(s[k, i, j], fmt) for j in range(n)]
                for c0 in range(0, n, 4):
                    lead = f if (i == 0 and c0 == 0) else " " * len(f)
                    lines.append(f"{lead} " + " ".join(row[c0 : c0 + 4]))
    text = "\n".join(lines) + "\n"

    path = os.fspath(path)
    text.encode("ascii")  # Touchstone is ASCII: fail here, before anything is written
    atomic_write(path, text)
    return path


def _parse_options(tokens: list[str], path) -> tuple[float, str, float]:
    unit, fmt, z0 = 1e9, "MA", 50.0
    i = 0
    while i < len(tokens):
        tok = tokens[i].upper()
        if tok in _UNITS:
            unit = _UNITS[tok]
        elif tok in _FORMATS:
            fmt = tok
        elif tok == "R":
            if i + 1 >= len(tokens):
                raise ValueError(f"{path}: option line ends after 'R' (no reference impedance)")
            z0 = float(tokens[i + 1])
            i += 1
        elif tok in ("Y", "Z", "H", "G"):
            raise ValueError(f"{path}: only S-parameter files are supported, got parameter {tok}")
        elif tok != "S":
            raise ValueError(f"{path}: unknown option {tokens[i]!r} in the option line")
        i += 1
    return unit, fmt, z0


def read_touchstone(path, n_ports: int | None = None) -> TouchstoneData:
    """Read a Touchstone v1 S-parameter file.

    Args:
        path: the file; the port count comes from its ``.sNp`` suffix unless ``n_ports``.
        n_ports: the port count, for files named otherwise.

    Returns:
        ``TouchstoneData`` with ``freqs`` in Hz and ``s`` ``[nf, N, N]``.
    """
    n = n_ports if n_ports is not None else _n_ports_from_suffix(path)
    if n is None or n < 1:
        raise ValueError(f"read_touchstone: cannot tell the port count of {os.fspath(path)!r}")
    comments, values, options = [], [], None
    with open(path, encoding="ascii", errors="replace") as fh:
        for line in fh:
            body, _, comment = line.partition("!")
            if "!" in line:
                comments.append(comment.strip())
            body = body.strip()
            if not body:
                continue
            if body.startswith("#"):
                if options is None:
                    options = _parse_options(body[1:].split(), path)
                continue
            if body.startswith("["):
                raise ValueError(f"{path}: Touchstone v2 keywords ({body.split()[0]}) are not read")
            values.extend(float(v) for v in body.split())
    unit, fmt, z0 = options if options is not None else (1e9, "MA", 50.0)
    per = 1 + 2 * n * n
    data = np.asarray(values, dtype=np.float64)
    if n == 2:
        # noise data follow the S-parameters with a frequency that does not increase
        rows, k, last = [], 0, -np.inf
        while k + per <= data.size and data[k] > last:
            rows.append(data[k : k + per])
            last = data[k]
            k += per
        data = np.asarray(rows).reshape(-1)
    if data.size % per:
        raise ValueError(
            f"{path}: {data.size} numbers is not a whole number of {n}-port records of {per}"
        )
    data = data.reshape(-1, per)
    freqs = data[:, 0] * unit
    a, b = data[:, 1::2], data[:, 2::2]  # [nf, N^2]
    if fmt == "RI":
        z = a + 1j * b
    elif fmt == "MA":
        z = a * np.exp(1j * np.radians(b))
    else:
        z = 10.0 ** (a / 20.0) * np.exp(1j * np.radians(b))
    s = z.reshape(-1, n, n)
    if n == 2:
        s = s.transpose(0, 2, 1)  # the file lists S11 S21 S12 S22
    return TouchstoneData(freqs=freqs, s=s, z0=z0, comments=tuple(comments))
