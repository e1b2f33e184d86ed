"""Timing and memory measurement, and the table printer.

Timing: every implementation of a case runs in this one process. Each is warmed up (the
first call, which also compiles jit rows and gives the outputs for the check; a timed second
call; two more when a call is cheap), then timed in interleaved rounds: each round takes one
sample of every implementation in turn, so a background load that comes and goes hits all rows
alike. A sample times ``number`` back-to-back calls (``number`` chosen so that a sample lasts
at least 20 ms, above the timer's resolution); we report the median of the samples, per call.
The garbage collector stays on (as in real use).

Memory, two columns, both "extra bytes during one step after warm-up":
  * tracemalloc: our engine and numpy only. numpy reports its data buffers to tracemalloc,
    so this is the peak of Python objects + array buffers allocated during one step.
    PyTorch's and XLA's allocators are invisible to it, so those rows show "-".
  * RSS: every row, measured in a fresh subprocess per (case, implementation): warm-up,
    ``malloc_trim(0)``, reset the kernel's high-water mark (``/proc/self/clear_refs`` = 5),
    one step, then ``VmHWM - VmRSS`` before the step. Comparable across frameworks; it counts
    pages first touched during the step, so memory cached by an allocator from the warm-up
    is not counted again. Linux only ("-" elsewhere). Neither PyTorch nor JAX exposes CPU
    allocator statistics, which is why RSS is used for them.
"""

import ctypes
import dataclasses
import gc
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

from .common import to_numpy

__all__ = [
    "Impl",
    "Row",
    "Workload",
    "available",
    "format_case",
    "jit_available",
    "run_case",
]


@dataclasses.dataclass
class Impl:
    """One implementation of a workload.

    Attributes:
        label: row label, e.g. "ours (fwd-over-fwd)".
        framework: "ours", "ours jit", "numpy", "torch", "jax" or "jax.jit"; ratios and targets
            compare the best row of each framework.
        make: ``make(cfg, data) -> step``; ``step()`` runs the workload once (finished: jax
            rows block until ready) and returns a tuple of outputs for the correctness check.
    """

    label: str
    framework: str
    make: Callable


@dataclasses.dataclass
class Workload:
    """A benchmark: the same computation written once per framework.

    Attributes:
        key: "W1".."W4", "MM".
        title: one line, printed above its tables.
        cases: ``cases(quick) -> list of cfg dicts`` (sizes).
        case_name: ``case_name(cfg) -> str``.
        data: ``data(cfg) -> dict`` of seeded numpy inputs shared by every implementation.
        impls: ``impls() -> list[Impl]``, the first one is "ours" (the reference for checks).
        reference: framework whose best time the target compares against ("torch", "numpy").
        target: the ratio ours/reference to reach (``ours <= target * reference``).
        tiny: small cfgs for the correctness test (tests/bench).
        rtol: tolerance of the correctness check (relative to each output's largest entry).
        notes: ``notes() -> str``, printed under the title (which fallbacks ran, formulations).
    """

    key: str
    title: str
    cases: Callable
    case_name: Callable
    data: Callable
    impls: Callable
    reference: str
    target: float
    tiny: list
    rtol: float = 1e-4
    notes: Callable = lambda: ""


@dataclasses.dataclass
class Row:
    label: str
    framework: str
    seconds: float = float("nan")
    samples: int = 0
    number: int = 0
    err: float = float("nan")
    tracemalloc_mib: float = float("nan")
    rss_mib: float = float("nan")
    failure: str = ""
    note: str = ""


def jit_available():
    """True once the lead's core.jit exists; workloads then add "ours jit" rows."""
    from diffsci import core

    return hasattr(core, "jit")


def jax_available():
    from .common import have

    return have("jax")


def torch_available():
    from .common import have

    return have("torch")


_CAN_RUN = {
    "ours jit": jit_available,
    "torch": torch_available,
    "jax": jax_available,
    "jax.jit": jax_available,
}


