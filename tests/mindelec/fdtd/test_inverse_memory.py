"""Peak memory of an inverse-design gradient through a long FDTD run is bounded by the
checkpoint budget (measured with tracemalloc; no timings)."""

import numpy as np

from diffsci import core
from bench.fdtd_gradient import carry_bytes, make_problem, measure
from diffsci.core import ops


def _peak(loss, rho, checkpoint):
    grad = core.jit(core.grad(lambda r: loss(r, checkpoint)))
    _, peak, g = measure(lambda: grad(rho), repeat=0)
    return peak, g.asnumpy()


def test_budgeted_gradient_memory_is_bounded():
    # MindElec's inverse-scattering misfit (one source, 8 receivers) on 40 x 40 cells
    budget = ops.CheckpointPolicy(budget=24)
    peaks = {}
    for steps in (100, 400):
        loss, rho, setup = make_problem(n=40, steps=steps, npml=4)
        peak_all, g_all = _peak(loss, rho, False)  # every carry stored
        peak_budget, g_budget = _peak(loss, rho, budget)  # at most ~24 carries
        np.testing.assert_allclose(g_budget, g_all, rtol=1e-4, atol=1e-5 * np.abs(g_all).max())
        assert np.abs(g_all).max() > 0
        peaks[steps] = (peak_all, peak_budget)
    carry = carry_bytes(setup)
    # storing every carry costs at least one carry per step (measured ~1.2)
    assert peaks[400][0] > 400 * carry, (peaks, carry)
    # with the budget: far below (measured 0.25), and it grows far less with the run length
    # (measured 0.25 of the growth; what remains is per-step bookkeeping, not stored fields)
    assert peaks[400][1] < 0.4 * peaks[400][0], peaks
    assert peaks[400][1] - peaks[100][1] < 0.5 * (peaks[400][0] - peaks[100][0]), peaks
