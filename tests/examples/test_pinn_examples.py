"""The Poisson, Kovasznay, Taylor-Green and Darcy PINN examples (examples/mindflow/pinn/).

Each case is checked three ways: its loss terms vanish on the closed-form solution (so the
equations, boundary data and scalings are right: a wrong sign, factor or field fails), its
``<case>_pinn.py`` runs tiny through ``mindflow.pinn.Trainer`` and lowers the loss, and MindFlow's
``train.py`` (imports changed only) runs tiny on its own ``src/``.
"""

import importlib.util
import math
import pathlib
import sys

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops

PINN = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mindflow" / "pinn"
F64 = core.float64


def _load(relpath, name):
    """Import ``PINN/relpath`` as module ``name`` with its folder first on ``sys.path``, so that
    its ``from src import ...`` finds its own ``src`` (every MindFlow case has one); that ``src``
    is dropped from ``sys.modules`` again, so no later import of another example's ``src`` (the
    bench's time-domain Maxwell one) is handed this one."""
    path = PINN / relpath

    def drop_src():
        for key in [k for k in sys.modules if k == "src" or k.startswith("src.")]:
            del sys.modules[key]

    drop_src()
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
        drop_src()
    return module


def _t(a):
    return core.tensor(np.asarray(a, dtype=np.float64), dtype=F64)


# ---------------------------------------------------------------- loss terms on exact solutions


@pytest.mark.parametrize(
    ("geom_name", "bc"),
    [
        ("rectangle", "dirichlet"),
        ("lshape", "robin"),
        ("cuboid", "robin"),
        ("disk", "robin_normal"),
    ],
)
def test_poisson_terms_vanish_on_exact_solution(geom_name, bc):
    pp = _load("poisson/poisson_pinn.py", "poisson_pinn")
    from diffsci.mindflow.verify import poisson_source

    config = pp.load_yaml_config(str(pp.CONFIG))
    geom = pp.make_geometry(geom_name, config)
    n = geom.dim

    def exact(x):  # [N, n] -> [N, 1], written with core ops
        u = ops.sin(4 * math.pi * x[:, 0:1])
        for i in range(1, n):
            u = u * ops.sin(4 * math.pi * x[:, i : i + 1])
        return u / (16 * n * math.pi**2)

    x = np.asarray(geom.sample_interior(64, sampler="sobol", seed=0))
    xb, nb = geom.sample_boundary(32, sampler="sobol", seed=1)
    xb, nb = np.asarray(xb), np.asarray(nb)
    assert np.all(geom.contains(x)) and np.allclose(geom.sdf(xb), 0.0, atol=1e-9)
    batch = tuple(_t(a) for a in (x, poisson_source(x), xb, nb, pp.boundary_data(xb, nb, bc)))
    terms = pp.loss_terms(exact, n, bc)(batch)
    assert float(terms["pde"]) < 1e-24 and float(terms["bc"]) < 1e-24
    # the wrong condition is not satisfied: the terms can fail
    other = pp.loss_terms(exact, n, "robin" if bc == "dirichlet" else "dirichlet")(batch)
    assert float(other["bc"]) > 1e-3


def test_poisson_lshape_is_the_csg_difference():
    pp = _load("poisson/poisson_pinn.py", "poisson_pinn")
    geom = pp.make_geometry("lshape", pp.load_yaml_config(str(pp.CONFIG)))
    pts = np.array([[0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]])
    np.testing.assert_array_equal(geom.contains(pts), [True, True, True, False])
    xb, nb = geom.sample_boundary(400, sampler="sobol", seed=0)
    re_entrant = (np.abs(xb[:, 0] - 0.5) < 1e-12) & (xb[:, 1] > 0.5)  # the cut's left side
    assert re_entrant.any() and np.allclose(nb[re_entrant], [1.0, 0.0])  # normal out of the L