def available(*impls):
    """The implementations whose framework can run here (``ours`` and ``numpy`` always can)."""
    return [i for i in impls if i.framework not in _CAN_RUN or _CAN_RUN[i.framework]()]


# ---- timing -----------------------------------------------------------------------------------


def tracemalloc_peak_mib(step):
    """Peak MiB newly allocated (Python objects + numpy buffers) during one call of ``step``."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = step()
        peak = tracemalloc.get_traced_memory()[1]
        del out
    finally:
        tracemalloc.stop()
    return (peak - base) / 2**20


def _status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def rss_peak_in_this_process_mib(step, warmup=1):
    """Body of the RSS probe (run in a fresh subprocess): see the module docstring."""
    for _ in range(warmup):
        step()
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = _status_kib("VmRSS")
    out = step()
    peak = _status_kib("VmHWM")
    del out
    return (peak - before) / 1024


def rss_peak_subprocess_mib(key, cfg, label, timeout=300):
    """Run the RSS probe for one (case, implementation) in a fresh Python; NaN on failure."""
    if not os.path.exists("/proc/self/clear_refs"):
        return float("nan"), "no /proc (RSS needs Linux)"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = [sys.executable, "-m", "bench._probe", key, json.dumps(cfg), label]
    try:
        res = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return float("nan"), "probe timed out"
    if res.returncode != 0:
        tail = (res.stderr or res.stdout).strip().splitlines()
        return float("nan"), tail[-1] if tail else f"probe exited {res.returncode}"
    return float(json.loads(res.stdout.strip().splitlines()[-1])["rss_mib"]), ""


# ---- one case -----------------------------------------------------------------------------------


def _max_rel_err(outs, refs):
    """Largest |a - b| / max|b| over the outputs (each output scaled by its own largest entry)."""
    if len(outs) != len(refs):
        return float("inf")
    worst = 0.0
    for a, b in zip(outs, refs, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return float("inf")
        scale = float(np.max(np.abs(b))) if b.size else 0.0
        diff = float(np.max(np.abs(a.astype(np.complex128) - b))) if b.size else 0.0
        worst = max(worst, diff / (scale if scale > 0 else 1.0))
    return worst


def run_case(wl, cfg, quick=False, memory=True, rss=True, only=None, log=print):
    """Time (and measure) every implementation of ``wl`` on case ``cfg``; return Rows.

    Samples are interleaved: round r times one sample of every implementation in turn, so a
    background load that comes and goes (other processes on a shared machine) hits all rows
    alike instead of whichever row happened to run at that moment.
    """
    data = wl.data(cfg)
    rows, steps = [], []
    ref_outs = None
    for impl in wl.impls():
        if only and not any(impl.framework == o or impl.label == o for o in only):
            continue
        row = Row(impl.label, impl.framework)
        rows.append(row)
        log(f"  ... {wl.key} {wl.case_name(cfg)}: {impl.label}" + " " * 20, end="\r")
        try:
            step = impl.make(cfg, data)
            first = [to_numpy(o).copy() for o in step()]
            if ref_outs is None:
                ref_outs = first
                row.err = 0.0
            else:
                row.err = _max_rel_err(first, ref_outs)
            # warm-up: the first call above, a timed second call (its time picks the number
            # of calls per sample), and two more calls for steps cheap enough to afford them
            t0 = time.perf_counter()
            step()
            one = max(time.perf_counter() - t0, 1e-7)
            if one < 0.2:
                for _ in range(1 if quick else 2):
                    step()
        except Exception as err:  # a row that fails must not hide the others
            msg = str(err).splitlines()[0] if str(err) else ""
            row.failure = f"{type(err).__name__}: {msg}"[:200]
            continue
        steps.append((row, step, max(1, min(10_000, int(0.02 / one))), one))
    budget = 0.6 if quick else 2.0  # seconds of samples per implementation
    if steps:
        per_round = max(sum(n * one for _, _, n, one in steps) / len(steps), 1e-7)
        min_rounds = 3 if quick or per_round > 1.0 else 5
        rounds = max(min_rounds, min(15, int(budget / per_round)))
        samples = {id(r): [] for r, _, _, _ in steps}
        for _ in range(rounds):
            for row, step, number, _ in steps:
                try:
                    t0 = time.perf_counter()
                    for _ in range(number):
                        step()
                    samples[id(row)].append((time.perf_counter() - t0) / number)
                except Exception as err:
                    row.failure = f"{type(err).__name__}: {err}"[:200]
        for row, _, number, _ in steps:
            if samples[id(row)] and not row.failure:
                row.seconds = statistics.median(samples[id(row)])
                row.samples, row.number = len(samples[id(row)]), number
    for row, step, _, _ in steps:
        if memory and row.framework in ("ours", "ours jit", "numpy") and not row.failure:
            row.tracemalloc_mib = tracemalloc_peak_mib(step)
    steps.clear()
    gc.collect()
    if rss:
        for row in rows:
            if row.failure:
                continue
            log(f"  ... {wl.key} {wl.case_name(cfg)}: RSS probe {row.label}" + " " * 20, end="\r")
            row.rss_mib, why = rss_peak_subprocess_mib(wl.key, cfg, row.label)
            if why:
                row.note = f"(RSS probe: {why[:100]})"
    log(" " * 100, end="\r")
    return rows


# ---- printing -----------------------------------------------------------------------------------


def _fmt_time(s):
    if s != s:
        return "-"
    if s >= 1.0:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


def _fmt_mib(m):
    return "-" if m != m else f"{m:.1f}"


def _ok(row):
    return row.seconds == row.seconds


def format_case(wl, cfg, rows):
    """The table of one case, with ratios ours/this and the target line."""
    ours = min(
        (r for r in rows if r.framework == "ours" and _ok(r)), key=lambda r: r.seconds, default=None
    )
    lines = [f"  case {wl.case_name(cfg)}"]
    head = (
        f"    {'implementation':<38}{'median':>11}{'ours/this':>11}{'check':>10}"
        f"{'tracemalloc':>13}{'RSS':>9}"
    )
    lines.append(head)
    lines.append("    " + "-" * (len(head) - 4))
    for r in rows:
        if not _ok(r):
            lines.append(f"    {r.label:<38}  failed: {r.failure}")
            continue
        ratio = "-" if ours is None else f"{ours.seconds / r.seconds:.2f}x"
        check = "ref" if r is rows[0] else ("-" if r.err != r.err else f"{r.err:.0e}")
        if r.err == r.err and r.err > max(wl.rtol, 1e-12) * 10:
            check += "!"
        lines.append(
            f"    {r.label:<38}{_fmt_time(r.seconds):>11}{ratio:>11}{check:>10}"
            f"{_fmt_mib(r.tracemalloc_mib):>13}{_fmt_mib(r.rss_mib):>9}"
            + (f"  {r.note}" if r.note else "")
        )
    lines.append(_target_line(wl, rows))
    return "\n".join(lines)


def _fastest(rows, framework):
    c = [r for r in rows if r.framework == framework and _ok(r)]
    return min(c, key=lambda r: r.seconds) if c else None


def _target_line(wl, rows):
    ref = _fastest(rows, wl.reference)
    parts = []
    for fw in ("ours", "ours jit"):
        o = _fastest(rows, fw)
        if o is None or ref is None:
            continue
        ratio = o.seconds / ref.seconds
        verdict = "MEETS" if ratio <= wl.target else "MISSES"
        parts.append(f"{fw} ({o.label}) / {wl.reference} ({ref.label}) = {ratio:.2f}x {verdict}")
    if not parts:
        return f"    target ours/{wl.reference} <= {wl.target:.2f}x: not measured"
    return f"    target ours/{wl.reference} <= {wl.target:.2f}x: " + "; ".join(parts)


def rows_to_json(wl, cfg, rows):
    return {
        "workload": wl.key,
        "case": wl.case_name(cfg),
        "cfg": cfg,
        "target": wl.target,
        "reference": wl.reference,
        "rows": [dataclasses.asdict(r) for r in rows],
    }
