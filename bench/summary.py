"""The summary tables printed at the end of ``python -m bench``: one per thread setting, one
line per case, the best row of each framework, and our eager and jit times over PyTorch's.

Input: the JSON-able reports of :func:`bench.harness.rows_to_json` (a list of cases, each with
its rows). Output: Markdown tables, the form README.md's "Benchmarks" section quotes.
"""

import math

from .harness import _fmt_time

_COLUMNS = ("ours", "ours jit", "torch", "jax.jit")


def _best(case, framework):
    """Seconds of the fastest row of ``framework`` in ``case`` (NaN when none ran)."""
    times = [
        r["seconds"]
        for r in case["rows"]
        if r["framework"] == framework and r["seconds"] == r["seconds"] and not r["failure"]
    ]
    return min(times) if times else math.nan


def _ratio(a, b):
    return "-" if a != a or b != b else f"{a / b:.2f}x"


def table(title, report):
    """One Markdown table for ``report`` (a list of rows_to_json cases), under ``title``."""
    lines = [
        f"{title}",
        "",
        "| workload | ours | ours jit | torch eager | jax.jit | ours/torch | jit/torch |",
        "|---|---|---|---|---|---|---|",
    ]
    for case in report:
        best = {fw: _best(case, fw) for fw in _COLUMNS}
        cells = [_fmt_time(best[fw]) for fw in _COLUMNS]
        lines.append(
            f"| {case['workload']} {case['case']} | "
            + " | ".join(cells)
            + f" | {_ratio(best['ours'], best['torch'])} | {_ratio(best['ours jit'], best['torch'])} |"
        )
    return "\n".join(lines)


def tables(passes):
    """The tables of several passes, ``[(title, report), ...]``, separated by blank lines."""
    return "\n\n".join(table(title, report) for title, report in passes)
