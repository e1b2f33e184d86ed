"""Evaluation and plots of MindFlow's Kovasznay case (its ``src/utils.py``)."""

import os

import numpy as np

from diffsci.core import Tensor, ops
from diffsci.core import dtype as mstype
from diffsci.mindflow import sympy_to_mindspore


def relative_l2(x, y):
    """``sqrt(mean (x - y)^2) / sqrt(mean y^2)`` of numpy arrays."""
    return np.sqrt(np.mean(np.square(x - y))) / np.sqrt(np.mean(np.square(y)))


def calculate_l2_error(problem, model, ds_test):
    """Print the relative L2 errors of ``(u, v, p)`` on the domain and boundary batches of
    ``ds_test`` against the exact solution (evaluated through the sympy front-end); returns the
    last ``(domain, boundary)`` pair."""
    nodes = sympy_to_mindspore(
        {"u": problem.u_func(), "v": problem.v_func(), "p": problem.p_func()},
        problem.in_vars,
        problem.out_vars,
    )
    metrics = None
    for x_domain, x_bc in ds_test:
        domain_true = ops.Concat(axis=1)(problem.parse_node(nodes, x_domain))
        bc_true = ops.Concat(axis=1)(problem.parse_node(nodes, x_bc))
        metric_domain = relative_l2(model(x_domain).asnumpy(), domain_true.asnumpy())
        metric_bc = relative_l2(model(x_bc).asnumpy(), bc_true.asnumpy())
        print(f"Relative L2 error on domain: {metric_domain}")
        print(f"Relative L2 error on boundary: {metric_bc}")
        metrics = (float(metric_domain), float(metric_bc))
    return metrics


def visual(model, config, resolution=100, folder="images"):
    """Contours of the predicted ``u, v, p`` on a ``resolution^2`` grid, saved as
    ``images/kovasznay_epochs_<epochs>_lr_<lr>.png``; returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    axis = np.linspace(0, 1, resolution)
    y_grid, x_grid = np.meshgrid(axis, axis)
    xy = np.stack([x_grid.ravel(), y_grid.ravel()], axis=1)
    dtype = model.trainable_params()[0].dtype if model.trainable_params() else mstype.float32
    predict = model(Tensor(xy, dtype=dtype)).asnumpy()  # [resolution^2, 3]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for k, name in enumerate("uvp"):
        field = predict[:, k].reshape(resolution, resolution)
        cs = axes[k].contourf(x_grid, y_grid, field, cmap="rainbow", levels=100)
        axes[k].set(title=name, xlabel="x", ylabel="y")
        fig.colorbar(cs, ax=axes[k])
    fig.tight_layout()
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(
        folder,
        "kovasznay_epochs_{}_lr_{}.png".format(config["epochs"], config["optimizer"]["initial_lr"]),
    )
    fig.savefig(path)
    plt.close(fig)
    return path
