"""MindFlow's Poisson problems by a PINN, the recommended way: ``mindflow.pinn.Trainer``, Adam
then L-BFGS in float64, verified against the closed form.

The problem (MindFlow ``physics_driven/poisson/continuous``), in ``n`` = 2 or 3 dimensions::

    Delta u = -prod_i sin(4 pi x_i)   in the domain,
    u = g                               (Dirichlet), or
    u + sum_i du/dx_i = h               (``robin``: MindFlow's "Robin", the sum of the partials
                                         as in its src/boundary.py), or
    u + du/dn = h                       (``robin_normal``: the Robin condition proper, with the
                                         samplers' outward normals)

MindFlow's condition is badly conditioned on every domain: ``w = exp(-sum_i x_i / n)``
satisfies ``w + sum_i w_i = 0`` everywhere and ``Delta w = w / n`` is small next to the source,
so an error along ``w`` costs almost nothing in the loss (our rectangle run ends at rel-L2 ~5
with an error of that shape; MindFlow's table: 8.1e-2 rectangle, 3.6e-2 disk).
``robin_normal`` is the well-posed Robin problem. ``g`` and ``h`` come from the exact solution
``u = prod_i sin(4 pi x_i) / (16 n pi^2)``
(``mindflow.verify.poisson_exact``). Domains: MindFlow's ``rectangle`` and ``disk``, an L-shape
made by CSG (``lshape``: the unit square minus its upper-right quarter,
``datasets.geometry.Rectangle - Rectangle``), the unit cube (``cuboid``), and MindFlow's other
2-D shapes (``triangle``, ``pentagon``, ``polygon``).

Scaling: the network ``N`` gives ``u = N / (16 n pi^2)`` (the solution's magnitude for a unit
source of wavenumber 4 pi), and the boundary residual is measured in the same unit,
``(u - g) * 16 n pi^2``, so both loss terms are O(1) at the start. The network has sine
activations (MindFlow's default ``act="sin"``) on inputs centred and scaled by 20
(``MultiScaleFCSequential``'s ``input_scale``/``input_center``), so that its first layer starts
with frequencies of the order of the solution's ``4 pi`` (a tanh network, plain or multi-scale,
stalled near rel-L2 1 in the same budget).

The error is the relative L2 error over ``n_test`` uniform points of the domain (MindFlow's
``evaluation_table.md`` measures it the same way on 5000 points: rectangle Dirichlet 2.8e-3,
disk 1.3e-2, disk Robin 3.6e-2). The script prints it and writes
``<out-dir>/poisson_<geom>_<bc>.png`` (prediction, reference, |error|; a z = 0.375 slice in
3-D) and the loss curves (default ``--out-dir``: ``./poisson_pinn_out``).

    python examples/mindflow/pinn/poisson/poisson_pinn.py --geom-name rectangle --bc dirichlet
    python examples/mindflow/pinn/poisson/poisson_pinn.py --geom-name lshape --bc robin_normal
    python examples/mindflow/pinn/poisson/poisson_pinn.py --geom-name cuboid --tiny
"""

import copy
import math
import pathlib
import sys

import numpy as np

from diffsci import core
from diffsci.datasets.geometry import Cuboid, Disk, Pentagon, Polygon, Rectangle, Triangle
from diffsci.mindflow.pde.residual import derivatives
from diffsci.mindflow.pinn import OutputTransform
from diffsci.mindflow.utils import load_yaml_config
from diffsci.mindflow.verify import poisson_exact, poisson_grad, poisson_robin_data, poisson_source
from diffsci.scripts import ArgumentParser, default_out_dir

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # examples/mindflow/pinn: _pinn_common
import _pinn_common as common  # noqa: E402

CONFIG = HERE / "configs" / "poisson_cfg.yaml"
GEOMETRIES = ("rectangle", "disk", "lshape", "cuboid", "triangle", "pentagon", "polygon")
BOUNDARY_CONDITIONS = ("dirichlet", "robin", "robin_normal")


