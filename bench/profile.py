"""Where our engine's time goes, per workload: ``python -m bench.profile [W1 ...] [--quick]
[--impl LABEL] [--steps N] [--top K]``.

Two measurements of our row (default: every "ours" row of each case):

1. Compute vs overhead, without a profiler: every primitive's ``impl`` is wrapped with a
   timer for a few steps. "compute" is the time inside ``impl`` (the numpy/BLAS work),
   "overhead" is the rest of the wall time (tracing, tapes, rules, wrappers, Python). Also
   the compute per primitive and the number of primitive calls per step.
2. cProfile, functions sorted by their own time (``tottime``). numpy ufuncs are not Python
   functions, so their time shows up as the own time of the primitive's ``impl`` lambda
   that called them. cProfile roughly doubles the cost of Python function calls, so its
   shares overstate overhead; use (1) for the split and (2) to find the hot functions.
"""

import argparse
import cProfile
import os
import pstats
import sys
import time
from collections import defaultdict

from . import WORKLOAD_MODULES, get_workload

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _short(filename):
    if filename.startswith(ROOT):
        return os.path.relpath(filename, ROOT)
    for marker in ("site-packages/", "lib/python3"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


class _TimedImpls:
    """Context manager: wrap every primitive's impl with a call counter and timer, and every
    VJP/JVP rule with a tag, so that compute is attributed to (primitive, where it ran):
    "forward" outside any rule, "vjp:<prim>" / "jvp:<prim>" inside that primitive's rule
    (innermost rule wins), "custom_vjp:<name>" inside a custom_vjp backward, "backward sweep"
    in the sweep itself (summing cotangents, undoing broadcasting)."""

    def __init__(self):
        self.time = defaultdict(float)
        self.calls = defaultdict(int)
        self.by_origin = defaultdict(float)
        self.calls_by_origin = defaultdict(int)
        self.tags = ["forward"]

    def _tagged(self, tag, fn):
        tags = self.tags

        def wrapped(*a, **k):
            tags.append(tag)
            try:
                return fn(*a, **k)
            finally:
                tags.pop()

        return wrapped

    def __enter__(self):
        from diffsci.core.autodiff import api, forward, reverse
        from diffsci.core.prims._define import ALL

        self.saved = [(p, p.impl) for p in ALL]
        self.saved_vjp = dict(reverse.vjp_rules)
        self.saved_jvp = dict(forward.jvp_rules)
        self.saved_custom = reverse.CustomVJPCall.backward
        clock = time.perf_counter
        tags = self.tags
        for p, impl in self.saved:

            def timed(*a, _impl=impl, _name=p.name, **k):
                t0 = clock()
                try:
                    return _impl(*a, **k)
                finally:
                    dt = clock() - t0
                    self.time[_name] += dt
                    self.calls[_name] += 1
                    self.by_origin[(_name, tags[-1])] += dt
                    self.calls_by_origin[(_name, tags[-1])] += 1

            p.impl = timed
        for prim, rule in self.saved_vjp.items():
            reverse.vjp_rules[prim] = self._tagged(f"vjp:{prim.name}", rule)
        for prim, rule in self.saved_jvp.items():
            forward.jvp_rules[prim] = self._tagged(f"jvp:{prim.name}", rule)
        saved_custom = self.saved_custom

        def custom_backward(call, g):
            tags.append(f"custom_vjp:{call.name}")
            try:
                return saved_custom(call, g)
            finally:
                tags.pop()

        reverse.CustomVJPCall.backward = custom_backward
        # the backward sweep itself (cotangent accumulation, un-broadcasting) outside any rule
        self.saved_backward = api.backward
        api.backward = self._tagged("backward sweep", api.backward)
        return self

    def __exit__(self, *exc):
        from diffsci.core.autodiff import api, forward, reverse

        for p, impl in self.saved:
            p.impl = impl
        reverse.vjp_rules.update(self.saved_vjp)
        forward.jvp_rules.update(self.saved_jvp)
        reverse.CustomVJPCall.backward = self.saved_custom
        api.backward = self.saved_backward

    def reset(self):
        for d in (self.time, self.calls, self.by_origin, self.calls_by_origin):
            d.clear()


def _split(step, steps):
    """Wall and compute per step, with compute per primitive and per (primitive, origin)."""
    step()
    with _TimedImpls() as ti:
        step()  # the wrapped impls' first call
        ti.reset()
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        wall = (time.perf_counter() - t0) / steps  # the wrappers add ~1 us per primitive call
    return {
        "wall": wall,
        "compute": sum(ti.time.values()) / steps,
        "per_prim": {k: v / steps for k, v in ti.time.items()},
        "calls": {k: v / steps for k, v in ti.calls.items()},
        "by_origin": {k: v / steps for k, v in ti.by_origin.items()},
        "calls_by_origin": {k: v / steps for k, v in ti.calls_by_origin.items()},
    }


def _cprofile(step, steps, top):
    step()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        step()
    prof.disable()
    st = pstats.Stats(prof)
    total = sum(v[2] for v in st.stats.values())  # sum of tottime = profiled wall
    by_fn = defaultdict(lambda: [0.0, 0.0, 0])
    for (fname, line, func), (_cc, nc, tt, ct, _callers) in st.stats.items():
        key = f"{_short(fname)}:{func}" if fname != "~" else func
        if func == "<lambda>":
            key = f"{_short(fname)}:{line}:<lambda>"
        e = by_fn[key]
        e[0] += tt
        e[1] = max(e[1], ct)
        e[2] += nc
    rows = sorted(by_fn.items(), key=lambda kv: -kv[1][0])[:top]
    by_file = defaultdict(float)
    for (fname, _line, _func), v in st.stats.items():
        by_file[_short(fname) if fname != "~" else "<C builtins>"] += v[2]
    files = sorted(by_file.items(), key=lambda kv: -kv[1])[:12]
    return (
        total / steps,
        [(k, v[0] / steps, v[1] / steps, v[2] / steps) for k, v in rows],
        total,
        files,
    )


def profile_case(wl, cfg, impl, steps, top, out=print):
    data = wl.data(cfg)
    step = impl.make(cfg, data)
    step()
    sp = _split(step, steps)
    wall, compute, per_prim, calls = sp["wall"], sp["compute"], sp["per_prim"], sp["calls"]
    n_calls = sum(calls.values())
    out(f"\n{wl.key} {wl.case_name(cfg)} -- {impl.label}")
    out(
        f"  wall {wall * 1e3:.2f} ms/step; primitive impls (numpy compute) {compute * 1e3:.2f} ms "
        f"({100 * compute / wall:.0f}%); engine overhead {(wall - compute) * 1e3:.2f} ms "
        f"({100 * (wall - compute) / wall:.0f}%); {n_calls:.0f} primitive calls/step, "
        f"{1e6 * (wall - compute) / max(n_calls, 1):.1f} us overhead per call"
    )
    prims = sorted(per_prim.items(), key=lambda kv: -kv[1])[:10]
    out(
        "  compute by primitive (ms/step, calls/step): "
        + ", ".join(f"{k} {v * 1e3:.2f} ({calls[k]:.0f})" for k, v in prims)
    )
    origins = sorted(sp["by_origin"].items(), key=lambda kv: -kv[1])[:top]
    out(
        "  compute by (primitive, where it ran): "
        + ", ".join(
            f"{p}@{o} {v * 1e3:.2f} ms ({sp['calls_by_origin'][(p, o)]:.0f})"
            for (p, o), v in origins
        )
    )
    per_step, rows, total, files = _cprofile(step, steps, top)
    out(
        f"  cProfile ({per_step * 1e3:.1f} ms/step under the profiler), own time by file: "
        + ", ".join(f"{f} {100 * t / total:.0f}%" for f, t in files)
    )
    out(f"    {'own %':>6} {'own ms':>8} {'cum ms':>8} {'calls':>7}  function")
    for key, tt, ct, nc in rows:
        out(f"    {100 * tt / per_step:6.1f} {tt * 1e3:8.2f} {ct * 1e3:8.2f} {nc:7.0f}  {key}")


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m bench.profile", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("workloads", nargs="*")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument(
        "--impl", action="append", help="row label(s) to profile (default: every 'ours' row)"
    )
    ap.add_argument(
        "--steps", type=int, default=0, help="steps per measurement (default: ~1 s worth)"
    )
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--case", type=int, action="append", help="case index(es) within the workload")
    args = ap.parse_args(argv)
    keys = [k.upper() for k in args.workloads] or list(WORKLOAD_MODULES)
    for key in keys:
        wl = get_workload(key)
        cases = wl.cases(args.quick)
        for ci, cfg in enumerate(cases):
            if args.case and ci not in args.case:
                continue
            for impl in wl.impls():
                if (args.impl and impl.label not in args.impl) or (
                    not args.impl and impl.framework != "ours"
                ):
                    continue
                steps = args.steps
                if not steps:
                    s = impl.make(cfg, wl.data(cfg))
                    s()
                    t0 = time.perf_counter()
                    s()
                    steps = max(1, min(50, int(1.0 / max(time.perf_counter() - t0, 1e-6))))
                    del s
                profile_case(wl, cfg, impl, steps, args.top)
                sys.stdout.flush()


if __name__ == "__main__":
    main()
