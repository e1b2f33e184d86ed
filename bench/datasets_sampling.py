"""Point sampling in a 2-D CSG shape: throughput on this machine.

``python -m bench.datasets_sampling [--n 1000000] [--repeat 3]``

The shape: a plate with a hole plus a roof, ``(Rectangle - Disk) | Triangle`` (area
``2 - pi 0.3^2 + 0.6 = 2.317``, 72% of its bounding box). Reported per sampler
(uniform, lhs, halton, sobol): points/s of ``sample_interior(n)`` (rejection from the bounding
box, exactly ``n`` points) and of ``sample_boundary(n)`` (points and outward normals on the true
boundary of the result), best of ``--repeat`` runs after one warm-up; plus the raw unit-square
generator alone (``samplers.sample``), to show what the geometry adds.

Numbers only, no assertion (the tests check correctness).
"""

from __future__ import annotations

import numpy as np

from diffsci.datasets.geometry import Disk, Rectangle, Triangle
from diffsci.datasets.geometry.samplers import sample

from .datasets_common import best_time, run_from_command_line

SAMPLERS = ("uniform", "lhs", "halton", "sobol")


def plate_with_roof(dtype=np.float32):
    """``(Rectangle - Disk) | Triangle``: the CSG shape of the bench."""
    plate = Rectangle("plate", (0.0, 0.0), (2.0, 1.0), dtype=dtype)
    hole = Disk("hole", (0.7, 0.5), 0.3, dtype=dtype)
    roof = Triangle("roof", [[0.0, 1.0], [2.0, 1.0], [1.0, 1.6]], dtype=dtype)
    return (plate - hole) | roof


def main(n=1_000_000, repeat=3):
    geom = plate_with_roof()
    rows = []
    for sampler in SAMPLERS:
        t_unit = best_time(lambda s=sampler: sample(n, 2, s, seed=0), repeat)
        t_in = best_time(lambda s=sampler: geom.sample_interior(n, s, seed=0), repeat)
        t_bd = best_time(lambda s=sampler: geom.sample_boundary(n, s, seed=0), repeat)
        rows.append((sampler, n / t_unit, n / t_in, n / t_bd))
    print(f"{geom!r}: points/s, n = {n:,} (best of {repeat})")
    print("| sampler | unit square alone | CSG interior | CSG boundary (+ normals) |")
    print("|---|---|---|---|")
    for sampler, unit, interior, boundary in rows:
        print(
            f"| {sampler} | {unit / 1e6:.1f} M | {interior / 1e6:.2f} M | {boundary / 1e6:.2f} M |"
        )
    return rows


if __name__ == "__main__":
    run_from_command_line(main, __doc__)