def make_geometry(name, config):
    """The domain ``name`` from the yaml's ``geometry`` section, points in float64."""
    geo = config["geometry"]
    f64 = np.float64
    if name == "rectangle":
        return Rectangle(name, **geo["rectangle"], dtype=f64)
    if name == "disk":
        return Disk(name, **geo["disk"], dtype=f64)
    if name == "lshape":
        outer = Rectangle("outer", **geo["lshape"]["outer"], dtype=f64)
        return outer - Rectangle("cut", **geo["lshape"]["cut"], dtype=f64)
    if name == "cuboid":
        return Cuboid(name, **geo["cuboid"], dtype=f64)
    if name in ("triangle", "pentagon", "polygon"):
        cls = {"triangle": Triangle, "pentagon": Pentagon, "polygon": Polygon}[name]
        return cls(name, **geo[name], dtype=f64)
    raise ValueError(f"unknown geometry {name!r}; choose one of {', '.join(GEOMETRIES)}")


def boundary_data(xb, nb, bc):
    """``g = u``, MindFlow's ``h = u + sum_i du/dx_i`` or ``h = u + du/dn`` of the exact solution
    at boundary points ``xb [M, n]`` with outward normals ``nb [M, n]``; ``[M, 1]``."""
    if bc == "dirichlet":
        return poisson_exact(xb)
    if bc == "robin":
        return poisson_robin_data(xb)
    return poisson_exact(xb) + np.sum(poisson_grad(xb) * nb, axis=1, keepdims=True)


def source_scale(n_dim):
    """``16 n pi^2``: ``|u| <= 1 / (16 n pi^2)`` for the unit source."""
    return 16.0 * n_dim * math.pi**2


def loss_terms(model, n_dim, bc):
    """``batch -> {"pde", "bc"}`` mean squared residuals (module docstring).

    The batch is ``(x [N, n], f [N, 1], xb [M, n], nb [M, n], gb [M, 1])``: collocation
    points, the source ``-prod sin(4 pi x_i)`` there, boundary points, their outward unit
    normals and the boundary data (``g``, or ``h`` of the Robin condition in use).
    """
    scale = source_scale(n_dim)
    lap_keys = [(0, i, i) for i in range(n_dim)]
    grad_keys = [(0, i) for i in range(n_dim)]

    def terms(batch):
        x, f, xb, nb, gb = batch
        second = derivatives(model, x, lap_keys)  # n x [N, 1]
        lap = second[0]
        for t in second[1:]:
            lap = lap + t
        r_pde = lap - f  # [N, 1]
        if bc == "dirichlet":
            r_bc = model(xb) - gb  # [M, 1]
        else:
            first = derivatives(model, xb, [(0,), *grad_keys])  # u, then n x u_i, [M, 1] each
            r_bc = first[0] - gb
            for i, u_i in enumerate(first[1:]):
                # MindFlow's robin: + du/dx_i; robin_normal: + n_i du/dx_i (= du/dn summed)
                r_bc = r_bc + (u_i if bc == "robin" else nb[:, i : i + 1] * u_i)
        return {"pde": (r_pde**2).mean(), "bc": ((scale * r_bc) ** 2).mean()}

    return terms


def settings(config, tiny, overrides):
    """The ``pinn`` section, with its ``tiny`` entries merged in when ``tiny``."""
    cfg = copy.deepcopy(config["pinn"])
    small = cfg.pop("tiny", {})
    if tiny:
        cfg.update(small)
    cfg.update({k: v for k, v in overrides.items() if v is not None})
    return cfg


def plot(model, geom, n_dim, path, title):
    """Prediction, exact and |error| on a 161 x 161 grid (the z = 0.375 plane in 3-D)."""
    lo, hi = geom.coord_min, geom.coord_max
    xs = np.linspace(lo[0], hi[0], 161)
    ys = np.linspace(lo[1], hi[1], 161)
    xx, yy = np.meshgrid(xs, ys)  # [ny, nx]
    cols = [xx.ravel(), yy.ravel()] + ([np.full(xx.size, 0.375)] if n_dim == 3 else [])
    pts = np.stack(cols, axis=1)
    # strictly inside: the closed CSG difference keeps the cut's outer edges (measure zero)
    mask = (np.asarray(geom.sdf(pts)) < -1e-12).reshape(xx.shape)
    pred = common.predict(model, pts)[:, 0].reshape(xx.shape)
    ref = poisson_exact(pts)[:, 0].reshape(xx.shape)
    return common.plot_fields(path, xs, ys, {"u": (pred, ref)}, title, mask=mask)


