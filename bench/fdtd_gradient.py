"""FDTD inverse-design gradient: time and peak memory of the gradient against the forward run.

The loss is MindElec's inverse-scattering misfit (``examples/mindelec/fdtd/inverse_scattering``)
with one of its sources and its 8 receivers on the 100 x 100 cell grid (1 cm cells, CFS-CPML 10
cells, float32), run for 2000 steps instead of 350:

    L(rho) = sum_{n, r} (E_z[n, r](eps(rho)) - E_z,meas[n, r])^2,   eps = 1 + elu(rho) on 40 x 40.

The simulation is the library's ``fdtd.Simulation`` with one ``fdtd.PointProbes`` for the
receivers (as the example), so the whole time loop runs as
one native call and its reverse pass natively (``mindelec/fdtd/native_run.py``);
``--scan-loop`` stages it as a ``core.ops.scan`` of native half steps instead (the path before).

Rows (each compiled with ``core.jit``, warmed up, then timed as the median of ``--repeat``
calls; memory is measured in a separate call), at each thread count of ``--threads`` (default:
the machine's, then 1):

- ``forward``: ``L(rho)`` alone;
- ``grad, store all``: ``core.grad(L)`` with ``checkpoint=False`` (every state of the time
  loop kept for the reverse pass: memory grows with the number of steps);
- ``grad, sqrt``: the default (``checkpoint=None``: two levels, about ``2 sqrt(N)`` states);
- ``grad, every k``: a fixed interval (about ``N / k + k`` states);
- ``grad, budget B``: ``core.ops.CheckpointPolicy(budget=B)`` (at most about ``B`` states,
  more recomputation).

Columns: seconds per call, the ratio to the forward row, the peak of ``tracemalloc`` during one
call (numpy's buffers and our engine's objects: the working memory of the call), the states the
reverse pass holds (``NativeRun.reverse_carries``: segment starts, segment buffers or the
recomputation's ring of two states, and the E cotangent and curl-sum rows, in states) and that
number times one state (fields and CPML psi terms).

Design and cost model. The native loop's forward is the two half-step kernels per step in one
C loop (100 x 100, float32: ~5.6 us per step, against ~60 us per step for the scan, whose
per-step Python around the kernels dominated). The gradient (uniform checkpointing, the
two-level case of Griewank & Walther's revolve): the forward sweep storing the segment starts
(1x), then per segment, last first, its recomputation (1x over the run) and its adjoint chain:
per step two elementwise passes, E then H, each with the other half step's stencil pass fused in
(~7.8 us per step without the map's cotangent, 1.4x the forward), plus the eps map's cotangent
``g_Cb += g * curl`` (one pass over the E cotangents the chain stored and the curl sums the
recomputation saved, ~1.1 us per step). The leaf segments run as one C call (``fdtd_leaves``).
Here eps_r is the only map (``Cb``; ``Ca`` = 1, lossless), so no pass but the recomputation
reads a state: the recomputation goes to a ring of two states, keeping only its curl sums
(94 states for the sqrt row instead of 163). With two threads and a grid too small for the
kernels to split its rows among them (from 2048 cells to 2 x 32768 / row length rows), a worker
pthread recomputes segment s and sums its map cotangents once the calling thread has run that
segment's chain: the calling thread runs the chains back to back, so the gradient costs forward
+ chain, ~2.5x, the forward row being unable to use the second core (one kernel per half
step, too small to split). One thread runs the same work in turn, ~3.7x. Measured on the 2-core
machine (load average ~1, our own jobs; the host's other tenants made single processes slow, see
below), wall clock, 2000 steps, seconds (x forward), the native columns of the code before this
change (a Python worker thread with two hand-offs per segment, two segment buffers) beside:

    row              scan, before    native, 2 thr    native, 1 thr   before: 2 thr   1 thr
                     (cpu, 1 thr)
    forward          0.117 (1.00)    0.012 (1.00)     0.012 (1.00)    0.012 (1.00)  (1.00)
    store all        0.317 (2.67)    0.052 (4.53)     0.055 (4.54)    -             -
    sqrt (default)   0.478 (4.10)    0.029 (2.54)     0.045 (3.71)    0.036 (3.05)  (3.90)
    every 100        0.473 (4.06)    0.031 (2.65)     0.048 (3.94)    0.041 (3.47)  (4.22)
    budget 192       -               0.031 (2.65)     0.051 (4.19)    0.037 (3.11)  (3.89)
    budget 64        0.591 (5.07)    0.046 (4.00)     0.064 (5.27)    0.059 (4.99)  (5.03)
    budget 32        0.738 (6.34)    0.064 (5.50)     0.075 (6.16)    0.070 (5.98)  (6.14)

(``python -m bench.fdtd_gradient --repeat 9``; the code before: ``--no-store-all --repeat 9``;
the scan column ``--scan-loop --clock cpu --threads 1 --no-store-all``, an earlier session's.
Other runs of the same command read sqrt 2.40-2.56x, budget 64 3.46-3.65x and budget 32
4.67-4.94x at two threads, one thread sqrt 3.68-3.76x.) Five processes of ``python -m
bench.fdtd_gradient --threads 2,1``, the sqrt row, alternating with the code before: two threads
2.31 / 2.55 / 2.61x (min / median / max; before 2.82 / 2.90 / 5.30x), one thread 3.54 / 3.78 /
3.98x (before 3.38 / 3.85 / 3.95x). Now and then the host leaves the machine about one core for
seconds: the two-thread rows then read ~4x (each thread's CPU time doubles or more), the forward
row (one thread) does not move. Budget 64 and 32 use three and four levels (41 and 29 states),
whose middle-level sweeps run on the calling thread. Store-all is the slowest of the cheap rows:
its 290 MiB of states go through memory. At 256 x 256 the kernels split rows between the two
threads instead (the same schedule in turn, no worker): forward 0.031 s, sqrt 0.192 s (6.2x, 74
states); one thread 0.060 s, 0.346 s (5.7x) (``--n 256 --repeat 3 --no-store-all``): the
adjoint's arrays no longer fit the core's cache. Gradients: every row equals store-all to
float32 round-off (the column); the tests compare the native reverse pass with the scan's in
float64, on both thread counts and every schedule (``tests/mindelec/fdtd/test_native_run.py``).

    python -m bench.fdtd_gradient                      # 100 x 100, 2000 steps
    python -m bench.fdtd_gradient --steps 500 --repeat 1
    python -m bench.fdtd_gradient --tiny               # 32 x 32, 200 steps (what the test runs)
"""

