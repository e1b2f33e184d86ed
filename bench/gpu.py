"""GPU rows (the cupy backend, ``core.set_device("GPU")``): FDTD, FNO training steps and a
Pairformer block, timed on the GPU after a warm-up, each compared with the same workload's
arithmetic bound where one is simple to state.

- ``fdtd``: issue 15's case (``bench.fdtd``: a vacuum box with a 10-cell CPML on all faces,
  float32, a point source) at 128^3 and 256^3 cells, million cell-updates per second. On the
  GPU each step is the composite Yee update staged by ``core.jit`` (elementwise passes fused
  into cupy ``ElementwiseKernel`` launches). The roofline divides the device's measured copy
  bandwidth (``cupy`` device-to-device copy, bytes read + written) by the bytes per
  cell-update of our native CPU kernel (the least traffic the update needs).
- ``fno1d`` / ``fno2d``: issue 14's training steps (``bench.operators``' configurations: FNO1D
  s = 1024 batch 20 width 64 modes 16; FNO2D 64^2 batch 8 width 32 modes 12), eager and jit,
  ms per step (forward, backward, Adam).
- ``pairformer``: one Protenix ``PairformerBlock`` forward (c_z = 128, c_s = 384, N = 256 and
  512, float32, no grad), ms.

    python -m bench.gpu            # needs cupy and a CUDA GPU
    python -m bench.gpu --rows fdtd --repeats 5
"""

import argparse
import json
import time

import numpy as np

ROWS = ("fdtd", "fno1d", "fno2d", "pairformer")


def _sync():
    import cupy

    cupy.cuda.Device().synchronize()


def _best(fn, repeats):
    fn()  # warm-up: compiles kernels, plans FFTs
    _sync()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        _sync()
        best = min(best, time.perf_counter() - t0)
    return best


def copy_bandwidth(mib=1024, repeats=10):
    """Bytes read + written per second by a device-to-device copy of ``mib`` MiB."""
    import cupy

    a = cupy.ones(mib * 2**20 // 4, dtype=cupy.float32)
    b = cupy.empty_like(a)
    seconds = _best(lambda: cupy.copyto(b, a), repeats)
    return 2 * a.nbytes / seconds


def fdtd_rows(repeats, sizes=(128, 256), steps=100):
    from diffsci import core
    from bench.fdtd import CASE, _simulation, bytes_per_cell

    bandwidth = copy_bandwidth()
    rows = []
    for n in sizes:
        cfg = dict(CASE, n=n)
        core.set_device("CPU")
        per_cell = bytes_per_cell(_simulation(cfg))[0]  # the native kernel's traffic
        core.set_device("GPU")
        try:
            sim = _simulation(cfg)
            seconds = _best(lambda: sim.run(steps)[0].get("ez"), repeats)  # noqa: B023
        finally:
            core.set_device("CPU")
        rate = n**3 * steps / seconds / 1e6
        roof = bandwidth / per_cell / 1e6
        rows.append({"row": f"fdtd {n}^3", "mcells_per_s": rate, "roofline": roof,
                     "fraction": rate / roof, "bytes_per_cell": per_cell})  # fmt: skip
    return rows, bandwidth


def fno_rows(case, repeats):
    from diffsci import core
    from bench.operators import CASES, _ours

    rows = []
    core.set_device("GPU")
    try:
        for jit in (False, True):
            step, _ = _ours(CASES[case], jit)
            seconds = _best(step, repeats)
            rows.append(
                {"row": f"{case} {'jit' if jit else 'eager'}", "ms_per_step": 1e3 * seconds}
            )
    finally:
        core.set_device("CPU")
    return rows


def pairformer_rows(repeats, sizes=(256, 512)):
    from diffsci import core
    from diffsci.core import ops
    from diffsci.protenix.model.modules.pairformer import PairformerBlock

    rows = []
    core.set_device("GPU")
    try:
        core.set_seed(0)
        blk = PairformerBlock(n_heads=16, c_z=128, c_s=384)
        blk.set_train(False)
        for n in sizes:
            rng = np.random.default_rng(0)
            s = core.tensor(rng.standard_normal((n, 384)).astype(np.float32))
            z = core.tensor(rng.standard_normal((n, n, 128)).astype(np.float32))
            mask = ops.ones((n, n))

            def forward(s=s, z=z, mask=mask):
                with core.no_grad():
                    blk(s, z, mask)[1].sum()

            rows.append({"row": f"pairformer N={n}", "ms": 1e3 * _best(forward, repeats)})
    finally:
        core.set_device("CPU")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(0)
    print(f"GPU: {props['name'].decode()}, cupy {cupy.__version__}")
    out = []
    for row in args.rows:
        try:
            if row == "fdtd":
                rows, bandwidth = fdtd_rows(args.repeats)
                print(f"device copy bandwidth {bandwidth / 1e9:.0f} GB/s (read + write)")
            elif row in ("fno1d", "fno2d"):
                rows = fno_rows(row, args.repeats)
            else:
                rows = pairformer_rows(args.repeats)
        except Exception as err:  # report the row's failure and go on with the others
            rows = [{"row": row, "error": f"{type(err).__name__}: {err}"}]
        for r in rows:
            print("  ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                            for k, v in r.items()), flush=True)  # fmt: skip
        out.extend(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main()
