"""Shared by the Poisson, Kovasznay, Taylor-Green and Darcy PINN examples: the float64 network
builder, the Trainer run with its timing, and the prediction / reference / error figure.

Each example's ``<case>_pinn.py`` builds its loss terms and reference, then calls
:func:`train` and :func:`plot_fields`; nothing else is shared, so each case reads top to bottom.
"""

import time

import numpy as np

from diffsci import core
from diffsci.mindflow.cell import FCSequential, MultiScaleFCSequential
from diffsci.mindflow.pinn import Trainer
from diffsci.mindflow.verify import relative_l2


def build_network(in_channels, out_channels, net_cfg, dtype=core.float64):
    """The network from the yaml's ``pinn.net`` section: ``FCSequential`` (``num_scales`` absent
    or 1) or ``MultiScaleFCSequential``, MindFlow's constructors; ``[N, in] -> [N, out]``.

    Args:
        in_channels, out_channels: input / output columns.
        net_cfg: dict with ``layers``, ``neurons``, ``act`` and optionally ``residual``,
            ``num_scales``, ``scale_factor``, ``input_scale``, ``input_center``.
        dtype: the parameters' dtype.
    """
    common = {
        "layers": int(net_cfg["layers"]),
        "neurons": int(net_cfg["neurons"]),
        "residual": bool(net_cfg.get("residual", False)),
        "act": net_cfg["act"],
        "weight_init": net_cfg.get("weight_init", "XavierNormal"),
        "bias_init": "zeros",
        "dtype": dtype,
    }
    scales = int(net_cfg.get("num_scales", 1))
    if scales > 1 or net_cfg.get("input_scale") is not None:
        return MultiScaleFCSequential(
            in_channels,
            out_channels,
            num_scales=scales,
            scale_factor=float(net_cfg.get("scale_factor", 2.0)),
            input_scale=net_cfg.get("input_scale"),
            input_center=net_cfg.get("input_center"),
            **common,
        )
    return FCSequential(in_channels, out_channels, **common)


def train(
    loss_terms_fn,
    model,
    batch,
    cfg,
    reference=None,
    params=None,
    progress=True,
    extra_params=None,
):
    """Adam then L-BFGS with :class:`mindflow.pinn.Trainer` (whole step under ``core.jit``).

    Args:
        loss_terms_fn: ``batch -> {name: 0-d Tensor}``.
        model: the Cell trained (its parameters, unless ``params`` is given).
        batch: the training points (a tuple of Tensors / arrays).
        cfg: dict with ``adam_steps``, ``lbfgs_steps``, ``lr`` and optionally ``weights``.
        reference: ``(points [M, d], values [M, m])`` for the error shown next to the loss.
        params: an explicit list of Parameters (e.g. the network's plus an unknown viscosity).
        extra_params: Parameters trained next to ``model``'s (``Trainer(extra_params=...)``),
            e.g. an unknown viscosity, while ``reference=(points, values)`` still works.

    Returns:
        ``(trainer, seconds)``.
    """
    trainer = Trainer(
        loss_terms_fn,
        model if params is None else params,
        extra_params=extra_params,
        lr=float(cfg["lr"]),
        adam_steps=int(cfg["adam_steps"]),
        lbfgs_steps=int(cfg["lbfgs_steps"]),
        dtype=core.float64,
        weights=cfg.get("weights"),
        reference=reference,
        eval_every=max(1, int(cfg.get("eval_every", 500))),
        lbfgs_options={"history_size": 50, "tolerance_grad": 1e-12, "tolerance_change": 1e-16},
        lbfgs_chunk=int(cfg.get("lbfgs_chunk", 100)),
        progress=progress,
    )
    start = time.perf_counter()
    trainer.fit(batch)
    return trainer, time.perf_counter() - start


def predict(model, points, chunk=20000):
    """``model(points)`` as float64 numpy, ``[M, m]``, in chunks of ``chunk`` rows."""
    points = np.asarray(points, dtype=np.float64)
    out = [
        model(core.tensor(points[i : i + chunk], dtype=core.float64)).asnumpy()
        for i in range(0, len(points), chunk)
    ]
    return np.concatenate(out, axis=0)


def errors_by_component(pred, ref, names):
    """``{name: rel-L2}`` per column of ``[M, m]`` arrays, plus ``"all"`` over every column."""
    out = {n: relative_l2(pred[:, k], ref[:, k]) for k, n in enumerate(names)}
    out["all"] = relative_l2(pred, ref)
    return out


def plot_fields(path, x, y, fields, title, mask=None):
    """One row per field: prediction, reference, |error|, as images over the grid ``x, y``.

    Args:
        path: the output .png.
        x, y: grid coordinates, ``[nx]`` and ``[ny]``.
        fields: ``{name: (pred [ny, nx], ref [ny, nx])}``.
        title: the figure title.
        mask: ``[ny, nx]`` bool, False outside the domain (drawn blank), or None.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = len(fields)
    fig, axes = plt.subplots(rows, 3, figsize=(12, 3.4 * rows), squeeze=False)
    extent = (x[0], x[-1], y[0], y[-1])
    for r, (name, (pred, ref)) in enumerate(fields.items()):
        err = np.abs(pred - ref)
        if mask is not None:
            pred, ref, err = (np.where(mask, a, np.nan) for a in (pred, ref, err))
        lo, hi = np.nanmin(ref), np.nanmax(ref)
        for c, (label, field, cmap, lims) in enumerate(
            (
                (f"{name} PINN", pred, "RdBu_r", (lo, hi)),
                (f"{name} exact", ref, "RdBu_r", (lo, hi)),
                (f"|{name} error|", err, "magma", (None, None)),
            )
        ):
            ax = axes[r, c]
            im = ax.imshow(
                field, origin="lower", extent=extent, cmap=cmap, vmin=lims[0], vmax=lims[1]
            )
            ax.set(title=label, xlabel="x", ylabel="y")
            fig.colorbar(im, ax=ax, fraction=0.046)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