import argparse
import gc
import math
import pathlib
import statistics
import sys
import time
import tracemalloc

import numpy as np

from diffsci import core
from diffsci.core import ops
from diffsci.mindelec import fdtd

__all__ = ["CONFIGS", "carries_stored", "format_table", "main", "make_problem", "measure"]

# (label, checkpoint argument of Simulation.run)
CONFIGS = (
    ("grad, store all", False),
    ("grad, sqrt (default)", None),
    ("grad, every 100", 100),
    ("grad, budget 192", ops.CheckpointPolicy(budget=192)),
    ("grad, budget 64", ops.CheckpointPolicy(budget=64)),
    ("grad, budget 32", ops.CheckpointPolicy(budget=32)),
)
TINY_CONFIGS = (
    ("grad, store all", False),
    ("grad, sqrt (default)", None),
    ("grad, every 20", 20),
    ("grad, budget 16", ops.CheckpointPolicy(budget=16)),
)


def _example():
    """The inverse-scattering example module (its ``Setup``: grid, sources, receivers, maps)."""
    import importlib.util

    path = (
        pathlib.Path(__file__).resolve().parents[1]
        / "examples/mindelec/fdtd/inverse_scattering/inverse_scattering.py"
    )
    spec = importlib.util.spec_from_file_location("inverse_scattering_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_problem(n=100, steps=2000, npml=10, dtype="float32", native_loop=True):
    """``(loss, rho0, setup)``: the one-source misfit ``loss(rho, checkpoint)`` of ``steps``
    steps on ``n x n`` cells, its starting design ``rho0`` (Tensor ``[m, m]``, small random
    values) and the example's Setup. The receivers are one ``fdtd.PointProbes``
    (as the example); ``native_loop=False`` runs the time loop as a
    ``core.ops.scan`` of native half steps (``Simulation(native_loop=False)``)."""
    ex = _example()
    setup = ex.Setup(n, nt=steps, npml=npml, dtype=dtype)
    setup.sources = setup.sources[:1]
    measured = setup.measure(setup.node_map(setup.true_permittivity()))  # [steps, 1, 8]
    rng = np.random.default_rng(0)
    rho0 = core.tensor(0.1 * rng.standard_normal(setup.design_shape), dtype=setup.grid.dtype)

    def simulation(eps):
        return fdtd.Simulation(
            setup.grid,
            fdtd.Materials(eps_r=eps),
            fdtd.CPML(setup.npml),
            sources=[
                fdtd.PointSource("ez", setup.sources[0], setup.wave, amplitude=setup.amplitude)
            ],
            monitors=[fdtd.PointProbes("ez", setup.receivers, name="receivers")],
            native_loop=native_loop,
        )

    def loss(rho, checkpoint=None):
        eps = setup.node_map(setup.cell_map(rho))
        _, res = simulation(eps).run(steps, checkpoint=checkpoint)
        traces = res["receivers"]  # [steps, 8]
        return ((traces - measured[:, 0]) ** 2).sum()

    setup.simulation = simulation  # (the bench's carries column asks it)
    return loss, rho0, setup


def carry_bytes(setup) -> int:
    """Bytes of one carry of the time loop: the fields, the CPML psi terms and one float per
    probe (the running state of ``Simulation.run``'s scan)."""
    sim = fdtd.Simulation(setup.grid, fdtd.Materials(), fdtd.CPML(setup.npml))  # no sources
    state = sim.initial_state()
    arrays = [*state.components().values(), *state.psi.values()]
    item = np.dtype(arrays[0].asnumpy().dtype).itemsize
    return sum(int(np.prod(a.shape)) for a in arrays) * item + len(setup.receivers) * item


def carries_stored(checkpoint, steps) -> int:
    """How many carries a policy keeps for the reverse pass (the scan's plan, recursively)."""
    from diffsci.core.control.loops import as_policy

    plan = as_policy(checkpoint).plan(steps)
    if plan is None:
        return steps
    seg, inner = plan
    return math.ceil(steps / seg) + carries_stored(inner, seg)


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time, "thread": time.thread_time}


