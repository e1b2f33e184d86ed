"""mindflow.verify: cell-average errors and observed convergence orders."""

import numpy as np
import pytest

from diffsci.mindflow import verify
from diffsci.mindflow.cfd.exact_riemann import exact_riemann


def sod_rho(x):
    return exact_riemann((1.0, 0.0, 1.0), (0.125, 0.0, 0.1), 1.4, x, 0.2, 0.5)[0]


def test_exact_solution_own_cell_averages_have_zero_error():
    edges = np.linspace(0, 1, 101)
    avg = verify.cell_averages(sod_rho, edges)
    assert verify.l1_error(avg, sod_rho, edges) == pytest.approx(0.0, abs=1e-15)
    assert verify.l2_error(avg, sod_rho, edges) == pytest.approx(0.0, abs=1e-15)
    # and the averages are right: a finer sampling agrees to the sub-cell resolution
    fine = verify.cell_averages(sod_rho, edges, n_sub=1024)
    assert np.max(np.abs(avg - fine)) < 1.0 / 64  # at most one sub-cell of a jump < 1


def test_cell_averages_of_smooth_function_exact():
    edges = np.linspace(0.0, 2.0, 11) ** 1.5  # non-uniform cells
    avg = verify.cell_averages(np.sin, edges, n_sub=2)
    exact = (np.cos(edges[:-1]) - np.cos(edges[1:])) / np.diff(edges)
    np.testing.assert_allclose(avg, exact, rtol=1e-12)


def test_l1_l2_of_a_known_offset():
    edges = np.linspace(-1.0, 3.0, 41)
    avg = verify.cell_averages(np.exp, edges) + 0.25
    assert verify.l1_error(avg, np.exp, edges) == pytest.approx(0.25 * 4.0, rel=1e-12)
    assert verify.l2_error(avg, np.exp, edges) == pytest.approx(np.sqrt(0.0625 * 4.0), rel=1e-12)


def test_convergence_order_of_synthetic_series():
    ns = np.array([100, 200, 400, 800])
    errors = 3.0 * ns**-2.0
    assert verify.convergence_order(ns, errors) == pytest.approx(2.0, rel=1e-12)
    np.testing.assert_allclose(verify.convergence_order(ns, errors, pairwise=True), 2.0, rtol=1e-12)
    noisy = errors * np.array([1.1, 0.9, 1.05, 1.0])
    assert verify.convergence_order(ns, noisy) == pytest.approx(2.0, abs=0.1)


def test_bad_input():
    with pytest.raises(ValueError, match="edges"):
        verify.l1_error(np.zeros(5), np.sin, np.linspace(0, 1, 5))
    with pytest.raises(ValueError, match="increasing"):
        verify.cell_averages(np.sin, [0.0, 1.0, 0.5])
    with pytest.raises(ValueError, match="> 0"):
        verify.convergence_order([10, 20], [1e-3, 0.0])
