"""FDTD inverse-design gradient: time and peak memory of the gradient against the forward run.

The loss is MindElec's inverse-scattering misfit (``examples/mindelec/fdtd/inverse_scattering``)
with one of its sources and its 8 receivers on the 100 x 100 cell grid (1 cm cells, CFS-CPML 10
cells, float32), run for 2000 steps instead of 350:

    L(rho) = sum_{n, r} (E_z[n, r](eps(rho)) - E_z,meas[n, r])^2,   eps = 1 + elu(rho) on 40 x 40.

Rows (each compiled with ``core.jit``, warmed up, then timed as the median of ``--repeat``
calls; memory is measured in a separate call):

- ``forward``: ``L(rho)`` alone;
- ``grad, store all``: ``core.grad(L)`` with ``checkpoint=False`` (every carry of the time
  loop kept for the reverse pass: memory grows with the number of steps);
- ``grad, sqrt``: the default (``checkpoint=None``: two levels, about ``2 sqrt(N)`` carries);
- ``grad, every k``: a fixed interval (about ``N / k + k`` carries);
- ``grad, budget B``: ``core.ops.CheckpointPolicy(budget=B)`` (at most about ``B`` carries,
  more recomputation).

Columns: seconds per call, the ratio to the forward row, the peak of ``tracemalloc`` during one
call (numpy's buffers and our engine's objects: the working memory of the call), the number of
carries the policy stores and that number times the size of one carry (the fields, the CPML
psi terms and the probes' running state). The reverse pass also holds one segment's residuals
and the adjoint state, so the peak is that bound plus a constant.

Cost model (what the ratio can reach). One step's native C kernels (``native_yee``, 100 x 100,
float32, 1 thread, under load): forward H + E half steps 19 us, their adjoint 33 us (1.8x: two
passes, more operands). With every carry stored the gradient is one forward sweep plus one
adjoint sweep, a floor of about 1 + 1.8 = 2.8x the forward run in kernel time; ``sqrt``
recomputes every segment once (+1 forward: 3.8x); ``budget B`` with three levels recomputes
twice (4.8x). Measured (``--clock cpu``, loaded 2-core machine, wall-clock noise of the
forward row alone is +-20%), 2000 steps, seconds (x forward):

    row             100^2 before   100^2 after    256^2 before   256^2 after (--repeat 1)
    forward         0.178 (1.00)   0.110 (1.00)   0.286 (1.00)   0.166 (1.00)
    store all       0.835 (4.69)   0.305 (2.76)   -              -
    sqrt (default)  0.961 (5.39)   0.428 (3.88)   2.274 (7.94)   0.904 (5.44)
    every 100       1.005 (5.64)   0.449 (4.07)   2.153 (7.52)   1.000 (6.02)
    budget 64       1.233 (6.92)   0.616 (5.59)   2.226 (7.78)   1.136 (6.84)
    budget 32       1.403 (7.88)   0.692 (6.28)   2.625 (9.17)   1.325 (7.97)

"after": the native half step's launch reuses its pointer table and the coefficients'
addresses (``cc.address`` reads the array's data field); point sources are added inside the E
half step (no ``index_add`` copy of E_z per step); the half step returns its parts and joins
their cotangents once (slicing a flat result cost, in reverse mode, a zero-filled flat array
per part and step: 7 full-grid copies per 2D step). Store-all reaches the kernel floor; the
checkpointed rows sit ~0.1-1.5x above theirs: per-step interpretation of the reverse scan
(``core.control.loops``: the traced body's VJP, ``custom_call`` output checks), not kernels.
Memory beyond the stored carries: 2.0 MiB (sqrt) to 3.3 MiB (budget 32) at 2000 steps; it grows
by ~0.35 KiB per step (60 x 60, budget 32, 200 -> 1000 steps; 1.4 KiB per step before): the
per-step traces ([steps, 8] float32) the loss reads, their cotangents and intermediates, which
any reverse pass of this loss holds.

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

import core
from core import ops
from mindelec import fdtd

__all__ = ["CONFIGS", "carries_stored", "format_table", "main", "make_problem", "measure"]

# (label, checkpoint argument of Simulation.run)
CONFIGS = (
    ("grad, store all", False),
    ("grad, sqrt (default)", None),
    ("grad, every 100", 100),
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
    values) and the example's Setup. The receivers are one ``fdtd.PointProbes`` (the example's
    ``Receivers``, as a library monitor); ``native_loop=False`` runs the time loop as a
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
    from core.control.loops import as_policy

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