def test_kovasznay_and_darcy_residuals_vanish_on_exact_solutions():
    kov = _load("kovasznay/kovasznay_pinn.py", "kovasznay_pinn")
    darcy = _load("darcy/darcy_pinn.py", "darcy_pinn")
    lam = 10.0 - math.sqrt(100.0 + 4 * math.pi**2)  # Re = 20

    def kovasznay(xy):
        e = ops.exp(lam * xy[:, 0:1])
        y2 = 2 * math.pi * xy[:, 1:2]
        return ops.concat(
            [1 - e * ops.cos(y2), lam / (2 * math.pi) * e * ops.sin(y2), 0.5 * (1 - e * e)], axis=1
        )

    def darcy_exact(xy):
        x2, y2 = 2 * math.pi * xy[:, 0:1], 2 * math.pi * xy[:, 1:2]
        p = ops.sin(x2) * ops.cos(y2)
        u = -2 * math.pi * ops.cos(x2) * ops.cos(y2)
        v = 2 * math.pi * ops.sin(x2) * ops.sin(y2)
        return ops.concat([u, v, p], axis=1)

    xy = _t(np.random.default_rng(0).random((50, 2)))
    for r in kov.navier_stokes_residuals(kovasznay, xy, 20.0):
        assert float(ops.abs(r).max()) < 1e-12
    assert float(ops.abs(kov.navier_stokes_residuals(kovasznay, xy, 40.0)[0]).max()) > 1e-2
    # the inverse terms, with the viscosity a Parameter: zero at nu = 1 / 20 only
    data = (xy, xy[:7], _t(kov.exact_columns(xy.asnumpy()[:7], 20.0)[:, :2]))
    nu = core.Parameter(_t([0.05]), name="nu")
    terms = kov.inverse_terms(kovasznay, nu)(data)
    assert float(terms["pde"]) < 1e-24 and float(terms["data"]) < 1e-28
    assert float(kov.inverse_terms(kovasznay, _t([0.1]))(data)["pde"]) > 1e-3
    for r in darcy.darcy_residuals(darcy_exact, xy):
        assert float(ops.abs(r).max()) < 1e-12
    # the exact columns the examples compare with are the same functions
    pts = np.asarray(xy.asnumpy())
    np.testing.assert_allclose(kov.exact_columns(pts, 20.0), kovasznay(xy).asnumpy(), atol=1e-14)
    np.testing.assert_allclose(darcy.exact_columns(pts), darcy_exact(xy).asnumpy(), atol=1e-13)


def test_taylor_green_terms_vanish_on_exact_solution():
    tg = _load("taylor_green/taylor_green_pinn.py", "taylor_green_pinn")
    from diffsci.mindflow.pde import NavierStokes, sympy_to_mindspore

    def vortex(xyt, nu=1.0):
        x, y, t = xyt[:, 0:1], xyt[:, 1:2], xyt[:, 2:3]
        f = ops.exp(-2 * nu * t)
        u = -ops.cos(x) * ops.sin(y) * f
        v = ops.sin(x) * ops.cos(y) * f
        p = -0.25 * (ops.cos(2 * x) + ops.cos(2 * y)) * f * f
        return ops.concat([u, v, p], axis=1)

    rng = np.random.default_rng(0)
    xyt = rng.random((40, 3)) * [6.28, 6.28, 2.0]
    ic = xyt.copy()
    ic[:, 2] = 0.0
    batch = (_t(xyt), _t(ic), _t(xyt))
    problem = NavierStokes(vortex, re=1.0)
    ic_eq, bc_eq = tg.exact_conditions(problem)
    nodes = [sympy_to_mindspore(e, problem.in_vars, problem.out_vars) for e in (ic_eq, bc_eq)]
    for value in tg.forward_terms(problem, *nodes)(batch).values():
        assert float(value) < 1e-24
    # inverse: zero at the true viscosity, not at another one
    inverse = tg.NavierStokesUnknownNu(vortex, nu_init=1.0)
    data = (_t(xyt), _t(xyt[:5]), _t(tg.exact_columns(xyt[:5], 1.0)[:, :2]))
    terms = tg.inverse_terms(inverse)(data)
    assert float(terms["pde"]) < 1e-24 and float(terms["data"]) < 1e-24
    assert (
        float(tg.inverse_terms(tg.NavierStokesUnknownNu(vortex, nu_init=0.9))(data)["pde"]) > 1e-3
    )
    assert inverse.trainable_params()[0].name == "nu"


# ---------------------------------------------------------------- the Trainer paths, tiny


@pytest.mark.parametrize(("geom_name", "bc"), [("disk", "dirichlet"), ("lshape", "robin")])
def test_poisson_pinn_tiny(geom_name, bc, tmp_path, capsys):
    pp = _load("poisson/poisson_pinn.py", "poisson_pinn")
    plot = geom_name == "disk"  # one figure is enough (matplotlib costs seconds)
    out = pp.main(geom_name, bc, tiny=True, out_dir=tmp_path if plot else None, progress=False)
    history = out["trainer"].history
    assert history["total"][-1] < 0.5 * history["total"][0]
    assert np.isfinite(out["error"])
    assert not plot or pathlib.Path(out["plot"]).stat().st_size > 0
    assert f"poisson {geom_name} 2-D {bc}" in capsys.readouterr().out
    with pytest.raises(ValueError, match="unknown geometry 'moon'"):
        pp.main("moon", tiny=True, progress=False)


