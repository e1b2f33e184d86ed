"""The whole time loop as one native call (``native_run``) against the loop staged as a
``core.ops.scan``: values, gradients under checkpointing (one and two threads), finite
differences, the fallbacks and the memory accounting."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import native as core_native
from diffsci.core import ops
from diffsci.core.control.loops import as_policy
from diffsci.mindelec import fdtd
from diffsci.mindelec.fdtd import native_run
from diffsci.mindelec.fdtd.waveforms import Gaussian

pytestmark = pytest.mark.skipif(not core_native.available(), reason="no C compiler")

CASES = [
    ((16,), None, fdtd.CPML(4)),
    ((12, 11), "TMz", {"x": fdtd.CPML(3), "y": fdtd.Periodic()}),
    ((11, 12), "TEz", {"x": fdtd.PMC(), "y": (fdtd.CPML(2), fdtd.PEC())}),
    ((8, 7, 9), None, {"x": fdtd.CPML(2), "y": fdtd.PMC(), "z": fdtd.Periodic()}),
]
STEPS = 60


def _problem(shape, mode, boundaries, dtype="float64"):
    """``(grid, loss)``: ``loss(eps, sigma, amp, native_loop, checkpoint)``, a misfit of two
    E probes (``PointProbes``) and one H probe (``PointProbe``) of a soft point source's run,
    differentiable in the eps_r and sigma maps and the source amplitude."""
    spacing = (1e-3, 1.1e-3, 0.9e-3)[: len(shape)]
    grid = fdtd.Grid(shape, spacing, mode=mode, dtype=dtype)
    e, h = grid.e_components[-1], grid.h_components[0]
    mid = tuple(n // 2 for n in shape)
    near = tuple(n // 2 + 1 for n in shape)
    far = tuple(n // 2 - 1 for n in shape)

    def loss(eps, sigma, amp, native_loop=True, checkpoint=None):
        sim = fdtd.Simulation(
            grid,
            fdtd.Materials(eps_r=eps, sigma=sigma),
            boundaries,
            sources=[fdtd.PointSource(e, mid, Gaussian(1.2e10), amplitude=amp)],
            monitors=[
                fdtd.PointProbes(e, [near, far], name="pair", allow_pml=True),
                fdtd.PointProbe(h, near, name="h", allow_pml=True),
            ],
            native_loop=native_loop,
        )
        assert (sim._native_run is not None) == native_loop
        _, res = sim.run(STEPS, checkpoint=checkpoint)
        weights = core.tensor(np.linspace(0.5, 1.5, STEPS), dtype=grid.dtype)
        return (weights * (res["pair"] ** 2).sum(axis=1)).sum() + 1e3 * (res["h"] ** 2).sum()

    return grid, loss


def _inputs(shape, dtype="float64"):
    rng = np.random.default_rng(7)
    eps = core.tensor(1 + rng.random(shape), dtype=dtype)
    sigma = core.tensor(0.01 * rng.random(shape), dtype=dtype)
    amp = core.tensor(1.3, dtype=dtype)
    return eps, sigma, amp


@pytest.fixture(autouse=True)
def _pipeline_toy_grids(monkeypatch):
    # the second thread's schedule at toy sizes too (it starts at 2048 cells)
    monkeypatch.setattr(native_run, "PIPELINE_MIN_CELLS", 0)


@pytest.mark.parametrize(("shape", "mode", "boundaries"), CASES)
def test_native_loop_equals_scan_values_and_gradients(shape, mode, boundaries):
    # the same kernels in the same order: the loss to the last bit; the gradient of the
    # checkpointed native reverse pass (one thread, then two: recomputation and the maps'
    # cotangents on the worker) against the scan storing every carry, to round-off
    _, loss = _problem(shape, mode, boundaries)
    args = _inputs(shape)
    assert float(loss(*args, True)) == float(loss(*args, False))
    reference = core.grad(lambda *a: loss(*a, False, False), grad_position=(0, 1, 2))(*args)
    default = core.get_num_threads()
    try:
        for threads in (1, 2):
            core.set_num_threads(threads)
            # (every carry; two levels, pipelined on two threads; every 8th; three levels)
            for checkpoint in (False, None, 8, ops.CheckpointPolicy(budget=12)):
                got = core.grad(
                    lambda *a, c=checkpoint: loss(*a, True, c), grad_position=(0, 1, 2)
                )(*args)
                for g, r in zip(got, reference, strict=True):
                    r = r.asnumpy()
                    assert np.abs(r).max() > 0
                    np.testing.assert_allclose(
                        g.asnumpy(), r, rtol=1e-11, atol=1e-12 * np.abs(r).max()
                    )
    finally:
        core.set_num_threads(default)


LIGHT_3D = ((8, 7, 9), None, {"x": fdtd.CPML(2), "y": fdtd.Periodic(), "z": fdtd.CPML(2)})


@pytest.mark.parametrize(
    ("case", "lossless", "light"),
    [
        (CASES[0], True, True),
        (CASES[1], True, True),
        (CASES[1], False, True),
        (CASES[2], True, False),
        (CASES[2], False, False),
        (LIGHT_3D, True, True),
    ],
)
def test_leaves_driver_paths_agree(monkeypatch, case, lossless, light):
    # the one-call reverse of the leaf segments (fdtd_leaves): on two threads with the maps'
    # cotangents always on the worker, never, or balanced, and on one thread, against the
    # loop over segments in Python (the fallback without POSIX threads), float64 to round-off.
    # With no H map, the schedule is the light one: the worker recomputes into a ring of two
    # states, keeping the curl sums (Cb maps) and, lossy (a sigma map: Ca a map too), the old
    # E components (1D, TMz, 3D: three E components; not the TEz case: its PMC wall masks Db,
    # an H map then, so the chain reads states from two segment buffers).
    shape, mode, boundaries = case
    _, loss = _problem(shape, mode, boundaries)
    eps, sigma, amp = _inputs(shape)
    if lossless:
        args, position = (eps, 0.0, amp), (0, 2)
    else:
        args, position = (eps, sigma, amp), (0, 1, 2)
    stats = []
    run_leaves = native_run.NativeRun._run_leaves

    def recording(self, *a):
        run_leaves(self, *a)
        stats.append(self.reverse_stats)

    monkeypatch.setattr(native_run.NativeRun, "_run_leaves", recording)

    def grad(threads, checkpoint=None):
        default = core.get_num_threads()
        core.set_num_threads(threads)
        try:
            fn = core.grad(lambda *a: loss(*a, True, checkpoint), grad_position=position)
            return [g.asnumpy() for g in fn(*args)]
        finally:
            core.set_num_threads(default)

    got = {}
    for share in (1, 0, -1):
        monkeypatch.setattr(native_run, "_SHARE_COEF", share)
        stats.clear()
        got[share] = grad(2)
        (last,) = stats
        assert last["segments"] > 2 and last["light"] == light
        assert last["worker_cpu_s"] > 0  # (the worker pthread ran)
        shared = last["coef_on_worker"]
        if light:  # (every segment's, the light schedule's worker running ahead)
            assert shared == last["segments"]
        elif share == 1:  # (but the last segment's, which nothing would overlap)
            assert shared == last["segments"] - 1
        elif share == 0:
            assert shared == 0
    got["one thread"] = grad(1)  # (lossless: the light schedule, without the thread)
    assert stats[-1]["light"] == light and stats[-1]["worker_cpu_s"] == 0
    # a compiler without POSIX threads: fdtd_leaves does not build, nothing pipelines
    load = native_run.native.load

    def no_pthreads(source):
        if "#include <pthread.h>" in source:
            raise RuntimeError("native kernel failed to compile: pthread.h: no such file")
        return load(source)

    monkeypatch.delitem(native_run._DRIVERS, "leaves", raising=False)
    monkeypatch.setattr(native_run.native, "load", no_pthreads)
    assert native_run._leaves_driver() is None
    stats.clear()
    for threads in (1, 2):
        reference = grad(threads)
        for g in got.values():
            for a, r in zip(g, reference, strict=True):
                assert np.abs(r).max() > 0
                np.testing.assert_allclose(a, r, rtol=1e-11, atol=1e-12 * np.abs(r).max())
    assert not stats  # (the fallback ran)


def test_native_loop_gradient_matches_central_differences():
    # float64, 2D TMz with a CPML, under the default (sqrt) checkpointing and two threads
    shape, mode, boundaries = CASES[1]
    _, loss = _problem(shape, mode, boundaries)
    eps, sigma, amp = _inputs(shape)
    default = core.get_num_threads()
    core.set_num_threads(2)
    try:
        g_eps, g_amp = core.grad(lambda e, a: loss(e, sigma, a), grad_position=(0, 1))(eps, amp)
    finally:
        core.set_num_threads(default)
    rng = np.random.default_rng(3)
    direction = rng.standard_normal(shape)
    h = 1e-6

    def at(t, a=0.0):
        e = core.tensor(eps.asnumpy() + t * direction, dtype=core.float64)
        return float(loss(e, sigma, core.tensor(float(amp) + a, dtype=core.float64)))

    fd = (at(h) - at(-h)) / (2 * h)
    np.testing.assert_allclose(float((g_eps.asnumpy() * direction).sum()), fd, rtol=1e-4)
    fd_amp = (at(0.0, h) - at(0.0, -h)) / (2 * h)
    np.testing.assert_allclose(float(g_amp), fd_amp, rtol=1e-4)


def test_initial_state_gradient_and_float32():
    # a gradient with respect to the initial fields (the state's cotangent out of the
    # reverse pass), float32, three checkpoint levels
    grid = fdtd.Grid((14, 13), 1e-3, dtype="float32")
    rng = np.random.default_rng(5)
    ez0 = core.tensor(rng.standard_normal((14, 13)), dtype=core.float32)

    def loss(ez, native_loop, checkpoint):
        sim = fdtd.Simulation(
            grid,
            fdtd.Materials(eps_r=2.0),
            fdtd.CPML(3),
            monitors=[fdtd.PointProbes("ez", [(7, 6), (5, 8)])],
            native_loop=native_loop,
        )
        state, res = sim.run(50, state=sim.initial_state(ez=ez), checkpoint=checkpoint)
        return (res["probes"] ** 2).sum() + (state.ez**2).sum()

    reference = core.grad(lambda z: loss(z, False, False))(ez0).asnumpy()
    for checkpoint in (None, ops.CheckpointPolicy(budget=12)):
        got = core.grad(lambda z, c=checkpoint: loss(z, True, c))(ez0).asnumpy()
        np.testing.assert_allclose(got, reference, rtol=1e-4, atol=1e-5 * np.abs(reference).max())


def test_fallbacks_to_the_scan():
    grid = fdtd.Grid((12, 12), 1e-3, dtype="float64")
    source = fdtd.PointSource("ez", (6, 6), Gaussian(1.2e10))
    # a monitor that is not a point sample, a hard source: the scan runs the loop
    energy = fdtd.EnergyMonitor(grid, fdtd.Materials())
    assert fdtd.Simulation(grid, boundaries=fdtd.CPML(3), monitors=[energy])._native_run is None
    hard = fdtd.PointSource("ez", (6, 6), Gaussian(1.2e10), hard=True)
    assert fdtd.Simulation(grid, boundaries=fdtd.CPML(3), sources=[hard])._native_run is None

    class Doubled(fdtd.PointProbe):  # overrides record: not the points it names
        def record(self, state, step):
            return 2.0 * super().record(state, step)

    probe = Doubled("ez", (7, 7))
    sim = fdtd.Simulation(grid, boundaries=fdtd.CPML(3), sources=[source], monitors=[probe])
    assert sim._native_run is None
    plain = fdtd.PointProbe("ez", (7, 7))
    ref = fdtd.Simulation(grid, boundaries=fdtd.CPML(3), sources=[source], monitors=[plain])
    assert ref._native_run is not None
    np.testing.assert_array_equal(
        sim.run(20)[1]["probe"].asnumpy(), 2.0 * ref.run(20)[1]["probe"].asnumpy()
    )
    # grids above NATIVE_LOOP_MAX_CELLS keep the scan of native half steps (faster there)
    saved = native_run.NATIVE_LOOP_MAX_CELLS
    try:
        native_run.NATIVE_LOOP_MAX_CELLS = grid.shape[0] * grid.shape[1] - 1
        big = fdtd.Simulation(grid, boundaries=fdtd.CPML(3), sources=[source], monitors=[plain])
        assert big._native_run is None
    finally:
        native_run.NATIVE_LOOP_MAX_CELLS = saved


def test_reverse_memory_accounting_and_budget():
    grid = fdtd.Grid((16, 16), 1e-3, dtype="float32")
    sim = fdtd.Simulation(
        grid,
        fdtd.Materials(eps_r=core.tensor(np.full((16, 16), 2.0), dtype=core.float32)),
        fdtd.CPML(3),
        sources=[fdtd.PointSource("ez", (8, 8), Gaussian(1.2e10))],
        monitors=[fdtd.PointProbe("ez", (9, 9))],
    )
    run = sim._native_run
    # eps_r the one map (Cb): two levels, 2000 steps: 45 segment starts (as core.ops.scan
    # stores: ~sqrt(N)), no segment buffer but a ring of two states, and a segment of E_z's
    # cotangents and curl sums (16 x 16 numbers per step each), two when pipelined
    assert run.light_reverse()
    assert run.leaf_policy(2000, None, True) == ops.CheckpointPolicy()
    rows = 2 * 45 * 16 * 16 / run.carry
    assert run.reverse_carries(2000, None, False) == pytest.approx(45 + 2 + rows)
    assert run.reverse_carries(2000, None, True) == pytest.approx(45 + 2 + 2 * rows)

    def sim(**materials):
        maps = {
            k: core.tensor(np.full((16, 16), v), dtype=core.float32) for k, v in materials.items()
        }
        return fdtd.Simulation(
            grid,
            fdtd.Materials(**maps),
            fdtd.CPML(3),
            sources=[fdtd.PointSource("ez", (8, 8), Gaussian(1.2e10))],
            monitors=[fdtd.PointProbe("ez", (9, 9))],
        )._native_run

    # a sigma map makes Ca a map too, whose cotangent needs E_old: a third row per step
    lossy = sim(sigma=0.1)
    assert lossy.light_reverse() and lossy.reads_e_old()
    assert lossy.reverse_carries(2000, None, True) == pytest.approx(45 + 2 + 3 * rows)
    # a mu_r map (an H map, Db): the chain reads the states, so two segment buffers, and
    # N / L + 2 L states least at L = sqrt(N / 2) = 32: 63 starts + 2 x 33 states + the rows
    magnetic = sim(mu_r=1.5)
    assert not magnetic.light_reverse()
    assert magnetic.reverse_carries(2000, None, False) == 45 + 46  # one segment buffer
    assert magnetic.leaf_policy(2000, None, True) == ops.CheckpointPolicy(every=32)
    assert magnetic.leaf_policy(2000, None, False) == ops.CheckpointPolicy()
    for given in (8, ops.CheckpointPolicy(budget=192), False):
        assert magnetic.leaf_policy(2000, given, True) == as_policy(given)
    piped = magnetic.reverse_carries(2000, None, True)
    assert piped == pytest.approx(63 + 2 * 33 + 4 * 32 * 16 * 16 / run.carry)
    assert piped < magnetic.reverse_carries(2000, ops.CheckpointPolicy(every=45), True)
    assert run.reverse_carries(100, False) == 101
    for budget in (24, 64):
        # "about" the budget: the leaf buffer also holds a copy of its segment's start
        policy = ops.CheckpointPolicy(budget=budget)
        assert run.reverse_carries(2000, policy, False) <= budget + 1


def test_gradient_bench_tiny():
    # the bench's rows at toy size (no timing asserted): every gradient row equal to the first
    # to float32 round-off, memory columns filled, both thread counts
    from bench import fdtd_gradient

    tables = fdtd_gradient.main(["--tiny", "--threads", "2,1", "--clock", "thread"])
    assert len(tables) == 2
    for rows in tables:
        assert rows[0]["label"] == "forward" and len(rows) == 1 + len(fdtd_gradient.TINY_CONFIGS)
        for r in rows[1:]:
            assert r["grad_rel_diff"] < 1e-4 and r["stored"] > 0 and r["peak"] > 0
