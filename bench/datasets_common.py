"""What the geometry benches (``datasets_sampling``, ``datasets_shapes``) share: the best-of-n
timer and their command line (``--n``, ``--repeat``)."""

from __future__ import annotations

import argparse
import time


def best_time(fn, repeat):
    """Seconds of the fastest of ``repeat`` calls of ``fn()``, after one warm-up call."""
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def run_from_command_line(main, doc):
    """``main(n, repeat)`` with ``--n`` (default 10^6) and ``--repeat`` (default 3) from the
    command line; ``doc``'s first line describes the command."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    main(args.n, args.repeat)
