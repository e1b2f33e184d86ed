"""Evaluation and plots of MindFlow's Darcy case (its ``src/utils.py``)."""

import os

import numpy as np

from diffsci.core import Tensor
from diffsci.core import dtype as mstype

from .dataset import create_test_dataset


def _get_prediction(model, inputs, batch_size):
    """``model`` on ``inputs [M, 2]`` in batches, float64 ``[M, 3]``."""
    params = model.trainable_params()
    dtype = params[0].dtype if params else mstype.float32
    out = [
        model(Tensor(inputs[i : i + batch_size], dtype)).asnumpy()
        for i in range(0, len(inputs), batch_size)
    ]
    return np.concatenate(out).astype(np.float64)


def calculate_l2_error(model, inputs, label, batch_size):
    """Print and return MindFlow's error: the relative L2 error of ``u`` (its first column)."""
    prediction = _get_prediction(model, inputs, batch_size)
    label = np.asarray(label, dtype=np.float64)
    l2_error = np.linalg.norm(label[:, 0] - prediction[:, 0]) / np.linalg.norm(label[:, 0])
    print("    l2_error: ", l2_error)
    print("=" * 98)
    return float(l2_error)


def visual(model, config, name="result"):
    """Label, prediction and |error| of ``ux, uy, p`` on the test grid, saved as
    ``<vision_dir>/<name>.png``; returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    test_input, label = create_test_dataset(config)
    n = config["geometry"]["axis_size"]
    prediction = _get_prediction(model, test_input, config["data"]["train"]["batch_size"])
    fig, axes = plt.subplots(3, 3, figsize=(10, 9))
    for j, field in enumerate(("ux", "uy", "p")):
        lo, hi = np.percentile(label[:, j], [0.5, 99.5])
        lab = label[:, j].reshape(n, n)  # [x, y]
        pre = prediction[:, j].reshape(n, n)
        for i, (kind, data) in enumerate(
            (("label", lab), ("predict", pre), ("error", np.abs(pre - lab)))
        ):
            lims = (0.0, None) if kind == "error" else (lo, hi)
            im = axes[i, j].imshow(data.T, origin="lower", cmap="jet", vmin=lims[0], vmax=lims[1])
            axes[i, j].set_title(f"{field} {kind}", fontsize=8)
            fig.colorbar(im, ax=axes[i, j], fraction=0.046)
    fig.tight_layout()
    folder = config["summary"].get("vision_dir", "./images")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{name}.png")
    fig.savefig(path)
    plt.close(fig)
    return path