def measure(fn, repeat=3, clock=time.perf_counter):
    """``(median seconds, tracemalloc peak bytes, value)`` of ``fn()`` after a warm-up call
    (seconds None for ``repeat=0``)."""
    value = fn()  # compiles
    _block(value)
    times = []
    for _ in range(repeat):
        t0 = clock()
        _block(fn())
        times.append(clock() - t0)
    gc.collect()  # garbage of earlier calls must not be freed (or counted) inside this one
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    _block(fn())
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return (statistics.median(times) if times else None), peak, value


def _block(value):
    return value.asnumpy()


def run(
    n=100,
    steps=2000,
    npml=10,
    configs=CONFIGS,
    repeat=3,
    clock="wall",
    verbose=True,
    native_loop=True,
):
    """Measure the forward row and every gradient row (``clock``: "wall" = perf_counter, "cpu" =
    process_time, steadier on a shared machine with one thread); returns ``(rows, carry
    bytes, setup)``."""
    clock = CLOCKS[clock]
    loss, rho0, setup = make_problem(n, steps, npml, native_loop=native_loop)
    native = setup.simulation(setup.node_map(setup.cell_map(rho0)))._native_run

    def stored(checkpoint):
        if native is None:
            return carries_stored(checkpoint, steps)
        return native.reverse_carries(steps, checkpoint)

    rows = []
    fwd = core.jit(lambda rho: loss(rho))
    t, peak, _ = measure(lambda: fwd(rho0), repeat, clock)
    rows.append({"label": "forward", "seconds": t, "peak": peak, "stored": None})
    if verbose:
        print(f"  forward: {t:.3f} s, peak {peak / 2**20:.1f} MiB", flush=True)
    reference = None
    for label, checkpoint in configs:
        grad = core.jit(core.grad(lambda rho, c=checkpoint: loss(rho, c)))
        t, peak, g = measure(lambda grad=grad: grad(rho0), repeat, clock)
        g = g.asnumpy()
        if reference is None:
            reference = g
        rel = float(np.abs(g - reference).max() / np.abs(reference).max())
        rows.append(
            {
                "label": label,
                "seconds": t,
                "peak": peak,
                "stored": stored(checkpoint),
                "grad_rel_diff": rel,
            }
        )
        if verbose:
            print(f"  {label}: {t:.3f} s, peak {peak / 2**20:.1f} MiB", flush=True)
    return rows, carry_bytes(setup), setup


