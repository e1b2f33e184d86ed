"""bench.pinn: our rows run at toy size (no timing asserted); the problem matches DeepXDE's."""

import math

import numpy as np
import pytest

from diffsci import core
from bench import pinn


def test_pinn_bench_our_rows_tiny():
    rows = pinn.run(
        ("float64",),
        pinn.TINY,
        steps=2,
        target=1e-2,
        adam_max=4,
        lbfgs_max=2,
        check_every=2,
        deepxde=False,
    )
    row = rows["float64"]["ours jit"]
    assert row["step"] > 0 and math.isfinite(row["step"])
    reached = row["target"]
    assert reached["adam"] == 4 and reached["phase"] == "lbfgs" and reached["lbfgs"] >= 1
    assert reached["seconds"] is None and 0.0 < reached["error"] < 2.0
    assert "ours jit" in pinn.format_table(rows, 1e-2)


def test_pinn_bench_loss_matches_closed_form_at_zero_network():
    # With every weight zero the network is u = 0: the residual vanishes, the boundary term is
    # 0 and the initial term is mean(sin(pi x)^2) over the initial points.
    sizes = pinn.TINY
    points = pinn.training_points(sizes)
    params = [np.zeros_like(p) for p in pinn.glorot_params(sizes)]
    ours = pinn.OursPinn(params, points, core.float64)
    expected = np.mean(np.sin(np.pi * points["initial"][:, 0]) ** 2)
    assert float(ours.loss_fn()) == pytest.approx(expected, rel=1e-12)


def test_pinn_bench_points_and_reference():
    points = pinn.training_points(pinn.PROBLEM)
    assert points["domain"].shape == (2540, 2)
    assert np.all(np.abs(points["boundary"][:, 0]) == 1.0)
    assert np.all(points["initial"][:, 1] == 0.0)
    x, u = pinn.reference_grid()
    assert x.shape == (25600, 2) and u.shape == (25600, 1)
    # t = 0 rows are the initial condition -sin(pi x)
    at0 = x[:, 1] == 0.0
    np.testing.assert_allclose(u[at0, 0], -np.sin(np.pi * x[at0, 0]), atol=1e-14)


def test_pinn_bench_deepxde_solves_the_same_problem():
    pytest.importorskip("torch")
    pytest.importorskip("deepxde")
    sizes = pinn.TINY
    points = pinn.training_points(sizes)
    params = pinn.glorot_params(sizes)
    ours = pinn.OursPinn(params, points, core.float64)
    theirs = pinn.DeepXDEPinn(params, points, core.float64)
    x = np.concatenate([points["domain"], points["boundary"], points["initial"]])
    np.testing.assert_allclose(theirs.predict(x), ours.predict(x), rtol=1e-12, atol=1e-14)
    r_theirs = theirs.model.predict(x, operator=theirs.pde)
    r_ours = ours.residual(core.tensor(x, dtype=core.float64)).asnumpy()
    np.testing.assert_allclose(r_theirs, r_ours, rtol=1e-10, atol=1e-12)