def main(
    geom_name="rectangle",
    bc="dirichlet",
    tiny=False,
    adam_steps=None,
    lbfgs_steps=None,
    out_dir=None,
    seed=0,
    config_file=CONFIG,
    progress=True,
    verbose=True,
):
    """Train and evaluate one case; returns ``{"error", "seconds", "trainer", ...}``; the plots
    go to ``out_dir`` (None: no plots)."""
    if bc not in BOUNDARY_CONDITIONS:
        raise ValueError(f"unknown bc {bc!r}; choose one of {', '.join(BOUNDARY_CONDITIONS)}")
    config = load_yaml_config(str(config_file))
    cfg = settings(config, tiny, {"adam_steps": adam_steps, "lbfgs_steps": lbfgs_steps})
    robin_weights = cfg.pop("weights_robin", None)
    if bc != "dirichlet" and robin_weights is not None:
        cfg["weights"] = robin_weights
    core.set_seed(seed)
    geom = make_geometry(geom_name, config)
    n_dim = geom.dim

    x = np.asarray(geom.sample_interior(int(cfg["n_domain"]), sampler="sobol", seed=seed))
    xb, nb = geom.sample_boundary(int(cfg["n_bc"]), sampler="sobol", seed=seed + 1)
    xb, nb = np.asarray(xb), np.asarray(nb, dtype=np.float64)
    gb = boundary_data(xb, nb, bc)
    batch = tuple(core.tensor(a, dtype=core.float64) for a in (x, poisson_source(x), xb, nb, gb))

    net_cfg = dict(cfg["net"])
    if "input_scale" in net_cfg:  # one number: every axis, about the centre of the box
        net_cfg["input_scale"] = [float(net_cfg["input_scale"])] * n_dim
        net_cfg["input_center"] = list(0.5 * (geom.coord_min + geom.coord_max))
    net = common.build_network(n_dim, 1, net_cfg)
    scale = source_scale(n_dim)
    model = OutputTransform(net, transform=lambda _, out: out / scale)
    x_test = np.asarray(geom.sample_interior(int(cfg["n_test"]), sampler="uniform", seed=10**6))
    u_test = poisson_exact(x_test)
    trainer, seconds = common.train(
        loss_terms(model, n_dim, bc),
        model,
        batch,
        cfg,
        reference=(x_test, u_test),
        progress=progress,
    )
    error = float(common.relative_l2(common.predict(model, x_test), u_test))
    if verbose:
        h = trainer.history
        print(
            f"poisson {geom_name} {n_dim}-D {bc}: {cfg['adam_steps']} Adam + "
            f"{cfg['lbfgs_steps']} L-BFGS steps, loss {h['total'][-1]:.3e} "
            f"(pde {h['terms']['pde'][-1]:.2e}, bc {h['terms']['bc'][-1]:.2e}), "
            f"rel-L2 {error:.3e}, {seconds:.1f} s"
        )
    result = {"error": error, "seconds": seconds, "trainer": trainer, "model": model}
    if out_dir is not None:
        folder = pathlib.Path(out_dir)
        folder.mkdir(parents=True, exist_ok=True)
        stem = f"poisson_{geom_name}_{bc}"
        result["plot"] = plot(
            model,
            geom,
            n_dim,
            folder / f"{stem}.png",
            f"Poisson {geom_name} {bc}: rel-L2 {error:.2e}",
        )
        trainer.plot_history(str(folder / f"{stem}_loss.png"))
    return result


def parse_args(argv=None):
    parser = ArgumentParser(description="MindFlow's Poisson cases by a PINN")
    parser.add_argument("--geom-name", default="rectangle", choices=GEOMETRIES)
    parser.add_argument("--bc", default="dirichlet", choices=BOUNDARY_CONDITIONS)
    parser.add_argument("--tiny", action="store_true", help="a few seconds, small network")
    parser.add_argument("--adam-steps", type=int, default=None)
    parser.add_argument("--lbfgs-steps", type=int, default=None)
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("poisson_pinn"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config-file-path", default=str(CONFIG))
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = parse_args()
    main(
        args.geom_name,
        args.bc,
        tiny=args.tiny,
        adam_steps=args.adam_steps,
        lbfgs_steps=args.lbfgs_steps,
        out_dir=args.out_dir,
        seed=args.seed,
        config_file=args.config_file_path,
    )