def format_table(rows, carry, title):
    """The table as text (seconds, ratio to forward, peak MiB, carries stored, bound MiB)."""
    fwd = rows[0]["seconds"]
    lines = [
        title,
        f"{'row':24} {'s/call':>8} {'x fwd':>7} {'peak MiB':>9} {'carries':>8} "
        f"{'carries x carry MiB':>20} {'|g - g_1st|/|g|':>16}",
    ]
    for r in rows:
        stored = "-" if r["stored"] is None else f"{r['stored']:.0f}"
        bound = "-" if r["stored"] is None else f"{r['stored'] * carry / 2**20:.1f}"
        diff = f"{r['grad_rel_diff']:.1e}" if "grad_rel_diff" in r else "-"
        lines.append(
            f"{r['label']:24} {r['seconds']:8.3f} {r['seconds'] / fwd:7.2f} "
            f"{r['peak'] / 2**20:9.1f} {stored:>8} {bound:>20} {diff:>16}"
        )
    lines.append(f"one carry: {carry / 2**10:.1f} KiB")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="cells per side")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--clock",
        default="wall",
        choices=tuple(CLOCKS),
        help="wall: perf_counter; cpu: process_time (all threads); thread: thread_time of the "
        "calling thread (a loaded machine's proxy of the wall time on free cores, when the "
        "worker thread has the lighter share)",
    )
    parser.add_argument(
        "--threads",
        default=None,
        help="comma-separated thread counts to run the table at, in this process "
        "(default: core.get_num_threads(), then 1 if that is more)",
    )
    parser.add_argument(
        "--no-store-all",
        action="store_true",
        help="skip the store-all row (its memory is N carries)",
    )
    parser.add_argument("--tiny", action="store_true", help="32 x 32 cells, 200 steps")
    parser.add_argument(
        "--scan-loop",
        action="store_true",
        help="the time loop as a core.ops.scan of native half steps (Simulation(native_loop="
        "False)), not the native loop",
    )
    args = parser.parse_args(argv)
    configs, npml = CONFIGS, 10
    if args.tiny:
        args.n, args.steps, args.repeat, configs, npml = 32, 200, 1, TINY_CONFIGS, 5
    if args.no_store_all:
        configs = tuple(c for c in configs if c[1] is not False)
    default = core.get_num_threads()
    if args.threads is None:
        counts = [default] + ([1] if default > 1 else [])
    else:
        counts = [int(t) for t in args.threads.split(",")]
    tables = []
    try:
        for threads in counts:
            core.set_num_threads(threads)
            title = (
                f"FDTD inverse-design gradient: {args.n} x {args.n} TMz cells, {args.steps} "
                f"steps, 1 source, 8 receivers, float32, threads {threads}, {args.clock} clock, "
                f"{'scan' if args.scan_loop else 'native'} loop"
            )
            rows, carry, _ = run(
                args.n,
                args.steps,
                npml,
                configs,
                args.repeat,
                args.clock,
                native_loop=not args.scan_loop,
            )
            tables.append(rows)
            print(format_table(rows, carry, title), flush=True)
    finally:
        core.set_num_threads(default)
    return tables[0] if len(tables) == 1 else tables


if __name__ == "__main__":
    main(sys.argv[1:])
