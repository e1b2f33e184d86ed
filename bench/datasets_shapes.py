"""3-D shapes, adaptive refinement and MindFlow's ``Dataset``: throughput on this machine.

``python -m bench.datasets_shapes [--n 1000000] [--repeat 3]``

- points/s of ``sample_interior`` and ``sample_boundary`` (``n`` points, uniform and Sobol')
  for ``Cuboid``, ``Cylinder``, ``Cone``, ``Tetrahedron`` and a 4-d ``HyperCube`` (best of
  ``--repeat`` runs after one warm-up);
- ``rar`` and ``rad`` choosing 1% of ``n`` candidates in a ``Cylinder`` x time (residual: a
  Gaussian bump, numpy), wall time;
- ``datasets.Dataset`` over a cuboid's ``n / 10`` domain and ``n / 50`` boundary points:
  ``create_dataset(batch_size=1000)`` and one epoch of ``create_tuple_iterator``.

Numbers only, no assertion (the tests check correctness).
"""

from __future__ import annotations

import time

import numpy as np

from diffsci import datasets
from diffsci.datasets.geometry import (
    Cone,
    Cuboid,
    Cylinder,
    GeometryWithTime,
    HyperCube,
    Tetrahedron,
    TimeDomain,
    generate_sampling_config,
    rad,
    rar,
)

from .datasets_common import best_time, run_from_command_line


def main(n=1_000_000, repeat=3):
    shapes = [
        Cuboid("cuboid", [0, 0, 0], [1, 2, 3]),
        Cylinder("cylinder", [0, 0], 1.0, 0.0, 2.0, 2),
        Cone("cone", [0, 0], 1.0, 0.0, 2.0, 2),
        Tetrahedron("tetrahedron", [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]),
        HyperCube("hypercube4", 4, [0, 0, 0, 0], [1, 1, 1, 1]),
    ]
    print(f"points/s, n = {n:,} (best of {repeat})")
    print("| shape | sampler | interior | boundary (+ normals) |")
    print("|---|---|---|---|")
    for geom in shapes:
        for sampler in ("uniform", "sobol"):
            ti = best_time(lambda g=geom, s=sampler: g.sample_interior(n, s, 0), repeat)
            tb = best_time(lambda g=geom, s=sampler: g.sample_boundary(n, s, 0), repeat)
            print(f"| {geom.name} | {sampler} | {n / ti / 1e6:.1f} M | {n / tb / 1e6:.1f} M |")

    flow = GeometryWithTime(Cylinder("pipe", [0, 0], 0.5, 0.0, 2.0, 2), TimeDomain("time"))

    def residual(x):
        return np.exp(-np.sum((x[:, :3] - [0.3, 0.0, 1.0]) ** 2, axis=1) / 0.01)

    k = n // 100
    t_rar = best_time(lambda: rar(flow, residual, n, k, seed=0), repeat)
    t_rad = best_time(lambda: rad(flow, residual, k, n_candidates=n, seed=0), repeat)
    print(f"\nrar: {k:,} of {n:,} candidates in {t_rar:.3f} s; rad: {t_rad:.3f} s")

    config = generate_sampling_config(
        {"domain": {"size": n // 10}, "BC": {"size": n // 50, "with_normal": True}}
    )
    cube = Cuboid("cube", [0, 0, 0], [1, 1, 1], sampling_config=config)
    data = datasets.Dataset({cube: ["domain", "BC"]})
    t0 = time.perf_counter()
    train = data.create_dataset(batch_size=1000, seed=0)
    t1 = time.perf_counter()
    batches = sum(1 for _ in train.create_tuple_iterator(output_numpy=True))
    t2 = time.perf_counter()
    print(
        f"Dataset ({n // 10:,} domain + {n // 50:,} BC points): create_dataset {t1 - t0:.3f} s, "
        f"one epoch of {batches} batches of 1000 {t2 - t1:.3f} s"
    )


if __name__ == "__main__":
    run_from_command_line(main, __doc__)
