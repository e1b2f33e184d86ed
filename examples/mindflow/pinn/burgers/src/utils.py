"""Plots and the relative L2 error of the Burgers example (MindFlow's ``src/utils.py`` API)."""

import os
import time

import numpy as np

from diffsci.core import Tensor
from diffsci.core import dtype as mstype
from diffsci.mindflow.utils import print_log


def visual(model, epochs=1, resolution=100, folder="images"):
    """Scatter of u(t, x) on a ``resolution``^2 grid and u(x) at t = 0.25, 0.5, 0.75, saved as
    ``{folder}/{epochs + 1}-result.jpg`` (MindFlow's file name)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t_line = np.linspace(0.0, 1.0, resolution)
    x_line = np.linspace(-1.0, 1.0, resolution)
    tt, xx = np.meshgrid(t_line, x_line)
    xt = np.stack([xx.ravel(), tt.ravel()], axis=1)  # [resolution^2, 2]
    u = model(Tensor(xt, mstype.float32)).asnumpy()  # [resolution^2, 1]

    fig = plt.figure(figsize=(10, 7))
    grid = fig.add_gridspec(2, 3)
    ax = fig.add_subplot(grid[0, :])
    sc = ax.scatter(tt.ravel(), xx.ravel(), c=u[:, 0], cmap="rainbow", vmin=-1.0, vmax=1.0, s=4)
    ax.set(xlabel="t", ylabel="x")
    fig.colorbar(sc, ax=ax, pad=0.05, aspect=10, label="u(t,x)")
    for k, t_cut in enumerate((0.25, 0.5, 0.75)):
        ax = fig.add_subplot(grid[1, k])
        cut = np.stack([x_line, np.full_like(x_line, t_cut)], axis=1)
        ax.plot(x_line, model(Tensor(cut, mstype.float32)).asnumpy()[:, 0])
        ax.set(title=f"t={t_cut}", xlabel="x", ylabel="u(t,x)")
    fig.tight_layout()
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{epochs + 1}-result.jpg")
    fig.savefig(path)
    plt.close(fig)
    return path


def _predict(model, inputs, batch_size):
    """``model`` over ``inputs [M, 2]`` in batches of ``batch_size``: numpy ``[M, 1]``."""
    data = inputs.asnumpy() if isinstance(inputs, Tensor) else np.asarray(inputs)
    parts = []
    start = time.time()
    for i in range(0, data.shape[0], batch_size):
        parts.append(model(Tensor(data[i : i + batch_size], mstype.float32)).asnumpy())
    print_log(f"    predict total time: {(time.time() - start) * 1000} ms")
    return np.concatenate(parts).astype(np.float64)


def calculate_l2_error(model, inputs, label, batch_size):
    """Print (and return) ``||model(inputs) - label|| / ||label||``.

    Args:
        model (Cell): the network.
        inputs (Tensor): ``[M, 2]`` test points.
        label (numpy.ndarray): ``[M, 1]`` exact values.
        batch_size (int): points per forward pass.
    """
    label = np.asarray(label, dtype=np.float64).reshape(-1, 1)
    prediction = _predict(model, inputs, batch_size).reshape(-1, 1)
    l2_error = float(np.linalg.norm(prediction - label) / np.linalg.norm(label))
    print_log("    l2_error: ", l2_error)
    print_log("=" * 98)
    return l2_error
