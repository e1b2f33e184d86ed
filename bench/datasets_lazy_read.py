"""Lazy read: the time and memory to open a PDEBench-layout file and take one sample stay flat
as the file grows (issue 11, "Performance").

``python -m bench.datasets_lazy_read [--sizes-mb 16 128 512 2048] [--dir /tmp] [--samples 20]
[--no-eager] [--json out.json]``

For each size, a ``single``-layout file (PDEBench's 1D Burgers shape: ``tensor``
[N, 201, 1024] float32, 823 KB per sample) is written with :class:`datasets.pde.PDEBenchWriter`
in blocks of 64 samples (memory stays at one block), its pages are dropped from the OS page
cache (``posix_fadvise(DONTNEED)``, this file only), and a fresh Python process then

- opens it with ``datasets.pde.open_pdebench`` and takes sample 17 (cold: from disk),
- takes ``--samples`` more samples at random indices (their median time),
- reports the bytes its ``read`` system calls returned (``rchar`` in ``/proc/self/io``), the
  peak of Python allocations (``tracemalloc``) and the growth of its resident set (RSS),
  all measured around the open + first sample only,
- and, as the contrast, reads the whole ``tensor`` dataset eagerly (``--no-eager`` skips it).

Each file is deleted after it is measured. Numbers depend on the disk; the point is the shape of
the columns: open + one sample is flat in N, the eager read grows with it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

NT, NX = 201, 1024  # PDEBench's 1D Burgers files: tensor [10000, 201, 1024], t [202]
BLOCK = 64


def _proc_io() -> dict[str, int]:
    out = {}
    try:
        with open("/proc/self/io") as fh:
            for line in fh:
                key, value = line.split(":")
                out[key] = int(value)
    except OSError:  # not Linux
        pass
    return out


def _rss_bytes() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def write_file(path: str, n: int) -> None:
    """A ``single``-layout file with N samples, written block by block."""
    from diffsci.datasets.pde import PDEBenchWriter, make_card

    x = (np.arange(NX) + 0.5) / NX
    t = np.linspace(0.0, 2.0, NT + 1)
    base = np.sin(2 * np.pi * x)[None, None, :] * np.exp(-t[:NT])[None, :, None]  # [1, NT, NX]
    card = make_card("bench", grid={"nx": NX, "nt": NT}, generator="bench.datasets_lazy_read")
    with PDEBenchWriter(path, "single", card=card, overwrite=True) as w:
        u = w.create("tensor", (n, NT, NX), np.float32)
        for start in range(0, n, BLOCK):
            stop = min(n, start + BLOCK)
            u[start:stop] = (base + np.arange(start, stop)[:, None, None]).astype(np.float32)
        w.write("x-coordinate", x.astype(np.float32))
        w.write("t-coordinate", t.astype(np.float32))
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def probe(path: str, samples: int, eager: bool) -> dict:
    """Measure in this (fresh) process; returns the row as a dict."""
    import tracemalloc

    from diffsci.datasets.pde import open_pdebench

    io0, rss0 = _proc_io(), _rss_bytes()
    tracemalloc.start()
    t0 = time.perf_counter()
    f = open_pdebench(path)
    t_open = time.perf_counter() - t0
    u = f[17]["tensor"]
    t_first = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    io1, rss1 = _proc_io(), _rss_bytes()
    expect = 17 + (
        np.sin(2 * np.pi * (np.arange(NX) + 0.5) / NX)[None]
        * np.exp(-np.linspace(0, 2, NT + 1)[:NT])[:, None]
    )
    assert np.allclose(u, expect, atol=1e-5), "sample 17 read back wrong"
    rng = np.random.default_rng(0)
    times = []
    for i in rng.integers(0, f.num_samples, samples):
        t1 = time.perf_counter()
        f[int(i)]
        times.append(time.perf_counter() - t1)
    row = {
        "N": f.num_samples,
        "file_bytes": os.path.getsize(path),
        "sample_bytes": int(u.nbytes),
        "open_s": t_open,
        "open_plus_sample_s": t_first,
        "random_sample_median_s": float(np.median(times)) if times else float("nan"),
        "read_syscall_bytes": io1.get("rchar", 0) - io0.get("rchar", 0),
        "tracemalloc_peak_bytes": peak,
        "rss_growth_bytes": rss1 - rss0,
    }
    if eager:
        t1 = time.perf_counter()
        whole = f.h5["tensor"][()]
        row["eager_read_s"] = time.perf_counter() - t1
        row["eager_bytes"] = int(whole.nbytes)
        del whole
    f.close()
    return row


def _fmt_bytes(b: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(b) < 1024 or unit == "GB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.1f} {unit}"
        b /= 1024
    return str(b)


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes-mb", type=float, nargs="+", default=[16, 128, 512, 2048])
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--no-eager", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--probe", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.probe:
        print(json.dumps(probe(args.probe, args.samples, not args.no_eager)))
        return []
    sample_bytes = NT * NX * 4
    rows = []
    for mb in args.sizes_mb:
        n = max(18, round(mb * 2**20 / sample_bytes))
        path = os.path.join(args.dir, f"diffsci_lazy_read_{os.getpid()}_{n}.h5")
        try:
            t0 = time.perf_counter()
            write_file(path, n)
            t_write = time.perf_counter() - t0
            cmd = [sys.executable, "-m", "bench.datasets_lazy_read", "--probe", path]
            cmd += ["--samples", str(args.samples)] + (["--no-eager"] if args.no_eager else [])
            out = subprocess.run(cmd, check=True, capture_output=True, text=True)
            row = json.loads(out.stdout.strip().splitlines()[-1])
            row["write_s"] = t_write
            rows.append(row)
        finally:
            if os.path.exists(path):
                os.remove(path)
        print(
            f"  N={row['N']:>5}  file {_fmt_bytes(row['file_bytes']):>9}  written in "
            f"{row['write_s']:.1f} s",
            file=sys.stderr,
        )
    head = (
        "| file size | N | open + sample 17 (cold) | random sample (median) | bytes read | "
        "tracemalloc peak | RSS growth |"
        + (" eager read of `tensor` |" if not args.no_eager else "")
    )
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        line = (
            f"| {_fmt_bytes(r['file_bytes'])} | {r['N']} | {1e3 * r['open_plus_sample_s']:.1f} ms | "
            f"{1e3 * r['random_sample_median_s']:.2f} ms | {_fmt_bytes(r['read_syscall_bytes'])} | "
            f"{_fmt_bytes(r['tracemalloc_peak_bytes'])} | {_fmt_bytes(r['rss_growth_bytes'])} |"
        )
        if "eager_read_s" in r:
            line += f" {r['eager_read_s']:.2f} s, {_fmt_bytes(r['eager_bytes'])} |"
        print(line)
    print(f"\none sample = {_fmt_bytes(sample_bytes)} (tensor [N, {NT}, {NX}] float32)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return rows


if __name__ == "__main__":
    main()