def test_kovasznay_and_darcy_pinn_tiny(tmp_path, capsys):
    kov = _load("kovasznay/kovasznay_pinn.py", "kovasznay_pinn")
    darcy = _load("darcy/darcy_pinn.py", "darcy_pinn")
    for module, name in ((kov, "kovasznay"), (darcy, "darcy")):
        out = module.main(tiny=True, out_dir=tmp_path, progress=False)
        history = out["trainer"].history
        assert history["total"][-1] < 0.8 * history["total"][0]
        assert set(out["errors"]) == {"u", "v", "p", "all"}
        assert (tmp_path / f"{name}.png").stat().st_size > 0
    text = capsys.readouterr().out
    assert "kovasznay Re=20" in text and "darcy:" in text and "rel-L2 u" in text


def test_kovasznay_inverse_pinn_tiny(capsys):
    kov = _load("kovasznay/kovasznay_pinn.py", "kovasznay_pinn")
    out = kov.main(tiny=True, progress=False, mode="inverse")
    history = out["trainer"].history
    assert history["total"][-1] < 0.1 * history["total"][0]
    # started at nu = 0.1; the truth is 1 / Re = 0.05: at least halfway there
    assert abs(out["nu"] - 0.05) < 0.5 * abs(0.1 - 0.05)
    assert out["re"] == pytest.approx(1.0 / out["nu"]) and out["re_error"] < 0.5
    assert "kovasznay inverse Re=20" in capsys.readouterr().out
    with pytest.raises(ValueError, match="unknown mode 'sideways'"):
        kov.main(tiny=True, progress=False, mode="sideways")


@pytest.mark.parametrize("mode", ["forward", "inverse"])
def test_taylor_green_pinn_tiny(mode, tmp_path):
    tg = _load("taylor_green/taylor_green_pinn.py", "taylor_green_pinn")
    out = tg.main(mode, tiny=True, out_dir=tmp_path if mode == "forward" else None, progress=False)
    history = out["trainer"].history
    assert history["total"][-1] < history["total"][0]
    assert mode == "inverse" or (tmp_path / "taylor_green_forward.png").stat().st_size > 0
    if mode == "inverse":  # nu moved from its start (0.5)
        assert out["nu"] != 0.5 and np.isfinite(out["nu"])


# ---------------------------------------------------------------- MindFlow's train.py, tiny


def test_mindflow_poisson_train_script(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    train = _load("poisson/train.py", "mindflow_poisson_train")
    train.use_ascend = False
    cfg = str(PINN / "poisson" / "configs" / "poisson_cfg_tiny.yaml")
    train.train("disk", cfg, str(tmp_path), 1)
    errors = train.test("disk", str(tmp_path / "disk_2d_1.ckpt"), cfg, 200)
    assert all(np.isfinite(errors))
    assert "Relative L2 error (domain)" in capsys.readouterr().out


def test_mindflow_kovasznay_train_script(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    train = _load("kovasznay/train.py", "mindflow_kovasznay_train")
    errors = train.train(str(PINN / "kovasznay" / "configs" / "kovasznay_cfg_tiny.yaml"))
    assert all(np.isfinite(errors))
    assert (tmp_path / "kovasznay.ckpt").exists() and list((tmp_path / "images").glob("*.png"))


def test_mindflow_taylor_green_and_darcy_train_scripts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tg = _load("taylor_green/train.py", "mindflow_taylor_green_train")
    tg.use_ascend = False
    errors = tg.train(str(PINN / "taylor_green" / "configs" / "taylor_green_2D_tiny.yaml"))
    assert np.isfinite(errors.l2_error) and (tmp_path / "videos" / "TimeError_1.png").exists()

    darcy = _load("darcy/train.py", "mindflow_darcy_train")
    darcy.use_ascend = False

    class Args:
        config_file_path = str(PINN / "darcy" / "configs" / "darcy_tiny.yaml")

    assert np.isfinite(darcy.train(Args()))
    assert (tmp_path / "images" / "result.png").exists()
